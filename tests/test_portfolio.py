"""The portfolio behind ``auto``: never worse than any method it ran (planted methods),
releases that fail the verifier or raise are never kept, and the provenance says which
method won and why."""

import numpy as np
import pandas as pd
import pytest

import fairanon as fa
from fairanon import api
from fairanon.exceptions import IncompatibleRequirementError
from fairanon.heuristics.lossmondrian import mondrian_loss
from fairanon.heuristics.mondrian import mondrian
from fairanon.methods import portfolio as P
from fairanon.methods import starts
from fairanon.models.objectives import objective_value
from fairanon.release import Release


@pytest.fixture(scope="module")
def german():
    return fa.load("german")


REQS = [fa.KAnonymity(5)]


def _planted(release):
    def planted(instance, requirements, *, seed=None, time_limit=None, **options):
        return release

    return planted


@pytest.mark.parametrize("planted_first", [True, False])
def test_auto_is_never_worse_than_any_method_it_ran(monkeypatch, german, planted_first):
    """A planted method returns a release known in advance; auto keeps whichever of
    the planted and the real methods loses least under LM, measured here independently."""
    better = mondrian_loss(german, REQS, seed=0, objective="lm")
    real = {"mondrian": mondrian}
    candidates = {"planted": _planted(better), **real} if planted_first else {**real, "planted": _planted(better)}
    monkeypatch.setattr(P, "CANDIDATES", candidates)
    assert api.choose_method(german, REQS)[0] == "portfolio"
    rel = fa.anonymize(german, REQS, seed=0)
    losses = {
        "planted": objective_value(german, better, "lm"),
        "mondrian": objective_value(german, mondrian(german, REQS, seed=0), "lm"),
    }
    winner = min(losses, key=losses.get)
    assert rel.provenance["portfolio_winner"] == winner
    assert rel.provenance["auto_choice"] == winner
    assert objective_value(german, rel, "lm") == min(losses.values())
    assert all(objective_value(german, rel, "lm") <= v for v in losses.values())
    assert winner in rel.provenance["auto_reason"]
    assert fa.verify(german, rel, REQS).passed
    if winner == "planted":
        pd.testing.assert_frame_equal(rel.table, better.table)


def test_a_release_the_verifier_rejects_is_never_kept(monkeypatch, german):
    """The planted release shows every record as it is (loss 0, not 5-anonymous)."""
    raw = Release(table=german.table.copy(), groups=np.arange(german.n_rows))
    monkeypatch.setattr(P, "CANDIDATES", {"planted": _planted(raw), "mondrian": mondrian})
    rel = fa.anonymize(german, REQS, seed=0)
    assert rel.provenance["portfolio_winner"] == "mondrian"
    planted = next(t for t in rel.provenance["portfolio"] if t["method"] == "planted")
    assert planted["status"] == "not verified"
    assert fa.verify(german, rel, REQS).passed


def test_refusals_are_skipped_and_nothing_left_is_a_clear_error(monkeypatch, german):
    def refuses(instance, requirements, **_):
        raise IncompatibleRequirementError("planted refusal")

    monkeypatch.setattr(P, "CANDIDATES", {"refuses": refuses, "mondrian": mondrian})
    rel = fa.anonymize(german, REQS, seed=0)
    assert rel.provenance["portfolio"][0]["skipped"].endswith("planted refusal")
    monkeypatch.setattr(P, "CANDIDATES", {"refuses": refuses})
    with pytest.raises(IncompatibleRequirementError, match="No method of the portfolio"):
        fa.anonymize(german, REQS, seed=0)


def test_portfolio_on_a_lattice_takes_the_lattice_local_release():
    """ruggieri_loan has levels on every quasi-identifier: lattice-local runs, and the
    winner is the least loss among the candidates that ran (each measured here)."""
    inst = fa.load("ruggieri_loan")
    reqs = [fa.KAnonymity(3)]
    rel = P.portfolio(inst, reqs, seed=0)
    ran = [t for t in rel.provenance["portfolio"] if "lm" in t]
    assert {"mondrian-loss", "lattice-local", "mondrian"} <= {t["method"] for t in ran}
    value = objective_value(inst, rel, "lm")
    for name in ("mondrian-loss", "lattice-local", "mondrian"):
        options = {"objective": "lm"} if name != "mondrian" else {}
        other = fa.anonymize(inst, reqs, method=name, seed=0, **options)
        assert value <= objective_value(inst, other, "lm")
    assert fa.verify(inst, rel, reqs).passed


def test_ranked_lists_every_verified_release_least_loss_first(monkeypatch, german):
    """The releases auto's lns takes (the winner starts, the next guide): every verified
    candidate, in the order of their LM measured here; the first is portfolio's."""
    real = {"mondrian": mondrian, "mondrian-loss": mondrian_loss}
    monkeypatch.setattr(P, "CANDIDATES", real)
    releases = P.ranked(german, REQS, seed=0)
    values = [objective_value(german, r, "lm") for r in releases]
    assert len(releases) == 2 and values == sorted(values)
    assert all(fa.verify(german, r, REQS).passed for r in releases)
    winner = P.portfolio(german, REQS, seed=0)
    assert objective_value(german, winner, "lm") == values[0]
    assert releases[0].provenance["portfolio_winner"] == winner.provenance["portfolio_winner"]
    # Each release names its own method; only the first names the winner.
    for release in releases:
        own = mondrian(german, REQS, seed=0) if release.method == "mondrian" else mondrian_loss(german, REQS, seed=0)
        assert release.provenance["portfolio_method"] == release.method
        assert objective_value(german, release, "lm") == objective_value(german, own, "lm")
    assert releases[0].provenance["portfolio_winner"] == releases[0].method
    assert "portfolio_winner" not in releases[1].provenance


#: One neighbourhood model of lns in memory: 30,000 assignment variables of 4,000 bytes
#: plus 64 per worker (one worker).
ONE_MODEL = 30_000 * (4000 + 64)


def test_auto_runs_lns_with_memory_for_one_search_process(monkeypatch, german):
    """German has fewer than 2 x 200 classes, so lns searches in one process: a limit
    of one neighbourhood model is enough."""
    monkeypatch.setattr(api, "AUTO_LNS_SECONDS", 1.0)
    rel = fa.anonymize(german, REQS, seed=0, time_limit=2, memory_limit=ONE_MODEL)
    prov = rel.provenance
    assert prov["auto_choice"] == prov["portfolio_winner"] + "+lns"
    assert prov["search"]["parts"] == 1
    assert fa.verify(german, rel, REQS).passed


def test_auto_keeps_the_portfolio_release_when_lns_would_exceed_the_memory_limit(monkeypatch, german):
    monkeypatch.setattr(P, "CANDIDATES", {"mondrian": mondrian})
    monkeypatch.setattr(api, "AUTO_LNS_SECONDS", 1.0)
    rel = fa.anonymize(german, REQS, seed=0, time_limit=2, memory_limit=ONE_MODEL - 1)
    prov = rel.provenance
    assert prov["auto_choice"] == prov["portfolio_winner"] == "mondrian"
    assert "lns" in prov["auto_reason"] and "memory limit" in prov["auto_reason"]
    assert "search" not in prov
    assert objective_value(german, rel, "lm") == objective_value(german, mondrian(german, REQS, seed=0), "lm")
    assert fa.verify(german, rel, REQS).passed


def test_without_a_time_limit_no_clock_decides(monkeypatch, german):
    """Without a time limit the release does not depend on how long anything took: with a
    clock that runs 100 s per reading (a machine under any load), auto gives the same
    release, after the same candidates, as with the real clock."""
    reqs = [fa.KAnonymity(5)]
    calm = fa.anonymize(german, reqs, seed=0)
    readings = iter(range(0, 10**9, 100))
    monkeypatch.setattr("time.perf_counter", lambda: float(next(readings)))
    loaded = fa.anonymize(german, reqs, seed=0)
    assert loaded.table.equals(calm.table)
    ran = [t["method"] for t in calm.provenance["portfolio"] if "skipped" not in t]
    assert ran == [t["method"] for t in loaded.provenance["portfolio"] if "skipped" not in t]
    assert "lattice-local" in ran and "mondrian-loss" in ran
    assert fa.verify(german, loaded, reqs).passed


def test_without_a_time_limit_size_rules_skip_the_long_candidates(monkeypatch, german):
    """German credit: 1,000 records, 7 generalizable quasi-identifiers. k-member's
    expected time is n^2 d / rate = 7e6 / 1e8 s (runs); with a rate of 1e5 it is 70 s
    (skipped). Mondrian with least-loss cuts: n d^2 log2(n) = 1000 * 49 * 9.97 = 488,000
    steps, 49 s at 1e4 per second (skipped). Lattice local above 999 records: skipped."""
    monkeypatch.setitem(starts.QUADRATIC_RATES, "kmember", (1e5, False))
    monkeypatch.setattr(P, "MONDRIAN_LOSS_RATE", 1e4)
    monkeypatch.setattr(P, "LATTICE_LOCAL_ROWS", 999)
    rel = P.portfolio(german, REQS, seed=0)
    skipped = {t["method"]: t["skipped"] for t in rel.provenance["portfolio"] if "skipped" in t}
    assert skipped["kmember"] == ("expected to take about 70 s, more than the "
                                  f"{P.PORTFOLIO_SECONDS:,.0f} s it may take; give a time limit to run it")
    assert skipped["mondrian-loss"].startswith("expected to take about 49 s, more than the ")
    assert skipped["lattice-local"] == "more than 999 records; give a time limit to run it"
    assert fa.verify(german, rel, REQS).passed


@pytest.mark.parametrize("methods", [["mondrain"], "mondrian", [], 3])
def test_an_unknown_candidate_is_refused_by_name(methods):
    inst = fa.load("german")
    with pytest.raises(fa.InvalidParameterError, match="'methods' parameter of portfolio"):
        fa.anonymize(inst, [fa.KAnonymity(5)], method="portfolio", methods=methods)


def test_auto_returns_the_infeasible_release_of_a_candidate_that_proved_it():
    """credit has 2 values, so 3-diversity fails on the whole table and on every
    partition of it: auto's portfolio says so with Mondrian's proof, it does not raise
    as if time or the methods had failed."""
    inst = fa.load("german")
    rel = fa.anonymize(inst, [fa.KAnonymity(5), fa.LDiversity(3)], method="auto", seed=0)
    assert inst.table["credit"].nunique() == 2
    assert rel.status == fa.Status.INFEASIBLE and "whole table" in rel.reason
    assert rel.provenance["auto_choice"] == "mondrian"


def test_auto_takes_a_lexicographic_objective_through_its_portfolio():
    """The pair is compared exactly (objective_value) and shown per cell, each term."""
    inst = fa.load("german")
    reqs = [fa.KAnonymity(5)]
    rel = fa.anonymize(inst, reqs, method="auto", seed=0, objective=("privacy_log", "ncp"))
    assert fa.verify(inst, rel, reqs).passed
    key = rel.provenance["portfolio_objective"]
    assert key == "privacy_log then ncp"
    compared = [entry[key] for entry in rel.provenance["portfolio"] if key in entry]
    assert compared and all(len(value) == 2 for value in compared)
    assert "privacy_log then ncp per cell" in rel.provenance["auto_reason"]


def test_an_infinite_time_limit_is_no_limit():
    """It used to overflow auto's size rule (OverflowError)."""
    inst, reqs = fa.load("diva_table1"), [fa.KAnonymity(3)]
    rel = fa.anonymize(inst, reqs, method="auto", seed=0, time_limit=float("inf"))
    same = fa.anonymize(inst, reqs, method="auto", seed=0)
    assert fa.verify(inst, rel, reqs).passed and rel.table.equals(same.table)
    assert rel.provenance["auto_time_limit"] == same.provenance["auto_time_limit"] == 60
