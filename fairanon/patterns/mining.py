"""Transaction databases and frequent / closed itemset mining.

A record becomes the set of its ``attribute=value`` items (Hajian et al. §3.1); a
:class:`TransactionDB` keeps one packed bitmap per item, so the support of any itemset
(frequent or not) is an AND and a popcount. :func:`mine` finds the frequent itemsets
with mlxtend's FP-growth (absolute counts recovered exactly from its relative supports)
or with a small exact Apriori over the bitmaps, and :func:`closed_itemsets` keeps the
closed ones.

Mining can need far more memory than its input (German credit's 1,000 records hold
hundreds of millions of itemsets of support 2), so :func:`mine` first counts the
frequent itemsets (:func:`count_frequent`, fast and in bounded memory, stopping as
soon as the count passes what fits) and refuses with :class:`~fairanon.exceptions.MemoryLimitError`
when the itemsets would need more than its `memory_limit`.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._memory import check_memory, current_limit, format_bytes
from .._validation import check_fraction, check_option
from ..exceptions import InvalidParameterError, SchemaError

__all__ = [
    "BACKENDS",
    "Bins",
    "TransactionDB",
    "canonical",
    "ITEMSET_BYTES",
    "closed_itemsets",
    "count_frequent",
    "encode_table",
    "item_label",
    "min_count",
    "mine",
]

#: Mining back ends: "mlxtend" (FP-growth of the mlxtend library, fast), "apriori"
#: (level-wise Apriori over the bitmaps; no dependency, for small data and tests) and
#: "auto" (mlxtend when installed, else apriori).
BACKENDS = ("auto", "mlxtend", "apriori")

Itemset = frozenset

#: Bytes of memory each frequent itemset takes from mining to publishing: the miner's
#: output, the PatternSet and the sanitizer's working copies (German credit: 1.4 kB per
#: itemset at the end of mlxtend's FP-growth, 1.75 kB at the end of ``fairanon
#: patterns`` with 155,000 itemsets). The Apriori back end adds a record bitmap (one
#: byte per record) per itemset of a level.
ITEMSET_BYTES = 2048
#: Bytes of candidate bitmaps :func:`count_frequent` handles at a time (per level).
COUNT_CHUNK_BYTES = 4 * 2**20


def canonical(itemset: Iterable[str]) -> tuple:
    """The sort key of an itemset used everywhere a deterministic order is needed:
    size first, then the sorted item labels.

    >>> canonical({"b=1", "a=2"})
    (2, ('a=2', 'b=1'))
    """
    items = tuple(sorted(itemset))
    return (len(items), items)


def item_label(attribute: str, value: Any) -> str:
    """The item ``attribute=value``.

    >>> item_label("sex", "Female")
    'sex=Female'
    """
    return f"{attribute}={value}"


@dataclass(frozen=True)
class Bins:
    """Left-closed intervals that turn a numeric column into labelled items.

    ``edges`` are the inner cut points ``e_1 < ... < e_m``; value v gets ``labels[i]``
    for ``e_i <= v < e_{i+1}`` (``e_0 = -inf``, ``e_{m+1} = inf``), so there are
    ``m + 1`` labels.

    >>> Bins((30,), ("young", "not young")).apply(pd.Series([17, 29, 30, 90])).tolist()
    ['young', 'young', 'not young', 'not young']
    """

    edges: tuple
    labels: tuple

    def __post_init__(self):
        edges = tuple(self.edges)
        labels = tuple(str(x) for x in self.labels)
        if len(labels) != len(edges) + 1 or any(a >= b for a, b in zip(edges, edges[1:])):
            raise InvalidParameterError(
                f"Bins needs increasing edges and one label more than edges. Got edges={edges!r}, "
                f"labels={labels!r} instead."
            )
        object.__setattr__(self, "edges", edges)
        object.__setattr__(self, "labels", labels)

    def apply(self, values: pd.Series) -> pd.Series:
        numeric = pd.to_numeric(values, errors="coerce")
        codes = np.searchsorted(np.asarray(self.edges, dtype=float), numeric.to_numpy(dtype=float), side="right")
        out = pd.Series(np.asarray(self.labels, dtype=object)[codes], index=values.index, dtype=object)
        out[numeric.isna().to_numpy()] = None
        return out


class TransactionDB:
    """A multiset of transactions over named items, stored as one bitmap per item.

    Parameters
    ----------
    items : sequence of str
        Item labels (``attribute=value``); sorted on construction.
    bitmaps : numpy.ndarray of bool, shape (n_items, n_records)
        ``bitmaps[i, r]`` is True when record r holds item i.

    Examples
    --------
    >>> db = TransactionDB.from_transactions([{"a", "b"}, {"a"}, {"b", "c"}])
    >>> db.n_records, db.items, db.support({"a"}), db.support({"a", "b"}), db.support(())
    (3, ('a', 'b', 'c'), 2, 1, 3)
    """

    def __init__(self, items: Sequence[str], bitmaps: np.ndarray):
        items = [str(i) for i in items]
        bitmaps = np.asarray(bitmaps, dtype=bool)
        if bitmaps.ndim != 2 or bitmaps.shape[0] != len(items):
            raise InvalidParameterError(
                f"TransactionDB needs one bitmap row per item; got {len(items)} items and bitmaps of shape {bitmaps.shape}."
            )
        if len(set(items)) != len(items):
            raise InvalidParameterError("TransactionDB items must be distinct.")
        order = np.argsort(np.asarray(items, dtype=object), kind="stable")
        self.items: tuple[str, ...] = tuple(items[i] for i in order)
        self.index: dict[str, int] = {item: i for i, item in enumerate(self.items)}
        self.n_records: int = int(bitmaps.shape[1])
        self._dense = bitmaps[order]
        self._packed = np.packbits(self._dense, axis=1)

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_transactions(cls, transactions: Iterable[Iterable[str]]) -> TransactionDB:
        """Build from an iterable of item collections (one per record)."""
        rows = [frozenset(str(i) for i in t) for t in transactions]
        items = sorted(set().union(*rows)) if rows else []
        index = {item: i for i, item in enumerate(items)}
        bitmaps = np.zeros((len(items), len(rows)), dtype=bool)
        for r, row in enumerate(rows):
            for item in row:
                bitmaps[index[item], r] = True
        return cls(items, bitmaps)

    @classmethod
    def from_counts(cls, counts: Mapping[Iterable[str], int]) -> TransactionDB:
        """Build from ``{transaction: multiplicity}`` (handy for the papers' cell tables).

        >>> TransactionDB.from_counts({("f", "C"): 2, (): 3}).n_records
        5
        """
        rows = []
        for t, c in counts.items():
            if isinstance(c, bool) or not isinstance(c, numbers.Integral) or c < 0:
                raise InvalidParameterError(f"Multiplicities must be non-negative ints; got {c!r} for {t!r}.")
            rows.extend([frozenset(t)] * int(c))
        return cls.from_transactions(rows)

    # ------------------------------------------------------------------ queries
    def __len__(self) -> int:
        return self.n_records

    def __repr__(self) -> str:
        return f"TransactionDB(n_records={self.n_records}, n_items={len(self.items)})"

    def _rows(self, itemset: Iterable[str]) -> list[int]:
        try:
            return [self.index[i] for i in itemset]
        except KeyError as exc:
            raise InvalidParameterError(f"Unknown item {exc.args[0]!r}; the database has {len(self.items)} items.") from None

    def support(self, itemset: Iterable[str]) -> int:
        """Number of records that hold every item of `itemset` (``|D|`` for the empty set)."""
        rows = [self.index.get(i) for i in itemset]
        if not rows:
            return self.n_records
        if any(r is None for r in rows):
            return 0
        acc = np.bitwise_and.reduce(self._packed[rows], axis=0)
        return int(np.unpackbits(acc, count=self.n_records).sum()) if not hasattr(np, "bitwise_count") else int(np.bitwise_count(acc).sum())

    def mask(self, itemset: Iterable[str]) -> np.ndarray:
        """Boolean mask of the records that hold `itemset`."""
        rows = self._rows(itemset)
        if not rows:
            return np.ones(self.n_records, dtype=bool)
        return np.logical_and.reduce(self._dense[rows], axis=0)

    def dense(self) -> np.ndarray:
        """The bool matrix (n_items, n_records); a read-only view."""
        view = self._dense.view()
        view.setflags(write=False)
        return view

    def transactions(self) -> list[frozenset]:
        """The records as item sets (in record order)."""
        cols = self._dense.T
        items = np.asarray(self.items, dtype=object)
        return [frozenset(items[row]) for row in cols]

    def subset(self, records: np.ndarray) -> TransactionDB:
        """The database of the selected records (a boolean mask or indices)."""
        return TransactionDB(self.items, self._dense[:, records])


def encode_table(
    table: pd.DataFrame,
    *,
    columns: Sequence[str] | None = None,
    bins: Mapping[str, Bins] | None = None,
    missing: Iterable[Any] = ("?",),
) -> TransactionDB:
    """Turn a table into transactions of ``column=value`` items.

    Parameters
    ----------
    table : pandas.DataFrame
    columns : list of str, optional
        The columns to encode (default: all). Numeric columns need an entry in `bins`
        unless they are meant as categories (few distinct values).
    bins : mapping of column -> Bins, optional
    missing : values treated as missing, default ``("?",)``
        A missing cell (or NaN) emits no item for that record (docs/papers.md, HJ-7).

    Examples
    --------
    >>> df = pd.DataFrame({"sex": ["F", "M", "?"], "age": [25, 40, 61]})
    >>> db = encode_table(df, bins={"age": Bins((30,), ("young", "not young"))})
    >>> db.items
    ('age=not young', 'age=young', 'sex=F', 'sex=M')
    >>> db.support({"age=not young"}), db.support({"sex=F"})
    (2, 1)
    """
    if not isinstance(table, pd.DataFrame):
        raise InvalidParameterError(f"The 'table' parameter of encode_table must be a DataFrame. Got {type(table).__name__} instead.")
    columns = list(table.columns) if columns is None else list(columns)
    unknown = [c for c in columns if c not in table.columns]
    if unknown:
        raise SchemaError(f"encode_table: unknown column(s) {unknown}; the table has {list(table.columns)}.")
    bins = dict(bins or {})
    bad = [c for c in bins if c not in columns]
    if bad:
        raise SchemaError(f"encode_table: bins given for column(s) {bad} that are not encoded.")
    missing = {str(m) for m in missing}
    items: list[str] = []
    blocks: list[np.ndarray] = []
    for c in columns:
        values = bins[c].apply(table[c]) if c in bins else table[c].astype(object)
        present = np.array(values.notna().to_numpy(), dtype=bool)
        text = values.astype(str).to_numpy(dtype=object)
        present &= ~np.isin(text, list(missing))
        uniques = sorted(set(text[present]))
        for u in uniques:
            items.append(item_label(c, u))
            blocks.append(present & (text == u))
    bitmaps = np.vstack(blocks) if blocks else np.zeros((0, len(table)), dtype=bool)
    return TransactionDB(items, bitmaps)


def min_count(min_support: Any, n_records: int, *, caller: str = "mine") -> int:
    """The count threshold of a support given as a count (int >= 1) or a fraction of the
    records (a rational in (0, 1)): ``ceil(sigma * |D|)``, computed exactly.

    >>> min_count(0.15, 1000), min_count(150, 1000), min_count("1/3", 10)
    (150, 150, 4)
    """
    if isinstance(min_support, numbers.Integral) and not isinstance(min_support, bool):
        if min_support < 1:
            raise InvalidParameterError(
                f"The 'min_support' parameter of {caller} must be an int count >= 1 or a fraction in (0, 1). "
                f"Got {min_support!r} instead."
            )
        return int(min_support)
    frac = check_fraction(min_support, "min_support", caller, low=0, high=1, low_open=True)
    return max(1, math.ceil(frac * n_records))


def _popcounts(words: np.ndarray) -> np.ndarray:
    """Set bits per row of a uint64 matrix."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(words).sum(axis=1, dtype=np.int64)
    return np.unpackbits(words.view(np.uint8), axis=1).sum(axis=1, dtype=np.int64)  # pragma: no cover


class _Over(Exception):
    pass


def count_frequent(db: TransactionDB, threshold: int, cap: int | None = None, max_len: int | None = None) -> int:
    """How many itemsets of `db` have a support of at least `threshold` records (of at
    most `max_len` items), without storing them; counting stops at the first count
    above `cap` (which it returns).

    An Eclat-style search over the packed record bitmaps: the itemsets sharing all but
    their last item form a class, and each pair of a class gives a candidate (the AND
    of its two bitmaps), so every itemset is met once. A level's candidates are
    computed in blocks of :data:`COUNT_CHUNK_BYTES`, depth first, so the memory stays
    bounded (a few blocks per level) whatever the count.

    >>> db = TransactionDB.from_transactions([{"a", "b"}, {"a", "b"}, {"a"}, {"c"}])
    >>> count_frequent(db, 2), count_frequent(db, 1), count_frequent(db, 1, cap=2)
    (3, 4, 3)
    """
    packed = db._packed
    pad = (-packed.shape[1]) % 8
    words = np.ascontiguousarray(np.pad(packed, ((0, 0), (0, pad)))).view(np.uint64)
    keep = _popcounts(words) >= threshold
    bits = words[keep]
    total = [int(keep.sum())]
    if (cap is not None and total[0] > cap) or max_len == 1 or len(bits) < 2:
        return total[0]
    per_block = max(1, COUNT_CHUNK_BYTES // (8 * bits.shape[1]))

    def level(bits: np.ndarray, ends: np.ndarray, depth: int) -> None:
        # ends[i]: one past the last member of the class of member i
        partners = ends - np.arange(len(bits)) - 1
        cum = np.cumsum(partners)
        start = 0
        while start < len(bits):
            before = int(cum[start - 1]) if start else 0
            stop = max(int(np.searchsorted(cum, before + per_block, side="right")), start + 1)
            counts = partners[start:stop]
            n_pairs = int(counts.sum())
            if n_pairs:
                a = np.repeat(np.arange(start, stop), counts)
                b = a + 1 + np.arange(n_pairs) - np.repeat(np.cumsum(counts) - counts, counts)
                cand = bits[a] & bits[b]
                frequent = _popcounts(cand) >= threshold
                found = int(frequent.sum())
                total[0] += found
                if cap is not None and total[0] > cap:
                    raise _Over
                if found > 1 and (max_len is None or depth + 1 < max_len):
                    parent = a[frequent]
                    kept = cand[frequent]
                    del cand
                    run_end = np.append(np.flatnonzero(np.diff(parent)) + 1, found)
                    level(kept, np.repeat(run_end, np.diff(run_end, prepend=0)), depth + 1)
            start = stop

    try:
        level(bits, np.full(len(bits), len(bits)), 1)
    except _Over:
        pass
    return total[0]


def _check_memory(db: TransactionDB, threshold: int, backend: str, max_len: int | None, memory_limit) -> None:
    """Refuse mining whose itemsets would need more than the memory limit."""
    limit = current_limit(memory_limit, "mine")
    if limit.bytes is None:
        return
    per_itemset = ITEMSET_BYTES + (db.n_records if backend == "apriori" else 0)
    cap = limit.bytes // per_itemset
    count = count_frequent(db, threshold, cap, max_len)
    longest = "" if max_len is None else f" of at most {max_len} items"
    check_memory(
        count * per_itemset,
        f"Mining the {'more than ' if count > cap else ''}{count:,} frequent itemsets{longest} (about "
        f"{format_bytes(per_itemset)} each) at a support of {threshold} of the {db.n_records:,} records",
        "raise the support (min_support; --support on the command line) so that fewer itemsets are "
        "frequent, or mine shorter itemsets (max_len)",
        limit,
        caller="mine",
        at_least=count > cap,
    )


def _sorted(supports: Mapping[frozenset, int]) -> dict[frozenset, int]:
    return {x: supports[x] for x in sorted(supports, key=canonical)}


def _apriori(db: TransactionDB, threshold: int, max_len: int | None) -> dict[frozenset, int]:
    dense = db._dense
    level: dict[tuple, np.ndarray] = {}
    out: dict[frozenset, int] = {}
    for i, item in enumerate(db.items):
        count = int(dense[i].sum())
        if count >= threshold:
            level[(item,)] = dense[i]
            out[frozenset((item,))] = count
    size = 1
    while level and (max_len is None or size < max_len):
        keys = sorted(level)
        nxt: dict[tuple, np.ndarray] = {}
        for a in range(len(keys)):
            for b in range(a + 1, len(keys)):
                x, y = keys[a], keys[b]
                if x[:-1] != y[:-1]:
                    break
                cand = x + (y[-1],)
                if any(cand[:j] + cand[j + 1 :] not in level for j in range(len(cand) - 2)):
                    continue
                mask = level[x] & level[y]
                count = int(mask.sum())
                if count >= threshold:
                    nxt[cand] = mask
                    out[frozenset(cand)] = count
        level = nxt
        size += 1
    return out


def _mlxtend(db: TransactionDB, threshold: int, max_len: int | None) -> dict[frozenset, int]:
    try:
        from mlxtend.frequent_patterns import fpgrowth
    except ImportError:  # pragma: no cover - depends on the environment
        raise InvalidParameterError(
            "backend='mlxtend' needs the mlxtend package: pip install 'fairanon[patterns]' "
            "(or use backend='apriori')."
        ) from None
    n = db.n_records
    frequent_items = [i for i in range(len(db.items)) if int(db._dense[i].sum()) >= threshold]
    if not frequent_items:
        return {}
    onehot = pd.DataFrame(db._dense[frequent_items].T, columns=[db.items[i] for i in frequent_items])
    # Relative supports are k/n in floats; a threshold half a record below the count
    # keeps every itemset with k >= threshold, and rounding k/n * n recovers k exactly.
    result = fpgrowth(onehot, min_support=(threshold - 0.5) / n, use_colnames=True, max_len=max_len)
    out: dict[frozenset, int] = {}
    for support, itemset in zip(result["support"].to_numpy(), result["itemsets"]):
        count = int(round(float(support) * n))
        if count >= threshold:
            out[frozenset(itemset)] = count
    return out


def mine(
    db: TransactionDB,
    min_support: Any,
    *,
    closed: bool = False,
    backend: str = "auto",
    max_len: int | None = None,
    memory_limit=None,
) -> dict[frozenset, int]:
    """The frequent itemsets F(D, sigma) (or the closed ones, Cl(D, sigma)) with their
    absolute supports [1]_ (Def. 14 for closed sets).

    Parameters
    ----------
    db : TransactionDB
    min_support : int or rational
        A count (int >= 1) or a fraction of the records; an itemset is frequent iff
        ``supp >= ceil(sigma * |D|)``.
    closed : bool, default=False
        Keep only closed itemsets (no proper superset with the same support).
    backend : {"auto", "mlxtend", "apriori"}, default="auto"
        Any exact miner gives the same result (docs/papers.md, HJ-7); "auto" uses mlxtend's
        FP-growth when it is installed (``pip install 'fairanon[patterns]'``).
    max_len : int, optional
        Longest itemset to report.
    memory_limit : None, int, float or str, optional
        Bytes (``"8GB"``), a share of the available memory (0.5), or ``"none"``;
        default: the enclosing :func:`fairanon._memory.memory_limit`, else half the
        available memory. The frequent itemsets are counted first
        (:func:`count_frequent`, stopping once over the limit) at
        :data:`ITEMSET_BYTES` each.

    Raises
    ------
    MemoryLimitError
        When the itemsets would need more than `memory_limit`; the message gives the
        count and names the support and the limit.

    Returns
    -------
    dict of frozenset -> int
        In canonical order (size, then sorted labels). The empty set is not included.

    References
    ----------
    .. [1] S. Hajian, J. Domingo-Ferrer, A. Monreale, D. Pedreschi, F. Giannotti.
       Discrimination- and privacy-aware patterns. Data Mining and Knowledge Discovery
       29(6), 2015.

    Examples
    --------
    >>> db = TransactionDB.from_transactions([{"a", "b"}, {"a", "b"}, {"a"}, {"c"}])
    >>> [(sorted(x), s) for x, s in mine(db, 2, backend="apriori").items()]
    [(['a'], 3), (['b'], 2), (['a', 'b'], 2)]
    >>> sorted(map(sorted, mine(db, 2, closed=True, backend="apriori")))
    [['a'], ['a', 'b']]
    """
    if not isinstance(db, TransactionDB):
        raise InvalidParameterError(f"The 'db' parameter of mine must be a TransactionDB. Got {type(db).__name__} instead.")
    check_option(backend, "backend", "mine", BACKENDS)
    threshold = min_count(min_support, db.n_records)
    if backend == "auto":
        try:
            import mlxtend  # noqa: F401
            backend = "mlxtend"
        except ImportError:  # pragma: no cover - depends on the environment
            backend = "apriori"
    _check_memory(db, threshold, backend, max_len, memory_limit)
    found = _mlxtend(db, threshold, max_len) if backend == "mlxtend" else _apriori(db, threshold, max_len)
    if closed:
        found = closed_itemsets(found)
    return _sorted(found)


def closed_itemsets(frequent: Mapping[frozenset, int]) -> dict[frozenset, int]:
    """The closed itemsets of a downward-closed collection: those without a proper
    superset of equal support (Def. 14 in prose; the paper's set-builder formula defines
    maximal itemsets instead, docs/papers.md, HJ-11).

    >>> closed_itemsets({frozenset("a"): 3, frozenset("b"): 2, frozenset("ab"): 2}) == {frozenset("a"): 3, frozenset("ab"): 2}
    True
    """
    not_closed = set()
    for y, s in frequent.items():
        if len(y) < 2:
            continue
        for i in y:
            parent = y - {i}
            if frequent.get(parent) == s:
                not_closed.add(parent)
    return _sorted({x: s for x, s in frequent.items() if x not in not_closed})
