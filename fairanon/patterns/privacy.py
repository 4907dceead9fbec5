"""k-anonymous pattern sets: inference channels and their additive blocking
(Atzori, Bonchi, Giannotti, Pedreschi 2008, as used by Hajian et al. §3.2.1 and
Alg. 5-6 line 3; docs/papers.md, HJ-8).

For frequent I ⊂ J the channel ``C_I^J`` has support
``Σ_{I ⊆ X ⊆ J} (-1)^{|X \\ I|} supp(X)`` (eq. 2), which equals the number of
records r with ``r ∩ J = I``. A set is k-anonymous (Def. 2) when no pattern and no
channel has a support in (0, k). Blocking ``C_I^J`` adds k virtual transactions equal
to I: every channel ``C_{I'}^{J'}`` with ``J' ∩ I = I'`` grows by k, none shrinks, so
one block fixes every violating channel with lower end I and never creates a violation.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from .._validation import check_int
from .mining import canonical
from .patternset import PatternSet, Workspace

__all__ = ["Channel", "ChannelTable", "PrivacyResult", "find_channels", "k_anonymize"]


@dataclass(frozen=True)
class Channel:
    """An inference channel ``C_I^J`` with its support: it reveals the pattern
    ``I ∪ {¬j : j ∈ J \\ I}`` for ``support`` records."""

    lower: frozenset
    upper: frozenset
    support: int

    def __str__(self) -> str:
        negated = ", ".join(f"¬{j}" for j in sorted(self.upper - self.lower))
        return f"{{{', '.join(sorted(self.lower))}, {negated}}}: {self.support}"


class ChannelTable:
    """Supports of every channel ``C_I^J`` (J in the set, ∅ ≠ I ⊊ J), kept current as
    virtual transactions are added.

    Channels are grouped by |J| = m in arrays of shape (number of J, 2^m), indexed by the
    bit mask of I over J's sorted items; the table is built by a superset Möbius
    transform of the supports and updated in O(number of J) per virtual transaction
    (a transaction T raises exactly the entry ``I = J ∩ T`` of every J).
    """

    def __init__(self, ws: Workspace, k: int):
        self.k = int(k)
        self.ws = ws
        self.itemsets: list = list(ws.patterns.supports)
        self.ids: dict = {x: i for i, x in enumerate(self.itemsets)}
        universe = sorted({i for x in self.itemsets for i in x})
        self.item_id = {item: i for i, item in enumerate(universe)}
        # Order-free keys of itemsets (sums of random 64-bit item codes, wrapping) let
        # the subsets of every J be found with one vectorized search per mask.
        codes = np.random.default_rng(0x5EED).integers(1, 2**63, size=max(len(universe), 1), dtype=np.uint64)
        self._codes = codes
        keys = np.array([int(sum(int(codes[self.item_id[i]]) for i in x) % 2**64) for x in self.itemsets], dtype=np.uint64)
        order = np.argsort(keys, kind="stable")
        self._keys, self._key_ids = keys[order], order
        self._keys_unique = len(np.unique(keys)) == len(keys)
        self._supp = np.array([ws.supp(x) for x in self.itemsets], dtype=np.int64)
        by_size: dict[int, list] = {}
        for x in self.itemsets:
            if len(x) >= 2:
                by_size.setdefault(len(x), []).append(x)
        self.groups = []
        for m, members in sorted(by_size.items()):
            self.groups.append(self._build(m, members))
        self.counts = np.zeros(len(self.itemsets), dtype=np.int64)
        for g in self.groups:
            viol = self._violating(g["c"]) & g["valid"]
            np.add.at(self.counts, g["lower"][viol], 1)

    def _id(self, itemset: frozenset) -> int:
        found = self.ids.get(itemset)
        if found is None:  # a frequent itemset a closed set does not list
            found = len(self.itemsets)
            self.itemsets.append(itemset)
            self.ids[itemset] = found
        return found

    def _lookup(self, items: np.ndarray, supp: np.ndarray, lower: np.ndarray) -> bool:
        """Fill supports and ids of every subset of every row of `items` by key search;
        False when some subset is not in the set (closed sets) or keys collide."""
        if not self._keys_unique or not len(items):
            return False
        n, m = items.shape
        keys = np.zeros((n, 1 << m), dtype=np.uint64)
        item_codes = self._codes[items]
        with np.errstate(over="ignore"):
            for mask in range(1, 1 << m):
                low = mask & -mask
                keys[:, mask] = keys[:, mask ^ low] + item_codes[:, low.bit_length() - 1]
        pos = np.searchsorted(self._keys, keys[:, 1:])
        pos = np.minimum(pos, len(self._keys) - 1)
        if not (self._keys[pos] == keys[:, 1:]).all():
            return False
        ids = self._key_ids[pos]
        lower[:, 1:] = ids
        supp[:, 1:] = self._supp[ids]
        return True

    def _build(self, m: int, members: list) -> dict:
        size = 1 << m
        n = len(members)
        supp = np.zeros((n, size), dtype=np.int64)
        lower = np.zeros((n, size), dtype=np.int64)
        items = np.zeros((n, m), dtype=np.int64)
        for r, x in enumerate(members):
            items[r] = [self.item_id[i] for i in sorted(x)]
        if not self._lookup(items, supp, lower):
            masks = [[j for j in range(m) if mask >> j & 1] for mask in range(size)]
            for r, x in enumerate(members):
                ordered = sorted(x)
                for mask in range(1, size):
                    sub = frozenset(ordered[j] for j in masks[mask])
                    supp[r, mask] = self.ws.supp(sub)
                    lower[r, mask] = self._id(sub)
        c = supp
        for b in range(m):
            bit = 1 << b
            without = np.array([mask for mask in range(size) if not mask & bit])
            c[:, without] -= c[:, without | bit]
        valid = np.ones(size, dtype=bool)
        valid[0] = valid[size - 1] = False
        bits = np.left_shift(1, np.arange(m, dtype=np.int64))
        return {"m": m, "items": items, "c": c, "flat": c.reshape(-1), "lower": lower, "valid": valid,
                "uppers": members, "bits": bits, "full": size - 1}

    def _violating(self, values: np.ndarray) -> np.ndarray:
        return (values > 0) & (values < self.k)

    def _touched(self, g: dict, member: np.ndarray):
        """Rows of group g that `target` (as an item-membership vector) meets in a
        non-empty proper subset, and the flat index of entry ``I = J ∩ target``."""
        mask = member[g["items"]] @ g["bits"]
        rows = np.flatnonzero((mask > 0) & (mask < g["full"]))
        return rows, rows * (g["full"] + 1) + mask[rows]

    def _member(self, target: frozenset) -> np.ndarray:
        member = np.zeros(len(self.item_id), dtype=np.int64)
        ids = [self.item_id[i] for i in target if i in self.item_id]
        member[ids] = 1
        return member

    def on_bump(self, target: frozenset, count: int) -> None:
        """Listener for :class:`Workspace`: `count` virtual transactions equal to `target`."""
        member = self._member(target)
        if not member.any():
            return
        for g in self.groups:
            rows, flat = self._touched(g, member)
            if not len(rows):
                continue
            c = g["flat"]
            old = c[flat]
            new = old + count
            c[flat] = new
            was, now = self._violating(old), self._violating(new)
            changed = was != now
            if changed.any():
                lower = g["lower"].reshape(-1)[flat[changed]]
                sign = np.where(now[changed], 1, -1)
                np.add.at(self.counts, lower, sign)

    def opened_by(self, target: Iterable[str]) -> list:
        """Channels of support 0 that virtual transactions equal to `target` would raise
        (docs/papers.md, HJ-3: raising them by fewer than k breaks Def. 2)."""
        member = self._member(frozenset(target))
        out = []
        if not member.any():
            return out
        for g in self.groups:
            rows, flat = self._touched(g, member)
            zero = g["flat"][flat] == 0
            for r, f in zip(rows[zero], flat[zero]):
                out.append(Channel(self.itemsets[g["lower"].reshape(-1)[f]], g["uppers"][r], 0))
        return out

    def violating_lower_ends(self) -> list:
        return [self.itemsets[i] for i in np.flatnonzero(self.counts > 0)]

    def violations(self) -> list:
        """Every channel with support in (0, k), in canonical order of (I, J)."""
        out = []
        for g in self.groups:
            viol = self._violating(g["c"]) & g["valid"]
            for r, mask in zip(*np.nonzero(viol)):
                out.append(Channel(self.itemsets[g["lower"][r, mask]], g["uppers"][r], int(g["c"][r, mask])))
        out.sort(key=lambda ch: (canonical(ch.lower), canonical(ch.upper)))
        return out


@dataclass(frozen=True)
class PrivacyResult:
    """The k-anonymous set and what blocking did."""

    patterns: PatternSet
    blocked: tuple
    initial_violations: int
    channels: ChannelTable | None = None


def find_channels(patterns: PatternSet, k: int) -> list:
    """Every inference channel of `patterns` with support in (0, k) (Def. 1-2).

    >>> from fairanon.patterns import PatternSet, Roles, TransactionDB
    >>> db = TransactionDB.from_counts({("v", "y", "h"): 40, ("v", "y"): 1, ("v", "C"): 9})
    >>> ps = PatternSet.from_db(db, 1, Roles({"v"}, "C"), backend="apriori")
    >>> [str(ch) for ch in find_channels(ps, 8)]
    ['{y, ¬h}: 1', '{v, y, ¬h}: 1']
    """
    k = check_int(k, "k", "find_channels", low=1)
    return ChannelTable(Workspace(patterns), k).violations()


def k_anonymize(patterns, k: int) -> PrivacyResult:
    """PrivacyAdditiveSanitization [1]_ [2]_: make a pattern set k-anonymous (Def. 2)
    by adding k virtual transactions equal to the lower end I of violating channels.

    Parameters
    ----------
    patterns : PatternSet or Workspace
        A Workspace is sanitized in place (Alg. 5 goes on with it).
    k : int

    Returns
    -------
    PrivacyResult
        The k-anonymous set, the blocked lower ends in order, and the number of
        violating channels found at the start.

    Notes
    -----
    Lower ends are blocked largest first, ties in canonical order (a deterministic
    choice; the paper does not give Atzori et al.'s order, docs/papers.md, HJ-8). A block raises
    every channel with ``J ∩ I = I'``, so blocking large I first also fixes some channels
    of their subsets. Terminates after at most as many blocks as there are violating
    lower ends at the start, since blocking never creates a violation. Patterns with a
    support in (0, k) (possible only when the support threshold is below k) are blocked
    the same way, by k virtual copies of themselves.

    References
    ----------
    .. [1] M. Atzori, F. Bonchi, F. Giannotti, D. Pedreschi. Anonymity preserving
       pattern discovery. VLDB Journal 17(4), 2008.
    .. [2] S. Hajian et al. Discrimination- and privacy-aware patterns. DMKD 29(6), 2015.

    Examples
    --------
    >>> from fairanon.patterns import PatternSet, Roles, TransactionDB
    >>> db = TransactionDB.from_counts({("v", "y", "h"): 40, ("v", "y"): 1, ("v", "C"): 9})
    >>> out = k_anonymize(PatternSet.from_db(db, 1, Roles({"v"}, "C"), backend="apriori"), 8)
    >>> [sorted(x) for x in out.blocked], out.patterns.support({"v", "y"}), find_channels(out.patterns, 8)
    ([['v', 'y']], 49, [])
    """
    k = check_int(k, "k", "k_anonymize", low=1)
    ws = patterns if isinstance(patterns, Workspace) else Workspace(patterns)
    table = ChannelTable(ws, k)
    ws.listeners.append(table.on_bump)
    initial = int(table.counts.sum())
    blocked = []
    for x in list(ws.patterns.supports):
        if 0 < ws.supp(x) < k:
            ws.bump(x, k)
            blocked.append(x)
    order = sorted(range(len(table.itemsets)), key=lambda i: (-len(table.itemsets[i]), canonical(table.itemsets[i])))
    order = np.array(order, dtype=np.int64)
    while True:
        pending = table.counts[order] > 0
        if not pending.any():
            break
        lower = table.itemsets[int(order[int(np.argmax(pending))])]
        ws.bump(lower, k)
        blocked.append(lower)
    return PrivacyResult(ws.result(), tuple(blocked), initial, table)
