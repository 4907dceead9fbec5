"""OKA: the test vectors of docs/papers.md, B-5, seeds, the protected attribute, bad
input, and property tests through the verifier."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairanon as fa
from fairanon.exceptions import IncompatibleRequirementError, InvalidParameterError
from fairanon.heuristics.kmember import RecordSpace, information_loss, protected_classes
from fairanon.heuristics.oka import oka, oka_clusters
from fairanon.release import Status

PROPERTY = settings(deadline=None, max_examples=30)


def li_instance():
    zips = [47677, 47602, 47678, 47905, 47909, 47906, 47605, 47673, 47607]
    ages = [29, 22, 27, 43, 52, 47, 30, 36, 32]
    df = pd.DataFrame({"zip": zips, "age": ages}, index=range(1, 10))
    schema = fa.Schema([fa.Attribute("zip", kind="numeric"), fa.Attribute("age", kind="numeric")])
    return fa.Instance(df, schema, name="li")


def _passes(instance, release, requirements):
    report = fa.verify(instance, release, requirements, metrics=False)
    assert report.passed, str(report)


@pytest.mark.parametrize(
    "k, seeds, clusters, total_il",
    [
        (3, (1, 4, 7), [[1, 3, 8], [4, 5, 6], [7, 2, 9]], Fraction(4508, 1535)),
        (2, (1, 3, 5, 7), [[1, 8], [3, 2], [4, 6, 5], [7, 9]], Fraction(4433, 1842)),
    ],
)
def test_spec_vectors(k, seeds, clusters, total_il):
    inst = li_instance()
    space = RecordSpace(inst)
    found, cut = oka_clusters(space, np.arange(9), k, seeds=np.array(seeds) - 1)
    assert not cut
    assert [inst.row_ids[c].tolist() for c in found] == clusters
    assert information_loss(space, found) == total_il
    release = oka(inst, [fa.KAnonymity(k)], seeds=list(seeds))
    assert release.status == Status.FEASIBLE and release.objective == total_il
    _passes(inst, release, [fa.KAnonymity(k)])


def test_random_seeds_and_shuffle_are_reproducible():
    inst = fa.load("diva_table1")
    a = oka(inst, [fa.KAnonymity(2)], seed=5, order="shuffle")
    b = oka(inst, [fa.KAnonymity(2)], seed=5, order="shuffle")
    assert (a.groups == b.groups).all()
    _passes(inst, a, [fa.KAnonymity(2)])


def test_protected_classes_on_german():
    inst = fa.load("german")
    release = oka(inst, [fa.KAnonymity(20)], seed=0, recoding="suppress")
    _passes(inst, release, [fa.KAnonymity(20)])
    ps = inst.table["personal_status"].to_numpy()
    assert all(len(set(ps[release.groups == g])) == 1 for g in np.unique(release.groups))


def test_bad_inputs():
    inst = li_instance()
    with pytest.raises(InvalidParameterError, match=r"floor\(9 / 3\) = 3 distinct seed"):
        oka(inst, [fa.KAnonymity(3)], seeds=[1, 2])
    with pytest.raises(InvalidParameterError, match="record ids of the instance"):
        oka(inst, [fa.KAnonymity(3)], seeds=[1, 2, 99])
    with pytest.raises(InvalidParameterError, match="'order' parameter of oka"):
        oka(inst, [fa.KAnonymity(3)], order="reverse")
    with pytest.raises(IncompatibleRequirementError, match="oka enforces only KAnonymity"):
        oka(fa.load("diva_table1"), [fa.KAnonymity(3), fa.LDiversity(2)])


@PROPERTY
@given(st.integers(3, 16), st.integers(1, 4), st.integers(0, 2**16))
def test_every_cluster_reaches_k(n, k, seed):
    k = min(k, n)
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.integers(0, 50, n), "c": rng.choice(["u", "v", "w"], n)})
    inst = fa.Instance(df, fa.Schema([fa.Attribute("x", kind="numeric"), fa.Attribute("c")]))
    release = oka(inst, [fa.KAnonymity(k)], seed=seed)
    _passes(inst, release, [fa.KAnonymity(k)])
    sizes = np.bincount(release.groups)
    assert sizes.min() >= k and len(sizes) == n // k


class _Clock:
    """A perf_counter that reads 0 for its first `reads` calls, then 10."""

    def __init__(self, reads: int):
        self.left = reads

    def perf_counter(self) -> float:
        self.left -= 1
        return 0.0 if self.left >= 0 else 10.0


@pytest.mark.parametrize("when", ["first", "early", "late", "second pass"])
def test_a_deadline_cuts_the_pass_into_a_last_cluster(monkeypatch, when):
    """Past the deadline (read before every record here, CLOCK_RECORDS = 1) the
    clusters of k records or more stay and every other record forms one last cluster:
    German credit's 1,000 records, k = 5, 200 seeds, the clock passing before the first
    record, after 300 or 700 of the first pass's 800, or before the second pass's last
    record (the reads of an uncut run, less one). Cut before any record, every seed's
    cluster holds one record, so all 1,000 form one cluster; in the first pass, the
    clusters partition the records, each of at least 5, fewer than the 200 of the uncut
    run and more than one; before the last record, the uncut run's clusters. oka() so cut verifies, FEASIBLE with time_limit_reached (one cluster
    a protected value when cut at once)."""
    from fairanon.heuristics import oka as oka_module

    inst = fa.load("german")
    space = RecordSpace(inst)
    rows = np.arange(inst.n_rows)
    seeds = np.random.default_rng(0).choice(rows, size=200, replace=False)
    monkeypatch.setattr(oka_module, "CLOCK_RECORDS", 1)
    counting = _Clock(10**9)
    monkeypatch.setattr(oka_module, "time", counting)
    whole, cut = oka_clusters(space, rows, 5, seeds=seeds, deadline=5.0)
    assert not cut and len(whole) == 200
    total = 10**9 - counting.left
    assert total > 800  # the second pass read the clock too
    reads = {"first": 0, "early": 300, "late": 700, "second pass": total - 1}[when]
    monkeypatch.setattr(oka_module, "time", _Clock(reads))
    found, cut = oka_clusters(space, rows, 5, seeds=seeds, deadline=5.0)
    assert cut
    assert (np.sort(np.concatenate(found)) == rows).all()
    assert min(len(c) for c in found) >= 5
    if when == "first":
        assert len(found) == 1
    elif when == "second pass":
        # 1,000 = 200 x 5: uncut, every cluster holds 5, so before the last record one
        # holds 4, and it with the record left makes the cluster the pass would have
        assert sorted(map(sorted, found)) == sorted(map(sorted, whole))
    else:
        assert 1 < len(found) < 200
    monkeypatch.setattr(oka_module, "time", _Clock(reads + 1))  # oka reads it once first
    release = oka(inst, [fa.KAnonymity(5)], seed=0, time_limit=5.0)
    assert release.status == Status.FEASIBLE and release.provenance["time_limit_reached"]
    if when == "first":
        assert release.n_groups == len(list(protected_classes(inst)))
    _passes(inst, release, [fa.KAnonymity(5)])
