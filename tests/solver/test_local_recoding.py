"""The exact local recoding / suppression model: the papers' worked examples with their
proven optima, explained infeasibility, status and certificates, options and bad input."""

import dataclasses
import time
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from _exact_oracle import partition_optimum

import fairanon as fa
from fairanon.exceptions import IncompatibleRequirementError, InvalidParameterError
from fairanon.instances.datasets import diva_table3
from fairanon.methods.cpsat import cpsat
from fairanon.models.diversity import diva_sigma
from fairanon.models.objectives import objective_value
from fairanon.models.metrics import (
    discernibility,
    generalized_cells,
    loss_metric,
    ncp,
    suppressed_cells,
)
from fairanon.release import Release, Status
from fairanon.solver.local_recoding import encode, model_size


def _passes(instance, release, requirements):
    report = fa.verify(instance, release, requirements)
    assert report.passed, str(report)
    assert release.provenance["verification"]["passed"]
    return report


# ------------------------------------------------------------------ DIVA (docs/papers.md, DIVA)
@pytest.mark.parametrize("with_sigma, optimum", [(False, 20), (True, 22)])
def test_diva_running_example_proven_optimum(with_sigma, optimum):
    inst = fa.load("diva_table1")
    reqs = [fa.KAnonymity(2), *(diva_sigma() if with_sigma else [])]
    rel = cpsat(inst, reqs, recoding="suppression", seed=0)
    assert rel.status == Status.OPTIMAL
    assert rel.objective == rel.bound == optimum
    assert suppressed_cells(inst, rel) == optimum
    _passes(inst, rel, reqs)
    # DIVA's own release (Table 3) has 26 stars: the optimum is strictly better.
    table3 = Release(diva_table3(), groups=np.zeros(10))
    assert suppressed_cells(inst, table3) == 26 > optimum


def test_diva_sigma_counts_and_classes():
    inst = fa.load("diva_table1")
    reqs = [fa.KAnonymity(2), *diva_sigma()]
    rel = cpsat(inst, reqs, recoding="suppression", seed=0)
    report = _passes(inst, rel, reqs)
    asian, african, vancouver = (report[str(s)].achieved for s in diva_sigma())
    assert asian >= 2 and african >= 1 and vancouver >= 2
    assert report["2-anonymity"].achieved >= 2
    # Suppression semantics: each cell is the original value or '*'.
    for col in ("GEN", "ETH", "AGE", "PRV", "CTY"):
        released = rel.table[col].astype(str)
        original = inst.table[col].astype(str)
        assert ((released == original) | (released == "*")).all()


# ------------------------------------------------------- Ruggieri (Ex. 19 and 22)
def test_ruggieri_loan_least_generalization_t_close_release():
    inst = fa.load("ruggieri_loan")
    t = fa.TCloseness(Fraction(1, 4))  # on the binary decision: Ruggieri's VD per q-block
    rel = cpsat(inst, [t], objective="generalized", seed=0)
    assert rel.status == Status.OPTIMAL
    report = _passes(inst, rel, [t])
    assert report[str(t)].achieved <= Fraction(1, 4)
    assert generalized_cells(inst, rel) == rel.objective == 4
    # dMondrian's release has 17 generalized cells and dSabre's 11 (Ruggieri, Ex. 19, 22).
    dmondrian_cells, dsabre_cells = 17, 11
    assert rel.objective <= dsabre_cells < dmondrian_cells
    # Bound of Thm 10: 1/4-closeness gives RD <= min(2t, t + p^, 1) = 1/2.
    assert fa.verify(inst, rel, [fa.AlphaProtection("RD", Fraction(1, 2))]).passed


def test_ruggieri_loan_alpha_protection_directly():
    inst = fa.load("ruggieri_loan")
    for req, optimum in (
        (fa.AlphaProtection("RD", Fraction(1, 2)), 2),
        (fa.AlphaProtection("RD", "1/10"), 7),
    ):
        rel = cpsat(inst, [req], objective="generalized", seed=0, num_workers=1)
        assert rel.status == Status.OPTIMAL and rel.objective == optimum
        _passes(inst, rel, [req])
        assert rel.provenance["model"]["contexts"] > 1


# ------------------------------------------------------------------ infeasibility
def test_infeasible_k_names_the_requirement():
    inst = fa.load("ruggieri_loan")  # 8 female records, and sex is released unchanged
    rel = cpsat(inst, [fa.KAnonymity(9), fa.TCloseness("1/2")], seed=0)
    assert rel.status == Status.INFEASIBLE
    assert rel.provenance["conflict"] == ["9-anonymity"]
    assert "9-anonymity" in rel.reason
    with pytest.raises(fa.InfeasibleError):
        rel.released_table()


def test_infeasible_requirements_conflict_by_name():
    inst = fa.load("diva_table1")
    clash = [
        fa.DiversityConstraint({"GEN": "Female"}, 5, 5),
        fa.DiversityConstraint({"CTY": "Calgary"}, 3, 3),
    ]
    reqs = [fa.KAnonymity(2), *diva_sigma(), *clash, fa.LDiversity(2)]
    rel = cpsat(inst, reqs, recoding="suppression", seed=0)
    assert rel.status == Status.INFEASIBLE
    conflict = rel.provenance["conflict"]
    assert set(conflict) <= {str(r) for r in reqs} and len(conflict) >= 2
    assert str(clash[1]) in conflict
    for name in conflict:
        assert name in rel.reason
    # the named set really is infeasible, and dropping any one of them is not
    named = [r for r in reqs if str(r) in conflict]
    assert cpsat(inst, named, recoding="suppression", seed=0).status == Status.INFEASIBLE
    for drop in named:
        rest = [r for r in named if r is not drop]
        assert (
            cpsat(inst, rest, recoding="suppression", seed=0, num_workers=1).status
            == Status.OPTIMAL
        )


def test_single_requirement_infeasible_on_its_own():
    inst = fa.load("diva_table1")
    sigma = fa.DiversityConstraint({"ETH": "African"}, 3, 3)  # only two African records
    rel = cpsat(inst, [fa.KAnonymity(2), sigma], recoding="suppression", seed=0)
    assert rel.status == Status.INFEASIBLE and rel.provenance["conflict"] == [str(sigma)]


# ------------------------------------------------------------------ objectives, certificates
@pytest.mark.parametrize("objective", ["stars", "generalized", "ncp", "lm", "discernibility"])
def test_objective_is_the_metric_of_the_release(objective):
    # Discernibility may coarsen labels to keep classes apart, so every covering label
    # combination is a candidate: the smaller table keeps that model small.
    inst = fa.load("ruggieri_loan" if objective == "discernibility" else "dewri_t1")
    reqs = [fa.KAnonymity(3)]
    rel = cpsat(inst, reqs, objective=objective, seed=0, num_workers=1)
    assert rel.status == Status.OPTIMAL
    _passes(inst, rel, reqs)
    expected = {
        "stars": lambda: suppressed_cells(inst, rel),
        "generalized": lambda: generalized_cells(inst, rel),
        "ncp": lambda: ncp(inst, rel, exact=True)["NCP"],
        "lm": lambda: loss_metric(inst, rel, exact=True)["LM_sum"] * inst.n_rows,
        # Bayardo and Agrawal's C_DM, n per all-'*' row: the report's figure
        "discernibility": lambda: discernibility(inst, rel, k=3),
    }[objective]()
    assert rel.objective == expected


@pytest.mark.parametrize("recoding", ["generalization", "suppression"])
def test_discernibility_charges_n_per_suppressed_record(recoding):
    """x = a a b c, k = 2: {a, a} keeps its value (2^2) and {b, c} is released as '*',
    suppressed, n = 4 per record: 4 + 2 * 4 = 12 (squaring the suppressed class would
    give 8); everything '*' costs 4 * 4 = 16."""
    inst = fa.Instance(
        pd.DataFrame({"x": list("aabc"), "s": list("pqpq")}),
        fa.Schema(
            [
                fa.Attribute("x", hierarchy=fa.Hierarchy.flat(["a", "b", "c"])),
                fa.Attribute("s", role="sensitive"),
            ]
        ),
    )
    reqs = [fa.KAnonymity(2)]
    rel = cpsat(
        inst, reqs, recoding=recoding, objective="discernibility", seed=0, num_workers=1,
        hint=None,
    )
    assert rel.status == Status.OPTIMAL and rel.objective == rel.bound == 12
    assert rel.table["x"].tolist() == ["a", "a", "*", "*"]
    report = _passes(inst, rel, reqs)
    assert report.metrics["discernibility"] == discernibility(inst, rel) == 12


@pytest.mark.parametrize(
    "requirement, optimum, released",
    [
        # Without a risk requirement nothing is suppressed: 3 classes, 2 sample uniques.
        (fa.KAnonymity(1), 0, list("aabc")),
        # At most floor(4/2) = 2 classes, or no sample unique: b and c join the
        # suppressed block, 2 stars (keeping a class of one would need a third class).
        (fa.AverageRisk("1/2"), 2, list("aa**")),
        (fa.SampleUniqueness(0), 2, list("aa**")),
        # floor(4/3) = 1 class: everything in the suppressed block.
        (fa.AverageRisk("1/3"), 4, list("****")),
        # One unique allowed (1/4 of 4 records), yet suppressing b alone leaves c unique
        # and a suppressed block of one, a second unique: still 2 stars.
        (fa.SampleUniqueness("1/4"), 2, list("aa**")),
    ],
)
def test_risk_requirements_bind_on_a_hand_table(requirement, optimum, released):
    """x = a a b c, suppression, stars: the classes are counted as the verifier counts
    them, the suppressed block one class (docs/risk.md)."""
    inst = fa.Instance(
        pd.DataFrame({"x": list("aabc"), "s": list("pqpq")}),
        fa.Schema(
            [
                fa.Attribute("x", hierarchy=fa.Hierarchy.flat(["a", "b", "c"])),
                fa.Attribute("s", role="sensitive"),
            ]
        ),
    )
    reqs = [requirement]
    rel = cpsat(inst, reqs, recoding="suppression", objective="stars", seed=0, num_workers=1)
    assert rel.status == Status.OPTIMAL and rel.objective == rel.bound == optimum
    assert suppressed_cells(inst, rel) == optimum
    if released is not None:
        assert rel.table["x"].tolist() == released
    _passes(inst, rel, reqs)


def test_risk_requirement_binds_beyond_k_anonymity():
    """x = a a b b c c, k = 2, stars: k alone keeps the three pairs (0 stars, 3 classes);
    average risk <= 1/3 allows floor(6/3) = 2 classes, and the suppressed block is one
    of them, so two pairs go into it (4 stars: suppressing one pair would leave 3
    classes); <= 1/6 allows one class (6 stars)."""
    inst = fa.Instance(
        pd.DataFrame({"x": list("aabbcc")}),
        fa.Schema([fa.Attribute("x", hierarchy=fa.Hierarchy.flat(["a", "b", "c"]))]),
    )
    for reqs, optimum in (
        ([fa.KAnonymity(2)], 0),
        ([fa.KAnonymity(2), fa.AverageRisk("1/3")], 4),
        ([fa.KAnonymity(2), fa.AverageRisk("1/6")], 6),
    ):
        rel = cpsat(inst, reqs, recoding="suppression", objective="stars", seed=0, num_workers=1)
        assert rel.status == Status.OPTIMAL and rel.objective == rel.bound == optimum
        assert suppressed_cells(inst, rel) == optimum
        _passes(inst, rel, reqs)


def test_cpsat_refuses_population_uniques():
    inst = fa.load("diva_table1")
    req = fa.PopulationUniqueness("1/10", model="zayatz", sampling_fraction="1/2")
    with pytest.raises(IncompatibleRequirementError, match="non-linear"):
        cpsat(inst, [fa.KAnonymity(2), req], seed=0)


def test_exact_beats_or_ties_mondrian():
    inst = fa.load("dewri_t1")
    reqs = [fa.KAnonymity(3), fa.LDiversity(2)]
    heuristic = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    rel = cpsat(inst, reqs, objective="ncp", seed=0, hint=heuristic)
    _passes(inst, rel, reqs)
    assert rel.objective <= ncp(inst, heuristic, exact=True)["NCP"]
    assert rel.provenance["params"]["hint"] == "mondrian"


def test_every_l_and_t_variant_is_enforced():
    inst = fa.load("dewri_t1")
    reqs = [
        fa.KAnonymity(2),
        fa.LDiversity(2, variant="entropy"),
        fa.LDiversity(2, variant="recursive", c=3),
        fa.TCloseness("1/2", distance="hierarchical"),
    ]
    rel = cpsat(inst, reqs, seed=0, num_workers=1)
    assert rel.status == Status.OPTIMAL
    _passes(inst, rel, reqs)


def test_time_limit_gives_feasible_with_bound_or_unknown():
    inst = fa.load("german", qi=["job", "savings", "housing"], roles={"personal_status": "qi"})
    reqs = [fa.KAnonymity(5), fa.LDiversity(2)]
    rel = cpsat(inst, reqs, seed=0, time_limit=0.5, hint=None)
    assert rel.status in (Status.FEASIBLE, Status.OPTIMAL, Status.UNKNOWN)
    if rel.status == Status.FEASIBLE:
        assert rel.bound <= rel.objective
        assert 0 <= rel.provenance["gap"] <= 1
        _passes(inst, rel, reqs)
    if rel.status == Status.UNKNOWN:
        assert "time limit" in rel.reason


def test_same_seed_same_release():
    inst = fa.load("diva_table1")
    reqs = [fa.KAnonymity(2), *diva_sigma()]
    first = cpsat(inst, reqs, recoding="suppression", seed=5)
    second = cpsat(inst, reqs, recoding="suppression", seed=5)
    assert first.provenance["canonical"] and second.provenance["canonical"]
    pd.testing.assert_frame_equal(first.table, second.table)


def test_log_and_export(tmp_path):
    inst = fa.load("ruggieri_loan")
    path = tmp_path / "model.pb.txt"
    rel = cpsat(inst, [fa.KAnonymity(2)], seed=0, log=True, export=path, num_workers=1)
    assert "CP-SAT" in rel.provenance["solver_log"]
    assert path.exists() and "x[" in path.read_text()


def test_model_size_and_types():
    inst = fa.load("german", qi=["job", "savings"], roles={"personal_status": "qi"})
    size = model_size(inst, [fa.KAnonymity(10)], recoding="suppression")
    assert size["types"] == size["distinct_qi"] == 60
    enc = encode(inst, [fa.KAnonymity(10)], recoding="suppression")
    assert int(enc.weight.sum()) == 1000


def test_numeric_attributes_fall_back_on_nested_intervals():
    german = fa.load("german", qi=["age", "job"], roles={"personal_status": "ignore"})
    inst = german.subset(german.row_ids[:30])
    assert encode(inst, []).spaces[0].m > 16  # more ages than max_range_values
    rel = cpsat(inst, [fa.KAnonymity(3)], seed=0, num_workers=1, hint=None)
    assert rel.status == Status.OPTIMAL  # over the candidate labels
    assert any(")" in label for label in rel.table["age"].astype(str))  # interval labels [20-25)
    _passes(inst, rel, [fa.KAnonymity(3)])
    # With the heuristic start, a release with free ranges is returned when it is better.
    best = cpsat(inst, [fa.KAnonymity(3)], seed=0, num_workers=1)
    _passes(inst, best, [fa.KAnonymity(3)])
    assert best.objective <= rel.objective
    assert best.status == Status.OPTIMAL or best.provenance["fallback"]


# ------------------------------------------------------------------ the time limit holds
GERMAN_7_QI = [
    "personal_status", "job", "savings", "housing", "employment", "credit_history", "purpose",
]


def _german_7_qi():
    """German credit with the 7 quasi-identifiers of benchmarks/exact.py: at k = 5 its
    model has about 1.5 million pairs and takes 15-40 s to build."""
    return fa.load("german", qi=GERMAN_7_QI, roles={"personal_status": "qi"})


def test_the_build_stops_at_its_deadline():
    from fairanon.models.requirements import validate_requirements
    from fairanon.solver.local_recoding import build_model
    from fairanon.solver.local_recoding.encoding import BuildStopped

    inst = _german_7_qi()
    reqs = validate_requirements(inst, [fa.KAnonymity(5)], caller="cpsat")
    enc = encode(inst, reqs)
    with pytest.raises(BuildStopped, match="deadline"):
        build_model(enc, reqs, deadline=time.perf_counter())
    clock = time.perf_counter()
    with pytest.raises(BuildStopped) as stopped:
        build_model(enc, reqs, deadline=clock + 0.5)
    assert time.perf_counter() - clock < 0.5 + 1.5  # it looks at the time as it goes
    assert stopped.value.stage


def test_the_pairwise_joins_of_the_chain_vectors_stop_at_the_deadline():
    """The joins of every type with every other, before the chains are grown, look at
    the deadline too: with chains of one type (no growing step) a passed deadline still
    stops them."""
    from fairanon.models.requirements import validate_requirements
    from fairanon.solver.local_recoding.encoding import BuildStopped, _chain_vectors

    inst = fa.load("german", qi=["job", "housing"])
    reqs = validate_requirements(inst, [fa.KAnonymity(5)], caller="cpsat")
    enc = encode(inst, reqs)
    # Chains of one type: each type (protected value and quasi-identifiers) alone.
    types = {tuple(row) for row in np.column_stack([enc.protected, enc.qi]).tolist()}
    assert set(_chain_vectors(enc, 1)) == types
    with pytest.raises(BuildStopped, match="joining the candidate classes"):
        _chain_vectors(enc, 1, deadline=time.perf_counter() - 1)


def test_chain_vectors_in_blocks_of_types_are_the_joins_with_the_nearest_types(monkeypatch):
    """Each type joined with its 1, 2, 3 nearest types (by the NCP of the pairwise join,
    ties by position), recomputed type by type here; the same when the costs are taken
    two types at a time (as a large neighbourhood's are, in blocks of CHAIN_BLOCK type
    pairs, instead of the whole types x types table)."""
    from fairanon.models.requirements import validate_requirements
    from fairanon.solver.local_recoding import encoding as encoding_module

    inst = fa.load("german", qi=["job", "savings"])
    reqs = validate_requirements(inst, [fa.KAnonymity(5)], caller="cpsat")
    enc = encode(inst, reqs)
    ncp = [[float(c) for c in space.ncp] for space in enc.spaces]

    def join(a, x, y):
        return int(enc.spaces[a].join(np.array([x]), np.array([y]))[0])

    expected = set()
    for p in set(enc.protected.tolist()):
        base = np.unique(enc.qi[enc.protected == p], axis=0).tolist()
        for t in base:
            cost = [sum(ncp[a][join(a, t[a], u[a])] for a in range(enc.d)) for u in base]
            current = list(t)
            expected.add((p, *current))
            for j in sorted(range(len(base)), key=lambda j: (cost[j], j))[1:4]:
                current = [join(a, current[a], base[j][a]) for a in range(enc.d)]
                expected.add((p, *current))
    whole = encoding_module._chain_vectors(enc, 4)
    assert set(whole) == expected and len(whole) == len(expected)
    n = max(len(np.unique(enc.qi[enc.protected == p], axis=0)) for p in set(enc.protected.tolist()))
    monkeypatch.setattr(encoding_module, "CHAIN_BLOCK", 2 * n)
    assert encoding_module._chain_vectors(enc, 4) == whole


def test_cpsat_returns_the_best_start_when_the_limit_is_far_below_the_build_time():
    """The heuristics run before the model is built; the build stops at its deadline and
    the best verified start is returned (FEASIBLE, a fallback saying why) within the
    time limit plus a margin for freeing the partial model (the model is built whatever
    its size: ``max_pairs_per_second=None``)."""
    inst = _german_7_qi()
    reqs = [fa.KAnonymity(5)]
    limit = 3.0
    clock = time.perf_counter()
    rel = cpsat(inst, reqs, seed=0, time_limit=limit, max_pairs_per_second=None)
    elapsed = time.perf_counter() - clock
    assert elapsed <= limit + 3.0
    assert rel.status == Status.FEASIBLE
    _passes(inst, rel, reqs)
    prov = rel.provenance
    assert prov["model"]["built"] is False and prov["solver"]["solver_status"] == "NOT_RUN"
    assert "model build stopped at its deadline" in prov["fallback_reason"]
    started = [t for t in prov["starts"] if "objective" in t]
    assert started and started[0]["method"] == "mondrian"  # the starts got their share
    assert prov["fallback"] in {t["method"] for t in started}
    assert rel.objective == objective_value(inst, rel, "ncp")  # exact
    assert float(rel.objective) == pytest.approx(min(t["objective"] for t in started))


def test_cpsat_starts_run_to_its_limit_until_one_gives_a_release(monkeypatch):
    """Until a heuristic gives a release, the starts may run to cpsat's own limit (less
    a release's check), not only to their fifth of it: with a release's check expected
    to take 10 s (CHECK_SECONDS), more than the fifth of a 30 s limit (6 s), Mondrian
    still runs and gives the start, and the release is no worse than it. Every
    heuristic was skipped before ("no time left"): on UCI Adult at limits of 0.2-0.8 s,
    where a fifth is below a check's 0.06 s, cpsat returned UNKNOWN with no release."""
    from fairanon.methods import starts

    monkeypatch.setattr(starts, "CHECK_SECONDS", 10.0)
    inst = fa.load("diva_table1")
    reqs = [fa.KAnonymity(3)]
    rel = cpsat(inst, reqs, seed=0, time_limit=30.0)
    ran = {t["method"]: t for t in rel.provenance["starts"] if "objective" in t}
    assert "mondrian" in ran, rel.provenance["starts"]
    assert rel.status in (Status.OPTIMAL, Status.FEASIBLE)
    assert rel.objective <= min(Fraction(str(t["objective"])) for t in ran.values())
    _passes(inst, rel, reqs)


def test_cpsat_unknown_says_why_no_heuristic_gave_a_start(monkeypatch):
    """With a release's check expected to take 100 s, no heuristic fits a 1 s limit and
    German credit's model (7 QIs) cannot be built in it: UNKNOWN, its reason naming the
    model's stop and the first heuristic skipped, with the time it had to go."""
    from fairanon.methods import starts

    monkeypatch.setattr(starts, "CHECK_SECONDS", 100.0)
    rel = cpsat(_german_7_qi(), [fa.KAnonymity(5)], seed=0, time_limit=1.0, max_pairs_per_second=None)
    assert rel.status == Status.UNKNOWN
    assert all("no time left" in t["skipped"] for t in rel.provenance["starts"]
               if "skipped" in t and "Error" not in t["skipped"])
    head, _, tail = rel.reason.partition("; no heuristic gave a start (mondrian: no time left (")
    assert head.startswith("the model build stopped at its deadline")
    assert " s to go; checking a release takes about 100.0" in tail and tail.endswith(" s))")


@pytest.mark.slow
def test_cpsat_gives_the_time_left_to_lns_from_its_best_start(monkeypatch):
    """When the model cannot be built in time, the time the build leaves goes to lns
    over the same model, started from the best start: never worse than it, verified,
    within the limit plus a margin."""
    from fairanon.methods import cpsat as cpsat_module

    monkeypatch.setattr(cpsat_module, "LNS_SECONDS", 1.0)
    inst = _german_7_qi()
    reqs = [fa.KAnonymity(5)]
    limit = 6.0
    clock = time.perf_counter()
    rel = cpsat(inst, reqs, seed=0, time_limit=limit, max_pairs_per_second=None)
    assert time.perf_counter() - clock <= limit + 3.0
    assert rel.status == Status.FEASIBLE
    _passes(inst, rel, reqs)
    prov = rel.provenance
    assert prov["fallback"].endswith("+lns")
    started = [t for t in prov["starts"] if "objective" in t]
    assert rel.objective <= min(Fraction(str(t["objective"])) for t in started) + Fraction(1, 10**6)
    assert rel.objective == objective_value(inst, rel, "ncp")


def test_cpsat_gives_a_model_too_large_for_its_limit_to_lns(monkeypatch):
    """German credit's 7 QIs at k = 5 give a model of 1,476,045 assignment variables
    (model_size counts them without building): above max_pairs_per_second times a 6 s
    limit, so it is not built and lns improves the best start for the whole limit.
    Before, the model's build took the time (13-15 s for the whole model at 60 s) and
    CP-SAT then searched without a release."""
    from fairanon.methods import cpsat as cpsat_module

    monkeypatch.setattr(cpsat_module, "LNS_SECONDS", 1.0)
    inst = _german_7_qi()
    reqs = [fa.KAnonymity(5)]
    pairs = model_size(inst, reqs, objective="ncp", max_vars=10**7)["pairs"]
    limit = 6.0
    clock = time.perf_counter()
    rel = cpsat(inst, reqs, seed=0, time_limit=limit, max_pairs_per_second=pairs / limit - 1)
    assert time.perf_counter() - clock <= limit + 3.0
    prov = rel.provenance
    assert prov["model"]["too_large"] is True and prov["model"]["pairs"] == pairs
    assert prov["solver"]["solver_status"] == "NOT_RUN"
    assert f"{pairs:,} assignment variables" in prov["fallback_reason"]
    assert rel.status == Status.FEASIBLE and prov["fallback"].endswith("+lns")
    _passes(inst, rel, reqs)
    started = [t for t in prov["starts"] if "objective" in t]
    assert rel.objective < min(Fraction(str(t["objective"])) for t in started)
    assert rel.objective == objective_value(inst, rel, "ncp")


def test_a_model_within_max_pairs_per_second_is_built():
    """At exactly max_pairs_per_second times the limit the model is built and solved;
    just above, the solver builds nothing and says so."""
    from fairanon.solver.local_recoding import local_recoding

    inst = fa.load("diva_table1")
    reqs = [fa.KAnonymity(2)]
    pairs = model_size(inst, reqs, objective="ncp")["pairs"]
    rel = cpsat(inst, reqs, seed=0, time_limit=20.0, max_pairs_per_second=pairs / 20.0)
    assert rel.status == Status.OPTIMAL and "too_large" not in rel.provenance["model"]
    _passes(inst, rel, reqs)
    over = local_recoding(inst, reqs, seed=0, time_limit=20.0,
                          max_pairs_per_second=pairs / 20.0 * 0.99)
    assert over.status == Status.UNKNOWN and over.provenance["model"]["pairs"] == pairs
    assert f"the model would have {pairs:,} assignment variables" in over.reason


def test_cpsat_builds_a_model_too_large_for_its_limit_when_no_heuristic_gives_a_start(monkeypatch):
    """lns needs a start: without one the model is the only way to a release, so it is
    built whatever its size (here every heuristic made to give nothing)."""
    from fairanon.methods import cpsat as cpsat_module

    monkeypatch.setattr(
        cpsat_module, "best_heuristic", lambda *args, **kwargs: (None, [{"method": "none"}])
    )
    inst = fa.load("diva_table1")
    reqs = [fa.KAnonymity(2)]
    inst = fa.Instance(inst.table.head(7).reset_index(drop=True), inst.schema)
    rel = cpsat(inst, reqs, seed=0, time_limit=20.0, max_pairs_per_second=1e-6)
    assert rel.status == Status.OPTIMAL
    assert rel.provenance["starts"] == [{"method": "none"}]
    assert "but no heuristic gave a start, so it was built" in rel.provenance["capped"]["built_anyway"]
    assert rel.provenance["params"]["time_limit"] == 20.0
    _passes(inst, rel, reqs)
    optimum = partition_optimum(inst, reqs, recoding="generalization", objective="ncp")
    assert rel.objective == optimum == Fraction(131, 12)


def test_cpsat_above_max_vars_without_a_start_says_so_when_the_build_stops(monkeypatch):
    """A model above max_vars (no count of its variables) and no start: the model is
    tried all the same, and when the time stops its build (UNKNOWN) the reason says the
    model had more candidate classes than max_vars. It raised a TypeError formatting
    the missing count (UCI Adult, k = 5 and 3-diversity, a limit of 2 s)."""
    from fairanon.methods import cpsat as cpsat_module

    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(2)]
    placeholder = fa.Release(inst.table.copy(), np.zeros(inst.n_rows, dtype=np.int64),
                             status=Status.UNKNOWN)
    calls = []

    def solver(instance, requirements, **options):
        calls.append(options)
        if len(calls) == 1:  # the capped model, above max_vars: not counted
            options["auto_hint"](instance, requirements, 0)
            return dataclasses.replace(placeholder, provenance={
                "model": {"too_large": True, "pairs": None}, "params": {}})
        return dataclasses.replace(placeholder, reason="the model build stopped at its deadline",
                                   provenance={"params": {}})

    monkeypatch.setattr(cpsat_module, "best_heuristic",
                        lambda *args, **kwargs: (None, [{"method": "none", "skipped": "none"}]))
    monkeypatch.setattr(cpsat_module, "local_recoding", solver)
    rel = cpsat(inst, reqs, seed=0, time_limit=2.0)
    assert len(calls) == 2 and calls[1]["max_pairs_per_second"] is None
    assert rel.status == Status.UNKNOWN
    assert rel.reason.startswith("the model has more candidate classes than max_vars, but no "
                                 "heuristic gave a start, so it was built in the")
    assert rel.provenance["capped"]["pairs"] is None


def test_cpsat_hands_a_start_to_lns_when_its_model_has_more_variables_than_max_vars():
    """German credit, k = 5 and a diversity constraint: the model (no join closure
    under a diversity constraint) has more assignment variables than max_vars. The
    heuristics run first and diva gives a start, so lns improves it in the time left
    and the release verifies; cpsat raised the max_vars error after the heuristics."""
    inst = fa.load("german")
    reqs = [fa.KAnonymity(5), fa.DiversityConstraint({"job": "skilled"}, 300, 630)]
    rel = cpsat(inst, reqs, seed=0, time_limit=3.0)
    assert rel.status == Status.FEASIBLE and rel.provenance["model"]["too_large"] is True
    assert rel.provenance["fallback"] in ("diva", "diva+lns")
    assert "more candidate classes than max_vars" in rel.provenance["fallback_reason"]
    _passes(inst, rel, reqs)


def test_cpsat_hands_its_labels_and_the_time_left_to_lns(monkeypatch):
    """The lns after a fallback takes cpsat's max_range_values and the time left."""
    from fairanon.methods import cpsat as cpsat_module

    seen = {}

    def recorder(instance, requirements, **kwargs):
        seen.update(kwargs, called_at=time.perf_counter())
        return kwargs["start"]

    monkeypatch.setattr(cpsat_module, "LNS_SECONDS", 0.5)
    monkeypatch.setattr(cpsat_module, "lns", recorder)
    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(2)]
    clock = time.perf_counter()
    rel = cpsat(inst, reqs, seed=0, time_limit=5.0, max_pairs_per_second=1e-6, max_range_values=12)
    taken = seen["called_at"] - clock  # before lns: the heuristics, the count, the check
    assert seen["max_range_values"] == 12
    assert 5.0 - taken - 0.01 <= seen["time_limit"] <= 5.0 - taken + 0.01
    assert rel.status == Status.FEASIBLE and rel.provenance["model"]["too_large"] is True
    _passes(inst, rel, reqs)


def test_cpsat_builds_a_model_too_large_for_its_limit_when_lns_would_get_too_little(monkeypatch):
    """Under the default cap (made 1 variable a second here), a 4 s limit leaves lns less
    than LNS_SECONDS: the model (270 variables) is built all the same, warm-started
    from the best start, and proven optimal. Before, the start was returned at once
    (kmember's 15.625 at 0.5-0.8 s, where the model proves 14.708 in 0.2 s)."""
    from fairanon.methods import cpsat as cpsat_module

    monkeypatch.setattr(cpsat_module, "SEARCH_PAIRS_PER_SECOND", 1.0)
    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(2)]
    rel = cpsat(inst, reqs, seed=0, time_limit=4.0)
    assert rel.status == Status.OPTIMAL
    capped = rel.provenance["capped"]
    assert capped["pairs"] == 270 and "less than lns's 5 s" in capped["built_anyway"]
    assert rel.provenance["params"]["max_pairs_per_second"] == 1.0
    _passes(inst, rel, reqs)
    started = [t for t in rel.provenance["starts"] if "objective" in t]
    assert rel.objective <= min(Fraction(str(t["objective"])) for t in started)


def test_cpsat_says_why_a_model_built_after_all_could_not_be_searched(monkeypatch):
    """German credit's 7 QIs in 8 s under the default cap, with lns given 20 s at least:
    lns would get too little, so the 1.5 M-variable model is built after all, its build
    stops at its deadline, and the fallback's reason says both, the cap first. (At 3 s,
    on a loaded machine, the first build could stop before it had counted the model.)"""
    from fairanon.methods import cpsat as cpsat_module

    monkeypatch.setattr(cpsat_module, "LNS_SECONDS", 20.0)
    inst, reqs = _german_7_qi(), [fa.KAnonymity(5)]
    rel = cpsat(inst, reqs, seed=0, time_limit=8.0)
    assert rel.status == Status.FEASIBLE
    _passes(inst, rel, reqs)
    reason = rel.provenance["fallback_reason"]
    _, _, tail = reason.partition(": the model has 1,476,045 assignment variables, more than ")
    assert tail, reason
    assert "so it was built in the" in tail and "the model build stopped at its deadline" in tail


def test_cpsat_gives_a_model_above_max_vars_to_lns_under_the_cap(monkeypatch):
    """Under the cap, a model whose candidate classes exceed max_vars (German credit's 7
    QIs, max_vars=1000) is not refused once a heuristic gave a start: lns improves the
    start (UCI Adult at k = 5 raised the refusal after the heuristics had run); without
    a start it is refused as before."""
    from fairanon.exceptions import InvalidParameterError
    from fairanon.methods import cpsat as cpsat_module

    monkeypatch.setattr(cpsat_module, "LNS_SECONDS", 1.0)
    inst, reqs = _german_7_qi(), [fa.KAnonymity(5)]
    rel = cpsat(inst, reqs, seed=0, time_limit=4.0, max_vars=1000)
    assert rel.status == Status.FEASIBLE and rel.provenance["fallback"].endswith("+lns")
    assert rel.provenance["model"]["too_large"] is True and rel.provenance["model"]["pairs"] is None
    assert "more candidate classes than max_vars (1,000) allows" in rel.provenance["fallback_reason"]
    _passes(inst, rel, reqs)
    started = [t for t in rel.provenance["starts"] if "objective" in t]
    assert rel.objective < min(Fraction(str(t["objective"])) for t in started)
    monkeypatch.setattr(cpsat_module, "best_heuristic", lambda *args, **kwargs: (None, []))
    with pytest.raises(InvalidParameterError, match="'max_vars' parameter of cpsat"):
        cpsat(inst, reqs, seed=0, time_limit=4.0, max_vars=1000)


def test_cpsat_reads_requirements_given_as_an_iterator_once():
    """An iterator of requirements reaches the solver whole (it was read up before,
    and the model then had none: singleton classes, OPTIMAL, failing k)."""
    inst = fa.load("diva_table1")
    rel = cpsat(inst, (r for r in [fa.KAnonymity(2)]), seed=0, time_limit=20.0)
    assert rel.status == Status.OPTIMAL
    _passes(inst, rel, [fa.KAnonymity(2)])


def test_cpsat_refuses_max_pairs_per_second_without_a_hint():
    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(2)]
    with pytest.raises(InvalidParameterError, match="applies with hint='auto' or a Release"):
        cpsat(inst, reqs, seed=0, time_limit=5.0, hint=None, max_pairs_per_second=1e-6)


def _slowly_built(monkeypatch, seconds: float) -> None:
    """Make the model build take `seconds` more (its own deadline ignored)."""
    from fairanon.solver.local_recoding import solve as solve_module

    real, real_hint = solve_module.build_model, solve_module._hint_from_release

    def slow_build(*args, **kwargs):
        pm = real(*args, **{**kwargs, "deadline": None})
        time.sleep(seconds)
        return pm

    monkeypatch.setattr(solve_module, "build_model", slow_build)
    monkeypatch.setattr(
        solve_module, "_hint_from_release", lambda pm, release, deadline: real_hint(pm, release)
    )


def test_cpsat_returns_a_given_start_when_cp_sat_cannot_run(monkeypatch):
    """A release given as hint is a start like a heuristic's: when CP-SAT is not run in
    the time, that release comes back (FEASIBLE), where cpsat returned every
    quasi-identifier '*' (UNKNOWN) before. No heuristic runs."""
    _slowly_built(monkeypatch, 0.6)
    inst = fa.load("german", qi=["job", "savings", "housing"], roles={"personal_status": "qi"})
    reqs = [fa.KAnonymity(5)]
    start = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    # without the cap: the model is built and CP-SAT is not run for want of time
    rel = cpsat(inst, reqs, seed=0, time_limit=1.0, hint=start, max_pairs_per_second=None)
    assert rel.status == Status.FEASIBLE
    assert rel.provenance["fallback"] == "mondrian"
    reason = rel.provenance["fallback_reason"]
    assert reason.startswith("the given start (mondrian) is returned")
    assert "CP-SAT was not run" in reason
    assert rel.table.equals(start.table)
    assert rel.objective == ncp(inst, start, exact=True)["NCP"]
    assert [t["method"] for t in rel.provenance["starts"]] == ["mondrian"]
    _passes(inst, rel, reqs)
    by_hand = Release(start.table, start.groups)  # no provenance: named "hint"
    rel = cpsat(inst, reqs, seed=0, time_limit=1.0, hint=by_hand, max_pairs_per_second=None)
    assert rel.status == Status.FEASIBLE and rel.provenance["fallback"] == "hint"


def test_cpsat_only_warm_starts_from_a_given_release_that_fails_the_requirements(monkeypatch):
    """A hint that fails k is no fallback: the all-'*' UNKNOWN release when CP-SAT is not
    run, its entry saying why; with time, CP-SAT's own release."""
    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(3)]
    weak = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian", seed=0)
    assert not fa.verify(inst, weak, reqs).passed
    rel = cpsat(inst, reqs, seed=0, time_limit=20.0, hint=weak)
    assert rel.status == Status.OPTIMAL and "fallback" not in rel.provenance
    assert rel.provenance["starts"] == [
        {"method": "mondrian", "given": True,
         "skipped": "it fails the requirements (3-anonymity)"}
    ]
    _passes(inst, rel, reqs)
    _slowly_built(monkeypatch, 0.6)
    bare = cpsat(inst, reqs, seed=0, time_limit=1.0, hint=weak, max_pairs_per_second=None)
    assert bare.status == Status.UNKNOWN and "CP-SAT was not run" in bare.reason
    assert bare.reason.endswith(
        "; the given start cannot stand in (mondrian: it fails the requirements (3-anonymity))"
    )


def test_cpsat_refuses_a_hint_of_another_table():
    """A release of another table as hint is refused by name (a KeyError from deep in
    the model's hint before), by cpsat and by the solver alone."""
    from fairanon.solver.local_recoding import local_recoding

    other = fa.anonymize(fa.load("diva_table1"), [fa.KAnonymity(2)], method="mondrian", seed=0)
    inst = fa.load("dewri_t1")
    for solve in (cpsat, local_recoding):
        with pytest.raises(InvalidParameterError,
                           match="a release of the instance. Got one of another table instead: "
                                 "it has no column"):
            solve(inst, [fa.KAnonymity(2)], seed=0, time_limit=10.0, hint=other)
    own = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian", seed=0)
    short = Release(own.table.iloc[1:], own.groups[1:])
    for solve in (cpsat, local_recoding):
        with pytest.raises(InvalidParameterError, match="1 of the instance's records are not"):
            solve(inst, [fa.KAnonymity(2)], seed=0, time_limit=10.0, hint=short)


@pytest.mark.parametrize("bad", ["x", pd.DataFrame({"a": [1]})])
def test_cpsat_names_a_bad_hint(bad):
    """A hint that is no release is refused as the hint, also with a cap (the cap's
    message came first) and as a DataFrame (pandas' ambiguous truth value came out)."""
    inst = fa.load("diva_table1")
    for cap in ({}, {"max_pairs_per_second": 5}):
        with pytest.raises(InvalidParameterError, match="'hint' parameter of cpsat must be"):
            cpsat(inst, [fa.KAnonymity(2)], seed=0, time_limit=5.0, hint=bad, **cap)


def test_cpsat_hands_a_given_start_to_lns_when_the_model_is_too_large(monkeypatch):
    """Under the cap, a verified hint goes to lns as the heuristics' start would."""
    from fairanon.methods import cpsat as cpsat_module

    monkeypatch.setattr(cpsat_module, "LNS_SECONDS", 1.0)
    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(2)]
    start = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    rel = cpsat(inst, reqs, seed=0, time_limit=4.0, hint=start, max_pairs_per_second=1e-6,
                objective="ncp")
    assert rel.provenance["model"]["too_large"] is True
    assert rel.provenance["fallback"] == "mondrian+lns"
    assert rel.objective < ncp(inst, start, exact=True)["NCP"]
    _passes(inst, rel, reqs)


def test_cpsat_takes_max_pairs_per_second_as_a_numpy_number():
    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(2)]
    rel = cpsat(inst, reqs, seed=0, time_limit=20.0, max_pairs_per_second=np.int64(10**6))
    assert rel.status == Status.OPTIMAL and rel.provenance["params"]["max_pairs_per_second"] == 10**6


def test_cpsat_refuses_an_iterator_that_fails_partway():
    """A TypeError raised inside the iterator is the caller's error, not a sign that
    the requirements are no iterable: reported, never solved with the part read."""
    def failing():
        yield fa.KAnonymity(2)
        raise TypeError("int() argument must be a string, a bytes-like object or a real number")

    with pytest.raises(TypeError, match="int\\(\\) argument"):
        cpsat(fa.load("diva_table1"), failing(), seed=0, time_limit=5.0)


def test_cpsat_takes_max_pairs_per_second_as_a_fraction():
    """A Fraction is a number: the too-large reason is formatted from its float."""
    from fairanon.solver.local_recoding import local_recoding

    over = local_recoding(fa.load("diva_table1"), [fa.KAnonymity(2)], seed=0, time_limit=4.0,
                          max_pairs_per_second=Fraction(1, 2))
    assert over.status == Status.UNKNOWN and "max_pairs_per_second (0.5)" in over.reason


@pytest.mark.parametrize("bad", [0, -1.0, True, "fast", float("nan"), np.bool_(True)])
def test_cpsat_refuses_a_bad_max_pairs_per_second(bad):
    with pytest.raises(InvalidParameterError, match="max_pairs_per_second"):
        cpsat(fa.load("diva_table1"), [fa.KAnonymity(2)], max_pairs_per_second=bad)


@pytest.mark.parametrize("bad", [0, -1.0, True, "fast", float("nan"), float("inf"), np.bool_(True)])
def test_cpsat_refuses_a_bad_deterministic_limit(bad):
    from fairanon.solver.local_recoding import local_recoding

    with pytest.raises(InvalidParameterError, match="deterministic_limit"):
        local_recoding(fa.load("diva_table1"), [fa.KAnonymity(2)], deterministic_limit=bad)


def test_a_deterministic_limit_ends_the_search_the_same_way_each_time():
    """German credit, 3 QIs, k = 5, NCP: with no time limit CP-SAT runs past 15 s
    without proving its optimum; a deterministic limit stops it, and one worker stopped
    there gives the same release twice. Too small a limit finds no release and says
    which limit stopped it."""
    from fairanon.solver.local_recoding import local_recoding

    inst = fa.load("german", qi=["job", "housing", "savings"])
    reqs = [fa.KAnonymity(5)]
    runs = [local_recoding(inst, reqs, seed=0, num_workers=1, hint=None, deterministic_limit=0.3)
            for _ in range(2)]
    assert runs[0].status == runs[1].status == Status.FEASIBLE
    assert runs[0].bound < runs[0].objective
    pd.testing.assert_frame_equal(runs[0].table, runs[1].table)
    _passes(inst, runs[0], reqs)
    none = local_recoding(inst, reqs, seed=0, num_workers=1, hint=None, deterministic_limit=0.01)
    assert none.status == Status.UNKNOWN
    assert "deterministic limit (0.01 units" in none.reason and "time limit" not in none.reason


def test_cpsat_is_not_run_when_the_time_left_cannot_load_the_model(monkeypatch):
    """A model built (here: slowly) with less time left than CP-SAT needs to load it
    is not solved: local_recoding says so (UNKNOWN), cpsat returns its best start."""
    from fairanon.solver.local_recoding import solve as solve_module

    real = solve_module.build_model

    def slow_build(*args, **kwargs):
        pm = real(*args, **{**kwargs, "deadline": None})
        time.sleep(0.6)
        return pm

    real_hint = solve_module._hint_from_release
    monkeypatch.setattr(solve_module, "build_model", slow_build)
    monkeypatch.setattr(
        solve_module, "_hint_from_release", lambda pm, release, deadline: real_hint(pm, release)
    )
    inst = fa.load("german", qi=["job", "savings", "housing"], roles={"personal_status": "qi"})
    reqs = [fa.KAnonymity(5)]
    bare = cpsat(inst, reqs, seed=0, time_limit=1.0, hint=None)
    assert bare.status == Status.UNKNOWN and "CP-SAT was not run" in bare.reason
    assert bare.provenance["model"]["variables"] > 0
    assert fa.verify(inst, bare, reqs).passed  # every quasi-identifier '*'
    rel = cpsat(inst, reqs, seed=0, time_limit=1.0, max_pairs_per_second=None)
    assert rel.status == Status.FEASIBLE
    assert "CP-SAT was not run" in rel.provenance["fallback_reason"]
    _passes(inst, rel, reqs)
    best = min(t["objective"] for t in rel.provenance["starts"] if "objective" in t)
    assert float(rel.objective) == pytest.approx(best)


def test_a_small_model_is_still_proven_within_a_time_limit():
    inst = fa.load("diva_table1")
    reqs = [fa.KAnonymity(2), *diva_sigma()]
    clock = time.perf_counter()
    rel = cpsat(inst, reqs, recoding="suppression", seed=0, time_limit=20)
    assert time.perf_counter() - clock <= 20
    assert rel.status == Status.OPTIMAL and rel.objective == 22
    _passes(inst, rel, reqs)


# ------------------------------------------------------------------ bad input
def test_bad_options():
    inst = fa.load("ruggieri_loan")
    reqs = [fa.KAnonymity(2)]
    with pytest.raises(InvalidParameterError, match="'recoding' parameter of cpsat"):
        cpsat(inst, reqs, recoding="local")
    with pytest.raises(InvalidParameterError, match="'objective' parameter of cpsat"):
        cpsat(inst, reqs, objective="speed")
    with pytest.raises(InvalidParameterError, match="'num_workers' parameter of cpsat"):
        cpsat(inst, reqs, num_workers=0)
    with pytest.raises(InvalidParameterError, match="'time_limit' parameter of cpsat"):
        cpsat(inst, reqs, time_limit=-1)
    with pytest.raises(InvalidParameterError, match="'hint' parameter of cpsat"):
        cpsat(inst, reqs, hint="mondrian")
    with pytest.raises(InvalidParameterError, match="'max_vars' parameter of cpsat"):
        cpsat(inst, [fa.KAnonymity(2), fa.AlphaProtection("RD", "1/10")], max_vars=5)
    with pytest.raises(IncompatibleRequirementError, match="max_contexts"):
        cpsat(inst, [fa.AlphaProtection("RD", "1/10")], max_contexts=3)
    with pytest.raises(InvalidParameterError, match="'instance' parameter of cpsat"):
        cpsat(inst.table, reqs)


def test_too_many_values_without_levels():
    df = pd.DataFrame({"x": np.arange(40), "s": ["a", "b"] * 20})
    inst = fa.Instance(
        df, fa.Schema([fa.Attribute("x", kind="numeric"), fa.Attribute("s", role="sensitive")])
    )
    with pytest.raises(InvalidParameterError, match="max_range_values"):
        cpsat(inst, [fa.KAnonymity(2)])
    rel = cpsat(inst, [fa.KAnonymity(2)], recoding="suppression", seed=0, num_workers=1)
    _passes(inst, rel, [fa.KAnonymity(2)])


# ------------------------------------------------------------------ auto
def test_auto_picks_the_exact_model_for_small_instances():
    inst = fa.load("diva_table1")
    reqs = [fa.KAnonymity(2), *diva_sigma()]
    rel = fa.anonymize(inst, reqs, seed=0)
    assert rel.provenance["auto_choice"] == "cpsat"
    assert "suppression" in rel.provenance["auto_reason"]
    assert rel.status == Status.OPTIMAL and rel.objective == 22
    _passes(inst, rel, reqs)


def test_auto_falls_back_for_large_instances():
    from fairanon.api import choose_method

    assert choose_method(fa.load("adult"), [fa.KAnonymity(5)])[0] == "portfolio"
    name, why = choose_method(
        fa.load("german"), [fa.KAnonymity(5), fa.AlphaProtection("RD", "1/10")]
    )
    assert name == "fulldomain" and "lattice" in why
    assert (
        choose_method(fa.load("ruggieri_loan"), [fa.KAnonymity(2)], time_limit=0.001)[0]
        == "portfolio"
    )


# ------------------------------------------------------------------ what a star is
@pytest.mark.parametrize("kind", ["node", "range", "interval"])
def test_a_label_covering_every_value_present_is_a_star(kind):
    """One rule for ranges, hierarchy nodes and intervals: a generalized label covering
    every value present is released as '*' and counts as a star."""
    if kind == "node":
        # X covers both values present (c is in the hierarchy but not in the data).
        tree = fa.Hierarchy.from_mapping({"*": {"X": ["a", "b"], "Y": ["c"]}})
        attr, values = fa.Attribute("q", hierarchy=tree), ["a", "b"] * 3
    elif kind == "range":
        attr = fa.Attribute("q", kind="ordered", order=["lo", "mid", "hi", "top"])
        values = ["lo", "mid", "hi"] * 2
    else:
        attr = fa.Attribute("q", kind="numeric", intervals=fa.IntervalHierarchy((100,)))
        values = list(range(20)) * 2  # 20 values: more than max_range_values
    inst = fa.Instance(pd.DataFrame({"q": values}), fa.Schema([attr]))
    [space] = encode(inst, [fa.KAnonymity(len(values))]).spaces
    full = space.masks.all(axis=1)
    generalized = np.ones(space.n_labels, dtype=bool)
    generalized[space.own] = False
    assert (space.star == (full & generalized)).all() and space.star.any()
    rel = cpsat(inst, [fa.KAnonymity(len(values))], objective="stars", seed=0, num_workers=1)
    assert rel.status == Status.OPTIMAL
    assert set(rel.table["q"].astype(str)) == {"*"}
    assert rel.objective == len(values) == suppressed_cells(inst, rel)
    _passes(inst, rel, [fa.KAnonymity(len(values))])


@pytest.mark.parametrize("name", ["age", "education", "native-country"])
def test_label_join_is_the_first_label_covering_both_in_specificity_order(name):
    """The join of two labels, checked by a plain scan: among the labels covering every
    value of both, the one covering fewest values (a value's own label before a
    generalized one covering the same, then the lowest id). Age has more than 64
    values, so its masks take two words."""
    from fairanon.solver.local_recoding.labels import _label_space

    inst = fa.load("adult")
    space = _label_space(inst, name, "generalization", 16)
    assert name != "age" or space.m > 64
    rng = np.random.default_rng(0)
    a = rng.integers(space.n_labels, size=400)
    b = rng.integers(space.n_labels, size=400)
    own = set(space.own.tolist())
    masks = space.masks  # made once: a space of runs builds them when read
    for x, y, got in zip(a.tolist(), b.tolist(), space.join(a, b).tolist()):
        union = masks[x] | masks[y]
        covering = [j for j in range(space.n_labels) if not (union & ~masks[j]).any()]
        best = min(covering, key=lambda j: (int(masks[j].sum()), j not in own, j))
        assert got == best


def test_label_join_keeps_no_table_beyond_the_memory_limit():
    """The labels x labels table of joins takes 2 bytes a pair and only when it fits in
    the memory limit; under a 1 kB limit the joins are found pair by pair, the same as
    the plain scan of the test above."""
    from fairanon._memory import memory_limit
    from fairanon.solver.local_recoding.labels import _label_space

    inst = fa.load("adult")
    rng = np.random.default_rng(1)
    for limit in ("1GB", 1_000):
        space = _label_space(inst, "native-country", "generalization", 16)
        a = rng.integers(space.n_labels, size=300)
        b = rng.integers(space.n_labels, size=300)
        with memory_limit(limit):
            got = space.join(a, b).tolist()
        kept = space._table
        assert (kept is None) == (limit == 1_000)
        assert kept is None or kept.nbytes == 2 * space.n_labels**2
        own = set(space.own.tolist())
        masks = space.masks
        for x, y, j in zip(a.tolist(), b.tolist(), got):
            union = masks[x] | masks[y]
            covering = [c for c in range(space.n_labels) if not (union & ~masks[c]).any()]
            assert j == min(covering, key=lambda c: (int(masks[c].sum()), c not in own, c))


def id_like_instance(n: int) -> fa.Instance:
    """n distinct IDs (a flat quasi-identifier), each twice, with an age."""
    ids = [f"P{i:05d}" for i in range(n)]
    table = pd.DataFrame({"pid": ids * 2, "age": np.arange(2 * n) % 70 + 18})
    return fa.Instance(table, fa.Schema([fa.Attribute("pid", hierarchy=fa.Hierarchy.flat(ids)),
                                         fa.Attribute("age", kind="numeric")]))


def _masked_codes(n: int, shuffled: bool = False) -> fa.Instance:
    """n codes of equal width (a 10,000-value attribute at n = 10,000), each once, under
    a masking tree (one digit masked per level), as a categorical or, `shuffled`, as an
    ordered attribute whose order is the reverse of the tree's leaf order."""
    from fairanon.instances.builders import masking_hierarchy

    digits = len(str(n - 1))
    codes = [f"{i:0{digits}d}" for i in range(n)]
    tree = masking_hierarchy(codes, levels=digits - 1)
    attr = (fa.Attribute("dx", kind="ordered", order=codes[::-1], hierarchy=tree) if shuffled
            else fa.Attribute("dx", hierarchy=tree))
    return fa.Instance(pd.DataFrame({"dx": codes}), fa.Schema([attr]))


def test_the_labels_of_many_values_take_memory_linear_in_them():
    """10,000 distinct values under a masking tree: their one-value labels as rows over
    every value took 10,000 x 10,000 bytes twice (200 MB); as runs the 11,111 labels
    (values and nodes) are built within 10 MB. Under 1 MB they are refused by the
    attribute's name before they take that memory."""
    import tracemalloc

    from fairanon._memory import memory_limit
    from fairanon.solver.local_recoding.labels import _label_space

    inst = _masked_codes(10_000)
    tracemalloc.start()
    try:
        with memory_limit("10MB"):
            space = _label_space(inst, "dx", "generalization", 16)
        peak = tracemalloc.get_traced_memory()[1]
        with memory_limit("1MB"), pytest.raises(fa.MemoryLimitError, match="10,000 values of 'dx'"):
            _label_space(inst, "dx", "generalization", 16)
    finally:
        tracemalloc.stop()
    assert peak < 10 * 10**6
    # 10,000 values, 1,000 + 100 + 10 masked codes and '*'
    assert space.n_labels == 10_000 + 1_000 + 100 + 10 + 1
    node = space.texts.index("123*")
    assert space.sizes[node] == 10
    assert [space.values[i] for i in range(space.m) if space.covers(node, i)] == [
        f"123{d}" for d in range(10)]


@pytest.mark.parametrize("kind", ["tree", "shuffled", "ranges", "intervals", "suppression"])
def test_each_label_covers_what_the_verifier_reads_it_to_cover(kind):
    """Each label's run of values against the verifier's own reading of its text
    (:func:`~fairanon.instances.generalization.label_covers`): the values of a
    hierarchy node (in and out of domain order), of a range, of an interval, '*'."""
    from fairanon.instances.generalization import label_covers
    from fairanon.solver.local_recoding.labels import _label_space

    recoding, max_range = "generalization", 16
    if kind in ("tree", "shuffled", "suppression"):
        inst = _masked_codes(300, shuffled=kind == "shuffled")
        recoding = "suppression" if kind == "suppression" else recoding
    elif kind == "ranges":
        values = [f"v{i:02d}" for i in range(12)]
        inst = fa.Instance(pd.DataFrame({"dx": values[::2] + values[1::3]}),
                           fa.Schema([fa.Attribute("dx", kind="ordered", order=values)]))
    else:
        inst = fa.Instance(pd.DataFrame({"dx": [1, 4, 5, 12, 13, 27, 40, 41, 77, 99] * 2}),
                           fa.Schema([fa.Attribute("dx", kind="numeric",
                                                   intervals=fa.IntervalHierarchy((10, 50)))]))
    space = _label_space(inst, "dx", recoding, max_range)
    attr = inst.schema["dx"]
    covers = label_covers(attr, space.texts)
    if attr.kind == "numeric":
        points = np.array(space.values, dtype=float)
    else:
        points = np.array([attr.domain.index(v) for v in space.values], dtype=np.int64)
    labels = np.repeat(np.arange(space.n_labels), space.m)
    values = np.tile(np.arange(space.m), space.n_labels)
    expected = covers.contains(labels, points[values]).reshape(space.n_labels, space.m)
    assert np.array_equal(space.covers(labels, values).reshape(space.n_labels, space.m), expected)
    assert np.array_equal(space.sizes, expected.sum(axis=1))
    assert space.star.sum() == 1 and expected[space.star].all()


@pytest.mark.parametrize("k", [3, 4, 5])
def test_an_optimum_of_stars_is_no_worse_than_any_heuristic_release(k):
    """Ruggieri's loan table: Mondrian releases the root 'housing-car', which covers
    both purposes present. It tells no more than '*', so it counts as a star as CP-SAT's
    model counts it; Mondrian's release used to count 0 stars against cpsat's proven
    optimum (9 against 14 for k = 3)."""
    from fairanon.models.objectives import objective_value

    inst = fa.load("ruggieri_loan")
    reqs = [fa.KAnonymity(k)]
    rel = cpsat(inst, reqs, objective="stars", seed=0, num_workers=1)
    assert rel.status == Status.OPTIMAL and rel.objective == objective_value(inst, rel, "stars")
    for method in ("mondrian", "kmember", "fulldomain", "lattice-local"):
        other = fa.anonymize(inst, reqs, method=method, seed=0)
        assert fa.verify(inst, other, reqs).passed
        assert objective_value(inst, other, "stars") >= rel.objective


@pytest.mark.parametrize("option", ["explain", "log"])
def test_a_flag_that_is_no_bool_is_refused(option):
    """A job file's "no" or "false" in quotes was read as true."""
    with pytest.raises(InvalidParameterError,
                       match=f"'{option}' parameter of cpsat must be a bool"):
        cpsat(fa.load("diva_table1"), [fa.KAnonymity(3)], seed=0, **{option: "false"})
