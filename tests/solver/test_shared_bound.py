"""The classes' shared cost added to the per-record bound (fairanon.models.bounds):
hand-computed values, never above the brute-force optimum or the LP over every class
solved directly, never below the sum of m(r), and what it adds when its time runs out."""

from fractions import Fraction
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from _exact_oracle import partition_optimum
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_bounds import _set_partitioning_lp
from test_bruteforce import MONOTONE_FAMILIES, tables

import fairanon as fa
from fairanon.models import bounds
from fairanon.models.bounds import SHARED_MARGIN, lower_bound
from fairanon.models.objectives import objective_value


def _numeric(values) -> fa.Instance:
    table = pd.DataFrame({"x": values})
    return fa.Instance(table, fa.Schema([fa.Attribute("x", kind="numeric")]))


def test_an_outlier_pays_for_the_classmates_it_widens():
    """Ten records at 0 and one at 9, k = 5, LM (a range over 0-9 costs 1 a cell). m(r):
    1 for the outlier (any class of 5 holding it spans 0-9), 0 for the others (ten alike
    form classes): 1 in all. The optimum puts the outlier with four zeros: 5 x 1 = 5.
    Shared cost: every box holding the outlier costs 1 and its 5 largest m are 1, 0, 0,
    0, 0, so s = 1 - 1/5 = 4/5; a zero's own value is a box of excess 0. Bound: 1 + 4/5,
    less the margin for the floats."""
    inst = _numeric([0] * 10 + [9])
    reqs = [fa.KAnonymity(5)]
    assert lower_bound(inst, reqs, "lm", shared=False).value == 1
    found = lower_bound(inst, reqs, "lm")
    assert found.value == Fraction(9, 5) - SHARED_MARGIN
    assert found.details["shared"]["raised"] == 1
    optimum = fa.anonymize(inst, reqs, method="cpsat", objective="lm", seed=0)
    assert fa.verify(inst, optimum, reqs).passed
    assert objective_value(inst, optimum, "lm") == 5 > found.value


def test_records_with_a_box_of_no_excess_add_nothing():
    """Values 0, 0, 0, 0, 5, 9 and k = 2, LM (ranges over 0-9): m = 4/9 for 5 and for 9
    (their pair; 0-5 costs 5/9), 0 for the zeros. The box 5-9 holds both at cost 4/9 with
    mean m 4/9: excess 0, so the shared cost adds nothing and the bound is 8/9, the
    optimum (the class {5, 9})."""
    inst = _numeric([0, 0, 0, 0, 5, 9])
    reqs = [fa.KAnonymity(2)]
    found = lower_bound(inst, reqs, "lm")
    assert found.value == Fraction(8, 9) and found.details["shared"]["raised"] == 0
    assert found.details["shared"]["no_excess"] == 2  # 5 and 9, left unsearched
    optimum = fa.anonymize(inst, reqs, method="cpsat", objective="lm", seed=0)
    assert fa.verify(inst, optimum, reqs).passed
    assert objective_value(inst, optimum, "lm") == Fraction(8, 9)


def test_the_search_starts_from_the_excess_of_the_box_of_m(monkeypatch):
    """The outlier of the first test: the box attaining its m(r) = 1 (0-9, all eleven
    records) has excess 1 - 1/5 = 4/5, so its search looks below 4/5 alone (from u(r) =
    1, the all-'*' cost, before) and, finding nothing, adds 4/5."""
    inst = _numeric([0] * 10 + [9])
    seen = []
    real = bounds._least_excess

    def spy(D, w, lam, k, sens, need_l, best0, *rest):
        seen.append(best0)
        return real(D, w, lam, k, sens, need_l, best0, *rest)

    monkeypatch.setattr(bounds, "_least_excess", spy)
    found = lower_bound(inst, [fa.KAnonymity(5)], "lm")
    assert seen == [0.8]
    assert found.value == 1 + Fraction(4, 5) - SHARED_MARGIN


SHARED = settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])


@SHARED
@given(data=st.data(), inst=tables(max_rows=8))
def test_the_shared_cost_keeps_the_bound_below_the_optimum(data, inst):
    """Random tiny tables and requirements (k, l-diversity, t-closeness families): the
    sum of m(r) <= the bound with the shared cost <= the brute-force optimum."""
    reqs = data.draw(st.sampled_from(MONOTONE_FAMILIES[:4]))(data.draw)
    objective = data.draw(st.sampled_from(["ncp", "lm"]))
    optimum = partition_optimum(inst, reqs, recoding="generalization", objective=objective)
    if optimum is None:
        return
    alone = lower_bound(inst, reqs, objective, shared=False).value
    found = lower_bound(inst, reqs, objective)
    event("raised" if found.value > alone else "not raised")
    assert alone <= found.value <= optimum, (alone, found, optimum)


@settings(SHARED, max_examples=25)
@given(data=st.data(), inst=tables(max_rows=7))
def test_the_shared_cost_stays_below_the_set_partitioning_lp(data, inst):
    """Under k alone the bound is a Lagrangian bound of set partitioning (module
    docstring), so it lies below that LP, solved directly over every class."""
    k = data.draw(st.integers(2, 3))
    objective = data.draw(st.sampled_from(["ncp", "lm"]))
    if partition_optimum(inst, [fa.KAnonymity(k)], recoding="generalization", objective=objective) is None:
        return
    found = lower_bound(inst, [fa.KAnonymity(k)], objective)
    assert float(found.value) <= _set_partitioning_lp(inst, k, objective) + 1e-9


def test_the_shared_cost_stops_at_the_deadline(monkeypatch):
    """The clock passes the deadline once m(r) is found for every record: the shared
    cost adds nothing and says that its types went unsearched."""
    inst = _numeric([0] * 10 + [9])
    reqs = [fa.KAnonymity(5)]
    real = bounds._shared

    def late(dims, types, k, need_l, deadline, processes):
        return real(dims, types, k, need_l, 0.0, processes)  # a deadline long past

    monkeypatch.setattr(bounds, "_shared", late)
    found = lower_bound(inst, reqs, "lm", time_limit=60)
    assert found.value == 1
    assert found.details["shared"]["unsearched"] == 1 and found.details["shared"]["raised"] == 0


def test_no_box_excess_is_worked_out_past_the_deadline(monkeypatch):
    """With the deadline gone once m(r) is found, the shared pass returns before working
    out any box's excess (on UCI Adult, 0.36 s CPU past the deadline when it did)."""
    inst = _numeric([0] * 10 + [9])
    real = bounds._shared

    def late(dims, types, k, need_l, deadline, processes):
        return real(dims, types, k, need_l, 0.0, processes)

    def no_excess(*args):
        raise AssertionError("a box's excess was worked out past the deadline")

    monkeypatch.setattr(bounds, "_shared", late)
    monkeypatch.setattr(bounds, "_top_k", no_excess)
    found = lower_bound(inst, [fa.KAnonymity(5)], "lm", time_limit=60)
    assert found.value == 1 and found.details["shared"]["unsearched"] == 1


class _Clock:
    """A clock that moves one second each time it is read."""

    def __init__(self):
        self.now, self.reads = 0.0, 0

    def perf_counter(self):
        self.reads += 1
        self.now += 1.0
        return self.now


def _long_search():
    """A record's shared-cost search over 3,000 candidates of 8 dimensions with small
    multipliers: it reaches its node cap (SHARED_NODES) without a box of excess 0."""

    rng = np.random.default_rng(1)
    D = rng.integers(0, 20, size=(3000, 8)) / 20.0
    D[0] = 0
    lam = rng.random(3000) * 0.05
    return D, np.ones(3000, dtype=np.int64), lam


def test_a_long_shared_search_reads_the_deadline(monkeypatch):
    """The search of one record reads the clock every SHARED_CLOCK nodes and stops once
    its deadline has passed, adding nothing ("unsearched"); the same search without a
    deadline runs to its node cap ("cut"). It read no clock before: one search over
    20,000 candidates took 3-6 s past a deadline."""
    D, w, lam = _long_search()
    assert bounds._least_excess(D, w, lam, 10, None, 1, 8.0) == (None, "cut")
    clock = _Clock()
    monkeypatch.setattr(bounds, "time", clock)
    assert bounds._least_excess(D, w, lam, 10, None, 1, 8.0, deadline=3.0) == (None, "unsearched")
    assert clock.reads == 3  # stopped at the third read, after 3 x SHARED_CLOCK nodes at most


@settings(SHARED, max_examples=40)
@given(data=st.data(), inst=tables(max_rows=8))
def test_the_reach_read_from_the_largest_m_keeps_the_bound(data, inst):
    """Each record's search reads the types within best0 plus L' (the largest m but the
    group's SHARED_HIGH largest, or the largest m of those among them close enough): the
    types its radius needs, as when it read those within best0 plus the group's largest
    m (SHARED_HIGH = 0), so the bound is the same, and below the brute-force optimum."""

    reqs = data.draw(st.sampled_from(MONOTONE_FAMILIES[:2]))(data.draw)
    objective = data.draw(st.sampled_from(["ncp", "lm"]))
    optimum = partition_optimum(inst, reqs, recoding="generalization", objective=objective)
    if optimum is None:
        return
    found = {}
    for high in (0, 1, 2):
        with mock.patch.object(bounds, "SHARED_HIGH", high):
            found[high] = lower_bound(inst, reqs, objective).value
    assert found[0] == found[1] == found[2] <= optimum, (found, optimum)


@settings(SHARED, max_examples=40)
@given(data=st.data(), inst=tables(max_rows=8))
def test_the_radius_read_from_the_k_largest_m_keeps_the_bound(data, inst):
    """A box of less excess than best0 lies within best0 plus the mean of the k largest
    m within it, so a search that narrows its radius to that (until it holds) reads
    every box the wider radius of the largest m held that could be less: the same
    bound, below the brute-force optimum."""
    reqs = data.draw(st.sampled_from(MONOTONE_FAMILIES[:2]))(data.draw)
    objective = data.draw(st.sampled_from(["ncp", "lm"]))
    optimum = partition_optimum(inst, reqs, recoding="generalization", objective=objective)
    if optimum is None:
        return
    narrowed = lower_bound(inst, reqs, objective).value
    with mock.patch.object(bounds, "_narrowed", lambda radius, *args: radius):
        wide = lower_bound(inst, reqs, objective).value
    assert narrowed == wide <= optimum, (narrowed, wide, optimum)


@pytest.mark.parametrize("k", [5, 10])
def test_the_narrowed_radius_keeps_the_bound_and_its_ascent_on_german_credit(k):
    """German credit (3 QIs, NCP): the shared cost and the ascent run to its end are
    the same with each search's radius narrowed as with the radius of the largest m."""
    inst = fa.load("german", qi=["personal_status", "job", "savings"],
                   roles={"personal_status": "qi"})
    reqs = [fa.KAnonymity(k)]
    for ascent in (False, True):
        narrowed = lower_bound(inst, reqs, "ncp", ascent=ascent, processes=1).value
        with mock.patch.object(bounds, "_narrowed", lambda radius, *args: radius):
            wide = lower_bound(inst, reqs, "ncp", ascent=ascent, processes=1).value
        assert narrowed == wide, (ascent, narrowed, wide)


def test_the_k_largest_multipliers_count_each_type_by_its_weight():
    """Types of weights 3, 1 and 2 hold the records 5, 5, 5, 4, 1, 1 (in lam)."""
    lam = np.array([4.0, 5.0, 1.0])
    weight = np.array([1, 3, 2])
    assert bounds._top_sum(lam, weight, 2) == 10.0
    assert bounds._top_sum(lam, weight, 4) == 19.0
    assert bounds._top_sum(lam, weight, 6) == 21.0
    assert bounds._top_sum(lam, weight, 9) == 21.0


@pytest.mark.parametrize("eager_bits", [bounds.EAGER_BITS, 0])
def test_a_threshold_holds_the_values_within_1e_15_above_it(monkeypatch, eager_bits):
    """Two candidates at D = 0.3 and at the next floats above it (within 1e-15), two
    needed: the box at 0.3 holds both (as a node's children read thresholds), so the
    threshold is the candidate at 0.3 itself (row 1), not the one above it -- with the
    sets made at once and made when first read (EAGER_BITS = 0)."""

    monkeypatch.setattr(bounds, "EAGER_BITS", eager_bits)

    above = 0.3 + 2e-16
    assert above != 0.3
    D = np.array([[above], [0.3]])
    picks, how = bounds._min_box(D, np.ones(2, dtype=np.int64), 2, None, np.arange(2), None, 1,
                                 10.0, D.sum(axis=1))
    assert (picks, how) == ([1], "solved")


def test_a_records_box_search_settles_for_the_quicker_bound_past_the_deadline():
    """m(r)'s box search reads the deadline every SHARED_CLOCK nodes: without one it
    finds the least box (solved); with a deadline already passed it stops at its first
    read and gives the quicker bound, at most the least box's cost (a bound holds either
    way). Its nodes' cost grows with a dimension's values, so the node cap alone did not
    keep the bound's time limit on attributes of thousands of values."""
    import time

    rng = np.random.default_rng(0)
    D = rng.random((60, 3))
    args = (D, np.ones(60, dtype=np.int64), 4, None, np.arange(60), None, 1, 10.0, D.sum(axis=1))
    picks, how = bounds._min_box(*args)
    assert how == "solved"
    least = sum(D[c, j] for j, c in enumerate(picks))
    quick, how = bounds._min_box(*args, deadline=time.perf_counter() - 1.0)
    assert how == "capped"
    assert sum(D[c, j] for j, c in enumerate(quick) if c >= 0) <= least + 1e-12


class _Reads:
    """A dimension's sets (a list or :class:`bounds._Sets`), counting their reads."""

    def __init__(self, sets):
        self.sets, self.reads = sets, 0

    def __getitem__(self, i):
        self.reads += 1
        return self.sets[i]


@given(data=st.data())
@settings(max_examples=60, deadline=None)
def test_the_bound_on_the_dimensions_after_a_node_is_the_least_enough_value(data):
    """_Boxes.rest gives, per dimension after the node's, the smallest value at or below
    which the alive candidates weigh `need`, and its place: checked against sorting the
    alive candidates' values by hand, on random D with ties and weights, stepping a place
    at a time first (REST_STEPS) or galloping at once."""

    n = data.draw(st.integers(2, 30))
    q = data.draw(st.integers(2, 4))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    D = rng.integers(0, data.draw(st.integers(1, 12)), size=(n, q)) / 4.0
    w = rng.integers(1, 4, size=n)
    alive = rng.random(n) < 0.7
    if not alive.any():
        alive[0] = True
    need = data.draw(st.integers(1, int(w[alive].sum())))
    at = bounds._Boxes(D, w)
    x = bounds._bitset(alive)
    depth = data.draw(st.integers(0, q - 2))
    with mock.patch.object(bounds, "REST_STEPS", data.draw(st.sampled_from([0, 1, 4]))):
        total, places = at.rest(x, depth, need, [0] * q)
    expected = 0.0
    for e in range(depth + 1, q):
        col = D[alive, at.dims[e]]
        order = np.argsort(col, kind="stable")
        least = col[order][np.searchsorted(np.cumsum(w[alive][order]), need)]
        assert at.values[e][places[e]] == least
        expected += least
    assert total == expected


def test_the_bound_on_the_dimensions_after_a_node_reads_few_sets_of_many_values():
    """On a dimension of 1,000 values whose bound is the 900th, rest reads a few dozen
    of its sets (galloping from the parent's place, then halving), not one per value:
    a search over 20,000 candidates of 16 dimensions of 1,000 values spent 19 s of 20
    stepping through them one at a time."""

    D = np.zeros((1000, 2))
    D[:, 1] = np.arange(1000)
    at = bounds._Boxes(D, np.ones(1000, dtype=np.int64))
    at.le[1] = reads = _Reads(at.le[1])
    total, places = at.rest(at.everything, 0, 900, [0, 0])
    assert (total, places[1]) == (899.0, 899)
    assert reads.reads <= 2 * 10 + 2


@given(data=st.data())
@settings(max_examples=40, deadline=None)
def test_children_read_from_the_candidates_are_those_the_sets_give(data):
    """A node's children read from its alive candidates' values (LIVE_VALUES = 0) are
    the values whose sets hold an alive candidate (LIVE_VALUES past every dimension's
    values): m(r)'s box search and the shared-cost search give the same boxes either
    way, on random D with ties, weights and a sensitive value under 2-diversity."""

    n = data.draw(st.integers(2, 40))
    q = data.draw(st.integers(1, 4))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    D = rng.integers(0, data.draw(st.integers(1, 30)), size=(n, q)) / 7.0
    D[0] = 0
    w = rng.integers(1, 3, size=n)
    sens = rng.integers(0, 3, size=n)
    lam = rng.random(n)
    need, need_l = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 2))
    found = {}
    for live in (0, 10**9):
        with mock.patch.object(bounds, "LIVE_VALUES", live):
            found[live] = (
                bounds._min_box(D, w, need, sens, np.arange(n), int(sens[0]), need_l, 10.0,
                                D.sum(axis=1)),
                bounds._least_excess(D, w, lam, need, sens, need_l, 5.0),
            )
    (box0, least0), (box1, least1) = found[0], found[10**9]
    assert box0 == box1
    assert least0[1] == least1[1]
    if least0[0] is not None:
        assert least0[0][0] == least1[0][0]
        assert least0[0][1].tolist() == least1[0][1].tolist()



def test_the_forked_half_sends_only_the_items_it_worked_before_the_deadline():
    """The forked half of _in_two, run here on a pipe: it sends the items it worked
    before the deadline and nothing for the others (it padded them with `missing`, whose
    pickling passed a deadline of 0.5 s by 0.1 s on the KDD census); _in_two puts a half's
    answer at that half's first places and `missing` after."""
    import multiprocessing
    import os
    import signal
    import time

    from fairanon.models.bounds import PAIRED_TYPES, _in_two, _work_out

    def work(x):
        time.sleep(0.0005)
        return x

    items = list(range(PAIRED_TYPES))
    ours, theirs = multiprocessing.Pipe(duplex=False)
    unused, _ = multiprocessing.Pipe(duplex=False)  # the parent's end, which it closes
    handler = signal.getsignal(signal.SIGINT)
    try:
        _work_out(theirs, unused, work, items, os.getppid(), time.perf_counter() + 0.2)
    finally:
        signal.signal(signal.SIGINT, handler)
    kind, sent = ours.recv()
    assert kind == "ok" and 0 < len(sent) < len(items) and sent == items[: len(sent)]
    out = _in_two(2 * items, work, 2, time.perf_counter() + 0.3, None)
    for half in (out[0::2], out[1::2]):  # a forked half started late may have worked none
        done = [x for x in half if x is not None]
        assert len(done) < len(half) and half[: len(done)] == done
