"""fulldomain's candidate transformations and the release of a chosen node, against a
brute-force enumeration of every lattice node judged by the verifier."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pandas as pd
import pytest
from _exact_oracle import Table, _active_values, _node
from hypothesis import given, settings
from hypothesis import strategies as st

import fairanon as fa
from fairanon.exceptions import InvalidParameterError
from fairanon.models.metrics import loss_metric
from fairanon.models.risk import risk_classes, sample_risk
from fairanon.release import Release, Status
from fairanon.solver.fulldomain import Candidates, candidates, fulldomain, ladders
from fairanon.solver.fulldomain.candidates import _pareto

_DEEP = fa.Hierarchy.from_mapping({"*": {"E": {"X": ["a", "b"], "Y": ["c"]}, "F": ["d"]}})


def _tiny() -> fa.Instance:
    """24 records, three generalizable quasi-identifiers (a 3-level hierarchy, an
    ordered attribute, intervals), a protected sex and a sensitive disease."""
    rng = np.random.default_rng(7)
    n = 24
    data = {
        "q0": rng.choice(["a", "b", "c", "d"], n),
        "q1": rng.choice(["lo", "mid", "hi"], n),
        "q2": rng.choice([1, 2, 3, 4, 5, 6], n),
        "sex": rng.choice(["f", "m"], n),
        "dis": rng.choice(["flu", "cold", "ulcer"], n),
    }
    schema = fa.Schema(
        [
            fa.Attribute("q0", hierarchy=_DEEP),
            fa.Attribute("q1", kind="ordered", order=["lo", "mid", "hi"]),
            fa.Attribute("q2", kind="numeric", intervals=fa.IntervalHierarchy((2, 4))),
            fa.Attribute("sex", role="protected", protected=["f"]),
            fa.Attribute("dis", role="sensitive"),
        ]
    )
    return fa.Instance(pd.DataFrame(data), schema, name="tiny")


def _brute_force(inst, reqs, objective, limit):
    """Every node's release built from the oracle's texts, kept when the verifier passes
    it: node -> (cost, suppressed, release)."""
    lads = ladders(inst)
    table = Table(inst, reqs)
    active = _active_values(inst, lads)
    out = {}
    for node in itertools.product(*[range(lad.height + 1) for lad in lads]):
        suppressed, texts, cost = _node(table, lads, active, node, reqs, objective, limit)
        if sum(suppressed) > limit:
            continue
        released = inst.table.copy()
        for a, lad in enumerate(lads):
            released[lad.name] = [row[a] for row in texts]
        keys = released[[lad.name for lad in lads] + ["sex"]].astype(str).agg("|".join, axis=1)
        rel = Release(
            table=released,
            groups=pd.factorize(keys)[0],
            suppressed=tuple(inst.row_ids[np.array(suppressed, dtype=bool)].tolist()),
        )
        if fa.verify(inst, rel, reqs).passed:
            out[node] = (cost, sum(suppressed), rel)
    return out


@pytest.mark.parametrize(
    ("reqs", "objective", "limit"),
    [
        ([fa.KAnonymity(2)], "lm", 0),
        # 10 nodes pass, 6 of them with 4 to 8 records suppressed.
        ([fa.KAnonymity(2)], "generalized", 8),
        ([fa.KAnonymity(2), fa.LDiversity(2)], "lm", 6),
    ],
)
def test_candidates_equal_the_verified_nodes(reqs, objective, limit):
    inst = _tiny()
    truth = _brute_force(inst, reqs, objective, limit)
    names = [lad.name for lad in ladders(inst)]
    listed = candidates(inst, reqs, objective=objective, max_suppressed=limit, limit=1000)
    assert listed.feasible == len(truth) > 0
    assert len(listed.candidates) == len(truth)
    # q0: leaf, X/Y, E/F, *; q1 (ordered, no hierarchy): value, *; q2: value, 2, 4, *.
    assert listed.lattice_size == 4 * 2 * 4
    figures = {}
    for node, (cost, suppressed, rel) in truth.items():
        sample = sample_risk(risk_classes(inst, rel), histogram=False)
        figures[node] = (cost, sample.highest, sample.average)
        c = next(c for c in listed.candidates if tuple(c.levels[n] for n in names) == node)
        assert c.objective == cost
        assert c.suppressed == suppressed
        assert (c.prosecutor_highest, c.prosecutor_average) == (sample.highest, sample.average)
        assert c.lm_avg == loss_metric(inst, rel, exact=True)["LM_avg"]
    # Pareto by hand over the brute force: no other node at most as bad everywhere and
    # strictly better somewhere.
    front = {
        node
        for node, f in figures.items()
        if not any(all(g <= x for g, x in zip(o, f)) and o != f for o in figures.values())
    }
    assert {tuple(c.levels[n] for n in names) for c in listed.candidates if c.pareto} == front
    assert listed.pareto == len(front)
    # Pareto nodes first, each group by objective.
    keys = [(not c.pareto, c.objective) for c in listed.candidates]
    assert keys == sorted(keys)


def test_limit_keeps_the_pareto_nodes_first_and_says_the_total():
    inst = _tiny()
    full = candidates(inst, [fa.KAnonymity(3)], limit=1000)
    short = candidates(inst, [fa.KAnonymity(3)], limit=2)
    assert short.feasible == full.feasible > 2
    assert short.candidates == full.candidates[:2]
    assert all(c.pareto for c in short.candidates)


@pytest.mark.parametrize(("reqs", "limit"), [([fa.KAnonymity(3)], 0), ([fa.KAnonymity(2)], 8)])
def test_release_of_a_chosen_node_verifies_and_costs_what_is_listed(reqs, limit):
    inst = _tiny()
    listed = candidates(inst, reqs, max_suppressed=limit, limit=1000)
    optimum = fulldomain(inst, reqs, max_suppressed=limit)
    assert any(c.suppressed for c in listed.candidates) == bool(limit)
    for c in listed.candidates:
        rel = fulldomain(inst, reqs, max_suppressed=limit, levels=c.levels)
        assert fa.verify(inst, rel, reqs).passed
        assert rel.status == Status.FEASIBLE and rel.bound is None
        assert rel.objective == c.objective and len(rel.suppressed) == c.suppressed
        assert rel.provenance["levels"] == c.levels
        assert rel.provenance["params"]["levels"] == c.levels
        assert loss_metric(inst, rel, exact=True)["LM_avg"] == c.lm_avg
        assert rel.objective >= optimum.objective
    assert min(c.objective for c in listed.candidates) == optimum.objective


def test_by_hand_on_the_loan_table():
    # purpose={housing, car} under 'housing-car', emp={no, yes} under '*': 17 records.
    # At (purpose 1, emp 0) the 17 purpose cells are generalized; at (0, 1) the 17 emp
    # cells; (0, 0) has a class of one record.
    inst = fa.load("ruggieri_loan")
    listed = candidates(inst, [fa.KAnonymity(2)], objective="generalized")
    got = {tuple(c.levels.values()): c.objective for c in listed.candidates}
    assert got == {(1, 0): 17, (0, 1): 17, (1, 1): 34}
    assert listed.lattice_size == 4 and listed.feasible == 3


@pytest.mark.parametrize(
    ("levels", "message"),
    [
        ({"q0": 0, "q1": 0, "q2": 0}, "does not meet 3-anonymity"),
        ({"q0": 5, "q1": 0, "q2": 0}, "must be an int in [0, 3]"),
        ({"q0": "1", "q1": 0, "q2": 0}, "must be an int in [0, 3]"),
        ({"q0": True, "q1": 0, "q2": 0}, "must be an int in [0, 3]"),
        ({"q0": 1, "q1": 0}, "Missing: 'q2'"),
        ({"q0": 1, "q1": 0, "q2": 0, "zz": 1}, "Unknown: 'zz'"),
        ([1, 0, 0], "must map each quasi-identifier"),
    ],
)
def test_bad_levels_are_refused_clearly(levels, message):
    with pytest.raises(InvalidParameterError, match=re.escape(message)):
        fulldomain(_tiny(), [fa.KAnonymity(3)], levels=levels)


def test_candidates_refuses_bad_input():
    with pytest.raises(InvalidParameterError, match="'limit' parameter of candidates"):
        candidates(_tiny(), [fa.KAnonymity(3)], limit=0)
    with pytest.raises(InvalidParameterError, match="'time_limit' parameter of candidates"):
        candidates(_tiny(), [fa.KAnonymity(3)], time_limit=0)
    with pytest.raises(InvalidParameterError, match="'max_suppressed'"):
        candidates(_tiny(), [fa.KAnonymity(3)], max_suppressed=-1)


@given(st.lists(st.tuples(*[st.fractions(0, 2, max_denominator=3)] * 3), min_size=1, max_size=20))
@settings(max_examples=50, deadline=None)
def test_pareto_sweep_equals_every_pair_compared(points):
    brute = [not any(all(x <= y for x, y in zip(o, p)) and o != p for o in points) for p in points]
    assert _pareto(points).tolist() == brute


def test_the_time_limit_stops_the_check_and_lists_nothing(monkeypatch):
    """A clock that advances one second a reading: with (nodes - 0.5) s every node but
    the last (the lattice's top, in mixed-radix order) is checked, the next reading stops
    the check; the passing ones among those checked are counted as the oracle judges them."""
    import importlib

    module = importlib.import_module("fairanon.solver.fulldomain.candidates")  # the package names the function
    ticks = iter(range(10**6))
    monkeypatch.setattr(module, "perf_counter", lambda: next(ticks))
    inst, reqs = _tiny(), [fa.KAnonymity(2)]
    nodes = list(itertools.product(*[range(lad.height + 1) for lad in ladders(inst)]))
    stopped = candidates(inst, reqs, time_limit=len(nodes) - 0.5)
    passing = set(_brute_force(inst, reqs, "lm", 0))
    assert stopped.checked == len(nodes) - 1 and stopped.candidates == () and stopped.pareto == 0
    assert stopped.feasible == len(passing - {nodes[-1]}) == len(passing) - 1 > 0
    assert stopped.reason == (f"the time left ({len(nodes) - 0.5} s) ran out after checking {len(nodes) - 1} of "
                              f"the lattice's {len(nodes)} nodes")
    monkeypatch.undo()
    whole = candidates(inst, reqs, time_limit=3600)
    assert whole.reason is None and whole.checked == whole.lattice_size == len(nodes)
    assert whole.feasible == len(passing)


@pytest.mark.parametrize("objective", ["ncp", "generalized"])
def test_a_listing_reads_back_from_its_json(objective):
    import json

    listed = candidates(_tiny(), [fa.KAnonymity(2)], objective=objective, max_suppressed=8, limit=1000)
    assert any(c.suppressed for c in listed.candidates)
    assert Candidates.from_dict(json.loads(json.dumps(listed.to_dict()))) == listed


def _front(figures: dict) -> set:
    """The nodes no other node is at most as bad as everywhere and better than somewhere."""
    return {node for node, f in figures.items()
            if not any(all(g <= x for g, x in zip(o, f)) and o != f for o in figures.values())}


@pytest.mark.parametrize(
    ("reqs", "objective", "limit", "checks", "listed_of"),
    [
        # (the passing nodes below the bound, of the lattice's passing nodes)
        ([fa.KAnonymity(1)], "lm", 0, 12, (11, 32)),
        ([fa.KAnonymity(2)], "lm", 12, 24, (12, 15)),
        ([fa.KAnonymity(2)], "generalized", 16, 24, (15, 20)),
        ([fa.KAnonymity(2), fa.LDiversity(2)], "lm", 16, 24, (7, 10)),
        ([fa.KAnonymity(2)], "discernibility", 8, 24, (1, 10)),
        ([fa.KAnonymity(3)], "lm", 0, 24, (3, 3)),  # the search settles the whole lattice first
    ],
)
def test_a_larger_lattice_lists_the_nodes_below_its_bound_exactly(monkeypatch, reqs, objective, limit, checks,
                                                                  listed_of):
    """With room for `checks` checks on the 32-node lattice, the listing is of the
    nodes costing less than its bound (every node when the search settled them all):
    exactly the verified nodes below it, by brute force, with the Pareto flags of the
    whole lattice."""
    import importlib

    module = importlib.import_module("fairanon.solver.fulldomain.candidates")
    monkeypatch.setattr(module, "CANDIDATE_NODES", checks)
    inst = _tiny()
    truth = _brute_force(inst, reqs, objective, limit)
    names = [lad.name for lad in ladders(inst)]
    figures = {}
    for node, (cost, _, rel) in truth.items():
        sample = sample_risk(risk_classes(inst, rel), histogram=False)
        figures[node] = (cost, sample.highest, sample.average)
    listed = candidates(inst, reqs, objective=objective, max_suppressed=limit, limit=1000)
    below = listed.cost_below
    expected = {node for node, (cost, _, _) in truth.items() if below is None or cost < below}
    assert (len(expected), len(truth)) == listed_of
    assert listed.reason is None and listed.lattice_size == 32 and listed.feasible == len(expected)
    assert {tuple(c.levels[n] for n in names) for c in listed.candidates} == expected
    front = _front(figures) & expected
    assert {tuple(c.levels[n] for n in names) for c in listed.candidates if c.pareto} == front
    assert listed.pareto == len(front)
    for c in listed.candidates:
        assert figures[tuple(c.levels[n] for n in names)] == (c.objective, c.prosecutor_highest,
                                                              c.prosecutor_average)
    if below is None:
        assert listed.summary().startswith(f"{len(truth)} of the lattice's 32 nodes meet the requirements")
        assert listed.checked <= checks  # the search's checks, not the nodes it settled
    else:
        assert checks <= listed.checked < 32 and f"costing less than {below} ({objective})" in listed.summary()
        assert f"before the limit of {checks} checks" in listed.summary()
    assert Candidates.from_dict(listed.to_dict()) == listed


@pytest.mark.parametrize("search_ticks", [True, False])
def test_a_larger_lattice_out_of_time_lists_what_it_read(monkeypatch, search_ticks):
    """A clock that advances one second a reading, read by the loop that reads the found
    nodes' risks (cheapest first) and, or not, by the search. With a 6.5 s limit the
    search gets its half and stops before its 20 checks (or, its clock standing still,
    after them), and the loop reads nodes in the time left: the listing is exactly the
    nodes costing less than the first node not read, by brute force, at least one."""
    import importlib
    import types

    module = importlib.import_module("fairanon.solver.fulldomain.candidates")
    search = importlib.import_module("fairanon.solver.fulldomain.search")
    monkeypatch.setattr(module, "CANDIDATE_NODES", 20)
    ticks = iter(range(10**6))
    clock = types.SimpleNamespace(perf_counter=lambda: next(ticks))
    monkeypatch.setattr(module, "perf_counter", clock.perf_counter)
    monkeypatch.setattr(search, "time", clock if search_ticks else types.SimpleNamespace(perf_counter=lambda: 0))
    inst, reqs = _tiny(), [fa.KAnonymity(1)]
    listed = candidates(inst, reqs, time_limit=6.5, limit=1000)
    truth = _brute_force(inst, reqs, "lm", 0)
    costs = sorted(cost for cost, _, _ in truth.values())
    assert listed.cost_below in costs[1:]
    expected = {node for node, (cost, _, _) in truth.items() if cost < listed.cost_below}
    assert listed.feasible == len(expected) == len(listed.candidates) >= 1
    assert 0 < listed.checked < 20 if search_ticks else listed.checked == 20
    assert "the time left (6.5 s) ran out" in listed.summary()


def test_a_lattice_above_the_arrays_is_refused_saying_why(monkeypatch):
    import importlib

    module = importlib.import_module("fairanon.solver.fulldomain.candidates")
    monkeypatch.setattr(module, "LATTICE_NODES", 16)
    with pytest.raises(InvalidParameterError, match=re.escape(
            "The lattice has 32 nodes; candidates lists lattices of at most 16 nodes")):
        candidates(_tiny(), [fa.KAnonymity(2)])
