"""PrivBasis (Li et al. 2012) as Hajian et al. use it in Alg. 7: the noise of the bins
and the split of the budget, checked by distribution tests with fixed seeds and by
exact computation of the selection steps' output distributions on small domains.

- The bins get Laplace noise of scale w/ε5 (w bases, ε5 the bins' share of ε): KS tests
  of the observed noise against that scale, and against the wrong ones.
- Every randomized step is accounted for: the exponential mechanisms spend ε1, ε2/λ per
  item, ε3/n_pairs per pair, the Laplace mechanism ε5 = w / scale; they add up to ε.
- The selection steps are ε-DP as implemented: their exact output distributions, from
  the utilities the code computes, change by at most e^ε between a database and every
  database with one record more or less (unbounded neighbours, Def. 3).
"""

import itertools
import math
from collections import Counter
from fractions import Fraction as F

import numpy as np
import pytest
from scipy import stats

from fairanon import patterns as fp
from fairanon.patterns import dp

def _independent_db(n_items=4, n=40_000, seed=0):
    """Items i0.. independent with probability 1/2: every bin of a basis is large, so the
    rounding to non-negative integers never clamps and noise = noisy - true bin."""
    rng = np.random.default_rng(seed)
    dense = rng.random((n_items, n)) < 0.5
    items = tuple(f"i{j}" for j in range(n_items))
    return fp.TransactionDB(items, dense)


def _true_bins(db, basis):
    dense = db.dense()
    codes = np.zeros(db.n_records, dtype=np.int64)
    for j, item in enumerate(basis):
        codes |= dense[db.index[item]].astype(np.int64) << j
    return np.bincount(codes, minlength=1 << len(basis))


def _noise(db, runs, eps, **options):
    """The rounded Laplace noise of every bin over `runs` seeded releases, and the
    numbers of bases seen."""
    noise, widths = [], set()
    for seed in range(runs):
        out = fp.privbasis(db, 10, eps, fp.Roles({"i0"}, "i1"), seed=seed, **options)
        widths.add(len(out.bins.bases))
        for basis, noisy in zip(out.bins.bases, out.bins.bins):
            noise.append(noisy - _true_bins(db, basis))
    return np.concatenate(noise), widths


def test_bin_noise_is_laplace_with_scale_bases_over_the_bins_budget():
    """One basis of four items (λ = 4 without a support threshold, all six pairs): the
    16 bins of 100 releases carry Lap(1/ε5), ε5 = ε/2 with the default split."""
    db = _independent_db()
    eps = F(1, 50)
    noise, widths = _noise(db, 100, eps)
    assert widths == {1} and len(noise) == 1600
    scale = 1 / float(eps * dp.DEFAULT_SPLIT[3])  # 100
    assert stats.kstest(noise, "laplace", args=(0, scale)).pvalue > 0.01
    # the test has power: half or twice the scale is rejected
    assert stats.kstest(noise, "laplace", args=(0, scale / 2)).pvalue < 1e-6
    assert stats.kstest(noise, "laplace", args=(0, 2 * scale)).pvalue < 1e-6
    # the mean absolute noise estimates the scale (|Lap(b)| is exponential with mean b)
    assert abs(np.abs(noise).mean() / scale - 1) < 4 / math.sqrt(len(noise))


def test_bin_noise_follows_the_split_and_the_number_of_bases():
    """An even split doubles the scale (ε5 = ε/4); one pair among three items gives two
    bases (the pair and the third item), so every bin's noise has scale 2/ε5."""
    db = _independent_db()
    eps = F(1, 50)
    even = (F(1, 4),) * 4
    noise, widths = _noise(db, 100, eps, split=even)
    assert widths == {1}
    assert stats.kstest(noise, "laplace", args=(0, 1 / float(eps / 4))).pvalue > 0.01
    assert stats.kstest(noise, "laplace", args=(0, 1 / float(eps / 2))).pvalue < 1e-6
    db3 = _independent_db(n_items=3)
    noise, widths = _noise(db3, 200, eps, n_pairs=1)
    assert widths == {2}
    scale = 2 / float(eps * dp.DEFAULT_SPLIT[3])
    assert stats.kstest(noise, "laplace", args=(0, scale)).pvalue > 0.01
    assert stats.kstest(noise, "laplace", args=(0, scale / 2)).pvalue < 1e-6


class _Recorder(np.random.Generator):
    """A generator that writes down every Laplace draw's scale and size."""

    def __init__(self, seed):
        super().__init__(np.random.PCG64(seed))
        self.laplace_calls = []

    def laplace(self, loc=0.0, scale=1.0, size=None):
        self.laplace_calls.append((scale, size))
        return super().laplace(loc, scale, size)


def _record(monkeypatch):
    calls = []
    original = dp._exp_mechanism

    def recording(rng, utilities, eps, sensitivity=1.0):
        calls.append((np.asarray(utilities, dtype=float).copy(), eps, sensitivity))
        return original(rng, utilities, eps, sensitivity)

    monkeypatch.setattr(dp, "_exp_mechanism", recording)
    return calls


@pytest.mark.parametrize("split", [dp.DEFAULT_SPLIT, (F(1, 4),) * 4, (F(1, 5), F(1, 5), F(1, 5), F(2, 5))])
def test_the_steps_spend_exactly_epsilon(monkeypatch, split):
    """Alg. 7 line 3 reads D only in PrivBasis: λ (ε1), the items (ε2/λ each), the pairs
    (ε3/n_pairs each) by exponential mechanisms of sensitivity 1, the bins by the
    Laplace mechanism of L1 sensitivity w (a record is in one bin per basis) at scale
    w/ε5. The spent budgets add up to ε."""
    calls = _record(monkeypatch)
    rng = np.random.default_rng(5)
    rows = [{f"i{j}" for j in range(6) if rng.random() < 0.2 + 0.1 * j} for _ in range(500)]
    db = fp.TransactionDB.from_transactions(rows)
    eps = F(3, 4)
    gen = _Recorder(11)
    out = fp.privbasis(db, 15, eps, fp.Roles({"i0"}, "i1"), min_support=F(1, 10), split=split, seed=gen)
    e1, e2, e3, e5 = (float(eps * s) for s in split)
    lam, pairs, w = out.lam, out.details["pairs"], len(out.bins.bases)
    assert all(sens == 1.0 for _, _, sens in calls)
    assert len(calls) == 1 + lam + len(pairs)
    assert calls[0][1] == pytest.approx(e1)
    assert [c[1] for c in calls[1 : 1 + lam]] == pytest.approx([e2 / lam] * lam)
    assert [c[1] for c in calls[1 + lam :]] == pytest.approx([e3 / len(pairs)] * len(pairs))
    assert [s for s, _ in gen.laplace_calls] == pytest.approx([w / e5] * w)
    assert [size for _, size in gen.laplace_calls] == [1 << len(b) for b in out.bins.bases]
    spent = sum(c[1] for c in calls) + sum(w / s for s, _ in gen.laplace_calls) / w
    assert spent == pytest.approx(float(eps), rel=1e-12)
    # the utilities are the data's: item supports (step 2), pair supports (step 3)
    supports = sorted(db.support({i}) for i in db.items)
    assert sorted(calls[1][0].astype(int).tolist()) == supports


# ----------------------------------------------------------- exact, on small domains
def _exp_pmf(utilities, eps, sensitivity=1.0):
    """P(j) ∝ exp(ε u_j / (2 Δu)) (McSherry and Talwar), computed independently."""
    u = np.asarray(utilities, dtype=float)
    w = np.exp(eps * (u - u.max()) / (2 * sensitivity))
    return w / w.sum()


def test_exponential_mechanism_samples_its_distribution():
    """10,000 seeded draws of the code's sampler against the exact probabilities."""
    utilities = np.array([40.0, 37.0, 30.0, 12.0])
    eps = 0.3
    rng = np.random.default_rng(0)
    draws = np.array([dp._exp_mechanism(rng, utilities, eps) for _ in range(10_000)])
    observed = np.bincount(draws, minlength=4)
    expected = _exp_pmf(utilities, eps) * len(draws)
    assert stats.chisquare(observed, expected).pvalue > 0.01


def _sequence_pmf(utilities, count, eps_each):
    """Exact distribution of the ordered picks of :func:`dp._pick_without_replacement`."""
    out = {}
    for seq in itertools.permutations(range(len(utilities)), count):
        p, remaining = 1.0, list(range(len(utilities)))
        for pick in seq:
            probs = _exp_pmf([utilities[i] for i in remaining], eps_each)
            p *= probs[remaining.index(pick)]
            remaining.remove(pick)
        out[seq] = p
    return out


def test_sampling_without_replacement_samples_its_distribution():
    utilities = [30, 24, 20, 5]
    rng = np.random.default_rng(1)
    draws = Counter(tuple(dp._pick_without_replacement(rng, utilities, 2, 0.2)) for _ in range(8_000))
    exact = _sequence_pmf(utilities, 2, 0.2)
    keys = sorted(exact)
    observed = np.array([draws[k] for k in keys])
    assert sum(observed) == 8_000
    assert stats.chisquare(observed, np.array([exact[k] for k in keys]) * 8_000).pvalue > 0.01


def _neighbours(counts):
    """Databases (as counts per record type) with one record more or one less."""
    for t in counts:
        yield {**counts, t: counts[t] + 1}
        if counts[t]:
            yield {**counts, t: counts[t] - 1}


def _captured_utilities(monkeypatch, counts, **kw):
    calls = _record(monkeypatch)
    db = fp.TransactionDB.from_counts(counts)
    fp.privbasis(db, 6, F(1), fp.Roles({"x"}, "y"), seed=0, **kw)
    monkeypatch.undo()
    return calls


# Three items over 40 records: a small domain where neighbours are enumerable.
SMALL = {("x", "y"): 9, ("x",): 7, ("y", "z"): 6, ("z",): 11, ("x", "y", "z"): 4, (): 3}


def test_lambda_step_is_epsilon1_dp_exactly(monkeypatch):
    """Step 1's distribution over λ, from the utilities the code computes for D and for
    every neighbour (|D| and the count threshold ⌈σ|D|⌉ move with the record), never
    differs by more than e^ε1: the |D| term is common to every λ and cancels."""
    eps1 = float(F(1) * dp.DEFAULT_SPLIT[0])
    base = _captured_utilities(monkeypatch, SMALL, min_support=F(3, 10))[0]
    assert base[1] == pytest.approx(eps1)
    p = _exp_pmf(base[0], eps1)
    worst = 0.0
    for nb in _neighbours(SMALL):
        q = _exp_pmf(_captured_utilities(monkeypatch, nb, min_support=F(3, 10))[0][0], eps1)
        worst = max(worst, float(np.max(np.abs(np.log(p / q)))))
    assert 0 < worst <= eps1 + 1e-12


def test_item_and_pair_steps_are_dp_exactly(monkeypatch):
    """Steps 2 and 3: the exact distribution of the ordered picks (items: λ = 3 draws at
    ε2/3; pairs: n_pairs = 2 draws at ε3/2) moves by at most e^ε2 and e^ε3 between D and
    each neighbour (the sequential composition of the draws)."""
    eps = F(1)
    e2, e3 = float(eps * dp.DEFAULT_SPLIT[1]), float(eps * dp.DEFAULT_SPLIT[2])

    def pmfs(counts):
        calls = _captured_utilities(monkeypatch, counts, n_pairs=2)
        items = calls[0][0]  # λ = 3 without a threshold: the first call picks the first item
        pair_calls = calls[3:]
        assert len(calls) == 5 and all(c[1] == pytest.approx(e2 / 3) for c in calls[:3])
        db = fp.TransactionDB.from_counts(counts)
        pairs = [db.support({a, b}) for a, b in itertools.combinations(sorted(db.items), 2)]
        assert sorted(pair_calls[0][0].astype(int).tolist()) == sorted(pairs)
        return _sequence_pmf(items, 3, e2 / 3), _sequence_pmf(pairs, 2, e3 / 2)

    items_d, pairs_d = pmfs(SMALL)
    worst_items = worst_pairs = 0.0
    for nb in _neighbours(SMALL):
        items_n, pairs_n = pmfs(nb)
        worst_items = max(worst_items, max(abs(math.log(items_d[s] / items_n[s])) for s in items_d))
        worst_pairs = max(worst_pairs, max(abs(math.log(pairs_d[s] / pairs_n[s])) for s in pairs_d))
    assert 0 < worst_items <= e2 + 1e-12
    assert 0 < worst_pairs <= e3 + 1e-12


# ------------------------------------------------- the basis set (docs/papers.md, HJ-9)
def test_bases_group_a_large_clique_in_the_order_given():
    """20 items, every pair selected, max_basis 12: groups of 6 in the order given, the 6
    unions of two groups as bases; the first 12 items given share one basis, and every
    pair lies in some basis."""
    items = [f"i{j:02d}" for j in range(20)][::-1]  # given against alphabetical order
    pairs = list(itertools.combinations(items, 2))
    bases = dp._bases(items, pairs, 12)
    assert len(bases) == 6 and all(len(b) <= 12 for b in bases)
    assert tuple(sorted(items[:12])) in bases
    assert all(any({a, b} <= set(basis) for basis in bases) for a, b in pairs)


def test_the_most_frequent_items_share_a_basis():
    """a, j and t hold 550 records each and appear together; 17 more letters and C make
    one clique of 21 items (every pair selected). Alphabetical groups of 6 would put a, j,
    t in three groups, which no union of two covers, so {a, j, t} would be missed; grouped
    in the order the item step draws them (by frequency, at ε = 1000 almost surely) they
    share the first group, and the triple is released with its support, up to the noise."""
    letters = [chr(c) for c in range(ord("a"), ord("t") + 1)]
    counts = {("a", "j", "t"): 500, tuple(letters): 50, ("C",): 30}
    db = fp.TransactionDB.from_counts(counts)
    out = fp.privbasis(db, 300, 1000, fp.Roles({"a"}, "C"), seed=0)
    assert len(out.bins.bases) == 6
    assert abs(out.patterns.supports[frozenset("ajt")] - 550) <= 5
