"""lns and improve keep their time limit: what they return when it passes before the
search or leaves no time for a bound. The clock is never timed: deadlines are already
past, stubs sleep through the limit, or the floor is raised."""

import time

import pytest
from test_lns import _bound_beside, _german, _tiny

import fairanon as fa
from fairanon.methods import lns as lns_module
from fairanon.methods.lns import improve, lns
from fairanon.models.objectives import objective_value
from fairanon.release import Status
from fairanon.solver.lns import Incumbent, Registry


def _slow_set_up(monkeypatch, seconds):
    """Incumbent.from_release reads the start, then sleeps `seconds`: the set-up ends
    past improve's limit (a sleeping stub, not a timed assertion)."""
    real = Incumbent.from_release.__func__

    def slow(cls, *args, **kwargs):
        inc = real(cls, *args, **kwargs)
        time.sleep(seconds)
        return inc

    monkeypatch.setattr(Incumbent, "from_release", classmethod(slow))


def _no_search(monkeypatch):
    def search(*args, **kwargs):
        raise AssertionError("the search ran past its deadline")

    monkeypatch.setattr(lns_module, "search", search)


def test_improve_returns_its_start_when_set_up_ends_past_the_search_deadline(monkeypatch):
    """The start is read and set up just before (here after) the limit: no search, no
    release built and verified again with its metrics; the start, already verified, is
    the release, with its objective by the metrics."""
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    start = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    _slow_set_up(monkeypatch, 0.6)
    _no_search(monkeypatch)
    real_verify, with_metrics = lns_module.verify, []

    def verify(*args, **kwargs):
        with_metrics.append(kwargs.get("metrics", True))
        return real_verify(*args, **kwargs)

    monkeypatch.setattr(lns_module, "verify", verify)
    rel = improve(inst, reqs, start, objective="ncp", seed=0, time_limit=0.5)
    assert with_metrics == [False]  # the start's check only
    assert rel.status == Status.FEASIBLE and rel.bound is None
    assert "while the start was set up" in rel.provenance["search"]["stopped"]
    assert fa.verify(inst, rel, reqs).passed
    assert rel.objective == objective_value(inst, start, "ncp")
    assert rel.table.astype(str).equals(start.table.astype(str))


def test_an_unsearched_start_does_not_take_its_objective_from_provenance(monkeypatch):
    """The time passes while the start's labels are read: improve's release has the
    start's objective computed, not the ``provenance["start_objective"]`` the release
    carries, which may be under another objective (here LM's, planted; it was taken
    as the NCP)."""
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    start = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    start = start.with_provenance(start_objective=objective_value(inst, start, "lm"))
    real = Incumbent.from_release.__func__

    def passed(cls, *args, **kwargs):
        return real(cls, *args, **{**kwargs, "deadline": time.perf_counter() - 1})

    monkeypatch.setattr(Incumbent, "from_release", classmethod(passed))
    rel = improve(inst, reqs, start, objective="ncp", seed=0, time_limit=30)
    assert "reading the start's labels" in rel.provenance["search"]["stopped"]
    assert rel.objective == objective_value(inst, start, "ncp") != start.provenance["start_objective"]
    assert fa.verify(inst, rel, reqs).passed


def _counted_checks(monkeypatch):
    """Every verification lns and its starts run, as the metrics flag of each call."""
    from fairanon.methods import starts

    calls = []
    for module in (lns_module, starts):
        def verify(*args, _real=module.verify, **kwargs):
            calls.append(kwargs.get("metrics", True))
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, "verify", verify)
    return calls


def test_lns_verifies_its_start_once(monkeypatch):
    """The start chosen is verified where it is chosen and not again when the search
    starts (0.05 s more on UCI Adult, 0.5 s at 30,000 values): one check without
    metrics, then the release's own with them."""
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    start = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    calls = _counted_checks(monkeypatch)
    rel = lns(inst, reqs, start=start, objective="ncp", seed=0, max_rounds=1, whole_types=0,
              bound=False)
    assert calls == [False, True]
    assert rel.provenance["search"]["rounds"] == 1 and fa.verify(inst, rel, reqs).passed


def test_lns_returns_its_verified_start_when_the_registries_pass_the_deadline(monkeypatch):
    """The time passes while improve registers the values' own labels (the deadline
    handed to the registries is already past): the start given, already verified, is
    the release, with no search."""
    from fairanon.solver.lns import Registry

    inst = _german()
    reqs = [fa.KAnonymity(5)]
    start = fa.anonymize(inst, reqs, method="mondrian", seed=0)

    def passed(instance, name, deadline=None):
        return Registry(instance, name,
                        deadline=None if deadline is None else time.perf_counter() - 1)

    monkeypatch.setattr(lns_module, "Registry", passed)
    _no_search(monkeypatch)
    rel = lns(inst, reqs, start=start, objective="ncp", seed=0, time_limit=30, bound=False)
    assert "registering the values' own labels" in rel.provenance["search"]["stopped"]
    assert rel.status == Status.FEASIBLE and fa.verify(inst, rel, reqs).passed
    assert rel.table.astype(str).equals(start.table.astype(str))
    assert rel.objective == objective_value(inst, start, "ncp")

def test_an_unsearched_start_has_the_keys_of_a_search(monkeypatch):
    """benchmarks/lns_gap.py reads search["history"], benchmarks/lns_scale.py
    search["parts"]: the start returned unsearched has every key a search that ran
    has, empty (no round, no part searched), and says why."""
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    start = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    guide = fa.anonymize(inst, reqs, method="kmember", seed=0)
    searched = improve(inst, reqs, start, objective="ncp", seed=0, max_rounds=1, guides=[guide],
                       whole_types=0)
    _slow_set_up(monkeypatch, 0.6)
    rel = improve(inst, reqs, start, objective="ncp", seed=0, time_limit=0.5, guides=[guide])
    stats = rel.provenance["search"]
    assert set(stats) - {"stopped"} == set(searched.provenance["search"]) - {"memory"}
    assert stats["history"] == [] and stats["parts"] == 0 and stats["rounds"] == 0
    assert stats["guides"] == [guide.method]
    assert fa.verify(inst, rel, reqs).passed


def _late_search(monkeypatch, seconds):
    """The search ends `seconds` after it returns: lns's deadline has passed."""
    real = lns_module._search_from

    def late(*args, **kwargs):
        out = real(*args, **kwargs)
        time.sleep(seconds)
        return out

    monkeypatch.setattr(lns_module, "_search_from", late)


def _no_bound(monkeypatch):
    def bound(*args, **kwargs):
        raise AssertionError("the bound was computed with no time left")

    monkeypatch.setattr(lns_module, "best_bound", bound)


def test_a_failed_bound_process_is_reported_when_no_time_is_left(monkeypatch):
    """The bound's process fails and the search leaves no time: provenance says both
    (the failure used to be dropped). The bound's process starts however long the start
    took (BESIDE_MIN_SECONDS at 0): under load the heuristics took most of the second
    and too little was left for the bound to be started beside the search."""
    import os

    _, started = _bound_beside(monkeypatch)
    monkeypatch.setattr(lns_module, "BESIDE_MIN_SECONDS", 0.0)
    parent = os.getpid()

    def bound(*args, **kwargs):
        if os.getpid() != parent:
            raise MemoryError("planted in the bound's process")
        raise AssertionError("the bound was computed with no time left")

    monkeypatch.setattr(lns_module, "best_bound", bound)
    _late_search(monkeypatch, 1.0)
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    rel = lns(inst, reqs, seed=0, time_limit=1, objective="ncp", whole_types=0)
    assert started and rel.bound is None
    assert rel.provenance["lower_bound"] == {
        "method": "none",
        "reason": "no time was left for a bound",
        "beside_search": "MemoryError: planted in the bound's process",
    }
    assert fa.verify(inst, rel, reqs).passed


def test_a_lexicographic_objective_has_no_bound_whatever_the_time(monkeypatch):
    """No bound exists for a lexicographic objective: said so even when the search left
    no time (it used to say "no time was left")."""
    _late_search(monkeypatch, 1.0)
    _no_bound(monkeypatch)
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    rel = lns(inst, reqs, seed=0, time_limit=1, objective=("privacy_log", "ncp"), whole_types=0)
    assert rel.bound is None
    assert rel.provenance["lower_bound"] == {"method": "none",
                                             "reason": "no bound for privacy_log then ncp"}
    assert fa.verify(inst, rel, reqs).passed


def test_no_bound_is_started_below_the_floor(monkeypatch):
    """Less than BOUND_MIN_SECONDS left after the search (the floor raised above the
    whole limit here): no bound is started, the provenance says why."""
    monkeypatch.setattr(lns_module, "BOUND_MIN_SECONDS", 1e9)
    monkeypatch.setattr(lns_module, "_bound_apart", lambda *args: (None, True))  # the bound after the search
    _no_bound(monkeypatch)
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    rel = lns(inst, reqs, seed=0, time_limit=2, objective="ncp", whole_types=0, max_rounds=1)
    assert rel.bound is None
    assert rel.provenance["lower_bound"] == {"method": "none", "reason": "no time was left for a bound"}
    assert fa.verify(inst, rel, reqs).passed


def test_the_closure_stops_within_a_block_of_joins(monkeypatch):
    """lp_bound's join closure looks at its deadline between the attributes of a block
    of joins: the deadline passing during the first attribute's joins stops it before
    the second's (it was looked at between blocks only, each joining every attribute
    and adding the new keys: up to 0.1 s on UCI Adult). The clock is a flag set by the
    first join."""
    import numpy as np

    from fairanon.solver.local_recoding import encoding, labels

    inst = _german(("age", "duration", "job"))
    widest = max(len(np.unique(inst.codes(n))) for n in inst.schema.generalizable)
    enc = encoding.encode(inst, [fa.KAnonymity(5)], max_range_values=widest)
    passed, joins = [False], []
    real_join = labels.LabelSpace.join

    def join(self, a, b):
        joins.append(self)
        passed[0] = True  # the deadline passes during this join
        return real_join(self, a, b)

    def check(deadline, stage):
        if passed[0]:
            raise labels.BuildStopped(stage)

    monkeypatch.setattr(labels.LabelSpace, "join", join)
    monkeypatch.setattr(encoding, "check_deadline", check)
    with pytest.raises(labels.BuildStopped, match="joining the candidate classes"):
        encoding._candidates(enc, True, 5, 300_000, deadline=time.perf_counter() + 60)
    assert len(joins) == 1 and enc.d == 3


def test_the_closure_stops_within_a_slice_of_new_keys(monkeypatch):
    """As above, for the new keys a block of joins adds to the set of seen vectors:
    the deadline is looked at between slices of KEYS_BLOCK keys (one here), so it
    passing as the first key is added stops the closure before the second is. The
    clock is a flag set by the first key added."""
    import numpy as np

    from fairanon.solver.local_recoding import encoding, labels

    inst = _german(("age", "duration", "job"))
    widest = max(len(np.unique(inst.codes(n))) for n in inst.schema.generalizable)
    enc = encoding.encode(inst, [fa.KAnonymity(5)], max_range_values=widest)
    passed, added = [False], []

    class Seen(set):
        def add(self, key):
            added.append(key)
            passed[0] = True  # the deadline passes as the first new key is added
            super().add(key)

    def check(deadline, stage):
        if passed[0]:
            raise labels.BuildStopped(stage)

    # The sets encoding builds are Seen: the closure's `seen` is the first to be added to.
    monkeypatch.setattr(encoding, "set", Seen, raising=False)
    monkeypatch.setattr(encoding, "KEYS_BLOCK", 1)
    monkeypatch.setattr(encoding, "check_deadline", check)
    with pytest.raises(labels.BuildStopped, match="joining the candidate classes"):
        encoding._candidates(enc, True, 5, 300_000, deadline=time.perf_counter() + 60)
    assert len(added) == 1


def test_every_cell_star_is_not_checked_past_the_limit(monkeypatch):
    """No heuristic gives a start and the table is not re-solved whole: every cell '*'
    is not built nor verified when its check is expected to end past lns's limit (the
    expected check raised above it here), the rule the heuristics' starts keep to; the
    release is UNKNOWN, every cell '*' with the reason, verified."""
    calls = _counted_checks(monkeypatch)
    monkeypatch.setattr(lns_module, "_first_check_seconds", lambda instance: 1e9)
    _no_search(monkeypatch)
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    rel = lns(inst, reqs, start=[], seed=0, whole_types=100, time_limit=30)
    assert calls == []
    assert rel.status == Status.UNKNOWN and "every cell '*' was not tried" in rel.reason
    assert "would pass the time limit" in rel.reason
    entry = rel.provenance["starts"][-1]
    assert entry["method"] == "every cell '*'" and entry["status"] == "not checked"
    assert "more than whole_types=100" in entry["why"]
    assert fa.verify(inst, rel, reqs).passed
    assert (rel.table[list(inst.schema.generalizable)].astype(str) == "*").all().all()


def test_an_unsearched_suppression_release_has_its_own_verification(monkeypatch):
    """lns under suppression whose search set-up stops (the registries' deadline
    already past): the release is its start, unsearched, and its recorded
    verification, without metrics as the start's was, is what the verifier says of
    that release now, but for the seconds (it named the start's method,
    'lattice-local', not 'lns')."""
    from fairanon.solver.lns import Registry

    def passed(instance, name, deadline=None):
        return Registry(instance, name,
                        deadline=None if deadline is None else time.perf_counter() - 1)

    monkeypatch.setattr(lns_module, "Registry", passed)
    _no_search(monkeypatch)
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    rel = lns(inst, reqs, seed=0, time_limit=30, recoding="suppression", bound=False)
    assert "stopped" in rel.provenance["search"] and rel.status == Status.FEASIBLE
    fresh = fa.verify(inst, rel, reqs, metrics=False).to_dict()
    recorded = dict(rel.provenance["verification"])
    del fresh["elapsed_s"], recorded["elapsed_s"]
    assert recorded == fresh and fresh["passed"]


def test_a_first_start_ready_past_the_limit_is_not_checked(monkeypatch):
    """The only heuristic returns past lns's whole limit (a stub sleeping through it):
    its release is neither verified past the limit nor returned unverified; no other
    start is tried, and the release is UNKNOWN, saying why (the first release was
    verified whatever the time)."""
    from fairanon.methods import starts

    inst = _german()
    reqs = [fa.KAnonymity(5)]
    made = fa.anonymize(inst, reqs, method="mondrian", seed=0)

    def late(instance, requirements, *, seed=None, time_limit=None, **options):
        time.sleep(1.2)
        return made

    monkeypatch.setattr(starts, "HEURISTICS", (("late", late, None),))
    calls = _counted_checks(monkeypatch)
    _no_search(monkeypatch)
    rel = lns(inst, reqs, objective="ncp", seed=0, time_limit=1)
    assert calls == []
    assert rel.status == Status.UNKNOWN and "no time was left to try another start" in rel.reason
    entry = rel.provenance["starts"][0]
    assert entry["status"] == "not checked" and "would pass the time limit" in entry["why"]


def _registry_deadlines(monkeypatch) -> list:
    """The deadline of every registry lns builds, in order."""
    from fairanon.solver.lns import Registry

    deadlines = []

    def recorded(instance, name, deadline=None):
        deadlines.append(deadline)
        return Registry(instance, name, deadline=deadline)

    monkeypatch.setattr(lns_module, "Registry", recorded)
    return deadlines


def test_the_start_registries_have_a_deadline(monkeypatch):
    """The registries lns builds to read given starts under suppression and to compare
    the whole table's labels with every label are built under the call's deadline
    (they had none)."""
    deadlines = _registry_deadlines(monkeypatch)
    # The search's own set-up is left out: its start is returned as it is.
    monkeypatch.setattr(lns_module, "_search_from", lambda inst, reqs, obj, start, *a, **k: start)
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    start = lns_module._all_suppressed(inst, {})  # values and '*' only
    lns(inst, reqs, start=start, recoding="suppression", seed=0, time_limit=30, bound=False)
    given = len(deadlines)
    whole = lns(_tiny(), [fa.KAnonymity(3)], start=[], seed=0, time_limit=30, bound=False)
    assert whole.status == Status.OPTIMAL  # the whole table re-solved, its labels compared
    assert given >= 3 and len(deadlines) > given and None not in deadlines


def test_a_suppression_search_sets_up_its_start_under_the_deadline(monkeypatch):
    """Under suppression, lns's start is known to release values and '*' only (here
    every cell '*', given), so the search reads its labels under the deadline as under
    generalization (it read them whatever the time, as for a release given to
    improve, whose form is checked); improve still checks the form of its start."""
    from fairanon.exceptions import InvalidParameterError

    deadlines = _registry_deadlines(monkeypatch)
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    start = lns_module._all_suppressed(inst, {})
    rel = lns(inst, reqs, start=start, recoding="suppression", seed=0, time_limit=30, max_rounds=1,
              bound=False)
    assert len(deadlines) >= 6 and None not in deadlines  # _given_start's and the search's
    assert rel.provenance["search"]["rounds"] == 1 and fa.verify(inst, rel, reqs).passed
    ranged = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    with pytest.raises(InvalidParameterError, match="values and '\\*'"):
        improve(inst, reqs, ranged, recoding="suppression", seed=0, time_limit=30, max_rounds=1)


def test_no_per_record_bound_after_an_lp_bound_that_took_all_the_time(monkeypatch):
    """The LP bound answers as the bound's time ends (a stub sleeping through it): the
    per-record bound, which with no time bounds no record (0) after its set-up, is not
    started; the LP's bound is the answer."""
    from fairanon.models.bounds import LowerBound

    lp = LowerBound("ncp", 7, "LP (column generation)", False, {})

    def slow_lp(*args, time_limit=None, **kwargs):
        time.sleep(time_limit + 0.05)
        return lp

    def per_record(*args, **kwargs):
        raise AssertionError("the per-record bound was started with no time left")

    monkeypatch.setattr(lns_module, "lp_bound", slow_lp)
    monkeypatch.setattr(lns_module, "lower_bound", per_record)
    assert lns_module.best_bound(_german(), [fa.KAnonymity(5)], "ncp", time_limit=0.1) is lp


def test_the_per_record_bound_reads_no_label_cost_past_its_deadline(monkeypatch):
    """The per-record bound given no time (as lns gives it what the LP bound left) stops
    before reading any attribute's label costs (it read all of them first), bounding no
    record: 0, incomplete, saying where it stopped."""
    from fairanon.models import bounds

    read = []
    real = bounds._dimensions

    def dimensions(instance, name, objective):
        read.append(name)
        return real(instance, name, objective)

    monkeypatch.setattr(bounds, "_dimensions", dimensions)
    inst = _german()
    found = bounds.lower_bound(inst, [fa.KAnonymity(5)], "ncp", time_limit=0)
    assert read == [] and found.value == 0 and not found.complete
    # Stopped at the first attribute: none was read ("after ... 0 of 3 attributes" said so).
    assert found.details["stopped"] == "the time ran out before any attribute's label costs"
    assert bounds.lower_bound(inst, [fa.KAnonymity(5)], "ncp").value > 0 and len(read) == 3


def test_no_bound_process_for_less_than_its_floor(monkeypatch):
    """The bound would get less than BESIDE_MIN_SECONDS beside the search (the floor
    raised above the whole limit here): no process is forked for it (starting and ending
    one took 0.05-0.08 s of a 0.3-0.5 s limit, for no answer); the bound is computed
    after the search instead."""
    _, started = _bound_beside(monkeypatch)
    monkeypatch.setattr(lns_module, "BESIDE_MIN_SECONDS", 1e9)
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    rel = lns(inst, reqs, objective="ncp", seed=0, time_limit=4, whole_types=0)
    assert started == [] and "beside_search" not in rel.provenance["lower_bound"]
    assert rel.bound is not None and rel.bound <= rel.objective
    assert fa.verify(inst, rel, reqs).passed


def test_the_search_indexes_no_class_past_its_deadline(monkeypatch):
    """The search's set-up (narrowing the classes, counting the distinct records) ends
    past its deadline, a clock moved by hand: no round runs and the classes are not
    indexed for one (the index took 5 ms CPU on UCI Adult past the deadline)."""
    import importlib
    from unittest import mock

    search_module = importlib.import_module("fairanon.solver.lns.search")
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    start = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    registries = [Registry(inst, name) for name in inst.schema.generalizable]
    inc = Incumbent.from_release(inst, reqs, registries, start, "ncp")
    now = [0.0]
    monkeypatch.setattr(time, "perf_counter", lambda: now[0])
    real = search_module.Incumbent.tighten

    def tighten(self, *args, **kwargs):
        changed = real(self, *args, **kwargs)
        now[0] = 2.0  # the narrowing ended past the deadline
        return changed

    monkeypatch.setattr(search_module.Incumbent, "tighten", tighten)
    indexed = AssertionError("the classes were indexed past the deadline")
    monkeypatch.setattr(search_module, "ClassIndex", mock.Mock(side_effect=indexed))
    value = inc.value
    result = search_module.search(inc, reqs, seed=0, deadline=1.0, whole_types=0, searches=1)
    assert result.rounds == 0 and inc.value <= value


def test_the_whole_table_check_reads_a_prefix_of_a_table_with_many_records(monkeypatch):
    """Whether the table is re-solved whole (at most whole_types distinct records) is
    settled on its first 4 (whole_types + 1) records when they hold more than that
    (German credit: 44 records, more than 10 distinct), not on all 1,000; a table of
    few distinct records is counted whole (10 distinct by hand among 1,000)."""
    import importlib

    import numpy as np
    import pandas as pd

    search_module = importlib.import_module("fairanon.solver.lns.search")
    read = []
    real = search_module.unique_rows
    monkeypatch.setattr(search_module, "unique_rows", lambda keys: read.append(len(keys)) or real(keys))

    def incumbent(inst):
        start = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian", seed=0)
        registries = [Registry(inst, n) for n in inst.schema.generalizable]
        return Incumbent.from_release(inst, [fa.KAnonymity(2)], registries, start, "ncp")

    assert search_module._distinct(incumbent(_german()), 10) > 10 and read == [44]
    read.clear()
    df = pd.DataFrame({"a": np.arange(1000) % 5, "b": np.arange(1000) % 2, "s": ["x"] * 1000})
    schema = fa.Schema([fa.Attribute("a", kind="numeric"), fa.Attribute("b", kind="numeric"),
                        fa.Attribute("s", role="sensitive")])
    few = fa.Instance(df, schema, name="few")
    assert search_module._distinct(incumbent(few), 10) == 10 and read == [44, 1000]


def test_a_re_solve_gets_the_time_left_after_its_set_up(monkeypatch):
    """A round sets its re-solve's time_limit before the neighbourhood's model is built;
    CP-SAT gets at most the time left after that set-up less LOAD_FACTOR (1) times it,
    and is not run when none is left (a round ending at the deadline used to pass it by
    the set-up and CP-SAT's loading: up to 0.34 s on UCI Adult). On subproblem's clock,
    moved 1 s by the build from 1000: a deadline at 1005 and a limit of 4 s give CP-SAT
    1005 - 1001 - 1 = 3 s (the move's labels make a verified release no worse than the
    start); a deadline at 1001.5 gives it none (UNKNOWN, no labels, nothing proven)."""
    import importlib
    import types

    import numpy as np

    from fairanon.release import Release
    from fairanon.solver.lns.neighbourhoods import ClassIndex

    sub = importlib.import_module("fairanon.solver.lns.subproblem")
    assert sub.LOAD_FACTOR == 1.0
    now, given = [1000.0], []
    monkeypatch.setattr(sub, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    build, solve = sub.build_model, sub.solve_model

    def slow_build(*args, **kwargs):
        now[0] += 1.0
        # the build's own deadline, on the real clock, is far
        return build(*args, **{**kwargs, "deadline": None})

    def recorded(*args, time_limit=None, **kwargs):
        given.append(time_limit)
        return solve(*args, time_limit=time_limit, **kwargs)

    monkeypatch.setattr(sub, "build_model", slow_build)
    monkeypatch.setattr(sub, "solve_model", recorded)
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    start = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    registries = [Registry(inst, name) for name in inst.schema.generalizable]
    inc = Incumbent.from_release(inst, reqs, registries, start, "ncp")
    before = inc.value
    nb = ClassIndex(inc, 5).neighbourhood("random", np.random.default_rng(0), 60, 10)
    options = dict(recoding="generalization", max_range_values=8, deterministic_limit=None,
                   seed=0, num_workers=1, max_vars=30_000, max_contexts=1000, alpha_cells=None)
    move = sub.solve_neighbourhood(inc, reqs, nb, time_limit=4.0, deadline=1005.0, **options)
    assert given == [3.0] and move.labels is not None
    inc.replace(nb.vectors, nb.rows, move.labels)
    assert fa.verify(inst, Release(inc.table(), inc.groups()), reqs).passed and inc.value <= before
    now[0] = 1000.0
    late = sub.solve_neighbourhood(inc, reqs, nb, time_limit=4.0, deadline=1001.5, **options)
    assert given == [3.0]  # CP-SAT not run
    assert late.status == Status.UNKNOWN and late.labels is None and not late.proven
    assert late.stats["stopped"] == "before CP-SAT"


def test_a_start_is_not_run_in_a_share_below_the_least_it_takes(monkeypatch):
    """DIVA builds its release whatever its limit (under k-anonymity alone its whole
    work: 0.04-0.075 s CPU on UCI Adult) and passed lns's shares below that by
    0.02-0.10 s: with a start in hand, heuristic_start does not start it in a share
    below LEAST_SECONDS (0.005 + 2e-6 n s: 0.007 s on German credit's 1,000 records).
    On a clock moved only by Mondrian (before it, its start in hand), 0.106 s: a
    deadline of 0.112 s leaves DIVA, the last, 0.006 s, skipped; 0.114 s leave it
    0.008 s, and it runs. Each start verifies."""
    import types

    from fairanon.methods import starts

    inst = _german()
    reqs = [fa.KAnonymity(5)]
    made = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    now, ran = [0.0], []

    def mondrian(instance, requirements, *, seed=None, time_limit=None, **options):
        now[0] += 0.106
        return made

    def diva(instance, requirements, *, seed=None, time_limit=None, **options):
        ran.append(time_limit)
        return made

    monkeypatch.setattr(starts, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    monkeypatch.setattr(starts, "_first_check_seconds", lambda instance: 0.0)
    monkeypatch.setattr(starts, "HEURISTICS", (("mondrian", mondrian, None), ("diva", diva, 100_000)))
    first, tried, _ = starts.heuristic_start(inst, reqs, "ncp", seed=0, deadline=0.112,
                                             methods=None)
    assert ran == [] and tried[1]["method"] == "diva" and "below the 0.007 s" in tried[1]["skipped"]
    assert first.method == "mondrian" and fa.verify(inst, first, reqs).passed
    now[0] = 0.0
    first, tried, _ = starts.heuristic_start(inst, reqs, "ncp", seed=0, deadline=0.114,
                                             methods=None)
    assert ran == [pytest.approx(0.008)] and "skipped" not in tried[1]
    assert fa.verify(inst, first, reqs).passed
    assert starts.LEAST_SECONDS["diva"] == (0.005, 2e-6)


def test_a_start_below_the_least_it_takes_runs_when_no_start_is_in_hand(monkeypatch):
    """Under a diversity constraint DIVA is the only heuristic that can enforce the
    requirements (Mondrian refuses it: the constraint is not union-monotone), so it is
    started in a share below LEAST_SECONDS when no start is in hand: skipping it left
    lns without a start, UNKNOWN with time left (UCI Adult, 0.3-0.4 s). It then gets all
    the time left less a third of its least time, as it stops at its own limit but for
    the step under way: on a clock standing still, with 0.1 s of checking expected,
    0.012 s left (a share of 0.006 s, below its 0.007 s on German credit) give DIVA
    0.012 - 0.007 / 3 s; it runs and its release verifies."""
    import types

    from fairanon.methods import starts

    inst = _german()
    reqs = [fa.KAnonymity(5), fa.DiversityConstraint({"housing": "own"}, 100, 1000)]
    real = dict((n, f) for n, f, _ in starts.HEURISTICS)
    given = []

    def diva(instance, requirements, *, seed=None, time_limit=None, **options):
        given.append(time_limit)
        # DIVA keeps its limit: a real one of 0.01-0.02 s would make the run depend on
        # the machine's load; the subject here is the time it is given.
        return real["diva"](instance, requirements, seed=seed, time_limit=60.0, **options)

    monkeypatch.setattr(starts, "time", types.SimpleNamespace(perf_counter=lambda: 0.0))
    monkeypatch.setattr(starts, "_first_check_seconds", lambda instance: 0.1)
    monkeypatch.setattr(starts, "HEURISTICS", (("mondrian", real["mondrian"], None),
                                               ("diva", diva, 100_000),
                                               ("fulldomain", real["fulldomain"], None)))
    first, tried, checked = starts.heuristic_start(inst, reqs, "ncp", seed=0, deadline=0.112,
                                                   methods=None)
    assert "IncompatibleRequirementError" in tried[0]["skipped"]
    assert given == [pytest.approx(0.012 - 0.007 / 3)] and "skipped" not in tried[1]
    assert first is not None and first.method == "diva" and checked is not None
    assert fa.verify(inst, first, reqs).passed


def test_counted_rounds_without_a_limit_give_the_same_release_whatever_the_clock(monkeypatch):
    """lns(max_rounds=N) without a time limit gave its starts wall-clock shares of
    DEFAULT_SECONDS, so a loaded machine skipped or cut some (German credit, k = 5:
    NCP 1,897.43 and 1,944.05 in two runs); its docstring promises the same release for
    the same seed, workers and rounds. On a fake clock in the starts moved 0 s, then
    10 s, by each heuristic (the second run past the starts' 24 s after three), the
    release is the same, and verifies."""
    import types

    from fairanon.methods import starts

    inst = _german()
    reqs = [fa.KAnonymity(5)]
    base, ticks = time.perf_counter(), [0.0]
    step = [0.0]

    def moving(func):
        def run(*args, **kwargs):
            ticks[0] += step[0]
            return func(*args, **kwargs)
        return run

    monkeypatch.setattr(starts, "time", types.SimpleNamespace(perf_counter=lambda: base + ticks[0]))
    monkeypatch.setattr(starts, "HEURISTICS", tuple((n, moving(f), m) for n, f, m in starts.HEURISTICS))
    releases = []
    for seconds in (0.0, 10.0):
        step[0] = seconds
        rel = lns(inst, reqs, seed=0, max_rounds=4, bound=False)
        assert fa.verify(inst, rel, reqs).passed
        releases.append(rel)
    first, second = releases
    assert not any("skipped" in t and "time" in t["skipped"] for t in second.provenance["starts"])
    assert first.objective == second.objective
    assert first.table.astype(str).equals(second.table.astype(str))


def test_without_a_start_in_hand_the_heuristics_time_runs_to_the_callers_limit(monkeypatch):
    """lns at 0.04 s gives its starts 40 % (to 0.016 s) and passes its own limit less
    its finishing share (0.038 s). Under a diversity constraint Mondrian refuses and
    DIVA alone can give a start: on a clock that Mondrian moves to 0.017 s, past the
    starts' share, DIVA is not skipped for want of time (lns returned UNKNOWN with
    time left, German credit) but, no start being in hand, gets the 0.021 s left to
    0.038 s less a third of its least 0.007 s (it stops at its own limit but for the
    step under way); its start verifies."""
    import types

    from fairanon.methods import starts

    inst = _german()
    reqs = [fa.KAnonymity(5), fa.DiversityConstraint({"housing": "own"}, 100, 1000)]
    real = dict((n, f) for n, f, _ in starts.HEURISTICS)
    now, given = [0.0], []

    def mondrian(instance, requirements, **options):
        now[0] = 0.017
        return real["mondrian"](instance, requirements, **options)

    def diva(instance, requirements, *, seed=None, time_limit=None, **options):
        given.append(time_limit)
        # DIVA keeps its limit: a real one of 0.01-0.02 s would make the run depend on
        # the machine's load; the subject here is the time it is given.
        return real["diva"](instance, requirements, seed=seed, time_limit=60.0, **options)

    monkeypatch.setattr(starts, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    monkeypatch.setattr(starts, "_first_check_seconds", lambda instance: 0.0)
    monkeypatch.setattr(starts, "HEURISTICS", (("mondrian", mondrian, None),
                                               ("diva", diva, 100_000),
                                               ("fulldomain", real["fulldomain"], None)))
    budget = 0.04
    first, tried, checked = starts.heuristic_start(
        inst, reqs, "ncp", seed=0, deadline=lns_module.START_SHARE * budget,
        limit=budget - lns_module.FINISH_SHARE * budget, methods=None)
    assert "IncompatibleRequirementError" in tried[0]["skipped"]
    assert given == [pytest.approx(0.038 - 0.017 - 0.007 / 3)] and "skipped" not in tried[1]
    assert first is not None and first.method == "diva" and checked is not None
    assert fa.verify(inst, first, reqs).passed


def test_the_only_start_finishing_its_last_step_past_its_limit_is_still_checked(monkeypatch):
    """Without a start in hand DIVA finishes a step begun before its limit (Suppress and
    Anonymize: 0.006-0.02 s past limits of 0.05-0.06 s on UCI Adult, 2 shared cores).
    Given all the time left to lns's limit less the check, it ended past the point where
    its check would still end by that limit and its release was dropped, not checked:
    lns at 0.12-0.15 s on Adult under race constraints returned UNKNOWN in 2 of 3 runs.
    It now gets the time left less a third of its least time (0.005 + 2e-6 n s). On a
    clock standing still but for DIVA, which runs 5 ms past the limit it is given, with
    0.05 s of checking expected and lns's limit at 0.19 s: DIVA gets
    0.14 - (0.005 + 2e-6 * 30,162) / 3 s and its release is checked, chosen, and
    verifies."""
    import types

    from fairanon.methods import starts

    inst = fa.load("adult")
    reqs = [fa.KAnonymity(5), fa.DiversityConstraint({"race": "Black"}, 2000, 3000),
            fa.DiversityConstraint({"race": "Asian-Pac-Islander"}, 500, 1000),
            fa.DiversityConstraint({"race": "Amer-Indian-Eskimo", "sex": "Female"}, 50, 200)]
    real = dict((n, f) for n, f, _ in starts.HEURISTICS)
    now, given = [0.0], []

    def diva(instance, requirements, *, seed=None, time_limit=None, **options):
        given.append(time_limit)
        now[0] += time_limit + 0.005  # its last step ends 5 ms past its limit
        # Without a binding limit, so that the outcome does not depend on the load.
        return real["diva"](instance, requirements, seed=seed, time_limit=60.0, **options)

    monkeypatch.setattr(starts, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    monkeypatch.setattr(starts, "_first_check_seconds", lambda instance: 0.05)
    monkeypatch.setattr(starts, "HEURISTICS", (("mondrian", real["mondrian"], None),
                                               ("diva", diva, 100_000)))
    first, tried, checked = starts.heuristic_start(inst, reqs, "ncp", seed=0, deadline=0.08,
                                                   limit=0.19, methods=None)
    assert "IncompatibleRequirementError" in tried[0]["skipped"]
    assert tried[1]["status"] == "FEASIBLE" and tried[1]["over_s"] == pytest.approx(0.005)
    assert first is not None and first.method == "diva" and checked is not None
    assert given == [pytest.approx(0.14 - (0.005 + 2e-6 * 30_162) / 3)]
    assert fa.verify(inst, first, reqs).passed


def _counted_clock(monkeypatch, seconds):
    """One fake clock for lns and its starts, moved `seconds` by each heuristic: a run
    counted in rounds whose starts took far more than DEFAULT_SECONDS."""
    import types

    from fairanon.methods import starts

    base, ticks = time.perf_counter(), [0.0]

    def moving(func):
        def run(*args, **kwargs):
            ticks[0] += seconds
            return func(*args, **kwargs)
        return run

    clock = types.SimpleNamespace(perf_counter=lambda: base + ticks[0])
    monkeypatch.setattr(starts, "time", clock)
    monkeypatch.setattr(lns_module, "time", clock)
    monkeypatch.setattr(starts, "HEURISTICS", tuple((n, moving(f), m) for n, f, m in starts.HEURISTICS))


def test_counted_rounds_give_the_bound_an_allotment_of_its_own(monkeypatch):
    """lns(max_rounds=N) without a time limit lets its starts run to their end; the bound
    after the search got what was left of DEFAULT_SECONDS, often nothing (200,000
    records, 7 QIs: 155 s, "no time was left for a bound"). On a fake clock moved 100 s
    by each heuristic, the bound after the search gets BOUND_SHARE x DEFAULT_SECONDS
    (0.15 x 60 = 9 s) and is found; the release verifies."""
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    _counted_clock(monkeypatch, 100.0)
    monkeypatch.setattr(lns_module, "_bound_apart", lambda *args, **kwargs: (None, True))
    real, given = lns_module.best_bound, []

    def best_bound(*args, time_limit=None, **kwargs):
        given.append(time_limit)
        return real(*args, time_limit=time_limit, **kwargs)

    monkeypatch.setattr(lns_module, "best_bound", best_bound)
    rel = lns(inst, reqs, seed=0, max_rounds=2, whole_types=1)
    assert fa.verify(inst, rel, reqs).passed
    assert given == [pytest.approx(9.0)], (rel.status, rel.provenance["lower_bound"])
    assert rel.provenance["lower_bound"]["method"] != "none" and rel.bound is not None
    assert rel.bound <= rel.objective


def test_counted_rounds_try_every_cell_star_whatever_the_clock(monkeypatch):
    """Without a heuristic's start, a table too large to be re-solved whole starts from
    every cell '*' when that meets the requirements; in a run counted in rounds (no time
    limit) that was skipped by the clock (the starts past the 60 s default: "no time
    was left to try another start", or its check "would pass the time limit"), so the
    release depended on the machine's load. On a fake clock moved 100 s by the only
    heuristic, which gives nothing, the search starts from every cell '*'; the release
    verifies and loses no more than it (a hand count: every cell '*' costs NCP 1 per
    generalizable cell)."""
    from fairanon.methods import starts

    inst = _german()
    reqs = [fa.KAnonymity(5)]

    def nothing(instance, requirements, **options):
        raise fa.exceptions.IncompatibleRequirementError("no release here")

    monkeypatch.setattr(starts, "HEURISTICS", tuple(
        (n, nothing if n == "mondrian" else f, m) for n, f, m in starts.HEURISTICS))
    _counted_clock(monkeypatch, 100.0)
    rel = lns(inst, reqs, seed=0, max_rounds=2, start="mondrian", whole_types=1, bound=False)
    assert rel.status == Status.FEASIBLE, rel.reason
    assert any(t["method"] == "every cell '*'" and t.get("status") == "FEASIBLE"
               for t in rel.provenance["starts"])
    assert fa.verify(inst, rel, reqs).passed
    assert rel.objective <= inst.n_rows * len(inst.schema.generalizable)
