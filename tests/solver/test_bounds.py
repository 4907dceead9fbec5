"""Lower bounds never exceed a proven optimum: the per-record bound and the LP bound
against brute force on tiny random tables (every objective) and against the exact model
on German credit; the LP bound's Lagrangian at any duals, and its column generation
against the LP over every class solved directly."""

import itertools
import math
from fractions import Fraction
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from _exact_oracle import Table, partition_optimum
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_bruteforce import MONOTONE_FAMILIES, tables

import fairanon as fa
import fairanon.models.bounds as bounds_module
from fairanon.methods.cpsat import cpsat
from fairanon.methods.lns import best_bound
from fairanon.models.bounds import _record_costs, lower_bound
from fairanon.models.objectives import OBJECTIVES, objective_value
from fairanon.release import Release, Status
from fairanon.solver.bounds import LP_OBJECTIVES, _closure_model, lp_bound
from fairanon.solver.local_recoding import encode

PROPERTY = settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])
FEWER = settings(PROPERTY, max_examples=20)


@PROPERTY
@given(data=st.data(), inst=tables(max_rows=8))
def test_bounds_never_exceed_the_brute_force_optimum(data, inst):
    reqs = data.draw(st.sampled_from(MONOTONE_FAMILIES[:4]))(data.draw)
    objective = data.draw(st.sampled_from(OBJECTIVES))
    optimum = partition_optimum(inst, reqs, recoding="generalization", objective=objective)
    event(f"{objective}: {'infeasible' if optimum is None else 'feasible'}")
    if optimum is None:
        return
    per_record = lower_bound(inst, reqs, objective)
    assert per_record.value <= optimum, (per_record, optimum)
    ascent = lower_bound(inst, reqs, objective, ascent=True)
    event(f"ascent raised {ascent.details.get('ascent', {}).get('raised', 0) > 0}")
    assert per_record.value <= ascent.value <= optimum, (per_record, ascent, optimum)
    if objective in LP_OBJECTIVES:
        lp = lp_bound(inst, reqs, objective)
        assert lp is not None and lp.complete
        assert lp.value <= optimum, (lp, optimum)
        if len(reqs) == 1:  # the LP bound holds the per-record one (its Lagrangian at u = m)
            assert per_record.value <= lp.value, (per_record, lp)
            # the raised multipliers are a feasible point of the LP's dual
            assert ascent.value <= lp.value, (ascent, lp)


@PROPERTY
@given(data=st.data(), inst=tables(max_rows=9))
def test_the_ascent_skips_only_types_that_cannot_rise(data, inst):
    """The ascent does not search the types of a box left with no slack: searching every
    type (NO_GAIN below any slack, so no box counts as tight) raises no more, beyond
    raises of at most NO_GAIN per record, and takes at least as many searches."""
    reqs = [fa.KAnonymity(data.draw(st.integers(2, 3)))]
    objective = data.draw(st.sampled_from(["ncp", "lm", "stars"]))
    calls = []
    real = bounds_module._least_excess

    def spy(*args):
        calls.append(1)
        return real(*args)

    with mock.patch.object(bounds_module, "_least_excess", spy):
        skipping = lower_bound(inst, reqs, objective, ascent=True)
        searched = len(calls)
        with mock.patch.object(bounds_module, "NO_GAIN", -math.inf):
            every = lower_bound(inst, reqs, objective, ascent=True)
    event(f"searches saved {searched < len(calls) - searched}")
    assert searched <= len(calls) - searched
    # raises of at most NO_GAIN (times k / w) that the skip leaves out, and what they take
    # from the types raised after them
    slack = 2 * inst.n_rows * Fraction(bounds_module.NO_GAIN) * reqs[0].k
    assert abs(every.value - skipping.value) <= slack, (skipping, every)


@PROPERTY
@given(data=st.data(), inst=tables(max_rows=9))
def test_the_ascent_in_two_processes_never_exceeds_the_brute_force_optimum(data, inst):
    """Two types searched at the same multipliers, the second in a forked process, each
    raised by half its least slack: the bound stays below the optimum (and the LP),
    whatever the pairs."""
    reqs = [fa.KAnonymity(data.draw(st.integers(2, 3)))]
    objective = data.draw(st.sampled_from(["ncp", "lm", "stars"]))
    optimum = partition_optimum(inst, reqs, recoding="generalization", objective=objective)
    if optimum is None:
        return
    # Pairs from the first types on, and no slack small enough to be taken whole alone.
    with mock.patch.object(bounds_module, "PAIRED_TYPES", 0), \
            mock.patch.object(bounds_module, "WHOLE_RAISE", 0.0):
        paired = lower_bound(inst, reqs, objective, ascent=True, processes=2)
    event(f"searched in pairs {paired.details.get('ascent', {}).get('paired', 0) > 0}")
    assert paired.value <= optimum, (paired, optimum)
    if objective in LP_OBJECTIVES:
        lp = lp_bound(inst, reqs, objective)
        assert paired.value <= lp.value, (paired, lp)


@FEWER
@given(data=st.data(), inst=tables(max_rows=9))
def test_the_records_searched_in_two_processes_give_the_same_bound(data, inst):
    """m(r) and the shared cost, every other type searched in a forked process: the same
    value, type for type, as in one process (each process keeps the boxes its own
    searches found, so a search may start from another radius, which changes its result
    only when it is cut; none is on tables this small)."""
    reqs = data.draw(st.sampled_from(MONOTONE_FAMILIES[:4]))(data.draw)
    objective = data.draw(st.sampled_from(["ncp", "lm", "stars"]))
    alone = lower_bound(inst, reqs, objective, processes=1)
    with mock.patch.object(bounds_module, "PAIRED_TYPES", 0):
        split = lower_bound(inst, reqs, objective, processes=2)
    assert split.value == alone.value
    for key in ("solved", "quick", "capped", "unsolved", "shared"):
        assert split.details.get(key) == alone.details.get(key), key


def test_the_ascent_searches_in_pairs_on_german_credit():
    """German credit (3 QIs, NCP, k = 5): the pairs' raises are a point of the LP's dual
    too, below the LP solved by column generation, and above the shared cost."""
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    lp = lp_bound(inst, reqs, "ncp")
    assert lp.complete
    shared = lower_bound(inst, reqs, "ncp")
    with mock.patch.object(bounds_module, "PAIRED_TYPES", 0):
        paired = lower_bound(inst, reqs, "ncp", ascent=True, processes=2)
    assert paired.details["ascent"]["paired"] > 0
    assert shared.value < paired.value <= lp.value, (shared, paired, lp)


def _searched_order(unsearched_first: float) -> list:
    """The types the ascent searches on German credit (3 QIs, NCP, k = 5), in order."""
    order = []
    search = bounds_module._ascent_search

    def recorded(t, *args):
        order.append(t)
        return search(t, *args)

    with mock.patch.object(bounds_module, "UNSEARCHED_FIRST", unsearched_first), \
            mock.patch.object(bounds_module, "_ascent_search", recorded):
        lower_bound(_german(), [fa.KAnonymity(5)], "ncp", ascent=True, processes=1)
    return order


def test_the_ascent_searches_the_types_not_searched_yet_first():
    """Counted far above the others, every type is searched once before any is searched
    again; counted as the others, some type is searched again before another's first
    search."""
    for factor, first_all in ((1e12, True), (1.0, False)):
        order = _searched_order(factor)
        firsts = [i for i, t in enumerate(order) if t not in order[:i]]
        again = [i for i, t in enumerate(order) if t in order[:i]]
        assert again, factor
        assert (max(firsts) < min(again)) == first_all, factor


def test_a_search_starts_below_every_box_known_to_hold_its_type():
    """German credit (3 QIs, NCP, k = 5): each search starts from at most the slack that
    the box its type's last search found had then, and that of each of the last
    KNOWN_BOXES boxes found around other types that hold it (a box around one type is
    one around each type it holds where the covers nest): less now, their records
    having risen, than the type's own box's, often larger."""
    last, others, checked = {}, {}, [0]
    search = bounds_module._ascent_search

    def recorded(t, best0, lam, types, *args):
        known = ([last[t]] if t in last else []) + others.get(t, [])[-bounds_module.KNOWN_BOXES:]
        if known:
            assert best0 <= min(known) + 1e-9, (t, best0, known)
            checked[0] += 1
        how, rows, box = search(t, best0, lam, types, *args)
        if rows is not None and how == "searched":
            slack = float(box) - bounds_module._top_sum(lam[rows], types.weight[rows], 5) / 5
            last[t] = slack
            for u in rows.tolist():
                if u != t:
                    others.setdefault(u, []).append(slack)
        return how, rows, box

    with mock.patch.object(bounds_module, "_ascent_search", recorded):
        lower_bound(_german(), [fa.KAnonymity(5)], "ncp", ascent=True, processes=1)
    assert checked[0] > 0


@pytest.mark.parametrize("k", [3, 5])
def test_the_shared_costs_second_pass_stays_below_the_lp(k):
    """German credit (3 QIs, NCP): the shared cost taken again at the multipliers it
    raised raises types, and the multipliers stay feasible for the LP's dual: the bound
    is below the solved LP (for k = 3, it reaches it, but for its margins)."""
    inst = _german()
    found = lower_bound(inst, [fa.KAnonymity(k)], "ncp", ascent=True, processes=1)
    lp = lp_bound(inst, [fa.KAnonymity(k)], "ncp")
    assert lp.complete and found.details["shared_again"]["raised"] > 0
    assert found.value <= lp.value, (found.value, lp.value)
    if k == 3:
        assert found.value >= lp.value - Fraction(1, 10**6), (found.value, lp.value)


def test_the_second_pass_searches_below_the_boxes_the_first_found():
    """German credit (the 7 QIs of ``benchmarks/exact.py``, NCP, k = 5; the ascent left
    out): each search of the shared cost's second pass starts from at most the excess,
    at the raised multipliers, of every box the first pass found that holds its type
    (where the covers nest, a box around each)."""
    shared, search = bounds_module._shared, bounds_module._excess_search
    boxes, checked = [], [0]

    def second(dims, types, k, need_l, deadline, processes=1, earlier=None):
        boxes[:] = list((earlier or {}).values())
        try:
            return shared(dims, types, k, need_l, deadline, processes, earlier)
        finally:
            boxes.clear()

    def recorded(t, lam, best0, types, *args):
        holding = [float(cost) - bounds_module._top_sum(lam[rows], types.weight[rows], 5) / 5
                   for rows, cost in boxes if t in rows.tolist()]
        if holding:
            assert best0 <= min(holding) + 1e-9, (t, best0, min(holding))
            checked[0] += 1
        return search(t, lam, best0, types, *args)

    inst = _german7()
    with mock.patch.object(bounds_module, "_shared", second), \
            mock.patch.object(bounds_module, "_excess_search", recorded), \
            mock.patch.object(bounds_module, "_ascent", lambda *args: (0, {})):
        lower_bound(inst, [fa.KAnonymity(5)], "ncp", ascent=True, processes=1)
    assert checked[0] > 0


def _german7():
    return fa.load("german", qi=["personal_status", "job", "savings", "housing", "employment",
                                 "credit_history", "purpose"], roles={"personal_status": "qi"})


def test_a_shared_search_starts_below_the_boxes_found_before_it_in_its_pass():
    """German credit (7 QIs, NCP, k = 5, the shared cost alone, one process): each search
    starts from at most the excess of every box an earlier search of the pass found that
    holds its type (the multipliers do not change within a pass)."""
    search, box_cost = bounds_module._excess_search, bounds_module._box_cost
    found_boxes, last, checked = [], [], [0]

    def recorded(t, lam, best0, types, *args):
        holding = [e for rows, e in found_boxes if t in rows]
        if holding:
            assert best0 <= min(holding) + 1e-9, (t, best0, min(holding))
            checked[0] += 1
        found, how, cand = search(t, lam, best0, types, *args)
        last[:] = [(found, cand, lam, types.weight)] if found is not None else []
        return found, how, cand

    def costed(dims, idx, t, cand, picks):
        cost = box_cost(dims, idx, t, cand, picks)
        found, cand_, lam, weight = last[0]
        rows = cand_[found[1]]
        excess = float(cost) - bounds_module._top_sum(lam[rows], weight[rows], 5) / 5
        found_boxes.append((set(rows.tolist()), excess))
        return cost

    with mock.patch.object(bounds_module, "_excess_search", recorded), \
            mock.patch.object(bounds_module, "_box_cost", costed):
        lower_bound(_german7(), [fa.KAnonymity(5)], "ncp", processes=1)
    assert checked[0] > 0


def test_the_ascent_starts_each_type_below_the_box_the_shared_cost_found_for_it():
    """German credit (7 QIs, NCP, k = 5): a type's first search in the ascent starts from
    at most the slack, at the multipliers then, of the box the shared cost's search (of
    either pass) found for it."""
    ascent, search = bounds_module._ascent, bounds_module._ascent_search
    given, searched, checked = {}, set(), [0]

    def kept(dims, types, k, need_l, added, boxes, *args):
        given.update(boxes)
        return ascent(dims, types, k, need_l, added, boxes, *args)

    def recorded(t, best0, lam, types, *args):
        if t in given and t not in searched:
            rows, cost = given[t]
            slack = float(cost) - bounds_module._top_sum(lam[rows], types.weight[rows], 5) / 5
            assert best0 <= slack + 1e-9, (t, best0, slack)
            checked[0] += 1
        searched.add(t)
        return search(t, best0, lam, types, *args)

    with mock.patch.object(bounds_module, "_ascent", kept), \
            mock.patch.object(bounds_module, "_ascent_search", recorded):
        lower_bound(_german7(), [fa.KAnonymity(5)], "ncp", ascent=True, processes=1)
    assert checked[0] > 0


def test_the_ascent_searches_in_one_or_two_processes():
    with pytest.raises(fa.InvalidParameterError, match="1 or 2 processes"):
        lower_bound(fa.load("dewri_t1"), [fa.KAnonymity(2)], "ncp", ascent=True, processes=3)


def test_the_ascent_raises_the_types_of_a_tight_box_where_covers_do_not_nest():
    """LM on ordered attributes whose hierarchy nodes are no runs of values takes the
    cheaper of a range and a node: a box around one type that holds another is then no
    box around the other, which may still rise. The only release is the whole table as
    one class, and the ascent reaches its loss but for its margins."""
    nodes = fa.Hierarchy.from_mapping({"*": {"X": ["a", "c", "e"], "Y": ["b", "d", "f"]}})
    attrs = [fa.Attribute(name, kind="ordered", order=list("abcdef"), hierarchy=nodes)
             for name in ("q0", "q1")]
    inst = fa.Instance(pd.DataFrame({"q0": list("aaaa"), "q1": list("abcd")}),
                       fa.Schema(attrs), name="unnested")
    reqs = [fa.KAnonymity(4)]
    optimum = partition_optimum(inst, reqs, recoding="generalization", objective="lm")
    found = lower_bound(inst, reqs, "lm", ascent=True)
    assert found.details["ascent"]["raised"] > 0
    margins = 4 * 3 * bounds_module.SHARED_MARGIN  # the shared cost's two passes', the ascent's
    assert optimum - margins <= found.value <= optimum, (found.value, optimum)


@PROPERTY
@given(data=st.data(), inst=tables(max_rows=8))
def test_pruning_by_any_release_keeps_the_bound_valid(data, inst):
    """A release's per-record costs prune the search; one that breaks k (classes of one
    record) or is costly must not push the bound above the optimum."""
    reqs = [fa.KAnonymity(data.draw(st.integers(2, 3)))]
    objective = data.draw(st.sampled_from(["ncp", "lm", "stars"]))
    optimum = partition_optimum(inst, reqs, recoding="generalization", objective=objective)
    if optimum is None:
        return
    identity = Release(inst.table[[c for c in inst.table.columns]], np.arange(inst.n_rows))
    for release in (identity, fa.anonymize(inst, [fa.KAnonymity(1)], method="mondrian")):
        assert lower_bound(inst, reqs, objective, release=release).value <= optimum


@FEWER
@given(data=st.data(), inst=tables(max_rows=8))
def test_record_costs_add_up_to_the_release_objective(data, inst):
    """The exact per-record costs that prune the search (kept as distinct sorted costs
    and each record's index among them) add up to the objective as the metrics read it."""
    objective = data.draw(st.sampled_from(["ncp", "lm", "stars"]))
    k = data.draw(st.integers(1, 3))
    release = fa.anonymize(inst, [fa.KAnonymity(k)], method="mondrian")
    found = _record_costs(inst, release, objective)
    assert found is not None
    costs, rank = found
    assert costs == sorted(set(costs))
    assert sum((costs[i] for i in rank.tolist()), Fraction(0)) == objective_value(inst, release, objective)


def test_record_costs_are_exact_with_fractional_numbers():
    """Float values put the range costs over large denominators (beyond int64 once
    added up): the record costs stay exact and add up to the objective."""
    table = pd.DataFrame({"x": [0.1, 0.7, 0.3, 2.9, 1.1, 0.35], "y": [1.5, 0.25, 3.3, 0.1, 2.2, 0.6]})
    schema = fa.Schema([fa.Attribute("x", kind="numeric"), fa.Attribute("y", kind="numeric")])
    inst = fa.Instance(table, schema)
    release = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian")
    for objective in ("ncp", "lm"):
        costs, rank = _record_costs(inst, release, objective)
        assert max(c.denominator for c in costs) > 2**62
        assert sum((costs[i] for i in rank.tolist()), Fraction(0)) == objective_value(inst, release, objective)


def _set_partitioning_lp(inst, k, objective) -> float:
    """The LP relaxation of set partitioning over every class of at least k records of
    one protected value, each at the cost of its cheapest covering labels, solved
    directly (HiGHS) -- independent of the column generation."""
    from scipy.optimize import linprog

    enc = encode(inst, [fa.KAnonymity(k)])
    table = Table(inst, [fa.KAnonymity(k)])
    n = inst.n_rows
    values = [[int(s.row_value[r]) for s in enc.spaces] for r in range(n)]
    table_of = {"ncp": lambda s: s.ncp, "lm": lambda s: s.lm}[objective]
    blocks, costs = [], []
    rows = [space.masks for space in enc.spaces]  # made once: a space of runs builds them when read
    for size in range(k, n + 1):
        for block in itertools.combinations(range(n), size):
            if len({table.protected[r] for r in block}) > 1:
                continue
            cost = Fraction(0)
            for a, (space, masks) in enumerate(zip(enc.spaces, rows)):
                covered = {values[r][a] for r in block}
                fits = [j for j in range(len(masks)) if all(masks[j, v] for v in covered)]
                cost += size * min(table_of(space)[j] for j in fits)
            blocks.append(block)
            costs.append(float(cost))
    a_eq = np.zeros((n, len(blocks)))
    for c, block in enumerate(blocks):
        a_eq[list(block), c] = 1
    found = linprog(costs, A_eq=a_eq, b_eq=np.ones(n), bounds=(0, None), method="highs")
    assert found.status == 0
    return found.fun


@FEWER
@given(data=st.data(), inst=tables(max_rows=8))
def test_lagrangian_bound_holds_at_any_duals(data, inst):
    """The Lagrangian bound of the LP module holds for every dual vector u, not only
    the LP's: random (also negative) duals never give more than the optimum."""
    k = data.draw(st.integers(2, 3))
    objective = data.draw(st.sampled_from(LP_OBJECTIVES))
    model = _closure_model(inst, k, objective, 10**6, None)
    optimum = partition_optimum(
        inst, [fa.KAnonymity(k)], recoding="generalization", objective=objective
    )
    # Both give up exactly when some protected value has fewer than k records.
    assert (model is None) == (optimum is None)
    if model is None:
        return
    top = float(model.pricer.cost.max()) + 1
    u = np.array(
        data.draw(
            st.lists(
                st.floats(-top, 2 * top, allow_nan=False),
                min_size=model.enc.n_types,
                max_size=model.enc.n_types,
            )
        )
    )
    bound = model.pricer.lagrangian(u)[0] / model.scale
    assert bound <= float(optimum) + 1e-9, (bound, optimum)


@FEWER
@given(data=st.data(), inst=tables(max_rows=8))
def test_column_generation_reaches_the_lp_under_any_stabilisation(data, inst):
    """With any dual smoothing and however few columns per round, the LP bound stops
    at the LP's value (solved directly over every class) and never above the optimum."""
    k = data.draw(st.integers(2, 3))
    objective = data.draw(st.sampled_from(["ncp", "lm"]))
    smoothing = data.draw(st.sampled_from([0.0, 0.5, 0.9]))
    columns = data.draw(st.sampled_from([1, 3, 1000]))
    reqs = [fa.KAnonymity(k)]
    optimum = partition_optimum(inst, reqs, recoding="generalization", objective=objective)
    lp = lp_bound(inst, reqs, objective, smoothing=smoothing, columns=columns)
    if optimum is None or lp is None:
        return
    assert lp.complete and lp.value <= optimum, (lp, optimum)
    direct = _set_partitioning_lp(inst, k, objective)
    # The bound is the LP value rounded up to the objective's grid.
    assert direct - 1e-6 <= float(lp.value), (lp, direct)
    assert lower_bound(inst, reqs, objective).value <= lp.value


@FEWER
@given(data=st.data(), inst=tables(max_rows=7))
def test_quicker_per_record_bound_holds(data, inst):
    """With every record on the quicker bound (the larger of the (k-1)-th smallest summed
    D and the per-attribute narrowest covers), the bound stays at most the exact
    per-record bound and the brute-force optimum."""
    reqs = data.draw(st.sampled_from(MONOTONE_FAMILIES[:2]))(data.draw)
    objective = data.draw(st.sampled_from(["ncp", "lm", "stars", "generalized"]))
    optimum = partition_optimum(inst, reqs, recoding="generalization", objective=objective)
    if optimum is None:
        return
    exact = lower_bound(inst, reqs, objective, shared=False)
    saved = bounds_module.MAX_CANDIDATES
    bounds_module.MAX_CANDIDATES = 0
    try:
        quick = lower_bound(inst, reqs, objective, shared=False)
        # The shared cost at the quicker m(r) is another Lagrangian bound (lam below m),
        # not always below the one at the exact m(r); both hold.
        quick_shared = lower_bound(inst, reqs, objective)
    finally:
        bounds_module.MAX_CANDIDATES = saved
    event(f"quick on {quick.details.get('quick', 0)} types")
    assert quick.value <= exact.value <= optimum, (quick, exact, optimum)
    assert quick.value <= quick_shared.value <= optimum, (quick_shared, optimum)


def test_per_record_search_starts_at_the_nearest_records_box(monkeypatch):
    """Two numeric QIs of distinct values and no release: every record's search runs
    below the box of its k - 1 nearest records (by summed distance), not below the
    all-'*' cost, so with a node cap far below what the latter needs each m(r) is
    exact: the sum of m(r) equals the brute-force minimum over every k - 1 others of
    the ranges' widths."""
    rng = np.random.default_rng(3)
    n, k = 40, 3
    df = pd.DataFrame({"x": rng.permutation(1000)[:n], "y": rng.permutation(1000)[:n]})
    inst = fa.Instance(df, fa.Schema([fa.Attribute("x", kind="numeric"),
                                      fa.Attribute("y", kind="numeric")]))
    pos = {c: [Fraction(int(v) - int(df[c].min()), int(df[c].max() - df[c].min()))
               for v in df[c]] for c in ("x", "y")}

    def width(rows, c):
        return max(pos[c][i] for i in rows) - min(pos[c][i] for i in rows)

    expected = sum(
        min(width((r, *others), "x") + width((r, *others), "y")
            for others in itertools.combinations([s for s in range(n) if s != r], k - 1))
        for r in range(n)
    )
    monkeypatch.setattr(bounds_module, "MAX_NODES", 40)
    found = lower_bound(inst, [fa.KAnonymity(k)], "lm", shared=False)
    assert found.details["solved"] == n and found.details["capped"] == 0
    assert found.value == expected


def test_the_ascent_needs_the_shared_cost():
    with pytest.raises(fa.InvalidParameterError, match="ascent=True needs shared=True"):
        lower_bound(fa.load("dewri_t1"), [fa.KAnonymity(2)], "ncp", shared=False, ascent=True)


def _german():
    return fa.load(
        "german", qi=["personal_status", "job", "savings"], roles={"personal_status": "qi"}
    )


@pytest.mark.slow
def test_bounds_against_the_proven_optimum_on_german_credit():
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    optimum = cpsat(inst, reqs, objective="ncp", seed=0, hint=None)
    assert optimum.status == Status.OPTIMAL
    per_record = lower_bound(inst, reqs, "ncp", release=optimum)
    lp = lp_bound(inst, reqs, "ncp", release=optimum)
    assert per_record.complete and lp.complete
    assert per_record.value <= lp.value <= optimum.objective
    # the raised multipliers: a point of the LP's dual, above the shared cost's
    ascent = lower_bound(inst, reqs, "ncp", release=optimum, ascent=True)
    assert per_record.value < ascent.value <= lp.value
    # The LP bound is within 4 % of the optimum (0.01293 against 0.01340 in GCP).
    assert lp.value >= Fraction(96, 100) * optimum.objective
    best = best_bound(inst, reqs, "ncp", release=optimum)
    assert best.value == lp.value and best.method.startswith("LP")


def _time_given(monkeypatch, lp_applies: bool) -> dict:
    """The time limit lns's best_bound gives each bound, in the order it calls them; the
    LP bound answers None at once unless `lp_applies`."""
    import fairanon.methods.lns as lns_module

    given = {}

    def lp(*args, time_limit=None, **kwargs):
        given["lp"] = time_limit
        return lp_bound(*args, **kwargs) if lp_applies else None

    def per_record(*args, time_limit=None, **kwargs):
        given["per_record"] = time_limit
        given["ascent"] = kwargs.get("ascent")
        return lower_bound(*args, **kwargs)

    monkeypatch.setattr(lns_module, "lp_bound", lp)
    monkeypatch.setattr(lns_module, "lower_bound", per_record)
    return given


def test_per_record_bound_gets_the_time_the_lp_bound_leaves(monkeypatch):
    """Without l-diversity the LP bound goes first with 90 % of the time; where it does
    not apply (None at once, as on tables whose join closure is too large) the
    per-record bound gets the rest of the time, not half of it."""
    import fairanon.methods.lns as lns_module

    given = _time_given(monkeypatch, lp_applies=False)
    inst = fa.load("dewri_t1")
    found = best_bound(inst, [fa.KAnonymity(2)], "ncp", time_limit=10.0)
    assert found.method == "per-record"
    assert given["lp"] == 10.0 * lns_module.LP_BOUND_SHARE < 10.0
    assert 9.0 < given["per_record"] <= 10.0
    assert list(given) == ["lp", "per_record", "ascent"] and given["ascent"]


def test_no_ascent_after_a_solved_lp(monkeypatch):
    """The ascent's multipliers are a point of the LP's dual, so after an LP solved to
    its optimum the per-record bound does not spend the rest of the time on it."""
    given = _time_given(monkeypatch, lp_applies=True)
    found = best_bound(fa.load("dewri_t1"), [fa.KAnonymity(2)], "ncp", time_limit=10.0)
    assert found.method.startswith("LP") and found.complete
    assert given["ascent"] is False


def test_per_record_bound_goes_first_under_l_diversity(monkeypatch):
    """Only the per-record bound counts l-diversity, so under it the per-record bound
    goes first with half the time and the LP gets what it leaves."""
    given = _time_given(monkeypatch, lp_applies=True)
    inst = fa.load("dewri_t1")
    reqs = [fa.KAnonymity(2), fa.LDiversity(2)]
    found = best_bound(inst, reqs, "ncp", time_limit=10.0)
    assert list(given) == ["per_record", "ascent", "lp"]
    assert given["per_record"] == 5.0 and 5.0 < given["lp"] <= 10.0
    assert found.value >= lower_bound(inst, reqs, "ncp").value


def test_column_generation_ends_where_smoothed_duals_misprice():
    """Columns priced at the smoothed duals that do not enter the LP were added round
    after round with the LP unchanged (found by the property test above, seed 6)."""
    table = pd.DataFrame({"q0": [1, 1, 4, 1, 2, 2], "q1": [1, 4, 4, 1, 4, 4]})
    width2 = fa.IntervalHierarchy(widths=(2.0,), origin=0.0)
    schema = fa.Schema([fa.Attribute("q0", kind="numeric", intervals=width2),
                        fa.Attribute("q1", kind="numeric", intervals=width2)])
    inst = fa.Instance(table, schema)
    reqs = [fa.KAnonymity(2)]
    lp = lp_bound(inst, reqs, "generalized", time_limit=30)
    assert lp is not None and lp.complete, lp
    assert lp.value <= partition_optimum(inst, reqs, recoding="generalization", objective="generalized")


def test_discernibility_bound_is_the_most_even_split():
    inst = _german()
    for k in (5, 7, 1000):
        bound = lower_bound(inst, [fa.KAnonymity(k)], "discernibility").value
        q = 1000 // k
        assert bound == sum(s * s for s in np.diff(np.linspace(0, 1000, q + 1).round()).astype(int))


def test_l_diversity_strengthens_the_per_record_bound():
    inst = fa.load("german", qi=["job", "savings", "housing"])
    k_only = lower_bound(inst, [fa.KAnonymity(3)], "ncp").value
    with_l = lower_bound(inst, [fa.KAnonymity(3), fa.LDiversity(2)], "ncp").value
    assert with_l >= k_only > 0


def test_no_bound_without_privacy_and_time_limit_marks_incomplete():
    inst = _german()
    assert lower_bound(inst, [], "ncp").value == 0
    assert lp_bound(inst, [], "ncp") is None
    tight = lower_bound(inst, [fa.KAnonymity(5)], "ncp", time_limit=1e-9)
    assert not tight.complete and tight.value <= lower_bound(inst, [fa.KAnonymity(5)], "ncp").value
    with pytest.raises(fa.InvalidParameterError):
        lower_bound(inst, [fa.KAnonymity(5)], "nope")


@pytest.mark.slow
@settings(deadline=None, max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), inst=tables(max_rows=9))
def test_bounds_never_exceed_the_brute_force_optimum_more(data, inst):
    test_bounds_never_exceed_the_brute_force_optimum.hypothesis.inner_test(data, inst)


def test_lp_bound_keeps_its_time_limit():
    """German credit with 7 quasi-identifiers: the candidates' join closure alone takes
    several seconds; with a 1 s limit the LP bound stops there (None) in about 1 s."""
    import time

    from fairanon.solver.bounds import lp_bound

    inst = fa.load(
        "german",
        qi=["personal_status", "job", "savings", "housing", "employment", "credit_history", "purpose"],
        roles={"personal_status": "qi"},
    )
    clock = time.perf_counter()
    found = lp_bound(inst, [fa.KAnonymity(5)], "ncp", time_limit=1.0)
    assert time.perf_counter() - clock <= 1.0 + 2.0
    assert found is None or found.value >= 0


def test_lp_bound_returns_the_per_record_level_when_time_ends_before_the_lp():
    """A limit that ends after the closure but before any LP round still gives the
    Lagrangian bound at the per-record duals: at least the per-record bound."""
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    started = lp_bound(inst, reqs, "ncp", columns=1, time_limit=1e-9)
    assert started is None  # nothing built in no time
    from unittest import mock

    import fairanon.solver.bounds as lp_module

    # The clock runs out as soon as the model is built: no LP round runs.
    real = lp_module._closure_model

    def build_then_expire(*args):
        model = real(*args[:4], None)
        clock.append(True)
        return model

    clock: list = []
    ticks = iter(range(10**6))

    def perf_counter():
        return 0.0 if not clock else 1e9 + next(ticks)

    with mock.patch.object(lp_module, "_closure_model", build_then_expire), mock.patch.object(
        lp_module.time, "perf_counter", perf_counter
    ):
        found = lp_bound(inst, reqs, "ncp", time_limit=10.0)
    assert found is not None and not found.complete and found.details["rounds"] == 0
    # In this model the Lagrangian at the per-record duals is the per-record bound.
    assert found.value == lower_bound(inst, reqs, "ncp", shared=False).value


def test_the_lp_bound_says_when_its_types_do_not_fit_the_memory_limit(monkeypatch):
    """A refusal by the memory limit while the LP's types are encoded reaches best_bound,
    which says why the LP was not computed (it was read as "the LP does not apply")."""
    import importlib

    bounds_module = importlib.import_module("fairanon.solver.bounds")

    def refused(*args, **kwargs):
        raise fa.MemoryLimitError("the labels would need 9 GB", need=9 << 30, limit=1 << 30)

    monkeypatch.setattr(bounds_module, "encode", refused)
    inst = fa.load("dewri_t1")
    found = best_bound(inst, [fa.KAnonymity(2)], "ncp", time_limit=10.0)
    assert found.method == "per-record" and "the labels would need 9 GB" in found.details["lp_bound"]


def test_bounds_out_of_time_stop_before_their_set_up():
    """With no time (German credit, k = 5): the per-record bound is 0, incomplete, and
    says it stopped before bounding any record; the LP bound's types are not encoded
    (BuildStopped before the first attribute's labels), so it does not apply."""
    import time

    from fairanon.solver.local_recoding.encoding import BuildStopped

    inst = fa.load("german")
    reqs = [fa.KAnonymity(5)]
    start = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    found = lower_bound(inst, reqs, "ncp", release=start, time_limit=0)
    assert found.value == 0 and not found.complete and "stopped" in found.details
    with pytest.raises(BuildStopped, match="building the labels of"):
        encode(inst, reqs, deadline=time.perf_counter() - 1)
    assert lp_bound(inst, reqs, "ncp", release=start, time_limit=0) is None


def test_per_record_bound_stops_after_reading_the_types_past_its_deadline(monkeypatch):
    """The deadline passing while the records' types are read (German credit, k = 5):
    the per-record bound is 0, incomplete, says where it stopped, and builds none of the
    searches' indexes (at the KDD census' scale their set-up alone took 0.3 s past a
    deadline of 0.25 s)."""

    def never(*args, **kwargs):
        raise AssertionError("an index was built past the deadline")

    inst = fa.load("german")
    reqs = [fa.KAnonymity(5)]
    start = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    monkeypatch.setattr(bounds_module, "_Index", never)
    calls = _clock_passing_at(monkeypatch, bounds_module, "unique_rows")
    found = lower_bound(inst, reqs, "ncp", release=start, time_limit=10.0, ascent=True)
    assert calls == ["unique_rows"]
    assert found.value == 0 and not found.complete
    assert "after the records' types" in found.details["stopped"]


def _closure_minima(model, u):
    """Per protected group, the least mean_k over the join closure's vectors at u."""
    _, mean, _ = model.pricer.lagrangian(u)
    return [float(mean[members].min()) for members, _ in model.pricer.groups]


def _random_duals(data, model):
    top = float(model.pricer.cost.max()) + 1
    return np.array(data.draw(st.lists(st.floats(-top, 2 * top, allow_nan=False),
                                       min_size=model.enc.n_types, max_size=model.enc.n_types)))


@FEWER
@given(data=st.data(), inst=tables(max_rows=8))
def test_pricing_search_finds_the_closure_minimum(data, inst):
    """The branch and bound over the labels finds, at any duals, the least mean_k of each
    protected group that enumerating the join closure finds; and a search cut short by
    its deadline after any number of looks at the clock gives at most that least value."""
    from unittest import mock

    import fairanon.solver.pricing as pricing

    k = data.draw(st.integers(2, 3))
    objective = data.draw(st.sampled_from(["ncp", "lm"]))
    model = _closure_model(inst, k, objective, 10**6, None)
    if model is None:
        return
    u = _random_duals(data, model)
    search = pricing.LabelSearch(model.enc, k, objective)
    assert search.scale == model.scale
    looks = data.draw(st.integers(1, 6))
    # Nodes of at most this many types take the pairwise bound over their own records,
    # larger ones over their group's (0: every node).
    node_pairs = data.draw(st.sampled_from([0, pricing.NODE_PAIRS]))
    for (members, _), least in zip(model.pricer.groups, _closure_minima(model, u)):
        types = np.flatnonzero(model.enc.protected == model.vectors[int(members[0])][0])
        with mock.patch.object(pricing, "NODE_PAIRS", node_pairs):
            found = search.search(u, types)
        assert found.complete
        assert math.isclose(found.lower, least, rel_tol=1e-9, abs_tol=1e-6), (found, least)
        # Every vector reported below 0 is one, at its mean_k.
        for mean, labels in found.leaves:
            (covered,) = search.covered(types, [labels])
            top = np.sort(np.repeat(u[covered], model.enc.weight[covered]))[::-1][:k]
            assert len(top) == k and mean < 0
            assert math.isclose(mean, search.int_cost(labels) - top.sum() / k, abs_tol=1e-6)
        clock = iter([0.0] * looks + [2.0] * 10**6)
        with mock.patch.object(pricing, "time", mock.Mock(perf_counter=lambda: next(clock))):
            cut = search.search(u, types, deadline=1.0)
        assert cut.lower <= least + 1e-6 * max(1.0, abs(least)), (cut, least)


@settings(PROPERTY, max_examples=10)
@given(data=st.data(), inst=tables(max_rows=6))
def test_lp_bound_priced_by_search_reaches_the_lp(data, inst):
    """Column generation priced by search, without the closure, stops at the value of the
    LP over every class solved directly, and never above the brute-force optimum."""
    k = data.draw(st.integers(2, 3))
    objective = data.draw(st.sampled_from(["ncp", "lm"]))
    reqs = [fa.KAnonymity(k)]
    optimum = partition_optimum(inst, reqs, recoding="generalization", objective=objective)
    lp = lp_bound(inst, reqs, objective, pricing="search", columns=data.draw(st.sampled_from([1, 1000])))
    if optimum is None or lp is None:
        assert optimum is None and lp is None
        return
    assert lp.details["pricing"] == "search" and lp.details["closure"] is None
    assert lp.complete and lp.value <= optimum, (lp, optimum)
    direct = _set_partitioning_lp(inst, k, objective)
    assert direct - 1e-6 <= float(lp.value), (lp, direct)


def test_lp_bound_prices_by_search_where_the_closure_is_too_large():
    """German credit with 3 quasi-identifiers, a cap below its closure of 257 vectors:
    "closure" gives no bound, "auto" searches and reaches the closure's LP value."""
    inst = fa.load("german", qi=["personal_status", "job", "savings"], roles={"personal_status": "qi"})
    reqs = [fa.KAnonymity(5)]
    closure = lp_bound(inst, reqs, "ncp")
    assert closure.complete and closure.details["closure"] == 257
    assert lp_bound(inst, reqs, "ncp", max_vectors=100) is None
    searched = lp_bound(inst, reqs, "ncp", max_vectors=100, pricing="auto")
    assert searched.complete and searched.details["pricing"] == "search"
    assert searched.value == closure.value
    # A release's classes start the LP (columns of their cheapest covering labels).
    start = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    from_release = lp_bound(inst, reqs, "ncp", release=start, pricing="search")
    assert from_release.complete and from_release.value == closure.value
    assert from_release.details["vectors"] >= start.n_groups
    with pytest.raises(fa.InvalidParameterError, match="'pricing' parameter of lp_bound"):
        lp_bound(inst, reqs, "ncp", pricing="nope")


def test_lp_bound_whose_searches_are_cut_at_the_root():
    """A search cut before its root is expanded still bounds the minimum: costs are at
    least 0, so mean_k is at least minus the k largest duals of the records over k (a
    hand computation here); lp_bound whose every search is so cut returns a valid bound
    (at most the closure's LP value), and no bound when a search gives none."""
    from unittest import mock

    import fairanon.solver.pricing as pricing

    inst = fa.load("german", qi=["personal_status", "job", "savings"], roles={"personal_status": "qi"})
    reqs = [fa.KAnonymity(5)]
    enc = encode(inst, reqs)
    search = pricing.LabelSearch(enc, 5, "ncp")
    types = np.arange(enc.n_types)
    u = (types % 7).astype(float)
    cut = search.search(u, types, deadline=0.0)
    # Five records of dual 6 at least (the types t = 6 mod 7 hold more than five).
    assert enc.weight[types % 7 == 6].sum() >= 5
    assert not cut.complete and cut.nodes == 0 and cut.lower == -6.0
    closure = lp_bound(inst, reqs, "ncp")
    late = mock.Mock(perf_counter=lambda: math.inf)
    with mock.patch.object(pricing, "time", late):
        bound = lp_bound(inst, reqs, "ncp", pricing="search", time_limit=60)
    assert not bound.complete and bound.details["searches_cut"] == bound.details["searches"]
    assert 0 <= bound.value <= closure.value
    none = pricing.SearchResult(-math.inf, [], False, 0)
    with mock.patch.object(pricing.LabelSearch, "search", lambda *a, **kw: none):
        assert lp_bound(inst, reqs, "ncp", pricing="search", time_limit=60) is None


def test_pricing_search_reads_its_deadline_inside_a_node_and_its_build():
    """A node's expansion reads the clock after listing its children, after their g and
    after raising g, and every CHILDREN_STEP children pushed: a deadline passed at any of
    those reads stops the search before the next node, with a bound no higher than the
    closure's least mean_k (found by enumerating the closure); building the pairwise
    costs past the deadline stops, and lp_bound then gives no bound."""
    from unittest import mock

    import fairanon.solver.pricing as pricing
    from fairanon.solver.local_recoding.labels import BuildStopped

    inst = fa.load("german", qi=["personal_status", "job", "savings"], roles={"personal_status": "qi"})
    k = 5
    model = _closure_model(inst, k, "ncp", 10**6, None)
    search = pricing.LabelSearch(model.enc, k, "ncp")
    u = (np.arange(model.enc.n_types) % 7).astype(float)
    for (members, _), least in zip(model.pricer.groups, _closure_minima(model, u)):
        types = np.flatnonzero(model.enc.protected == model.vectors[int(members[0])][0])
        for look in range(2, 6):
            clock = iter([0.0] * (look - 1) + [2.0] * 10**6)
            calls = []
            children = search._children
            with mock.patch.object(pricing, "time", mock.Mock(perf_counter=lambda: next(clock))), \
                    mock.patch.object(pricing, "CHILDREN_STEP", 1), \
                    mock.patch.object(search, "_children", lambda *a: calls.append(1) or children(*a)):
                cut = search.search(u, types, deadline=1.0)
            assert not cut.complete and cut.nodes == 1 and len(calls) == 1, (look, cut)
            assert cut.lower <= least + 1e-6 * max(1.0, abs(least)), (look, cut, least)
    with pytest.raises(BuildStopped):
        pricing.LabelSearch(model.enc, k, "ncp", deadline=-math.inf)
    with mock.patch.object(pricing, "check_deadline", mock.Mock(side_effect=BuildStopped("test"))):
        assert lp_bound(inst, [fa.KAnonymity(k)], "ncp", pricing="search", time_limit=60) is None


def test_pricing_search_keeps_lp_bounds_memory_limit():
    """The search's label rows, pairwise costs and per-node arrays are checked against
    lp_bound's memory limit before they are made: a numeric attribute of 150 values
    has 11,325 ranges, 1.7 MB of rows, 180 kB of pairs and 15.3 MB of float64 and bool
    arrays per node (9 bytes per range and value), above a 12 MB limit."""
    m = 150
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"zip": rng.permutation(np.repeat(np.arange(m), 2)),
                       "s": rng.choice(["x", "y"], 2 * m)})
    schema = fa.Schema([fa.Attribute("zip", kind="numeric", intervals=fa.IntervalHierarchy((10, 100, 1000))),
                        fa.Attribute("s", role="sensitive")])
    inst = fa.Instance(df, schema, name="wide")
    with pytest.raises(fa.MemoryLimitError, match="pricing search's label rows") as refused:
        lp_bound(inst, [fa.KAnonymity(5)], "lm", pricing="search", memory_limit="12MB")
    assert refused.value.need == 11_325 * m + 8 * m * m + 9 * 11_325 * m


SMALL_QIS = {
    "tree": (["a", "b", "c", "d"], lambda n: fa.Attribute(
        n, hierarchy=fa.Hierarchy.from_mapping({"*": {"X": ["a", "b"], "Y": ["c", "d"]}}))),
    "flat": (["p", "q", "r"], lambda n: fa.Attribute(n)),
    "ordered": (["lo", "mid", "hi"], lambda n: fa.Attribute(n, kind="ordered", order=["lo", "mid", "hi"])),
    "numeric": ([1, 4, 9], lambda n: fa.Attribute(n, kind="numeric")),
}


@st.composite
def small_qi_tables(draw):
    """Tables of 3 or 4 quasi-identifiers of at most 4 values each and 4 to 12 rows."""
    n = draw(st.integers(4, 12))
    kinds = draw(st.lists(st.sampled_from(sorted(SMALL_QIS)), min_size=3, max_size=4))
    data, attrs = {}, []
    for i, kind in enumerate(kinds):
        values, attribute = SMALL_QIS[kind]
        data[f"q{i}"] = draw(st.lists(st.sampled_from(values), min_size=n, max_size=n))
        attrs.append(attribute(f"q{i}"))
    data["s"] = draw(st.lists(st.sampled_from(["x", "y"]), min_size=n, max_size=n))
    attrs.append(fa.Attribute("s", role="sensitive"))
    return fa.Instance(pd.DataFrame(data), fa.Schema(attrs), name="small")


@PROPERTY
@given(data=st.data(), inst=small_qi_tables())
def test_pricing_search_matches_every_label_combination(data, inst):
    """With 3 or 4 quasi-identifiers the search's minimum of mean_k equals the least
    over every combination of labels (one per attribute) covering at least k records,
    each mean_k computed exactly in fractions from the label spaces' losses."""
    import fairanon.solver.pricing as pricing

    k = data.draw(st.integers(2, 3))
    objective = data.draw(st.sampled_from(["ncp", "lm"]))
    enc = encode(inst, [fa.KAnonymity(k)], max_range_values=4)
    types = np.arange(enc.n_types)
    if enc.weight.sum() < k:
        return
    quarters = data.draw(st.lists(st.integers(-4, 4 * (enc.d + 1)), min_size=enc.n_types,
                                  max_size=enc.n_types))
    u = [Fraction(q, 4) for q in quarters]
    least = None
    tables_ = [space.ncp if objective == "ncp" else space.lm for space in enc.spaces]
    masks = [space.masks for space in enc.spaces]
    for combo in itertools.product(*[range(space.n_labels) for space in enc.spaces]):
        covered = [t for t in types.tolist()
                   if all(masks[a][label, enc.qi[t, a]] for a, label in enumerate(combo))]
        duals = sorted((u[t] for t in covered for _ in range(int(enc.weight[t]))), reverse=True)
        if len(duals) < k:
            continue
        mean = sum(Fraction(table[label]) for table, label in zip(tables_, combo)) - sum(duals[:k]) / k
        least = mean if least is None else min(least, mean)
    search = pricing.LabelSearch(enc, k, objective)
    found = search.search(np.array([float(x * search.scale) for x in u]), types)
    assert found.complete
    assert math.isclose(found.lower / search.scale, least, rel_tol=1e-9, abs_tol=1e-9), (found, least)


def test_pricing_search_keeps_each_groups_pairwise_bounds():
    """The pairwise bounds over a protected group are kept per group: searching a group
    again after another, at the same duals, computes none anew and finds the same
    minimum."""
    from unittest import mock

    import fairanon.solver.pricing as pricing

    inst = fa.load("german", qi=["job", "savings", "housing"])
    enc = encode(inst, [fa.KAnonymity(5)])
    groups = [np.flatnonzero(enc.protected == g) for g in np.unique(enc.protected)]
    assert len(groups) >= 2
    search = pricing.LabelSearch(enc, 5, "ncp")
    u = (np.arange(enc.n_types) % 7).astype(float)
    with mock.patch.object(pricing, "NODE_PAIRS", 0):
        first = [search.search(u, types) for types in groups]
        calls = []
        pairwise = search._pairwise
        with mock.patch.object(search, "_pairwise", lambda *a: calls.append(1) or pairwise(*a)):
            again = search.search(u, groups[0])
    assert not calls and again.lower == first[0].lower


def _groups_table():
    """400 records of 3 small quasi-identifiers in 12 protected groups: 179 types."""
    rng = np.random.default_rng(0)
    n = 400
    df = pd.DataFrame({"a": rng.choice(list("abc"), n), "b": rng.choice(list("xyz"), n),
                       "c": rng.choice(list("pq"), n),
                       "g": rng.choice([f"g{i}" for i in range(12)], n)})
    schema = fa.Schema([fa.Attribute("a"), fa.Attribute("b"), fa.Attribute("c"),
                        fa.Attribute("g", role="protected", protected=["g0"])])
    return fa.Instance(df, schema, name="groups")


def test_pricing_search_counts_its_groups_pairwise_bounds():
    """The pairwise bounds kept per protected group are counted in the search's memory:
    after every group is searched (each node bounded over its group), the search holds
    no more than it says -- its label rows, pairwise costs and kept bounds, measured by
    their arrays' bytes. 12 groups of 3 attributes (4, 4 and 3 labels) over 179 types:
    the bounds kept over all the types per group and attribute left took 12 x 2 x 179 x 8
    = 34,368 bytes, while the search counted 465."""
    from unittest import mock

    import fairanon.solver.pricing as pricing

    enc = encode(_groups_table(), [fa.KAnonymity(3)])
    search = pricing.LabelSearch(enc, 3, "ncp")
    u = (np.arange(enc.n_types) % 5).astype(float)
    with mock.patch.object(pricing, "NODE_PAIRS", 0):
        for g in np.unique(enc.protected):
            assert search.search(u, np.flatnonzero(enc.protected == g)).complete
    kept = [a.nbytes for cache in search._caches.values() for a in cache.values()]
    assert len(kept) == 12 * 2
    held = sum(m.nbytes for m in search.masks) + sum(p.nbytes for p in search.pair) + sum(kept)
    assert held <= search.memory()


def test_pricing_search_refuses_before_building_more_labels_than_fit():
    """An attribute of 1,000 numeric values has 1,000 x 999 / 2 = 499,500 ranges besides
    its values' own: the search would hold 500,500 x 1,000 bytes of label rows and
    8 x 1,000^2 of pairs, and make 9 x 500,500 x 1,000 per node (5.0 GB). lp_bound
    refuses before a single range is built (it built them all, 6.5 s CPU, then refused)."""
    from unittest import mock

    from fairanon.solver.local_recoding import labels as labels_module

    m = 1000
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"zip": rng.permutation(np.arange(m)), "s": rng.choice(["x", "y"], m)})
    schema = fa.Schema([fa.Attribute("zip", kind="numeric"), fa.Attribute("s", role="sensitive")])
    inst = fa.Instance(df, schema, name="wide")
    built = mock.Mock(side_effect=AssertionError("a range was built"))
    with mock.patch.object(labels_module, "format_range", built), \
            pytest.raises(fa.MemoryLimitError, match="pricing search's label rows") as refused:
        lp_bound(inst, [fa.KAnonymity(5)], "ncp", pricing="search", memory_limit="1GB")
    n = m + m * (m - 1) // 2
    assert refused.value.need == n * m + 8 * m * m + 9 * n * m
    assert not built.called


@pytest.mark.parametrize("stage", ["bounding the records' costs", "raising the records' bounds",
                                   "pairing the records", "bounding the children"])
def test_pricing_search_reads_its_clock_inside_a_nodes_bounds(stage):
    """The records' narrowest costs, the rounds raising them, the records' pairing and
    the children's bounds read the deadline per block: the deadline passing at any of
    those reads (a stub clock for that stage) stops the search inside the node, with a
    bound no higher than the closure's least mean_k (found by enumerating the closure)."""
    from unittest import mock

    import fairanon.solver.pricing as pricing
    from fairanon.solver.local_recoding.labels import BuildStopped

    inst = fa.load("german", qi=["personal_status", "job", "savings"], roles={"personal_status": "qi"})
    model = _closure_model(inst, 5, "ncp", 10**6, None)
    search = pricing.LabelSearch(model.enc, 5, "ncp")
    u = (np.arange(model.enc.n_types) % 7).astype(float)
    read = []

    def clock(deadline, at):
        read.append(at)
        if at == stage and deadline is not None:
            raise BuildStopped(at)

    for (members, _), least in zip(model.pricer.groups, _closure_minima(model, u)):
        types = np.flatnonzero(model.enc.protected == model.vectors[int(members[0])][0])
        with mock.patch.object(pricing, "check_deadline", clock), \
                mock.patch.object(pricing, "NODE_PAIRS", 0):
            cut = search.search(u, types, deadline=math.inf)
        assert stage in read and not cut.complete and cut.nodes >= 1, (stage, cut)
        assert cut.lower <= least + 1e-6 * max(1.0, abs(least)), (stage, cut, least)


def _clock_passing_at(monkeypatch, owner, name) -> list:
    """time.perf_counter at 0 until `name` of `owner` is called, past any deadline from
    then on (a tick later at each reading); returns the calls."""
    import time

    calls = []
    real = getattr(owner, name)

    def call(*args, **kwargs):
        calls.append(name)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, call)
    ticks = itertools.count()
    monkeypatch.setattr(time, "perf_counter", lambda: 1e9 + next(ticks) if calls else 0.0)
    return calls


def _tiny_ages():
    df = pd.DataFrame({"age": [21, 22, 25, 25, 30, 31, 38, 40],
                       "zip": ["a", "a", "b", "b", "a", "c", "c", "c"], "d": list("xyxyxyxy")})
    schema = fa.Schema([fa.Attribute("age", kind="numeric"), fa.Attribute("zip"),
                        fa.Attribute("d", role="sensitive")])
    return fa.Instance(df, schema, name="tiny ages")


@pytest.mark.parametrize("owner, name, stage", [
    ("pricer", "lagrangian", "bounding each record by its cheapest vector"),
    ("pricer", "cheapest_columns", "listing each type's cheapest column"),
    ("bounds", "_release_columns", "making the release's classes columns"),
])
@pytest.mark.parametrize("table", ["german", "tiny"])
def test_lp_bound_set_up_stops_at_its_deadline_with_the_first_bound(monkeypatch, owner, name,
                                                                    stage, table):
    """The deadline passing after the first centre's Lagrangian (the per-record level),
    while each type's cheapest column or the release's classes are made columns: the LP
    is not set up further and the bound at the first centre is returned, saying where it
    stopped; it is the per-record bound in this model (German credit) and at most the
    brute-force optimum (a table of 8 records)."""
    import fairanon.solver.bounds as lp_module

    inst = _german() if table == "german" else _tiny_ages()
    k = 5 if table == "german" else 2
    reqs = [fa.KAnonymity(k)]
    start = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    _clock_passing_at(monkeypatch, lp_module._Pricer if owner == "pricer" else lp_module, name)
    found = lp_bound(inst, reqs, "ncp", release=start, time_limit=10.0)
    assert found is not None and not found.complete and found.details["rounds"] == 0
    assert stage in found.details["stopped"] and found.details["columns"] == 0
    monkeypatch.undo()
    if table == "german":
        assert found.value == lower_bound(inst, reqs, "ncp", shared=False).value
    else:
        assert found.value <= partition_optimum(inst, reqs, recoding="generalization", objective="ncp")


@pytest.mark.parametrize("pricing", ["closure", "search"])
def test_lp_bound_gives_none_when_its_costs_pass_the_deadline(monkeypatch, pricing):
    """The deadline passing as the closure's vectors are costed, or as the search's first
    centre is (each record's narrowest labels): no bound, nothing more is built."""
    from unittest import mock

    import fairanon.solver.bounds as lp_module
    import fairanon.solver.pricing as pricing_module

    owner, name = ((lp_module, "_pair_costs") if pricing == "closure"
                   else (pricing_module.LabelSearch, "narrowest"))
    _clock_passing_at(monkeypatch, owner, name)
    priced = AssertionError("the first centre was priced past the deadline")
    for pricer in (lp_module._Pricer, lp_module._SearchPricer):
        monkeypatch.setattr(pricer, "lagrangian", mock.Mock(side_effect=priced))
    assert lp_bound(_german(), [fa.KAnonymity(5)], "ncp", pricing=pricing, time_limit=10.0) is None


def test_lp_bound_prices_nothing_after_a_solve_that_passes_its_deadline(monkeypatch):
    """The deadline passing while GLOP solves a round's LP: the round stops there (its
    LP value bounds nothing; pricing at its duals took 0.03-0.1 s past the limit on German
    credit with 7 QIs) and the bound is the first centre's, at most the converged LP's."""
    from ortools.linear_solver import pywraplp

    import fairanon.solver.bounds as lp_module

    inst = _german()
    reqs = [fa.KAnonymity(5)]
    converged = lp_bound(inst, reqs, "ncp")
    priced = []
    real = lp_module._Pricer.lagrangian
    monkeypatch.setattr(lp_module._Pricer, "lagrangian",
                        lambda *a: priced.append(1) or real(*a))
    _clock_passing_at(monkeypatch, pywraplp.Solver, "Solve")
    found = lp_bound(inst, reqs, "ncp", time_limit=10.0)
    assert found.details["rounds"] == 1 and len(priced) == 1 and not found.complete
    assert found.value <= converged.value


@pytest.mark.parametrize("table", ["german", "tiny"])
def test_lp_bound_priced_by_search_stops_listing_its_first_vectors(monkeypatch, table):
    """Priced by search, the deadline passing as each group's coarsest vector is listed
    (read per attribute): the LP is not set up further, and the bound at the first
    centre is returned, saying where it stopped; at most the converged LP (German
    credit) and the brute-force optimum (a table of 8 records)."""
    import fairanon.solver.pricing as pricing_module

    inst = _german() if table == "german" else _tiny_ages()
    reqs = [fa.KAnonymity(5 if table == "german" else 2)]
    converged = lp_bound(inst, reqs, "ncp")
    _clock_passing_at(monkeypatch, pricing_module.LabelSearch, "coarsest")
    found = lp_bound(inst, reqs, "ncp", pricing="search", time_limit=10.0)
    assert found is not None and not found.complete and found.details["rounds"] == 0
    assert "coarsest vectors" in found.details["stopped"] and found.details["columns"] == 0
    monkeypatch.undo()
    assert found.value <= converged.value
    if table == "tiny":
        assert found.value <= partition_optimum(inst, reqs, recoding="generalization", objective="ncp")


def _clock_passing_after(monkeypatch, owner, name, nth=1) -> list:
    """time.perf_counter at 0 until the `nth` call of `name` of `owner` has returned,
    past any deadline from then on; returns the calls that returned."""
    import time

    calls = []
    real = getattr(owner, name)

    def call(*args, **kwargs):
        out = real(*args, **kwargs)
        calls.append(name)
        return out

    monkeypatch.setattr(owner, name, call)
    monkeypatch.setattr(time, "perf_counter", lambda: 1e9 if len(calls) >= nth else 0.0)
    return calls


def _counting(monkeypatch, owner, name) -> list:
    """Counts the calls of `name` of `owner` (each appends the perf_counter then)."""
    import time

    calls = []
    real = getattr(owner, name)

    def call(*args, **kwargs):
        calls.append(time.perf_counter())
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, call)
    return calls


def test_lp_bound_stops_after_sorting_the_closures_pairs_at_its_deadline(monkeypatch):
    """The deadline passing as the candidates' pairs are sorted by type (0.08 s CPU on
    German credit's 7 QIs, then 0.1 s more of np.unique, unread): no bound, and the
    closure's costs are not started."""
    import fairanon.solver.bounds as lp_module
    from fairanon.solver.local_recoding import encoding

    _clock_passing_after(monkeypatch, encoding.np, "lexsort")
    costs = _counting(monkeypatch, lp_module, "_pair_costs")
    assert lp_bound(_german(), [fa.KAnonymity(5)], "ncp", time_limit=10.0) is None
    assert costs == []


def test_lp_bound_gives_none_when_its_costs_end_past_the_deadline(monkeypatch):
    """The closure's costs done just past the deadline: no bound, the pricer (a sort of
    every pair, then the first centre's: 0.3 s CPU on German credit's 7 QIs) not made."""
    import fairanon.solver.bounds as lp_module

    _clock_passing_after(monkeypatch, lp_module, "_pair_costs")
    made = _counting(monkeypatch, lp_module._Pricer, "__init__")
    assert lp_bound(_german(), [fa.KAnonymity(5)], "ncp", time_limit=10.0) is None
    assert made == []


def test_lp_bound_lists_no_cheapest_column_past_its_deadline(monkeypatch):
    """The deadline passing as the first columns' pairs are sorted by the first centre
    (the second sort of the pairs): the pairs are not sorted again by cost, and the
    first centre's bound is returned, the per-record bound."""
    import fairanon.solver.bounds as lp_module

    inst, reqs = _german(), [fa.KAnonymity(5)]
    _clock_passing_after(monkeypatch, lp_module._Pricer, "_sorted", nth=2)
    late = _counting(monkeypatch, np, "lexsort")
    found = lp_bound(inst, reqs, "ncp", time_limit=10.0)
    assert [t for t in late if t >= 1e9] == []
    assert "listing each type's cheapest column" in found.details["stopped"]
    monkeypatch.undo()
    assert found.value == lower_bound(inst, reqs, "ncp", shared=False).value


def test_lp_bound_prices_no_column_after_a_lagrangian_past_its_deadline(monkeypatch):
    """The deadline passing while the first round prices at the smoothed duals: its
    bound is kept (at most the converged LP's), no column is priced or added, and the
    LP's duals are not priced (each pricing sorts every pair)."""
    from ortools.linear_solver import pywraplp

    import fairanon.solver.bounds as lp_module

    inst, reqs = _german(), [fa.KAnonymity(5)]
    converged = lp_bound(inst, reqs, "ncp")
    _clock_passing_at(monkeypatch, pywraplp.Solver, "Solve")
    first = lp_bound(inst, reqs, "ncp", time_limit=10.0).details["columns"]
    monkeypatch.undo()
    _clock_passing_after(monkeypatch, lp_module._Pricer, "lagrangian", nth=2)
    priced = _counting(monkeypatch, lp_module._Pricer, "columns")
    found = lp_bound(inst, reqs, "ncp", time_limit=10.0)
    assert found.details["rounds"] == 1 and not found.complete
    assert priced == [] and found.details["columns"] == first
    assert found.value <= converged.value


@FEWER
@given(data=st.data(), inst=tables(max_rows=8))
def test_the_stars_bound_under_suppression_never_exceeds_the_brute_force_optimum(data, inst):
    """Under suppression the bound of ``stars`` is that of ``generalized`` (a cell is
    ``*`` exactly when it is changed): never above the optimum of local suppression,
    found by brute force, and never below the bound of ``stars`` itself."""
    reqs = data.draw(st.sampled_from(MONOTONE_FAMILIES[:4]))(data.draw)
    optimum = partition_optimum(inst, reqs, recoding="suppression", objective="stars")
    event("infeasible" if optimum is None else "feasible")
    if optimum is None:
        return
    found = best_bound(inst, reqs, "stars", recoding="suppression", time_limit=5)
    assert found.objective == "stars" and found.details["counted_as"] == "generalized"
    assert found.value <= optimum, (found, optimum)
    assert best_bound(inst, reqs, "stars", time_limit=5).value <= found.value
    for objective in ("ncp", "lm"):  # a starred cell costs 1, a value's own 0
        assert partition_optimum(inst, reqs, recoding="suppression", objective=objective) == optimum
        low = best_bound(inst, reqs, objective, recoding="suppression", time_limit=5)
        assert low.value <= optimum


def test_the_stars_bound_under_suppression_by_hand():
    """Four records a, b, c, d under a tree X = {a, b}, Y = {c, d}, k = 2. Generalized,
    the classes {a, b} and {c, d} released as X and Y show no star (the bound of
    ``stars`` is 0). Suppressed, each record shares a class with a different value, so
    each of its cells is ``*``: 4 stars at least, and {a, b}, {c, d} have exactly 4; as
    many in NCP and LM, where a star costs 1."""
    tree = fa.Hierarchy.from_mapping({"*": {"X": ["a", "b"], "Y": ["c", "d"]}})
    inst = fa.Instance(pd.DataFrame({"q": list("abcd")}),
                       fa.Schema([fa.Attribute("q", hierarchy=tree)]))
    reqs = [fa.KAnonymity(2)]
    assert best_bound(inst, reqs, "stars", time_limit=5).value == 0
    assert best_bound(inst, reqs, "stars", recoding="suppression", time_limit=5).value == 4
    # NCP and LM: 1 a starred cell, 0 a value's own (X alone has NCP 1/2, LM 1/3)
    assert best_bound(inst, reqs, "ncp", time_limit=5).value == 2
    assert best_bound(inst, reqs, "ncp", recoding="suppression", time_limit=5).value == 4
    assert best_bound(inst, reqs, "lm", recoding="suppression", time_limit=5).value == 4
    rel = cpsat(inst, reqs, recoding="suppression", objective="stars", seed=0, num_workers=1)
    assert rel.status == Status.OPTIMAL and rel.objective == 4
    assert fa.verify(inst, rel, reqs).passed


def test_a_bound_on_counted_cells_is_a_whole_number():
    """Every release's count of stars is a whole number, so the per-record bound, a
    fraction on German credit (7 QIs, k = 5), is rounded up: still below a release's
    count."""
    qi = ["personal_status", "job", "savings", "housing", "employment", "credit_history",
          "purpose"]
    inst = fa.load("german", qi=qi, roles={"personal_status": "qi"})
    reqs = [fa.KAnonymity(5)]
    found = lower_bound(inst, reqs, "stars", time_limit=10)
    assert isinstance(found.value, int) and found.value > 0
    rel = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    assert fa.verify(inst, rel, reqs).passed
    assert found.value <= objective_value(inst, rel, "stars")


@pytest.mark.parametrize("tree", [
    {"any": {"X": ["a", "b"], "Y": ["c", "d"]}},  # a root named other than '*'
    {"*": {"X": {"X1": ["a", "b"], "X2": ["c"]}, "Y": ["d"]}},  # X holds every value present
])
def test_the_stars_bound_counts_a_node_over_every_value_present(tree):
    """Records a and c, k = 2: their one class is released as the lowest node over both
    or above, which covers every value present, so each cell counts as a star (the one
    rule of docs/metrics.md): 2 stars, by hand, however the node is named. The bound
    used to count only a root named '*' (0 here)."""
    hierarchy = fa.Hierarchy.from_mapping(tree)
    inst = fa.Instance(pd.DataFrame({"q": ["a", "c"]}),
                       fa.Schema([fa.Attribute("q", hierarchy=hierarchy)]))
    reqs = [fa.KAnonymity(2)]
    assert lower_bound(inst, reqs, "stars").value == 2
    rel = cpsat(inst, reqs, objective="stars", seed=0, num_workers=1)
    assert rel.status == Status.OPTIMAL and rel.objective == 2
    assert fa.verify(inst, rel, reqs).passed and objective_value(inst, rel, "stars") == 2


def test_two_l_diversities_bound_each_attribute_by_its_own_l():
    """3-diversity of s2 and 2-diversity of s1: the classes {a, a, a} and {b, b, b} meet
    both at no loss (by hand). The bound asked s1, the first sensitive attribute, for
    the largest l of all (3 of its 2 values), found no class and charged every record
    its all-'*' cost: 6 per-cell units above the optimum of 0."""
    df = pd.DataFrame({"q": list("aaabbb"), "s1": list("uvuvuv"), "s2": list("xyzxyz")})
    inst = fa.Instance(df, fa.Schema([fa.Attribute("q"), fa.Attribute("s1", role="sensitive"),
                                      fa.Attribute("s2", role="sensitive")]))
    reqs = [fa.KAnonymity(2), fa.LDiversity(3, attribute="s2"), fa.LDiversity(2, attribute="s1")]
    best = Release(df.copy(), groups=np.array([0, 0, 0, 1, 1, 1]))
    assert fa.verify(inst, best, reqs).passed
    for objective in ("ncp", "lm", "generalized", "stars"):
        assert objective_value(inst, best, objective) == 0
        assert lower_bound(inst, reqs, objective).value == 0
        assert lower_bound(inst, reqs, objective, release=best, ascent=True).value == 0
        assert best_bound(inst, reqs, objective, time_limit=5).value == 0
