"""Sabre's time limit over its bucketization stages, on a fake clock moved one second
per stage of the greedy: past the deadline the stage loop stops with the best t-close
stage planned so far, and without one the coarsest table (t-close, checked exactly) is
released. The stage loop used to plan every stage past the deadline (10,000 values
under equal 0.4-closeness, one record each: 6.3-6.8 s CPU in a time limit of 1 s)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import fairanon as fa
from fairanon import verify
from fairanon.heuristics.sabre import buckets as B
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
    for module in (S, B, P):
        monkeypatch.setattr(module, "time", fake)
    greedy = B._greedy_equal

    def counted(counts):
        for stage in greedy(counts):
            now[0] += 1.0
            steps.append(stage)
            yield stage

    monkeypatch.setattr(B, "_greedy_equal", counted)
    return now, steps


def test_the_stage_loop_stops_at_the_deadline_with_the_first_t_close_stage(clock):
    now, steps = clock
    inst, reqs = _instance()
    rel = S.sabre(inst, reqs, seed=0, time_limit=15.5)  # stage 14 read at 15.0, 15 at 16.0
    assert len(steps) == 16  # every one of the 30 without the deadline read
    assert verify(inst, rel, reqs, metrics=False).passed
    assert rel.provenance["time_limit_reached"] and len(rel.provenance["buckets"]) == 15
    now[0], steps[:] = 0.0, []
    first = S.sabre(inst, reqs, seed=0, buckets="fewest")  # the first stage with U <= t
    assert not first.provenance["time_limit_reached"] and len(first.provenance["buckets"]) == 15
    assert np.array_equal(rel.groups, first.groups)


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
