"""Bad input gets a clear error (a FairanonError naming the problem), never a raw
exception from deep inside nor a silently changed release."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fairanon as fa
from fairanon._validation import check_time_limit
from fairanon.exceptions import (
    IncompatibleRequirementError,
    InvalidParameterError,
    SchemaError,
)
from fairanon.release import Status
from fairanon.solver._cpsat import MAX_WORKERS, check_num_workers

A, S = fa.Attribute, fa.Schema


def _numeric(values):
    return fa.Instance(pd.DataFrame({"n": values, "s": list("xyxy")[: len(values)]}),
                       S([A("n", kind="numeric"), A("s", role="sensitive")]))


def test_whole_numbers_beyond_float64_are_refused_not_changed():
    """2**53 + 1 has no float64: it was released as 9007199254740992.0 and the release
    verified. 2**53 itself, negative numbers down to -2**53, and larger ones float64
    holds (10**19) are kept."""
    with pytest.raises(SchemaError, match="holds 9007199254740993, which float64"):
        _numeric([2**53 + 1, 3, 5, 7])
    with pytest.raises(SchemaError, match="which float64 does not hold exactly"):
        _numeric(np.array([2**63 + 5, 2, 3, 5], dtype=np.uint64))
    with pytest.raises(SchemaError, match="which float64 does not hold exactly"):
        _numeric(np.array([2**64 - 1, 2, 3, 5], dtype=np.uint64))
    _numeric(np.array([10**19, 3, 5, 7], dtype=np.uint64))  # float64 holds 10**19 exactly
    # Beside -1, whole numbers past int64 are read as float64: the cells as written say
    # whether that changed them.
    with pytest.raises(SchemaError, match="holds 10000000000000000001, which float64"):
        _numeric(["-1", "10000000000000000001", "3", "4"])
    with pytest.raises(SchemaError, match="holds 10000000000000000001, which float64"):
        _numeric(pd.Series([-1, 10**19 + 1, 3, 4], dtype=object))
    _numeric(["-1", "10000000000000000000", "3", "4"])
    _numeric(["1.5", "1e30", "3", "4"])  # written as decimals: read as such
    inst = _numeric([2**53, -(2**53), 5, 7])
    rel = fa.anonymize(inst, [fa.KAnonymity(1)], method="mondrian", seed=0)
    assert sorted(int(float(v)) for v in rel.table["n"]) == [-(2**53), 5, 7, 2**53]


@pytest.mark.parametrize("values, kind", [
    ([1 + 5j, 2, 3, 4], "complex numbers"),
    ([True, False, True, False], "truth values"),
    (pd.to_datetime(["2020-01-01", "2020-02-01", "2020-03-01", "2020-04-01"]), "dates"),
    (pd.to_timedelta([1, 2, 3, 4], unit="D"), "dates or durations"),
])
def test_numbers_of_another_kind_are_refused(values, kind):
    """Complex numbers lost their imaginary part, dates were released as nanoseconds
    and truth values crashed cpsat."""
    with pytest.raises(SchemaError, match=kind):
        _numeric(values)


def test_an_ordered_attribute_may_not_hold_the_star():
    """A kept '*' could not be told from a suppressed cell (the metrics counted it as
    one); categorical attributes already refused it."""
    with pytest.raises(SchemaError, match="reserved for suppression"):
        fa.Instance(pd.DataFrame({"a": ["*", "*", "c", "c"], "s": list("xyxy")}),
                    S([A("a", kind="ordered"), A("s", role="sensitive")]))


def test_an_order_is_a_list_of_distinct_values():
    with pytest.raises(SchemaError, match="lists \\['x'\\] more than once"):
        A("a", kind="ordered", order=["x", "y", "x"])
    with pytest.raises(SchemaError, match="order must be a list"):
        A("a", kind="ordered", order="low")  # was read as the order l, o, w
    with pytest.raises(SchemaError, match="protected must be a list"):
        A("a", role="protected", protected=5)


@pytest.mark.parametrize("attributes", [5, ["age"]])
def test_a_schema_takes_attributes(attributes):
    with pytest.raises(SchemaError, match="list of Attribute"):
        S(attributes)


@pytest.mark.parametrize("spec", [{"widths": (float("nan"),)}, {"widths": (5, float("inf"))},
                                  {"widths": (5,), "origin": float("inf")},
                                  {"widths": ("x",)}])
def test_interval_widths_and_origin_are_finite_numbers(spec):
    with pytest.raises(SchemaError, match="Interval|intervals"):
        fa.IntervalHierarchy(**spec)


def test_a_diversity_constraint_may_not_target_the_weights():
    inst = fa.Instance(pd.DataFrame({"a": list("abab"), "s": list("xyxy"), "w": [1, 2, 3, 4]}),
                       S([A("a"), A("s", role="sensitive"),
                          A("w", role="weight", kind="numeric")]))
    with pytest.raises(IncompatibleRequirementError, match="not a released attribute"):
        fa.anonymize(inst, [fa.KAnonymity(2), fa.DiversityConstraint({"w": "1"}, 0, 4)],
                     method="cpsat", seed=0)


@pytest.mark.parametrize("method", ["cpsat", "diva"])
def test_a_diversity_bound_beyond_the_records_is_no_bound(method):
    """An upper bound of 10**20 overflowed int64 (diva) and CP-SAT's constants: any count
    is at most the 4 records, so it is the constraint with the bound 4."""
    inst = fa.Instance(pd.DataFrame({"a": list("abab"), "s": list("xyxy")}),
                       S([A("a"), A("s", role="sensitive")]))
    reqs = [fa.KAnonymity(2), fa.DiversityConstraint({"a": "a"}, 0, 10**20)]
    rel = fa.anonymize(inst, reqs, method=method, seed=0, time_limit=10)
    assert rel.status in (Status.OPTIMAL, Status.FEASIBLE) and fa.verify(inst, rel, reqs).passed
    high = [fa.KAnonymity(2), fa.DiversityConstraint({"a": "a"}, 10**20, 10**20)]
    assert fa.anonymize(inst, high, method=method, seed=0, time_limit=10).status == Status.INFEASIBLE


def test_an_alpha_protection_measure_is_a_name():
    with pytest.raises(InvalidParameterError, match="'measure' parameter of AlphaProtection"):
        fa.AlphaProtection(["RD"], 0.1)


def test_method_options_are_checked():
    inst = fa.load("diva_table1")
    with pytest.raises(InvalidParameterError, match="'seeds' parameter of oka"):
        fa.anonymize(inst, [fa.KAnonymity(2)], method="oka", seeds=5)
    for bad in ("x", float("nan"), []):
        with pytest.raises(InvalidParameterError, match="num_workers"):
            fa.anonymize(inst, [fa.KAnonymity(2)], method="diva", num_workers=bad)
    with pytest.raises(InvalidParameterError, match="trace"):
        fa.anonymize(inst, [fa.KAnonymity(2)], method="diva", trace="x")
    with pytest.raises(InvalidParameterError, match="32-bit"):
        check_num_workers(MAX_WORKERS + 1, "diva-exact")


def test_numpy_numbers_are_time_limits():
    assert check_time_limit(np.float32(2), "anonymize") == 2.0
    assert check_time_limit(np.int64(3), "anonymize") == 3.0
    with pytest.raises(InvalidParameterError):
        check_time_limit(np.bool_(True), "anonymize")


def test_mondrian_points_to_the_method_that_enforces_multiplicative_closeness():
    inst = fa.load("german")
    with pytest.raises(IncompatibleRequirementError, match="method='bucketization'"):
        fa.anonymize(inst, [fa.MultiplicativeTCloseness(2, attribute="credit")],
                     method="mondrian")


def test_a_portfolio_out_of_time_is_unknown_not_incompatible():
    """No candidate had time: the release is UNKNOWN and says so (it was raised as an
    IncompatibleRequirementError, as if no method could enforce 2-anonymity)."""
    from fairanon.methods.portfolio import portfolio

    rel = portfolio(fa.load("diva_table1"), [fa.KAnonymity(2)], seed=0, time_limit=1e-9)
    assert rel.status == Status.UNKNOWN and "time limit" in rel.reason
    assert all(t.get("skipped") == "no time left" for t in rel.provenance["portfolio"])


@pytest.mark.parametrize("size", [1, 1.5, 0])
def test_a_test_size_outside_the_open_interval_is_refused_with_that_interval(size):
    """1.5 was refused as outside (0, 1], then 1 as outside (0, 1)."""
    from fairanon._validation import check_fraction

    with pytest.raises(InvalidParameterError, match=r"must be in \(0, 1\)\. Got"):
        check_fraction(size, "test_size", "utility", low=0, high=1, low_open=True, high_open=True)


@pytest.mark.parametrize("method", ["fulldomain", "lattice-local"])
def test_a_numeric_attribute_without_intervals_names_both_lattice_methods(method):
    """lattice-local said "fulldomain needs generalization levels", naming a method the
    user did not call; both methods now name themselves and the fix."""
    inst = fa.Instance(pd.DataFrame({"n": [1, 2, 3, 4], "s": list("xyxy")}),
                       S([A("n", kind="numeric"), A("s", role="sensitive")]))
    with pytest.raises(SchemaError, match=r"\(fulldomain, lattice-local\) needs levels for numeric "
                                          r"attribute 'n': give it intervals"):
        fa.anonymize(inst, [fa.KAnonymity(2)], method=method)
