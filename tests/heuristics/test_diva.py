"""DIVA: the running example of the paper (Examples 3.1-3.4, Table 3), German credit
with the published proportional constraints, infeasible constraint sets, bad input,
and property tests on random small tables. Every release goes through the verifier."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import fairanon as fa
from fairanon.exceptions import IncompatibleRequirementError, InvalidParameterError
from fairanon.heuristics.diva import (
    NEXT_NODES,
    clusterings,
    constraint_graph,
    diverse_clustering,
)
from fairanon.instances.datasets import diva_table3
from fairanon.methods.diva import diva, diva_exact
from fairanon.models.diversity import diva_sigma, proportional
from fairanon.models.metrics import discernibility, suppressed_cells
from fairanon.release import Status

PROPERTY = settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow])
STRATEGIES = sorted(NEXT_NODES)


def _passes(instance, release, requirements):
    report = fa.verify(instance, release, requirements)
    assert report.passed, str(report)
    return report


@pytest.fixture(scope="module")
def table1():
    return fa.load("diva_table1")


@pytest.fixture(scope="module")
def example():
    return [fa.KAnonymity(2), *diva_sigma()]


# ------------------------------------------------------------------ the running example
def test_constraint_graph_of_example_3_3(table1):
    graph = constraint_graph(table1, diva_sigma())
    assert sorted(graph.edges(data="overlap")) == [(0, 2, 2), (1, 2, 1)]
    assert [graph.nodes[v]["targets"] for v in graph] == [3, 2, 4]


def test_clusterings_as_in_section_3_3(table1, example):
    """Clusterings(sigma_1, R) has four clusterings, Clusterings(sigma_2, R) one; sigma_3's
    include {t6,t7}, {t7,t8} and {t6,t7,t10} (Example 3.4), ten in all."""
    assert sorted(clusterings(table1, example, 0)) == [[[8, 9]], [[8, 9, 10]], [[8, 10]], [[9, 10]]]
    assert clusterings(table1, example, 1) == [[[5, 6]]]
    third = clusterings(table1, example, 2, limit=50)
    assert len(third) == 10 and all(c in third for c in ([[6, 7]], [[7, 8]], [[6, 7, 10]]))
    assert [[6, 7], [8, 10]] not in [c[0] for c in third]  # not minimal
    assert clusterings(table1, [fa.KAnonymity(2), fa.DiversityConstraint({"ETH": "Asian"}, 0, 5)], 0) == [[]]


def test_example_3_4_search_and_table_3(table1, example):
    """Nodes in the paper's order v1, v3, v2 with DIVA-Basic's random choice of clusterings
    and the paper's plain backtracking (no lookahead): with seed 161 the first pick for
    v1 is {t9, t10} and for v3 {t6, t7}, as in Figure 3, so v2 is stuck, v3 backtracks to
    {t7, t8}, and the release is Table 3. With lookahead, {t6, t7} is rejected at once."""
    found = diverse_clustering(table1, example, next_node=(0, 2, 1), value_order="random", seed=161, trace=True,
                               lookahead=False)
    assert found.trace == [
        ("color", 0, [[9, 10]]),
        ("color", 2, [[6, 7]]),
        ("dead end", 1),
        ("uncolor", 2),
        ("color", 2, [[7, 8]]),
        ("color", 1, [[5, 6]]),
    ]
    assert sorted(sorted(table1.row_ids[c].tolist()) for c in found.clusters) == [[5, 6], [7, 8], [9, 10]]
    ahead = diverse_clustering(table1, example, next_node=(0, 2, 1), value_order="random", seed=161, trace=True)
    assert ahead.trace == [("color", 0, [[9, 10]]), ("color", 2, [[7, 8]]), ("color", 1, [[5, 6]])]
    release = diva(table1, example, next_node=(0, 2, 1), value_order="random", seed=161)
    assert release.table.astype(str).equals(diva_table3().astype(str))
    report = _passes(table1, release, example)
    assert release.objective == suppressed_cells(table1, release) == 26
    assert report.metrics["discernibility"] == discernibility(table1, release, k=2) == 20
    assert [report[str(s)].achieved for s in diva_sigma()] == [2, 2, 2]


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_every_strategy_on_the_running_example(table1, example, strategy):
    release = diva(table1, example, next_node=strategy, seed=0)
    assert release.status == Status.FEASIBLE
    _passes(table1, release, example)
    assert release.objective >= 22  # the optimum (docs/papers.md, DIVA and B-8)


def test_node_orders(table1, example):
    """MinChoice starts with v2 (one clustering), MaxFanOut with v3 (two uncolored neighbours)."""
    assert diverse_clustering(table1, example, next_node="minchoice").order[0] == 1
    assert diverse_clustering(table1, example, next_node="maxfanout").order[0] == 2
    by_name = diverse_clustering(table1, example, next_node="maxfanout")
    by_callable = diverse_clustering(table1, example, next_node=NEXT_NODES["maxfanout"])
    assert by_name.order == by_callable.order


def test_same_seed_same_release(table1, example):
    a = diva(table1, example, next_node="basic", seed=7)
    b = diva(table1, example, next_node="basic", seed=7)
    assert a.table.equals(b.table) and (a.groups == b.groups).all()


def test_integrate_restores_an_upper_bound(table1):
    """The anonymized rest shows too many women; Integrate stars whole classes."""
    reqs = [fa.KAnonymity(2), fa.DiversityConstraint({"ETH": "Asian"}, 2, 5),
            fa.DiversityConstraint({"GEN": "Female"}, 0, 2)]
    release = diva(table1, reqs, next_node="maxfanout", seed=0)
    report = _passes(table1, release, reqs)
    assert report[str(reqs[2])].achieved <= 2


# ------------------------------------------------------------------ German credit
def german_with_sex():
    """German credit with DIVA's 'Sex' attribute (derived from personal status, which
    it replaces), as in the DIVA repository's version of the data."""
    return fa.load("german", roles={"sex": "qi", "personal_status": "ignore"}, name="german+sex")


@pytest.fixture(scope="module")
def german():
    return german_with_sex()


def published_credit_lower_bounds(inst):
    """rho = 0.96 as published (Job 21, 192, 605, 142; Sex Male 662, Female 298), upper
    bounds the counts (fairanon's default)."""
    return proportional(inst, "job", 0.96, rounding="round") + proportional(inst, "sex", 0.96, rounding="round")


def published_credit_set(inst):
    """The README's Credit "Proportion" set exactly: Job [x, x], Sex(Male) [662, 690],
    Sex(Female) [298, 298]."""
    return (proportional(inst, "job", 0.96, rounding="round", upper="lower")
            + proportional(inst, "sex", 0.96, rounding="round", upper="majority"))


@pytest.mark.parametrize("k", [10, 20])
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_german_published_proportional_constraints(german, k, strategy):
    sigma = published_credit_lower_bounds(german)
    assert [s.lower for s in sigma] == [21, 192, 605, 142, 298, 662]
    reqs = [fa.KAnonymity(k), *sigma]
    release = diva(german, reqs, next_node=strategy, seed=0)
    assert release.status == Status.FEASIBLE
    assert release.provenance["search"]["coloring"]["found"]  # the coloring itself succeeded
    _passes(german, release, reqs)


def test_german_exact_choice(german):
    reqs = [fa.KAnonymity(20), *published_credit_lower_bounds(german)]
    release = diva_exact(german, reqs, seed=0, pool_candidates=2)
    assert release.status == Status.FEASIBLE
    assert release.provenance["search"]["exact"]["status"] == "OPTIMAL"
    _passes(german, release, reqs)


@pytest.mark.slow
@pytest.mark.parametrize("method", STRATEGIES + ["exact"])
def test_german_published_set_with_exact_counts(german, method):
    """The README's set with its [x, x] upper bounds, k = 10."""
    reqs = [fa.KAnonymity(10), *published_credit_set(german)]
    if method == "exact":
        release = diva_exact(german, reqs, seed=0)
    else:
        release = diva(german, reqs, next_node=method, seed=0)
    assert release.status == Status.FEASIBLE
    _passes(german, release, reqs)


def test_german_personal_status_as_published_is_infeasible_when_protected():
    """personal_status is released unchanged (protected), so 310 records show the female
    value and Sex(Female) [298, 298] mapped onto it can never hold."""
    inst = fa.load("german")
    female = fa.DiversityConstraint({"personal_status": "female div/sep/married"}, 298, 298)
    release = diva(inst, [fa.KAnonymity(10), female], seed=0)
    assert release.status == Status.INFEASIBLE
    assert "released unchanged" in release.reason and "exactly 310" in release.reason
    with pytest.raises(fa.InfeasibleError):
        release.released_table()


def test_mondrian_for_the_rest(german):
    reqs = [fa.KAnonymity(10), *proportional(german, "job", 0.5)]
    release = diva(german, reqs, anonymize="mondrian", seed=0)
    assert release.provenance["rest_anonymizer"] == "mondrian"
    _passes(german, release, reqs)


# ------------------------------------------------------------------ infeasible Σ
@pytest.mark.parametrize(
    "sigma, words",
    [
        ([fa.DiversityConstraint({"ETH": "Asian"}, 4, 5)], ["ETH[Asian]", "only 3 records"]),
        ([fa.DiversityConstraint({"ETH": "African"}, 1, 1), fa.DiversityConstraint({"ETH": "Asian"}, 2, 5)],
         ["2-anonymity and DiversityConstraint(ETH[African], 1, 1) together", "No release by suppression"]),
        ([fa.DiversityConstraint({"ETH": "Asian"}, 0, 1),
          fa.DiversityConstraint({"ETH": "Asian", "CTY": "Vancouver"}, 2, 2)],
         ["ETH[Asian], 0, 1", "ETH,CTY[Asian,Vancouver]", "conflict"]),
        ([fa.DiversityConstraint({"DIAG": "Seizure"}, 3, 5)], ["DIAG[Seizure]", "exactly 2"]),
    ],
)
def test_infeasible_constraints_are_named(table1, sigma, words):
    for method in ("maxfanout", "basic"):
        release = diva(table1, [fa.KAnonymity(2), *sigma], next_node=method, seed=0)
        assert release.status == Status.INFEASIBLE
        for w in words:
            assert w in release.reason, release.reason


def test_conflict_found_only_by_search_names_a_minimal_set(table1):
    """t1, t2, t3 are the only AB records: all three visible on PRV needs t3 in a class
    with t1 or t2, which then shows no gender, so five visible women is impossible."""
    female = fa.DiversityConstraint({"GEN": "Female"}, 5, 5)
    alberta = fa.DiversityConstraint({"PRV": "AB"}, 3, 3)
    asian = fa.DiversityConstraint({"ETH": "Asian"}, 2, 5)
    release = diva(table1, [fa.KAnonymity(2), asian, female, alberta], seed=0)
    assert release.status == Status.INFEASIBLE
    assert release.reason == (
        "No release by suppression satisfies 2-anonymity, DiversityConstraint(GEN[Female], 5, 5) and "
        "DiversityConstraint(PRV[AB], 3, 3) together (a minimal conflicting set)."
    )
    assert release.provenance["search"]["existence"]["status"] == "INFEASIBLE"


def test_protected_value_with_fewer_than_k_records(table1):
    df = pd.DataFrame({"age": [20, 21, 22, 23, 24], "race": ["a", "a", "a", "a", "b"]})
    inst = fa.Instance(df, fa.Schema([fa.Attribute("age", kind="numeric"),
                                      fa.Attribute("race", role="protected", protected=["b"])]))
    release = diva(inst, [fa.KAnonymity(2), fa.DiversityConstraint({"age": "20"}, 0, 1)])
    assert release.status == Status.INFEASIBLE and "race='b'" in release.reason


def test_left_over_records_that_fit_nowhere(table1):
    """k = 3: all Caucasians and all Asians visible leaves t5, t6, which can join neither."""
    reqs = [fa.KAnonymity(3), fa.DiversityConstraint({"ETH": "Caucasian"}, 5, 5),
            fa.DiversityConstraint({"ETH": "Asian"}, 3, 3)]
    release = diva(table1, reqs, seed=0)
    assert release.status == Status.INFEASIBLE
    assert "ETH[Caucasian]" in release.reason and "ETH[Asian]" in release.reason


def test_without_fallback_the_coloring_reports_itself(table1):
    """The coloring alone proves nothing: its candidates are capped."""
    reqs = [fa.KAnonymity(2), fa.DiversityConstraint({"GEN": "Female"}, 5, 5),
            fa.DiversityConstraint({"PRV": "AB"}, 3, 3)]
    release = diva(table1, reqs, fallback=False)
    assert release.status == Status.UNKNOWN and "exhausted its candidate clusterings" in release.reason


# ------------------------------------------------------------------ bad input
def test_bad_inputs(table1, example):
    with pytest.raises(InvalidParameterError, match="'next_node' parameter of diva"):
        diva(table1, example, next_node="fewest")
    with pytest.raises(InvalidParameterError, match=r"permutation of 0..2"):
        diva(table1, example, next_node=(0, 1))
    with pytest.raises(InvalidParameterError, match="'value_order' parameter of diva"):
        diva(table1, example, value_order="best")
    with pytest.raises(InvalidParameterError, match="'anonymize' parameter of diva"):
        diva(table1, example, anonymize="oka")
    with pytest.raises(InvalidParameterError, match="'max_tries' parameter of diva"):
        diva(table1, example, max_tries=0)
    with pytest.raises(IncompatibleRequirementError, match="cannot enforce 2-diversity"):
        diva(table1, [fa.KAnonymity(2), fa.LDiversity(2)])
    with pytest.raises(InvalidParameterError, match="'constraint' parameter of clusterings"):
        clusterings(table1, example, 3)


def test_through_the_front_door(table1, example):
    for method in ("diva", "diva-exact"):
        release = fa.anonymize(table1, example, method=method, seed=0)
        assert release.method == method
        _passes(table1, release, example)
    release = fa.anonymize(table1, example, method="diva", seed=0, next_node="minchoice")
    assert release.provenance["params"]["next_node"] == "minchoice"


# ------------------------------------------------------------------ properties
@st.composite
def small_problems(draw):
    """A table of 2..8 records (two categorical QIs, a numeric one, sometimes a
    protected attribute, a sensitive one), k and 1..3 diversity constraints."""
    n = draw(st.integers(2, 8))
    cols = {
        "a": draw(st.lists(st.sampled_from(["x", "y"]), min_size=n, max_size=n)),
        "b": draw(st.lists(st.sampled_from(["p", "q", "r"]), min_size=n, max_size=n)),
        "c": draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)),
        "s": draw(st.lists(st.sampled_from(["flu", "hiv"]), min_size=n, max_size=n)),
    }
    attrs = [fa.Attribute("a"), fa.Attribute("b"), fa.Attribute("c", kind="numeric"),
             fa.Attribute("s", role="sensitive")]
    shapes = [("a",), ("b",), ("c",), ("a", "b"), ("a", "s")]
    if draw(st.booleans()):
        cols["g"] = draw(st.lists(st.sampled_from(["m", "f"]), min_size=n, max_size=n))
        attrs.append(fa.Attribute("g", role="protected", protected=[cols["g"][0]]))
        shapes.append(("a", "g"))
    inst = fa.Instance(pd.DataFrame(cols), fa.Schema(attrs))
    k = draw(st.integers(1, 3).filter(lambda k: k <= n))
    sigma, seen = [], set()
    for _ in range(draw(st.integers(1, 3))):
        shape = draw(st.sampled_from(shapes))
        row = draw(st.integers(0, n - 1))
        target = {a: str(cols[a][row]) for a in shape}  # a target some record has
        if tuple(target.items()) in seen:
            continue
        seen.add(tuple(target.items()))
        count = sum(all(str(cols[a][i]) == v for a, v in target.items()) for i in range(n))
        lower = draw(st.integers(0, count))
        sigma.append(fa.DiversityConstraint(target, lower, draw(st.integers(lower, n))))
    return inst, [fa.KAnonymity(k), *sigma]


@PROPERTY
@given(small_problems(), st.sampled_from(STRATEGIES))
def test_releases_pass_the_verifier_and_infeasible_means_infeasible(problem, strategy):
    inst, reqs = problem
    release = diva(inst, reqs, next_node=strategy, seed=0)
    event(str(release.status))
    if release.status in (Status.FEASIBLE, Status.OPTIMAL):
        _passes(inst, release, reqs)
    else:
        assert release.status == Status.INFEASIBLE and release.reason
        # The exact choice over every class of k..2k-1 records agrees (and is checked
        # against brute force in tests/solver/test_diva_model.py).
        exact = diva_exact(inst, reqs, seed=0)
        assert exact.status == Status.INFEASIBLE, exact.reason


# ------------------------------------------------------------------ always an answer
def test_conflict_names_every_member_k_included(table1):
    """Exactly one African visible needs a class of one record: k is part of the conflict."""
    african = fa.DiversityConstraint({"ETH": "African"}, 1, 1)
    release = diva(table1, [fa.KAnonymity(2), african], seed=0)
    assert release.status == Status.INFEASIBLE
    assert release.reason == (
        "No release by suppression satisfies 2-anonymity and DiversityConstraint(ETH[African], 1, 1) together "
        "(a minimal conflicting set).")
    assert diva(table1, [fa.KAnonymity(1), african], seed=0).status == Status.FEASIBLE


def test_conflict_without_k_says_so(table1):
    """Every Asian visible on ETH, yet no Asian with a migraine visible on ETH: the
    constraints conflict whatever k (DIAG is released unchanged, so only ETH can hide)."""
    everyone = fa.DiversityConstraint({"ETH": "Asian"}, 3, 3)
    migraine = fa.DiversityConstraint({"ETH": "Asian", "DIAG": "Migraine"}, 0, 0)
    release = diva(table1, [fa.KAnonymity(2), everyone, migraine], seed=0)
    assert release.status == Status.INFEASIBLE
    assert release.reason == (
        "No release by suppression satisfies DiversityConstraint(ETH[Asian], 3, 3) and "
        "DiversityConstraint(ETH,DIAG[Asian,Migraine], 0, 0) together, whatever k (a minimal conflicting set).")


def test_coloring_failure_is_repaired(table1, example, monkeypatch):
    """A coloring that gives up is completed over the signatures of the records: the
    release is FEASIBLE, says it was repaired, and passes the verifier."""
    import fairanon.methods.diva as method
    from fairanon.heuristics.diva.coloring import DiverseClustering

    monkeypatch.setattr(method, "run_coloring", lambda *a, **k: DiverseClustering(clusters=[], found=False,
                                                                                   gave_up=True))
    release = diva(table1, example, seed=0)
    assert release.status == Status.FEASIBLE and release.provenance["repaired"].startswith("signatures")
    _passes(table1, release, example)
    assert [row["holds"] for row in release.provenance["diversity_counts"]] == [True, True, True]


def _best_effort_case(monkeypatch):
    """The running example with the conflict only a search finds (five women and three
    AB records visible): with the coloring failing and the exact model unavailable,
    nothing proves it, and the run ends with its best release."""
    import fairanon.methods.diva as method
    from fairanon.heuristics.diva.coloring import DiverseClustering

    monkeypatch.setattr(method, "run_coloring", lambda *a, **k: DiverseClustering(clusters=[], found=False,
                                                                                   gave_up=True))
    monkeypatch.setattr(method, "SIGNATURE_OPTIONS_CAP", 0)
    sigma = [fa.DiversityConstraint({"GEN": "Female"}, 5, 5), fa.DiversityConstraint({"PRV": "AB"}, 3, 3)]
    return fa.load("diva_table1"), [fa.KAnonymity(2), *sigma]


def test_best_effort_release_says_what_it_misses(monkeypatch):
    inst, reqs = _best_effort_case(monkeypatch)
    release = diva(inst, reqs, seed=0)
    assert release.status == Status.UNKNOWN
    rows = release.provenance["diversity_counts"]
    assert [row["constraint"] for row in rows] == [repr(r) for r in reqs[1:]]
    missed = [row for row in rows if not row["holds"]]
    assert missed and all(not row["lower"] <= row["count"] <= row["upper"] for row in missed)
    for row in missed:
        assert f"{row['constraint']}: {row['count']} visible, bounds [{row['lower']}, {row['upper']}]" in release.reason
    report = fa.verify(inst, release, reqs)
    assert not report.passed
    assert [report[str(r)].achieved for r in reqs[1:]] == [row["count"] for row in rows]
    with pytest.raises(fa.InfeasibleError):
        release.released_table()
    monkeypatch.undo()
    assert diva(inst, reqs, seed=0).status == Status.INFEASIBLE  # with the exact model: proven


def test_cli_exits_1_with_the_table_of_a_best_effort_release(monkeypatch, tmp_path, capsys):
    from fairanon.cli import main

    _best_effort_case(monkeypatch)
    (tmp_path / "job.yaml").write_text(
        "instance: {dataset: diva_table1}\n"
        "requirements:\n  - k_anonymity: {k: 2}\n  - diversity: 'GEN(Female) [5, 5]'\n  - diversity: 'PRV(AB) [3, 3]'\n"
        "method: diva\nseed: 0\n")
    assert main(["anonymize", str(tmp_path / "job.yaml"), "--out", str(tmp_path / "out")]) == 1
    out = capsys.readouterr().out
    assert "best release found, not a solution; visible records per constraint:" in out
    assert "MISS   DiversityConstraint(" in out and "in [5, 5]" in out and "in [3, 3]" in out
    assert "PASSED" not in out


@pytest.mark.slow
@pytest.mark.parametrize("strength", ["moderate", "tight"])
def test_two_second_limit_on_50k_records(strength):
    """50,000 records, k = 20. Moderate constraints (14, at 90 % of every value of two
    attributes) are met: a FEASIBLE, verified release (with a limit that never binds, so
    the outcome does not depend on the machine's speed). Tight ones (38, at 96 % of every
    value of three attributes) are not settled in 2 s, nor in 60: the answer is UNKNOWN
    with the best release found, whose reported visible count per constraint is the
    verifier's, and whose misses are exactly the constraints the verifier fails."""
    from fairanon.instances.synthetic import population

    inst = population(50_000, n_qi=7, distribution="zipf", seed=0)
    if strength == "moderate":
        sigma = proportional(inst, "education", 0.9) + proportional(inst, "marital", 0.9)
    else:
        sigma = (proportional(inst, "education", 0.96) + proportional(inst, "marital", 0.96)
                 + proportional(inst, ["sex", "occupation"], 0.9))
    reqs = [fa.KAnonymity(20), *sigma]
    if strength == "moderate":
        release = diva(inst, reqs, seed=0, time_limit=600)
        assert release.status == Status.FEASIBLE
        _passes(inst, release, reqs)
        return
    release = diva(inst, reqs, seed=0, time_limit=2)
    assert release.status == Status.UNKNOWN and "time ran out" in release.reason
    report = fa.verify(inst, release, reqs)
    assert report[str(reqs[0])].passed  # k-anonymity holds on the best release
    rows = release.provenance["diversity_counts"]
    assert [row["count"] for row in rows] == [report[str(c)].achieved for c in sigma]
    assert [row["holds"] for row in rows] == [report[str(c)].passed for c in sigma]
    assert not all(row["holds"] for row in rows)


# ------------------------------------------------------------------ the parts, checked alone
@PROPERTY
@given(small_problems())
def test_backjumping_finds_what_chronological_backtracking_finds(problem):
    """With a fixed node order the candidates depend only on the choices made, so
    conflict-directed backjumping must find a coloring exactly when plain chronological
    backtracking does (a culprit set that leaves out a real cause skips solutions)."""
    from fairanon.heuristics.diva import coloring

    inst, reqs = problem
    n = len([r for r in reqs if isinstance(r, fa.DiversityConstraint)])
    order = list(range(n))
    found = diverse_clustering(inst, reqs, next_node=order, max_tries=10**6)

    def chronological(self, v, inherited):
        self.jump_to = self.order[-1] if self.order else None
        self.culprits_of_jump = set(self.order[:-1])

    with pytest.MonkeyPatch.context() as m:
        m.setattr(coloring._Search, "_set_jump", chronological)
        plain = diverse_clustering(inst, reqs, next_node=order, max_tries=10**6)
    assert found.found == plain.found


@PROPERTY
@given(small_problems())
def test_signature_parts_release_what_the_signatures_count(problem):
    """Records of one signature clustered among themselves show at least the
    signature's attributes; the counts the signatures plan are reached."""
    from fairanon.heuristics.diva.clusterings import sorted_blocks
    from fairanon.heuristics.diva.problem import Problem
    from fairanon.heuristics.diva.signatures import Signatures, descend, signature_parts
    from fairanon.models.diversity import encode_constraints, visible_rows

    inst, reqs = problem
    k = reqs[0].k
    encoded = [e for e in encode_constraints(inst, reqs) if not e.fixed]
    d = Problem(inst, encoded, k)
    sg = Signatures(d)
    y = descend(sg)
    sizes = sg.sig_sizes(y)
    if ((sizes > 0) & (sizes < k)).any():
        return  # a protected value with fewer than k records (the precheck's case)
    shown, empty, attrs = signature_parts(sg, y)
    clusters = sorted_blocks(d, shown + empty)
    assert sorted(np.concatenate(clusters).tolist()) == list(range(inst.n_rows))
    assert all(len(c) >= k and len(set(d.prot[c].tolist())) == 1 for c in clusters)
    groups = np.empty(inst.n_rows, dtype=np.int64)
    for g, c in enumerate(clusters):
        groups[c] = g
    planned = sg.counts(y)
    for i, e in enumerate(encoded):
        assert int(visible_rows(inst, e, groups).sum()) >= planned[i]


def test_the_release_is_not_built_past_the_time_limit(monkeypatch):
    """DIVA reads its deadline before each costly step of building a release (clustering
    a signature solution's records, Suppress and Anonymize) and stops there, UNKNOWN,
    saying so. It built the release whatever the time left: on UCI Adult under diversity
    constraints 0.065-0.07 s CPU at limits of 0.02-0.12 s, and as lns's only start, in a
    share of 0.017 s, it ran 0.09 s past it. On a fake clock with a limit of 10 s, where
    the coloring takes 12 s, Suppress 6 s and Integrate 1 s, the run ends at 12 s with no
    release (neither the coloring's nor the greedy signatures' is built; it ended at
    19 s, FEASIBLE); the blank release meets k. With a limit that does not bind, a
    verified FEASIBLE release."""
    import importlib
    import time
    import types

    module = importlib.import_module("fairanon.methods.diva")
    inst = fa.load("german", qi=["job", "savings", "housing"])
    reqs = [fa.KAnonymity(5), fa.DiversityConstraint({"housing": "own"}, 100, 1000)]
    base, ticks = time.perf_counter(), [0.0]

    def charged(real, seconds):
        def run(*args, **kwargs):
            out = real(*args, **kwargs)
            ticks[0] += seconds
            return out
        return run

    monkeypatch.setattr(module, "time", types.SimpleNamespace(perf_counter=lambda: base + ticks[0]))
    monkeypatch.setattr(module, "run_coloring", charged(module.run_coloring, 12.0))
    monkeypatch.setattr(module, "release_by_suppression", charged(module.release_by_suppression, 6.0))
    monkeypatch.setattr(module, "integrate", charged(module.integrate, 1.0))
    rel = diva(inst, reqs, seed=0, time_limit=10.0)
    assert ticks[0] == 12.0
    assert rel.status == Status.UNKNOWN and "the method's time limit (10.0 s) ran out before" in rel.reason
    assert fa.verify(inst, rel, reqs)[str(reqs[0])].passed
    # every generalizable cell *: no record shows housing = own, below the bound of 100
    assert "misses DiversityConstraint(housing[own], 100, 1000): 0 visible" in rel.reason
    monkeypatch.undo()
    free = diva(inst, reqs, seed=0, time_limit=600.0)
    assert free.status == Status.FEASIBLE
    _passes(inst, free, reqs)


@pytest.mark.parametrize("rest_seconds", [9.0, 8.5])
def test_suppress_finishes_after_the_rest_within_the_time_margin(monkeypatch, rest_seconds):
    """Suppress and Anonymize clusters the records outside the diverse clustering up to
    the deadline, then builds the table, the fallback pairs and Integrate when the time
    kept for building a release (FINISH_SECONDS and more) ends within time_margin. On a
    fake clock with a limit of 10 s (German credit: a margin of 1.01 s), where the
    coloring takes 2 s: a clustering of the rest of 9 s ends at 11 s, too late: no
    table is built after it, UNKNOWN, the coloring's finish saying the time ran out
    during that clustering, the blank release meeting k. A clustering of 8.5 s ends at
    10.5 s, within the margin less the 0.2 s kept: the table is built once, FEASIBLE,
    and it verifies. It stopped there too, UNKNOWN (on UCI Adult under three race
    constraints at 0.035 s, 14 runs of 24, FEASIBLE 0.01-0.02 s later when it went on)."""
    import importlib
    import time
    import types

    module = importlib.import_module("fairanon.methods.diva")
    rest = importlib.import_module("fairanon.heuristics.diva.rest")
    inst = fa.load("german", qi=["job", "savings", "housing"])
    reqs = [fa.KAnonymity(5), fa.DiversityConstraint({"housing": "own"}, 100, 1000)]
    base, ticks, tables = time.perf_counter(), [0.0], []

    def charged(real, seconds):
        def run(*args, **kwargs):
            out = real(*args, **kwargs)
            ticks[0] += seconds
            return out
        return run

    def generalize(*args, **kwargs):
        tables.append(ticks[0])
        return real_generalize(*args, **kwargs)

    real_generalize = rest.generalize_partition
    clock = types.SimpleNamespace(perf_counter=lambda: base + ticks[0])
    monkeypatch.setattr(module, "time", clock)
    monkeypatch.setattr(rest, "time", clock)
    monkeypatch.setattr(module, "run_coloring", charged(module.run_coloring, 2.0))
    monkeypatch.setattr(rest, "cluster_parts", charged(rest.cluster_parts, rest_seconds))
    monkeypatch.setattr(rest, "generalize_partition", generalize)
    rel = diva(inst, reqs, seed=0, time_limit=10.0)
    assert ticks[0] == 2.0 + rest_seconds
    if rest_seconds == 9.0:
        assert tables == []
        assert rel.status == Status.UNKNOWN and "the method's time limit (10.0 s) ran out" in rel.reason
        assert rel.provenance["search"]["coloring"]["finish"] == (
            "the method's time limit (10.0 s) ran out during the clustering of the records outside "
            "the diverse clustering")
        assert fa.verify(inst, rel, reqs)[str(reqs[0])].passed
    else:
        assert tables == [10.5]
        assert rel.status == Status.FEASIBLE and "finish" not in rel.provenance["search"]["coloring"]
        _passes(inst, rel, reqs)


def test_no_record_types_are_found_past_the_deadline(monkeypatch):
    """DIVA reads the deadline before finding the record types and their signatures
    (0.01 s on UCI Adult, which at a limit of 0.01 s it found after the problem's arrays
    had taken the limit, then built no release from them): on a fake clock where the
    problem's arrays take 12 s of a 10 s limit no types are found, and the release is
    every generalizable cell *, its reason saying the time ran out; the verifier finds
    k met and the constraint missed, as the reason says."""
    import importlib
    import time
    import types

    module = importlib.import_module("fairanon.methods.diva")
    inst = fa.load("german", qi=["job", "savings", "housing"])
    reqs = [fa.KAnonymity(5), fa.DiversityConstraint({"housing": "own"}, 100, 1000)]
    base, ticks, found = time.perf_counter(), [0.0], []
    real_problem, real_signatures = module.Problem, module.Signatures

    def problem(*args, **kwargs):
        out = real_problem(*args, **kwargs)
        ticks[0] += 12.0
        return out

    def signatures(*args, **kwargs):
        found.append(ticks[0])
        return real_signatures(*args, **kwargs)

    monkeypatch.setattr(module, "time", types.SimpleNamespace(perf_counter=lambda: base + ticks[0]))
    monkeypatch.setattr(module, "Problem", problem)
    monkeypatch.setattr(module, "Signatures", signatures)
    rel = diva(inst, reqs, seed=0, time_limit=10.0)
    assert found == []
    assert rel.status == Status.UNKNOWN
    assert rel.reason.startswith("The method's time limit (10.0 s) ran out before the record types were found")
    assert rel.provenance["time_limit_reached"] is True
    report = fa.verify(inst, rel, reqs)
    assert report[str(reqs[0])].passed and not report[str(reqs[1])].passed
    assert "misses DiversityConstraint(housing[own], 100, 1000): 0 visible" in rel.reason


def _diva_on_a_slow_clock(monkeypatch, seconds: float):
    """diva's clock, moved `seconds` by its coloring (past a limit of 10 s)."""
    import importlib
    import time
    import types

    module = importlib.import_module("fairanon.methods.diva")
    base, ticks = time.perf_counter(), [0.0]
    real = module.run_coloring

    def coloring(*args, **kwargs):
        out = real(*args, **kwargs)
        ticks[0] += seconds
        return out

    monkeypatch.setattr(module, "time", types.SimpleNamespace(perf_counter=lambda: base + ticks[0]))
    monkeypatch.setattr(module, "run_coloring", coloring)


@pytest.mark.parametrize("fallback", [True, False])
def test_every_cell_star_is_feasible_when_it_meets_every_requirement(monkeypatch, fallback):
    """When the time runs out before any release is built DIVA answers with every
    generalizable cell *, one class per protected value. That release meets k (the
    precheck asks k records of each protected value) and the constraints on the
    protected attribute, released unchanged; when the other constraints' counts hold
    too it meets every requirement, and it is FEASIBLE (it was UNKNOWN, its reason
    saying that no release satisfying every constraint was built; UCI Adult, k = 5,
    race Black in [2,000, 3,000] at 0.005 s). Its records are listed as suppressed (it
    listed none) and its objective is its stars, 1,000 records x 3 generalizable
    quasi-identifiers. On a fake clock where the coloring takes 12 s of a 10 s
    limit; the release verifies. With fallback=False (no repair; the coloring is found
    but its release not built) the same release was UNKNOWN, its reason saying the
    coloring could not be completed, with no diversity_counts, though README called
    it FEASIBLE when it meets every requirement; the failure is now in
    provenance["repaired"]."""
    from fairanon.models.metrics import suppressed_cells

    inst = fa.load("german", qi=["job", "savings", "housing"])
    reqs = [fa.KAnonymity(5),
            fa.DiversityConstraint({"personal_status": "female div/sep/married"}, 300, 320),  # 310
            fa.DiversityConstraint({"housing": "own"}, 0, 700)]
    _diva_on_a_slow_clock(monkeypatch, 12.0)
    rel = diva(inst, reqs, seed=0, time_limit=10.0, fallback=fallback)
    assert rel.status == Status.FEASIBLE and rel.reason is None
    _passes(inst, rel, reqs)
    assert (rel.table[["job", "savings", "housing"]].astype(str) == "*").all().all()
    assert rel.objective == 1000 * 3 == suppressed_cells(inst, rel)
    assert sorted(rel.suppressed) == sorted(inst.row_ids) and rel.summary()["n_suppressed"] == 1000
    assert rel.provenance["diversity_counts"] == [
        {"constraint": "DiversityConstraint(housing[own], 0, 700)", "count": 0, "lower": 0, "upper": 700,
         "holds": True}]
    assert rel.provenance["time_limit_reached"] is True
    assert "the method's time limit (10.0 s) ran out before" in rel.provenance["repaired"]


def test_a_coloring_out_of_time_gets_no_fallback_advice(monkeypatch):
    """With fallback=False, a coloring found but not finished before the limit passed
    was told "fallback=True repairs or decides", which would have had no time either:
    on a fake clock where the coloring takes 12 s of a 10 s limit the reason says that
    the method's time limit ran out, and gives no such advice. k-anonymity holds on
    the blank release."""
    inst = fa.load("german", qi=["job", "savings", "housing"])
    reqs = [fa.KAnonymity(5), fa.DiversityConstraint({"housing": "own"}, 100, 1000)]
    _diva_on_a_slow_clock(monkeypatch, 12.0)
    rel = diva(inst, reqs, seed=0, time_limit=10.0, fallback=False)
    assert rel.status == Status.UNKNOWN
    assert rel.provenance["search"]["coloring"]["found"]
    assert "the method's time limit (10.0 s) ran out before Suppress and Anonymize" in rel.reason
    assert "fallback=True" not in rel.reason
    assert fa.verify(inst, rel, reqs)[str(reqs[0])].passed


def test_a_coloring_not_started_says_the_time_ran_out(monkeypatch):
    """A constraint on the protected attribute, released unchanged, is settled by the
    precheck and leaves the coloring nothing to color; when the coloring then gave up
    its reason named an empty list ("without satisfying  (not a proof..."; UCI Adult,
    k = 5, race Black in [2,000, 3,000], fallback=False at 0.02 s), then k-anonymity
    ("gave up (budget or time limit) without satisfying 5-anonymity"), though the
    coloring was not started and the release passes the verifier. On a fake clock
    where the greedy signatures take 12 s of a 10 s limit the release (every
    generalizable cell *, one class per protected value, k records each by the
    precheck) is FEASIBLE, and says that the method's time limit ran out before the
    coloring."""
    import importlib
    import time
    import types

    module = importlib.import_module("fairanon.methods.diva")
    inst = fa.load("german", qi=["job", "savings", "housing"])
    reqs = [fa.KAnonymity(5),
            fa.DiversityConstraint({"personal_status": "female div/sep/married"}, 300, 320)]  # 310
    base, ticks = time.perf_counter(), [0.0]
    real = module.descend

    def descend(*args, **kwargs):
        out = real(*args, **kwargs)
        ticks[0] += 12.0
        return out

    monkeypatch.setattr(module, "time", types.SimpleNamespace(perf_counter=lambda: base + ticks[0]))
    monkeypatch.setattr(module, "descend", descend)
    rel = diva(inst, reqs, seed=0, time_limit=10.0, fallback=False)
    assert rel.status == Status.FEASIBLE and rel.reason is None
    assert rel.provenance["repaired"] == ("every generalizable cell *, which meets every requirement (the "
                                          "method's time limit (10.0 s) ran out before the coloring)")
    assert rel.provenance["time_limit_reached"] is True
    assert rel.provenance["diversity_counts"] == []  # personal_status is released unchanged
    _passes(inst, rel, reqs)
    # with a constraint to color that every cell * misses (no record shows housing = own)
    ticks[0] = 0.0
    reqs.append(fa.DiversityConstraint({"housing": "own"}, 100, 1000))
    rel = diva(inst, reqs, seed=0, time_limit=10.0, fallback=False)
    assert rel.status == Status.UNKNOWN and rel.reason == (
        "The method's time limit (10.0 s) ran out before the coloring (not a proof that no release exists); "
        "every generalizable cell * misses DiversityConstraint(housing[own], 100, 1000): 0 visible, bounds "
        "[100, 1000].")
    report = fa.verify(inst, rel, reqs)
    assert [r.passed for r in (report[str(q)] for q in reqs)] == [True, True, False]


def test_a_repair_undecided_without_a_time_limit_does_not_say_the_time_ran_out(monkeypatch):
    """Four records, all b = p and of the protected value f, k = 2, b[p] in [3, 3]:
    the classes showing b hold 0, 2 or 4 records (sizes of at least 2 summing to at
    most 4), never 3, so no release exists. With the exact existence model's options
    over the cap (SIGNATURE_OPTIONS_CAP = 0 stands in for a table whose options exceed
    the real one) the repair cannot prove it, and Integrate refuses the greedy
    signatures' release (4 visible, and starring a class of 2 leaves 2). Without a time
    limit the release said "The time ran out before a release satisfying every
    constraint was found" with provenance["time_limit_reached"] True; now it names the
    cap and Integrate's reason, and the flag is False. The release is every
    generalizable cell *, and the verifier fails b[p] (0 visible) as the reason says; its
    report gives that reason, and its legend no longer says the time ran out."""
    import importlib

    module = importlib.import_module("fairanon.methods.diva")
    monkeypatch.setattr(module, "SIGNATURE_OPTIONS_CAP", 0)
    inst = fa.Instance(pd.DataFrame({"a": list("xxyy"), "b": list("pppp"), "g": list("ffff")}),
                       fa.Schema([fa.Attribute("a"), fa.Attribute("b"),
                                  fa.Attribute("g", role="protected", protected=["f"])]))
    reqs = [fa.KAnonymity(2), fa.DiversityConstraint({"b": "p"}, 3, 3)]
    rel = diva(inst, reqs, seed=0)
    assert rel.status == Status.UNKNOWN
    assert "time ran out" not in rel.reason
    assert "SIGNATURE_OPTIONS_CAP (0)" in rel.reason
    assert "the greedy signatures' release could not be completed: the classes exceed the upper bound of " \
           "DiversityConstraint(b[p], 3, 3)" in rel.reason
    assert rel.reason.endswith("every generalizable cell * misses DiversityConstraint(b[p], 3, 3): 0 visible, "
                               "bounds [3, 3].")
    assert rel.provenance["time_limit_reached"] is False
    report = fa.verify(inst, rel, reqs)
    assert report[str(reqs[0])].passed and not report[str(reqs[1])].passed
    assert (rel.table[["a", "b"]].astype(str) == "*").all().all()
    assert report.reason == rel.reason and f"  reason: {rel.reason}" in str(report).splitlines()
    assert "in its time" not in str(report) and "time ran out" not in str(report)


@pytest.mark.parametrize("m", [1, 3, 9, 17])
def test_the_constraint_graph_counts_shared_targets(m):
    """Each edge's overlap is the number of records both constraints target, counted
    pair by pair on random memberships of 500 records (m constraints: one, two and three
    bytes of packed rows); no edge where they share none."""
    import types

    from fairanon.heuristics.diva.graph import encoded_graph

    rng = np.random.default_rng(m)
    targets = rng.random((500, m)) < rng.choice([0.0, 0.05, 0.5], size=m)
    encoded = [types.SimpleNamespace(requirement=i, n_targets=int(t.sum()), target=t)
               for i, t in enumerate(targets.T)]
    graph = encoded_graph(encoded)
    expected = {(i, j): int((targets[:, i] & targets[:, j]).sum())
                for i in range(m) for j in range(i + 1, m)}
    found = {(i, j): w for i, j, w in graph.edges(data="overlap")}
    assert found == {e: w for e, w in expected.items() if w}
    assert [graph.nodes[i]["targets"] for i in range(m)] == targets.sum(axis=0).tolist()


def test_the_constraint_graph_of_no_records_has_no_edges():
    """Constraints read on no records give a node each and no edge (the distinct rows of
    target memberships were read from a first row that is not there: IndexError)."""
    import types

    from fairanon.heuristics.diva.graph import encoded_graph

    encoded = [types.SimpleNamespace(requirement=i, n_targets=0, target=np.zeros(0, dtype=bool))
               for i in range(3)]
    graph = encoded_graph(encoded)
    assert sorted(graph.nodes(data="targets")) == [(0, 0), (1, 0), (2, 0)]
    assert graph.number_of_edges() == 0
