"""The verifier's report shows lower bounds and gaps: the one a release carries, and the
per-record ones it computes when asked; auto improves a heuristic by lns when time
allows and says so."""

import pytest

import fairanon as fa
from fairanon import api


def _german():
    # Two quasi-identifiers: lns proves the optimum in a third of a second (with job as a
    # third, in about three), and Mondrian's release still leaves a gap to the bound.
    return fa.load("german", qi=["savings", "housing"])


def test_report_shows_the_release_bound_and_computed_ones():
    inst = _german()
    reqs = [fa.KAnonymity(5)]
    # It proves the optimum in under a second; the long limit is margin for a busy machine.
    exact = fa.anonymize(inst, reqs, method="lns", seed=0, time_limit=120)
    assert exact.status == fa.Status.OPTIMAL
    report = fa.verify(inst, exact, reqs)
    own = report.bounds["ncp"]
    assert own["gap"] == 0 and own["bound"] == pytest.approx(own["loss"])
    assert "lns" in own["source"]
    heuristic = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    assert fa.verify(inst, heuristic, reqs).bounds == {}
    computed = fa.verify(inst, heuristic, reqs, bound=True)
    for objective in ("ncp", "lm"):
        b = computed.bounds[objective]
        assert 0 < b["bound"] <= b["loss"] and 0 < b["gap"] < 1
        assert b["source"].startswith("per-record")
    # The bound holds for every release: it is below the proven optimum too.
    assert computed.bounds["ncp"]["bound"] <= float(exact.objective) + 1e-9
    assert "bound: NCP" in str(computed)
    assert computed.to_dict()["bounds"]["lm"]["gap"] == pytest.approx(computed.bounds["lm"]["gap"])


def test_auto_runs_lns_after_the_portfolio_when_time_allows(monkeypatch):
    inst = fa.load("german")
    reqs = [fa.KAnonymity(5)]
    assert api.choose_method(inst, reqs)[0] == "portfolio"
    quick = fa.anonymize(inst, reqs, seed=0)
    assert quick.provenance["auto_choice"] == quick.provenance["portfolio_winner"]
    monkeypatch.setattr(api, "AUTO_LNS_SECONDS", 1.0)
    rel = fa.anonymize(inst, reqs, seed=0, time_limit=4)
    prov = rel.provenance
    assert prov["auto_choice"] == prov["portfolio_winner"] + "+lns"
    assert "large-neighbourhood search" in prov["auto_reason"]
    assert rel.objective <= prov["search"]["start_objective"]
    assert fa.verify(inst, rel, reqs).passed


@pytest.mark.parametrize("name, k", [("diva_table1", 2), ("dewri_t1", 3), ("ruggieri_loan", 3)])
def test_a_bound_equal_to_the_loss_is_shown_equal(name, k):
    """The loss is read exactly from the released table, so a proven optimum's bound
    (an exact fraction) is equal to it -- never a float above it by rounding."""
    from fractions import Fraction

    inst = fa.load(name)
    reqs = [fa.KAnonymity(k)]
    rel = fa.anonymize(inst, reqs, method="cpsat", seed=0, time_limit=10)
    assert rel.status == fa.Status.OPTIMAL and fa.verify(inst, rel, reqs).passed
    report = fa.verify(inst, rel, reqs, bound=True)
    for objective, b in report.bounds.items():
        assert isinstance(b["loss"], Fraction) and isinstance(b["bound"], Fraction)
        assert b["bound"] <= b["loss"]
    own = report.bounds["ncp"]
    assert own["loss"] == own["bound"] == Fraction(rel.objective) and own["gap"] == 0
    shown = report.to_dict()["bounds"]["ncp"]
    assert shown["loss"] == shown["bound"] and shown["loss_exact"] == shown["bound_exact"] == str(own["loss"])
    line = next(line for line in str(report).splitlines() if "bound: NCP" in line)
    loss_text, bound_text = line.split("NCP ")[1].split(",")[0].split(" >= ")
    assert loss_text == bound_text
