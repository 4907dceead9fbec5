"""The local search over record moves, swaps and splits (fairanon.heuristics.moves):
its releases verify, never lose more than the start (the loss read from the release by
the metrics, not the search's own counts), keep k and protected values apart, are
deterministic for a seed, end at a local optimum checked move by move against the
metrics, are never below the brute-force optimum, and the checks of its inputs."""

import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from tests.solver._exact_oracle import set_partitions
from tests.trees import random_trees

import fairanon as fa
from fairanon.exceptions import IncompatibleRequirementError, InvalidParameterError
from fairanon.heuristics.moves import local_search, partition_of
from fairanon.models.objectives import objective_value
from fairanon.release import Release, generalize_partition

PROPERTY = settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])
ORDER = ["lo", "mid", "high", "top"]


@st.composite
def tables(draw, min_rows=4, max_rows=24):
    """Rows with 1-3 quasi-identifiers: numeric (integers or halves), ordered, or
    categorical under a random tree (leaves at uneven depths, unary chains); maybe a
    protected attribute."""
    n = draw(st.integers(min_rows, max_rows))
    columns, attrs = {}, []
    for i in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["numeric", "categorical", "ordered"]))
        name = f"q{i}"
        if kind == "numeric":
            halves = draw(st.lists(st.integers(0, 12), min_size=n, max_size=n))
            columns[name] = [v / 2 for v in halves]
            attrs.append(fa.Attribute(name, kind="numeric"))
        elif kind == "categorical":
            tree = draw(random_trees(10))
            columns[name] = draw(st.lists(st.sampled_from(tree.leaves), min_size=n, max_size=n))
            attrs.append(fa.Attribute(name, hierarchy=tree))
        else:
            columns[name] = draw(st.lists(st.sampled_from(ORDER), min_size=n, max_size=n))
            attrs.append(fa.Attribute(name, kind="ordered", order=ORDER))
    if draw(st.booleans()):
        columns["p"] = draw(st.lists(st.sampled_from(["x", "y"]), min_size=n, max_size=n))
        attrs.append(fa.Attribute("p", role="protected", protected=["y"],
                                  hierarchy=fa.Hierarchy.flat(["x", "y"])))
    return fa.Instance(pd.DataFrame(columns), fa.Schema(attrs), name="random")


def _protected(inst):
    name = inst.schema.protected
    return np.asarray(inst.codes(name)) if name else np.zeros(inst.n_rows, dtype=np.int64)


def random_partition(inst, k, rng):
    """Records of each protected value shuffled and cut into blocks of k, the last block
    taking the rest; None when a protected value has fewer than k records."""
    groups = np.empty(inst.n_rows, dtype=np.int64)
    next_id = 0
    for value in np.unique(_protected(inst)):
        rows = rng.permutation(np.flatnonzero(_protected(inst) == value))
        if len(rows) < k:
            return None
        blocks = max(1, len(rows) // k)
        for b in range(blocks):
            part = rows[b * k:] if b == blocks - 1 else rows[b * k:(b + 1) * k]
            groups[part] = next_id
            next_id += 1
    return groups


def release_of(inst, groups):
    return Release(generalize_partition(inst, groups), np.asarray(groups))


def loss(inst, groups, objective):
    """The exact loss of the tight release of a partition, as the metrics read it."""
    return objective_value(inst, release_of(inst, groups), objective)


@PROPERTY
@given(tables(), st.integers(1, 4), st.sampled_from(["ncp", "lm"]), st.integers(0, 3))
def test_never_loses_more_keeps_k_and_verifies(inst, k, objective, seed):
    start = random_partition(inst, k, np.random.default_rng(seed))
    assume(start is not None)
    reqs = [fa.KAnonymity(k)]
    found = local_search(inst, reqs, start, objective=objective, seed=seed, max_kicks=15)
    rel = release_of(inst, found.groups)
    report = fa.verify(inst, rel, reqs, metrics=False)
    assert report.passed, str(report)
    exact = objective_value(inst, rel, objective)
    assert exact <= loss(inst, start, objective)
    # The search's float count is the metrics' exact value.
    assert found.value == pytest.approx(float(exact), abs=1e-9)
    # Every class at least k records, of one protected value.
    sizes = np.bincount(np.unique(found.groups, return_inverse=True)[1])
    assert sizes.min() >= k
    per_class = pd.Series(_protected(inst)).groupby(found.groups).nunique()
    assert (per_class == 1).all()


def _moved(groups, r, target):
    out = groups.copy()
    out[r] = target
    return out


@settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(tables(min_rows=4, max_rows=10), st.integers(1, 3), st.sampled_from(["ncp", "lm"]),
       st.integers(0, 3))
def test_the_descent_ends_where_no_move_or_swap_lowers_the_loss(inst, k, objective, seed):
    """Every move of a record to another class of its protected value (its own class
    keeping k) and every swap of two records of two classes, each priced by the metrics
    on its release, loses no less than the descent's end."""
    start = random_partition(inst, k, np.random.default_rng(seed))
    assume(start is not None)
    reqs = [fa.KAnonymity(k)]
    found = local_search(inst, reqs, start, objective=objective, seed=seed, max_kicks=0)
    groups = found.groups
    here = loss(inst, groups, objective)
    prot = _protected(inst)
    classes = np.unique(groups)
    sizes = {g: int((groups == g).sum()) for g in classes}
    for r in range(inst.n_rows):
        a = groups[r]
        for b in classes:
            if b == a or prot[groups == b][0] != prot[r]:
                continue
            if sizes[a] - 1 >= k:
                assert loss(inst, _moved(groups, r, b), objective) >= here
            for s in np.flatnonzero(groups == b):
                swapped = _moved(_moved(groups, r, b), s, a)
                assert loss(inst, swapped, objective) >= here


@settings(deadline=None, max_examples=20, suppress_health_check=[HealthCheck.too_slow])
@given(tables(min_rows=3, max_rows=6), st.integers(1, 3), st.sampled_from(["ncp", "lm"]))
def test_never_below_the_brute_force_optimum(inst, k, objective):
    start = random_partition(inst, k, np.random.default_rng(0))
    assume(start is not None)
    prot = _protected(inst)
    best = None
    for blocks in set_partitions(range(inst.n_rows), min_size=k):
        if any(len(set(prot[b].tolist())) > 1 for b in blocks):
            continue
        groups = np.empty(inst.n_rows, dtype=np.int64)
        for g, b in enumerate(blocks):
            groups[b] = g
        value = loss(inst, groups, objective)
        best = value if best is None else min(best, value)
    found = local_search(inst, [fa.KAnonymity(k)], start, objective=objective, seed=0,
                         max_kicks=20)
    assert best <= loss(inst, found.groups, objective)


def _grid(n=60, seed=4):
    rng = np.random.default_rng(seed)
    tree = fa.Hierarchy.from_mapping({"*": {"A": ["a1", "a2", "a3"], "B": ["b1", "b2"]}})
    df = pd.DataFrame({"age": rng.integers(18, 80, n), "x": rng.choice(tree.leaves, n),
                       "edu": rng.choice(ORDER, n)})
    schema = fa.Schema([fa.Attribute("age", kind="numeric"), fa.Attribute("x", hierarchy=tree),
                        fa.Attribute("edu", kind="ordered", order=ORDER)])
    return fa.Instance(df, schema, name="grid")


def test_same_seed_same_partition_and_a_hand_checked_gain():
    inst = _grid()
    reqs = [fa.KAnonymity(4)]
    start = partition_of(inst, fa.anonymize(inst, reqs, method="mondrian", seed=0))
    runs = [local_search(inst, reqs, start, objective="ncp", seed=7, max_kicks=40)
            for _ in range(2)]
    assert np.array_equal(runs[0].groups, runs[1].groups)
    assert runs[0].kicks == 40
    assert loss(inst, runs[0].groups, "ncp") < loss(inst, start, "ncp")


def test_two_records_swap_into_the_classes_of_their_values():
    """Classes {1, 1, 9} and {9, 9, 1} (ages) under k = 3: swapping the odd records out
    gives {1, 1, 1} and {9, 9, 9}, NCP 0 from 6 (each cell of the two classes loses the
    whole range)."""
    inst = fa.Instance(pd.DataFrame({"age": [1, 1, 9, 9, 9, 1]}),
                       fa.Schema([fa.Attribute("age", kind="numeric")]))
    start = np.array([0, 0, 0, 1, 1, 1])
    assert loss(inst, start, "ncp") == 6
    found = local_search(inst, [fa.KAnonymity(3)], start, objective="ncp", seed=0)
    assert loss(inst, found.groups, "ncp") == 0
    assert found.changes["swap"] == 1


def test_a_passed_deadline_returns_the_start():
    inst = _grid()
    reqs = [fa.KAnonymity(4)]
    start = partition_of(inst, fa.anonymize(inst, reqs, method="mondrian", seed=0))
    found = local_search(inst, reqs, start, objective="ncp", seed=0,
                         deadline=time.perf_counter() - 1)
    assert found.stopped == "set-up"
    assert np.array_equal(found.groups, start)


class _Clock:
    """A fake clock: each read is one second later than the one before."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        self.now += 1.0
        return self.now


def _no_descent(self, *args, **kwargs):
    raise AssertionError("the search went on past its deadline")


def _chain_tree(leaves):
    """A hierarchy of `leaves` leaves under nested binary-ish groups (preorder)."""
    parent = {"*": None}
    for i in range(leaves):
        parent[f"g{i // 4}"] = "*"
        parent[f"v{i}"] = f"g{i // 4}"
    return fa.Hierarchy(parent)


def test_the_set_up_of_a_large_table_reads_the_deadline(monkeypatch):
    """A categorical attribute's table of leaves x leaves losses is built row after row,
    the deadline read at each: with a clock one second later at each read and a deadline
    5 s away, the set-up of 40 leaves (2 classes) stops within the table (it read the
    clock only before and after the table, 4 times, and went on to the descent)."""
    import fairanon.heuristics.moves as moves

    clock = _Clock()
    monkeypatch.setattr(moves, "_clock", clock)
    monkeypatch.setattr(moves.MoveSearch, "descend", _no_descent)
    inst = fa.Instance(pd.DataFrame({"c": [f"v{i}" for i in range(40)]}),
                       fa.Schema([fa.Attribute("c", hierarchy=_chain_tree(40))]))
    start = np.arange(40) // 20
    found = local_search(inst, [fa.KAnonymity(20)], start, objective="ncp", seed=0,
                         deadline=5.0)
    assert found.stopped == "set-up"
    assert np.array_equal(found.groups, start)
    assert clock.now <= 6


def test_the_set_up_of_many_classes_reads_the_deadline(monkeypatch):
    """The classes' boxes are set up one by one, the deadline read at each: 50 classes
    of a numeric attribute stop within their set-up under a clock one second later at
    each read and a deadline 5 s away."""
    import fairanon.heuristics.moves as moves

    clock = _Clock()
    monkeypatch.setattr(moves, "_clock", clock)
    monkeypatch.setattr(moves.MoveSearch, "descend", _no_descent)
    inst = fa.Instance(pd.DataFrame({"age": np.arange(100) % 7}),
                       fa.Schema([fa.Attribute("age", kind="numeric")]))
    start = np.arange(100) // 2
    found = local_search(inst, [fa.KAnonymity(2)], start, objective="ncp", seed=0,
                         deadline=5.0)
    assert found.stopped == "set-up"
    assert clock.now <= 6


def test_the_table_of_lowest_common_ancestors_by_hand():
    """Leaves a, b under x; c under y under x; d alone under the root (4 active leaves):
    NCP of a box = active leaves under the lowest common ancestor / 4 (0 for one leaf),
    LM = (leaves - 1) / 3."""
    from fairanon.heuristics.moves import _Attribute

    tree = fa.Hierarchy({"*": None, "x": "*", "a": "x", "b": "x", "y": "x", "c": "y",
                         "d": "*"})
    inst = fa.Instance(pd.DataFrame({"h": ["a", "b", "c", "d"]}),
                       fa.Schema([fa.Attribute("h", hierarchy=tree)]))
    under = np.array([[1, 3, 3, 4], [3, 1, 3, 4], [3, 3, 1, 4], [4, 4, 4, 1]])
    for objective, want in (("ncp", np.where(under > 1, under / 4, 0)),
                            ("lm", (under - 1) / 3)):
        attr = _Attribute(inst, "h", objective)
        order = attr.pos  # position of a, b, c, d in the value order
        got = attr.table[np.ix_(order, order)]
        assert np.allclose(got, want)


def test_nothing_to_change_returns_at_once(monkeypatch):
    """One class per protected value and none of 2k records, or a start that loses
    nothing: no move, swap, split or kick can change it, and the search returns before
    its deadline (a fake clock one second later at each read; the deadline 1,000 s
    away) without a perturbation."""
    import fairanon.heuristics.moves as moves

    monkeypatch.setattr(moves, "_clock", _Clock())
    inst = fa.Instance(pd.DataFrame({"age": np.arange(10)}),
                       fa.Schema([fa.Attribute("age", kind="numeric")]))
    one = np.zeros(10, dtype=np.int64)
    found = local_search(inst, [fa.KAnonymity(6)], one, objective="ncp", seed=0,
                         deadline=1000.0)
    assert (found.stopped, found.kicks, found.value) == ("local optimum", 0, 10.0)
    flat = fa.Instance(pd.DataFrame({"age": np.zeros(12)}),
                       fa.Schema([fa.Attribute("age", kind="numeric")]))
    monkeypatch.setattr(moves, "_clock", _Clock())
    found = local_search(flat, [fa.KAnonymity(2)], np.arange(12) // 2, objective="lm",
                         seed=0, deadline=1000.0)
    assert (found.stopped, found.kicks, found.value) == ("local optimum", 0, 0.0)


def test_refusals():
    inst = _grid()
    start = np.arange(inst.n_rows) // 5
    with pytest.raises(IncompatibleRequirementError):
        local_search(inst, [fa.KAnonymity(2), fa.LDiversity(2, attribute="x")], start)
    with pytest.raises(InvalidParameterError):
        local_search(inst, [fa.KAnonymity(6)], start)  # classes of 5
    with pytest.raises(InvalidParameterError):
        local_search(inst, [fa.KAnonymity(2)], start, objective="stars")
    with pytest.raises(InvalidParameterError):
        local_search(inst, [fa.KAnonymity(2)], start[:-1])


def test_lns_re_solves_a_small_table_whole_before_any_local_search():
    """German credit on 2 QIs has fewer distinct records than whole_types: the search
    re-solves the whole table first and proves the optimum there, so the local search is
    not run before it. Before, with 120 s, the local search took 85 s of the 86 s to
    OPTIMAL (MOVES_SHARE of the time), the re-solve 0.07 s."""
    inst = fa.load("german", qi=["savings", "housing"])
    reqs = [fa.KAnonymity(5)]
    rel = fa.anonymize(inst, reqs, method="lns", seed=0, time_limit=120, objective="ncp")
    assert rel.status == fa.Status.OPTIMAL
    search = rel.provenance["search"]
    assert "moves" not in search and search["strategies"]["whole"]["rounds"] == 1
    assert fa.verify(inst, rel, reqs).passed


def test_lns_runs_the_moves_first_under_k_and_a_per_cell_objective():
    """lns with a time limit spends part of it on the local search and then re-solves;
    the release verifies and loses no more than the start. With max_rounds, or a
    requirement the moves do not keep, the search is the re-solves alone."""
    import fairanon.methods.lns as lns_module

    inst = _grid(200)
    reqs = [fa.KAnonymity(4)]
    started_from = []
    resolve = lns_module.search

    def spy(inc, *args, **kwargs):
        started_from.append(inc.value)
        return resolve(inc, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(lns_module, "search", spy)
        rel = fa.anonymize(inst, reqs, method="lns", seed=0, time_limit=4, objective="ncp",
                           whole_types=0)
    search = rel.provenance["search"]
    moved = search["moves"]
    assert moved["kicks"] >= 1 and moved["objective"] < search["start_objective"]
    # The re-solves started from the local search's release, which lost less than the start.
    assert started_from == [moved["objective"]]
    assert fa.verify(inst, rel, reqs).passed
    value = objective_value(inst, rel, "ncp")
    assert rel.objective == value <= moved["objective"]
    if rel.bound is not None:
        assert rel.bound <= value
        assert rel.provenance["gap"] == pytest.approx(float((value - rel.bound) / value))
    else:  # no bound in time (a loaded machine)
        assert rel.provenance["gap"] is None
    counted = fa.anonymize(inst, reqs, method="lns", seed=0, max_rounds=1, objective="ncp",
                           bound=False, whole_types=0)
    assert "moves" not in counted.provenance["search"]
    diverse = [fa.KAnonymity(4), fa.LDiversity(2, attribute="x")]
    inst_l = fa.Instance(inst.table, fa.Schema([fa.Attribute("age", kind="numeric"),
                                                fa.Attribute("x", role="sensitive"),
                                                fa.Attribute("edu", kind="ordered", order=ORDER)]))
    other = fa.anonymize(inst_l, diverse, method="lns", seed=0, time_limit=3, objective="ncp",
                         bound=False, whole_types=0)
    assert "moves" not in other.provenance["search"]
    assert fa.verify(inst_l, other, diverse).passed


@settings(deadline=None, max_examples=15, suppress_health_check=[HealthCheck.too_slow])
@given(tables(min_rows=6), st.integers(2, 3),
       st.sampled_from(["regroup", "mixed", "dissolve", "merge"]),
       st.integers(0, 3))
def test_every_kick_keeps_k_and_never_loses_more(inst, k, kick, seed):
    start = random_partition(inst, k, np.random.default_rng(seed))
    assume(start is not None)
    reqs = [fa.KAnonymity(k)]
    found = local_search(inst, reqs, start, objective="ncp", seed=seed, max_kicks=10, kick=kick)
    rel = release_of(inst, found.groups)
    assert fa.verify(inst, rel, reqs, metrics=False).passed
    assert objective_value(inst, rel, "ncp") <= loss(inst, start, "ncp")
    per_class = pd.Series(_protected(inst)).groupby(found.groups).nunique()
    assert (per_class == 1).all()


def test_candidates_among_the_nearest_classes_of_a_large_table(monkeypatch):
    """Above PREFILTER_CLASSES classes a record is priced against the nearest classes of
    its own class only: the release still verifies and loses no more than the start."""
    import fairanon.heuristics.moves as moves

    monkeypatch.setattr(moves, "PREFILTER_CLASSES", 4)
    monkeypatch.setattr(moves, "NEAR_CLASSES", 3)
    inst = _grid(120, seed=5)
    reqs = [fa.KAnonymity(3)]
    start = random_partition(inst, 3, np.random.default_rng(1))
    found = local_search(inst, reqs, start, objective="lm", seed=0, max_kicks=30)
    rel = release_of(inst, found.groups)
    assert fa.verify(inst, rel, reqs, metrics=False).passed
    assert objective_value(inst, rel, "lm") < loss(inst, start, "lm")
    assert found.value == pytest.approx(float(objective_value(inst, rel, "lm")), abs=1e-9)


def test_lns_skips_the_moves_whose_set_up_outlasts_their_time(monkeypatch):
    """When the local search's deadline passes while it is set up (its clock read past
    every deadline), lns says it skipped it and re-solves from the start."""
    import fairanon.heuristics.moves as moves

    monkeypatch.setattr(moves, "_clock", lambda: float("inf"))
    inst = _grid(120)
    reqs = [fa.KAnonymity(4)]
    rel = fa.anonymize(inst, reqs, method="lns", seed=0, time_limit=3, objective="ncp",
                       bound=False, whole_types=0)
    search = rel.provenance["search"]
    assert "set up" in search["moves"]["skipped"]
    assert search["rounds"] >= 1
    assert fa.verify(inst, rel, reqs).passed
    assert rel.objective == objective_value(inst, rel, "ncp") <= search["start_objective"]


def _reference_unit(state, lo, hi):
    """The loss per record of boxes, attribute by attribute through each table."""
    tab = state.tabled
    out = state.flat[state.offset + lo[..., tab] * state.stride + hi[..., tab]].sum(axis=-1)
    for j in state.untabled:
        out = out + state.attrs[j].loss(lo[..., j], hi[..., j])
    return out


def _reference_best_change(state, r):
    """best_change as first written: every candidate class and swap partner priced
    from the global arrays on each call (no per-value or per-class arrays kept)."""
    from fairanon.heuristics import moves

    a = int(state.group[r])
    p = state.pos[r]
    key = state.key_of[r]
    same = np.flatnonzero(state.alive & (state.key == key))
    if len(same) > moves.PREFILTER_CLASSES:
        near = state.near_cache.get(a)
        if near is None:
            near = state.near_cache[a] = state.nearest(a, moves.NEAR_CLASSES)
            state.near_tick[a] = state.births
        # Those still in the slots they were found in (none born since).
        same = near[state.alive[near] & (state.born[near] <= state.near_tick[a])]
    same = same[same != a]
    if not len(same):
        return 0.0, None, -1, -1
    joined = _reference_unit(state, np.minimum(state.lo[same], p), np.maximum(state.hi[same], p))
    add = (state.size[same] + 1) * joined - state.cost[same]
    if len(same) > state.candidates:
        keep = np.argpartition(add, state.candidates)[: state.candidates]
        same, add = same[keep], add[keep]
    best = (0.0, None, -1, -1)
    if state.size[a] - 1 >= state.k:
        removed = state.cost[a] - (state.size[a] - 1) * float(
            _reference_unit(state, state.wlo[r][None, :], state.whi[r][None, :])[0])
        delta = add - removed
        i = int(np.argmin(delta))
        if delta[i] < best[0]:
            best = (float(delta[i]), "move", int(same[i]), -1)
    if len(same) > state.swap_classes:
        near = same[np.argpartition(add, state.swap_classes)[: state.swap_classes]]
    else:
        near = same
    others = np.concatenate([state.members[b] for b in near])
    ps = state.pos[others]
    gs = state.group[others]
    new_a = state.size[a] * _reference_unit(state, np.minimum(state.wlo[r], ps),
                                            np.maximum(state.whi[r], ps))
    new_b = state.size[gs] * _reference_unit(state, np.minimum(state.wlo[others], p),
                                             np.maximum(state.whi[others], p))
    delta = new_a + new_b - state.cost[a] - state.cost[gs]
    i = int(np.argmin(delta))
    if delta[i] < best[0]:
        best = (float(delta[i]), "swap", int(gs[i]), int(others[i]))
    return best


def _reference_best_changes(state, rows, cand=None):
    """best_changes as a loop of the reference, record by record (each finding its own
    candidates: `cand` is not read)."""
    found = [_reference_best_change(state, int(r)) for r in rows]
    kinds = {None: 0, "move": 1, "swap": 2}
    return (np.array([f[0] for f in found]), np.array([kinds[f[1]] for f in found]),
            np.array([f[2] for f in found]), np.array([f[3] for f in found]))


@PROPERTY
@given(tables(min_rows=12, max_rows=60), st.integers(1, 4), st.sampled_from(["ncp", "lm"]),
       st.integers(0, 3), st.booleans(), st.booleans())
def test_same_partition_as_the_reference_pricing(inst, k, objective, seed, prefilter, joins):
    """For a seed and a number of kicks, the search returns the partition it returns
    when every record is priced by the reference above, one by one (kept arrays, the
    boxes' joins with every value and records priced together change nothing);
    with few candidates and the nearest-classes prefilter at 2 classes, every branch
    of the pricing is taken."""
    from fairanon.heuristics import moves

    start = random_partition(inst, k, np.random.default_rng(seed))
    assume(start is not None)
    reqs = [fa.KAnonymity(k)]
    options = dict(objective=objective, seed=seed, max_kicks=12, candidates=3, swap_classes=2)
    with pytest.MonkeyPatch.context() as mp:
        if not joins:
            mp.setattr(moves, "JOIN_CELLS", 0)
        if prefilter:
            mp.setattr(moves, "PREFILTER_CLASSES", 2)
            mp.setattr(moves, "NEAR_CLASSES", 2)
        found = local_search(inst, reqs, start, **options)
        # The expected run prices one record at a time (no batch: _first_change pops
        # one record and calls best_change), so that the batching is checked too.
        mp.setattr(moves, "BATCH", 1)
        mp.setattr(moves, "FIRST_BATCH", 1)
        mp.setattr(moves.MoveSearch, "best_change", _reference_best_change)
        mp.setattr(moves.MoveSearch, "best_changes", _reference_best_changes)
        expected = local_search(inst, reqs, start, **options)
    np.testing.assert_array_equal(found.groups, expected.groups)
    assert found.value == expected.value and found.changes == expected.changes
    report = fa.verify(inst, release_of(inst, found.groups), reqs, metrics=False)
    assert report.passed, str(report)


@pytest.mark.parametrize("joins", [True, False])
def test_records_of_a_value_of_many_classes_are_priced_together(joins):
    """Above PREFILTER_CLASSES classes of a value, records are priced together, each on
    the nearest classes of its own class (classes of 3 records, 40 of them, the
    prefilter at 4): the search returns the partition it returns when every record is
    priced one by one by the reference above, and it verifies. A batch keeps records x
    the records of each one's swap_classes largest candidates x the block's columns
    within BATCH_CELLS (2,000 here, so that it binds; its records x candidates x
    attributes, at most 64 x 6 x 3 = 1,152 cells here, are checked with 39 candidates
    below)."""
    from fairanon.heuristics import moves

    inst = _grid(120, seed=5)
    reqs = [fa.KAnonymity(3)]
    start = random_partition(inst, 3, np.random.default_rng(1))
    options = dict(objective="lm", seed=0, max_kicks=30, candidates=4, swap_classes=2)
    batched = []
    real = moves.MoveSearch.best_changes

    def spy(state, rows, cand=None):
        if cand is not None:
            batched.append(len(rows))
            width = 5 * state.d + 4 if state.joins else 4 * state.d + 3
            swap = np.sort(state.size[cand], axis=1)[:, ::-1][:, : state.swap_classes].sum()
            assert swap * width <= moves.BATCH_CELLS
        return real(state, rows, cand)

    with pytest.MonkeyPatch.context() as mp:
        if not joins:
            mp.setattr(moves, "JOIN_CELLS", 0)
        mp.setattr(moves, "PREFILTER_CLASSES", 4)
        mp.setattr(moves, "NEAR_CLASSES", 6)
        mp.setattr(moves, "BATCH_CELLS", 2000)
        mp.setattr(moves.MoveSearch, "best_changes", spy)
        found = local_search(inst, reqs, start, **options)
        mp.setattr(moves, "BATCH", 1)
        mp.setattr(moves, "FIRST_BATCH", 1)
        mp.setattr(moves.MoveSearch, "best_change", _reference_best_change)
        expected = local_search(inst, reqs, start, **options)
    assert batched and max(batched) > 1
    np.testing.assert_array_equal(found.groups, expected.groups)
    assert found.value == expected.value and found.changes == expected.changes
    assert found.changes["move"] + found.changes["swap"] > 0
    assert fa.verify(inst, release_of(inst, found.groups), reqs, metrics=False).passed


def _forty_classes_of_three(moves, **options):
    """A search over _grid(120)'s records (d = 3) in 40 classes of 3 records, every class's
    nearest classes kept (above PREFILTER_CLASSES classes of the value)."""
    inst = _grid(120, seed=5)
    state = moves.MoveSearch(inst, 3, random_partition(inst, 3, np.random.default_rng(1)),
                             "lm", seed=0, **options)
    assert np.array_equal(state.size[state.alive], np.full(40, 3))
    if 40 > moves.PREFILTER_CLASSES:
        for g in np.flatnonzero(state.alive).tolist():
            state.nearest(g, 4, keep=True)
    return state


@pytest.mark.parametrize("joins", [True, False])
def test_a_batch_of_many_candidates_stays_within_the_cell_budget(monkeypatch, joins):
    """A batch priced on its records' own candidates holds records x candidates x
    attributes within BATCH_CELLS. 40 classes of 3 records, NEAR_CLASSES = 39: each
    record's candidates are the 39 other classes, d = 3, so with BATCH_CELLS = 2,000 a
    batch holds at most 2,000 // (39 x 3) = 2,000 // 117 = 17 records (117 x 17 =
    1,989, 117 x 18 = 2,106). swap_classes = 1: a record's swaps read one class of 3
    records, and the swap cap alone would allow i records while 3 i x 19 <= 2,000 (a
    block of 5 d + 4 = 19 columns with the joins), 35, or 3 i x 15 <= 2,000 (4 d + 3 =
    15 without), 44: the candidate cap binds, at 17. A search under these settings
    (kicks changing the classes, so fewer candidates at times) prices no batch of c
    candidates of more than 2,000 // (3 c) records, and some batch of 39 at 17."""
    from fairanon.heuristics import moves

    if not joins:
        monkeypatch.setattr(moves, "JOIN_CELLS", 0)
    monkeypatch.setattr(moves, "PREFILTER_CLASSES", 4)
    monkeypatch.setattr(moves, "NEAR_CLASSES", 39)
    monkeypatch.setattr(moves, "BATCH_CELLS", 2000)
    state = _forty_classes_of_three(moves, swap_classes=1)
    assert state.joins == joins
    rows, cand = state._near_rows(np.arange(120), 0)
    assert cand.shape == (17, 39)
    np.testing.assert_array_equal(rows, np.arange(17))
    batches = []
    real = moves.MoveSearch.best_changes

    def spy(state, rows, cand=None):
        if cand is not None:
            batches.append((len(rows), cand.shape[1]))
        return real(state, rows, cand)

    monkeypatch.setattr(moves.MoveSearch, "best_changes", spy)
    inst = _grid(120, seed=5)
    start = random_partition(inst, 3, np.random.default_rng(1))
    local_search(inst, [fa.KAnonymity(3)], start, objective="lm", seed=0, max_kicks=30,
                 swap_classes=1)
    assert all(count <= 2000 // (3 * c) for count, c in batches)
    assert max(count for count, c in batches if c == 39) == 17


@pytest.mark.parametrize("prefilter", [True, False])
def test_records_whose_swaps_read_more_than_swap_rows_are_priced_alone(monkeypatch, prefilter):
    """A record whose swaps may read more than SWAP_ROWS records is priced alone. Classes
    of at least k = 3 records, swap_classes = 12: a record's swap classes are its 2 or
    more largest candidate classes (of its value's 40 classes at the start, or of its
    class's NEAR_CLASSES = 6 nearest above PREFILTER_CLASSES = 4), at least 2 x 3 = 6
    records, so with SWAP_ROWS = 5 no batch of more than one record is priced (the same
    search at the default 256 prices some). At the start (40 classes of 3): without the
    prefilter the 12 largest of the 39 other classes, 36 records, so a batch is 0 records
    at SWAP_ROWS = 35 and at 36 as many as keep 40 x 3 candidate cells and 36 x 19 swap
    cells each within 2^18: 262,144 // 684 = 383; with it the 6 nearest, 18 records, so
    0 records of 120 at 17 and all 120 at 18 (120 x 18 x 19 = 41,040 cells)."""
    from fairanon.heuristics import moves

    if prefilter:
        monkeypatch.setattr(moves, "PREFILTER_CLASSES", 4)
        monkeypatch.setattr(moves, "NEAR_CLASSES", 6)
    state = _forty_classes_of_three(moves)
    for limit, expected in ([(17, 0), (18, 120)] if prefilter else [(35, 0), (36, 383)]):
        monkeypatch.setattr(moves, "SWAP_ROWS", limit)
        if prefilter:
            rows, cand = state._near_rows(np.arange(120), 0)
            assert len(rows) == len(cand) == expected
        else:
            assert state._batch_rows(state._key_entry(0)) == expected
    inst = _grid(120, seed=5)
    start = random_partition(inst, 3, np.random.default_rng(1))
    real = moves.MoveSearch.best_changes
    batches = []

    def spy(state, rows, cand=None):
        batches.append(len(rows))
        return real(state, rows, cand)

    monkeypatch.setattr(moves.MoveSearch, "best_changes", spy)
    for limit in (5, 256):
        batches.clear()
        monkeypatch.setattr(moves, "SWAP_ROWS", limit)
        local_search(inst, [fa.KAnonymity(3)], start, objective="lm", seed=0, max_kicks=10)
        assert (max(batches, default=1) <= 1) == (limit == 5)


def test_a_changed_class_keeps_its_nearest_classes(monkeypatch):
    """Above PREFILTER_CLASSES classes of a value, the classes a change touched keep
    their NEAR_CLASSES nearest (their records' candidates), found with the nearest
    classes whose records the descent queues again: the classes a search of their own
    finds on the partition after the change."""
    from fairanon.heuristics import moves

    monkeypatch.setattr(moves, "PREFILTER_CLASSES", 4)
    monkeypatch.setattr(moves, "NEAR_CLASSES", 6)
    inst = _grid(120, seed=5)
    state = moves.MoveSearch(inst, 3, random_partition(inst, 3, np.random.default_rng(1)),
                             "lm", seed=0)
    touched = []
    real_apply, real_first = moves.MoveSearch.apply, moves.MoveSearch._first_change

    def apply(self, *change):
        touched.extend(real_apply(self, *change))
        return touched

    def first_change(self, *args):
        if touched:  # the descent has queued the records around the first change
            raise moves._Stop
        return real_first(self, *args)

    monkeypatch.setattr(moves.MoveSearch, "apply", apply)
    monkeypatch.setattr(moves.MoveSearch, "_first_change", first_change)
    with pytest.raises(moves._Stop):
        state.descend()
    assert len(touched) == 2
    for g in touched:
        assert set(state.near_cache[g].tolist()) == set(state.nearest(g, 6).tolist())


@pytest.mark.parametrize("joins", [True, False])
def test_a_kept_near_list_does_not_offer_a_slot_reborn_as_another_class(monkeypatch, joins):
    """Class slots are reused: a class's kept nearest classes may name a slot that died and
    now holds another class, which is not among them. Ten classes of 2 records, ages
    {10 i, 10 i + 1}, the prefilter at 4 classes and NEAR_CLASSES = 3: joining class 0
    and class i grows the NCP by 4 (10 i + 1) / 91 - 4 / 91 = 40 i / 91 (ages over 91),
    so 0's nearest are 1, 2 and 3. Class 1's records join class 9 (slot 1 dies), and
    class 9 is split into {10, 11} and {90, 91}, the split taking slot 1 for {90, 91}:
    360 / 91 from class 0, not among its 3 nearest ({10, 11} in slot 9 at 40 / 91, 2 and
    3 are). Class 0's kept list is untouched, and its candidates are 2 and 3 only (slot
    1 was offered too)."""
    from fairanon.heuristics import moves

    if not joins:
        monkeypatch.setattr(moves, "JOIN_CELLS", 0)
    monkeypatch.setattr(moves, "PREFILTER_CLASSES", 4)
    monkeypatch.setattr(moves, "NEAR_CLASSES", 3)
    ages = np.repeat(np.arange(10) * 10, 2) + np.tile([0, 1], 10)
    inst = fa.Instance(pd.DataFrame({"age": ages}),
                       fa.Schema([fa.Attribute("age", kind="numeric")]))
    state = moves.MoveSearch(inst, 2, np.arange(20) // 2, "ncp", seed=0)
    assert sorted(state._candidates(0, 0).tolist()) == [1, 2, 3]
    state._relocate(np.array([2, 3]), 1, 9)
    assert not state.alive[1]
    assert state.split(9, np.array([18, 19])) == 1
    np.testing.assert_array_equal(np.sort(state.members[1]), [18, 19])
    np.testing.assert_array_equal(np.sort(state.members[9]), [2, 3])
    assert sorted(state.near_cache[0].tolist()) == [1, 2, 3]
    assert sorted(state.nearest(0, 3).tolist()) == [2, 3, 9]
    assert sorted(state._candidates(0, 0).tolist()) == [2, 3]


@pytest.mark.parametrize("prefilter, count", [(4, "REQUEUE_MANY"), (100, "REQUEUE")])
def test_a_change_queues_the_records_of_fewer_nearest_classes_among_many(monkeypatch,
                                                                          prefilter, count):
    """Ten classes of 2 records, ages 20 apart: above PREFILTER_CLASSES classes of the
    value a change queues again the records of REQUEUE_MANY nearest classes of each
    class it touched, else of REQUEUE."""
    from fairanon.heuristics import moves

    monkeypatch.setattr(moves, "PREFILTER_CLASSES", prefilter)
    ages = np.array([10, 30, 20, 40, 50, 70, 60, 80, 90, 95, 11, 31, 21, 41, 51, 71, 61, 81,
                     91, 96])
    inst = fa.Instance(pd.DataFrame({"age": ages}),
                       fa.Schema([fa.Attribute("age", kind="numeric")]))
    state = moves.MoveSearch(inst, 2, np.arange(20) // 2, "ncp", seed=0)
    asked = []
    nearest = moves.MoveSearch.nearest

    def recorded(self, g, n, keep=False):
        if keep:
            asked.append(n)
        return nearest(self, g, n, keep)

    monkeypatch.setattr(moves.MoveSearch, "nearest", recorded)
    state.descend()
    assert state.changes["move"] + state.changes["swap"] > 0
    assert set(asked) == {getattr(moves, count)}


def test_a_regroup_pools_the_drawn_class_with_its_two_nearest(monkeypatch):
    """Ages {50, 51}, {10, 11}, {48, 49}, {52, 53} (k = 2): joining class 0 with class 2
    or 3 grows the loss least, with class 1 most, so a regroup of class 0 pools the
    records of classes 0, 2 and 3."""
    from fairanon.heuristics import moves

    ages = np.array([50, 51, 10, 11, 48, 49, 52, 53])
    inst = fa.Instance(pd.DataFrame({"age": ages}),
                       fa.Schema([fa.Attribute("age", kind="numeric")]))
    state = moves.MoveSearch(inst, 2, np.arange(8) // 2, "ncp", seed=0)
    monkeypatch.setattr(moves.MoveSearch, "_drawn", lambda self: 0)
    g, pool = state.kick("regroup")
    assert g == 0
    assert sorted(pool.tolist()) == [0, 1, 4, 5, 6, 7]


def test_kicks_draw_classes_by_their_loss_per_record():
    """Ages {10, 10}, {20, 21}, {30, 33} (NCP, range 23): losses per record 0, 1/23 and
    3/23, so the first class is never drawn and the third three times as often as the
    second (0.75 of 4,000 draws: a standard deviation of 0.007). With every class
    lossless, every class is drawn."""
    from fairanon.heuristics import moves

    ages = np.array([10, 10, 20, 21, 30, 33])
    inst = fa.Instance(pd.DataFrame({"age": ages}),
                       fa.Schema([fa.Attribute("age", kind="numeric")]))
    state = moves.MoveSearch(inst, 2, np.arange(6) // 2, "ncp", seed=0)
    drawn = np.bincount([state._drawn() for _ in range(4000)], minlength=3)
    assert drawn[0] == 0
    assert 0.72 < drawn[2] / drawn.sum() < 0.78, drawn
    flat = fa.Instance(pd.DataFrame({"age": np.repeat([10, 20, 30], 2)}),
                       fa.Schema([fa.Attribute("age", kind="numeric")]))
    state = moves.MoveSearch(flat, 2, np.arange(6) // 2, "ncp", seed=0)
    assert {state._drawn() for _ in range(100)} == {0, 1, 2}


@pytest.mark.parametrize("swap_rows", [None, 10**9])
def test_batches_of_large_classes_stay_within_the_cell_budget(swap_rows):
    """A batch priced together reads, for each record, the records of its swap classes
    (at most the swap_classes largest classes of its value): records x those records x
    the block's columns stay within BATCH_CELLS, also with classes of 40 records (480
    swap records a record, 64 records a batch would read 430,080 cells), and above
    SWAP_ROWS records a record is priced alone; with classes of 4 records batches are
    still priced. The same partition as one record at a time, and it verifies."""
    from fairanon.heuristics import moves

    rng = np.random.default_rng(0)
    for k, n in [(40, 800), (4, 200)]:
        inst = fa.Instance(pd.DataFrame({"q0": rng.integers(0, 60, n), "q1": rng.integers(0, 60, n)}),
                           fa.Schema([fa.Attribute("q0", kind="numeric"),
                                      fa.Attribute("q1", kind="numeric")]), name="wide")
        start = random_partition(inst, k, rng)
        reqs = [fa.KAnonymity(k)]
        seen = []
        real = moves.MoveSearch.best_changes

        def spy(state, rows, cand=None):
            key = state.key_of[rows[0]]
            sizes = np.sort(state.size[state.alive & (state.key == key)])[::-1]
            # At least a row's swap records: the largest classes of its value but one.
            read = int(sizes[: min(state.swap_classes, len(sizes) - 1)].sum())
            width = 5 * state.d + 4 if state.joins else 4 * state.d + 3
            seen.append((len(rows), read))
            assert len(rows) * read * width <= moves.BATCH_CELLS
            assert swap_rows is not None or read <= moves.SWAP_ROWS
            return real(state, rows, cand)

        with pytest.MonkeyPatch.context() as mp:
            if swap_rows is not None:
                mp.setattr(moves, "SWAP_ROWS", swap_rows)
            mp.setattr(moves.MoveSearch, "best_changes", spy)
            found = local_search(inst, reqs, start, seed=0, max_kicks=3)
            mp.setattr(moves, "BATCH", 1)
            mp.setattr(moves, "FIRST_BATCH", 1)
            expected = local_search(inst, reqs, start, seed=0, max_kicks=3)
        if k == 4 or swap_rows is not None:
            assert any(count > 1 for count, _ in seen)
        np.testing.assert_array_equal(found.groups, expected.groups)
        assert fa.verify(inst, release_of(inst, found.groups), reqs, metrics=False).passed


@pytest.mark.parametrize("d", [1, 2, 7, 8, 9, 16, 17, 40, 128, 129, 131])
def test_sums_over_the_first_axis_add_in_numpy_order(d):
    """_sum_rows gives the floats numpy's sum over a contiguous last axis gives (values
    of many magnitudes, so that the order of the additions shows)."""
    from fairanon.heuristics.moves import _sum_rows

    rng = np.random.default_rng(d)
    for shape in [(d, 1), (d, 3), (d, 200), (d, 4, 50)]:
        x = rng.random(shape) * 10.0 ** rng.integers(-8, 8, size=shape)
        expected = np.ascontiguousarray(np.moveaxis(x, 0, -1)).sum(axis=-1)
        np.testing.assert_array_equal(_sum_rows(x), expected)


def test_the_memory_check_counts_the_blocks_and_a_batchs_arrays():
    """The memory check counts every class's block of records and a batch's arrays: on
    German credit's 1,000 records, which the other arrays need about 1.7 MB for, a limit
    of 4 MB refuses (it did not: a batch alone holds up to 4 arrays of 2^18 cells of 8
    bytes, 8 MiB, the blocks 1,000 x (5 x 7 + 4) x 8 = 312,000 bytes with the joins), the
    refusal's need at least those; at 64 MB the search runs and its release verifies."""
    from fairanon._memory import memory_limit
    from fairanon.exceptions import MemoryLimitError

    inst = fa.load("german")
    reqs = [fa.KAnonymity(5)]
    start = fa.anonymize(inst, reqs, method="mondrian", seed=0).groups
    refusal = pytest.raises(MemoryLimitError, match="local search over the classes")
    with memory_limit("4MB"), refusal as refused:
        local_search(inst, reqs, start, seed=0, max_kicks=1)
    assert refused.value.need >= 4 * 2**18 * 8 + 1000 * (5 * 7 + 4) * 8
    with memory_limit("64MB"):
        found = local_search(inst, reqs, start, seed=0, max_kicks=1)
    assert fa.verify(inst, release_of(inst, found.groups), reqs, metrics=False).passed


def test_the_memory_check_counts_the_arrays_kept_per_class_and_a_nearest_search():
    """Each class keeps its box's arrays and when it was born and its nearest classes
    found (40 + 16 d bytes), its NEAR_CLASSES (128) nearest classes (8 bytes each) and,
    every attribute tabled, its row of its protected value's arrays (the class, its
    premultiplied lows, highs, size plus one and loss: 16 d + 24 bytes), each record's
    boxes take 40 d + 64 bytes, and a search
    for a class's nearest classes holds 3 arrays of its value's classes x d 8-byte cells
    at once (every attribute tabled): on German credit (d = 7, attributes of 5, 10, 5, 5,
    53, 3 and 4 values, 85 in all) at k = 5, at most 1,000 / 5 + 2 = 202 classes. By
    hand: the records' boxes 1,000 x 344 = 344,000 bytes; the joins (1,000 x 85 cells, at
    most JOIN_CELLS) 16 x 85,000 = 1,360,000; the tables 16 x 3,009 = 48,144 and the
    largest's mask 53^2 = 2,809; the blocks 1,000 x (5 x 7 + 4) x 8 = 312,000; a batch's
    4 x 2^18 x 8 = 8,388,608; per class 202 x (1,176 + 136) = 265,024; a nearest search 3
    x 202 x 7 x 8 = 33,936: 10,754,521 bytes, so a limit of 10.75 MB is refused (without
    the value's arrays, 10,727,049 bytes, it is not)."""
    from fairanon._memory import memory_limit
    from fairanon.exceptions import MemoryLimitError

    inst = fa.load("german")
    values = [len(np.unique(inst.codes(name))) for name in inst.schema.generalizable]
    assert values == [5, 10, 5, 5, 53, 3, 4]
    reqs = [fa.KAnonymity(5)]
    start = fa.anonymize(inst, reqs, method="mondrian", seed=0).groups
    with memory_limit("10.75MB"), pytest.raises(MemoryLimitError) as refused:
        local_search(inst, reqs, start, seed=0, max_kicks=1)
    records, joins = 1000 * (40 * 7 + 64), 16 * 1000 * 85
    tables = 16 * (25 + 100 + 25 + 25 + 53**2 + 9 + 16) + 53**2
    blocks, batch = 1000 * (5 * 7 + 4) * 8, 4 * 2**18 * 8
    kept, nearest = 202 * (40 + 16 * 7 + 8 * 128 + 16 * 7 + 24), 3 * 202 * 7 * 8
    assert refused.value.need == (records + joins + tables + blocks + batch + kept
                                  + nearest) == 10_754_521


def test_the_memory_check_counts_a_nearest_search_without_tables():
    """With an attribute of more than MAX_TABLE_LEAVES values (no table), a search for a
    class's nearest classes holds 5 arrays of its value's classes x d 8-byte cells at
    once: 3,000 records of one numeric attribute of 3,000 values (d = 1), k = 3, at most
    3,000 / 3 + 2 = 1,002 classes. By hand: the records' boxes 3,000 x 104 = 312,000
    bytes; no joins, table or mask; the blocks 3,000 x (4 + 3) x 8 = 168,000; a batch's
    8,388,608; per class 1,002 x (40 + 16 + 8 x 128) = 1,082,160; a nearest search 5 x
    1,002 x 8 = 40,080: 9,990,848 bytes, so a limit of 9.97 MB is refused (without the
    nearest search, 9,950,768 bytes, it is not)."""
    from fairanon._memory import memory_limit
    from fairanon.exceptions import MemoryLimitError

    inst = fa.Instance(pd.DataFrame({"age": np.arange(3000)}),
                       fa.Schema([fa.Attribute("age", kind="numeric")]))
    with memory_limit("9.97MB"), pytest.raises(MemoryLimitError) as refused:
        local_search(inst, [fa.KAnonymity(3)], np.arange(3000) // 3, seed=0, max_kicks=0)
    nearest = 5 * 1002 * 8
    assert refused.value.need == (3000 * 104 + 3000 * 7 * 8 + 4 * 2**18 * 8
                                  + 1002 * (40 + 16 + 8 * 128) + nearest) == 9_990_848


@PROPERTY
@given(tables(), st.integers(1, 4), st.integers(0, 3))
def test_a_threshold_that_accepts_worse_descents_still_returns_the_least_loss_found(inst, k, seed):
    """With a threshold of 3 classes' loss, descents that end higher are accepted and the
    search walks on from them; what it returns is the least loss it met, and its count
    is the metrics' exact value."""
    start = random_partition(inst, k, np.random.default_rng(seed))
    assume(start is not None)
    reqs = [fa.KAnonymity(k)]
    found = local_search(inst, reqs, start, objective="ncp", seed=seed, max_kicks=15, accept=3.0)
    rel = release_of(inst, found.groups)
    assert fa.verify(inst, rel, reqs, metrics=False).passed
    exact = objective_value(inst, rel, "ncp")
    assert exact <= loss(inst, start, "ncp") and found.value == pytest.approx(float(exact), abs=1e-9)
    assert found.kept <= found.accepted <= found.kicks


def test_the_threshold_accepts_more_descents_and_the_same_seed_gives_the_same_partition():
    """German credit, 3 QIs, k = 5, from Mondrian's 44 classes (more after the first
    descent's splits): with 2,000 kicks (at least ACCEPT_KICKS = 10 a class) a threshold
    accepts some descents that end higher, which without one are undone; with 100 kicks,
    fewer than 10 a class, it does not apply (the same run as without). The same seed
    and kicks give the same partition."""
    from fairanon.heuristics import moves

    inst = fa.load("german", qi=["job", "savings", "housing"])
    reqs = [fa.KAnonymity(5)]
    start = partition_of(inst, fa.anonymize(inst, reqs, method="mondrian", seed=0))
    assert len(np.unique(start)) * moves.ACCEPT_KICKS == 440
    strict = local_search(inst, reqs, start, objective="ncp", seed=0, max_kicks=2000, accept=0.0)
    loose = local_search(inst, reqs, start, objective="ncp", seed=0, max_kicks=2000, accept=1.0)
    again = local_search(inst, reqs, start, objective="ncp", seed=0, max_kicks=2000, accept=1.0)
    assert loose.accepted > strict.accepted
    assert np.array_equal(loose.groups, again.groups) and loose.value == again.value
    for found in (strict, loose):
        assert found.value == pytest.approx(float(loss(inst, found.groups, "ncp")), abs=1e-9)
    few = local_search(inst, reqs, start, objective="ncp", seed=0, max_kicks=100, accept=1.0)
    fewer = local_search(inst, reqs, start, objective="ncp", seed=0, max_kicks=100, accept=0.0)
    assert few.accepted == fewer.accepted and np.array_equal(few.groups, fewer.groups)
    with pytest.raises(InvalidParameterError, match="'accept' parameter"):
        local_search(inst, reqs, start, accept=-1.0)
