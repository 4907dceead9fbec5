"""ε-differentially private frequent patterns (PrivBasis, Li et al. 2012, with Hajian
et al.'s rounding fix) and Alg. 7, their α-protective sanitization.

Only :func:`privbasis` reads the database. Everything after it (detection, Δ, the
virtual transactions, publication) is post-processing of the noisy bins, so the
released set is ε-DP (Hajian et al. Theorem 6) — provided the number K of patterns to
release is public (docs/papers.md, HJ-9: choosing K as the number of frequent itemsets of D
reads D without spending budget; pass K yourself to keep the end-to-end claim).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import numpy as np

from .._validation import check_fraction, check_int, check_option, check_random_state
from ..exceptions import InvalidParameterError
from .mining import TransactionDB, canonical, min_count
from .patternset import PatternSet, Roles
from .sanitize import SanitizationResult, sanitize

__all__ = ["DEFAULT_SPLIT", "NoisyBins", "PrivBasisResult", "dp_alpha_protective", "privbasis"]

#: Budget shares of the four steps that read D: λ, the items, the pairs, the noisy bins
#: (the paper gives no split; docs/papers.md, HJ-9).
DEFAULT_SPLIT = (Fraction(1, 10), Fraction(3, 10), Fraction(1, 10), Fraction(1, 2))
RELEASE_MODES = ("topk", "threshold")


@dataclass(frozen=True, eq=False)
class NoisyBins:
    """The noisy bins of a basis set: ``bins[i][q]`` estimates the records r with
    ``r ∩ B_i = q`` (q a bit mask over the sorted items of basis ``B_i``), rounded to
    non-negative integers.

    :meth:`support` answers any itemset inside some basis from the smallest such basis
    (a fixed rule for itemsets in several bases, docs/papers.md, HJ-9), and 0 for itemsets
    in no basis. It never reads the database.
    """

    bases: tuple
    bins: tuple

    @property
    def items(self) -> tuple:
        return tuple(sorted({i for b in self.bases for i in b}))

    def _basis_of(self, itemset: frozenset) -> int | None:
        best = None
        for i, b in enumerate(self.bases):
            if itemset <= frozenset(b) and (best is None or len(b) < len(self.bases[best])):
                best = i
        return best

    def support(self, itemset) -> int:
        x = frozenset(itemset)
        i = self._basis_of(x) if x else int(np.argmin([len(b) for b in self.bases])) if self.bases else None
        if i is None:
            return 0
        basis = self.bases[i]
        mask = sum(1 << basis.index(item) for item in x)
        counts = self.bins[i]
        members = np.arange(len(counts))
        return int(counts[(members & mask) == mask].sum())

    def total(self) -> int:
        """The noisy |D| of the smallest basis."""
        return self.support(frozenset())

    def candidates(self) -> dict:
        """Every non-empty subset of a basis with its noisy support (C(B))."""
        out: dict = {}
        for basis in sorted(self.bases, key=len):
            m = len(basis)
            sums = np.array(self.bins[self.bases.index(basis)], dtype=np.int64)
            for b in range(m):  # superset sums: supp(q) = Σ_{q' ⊇ q} bin(q')
                bit = 1 << b
                without = np.array([q for q in range(1 << m) if not q & bit])
                sums[without] += sums[without | bit]
            for q in range(1, 1 << m):
                x = frozenset(basis[j] for j in range(m) if q >> j & 1)
                out.setdefault(x, int(sums[q]))
        return out


@dataclass(frozen=True)
class PrivBasisResult:
    """What :func:`privbasis` released: the pattern set (supports from the noisy bins),
    the bins themselves, and how the budget was spent."""

    patterns: PatternSet
    bins: NoisyBins
    lam: int
    epsilon: Fraction
    split: tuple
    details: dict = field(default_factory=dict)


def _exp_mechanism(rng, utilities: np.ndarray, eps: float, sensitivity: float = 1.0) -> int:
    scores = eps * np.asarray(utilities, dtype=float) / (2 * sensitivity)
    scores -= scores.max()
    weights = np.exp(scores)
    return int(rng.choice(len(weights), p=weights / weights.sum()))


def _pick_without_replacement(rng, utilities, count: int, eps_each: float) -> list:
    chosen = []
    remaining = list(range(len(utilities)))
    for _ in range(min(count, len(remaining))):
        pick = _exp_mechanism(rng, np.asarray([utilities[i] for i in remaining]), eps_each)
        chosen.append(remaining.pop(pick))
    return chosen


def _bases(items: Sequence[str], pairs: Sequence[tuple], max_basis: int) -> list:
    """Basis set covering every selected item and pair: the maximal cliques of the
    graph (items, pairs); a clique larger than `max_basis` is cut into groups of at most
    ``max_basis // 2`` items and covered by the unions of every two groups, so each of
    its pairs lies in one basis (20 items, max_basis 12: 6 bases, not the 98 that
    disjoint pieces plus a basis per separated pair would need).

    The groups follow the order of `items`, which :func:`privbasis` gives as the item
    step drew them (most frequent first, as far as its noise lets it see): the most
    frequent items share a group, so the many frequent itemsets made only of them lie in
    a basis (docs/papers.md, HJ-9; alphabetical groups scatter them over three or more
    groups, which no basis covers)."""
    import networkx as nx

    graph = nx.Graph()
    graph.add_nodes_from(items)
    graph.add_edges_from(pairs)
    position = {item: i for i, item in enumerate(items)}
    bases: list = []
    half = max(1, max_basis // 2)
    for clique in nx.find_cliques(graph):
        clique = sorted(clique, key=position.__getitem__)
        if len(clique) <= max_basis:
            bases.append(tuple(clique))
            continue
        groups = [clique[i : i + half] for i in range(0, len(clique), half)]
        bases.extend(tuple(sorted(g1 + g2)) for g1, g2 in itertools.combinations(groups, 2))
    unique = sorted({tuple(sorted(b)) for b in bases}, key=lambda b: (len(b), b))
    return [b for b in unique if not any(set(b) < set(o) for o in unique)]


def _pairs_of(basis):
    return [(basis[i], basis[j]) for i in range(len(basis)) for j in range(i + 1, len(basis))]


def privbasis(
    db: TransactionDB,
    k_top: int,
    epsilon: Any,
    roles: Roles,
    *,
    min_support: Any = None,
    split: Sequence = DEFAULT_SPLIT,
    n_pairs: int | None = None,
    max_basis: int = 12,
    release: str = "topk",
    seed=None,
) -> PrivBasisResult:
    """PrivBasis [1]_ with the rounding of Hajian et al. [2]_ §3.2.2: ε-DP top-K itemsets.

    Parameters
    ----------
    db : TransactionDB
    k_top : int
        K, the number of itemsets to release ("topk"); must be public (docs/papers.md, HJ-9).
    epsilon : positive rational
        The total budget, split over the four steps that read D by `split`.
    roles : Roles
    min_support : int or rational, optional
        σ; sets f_K = σ in the λ step and the threshold of the "threshold" release.
        Without it, λ = min(K, number of items) and step 1 spends nothing.
    split : four rationals summing to 1, default (1/10, 3/10, 1/10, 1/2)
    n_pairs : int, optional
        How many item pairs to select (default ``min(C(λ, 2), max(K - λ, 0))``).
    max_basis : int, default=12
        Cliques larger than this are cut (2^|B| bins per basis).
    release : {"topk", "threshold"}, default="topk"
        The K candidates of largest noisy support, or every candidate with noisy
        support >= σ (docs/papers.md, HJ-9: only the latter can show misses 0 and ghosts > 0).
    seed : None, int or numpy.random.Generator

    Returns
    -------
    PrivBasisResult
        ``patterns.source`` is the noisy bins; the database is not referenced.

    Notes
    -----
    Steps (budget share): 1. λ by the exponential mechanism over j in {1..K} with
    utility ``(1 - |f_K - f_item_j|)·|D|`` (ε1); 2. the λ most frequent items, repeated
    exponential mechanism without replacement, ε2/λ each; 3. ``n_pairs`` pairs among
    them the same way (ε3/n_pairs each); 4. the basis set from the maximal cliques (no
    budget; cliques above `max_basis` items are covered by unions of two groups of at
    most max_basis // 2, grouped in the order step 2 drew the items); 5. per basis, the 2^|B| bins ``r ∩ B = q`` with Lap(w/ε5) noise (w bases;
    each record is in one bin per basis), rounded to the nearest non-negative integer.

    References
    ----------
    .. [1] N. Li, W. Qardaji, D. Su, J. Cao. PrivBasis: frequent itemset mining with
       differential privacy. PVLDB 5(11), 2012.
    .. [2] S. Hajian et al. Discrimination- and privacy-aware patterns. DMKD 29(6), 2015.

    Examples
    --------
    >>> db = TransactionDB.from_counts({("a", "b", "C"): 300, ("a",): 200, ("b", "C"): 100, ("f",): 50})
    >>> out = privbasis(db, 4, 1.0, Roles({"f"}, "C"), seed=0)
    >>> len(out.patterns), all(s >= 0 for s in out.patterns.supports.values())
    (4, True)
    """
    caller = "privbasis"
    if not isinstance(db, TransactionDB):
        raise InvalidParameterError(f"The 'db' parameter of {caller} must be a TransactionDB. Got {type(db).__name__} instead.")
    k_top = check_int(k_top, "k_top", caller, low=1)
    eps = check_fraction(epsilon, "epsilon", caller, low=0, low_open=True)
    split = tuple(check_fraction(s, "split", caller, low=0, low_open=True) for s in split)
    if len(split) != 4 or sum(split) != 1:
        raise InvalidParameterError(f"The 'split' parameter of {caller} must be four positive shares summing to 1. Got {split!r} instead.")
    check_option(release, "release", caller, RELEASE_MODES)
    max_basis = check_int(max_basis, "max_basis", caller, low=2)
    rng = check_random_state(seed)
    n = db.n_records
    threshold = min_count(min_support, n, caller=caller) if min_support is not None else 1
    e1, e2, e3, e5 = (float(eps * s) for s in split)

    dense = db.dense()
    item_supp = dense.sum(axis=1).astype(np.int64)
    order = np.argsort(-item_supp, kind="stable")
    # 1. λ: the rank whose item frequency is closest to f_K = σ.
    ranks = min(k_top, len(db.items))
    if min_support is None:
        lam = ranks
    else:
        f_k = threshold / n
        util = np.array([(1 - abs(f_k - item_supp[order[j]] / n)) * n for j in range(ranks)])
        lam = _exp_mechanism(rng, util, e1) + 1
    # 2. the λ most frequent items.
    chosen = _pick_without_replacement(rng, item_supp.tolist(), lam, e2 / lam)
    picked = [db.items[i] for i in chosen]  # in the order drawn: the bases' grouping reads it
    items = sorted(picked)
    # 3. the most frequent pairs among them.
    all_pairs = _pairs_of(items)
    if n_pairs is None:
        n_pairs = min(len(all_pairs), max(k_top - lam, 0))
    n_pairs = min(check_int(n_pairs, "n_pairs", caller, low=0), len(all_pairs))
    pairs: list = []
    if n_pairs:
        pair_supp = [int((dense[db.index[a]] & dense[db.index[b]]).sum()) for a, b in all_pairs]
        pairs = [all_pairs[i] for i in _pick_without_replacement(rng, pair_supp, n_pairs, e3 / n_pairs)]
    # 4. the basis set (no access to D).
    bases = _bases(picked, pairs, max_basis)
    # 5. noisy bins, rounded to non-negative integers (Hajian et al.'s fix).
    w = len(bases)
    bins = []
    for basis in bases:
        m = len(basis)
        codes = np.zeros(n, dtype=np.int64)
        for j, item in enumerate(basis):
            codes |= dense[db.index[item]].astype(np.int64) << j
        true = np.bincount(codes, minlength=1 << m)
        noisy = true + rng.laplace(0.0, w / e5, size=1 << m)
        bins.append(np.maximum(np.rint(noisy), 0).astype(np.int64))
    noisy_bins = NoisyBins(tuple(bases), tuple(bins))
    cands = noisy_bins.candidates()
    ranked = sorted(cands, key=lambda x: (-cands[x], canonical(x)))
    if release == "topk":
        kept = ranked[:k_top]
    else:
        kept = [x for x in ranked if cands[x] >= threshold]
    supports = {x: cands[x] for x in kept}
    total = noisy_bins.total()
    ps = PatternSet(
        supports,
        total,
        roles,
        threshold,
        source=noisy_bins,
        name="privbasis",
        provenance={"epsilon": str(eps), "k_top": k_top, "release": release, "lambda": lam, "n_bases": w},
    )
    return PrivBasisResult(ps, noisy_bins, lam, eps, split, {"items": items, "pairs": pairs, "bases": bases})


def dp_alpha_protective(
    db: TransactionDB,
    k_top: int,
    epsilon: Any,
    roles: Roles,
    measure: str = "slift",
    alpha: Any = Fraction(6, 5),
    *,
    seed=None,
    privbasis_options: dict | None = None,
    **options,
) -> tuple[PrivBasisResult, SanitizationResult]:
    """ANTI-DISCRIMINATION DIFFERENTIALLY PRIVATE SANITIZATION [1]_ (Alg. 7):
    PrivBasis, then detection and Alg. 2 on the noisy supports (no access to D).

    The noisy bins stand in for D wherever a support outside the released set is needed;
    a virtual transaction raises the noisy support of every subset of its target in any
    basis, so all later estimates see it (docs/papers.md, HJ-9).

    References
    ----------
    .. [1] S. Hajian et al. Discrimination- and privacy-aware patterns. DMKD 29(6), 2015.
    """
    priv = privbasis(db, k_top, epsilon, roles, seed=seed, **(privbasis_options or {}))
    return priv, sanitize(priv.patterns, measure, alpha, **options)

