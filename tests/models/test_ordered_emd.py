"""The ordered EMD over the values present or over the declared domain
(docs/papers.md, "Ordered EMD: the values present or the domain").

The example: an ordered attribute with order a < b < c < d < e, of which only a, b and e
occur, in the classes {a, b} and {e, a, b, e}.
"""

from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

import fairanon as fa
from fairanon.exceptions import IncompatibleRequirementError, InvalidParameterError
from fairanon.heuristics.sabre.buckets import bucketize_stages
from fairanon.heuristics.sabre.plan import _PlanBound
from fairanon.models import measures as M
from fairanon.models.requirements import requirement_from_spec
from fairanon.release import Release, generalize_partition

GRADE = fa.Attribute("grade", role="sensitive", kind="ordered", order=list("abcde"))


def _example():
    df = pd.DataFrame({"q": ["x", "x", "y", "y", "y", "y"], "grade": ["a", "b", "e", "a", "b", "e"]})
    inst = fa.Instance(df, fa.Schema([fa.Attribute("q"), GRADE]), name="grades")
    groups = np.array([0, 0, 1, 1, 1, 1])
    return inst, Release(generalize_partition(inst, groups), groups=groups)


def _ordered(domain: str) -> fa.TCloseness:
    return fa.TCloseness(F(1, 4), distance="ordered", ordered_domain=domain)


def test_the_example_by_hand():
    """Global counts a:2, b:2, e:2 (N = 6), so q = (1/3, 1/3, 1/3) on (a, b, e).

    Class {a, b}: p = (1/2, 1/2, 0), r = p - q = (1/6, 1/6, -1/3); the running sums
    of r are 1/6, 1/3, 0.
      present (a, b, e at 0, 1, 2; span 2): (1/6 + 1/3) / 2 = 1/4.
      declared (a, b, e at 0, 1, 4; span 4): the running sum 1/3 after b holds over the
        three steps b-c, c-d, d-e: (1/6 + 3 * 1/3) / 4 = (7/6) / 4 = 7/24.
    Class {e, a, b, e}: p = (1/4, 1/4, 1/2), r = (-1/12, -1/12, 1/6), running sums
    -1/12, -1/6, 0.
      present: (1/12 + 1/6) / 2 = 1/8;  declared: (1/12 + 3 * 1/6) / 4 = 7/48.
    The table's distance is the largest: 1/4 with the values present, 7/24 with the
    domain.
    """
    glob = [2, 2, 2]
    present = M.EMDGround.ordered(3)
    declared = M.emd_ground("ordered", ["a", "b", "e"], GRADE, "declared")
    assert declared.positions == (0, 1, 4) and declared.scale == 4
    assert M.emd_exact([1, 1, 0], glob, present) == F(1, 4)
    assert M.emd_exact([1, 1, 0], glob, declared) == F(7, 24)
    assert M.emd_exact([1, 1, 2], glob, present) == F(1, 8)
    assert M.emd_exact([1, 1, 2], glob, declared) == F(7, 48)
    floats = M.emd(np.array([[1, 1, 0], [1, 1, 2]]), np.array(glob), declared)
    assert floats.tolist() == pytest.approx([7 / 24, 7 / 48])
    # An independent computation: the transportation LP over the five domain values.
    five = M.EMDGround.ordered(5).matrix()
    assert M.emd_transport([1 / 2, 1 / 2, 0, 0, 0], [1 / 3, 1 / 3, 0, 0, 1 / 3], five) == pytest.approx(7 / 24)
    assert M.emd_transport([1 / 2, 1 / 2, 0], [1 / 3] * 3, present.matrix()) == pytest.approx(1 / 4)
    assert M.emd_transport([1 / 2, 1 / 2, 0], [1 / 3] * 3, declared.matrix()) == pytest.approx(7 / 24)


def test_the_verifier_reads_the_chosen_domain():
    inst, release = _example()
    present = fa.verify(inst, release, [_ordered("present")])
    declared = fa.verify(inst, release, [_ordered("declared")])
    assert present.passed and present.checks[-1].achieved == F(1, 4)
    assert not declared.passed and declared.checks[-1].achieved == F(7, 24)
    assert declared.checks[-1].name == "0.25-closeness (ordered EMD over the declared domain)"
    assert fa.verify(inst, release, [fa.TCloseness(F(7, 24), distance="ordered", ordered_domain="declared")]).passed


def test_the_default_is_the_values_present():
    assert fa.TCloseness("0.2", distance="ordered") == fa.TCloseness("0.2", distance="ordered", ordered_domain="present")
    assert str(fa.TCloseness("0.2", distance="ordered")) == "0.2-closeness (ordered EMD)"


def test_declared_domain_needs_an_order():
    with pytest.raises(InvalidParameterError, match="applies only to distance='ordered'"):
        fa.TCloseness("0.2", ordered_domain="declared")
    with pytest.raises(InvalidParameterError, match="'ordered_domain' parameter"):
        fa.TCloseness("0.2", distance="ordered", ordered_domain="domain")
    df = pd.DataFrame({"q": ["x", "y"] * 3, "income": [1, 2, 3, 4, 5, 6]})
    inst = fa.Instance(df, fa.Schema([fa.Attribute("q"), fa.Attribute("income", role="sensitive", kind="numeric")]))
    with pytest.raises(IncompatibleRequirementError, match="ordered_domain='present'"):
        fa.anonymize(inst, [fa.KAnonymity(2), _ordered("declared")], method="mondrian")


def test_job_file_form_round_trips():
    req = requirement_from_spec({"t_closeness": {"t": "0.25", "distance": "ordered", "ordered_domain": "declared"}})
    assert req == _ordered("declared")
    assert requirement_from_spec(req.to_spec()) == req


def _grades(n=60, seed=0):
    """Age and zip as quasi-identifiers; grades a, b, e of the order a-e, with e more
    frequent among older people."""
    rng = np.random.default_rng(seed)
    age = rng.integers(20, 36, n)
    grade = rng.choice(list("abe"), n, p=[0.4, 0.3, 0.3])
    grade = np.where((age > 30) & (rng.random(n) < 0.7), "e", grade)
    df = pd.DataFrame({"age": age, "zip": rng.choice(["z1", "z2", "z3"], n), "grade": grade})
    schema = fa.Schema([fa.Attribute("age", kind="numeric", intervals=fa.IntervalHierarchy((4, 8, 16))),
                        fa.Attribute("zip"), GRADE])
    return fa.Instance(df, schema, name="grades")


@pytest.mark.parametrize(
    "method", ["mondrian", "mondrian-loss", "mondrian-relaxed", "sabre", "fulldomain", "lattice-local", "portfolio"]
)
def test_methods_enforce_the_declared_reading(method):
    """Each method's release under the declared reading passes the verifier's check of
    the same requirement."""
    inst = _grades()
    reqs = [fa.KAnonymity(3), fa.TCloseness(F(3, 20), distance="ordered", ordered_domain="declared")]
    release = fa.anonymize(inst, reqs, method=method, seed=0, time_limit=5)
    assert release.status in (fa.Status.FEASIBLE, fa.Status.OPTIMAL), release.reason
    report = fa.verify(inst, release, reqs)
    assert report.passed, report


@pytest.mark.slow
@pytest.mark.parametrize("method", ["cpsat", "lns"])
def test_search_methods_enforce_the_declared_reading(method):
    inst = _grades()
    reqs = [fa.KAnonymity(3), fa.TCloseness(F(3, 20), distance="ordered", ordered_domain="declared")]
    release = fa.anonymize(inst, reqs, method=method, seed=0, time_limit=3, num_workers=1)
    assert release.status in (fa.Status.FEASIBLE, fa.Status.OPTIMAL), release.reason
    assert fa.verify(inst, release, reqs).passed


def test_the_reading_changes_what_a_method_enforces():
    """Mondrian with the values present stops at a partition whose declared distance is
    above t; with the declared domain it does not."""
    inst = _grades()
    t = F(3, 20)
    present = fa.anonymize(inst, [fa.KAnonymity(3), fa.TCloseness(t, distance="ordered")], method="mondrian")
    declared_req = fa.TCloseness(t, distance="ordered", ordered_domain="declared")
    assert fa.verify(inst, present, [fa.TCloseness(t, distance="ordered")]).passed
    assert not fa.verify(inst, present, [declared_req]).passed
    declared = fa.anonymize(inst, [fa.KAnonymity(3), declared_req], method="mondrian")
    assert fa.verify(inst, declared, [declared_req]).passed


def test_sabre_bound_is_sound_with_gaps():
    """Sabre's plan bound stays above the exact EMD of every class a plan admits when
    the values sit at gapped positions (independent check: the class that piles each
    bucket's share on its worst value)."""
    counts = np.array([3, 1, 4, 2, 5])
    positions, span = [0, 2, 3, 7, 9], 9
    ground = M.EMDGround.ordered(5, positions, span + 1)
    rng = np.random.default_rng(1)
    for bucketing in bucketize_stages(counts, "ordered", F(1, 2), positions=positions, span=span):
        bound = _PlanBound(bucketing, ground)
        for _ in range(20):
            plan = np.array([int(rng.integers(0, s + 1)) for s in bucketing.sizes])
            if plan.sum() == 0:
                continue
            limit = bound.exact(plan)
            for corner in range(2 ** bucketing.n_buckets):
                row = np.zeros(5, dtype=int)
                for b, vals in enumerate(bucketing.buckets):
                    row[vals[-1] if corner >> b & 1 else vals[0]] += plan[b]
                assert M.emd_exact(row, counts, ground) <= limit
