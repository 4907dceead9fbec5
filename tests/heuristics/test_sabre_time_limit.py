"""Sabre's time limit, on a fake clock moved one second per stage of the greedy (and
per wave of the materialization): the stages after the first t-close one are tried
until halfway to the deadline and the best planned is kept, without a t-close stage the
coarsest table (t-close, checked exactly) is released, and the classes not filled at the
deadline make one class per protected value. The stage loop used to plan every stage
past the deadline (10,000 values under equal 0.4-closeness, one record each: 6.3-6.8 s
CPU in a time limit of 1 s), and the materialization read no clock (100,000 codes,
hierarchical 0.4-closeness: 4.4 s past a limit of 3 s)."""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd
import pytest

import fairanon as fa
from fairanon import verify
from fairanon.heuristics.sabre import buckets as B
from fairanon.heuristics.sabre import materialization as M
from fairanon.heuristics.sabre import method as S
from fairanon.heuristics.sabre import plan as P


def _instance():
    # 30 sensitive values, 3 records each: the equal greedy's one-bucket start has
    # WC = 90 - 3 = 87 (over N = 90) and each move of a value out of it lowers WC by 3,
    # so U = (87 - 3 j) / 90 <= 1/2 first after j = 14 moves, at 15 buckets.
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"a": rng.integers(0, 20, 90), "b": rng.integers(0, 10, 90),
                       "s": [f"c{i % 30:02d}" for i in range(90)]})
    schema = fa.Schema([fa.Attribute("a", kind="numeric"), fa.Attribute("b", kind="numeric"),
                        fa.Attribute("s", role="sensitive")])
    return fa.Instance(df, schema), [fa.KAnonymity(2), fa.TCloseness("1/2", attribute="s")]


@pytest.fixture
def clock(monkeypatch):
    now, steps = [0.0], []
    fake = type("Clock", (), {"perf_counter": staticmethod(lambda: now[0])})
    for module in (S, B, P, M):
        monkeypatch.setattr(module, "time", fake)
    greedy = B._greedy_equal

    def counted(counts):
        for stage in greedy(counts):
            now[0] += 1.0
            steps.append(stage)
            yield stage

    monkeypatch.setattr(B, "_greedy_equal", counted)
    return now, steps


def test_the_stage_loop_stops_halfway_to_the_deadline_with_the_best_stage(clock, monkeypatch):
    now, steps = clock
    inst, reqs = _instance()
    # The first t-close stage (step 14) is read at 15.0; with the deadline at 29.5 the
    # later stages are tried until 22.25: steps 15-21 planned, 22 read at 23.0 not.
    rel = S.sabre(inst, reqs, seed=0, time_limit=29.5)
    assert len(steps) == 23  # every one of the 30 without the deadline read
    assert verify(inst, rel, reqs, metrics=False).passed
    assert rel.provenance["time_limit_reached"]
    # The same release as without a limit from a greedy that ends after step 21.
    counted = B._greedy_equal

    def first_22(counts):
        for _, stage in zip(range(22), counted(counts)):
            yield stage

    monkeypatch.setattr(B, "_greedy_equal", first_22)
    now[0], steps[:] = 0.0, []
    same = S.sabre(inst, reqs, seed=0)
    assert not same.provenance["time_limit_reached"]
    assert np.array_equal(rel.groups, same.groups)
    assert rel.provenance["buckets"] == same.provenance["buckets"]
    assert rel.n_groups > 1


def test_the_materialization_stops_at_the_deadline(clock, monkeypatch):
    """Its clock moves one second a wave of neighbour searches: the classes not yet
    filled at the deadline make one class per protected value, t-close as a union of
    planned classes."""
    now, steps = clock
    inst, reqs = _instance()
    free = S.sabre(inst, reqs, seed=0)
    waves = [0.0]

    def tick():  # 101, 102, ... while the stages' clock stops at 30.0
        waves[0] += 1.0
        return 100.0 + waves[0]

    monkeypatch.setattr(M, "time", type("Clock", (), {"perf_counter": staticmethod(tick)}))
    monkeypatch.setattr(S, "materialize", functools.partial(M.materialize, wave=1))  # a class a wave
    now[0], steps[:] = 0.0, []
    rel = S.sabre(inst, reqs, seed=0, time_limit=1000.0)
    assert waves[0] == free.n_groups == 4 and not rel.provenance["time_limit_reached"]
    assert np.array_equal(rel.groups, free.groups)
    waves[0], now[0], steps[:] = 0.0, 0.0, []
    rel = S.sabre(inst, reqs, seed=0, time_limit=102.5)  # 2 classes (read at 101, 102) filled
    assert waves[0] == 3
    assert rel.provenance["time_limit_reached"]
    assert verify(inst, rel, reqs, metrics=False).passed
    assert rel.n_groups == 3  # and the other two planned classes as one
    assert [sorted(np.flatnonzero(rel.groups == g)) for g in (0, 1)] == \
        [sorted(np.flatnonzero(free.groups == g)) for g in (0, 1)]


def test_no_t_close_stage_by_the_deadline_releases_the_coarsest_table(clock):
    now, steps = clock
    inst, reqs = _instance()
    rel = S.sabre(inst, reqs, seed=0, time_limit=5.5)
    assert len(steps) == 6
    assert rel.status == fa.Status.FEASIBLE and rel.provenance["time_limit_reached"]
    assert rel.n_groups == 1 and rel.provenance["buckets"] is None
    assert verify(inst, rel, reqs, metrics=False).passed


def test_a_limit_that_does_not_bind_changes_nothing(clock):
    now, steps = clock
    inst, reqs = _instance()
    free = S.sabre(inst, reqs, seed=0)
    now[0], steps[:] = 0.0, []
    limited = S.sabre(inst, reqs, seed=0, time_limit=1000.0)
    assert not limited.provenance["time_limit_reached"]
    assert np.array_equal(free.groups, limited.groups)
    assert free.provenance["buckets"] == limited.provenance["buckets"]
    assert verify(inst, limited, reqs, metrics=False).passed


_G = np.array([f"g{i // 30}" for i in range(90)])


def _protected_instance():
    # Three protected values, 30 records each holding each of the 30 sensitive values
    # once: every protected value's records are the table's distribution (EMD 0), so
    # one class per protected value is 1/2-close and has 30 >= 2 records.
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"a": rng.integers(0, 20, 90), "b": rng.integers(0, 10, 90),
                       "g": _G,
                       "s": [f"c{i % 30:02d}" for i in range(90)]})
    schema = fa.Schema([fa.Attribute("a", kind="numeric"), fa.Attribute("b", kind="numeric"),
                        fa.Attribute("g", role="protected", protected=("g1",)), fa.Attribute("s", role="sensitive")])
    return fa.Instance(df, schema), [fa.KAnonymity(2), fa.TCloseness("1/2", attribute="s")]


def _check(inst, rel, reqs):
    """Valid (k and t by the exact check) and no class mixing protected values."""
    assert rel.status == fa.Status.FEASIBLE
    assert verify(inst, rel, reqs, metrics=False).passed
    g = _G
    for c in np.unique(rel.groups):
        assert len(set(g[rel.groups == c])) == 1
    assert rel.provenance["n_released_classes"] == len(np.unique(rel.groups)) == rel.n_groups


def test_cuts_of_the_materialization_with_three_protected_values(clock, monkeypatch):
    now, steps = clock
    inst, reqs = _protected_instance()
    free = S.sabre(inst, reqs, seed=0)
    _check(inst, free, reqs)
    planned = free.provenance["n_planned_classes"]
    assert free.n_groups == planned > 3
    waves = [0.0]

    def tick():
        waves[0] += 1.0
        return 100.0 + waves[0]

    monkeypatch.setattr(M, "time", type("Clock", (), {"perf_counter": staticmethod(tick)}))
    monkeypatch.setattr(S, "materialize", functools.partial(M.materialize, wave=1))
    for filled in (0, 1, 2, planned // 2, planned - 2):
        waves[0], now[0], steps[:] = 0.0, 0.0, []
        rel = S.sabre(inst, reqs, seed=0, time_limit=100.5 + filled)
        _check(inst, rel, reqs)
        assert rel.provenance["time_limit_reached"]
        assert rel.provenance["n_planned_classes"] == planned
        # the filled classes as without a limit; the rest one class per protected
        # value that still has records left
        for c in range(filled):
            assert sorted(np.flatnonzero(rel.groups == c)) == sorted(np.flatnonzero(free.groups == c))
        g = _G
        left = set(g[~np.isin(rel.groups, range(filled))])
        assert rel.n_groups == filled + len(left)
        assert rel.n_groups < planned and rel.provenance["max_plan_bound"] is not None


def test_deadline_after_the_stages_before_materializing(clock, monkeypatch):
    """The clock passes the deadline after the last stage is read: no class is filled
    and the release is one class per protected value, with no stage's buckets in
    its provenance."""
    now, steps = clock
    inst, reqs = _protected_instance()
    counted = B._greedy_equal

    def then_late(counts):
        yield from counted(counts)
        now[0] += 1000.0

    monkeypatch.setattr(B, "_greedy_equal", then_late)
    rel = S.sabre(inst, reqs, seed=0, time_limit=200.0)
    assert len(steps) == 30  # every stage read, halfway (> 100) not reached
    _check(inst, rel, reqs)
    assert rel.n_groups == 3 and rel.provenance["n_released_classes"] == 3
    assert rel.provenance["time_limit_reached"]
    assert rel.provenance["n_planned_classes"] > 3
    assert rel.provenance["buckets"] is None and rel.provenance["max_plan_bound"] is None
    g = _G
    assert sorted(sorted(np.flatnonzero(g == v)) for v in ("g0", "g1", "g2")) == \
        sorted(sorted(np.flatnonzero(rel.groups == c)) for c in np.unique(rel.groups))


def _tree_instance(protected: bool):
    # 90 records of 30 codes under a masking tree (c0*, c1*, c2* under *), each code
    # three times, once per protected value when there is one: every protected value's
    # records are the table's distribution (EMD 0), so one class per protected value (or
    # the whole table) is 2/5-close with 30 >= 2 records.
    from fairanon.instances.builders import masking_hierarchy

    codes = [f"c{i % 30:02d}" for i in range(90)]
    rng = np.random.default_rng(7)
    df = pd.DataFrame({"a": rng.integers(0, 20, 90), "b": rng.integers(0, 10, 90), "g": _G, "s": codes})
    attrs = [fa.Attribute("a", kind="numeric"), fa.Attribute("b", kind="numeric"),
             fa.Attribute("s", role="sensitive", hierarchy=masking_hierarchy(codes, levels=1))]
    if protected:
        attrs.append(fa.Attribute("g", role="protected", protected=("g1",)))
    reqs = [fa.KAnonymity(2), fa.TCloseness("2/5", distance="hierarchical", attribute="s")]
    return fa.Instance(df[[a.name for a in attrs]], fa.Schema(attrs)), reqs


@pytest.fixture
def setup_clock(monkeypatch):
    """A clock that stands still at 0.0 unless a test moves it."""
    now = [0.0]
    fake = type("Clock", (), {"perf_counter": staticmethod(lambda: now[0])})
    for module in (S, B, P, M):
        monkeypatch.setattr(module, "time", fake)
    return now


def _coarsest(inst, rel, reqs, n_classes):
    assert rel.status == fa.Status.FEASIBLE and rel.provenance["time_limit_reached"]
    assert rel.n_groups == rel.provenance["n_released_classes"] == n_classes
    assert rel.provenance["buckets"] is None and rel.provenance["max_plan_bound"] is None
    assert verify(inst, rel, reqs, metrics=False).passed
    if n_classes > 1:
        for c in np.unique(rel.groups):
            assert len(set(_G[rel.groups == c])) == 1


def test_the_deadline_passed_before_the_ground_distance(setup_clock, monkeypatch):
    """Past the deadline after the target is encoded, the whole table (one protected
    value) is released without building the ground distance (0.2 s CPU at 100,000
    codes, which used to be built, with the greedy's set-up, before the first read)."""
    now = setup_clock
    inst, reqs = _tree_instance(protected=False)
    encode = S._encode_target

    def late_encode(*args):
        now[0] += 10.0
        return encode(*args)

    def no_ground(*args):
        raise AssertionError("the ground distance is built past the deadline")

    monkeypatch.setattr(S, "_encode_target", late_encode)
    monkeypatch.setattr(S, "_ground", no_ground)
    _coarsest(inst, S.sabre(inst, reqs, seed=0, time_limit=5.0), reqs, 1)


class _NoTree(B._TreeWorstCase):
    def __init__(self, *args):
        raise AssertionError("the greedy's set-up runs past the deadline")


def test_the_deadline_passed_while_building_the_ground_distance(setup_clock, monkeypatch):
    """With three protected values the ground distance is built (each value's records
    are checked with it), and past the deadline then the greedy is not set up: one
    class per protected value."""
    now = setup_clock
    inst, reqs = _tree_instance(protected=True)
    ground = S._ground

    def late_ground(*args):
        now[0] += 10.0
        return ground(*args)

    monkeypatch.setattr(S, "_ground", late_ground)
    monkeypatch.setattr(B, "_TreeWorstCase", _NoTree)
    _coarsest(inst, S.sabre(inst, reqs, seed=0, time_limit=5.0), reqs, 3)


class _LateTree(B._TreeWorstCase):
    now: list = []

    def __init__(self, *args):
        super().__init__(*args)
        self.now[0] += 10.0

    def __call__(self, node, vals):
        raise AssertionError("the greedy goes on past the deadline")


@pytest.mark.parametrize("protected", [False, True])
def test_the_deadline_passed_during_the_greedy_set_up(setup_clock, monkeypatch, protected):
    """Past the deadline after the hierarchical greedy's per-node sums, no bucket's
    worst case is computed: one class per protected value (or the whole table)."""
    now = setup_clock
    inst, reqs = _tree_instance(protected)
    monkeypatch.setattr(_LateTree, "now", now)
    monkeypatch.setattr(B, "_TreeWorstCase", _LateTree)
    _coarsest(inst, S.sabre(inst, reqs, seed=0, time_limit=5.0), reqs, 3 if protected else 1)


@pytest.mark.parametrize("protected", [False, True])
def test_a_limit_that_does_not_bind_changes_nothing_under_a_tree(setup_clock, protected):
    """The set-up's reads of a deadline that does not pass change nothing: the same
    classes and buckets as without a limit, more than one class per protected value."""
    inst, reqs = _tree_instance(protected)
    free = S.sabre(inst, reqs, seed=0)
    limited = S.sabre(inst, reqs, seed=0, time_limit=5.0)
    assert not limited.provenance["time_limit_reached"]
    assert np.array_equal(free.groups, limited.groups) and limited.n_groups > 3
    assert free.provenance["buckets"] == limited.provenance["buckets"] is not None
    assert verify(inst, limited, reqs, metrics=False).passed
