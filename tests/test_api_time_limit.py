"""``fa.anonymize``'s time limit counts the import of the method it runs: the first
look-up of ``fa.anonymize`` in a process imports no method (it used to import them all,
OR-Tools among them: 0.6-0.7 s CPU that no time limit covered), and the first call of a
method imports it inside the call, the method getting what that import left. On a fake
clock; the look-up in a fresh process."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import types

import pytest

import fairanon as fa
from fairanon import api

PROBE = """
import json, sys
import fairanon as fa
fa.anonymize, fa.verify, fa.risk, fa.METHODS
methods = fa.METHODS
known = "mondrian" in methods and "cpsat" in methods and len(methods) == len(list(methods))
heavy = sorted(m for m in sys.modules if m == "ortools" or m.startswith(("fairanon.heuristics",
               "fairanon.methods", "fairanon.solver", "fairanon.models.verify", "scipy")))
methods["mondrian"]
print(json.dumps({"heavy": heavy, "known": known,
                  "mondrian": "fairanon.heuristics.mondrian" in sys.modules,
                  "ortools": "ortools" in sys.modules}))
"""


def test_the_look_up_of_anonymize_imports_no_method():
    """In a fresh process, looking up fa.anonymize, fa.verify, fa.risk and fa.METHODS
    and asking METHODS which names it holds imports no method, no solver, no verifier
    and neither OR-Tools nor scipy; METHODS["mondrian"] imports Mondrian, not OR-Tools."""
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=300)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out == {"heavy": [], "known": True, "mondrian": True, "ortools": False}


@pytest.fixture
def clock(monkeypatch):
    """api's clock at 100 s, moved 0.75 s by each import of a method module; the
    methods' fake module holds `record`, which notes the time limit it is given and
    returns a real (Mondrian) release."""
    now, given, imports = [100.0], [], []
    real = fa.METHODS["mondrian"]

    def record(instance, requirements, *, seed=None, time_limit=None):
        given.append(time_limit)
        return real(instance, requirements, seed=seed, time_limit=time_limit)

    def import_module(name):
        if name != "fake.module":
            return importlib.import_module(name)
        imports.append(name)
        now[0] += 0.75
        return types.SimpleNamespace(record=record)

    monkeypatch.setattr(api, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    monkeypatch.setattr(api, "importlib", types.SimpleNamespace(import_module=import_module))
    monkeypatch.setattr(api, "METHODS", api._Methods({"slow": ("fake.module", "record")}))
    return now, given, imports


def test_the_import_of_a_method_counts_in_its_time_limit(clock):
    """The first call imports the method (0.75 s on the fake clock): of a 1 s limit
    the method gets 1 - 0.75 = 0.25 s, noted as import_s; the second call imports
    nothing and the method gets the whole second, as without a limit it gets None.
    Each release verifies (k = 3 on DIVA's Table 1)."""
    now, given, imports = clock
    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(3)]
    first = fa.anonymize(inst, reqs, method="slow", time_limit=1.0)
    second = fa.anonymize(inst, reqs, method="slow", time_limit=1.0)
    third = fa.anonymize(inst, reqs, method="slow")
    assert imports == ["fake.module"]
    assert given == [0.25, 1.0, None]
    assert first.provenance["import_s"] == 0.75
    assert "import_s" not in second.provenance and "import_s" not in third.provenance
    for release in (first, second, third):
        assert fa.verify(inst, release, reqs).passed


def test_an_import_longer_than_the_limit_leaves_the_least_time(clock):
    """An import of 0.75 s in a limit of 0.5 s leaves the method MIN_METHOD_SECONDS
    (0.01 s), as the command line does when start-up took the limit."""
    now, given, imports = clock
    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(3)]
    release = fa.anonymize(inst, reqs, method="slow", time_limit=0.5)
    assert given == [0.01]
    assert fa.verify(inst, release, reqs).passed


def test_methods_is_a_mapping_like_the_dict_it_was(clock, monkeypatch):
    """METHODS knows its names before any import, imports a method on its look-up
    only, and takes new names and removals as a dict does."""
    now, given, imports = clock
    methods = api.METHODS
    assert list(methods) == ["slow"] and "slow" in methods and len(methods) == 1 and imports == []
    assert methods.load() == 0.75 and imports == ["fake.module"] and methods.load() == 0.0

    def custom(instance, requirements, *, seed=None, time_limit=None):
        raise AssertionError("not called")

    methods["custom"] = custom
    assert methods["custom"] is custom and list(methods) == ["slow", "custom"]
    del methods["slow"]
    assert list(methods) == ["custom"] and "slow" not in methods
    with pytest.raises(KeyError):
        methods["slow"]


@pytest.mark.parametrize("then_lns", [False, True])
def test_auto_counts_its_choice_in_the_time_limit(monkeypatch, then_lns):
    """auto's choice (the models' sizes) takes 0.5 s on api's fake clock: the chosen
    method, or lns after it, gets 12 - 0.5 = 11.5 s of a 12 s limit, and whether lns
    follows is decided on the 12 s given (recorded as auto_time_limit). The release
    verifies (k = 3 on DIVA's Table 1)."""
    import fairanon.methods.lns as lns_module

    now, given = [100.0], []
    monkeypatch.setattr(api, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    api.METHODS.load()
    mondrian = api.METHODS["mondrian"]

    def choose(instance, requirements, time_limit, options):
        now[0] += 0.5
        return "mondrian", "chosen by hand", {}

    def record(name):
        def method(instance, requirements, *, seed=None, time_limit=None, **options):
            given.append((name, time_limit))
            return mondrian(instance, requirements, seed=seed)
        return method

    monkeypatch.setattr(api, "_choose", choose)
    monkeypatch.setattr(api, "_lns_after", lambda name, reqs, limit, options: then_lns and limit == 12.0)
    monkeypatch.setitem(api.METHODS, "mondrian", record("mondrian"))
    monkeypatch.setattr(lns_module, "lns", record("lns"))
    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(3)]
    release = fa.anonymize(inst, reqs, time_limit=12.0)
    assert given == [("lns" if then_lns else "mondrian", 11.5)]
    assert release.provenance["auto_time_limit"] == 12.0
    assert fa.verify(inst, release, reqs).passed


def test_the_dask_engine_counts_its_import_and_conversion(monkeypatch):
    """With engine="dask" the import of the Dask engine and the instance's conversion
    (0.75 s on api's fake clock) count in the time limit: the distributed Mondrian gets
    1 - 0.75 = 0.25 s; without a limit, none."""
    pytest.importorskip("dask")
    import fairanon.distributed as distributed
    from fairanon.distributed.release import DistributedRelease

    now, given = [100.0], []
    monkeypatch.setattr(api, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))

    def inputs(instance, release, schema):
        now[0] += 0.75
        return instance, None

    def mondrian_dask(dinst, requirements, *, seed=None, time_limit=None, **options):
        given.append(time_limit)
        return DistributedRelease(None, provenance={"params": {"time_limit": time_limit}})

    monkeypatch.setattr(api, "_dask_inputs", inputs)
    monkeypatch.setattr(distributed, "mondrian_dask", mondrian_dask)
    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(3)]
    limited = fa.anonymize(inst, reqs, method="mondrian", engine="dask", time_limit=1.0)
    unlimited = fa.anonymize(inst, reqs, method="mondrian", engine="dask")
    assert given == [0.25, None]
    # The limit as given, what the import and conversion took, and the reason saying
    # so (they took 0.75 s of 1 s); without a limit only what they took.
    # The engine was imported before these calls: conversion_s alone, no import_s.
    assert limited.provenance == {"params": {"time_limit": 0.25}, "conversion_s": 0.75,
                                  "time_limit_given": 1.0}
    assert limited.reason == ("the instance's conversion took 0.75 s of the 1 s time limit, "
                              "leaving the method 0.25 s")
    assert unlimited.provenance == {"params": {"time_limit": None}, "conversion_s": 0.75}
    assert unlimited.reason is None


def test_the_dask_engine_records_its_import_only_when_it_imports(monkeypatch):
    """import_s on Dask held the engine's import and the instance's conversion, so it
    was never 0 (0.05 s in later calls); it is now the import alone, recorded only in
    the call that imports the engine, as locally, and conversion_s the conversion. On
    api's fake clock the import takes 0.5 s, the conversion 0.25 s: of 1 s the method
    gets 0.25 s; a second call, the engine imported, records conversion_s only."""
    pytest.importorskip("dask")
    import fairanon.distributed as distributed
    from fairanon.distributed.release import DistributedRelease

    now, given, imports = [100.0], [], []

    def import_module(name):
        if name == "fairanon.distributed":
            if name not in sys.modules:
                imports.append(name)
                now[0] += 0.5
                sys.modules[name] = distributed
            return distributed
        return importlib.import_module(name)

    def inputs(instance, release, schema):
        now[0] += 0.25
        return instance, None

    def mondrian_dask(dinst, requirements, *, seed=None, time_limit=None, **options):
        given.append(time_limit)
        return DistributedRelease(None, provenance={"params": {"time_limit": time_limit}})

    monkeypatch.setattr(api, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    monkeypatch.setattr(api, "importlib", types.SimpleNamespace(import_module=import_module))
    monkeypatch.setattr(api, "_dask_inputs", inputs)
    monkeypatch.setattr(distributed, "mondrian_dask", mondrian_dask)
    monkeypatch.delitem(sys.modules, "fairanon.distributed")  # a process that has not imported it
    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(3)]
    first = fa.anonymize(inst, reqs, method="mondrian", engine="dask", time_limit=1.0)
    second = fa.anonymize(inst, reqs, method="mondrian", engine="dask", time_limit=1.0)
    assert given == [0.25, 0.75] and imports == ["fairanon.distributed"]
    assert first.provenance == {"params": {"time_limit": 0.25}, "import_s": 0.5,
                                "conversion_s": 0.25, "time_limit_given": 1.0}
    assert first.reason == ("the first call's import of the Dask engine and the instance's "
                            "conversion took 0.75 s of the 1 s time limit, leaving the method 0.25 s")
    assert second.provenance == {"params": {"time_limit": 0.75}, "conversion_s": 0.25,
                                 "time_limit_given": 1.0}
    assert second.reason is None


def test_auto_counts_the_import_from_the_call_and_decides_on_the_limit_given(clock, monkeypatch):
    """auto's first call imports every method (0.75 s on the fake clock): the chosen
    method gets 12 - 0.75 = 11.25 s of a 12 s limit, while the choice and whether lns
    follows are made on the 12 s given (a limit cut by the import to 11.25 s would
    not run lns from AUTO_LNS_SECONDS = 12 here, in a fresh process only). The release
    verifies (k = 3 on DIVA's Table 1)."""
    now, given, imports = clock
    seen = []
    methods = api._Methods({"auto": (api.__name__, "_auto"), "slow": ("fake.module", "record")})
    monkeypatch.setattr(api, "METHODS", methods)
    monkeypatch.setattr(api, "AUTO_LNS_SECONDS", 12.0)

    def choose(instance, requirements, time_limit, options):
        seen.append(("choice", time_limit))
        return "slow", "chosen by hand", {}

    def lns_after(name, requirements, time_limit, options):
        seen.append(("lns after", time_limit))
        return False

    monkeypatch.setattr(api, "_choose", choose)
    monkeypatch.setattr(api, "_lns_after", lns_after)
    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(3)]
    release = fa.anonymize(inst, reqs, time_limit=12.0)
    assert imports == ["fake.module"] and given == [11.25]
    assert seen == [("choice", 12.0), ("lns after", 12.0)]
    assert release.provenance["auto_time_limit"] == 12.0 and release.provenance["import_s"] == 0.75
    assert fa.verify(inst, release, reqs).passed


def test_auto_gives_an_exact_model_all_of_its_seconds_without_a_limit(clock, monkeypatch):
    """Without a time limit "auto" gives the exact model it chose AUTO_EXACT_SECONDS
    (60 s), the budget its size rule is calibrated for: the import of the methods
    (0.75 s on the fake clock) and the choice are not taken from it, as no limit given
    counts them (it was given 60 - 0.75 = 59.25 s). The release verifies."""
    now, given, imports = clock
    monkeypatch.setattr(api, "METHODS", api._Methods({"auto": (api.__name__, "_auto"),
                                                      "slow": ("fake.module", "record")}))
    monkeypatch.setattr(api, "_EXACT", ("slow",))
    monkeypatch.setattr(api, "_choose", lambda instance, requirements, time_limit, options:
                        ("slow", "chosen by hand", {}))
    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(3)]
    release = fa.anonymize(inst, reqs)
    assert imports == ["fake.module"] and given == [api.AUTO_EXACT_SECONDS] == [60.0]
    assert fa.verify(inst, release, reqs).passed


def test_the_portfolio_gets_at_least_the_least_a_method_gets(clock, monkeypatch):
    """An import of 0.75 s in a limit of 0.5 s leaves auto's portfolio
    MIN_METHOD_SECONDS (0.01 s), the least anonymize promises a method (it got 1e-3 s).
    The release verifies."""
    from fairanon.heuristics.mondrian import mondrian
    from fairanon.methods import portfolio

    now, given, imports = clock
    monkeypatch.setattr(api, "METHODS", api._Methods({"auto": (api.__name__, "_auto"),
                                                      "slow": ("fake.module", "record"),
                                                      "portfolio": api._METHOD_SOURCES["portfolio"]}))
    monkeypatch.setattr(api, "_choose", lambda instance, requirements, time_limit, options:
                        ("portfolio", "chosen by hand", {}))
    monkeypatch.setattr(api, "_lns_after", lambda *args: False)
    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(3)]
    made = mondrian(inst, reqs, seed=0)

    def ranked(instance, requirements, *, seed=None, time_limit=None, **options):
        given.append(time_limit)
        return [made.with_provenance(portfolio=[], portfolio_winner="mondrian",
                                     portfolio_objective="lm")]

    monkeypatch.setattr(portfolio, "ranked", ranked)
    release = fa.anonymize(inst, reqs, time_limit=0.5)
    assert given == [api.MIN_METHOD_SECONDS] == [0.01]
    assert fa.verify(inst, release, reqs).passed


def test_the_provenance_keeps_the_limit_given_and_the_reason_names_the_import(clock, monkeypatch):
    """The method's own limit (params' time_limit) is what the import left: 0.25 s of
    1 s after an import of 0.75 s on the fake clock. The provenance keeps the limit as
    given (time_limit_given, 1 s) beside import_s, and the reason says that the import
    took most of it; the second call imports nothing, and says nothing of it. An import
    of 0.75 s of 3 s (less than half) is not said either. Each release verifies."""
    now, given, imports = clock
    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(3)]
    first = fa.anonymize(inst, reqs, method="slow", time_limit=1.0)
    second = fa.anonymize(inst, reqs, method="slow", time_limit=1.0)
    assert given == [0.25, 1.0]
    assert first.provenance["params"]["time_limit"] == 0.25
    assert first.provenance["time_limit_given"] == 1.0 and first.provenance["import_s"] == 0.75
    assert first.reason == ("the first call's import of slow took 0.75 s of the 1 s time limit, "
                            "leaving the method 0.25 s (later calls in this process do not import)")
    assert second.provenance["params"]["time_limit"] == 1.0
    assert second.provenance["time_limit_given"] == 1.0 and "import_s" not in second.provenance
    assert second.reason is None
    for release in (first, second):
        assert fa.verify(inst, release, reqs).passed
    monkeypatch.setattr(api, "METHODS", api._Methods({"slow": ("fake.module", "record")}))
    third = fa.anonymize(inst, reqs, method="slow", time_limit=3.0)
    assert third.provenance["import_s"] == 0.75 and third.reason is None
    assert fa.anonymize(inst, reqs, method="slow").provenance.get("time_limit_given") is None


def test_autos_note_counts_the_choice_as_the_method_does(clock, monkeypatch):
    """auto gives the method what the import of the methods and its choice left: on the
    fake clock an import of 0.75 s and a choice of 0.125 s of a 1.5 s limit leave the
    method 1.5 - 0.875 = 0.625 s (params' time_limit). The reason said "leaving the
    method 0.75 s", the import alone taken from the limit; it now says 0.875 s and
    0.625 s, as params. The release verifies."""
    now, given, imports = clock
    monkeypatch.setattr(api, "METHODS", api._Methods({"auto": (api.__name__, "_auto"),
                                                      "slow": ("fake.module", "record")}))

    def choose(instance, requirements, time_limit, options):
        now[0] += 0.125
        return "slow", "chosen by hand", {}

    monkeypatch.setattr(api, "_choose", choose)
    monkeypatch.setattr(api, "_lns_after", lambda *args: False)
    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(3)]
    release = fa.anonymize(inst, reqs, time_limit=1.5)
    assert given == [0.625] and release.provenance["params"]["time_limit"] == 0.625
    assert release.provenance["import_s"] == 0.75 and release.provenance["auto_before_s"] == 0.875
    assert release.reason == ("the first call's import of the methods and auto's choice took "
                              "0.88 s of the 1.5 s time limit, leaving the method 0.62 s (later "
                              "calls in this process do not import)")
    assert fa.verify(inst, release, reqs).passed
