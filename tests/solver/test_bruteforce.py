"""The exact models against brute force on tiny random tables: every partition into
classes and every label choice (local recoding and suppression), every lattice node
(full-domain), for each objective and each requirement type."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from _exact_oracle import fulldomain_optimum, partition_optimum
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import fairanon as fa
from fairanon.methods.cpsat import cpsat
from fairanon.models.metrics import (
    discernibility,
    generalized_cells,
    loss_metric,
    ncp,
    suppressed_cells,
)
from fairanon.release import Status
from fairanon.solver.fulldomain import fulldomain
from fairanon.solver.local_recoding import OBJECTIVES

PROPERTY = settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(deadline=None, max_examples=150, suppress_health_check=[HealthCheck.too_slow])

_TREE = fa.Hierarchy.from_mapping({"*": {"X": ["a", "b"], "Y": ["c"]}})
_DISEASE = fa.Hierarchy.from_mapping({"*": {"R": ["flu", "cold"], "D": ["ulcer"]}})
KINDS = {
    "tree": (["a", "b", "c"], lambda name: fa.Attribute(name, hierarchy=_TREE)),
    "flat": (["p", "q"], lambda name: fa.Attribute(name)),
    "ordered": (
        ["lo", "mid", "hi"],
        lambda name: fa.Attribute(name, kind="ordered", order=["lo", "mid", "hi"]),
    ),
    "numeric": (
        [1, 2, 4],
        lambda name: fa.Attribute(name, kind="numeric", intervals=fa.IntervalHierarchy((2,))),
    ),
}


@st.composite
def tables(draw, min_rows=4, max_rows=7, protected=None):
    """A tiny instance: two generalizable QIs, a sensitive disease (ordered, with a
    hierarchy), a binary decision and (when `protected`, default: drawn) a protected sex."""
    n = draw(st.integers(min_rows, max_rows))
    kinds = draw(st.lists(st.sampled_from(sorted(KINDS)), min_size=2, max_size=2))
    data = {}
    attrs = []
    for i, kind in enumerate(kinds):
        values, make = KINDS[kind]
        name = f"q{i}"
        data[name] = draw(st.lists(st.sampled_from(values), min_size=n, max_size=n))
        attrs.append(make(name))
    if protected is None:
        protected = draw(st.booleans())
    if protected:
        data["sex"] = draw(st.lists(st.sampled_from(["f", "m"]), min_size=n, max_size=n))
        attrs.append(
            fa.Attribute(
                "sex", role="protected", protected=["f"], hierarchy=fa.Hierarchy.flat(["f", "m"])
            )
        )
    data["dis"] = draw(st.lists(st.sampled_from(["flu", "cold", "ulcer"]), min_size=n, max_size=n))
    data["dec"] = draw(st.lists(st.sampled_from(["-", "+"]), min_size=n, max_size=n))
    attrs += [
        fa.Attribute(
            "dis",
            role="sensitive",
            kind="ordered",
            order=["flu", "cold", "ulcer"],
            hierarchy=_DISEASE,
        ),
        fa.Attribute("dec", role="decision", kind="ordered", order=["-", "+"], negative="-"),
    ]
    return fa.Instance(pd.DataFrame(data), fa.Schema(attrs), name="tiny")


MONOTONE_FAMILIES = [
    lambda d: [fa.KAnonymity(d(st.integers(2, 3)))],
    lambda d: [fa.KAnonymity(2), fa.LDiversity(2)],
    lambda d: [
        fa.KAnonymity(2),
        fa.LDiversity(d(st.sampled_from([Fraction(3, 2), 2])), variant="entropy"),
    ],
    lambda d: [
        fa.KAnonymity(2),
        fa.LDiversity(2, variant="recursive", c=d(st.sampled_from([1, 2, 3]))),
    ],
    lambda d: [
        fa.KAnonymity(2),
        fa.TCloseness(
            d(st.sampled_from(["1/5", "1/3", "1/2"])),
            distance=d(st.sampled_from(["equal", "ordered", "hierarchical"])),
        ),
    ],
]

_ALPHA = {
    "RD": [0, "1/4", "1/2"],
    "ED": [0, "1/4"],
    "RR": [1, "3/2", 2],
    "ER": [1, "5/4", "3/2"],
    "OR": [1, 2, 3],
    "RC": ["1/2", "3/4", 1],
    "EC": ["1/2", "3/4", 1],
}


def _diversity(d, inst):
    name = d(st.sampled_from(["q0", "q1", "dis"]))
    value = d(st.sampled_from(sorted(inst.table[name].astype(str).unique())))
    count = int((inst.table[name].astype(str) == value).sum())
    lower = d(st.integers(0, count))
    upper = d(st.integers(lower, count))
    return fa.DiversityConstraint({name: value}, lower, upper)


def _alpha(d):
    measure = d(st.sampled_from(sorted(_ALPHA)))
    return fa.AlphaProtection(
        measure,
        d(st.sampled_from(_ALPHA[measure])),
        min_support=d(st.sampled_from([None, 2])),
        strict=d(st.booleans()),
    )


def _metric(objective, inst, rel):
    if objective == "stars":
        return suppressed_cells(inst, rel)
    if objective == "generalized":
        return generalized_cells(inst, rel)
    if objective == "discernibility":
        return discernibility(inst, rel)
    if objective == "ncp":
        return ncp(inst, rel, exact=True)["NCP"]
    return loss_metric(inst, rel, exact=True)["LM_sum"] * inst.n_rows


def _agree(inst, reqs, recoding, objective, expected):
    event(
        f"{type(reqs[-1]).__name__}, {recoding}: {'infeasible' if expected is None else 'feasible'}"
    )
    rel = cpsat(inst, reqs, recoding=recoding, objective=objective, seed=0, num_workers=1, hint=None)
    if expected is None:
        assert rel.status == Status.INFEASIBLE, (rel.status, rel.objective)
        assert rel.reason and rel.provenance["conflict"]
        return rel
    assert rel.status == Status.OPTIMAL, rel.reason
    assert rel.objective == expected, (rel.objective, expected)
    assert rel.bound == expected
    report = fa.verify(inst, rel, reqs)
    assert report.passed, str(report)
    assert _metric(objective, inst, rel) == rel.objective
    return rel


@PROPERTY
@given(data=st.data(), inst=tables(max_rows=8))
def test_monotone_requirements_match_brute_force(data, inst):
    reqs = data.draw(st.sampled_from(MONOTONE_FAMILIES))(data.draw)
    objective = data.draw(st.sampled_from([o for o in OBJECTIVES if o != "discernibility"]))
    recoding = data.draw(st.sampled_from(["generalization", "suppression"]))
    expected = partition_optimum(inst, reqs, recoding=recoding, objective=objective)
    _agree(inst, reqs, recoding, objective, expected)


@PROPERTY
@given(data=st.data(), inst=tables(max_rows=6))
def test_diversity_alpha_and_discernibility_match_brute_force(data, inst):
    families = ["diversity", "discernibility"] + (["alpha"] if inst.schema.protected else [])
    family = data.draw(st.sampled_from(families))
    if family == "diversity":
        reqs = [fa.KAnonymity(2), _diversity(data.draw, inst)]
    elif family == "alpha":
        reqs = [fa.KAnonymity(2), _alpha(data.draw)]
    else:
        reqs = data.draw(st.sampled_from(MONOTONE_FAMILIES[:2]))(data.draw)
    objective = (
        "discernibility" if family == "discernibility" else data.draw(st.sampled_from(OBJECTIVES))
    )
    recoding = data.draw(st.sampled_from(["generalization", "suppression"]))
    if recoding == "generalization" and inst.n_rows > 5:
        recoding = "suppression"  # keeps the brute force's label product small
    expected = partition_optimum(inst, reqs, recoding=recoding, objective=objective)
    _agree(inst, reqs, recoding, objective, expected)


RISK_FAMILIES = [
    lambda d: [fa.KAnonymity(2), fa.AverageRisk(d(st.sampled_from(["1/6", "1/4", "1/3"])))],
    lambda d: [fa.AverageRisk(d(st.sampled_from(["1/5", "1/3", "1/2", "2/3"])))],
    lambda d: [fa.SampleUniqueness(d(st.sampled_from([0, "1/6", "1/3"])))],
    lambda d: [fa.AverageRisk("1/2"), fa.SampleUniqueness(0)],
]


@settings(deadline=None, max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), inst=tables(max_rows=5))
def test_risk_requirements_match_brute_force(data, inst):
    """Average risk and sample uniques count the classes of the whole release, the
    suppressed block of each protected value one of them (docs/risk.md)."""
    reqs = data.draw(st.sampled_from(RISK_FAMILIES))(data.draw)
    objective = data.draw(st.sampled_from([o for o in OBJECTIVES if o != "discernibility"]))
    expected = partition_optimum(inst, reqs, recoding="suppression", objective=objective)
    _agree(inst, reqs, "suppression", objective, expected)


@PROPERTY
@given(data=st.data(), inst=tables(max_rows=8))
def test_fulldomain_matches_brute_force(data, inst):
    families = ["monotone", "diversity"] + (["alpha"] if inst.schema.protected else [])
    family = data.draw(st.sampled_from(families))
    if family == "monotone":
        reqs = data.draw(st.sampled_from(MONOTONE_FAMILIES))(data.draw)
    elif family == "diversity":
        reqs = [fa.KAnonymity(2), _diversity(data.draw, inst)]
    else:
        reqs = [fa.KAnonymity(2), _alpha(data.draw)]
    objective = data.draw(st.sampled_from(OBJECTIVES))
    max_suppressed = data.draw(st.sampled_from([0, 0, 2]))
    expected = fulldomain_optimum(inst, reqs, objective=objective, max_suppressed=max_suppressed)
    event(
        f"{family}, max_suppressed={max_suppressed}: "
        f"{'infeasible' if expected is None else 'feasible'}"
    )
    rel = fulldomain(inst, reqs, objective=objective, max_suppressed=max_suppressed, seed=0)
    if expected is None:
        assert rel.status == Status.INFEASIBLE, (rel.status, rel.objective)
        return
    assert rel.status == Status.OPTIMAL
    assert rel.objective == expected, (rel.objective, expected, rel.provenance["levels"])
    report = fa.verify(inst, rel, reqs)
    assert report.passed, str(report)
    if not rel.suppressed or objective == "discernibility":
        assert _metric(objective, inst, rel) == rel.objective


@pytest.mark.slow
@SLOW
@given(data=st.data(), inst=tables(max_rows=9))
def test_monotone_requirements_match_brute_force_more(data, inst):
    test_monotone_requirements_match_brute_force.hypothesis.inner_test(data, inst)


@pytest.mark.slow
@SLOW
@given(data=st.data(), inst=tables(max_rows=6))
def test_non_monotone_requirements_match_brute_force_more(data, inst):
    test_diversity_alpha_and_discernibility_match_brute_force.hypothesis.inner_test(data, inst)


@pytest.mark.slow
@SLOW
@given(data=st.data(), inst=tables(max_rows=9))
def test_fulldomain_matches_brute_force_more(data, inst):
    test_fulldomain_matches_brute_force.hypothesis.inner_test(data, inst)


def test_explicit_all_candidates_match_the_join_closure():
    """The full candidate set and the join closure give the same optimum (k, l, t)."""
    from fairanon.solver.local_recoding import build_model, encode, solve_model

    rng = np.random.default_rng(3)
    df = pd.DataFrame(
        {
            "q0": rng.choice(["a", "b", "c"], 9),
            "q1": rng.choice([1, 2, 4], 9),
            "dis": rng.choice(["flu", "cold", "ulcer"], 9),
        }
    )
    inst = fa.Instance(
        df,
        fa.Schema(
            [
                fa.Attribute("q0", hierarchy=_TREE),
                fa.Attribute("q1", kind="numeric"),
                fa.Attribute(
                    "dis",
                    role="sensitive",
                    kind="ordered",
                    order=["flu", "cold", "ulcer"],
                    hierarchy=_DISEASE,
                ),
            ]
        ),
    )
    reqs = [fa.KAnonymity(3), fa.TCloseness("1/2", distance="hierarchical")]
    values = []
    for closure in (True, False):
        enc = encode(inst, reqs)
        pm = build_model(enc, reqs, objective="lm", closure=closure)
        _, outcome, _ = solve_model(pm, num_workers=1)
        assert outcome.status == Status.OPTIMAL
        values.append(outcome.objective)
    assert values[0] == values[1]
    assert values[0] / pm.scale == partition_optimum(
        inst, reqs, recoding="generalization", objective="lm"
    )


def test_entropy_lazy_cuts_restore_exactness(monkeypatch):
    """With a deliberately coarse entropy table the relaxation admits non-diverse classes;
    the exact check cuts them off until the optimum is the true one."""
    import fairanon.solver.local_recoding.privacy as P

    rng = np.random.default_rng(7)
    df = pd.DataFrame(
        {
            "q0": rng.choice(["a", "b", "c"], 8),
            "q1": rng.choice([1, 2, 4], 8),
            "dis": ["flu", "flu", "flu", "cold", "cold", "ulcer", "flu", "cold"],
        }
    )
    inst = fa.Instance(
        df,
        fa.Schema(
            [
                fa.Attribute("q0", hierarchy=_TREE),
                fa.Attribute("q1", kind="numeric"),
                fa.Attribute(
                    "dis",
                    role="sensitive",
                    kind="ordered",
                    order=["flu", "cold", "ulcer"],
                    hierarchy=_DISEASE,
                ),
            ]
        ),
    )
    reqs = [fa.KAnonymity(2), fa.LDiversity(Fraction(5, 2), variant="entropy")]
    expected = partition_optimum(inst, reqs, recoding="generalization", objective="lm")
    monkeypatch.setattr(P, "_ENTROPY_SCALE", 1)
    rel = cpsat(inst, reqs, objective="lm", seed=0, num_workers=1, hint=None)
    assert rel.provenance["solver"]["lazy_cuts"] > 0
    assert rel.status == Status.OPTIMAL and rel.objective == expected
    assert fa.verify(inst, rel, reqs).passed


# An ordered attribute of three values with more than max_range_values=2 of them falls
# back on its hierarchy, whose depth-first leaf order (lo, hi, mid) is not the domain
# order: the exact model keeps each node as a run of values in leaf order.
_SHUFFLED = fa.Hierarchy.from_mapping({"*": {"E": ["lo", "hi"], "M": ["mid"]}})


@PROPERTY
@given(data=st.data(), n=st.integers(4, 7))
def test_a_hierarchy_out_of_domain_order_matches_brute_force(data, n):
    reqs = data.draw(st.sampled_from(MONOTONE_FAMILIES[:2]))(data.draw)
    objective = data.draw(st.sampled_from(["ncp", "lm", "generalized"]))
    draw = lambda values: data.draw(st.lists(st.sampled_from(values), min_size=n, max_size=n))  # noqa: E731
    inst = fa.Instance(
        pd.DataFrame({"q0": draw(["lo", "mid", "hi"]), "q1": draw(["a", "b", "c"]),
                      "dis": draw(["flu", "cold", "ulcer"]), "dec": draw(["-", "+"])}),
        fa.Schema([
            fa.Attribute("q0", kind="ordered", order=["lo", "mid", "hi"], hierarchy=_SHUFFLED),
            fa.Attribute("q1", hierarchy=_TREE),
            fa.Attribute("dis", role="sensitive", kind="ordered", order=["flu", "cold", "ulcer"],
                         hierarchy=_DISEASE),
            fa.Attribute("dec", role="decision", kind="ordered", order=["-", "+"], negative="-"),
        ]),
        name="tiny",
    )
    expected = partition_optimum(inst, reqs, recoding="generalization", objective=objective,
                                 max_range_values=2)
    rel = cpsat(inst, reqs, objective=objective, seed=0, num_workers=1, hint=None, max_range_values=2)
    if expected is None:
        assert rel.status == Status.INFEASIBLE
        return
    assert rel.status == Status.OPTIMAL and rel.objective == expected, (rel.objective, expected)
    assert fa.verify(inst, rel, reqs).passed
    assert _metric(objective, inst, rel) == rel.objective
