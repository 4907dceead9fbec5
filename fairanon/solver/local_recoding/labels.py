"""Label spaces of the exact local-recoding model: the candidate labels of each attribute.

A class releases each generalizable quasi-identifier as one label covering the values
of its records: with generalization, a hierarchy node (categorical attributes, and
ordered ones with more than ``max_range_values`` values), any range of values in order
(ordered and numeric attributes with at most ``max_range_values`` values), a nested
interval (larger numeric attributes) or ``*``; with suppression, the value itself or
``*``. Labels covering the same active values are merged into the most specific one,
except that a value's own label is kept apart. Every label carries its exact NCP and LM
cell losses, as :mod:`fairanon.models.metrics` measures them.

One rule decides what a star is: a generalized label (any label but a value's own)
that covers every value present in the data is released as ``*`` and counts as a star,
whether it is a range, a hierarchy node or an interval. Such a label tells nothing
about the record that ``*`` does not (its NCP and LM cell losses are 1 either way), so
the ``stars`` objective cannot be lowered by releasing, say, a hierarchy node that
happens to hold every value present instead of ``*``. A value's own label is never a
star, even when the attribute has a single value.
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import pandas as pd

from ..._memory import check_memory, current_limit
from ...exceptions import InvalidParameterError
from ...instances.generalization import format_number, format_range
from ...instances.hierarchy import SUPPRESSED, Hierarchy
from ...instances.instance import Instance
from ...instances.schema import Attribute
from ...models.objectives import OBJECTIVES

__all__ = ["OBJECTIVES", "RECODINGS", "BuildStopped", "LabelSpace", "check_deadline", "missing_labels"]

#: Cells of the table of joins :meth:`LabelSpace.join` keeps at most (labels x labels,
#: 2 bytes each).
JOIN_TABLE_CELLS = 4_000_000

#: How cells may change: "generalization" (hierarchy nodes, ranges of ordered and
#: numeric values, ``*``) or "suppression" (the value itself or ``*``; DIVA's semantics).
RECODINGS = ("generalization", "suppression")


class BuildStopped(Exception):
    """The model's build passed its deadline (a ``time.perf_counter`` value): raised
    inside the build loops and caught by the caller that set the deadline
    (:func:`~fairanon.solver.local_recoding.local_recoding`), never shown to users.

    Attributes
    ----------
    stage : str
        What was being built when the deadline passed.
    """

    def __init__(self, stage: str):
        super().__init__(f"the model build passed its deadline while {stage}")
        self.stage = stage


#: Labels read between two reads of the clock (:func:`_label_losses`).
LABEL_BLOCK = 4096


def check_deadline(deadline: float | None, stage: str) -> None:
    """Raise :class:`BuildStopped` when `deadline` (``time.perf_counter``) has passed."""
    if deadline is not None and time.perf_counter() >= deadline:
        raise BuildStopped(stage)


class LabelSpace:
    """The candidate labels of one generalizable quasi-identifier.

    Values are the attribute's *active* values (those present in the data), in domain
    order (numeric: by value). Each label covers a set of them; labels covering the
    same set are merged into the most specific one, except that a value's own label
    (which shows it) is kept apart from the generalized labels.

    The covered sets are kept as *runs*: with `rank` an order of the active values
    (domain order for ranges, intervals and ``*``; the hierarchy's depth-first leaf
    order for its nodes), label j covers value i when ``lo[j] <= rank[i] < hi[j]``.
    That takes 16 bytes a label where a boolean row over the values took m (the
    values' own labels alone took m x m bytes: 10 GB for 100,000 values). A space made
    from boolean rows (`masks`, a neighbourhood of the large-neighbourhood search,
    whose labels need not be runs in one order) keeps them.

    Attributes
    ----------
    name : str
    values : list
        Active values (domain strings, or floats for numeric attributes).
    texts : list of str
        The released text of each label.
    own : numpy.ndarray of int, shape (m,)
        The label id showing value i itself.
    ncp, lm : list of Fraction
        Per-label cell losses, as :mod:`fairanon.models.metrics` measures them.
    star : numpy.ndarray of bool
        Labels released as ``*``.
    row_value : numpy.ndarray of int
        Active value index of every instance row.
    rank, lo, hi : numpy.ndarray of int, or None
        The runs (see above); None for a space made from `masks`.
    """

    def __init__(self, name: str, attr: Attribute, values: list, texts: list[str], own: np.ndarray,
                 ncp: list[Fraction], lm: list[Fraction], star: np.ndarray, row_value: np.ndarray, *,
                 masks: np.ndarray | None = None, rank: np.ndarray | None = None,
                 lo: np.ndarray | None = None, hi: np.ndarray | None = None):
        if (masks is None) == (rank is None or lo is None or hi is None):
            raise ValueError("a label space takes either masks or runs (rank, lo, hi)")
        self.name, self.attr, self.values, self.texts = name, attr, values, texts
        self.own, self.ncp, self.lm, self.star, self.row_value = own, ncp, lm, star, row_value
        self._masks, self.rank, self.lo, self.hi = masks, rank, lo, hi
        self._sizes: np.ndarray | None = None
        self._cover: dict[int, list[int]] = {}
        self._table: np.ndarray | None = None
        self._no_table = False
        self._scan: np.ndarray | None = None
        self._words: np.ndarray | None = None
        self._bits: np.ndarray | None = None
        self._run_keys: np.ndarray | None = None
        self._run_ids: np.ndarray | None = None
        self._up: np.ndarray | None = None
        self._parent: np.ndarray | None = None

    @property
    def m(self) -> int:
        return len(self.values)

    @property
    def n_labels(self) -> int:
        return len(self.texts)

    @property
    def sizes(self) -> np.ndarray:
        """Active values each label covers."""
        if self._sizes is None:
            self._sizes = self._masks.sum(axis=1) if self.rank is None else self.hi - self.lo
        return self._sizes

    @property
    def masks(self) -> np.ndarray:
        """Boolean rows, shape (labels, m): ``masks[j, i]``, label j covers value i. Made
        when read for a space of runs (labels x m bytes, checked against the memory
        limit): the model itself reads the runs."""
        return self.mask_rows()

    def mask_rows(self, limit=None, caller: str = "cpsat") -> np.ndarray:
        """:attr:`masks`, a space of runs' checked against `limit` (as in
        :func:`fairanon._memory.current_limit`) of `caller`."""
        if self._masks is not None:
            return self._masks
        check_memory(self.n_labels * self.m, f"the labels of {self.name!r} as rows over its {self.m:,} values",
                     "read them as runs (LabelSpace.covers)", limit, caller=caller)
        return self.covers(np.arange(self.n_labels)[:, None], np.arange(self.m)[None, :])

    def covers(self, labels: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Elementwise (broadcast), whether label ``labels`` covers active value ``values``."""
        labels, values = np.asarray(labels, dtype=np.int64), np.asarray(values, dtype=np.int64)
        if self.rank is None:
            return self._masks[labels, values]
        r = self.rank[values]
        return (self.lo[labels] <= r) & (r < self.hi[labels])

    def containing(self, values: np.ndarray) -> np.ndarray:
        """Per label, whether it covers every one of `values` (active value indices)."""
        values = np.asarray(values, dtype=np.int64)
        if self.rank is None:
            mask = np.zeros(self.m, dtype=bool)
            mask[values] = True
            return ~(mask[None, :] & ~self._masks).any(axis=1)
        if not len(values):
            return np.ones(self.n_labels, dtype=bool)
        r = self.rank[values]
        return (self.lo <= r.min()) & (r.max() < self.hi)

    def covering_counts(self) -> np.ndarray:
        """Per active value, how many labels cover it."""
        if self.rank is None:
            return self._masks.sum(axis=0)
        steps = np.zeros(self.m + 1, dtype=np.int64)
        np.add.at(steps, self.lo, 1)
        np.add.at(steps, self.hi, -1)
        return np.cumsum(steps)[:-1][self.rank]

    def covering(self, i: int) -> list[int]:
        """Label ids covering active value i, most specific first (fewest values, then
        lowest id)."""
        if i not in self._cover:
            ids = np.flatnonzero(self.covers(np.arange(self.n_labels), np.full(self.n_labels, i)))
            self._cover[i] = ids[np.lexsort((ids, self.sizes[ids]))].tolist()
        return self._cover[i]

    def join(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """Elementwise, the most specific label covering everything labels a and b cover
        (the tight summary of their union)."""
        key = np.asarray(a, dtype=np.int64) * self.n_labels + np.asarray(b, dtype=np.int64)
        if self._table is None and not self._no_table:
            # Label ids fit 16 bits here (at most 2,000 labels): 8 MB at most, not 32.
            self._no_table = self.n_labels**2 > JOIN_TABLE_CELLS or not self._table_fits()
            if not self._no_table:
                self._table = np.full(self.n_labels**2, -1, dtype=np.int16)
        if self._table is not None:
            missing = pd.unique(key[self._table[key] < 0])
            self._table[missing] = self._join_many(missing)
            return self._table[key].astype(np.int64)
        uniq, inv = np.unique(key, return_inverse=True)
        return self._join_many(uniq)[inv.reshape(-1)]

    def _table_fits(self) -> bool:
        """Whether the labels x labels table of joins fits in the memory limit; without
        it each call joins its distinct pairs anew, which is slower but takes no more."""
        limit = current_limit(None, "cpsat").bytes
        return limit is None or 2 * self.n_labels**2 <= limit

    def _join_many(self, keys: np.ndarray) -> np.ndarray:
        """The join of each pair key (a * n_labels + b): the first label, most specific
        first (fewest values, a value's own label before a generalized one, then the
        lowest id), that covers every value of both."""
        a, b = np.divmod(np.asarray(keys, dtype=np.int64), self.n_labels)
        if self.rank is not None:
            return self._join_runs(np.minimum(self.lo[a], self.lo[b]), np.maximum(self.hi[a], self.hi[b]))
        # Masks packed into 64-bit words: a label covers a pair when no word of the
        # pair's union has a bit outside it; pairs go in chunks that keep the pairs x
        # labels x words array to a few million words.
        if self._scan is None:
            self._scan = self._scan_order()
            self._words = _packed(self._masks)
            self._bits = ~self._words[self._scan]
        words = self._words.shape[1]
        out = np.empty(len(keys), dtype=np.int64)
        step = max(1, 4_000_000 // max(self.n_labels * words, 1))
        for lo in range(0, len(keys), step):
            union = self._words[a[lo : lo + step]] | self._words[b[lo : lo + step]]
            fits = ~(union[:, None, :] & self._bits[None, :, :]).any(axis=2)
            out[lo : lo + step] = self._scan[np.argmax(fits, axis=1)]
        return out

    def _scan_order(self) -> np.ndarray:
        """Label ids, most specific first: fewest values, own labels first, lowest id."""
        own = np.zeros(self.n_labels, dtype=bool)
        own[self.own] = True
        return np.lexsort((np.arange(self.n_labels), ~own, self.sizes))

    def _join_runs(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """The most specific label whose run holds the run [lo, hi) (in rank order).

        A label with that very run is it (among several, the first in specificity
        order). Otherwise every label holding it is larger: the ranges of an ordered
        attribute hold every run, so this only happens for hierarchy nodes, nested
        intervals and ``*``, whose runs are nested or disjoint (a laminar family), so the
        labels holding a rank form a chain; the walk goes up that chain from the
        smallest label holding rank `lo` to the first that reaches `hi`."""
        if self._run_keys is None:
            scan = self._scan_order()
            keys = self.lo[scan] * (self.m + 1) + self.hi[scan]
            # the first label of each run in specificity order
            uniq, first = np.unique(keys, return_index=True)
            self._run_keys, self._run_ids = uniq, scan[first]
        key = lo * (self.m + 1) + hi
        at = np.minimum(np.searchsorted(self._run_keys, key), len(self._run_keys) - 1)
        found = self._run_keys[at] == key
        out = np.where(found, self._run_ids[at], -1)
        if not found.all():
            rest = np.flatnonzero(~found)
            out[rest] = self._walk_up(lo[rest], hi[rest])
        return out

    def _walk_up(self, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        """:meth:`_join_runs` for runs no label has exactly, up the chain of nested
        generalized labels holding rank `lo` (the family is laminar then; otherwise each
        run is matched against every generalized label, in chunks)."""
        if self._up is None:
            self._laminar_chains()
        if self._parent is not None:
            cur = self._up[lo]
            short = self.hi[cur] < hi
            while short.any():
                cur[short] = self._parent[cur[short]]
                short = self.hi[cur] < hi
            return cur
        general = self._scan_order()
        general = general[~np.isin(general, self.own)]
        out = np.empty(len(lo), dtype=np.int64)
        step = max(1, 4_000_000 // max(len(general), 1))
        for s in range(0, len(lo), step):
            fits = (self.lo[general][None, :] <= lo[s : s + step, None]) & (
                self.hi[general][None, :] >= hi[s : s + step, None])
            out[s : s + step] = general[np.argmax(fits, axis=1)]
        return out

    def _laminar_chains(self) -> None:
        """For a laminar family of generalized runs: each label's parent (the smallest
        generalized label strictly holding it) and, per rank, the smallest generalized
        label holding it. Leaves `_parent` None when two runs overlap without nesting."""
        general = np.setdiff1d(np.arange(self.n_labels), self.own)
        order = general[np.lexsort((-self.hi[general], self.lo[general]))]
        parent = np.full(self.n_labels, -1, dtype=np.int64)
        stack: list[int] = []
        lo, hi = self.lo.tolist(), self.hi.tolist()
        for j in order.tolist():
            while stack and hi[stack[-1]] <= lo[j]:
                stack.pop()
            if stack:
                if hi[j] > hi[stack[-1]]:
                    self._up = np.zeros(0, dtype=np.int64)
                    return  # overlapping runs: not laminar
                parent[j] = stack[-1]
            stack.append(j)
        up = np.full(self.m, -1, dtype=np.int64)
        for j in order[np.argsort(-self.sizes[order], kind="stable")].tolist():
            up[lo[j] : hi[j]] = j  # larger first, so each rank keeps its smallest
        self._up, self._parent = up, parent


#: Bytes a candidate label takes: its text, two exact cell losses, its run and the
#: list entries (measured: about 330 for the nodes of a 10,000-leaf tree).
LABEL_BYTES = 400


def check_label_rows(name: str, m: int, rows: int) -> None:
    """Refuse, before they are built, `rows` candidate labels of an attribute of `m`
    active values besides the values' own (each label a run of values, its text and
    its losses): the ranges of an ordered attribute are m(m - 1)/2 of them."""
    check_memory(
        (rows + m) * LABEL_BYTES,
        f"the {rows:,} candidate labels of the {m:,} values of {name!r} present, besides "
        "each value's own",
        f"lower max_range_values, or generalize {name!r} to fewer distinct values before",
        at_least=True,
    )


def tree_positions(hierarchy: Hierarchy, values: Sequence[str]) -> np.ndarray:
    """Depth-first position of each of `values` (leaves of `hierarchy`): node n covers
    those with ``first <= position < end`` for ``(first, end) = hierarchy.leaf_range(n)``."""
    return hierarchy.leaf_positions[np.array([hierarchy.leaf_index[v] for v in values], dtype=np.int64)]


def _packed(masks: np.ndarray) -> np.ndarray:
    """Boolean rows packed into 64-bit words (bit i of the row in word i // 64)."""
    rows, m = masks.shape
    width = -(-max(m, 1) // 64) * 64
    padded = np.zeros((rows, width), dtype=bool)
    padded[:, :m] = masks
    return np.packbits(padded, axis=1, bitorder="little").view(np.uint64)


def _active(instance: Instance, name: str) -> tuple[list, np.ndarray]:
    """The active values of an attribute (domain order, numeric by value) and each row's
    index among them."""
    codes = instance.codes(name)
    if codes.dtype.kind == "i" and len(codes) and codes.min() >= 0 and codes.max() < 4 * len(codes) + 4096:
        # Domain indices: counted, not sorted (np.unique's sort took 1.5-4.5 ms a column
        # of UCI Adult's 30,162 records, 0.1-0.3 ms counted); the same values and index.
        seen = np.bincount(codes) > 0
        present, index = np.flatnonzero(seen), (np.cumsum(seen) - 1)[codes]
    else:
        present, index = np.unique(codes, return_inverse=True)
    if instance.schema[name].kind == "numeric":
        values = [float(v) for v in present]
    else:
        domain = instance.schema[name].domain
        values = [domain[int(c)] for c in present]
    return values, index.reshape(-1).astype(np.int64)


def _nested_intervals(attr: Attribute) -> bool:
    widths = attr.intervals.widths
    return all(b % a == 0 for a, b in itertools.pairwise(widths))


def missing_labels(attr: Attribute, m: int, recoding: str, max_range_values: int) -> tuple[str, str] | None:
    """Why the exact model has no generalized labels for `attr` with `m` active values,
    and what gives it some, as text for messages; None when it has them. Ranges cover
    at most `max_range_values` values; beyond, an ordered attribute needs a hierarchy
    and a numeric one nested intervals."""
    if recoding == "suppression":
        return None
    if attr.kind == "categorical" or (attr.kind == "ordered" and m > max_range_values):
        if attr.hierarchy is not None:
            return None
        return (f"the {m} values of ordered attribute {attr.name!r}, which has no hierarchy to "
                "fall back on", "give the attribute a hierarchy")
    if m <= max_range_values or (attr.intervals is not None and _nested_intervals(attr)):
        return None
    return (f"the {m} values of numeric attribute {attr.name!r}, which has no nested intervals "
            "to fall back on", "give it intervals=IntervalHierarchy(...) with widths that divide "
            "each other, bin it first")


def _label_space(instance: Instance, name: str, recoding: str, max_range_values: int,
                 deadline: float | None = None) -> LabelSpace:
    """The candidate labels of attribute `name` (see the module docstring), each kept as
    its run of values (:class:`LabelSpace`); past `deadline` (``time.perf_counter``),
    :class:`BuildStopped` between two labels: the ranges of an ordered or numeric
    attribute are m(m - 1)/2 of them (2,556 for UCI Adult's 72 ages, about 0.1 s CPU
    with their losses)."""
    stage = f"building the labels of {name!r}"
    attr = instance.schema[name]
    values, row_value = _active(instance, name)
    m = len(values)
    missing = missing_labels(attr, m, recoding, max_range_values)
    if missing is not None:
        why, remedy = missing
        raise InvalidParameterError(
            f"The 'max_range_values' parameter of cpsat ({max_range_values}) is smaller than {why}. "
            f"Raise max_range_values, {remedy}, or use recoding='suppression'."
        )
    own_text = [format_number(v) if attr.kind == "numeric" else str(v) for v in values]
    rank = np.arange(m, dtype=np.int64)  # domain order, but for hierarchy nodes
    candidates: list[tuple[str, int, int]] = []  # (text, lo, hi) in rank order, most specific first
    range_texts = None  # every range of an ordered or numeric attribute, in arrays instead
    if recoding == "suppression":
        check_label_rows(name, m, 1)
    elif attr.kind == "categorical" or (attr.kind == "ordered" and m > max_range_values):
        h = attr.hierarchy
        check_label_rows(name, m, sum(1 for node in h.nodes if h.children[node]))
        # A node covers the active values whose leaves lie in its depth-first range:
        # a run once the values are ranked in depth-first order.
        where = tree_positions(h, values)
        order = np.argsort(where, kind="stable")
        rank[order] = np.arange(m)
        placed = where[order]
        for node in sorted(h.nodes, key=lambda node: -h.depth[node]):
            if not h.children[node]:
                continue  # leaves are the own labels
            first, end = h.leaf_range(node)
            lo, hi = np.searchsorted(placed, [first, end])
            if hi > lo:
                candidates.append((node, int(lo), int(hi)))
    elif m <= max_range_values:
        check_label_rows(name, m, m * (m - 1) // 2)
        # Every range once, narrowest first, held in arrays: as a million (text, lo, hi)
        # tuples (the KDD census' 1,425 wages) they took a quarter of a second to free
        # when the deadline stopped the build.
        per_width = np.arange(m - 1, 0, -1, dtype=np.int64)  # m - w ranges of width w
        widths = np.repeat(np.arange(1, m, dtype=np.int64), per_width)
        range_lo = np.arange(len(widths), dtype=np.int64) - np.repeat(
            np.cumsum(per_width) - per_width, per_width)
        range_hi = range_lo + widths  # the last value covered
        range_texts = []
        for start in range(0, len(widths), LABEL_BLOCK):
            for lo, hi in zip(range_lo[start:start + LABEL_BLOCK].tolist(),
                              range_hi[start:start + LABEL_BLOCK].tolist()):
                check_deadline(deadline, stage)
                if lo == 0 and hi == m - 1:
                    range_texts.append(SUPPRESSED)
                elif attr.kind == "numeric":
                    range_texts.append(format_range(attr, values[lo], values[hi]))
                else:
                    range_texts.append(f"[{values[lo]}-{values[hi]}]")
        if m == 1:  # no run of two values: the one value's '*'
            range_lo = range_hi = np.zeros(1, dtype=np.int64)
            range_texts = [SUPPRESSED]
    elif attr.kind == "numeric" and attr.intervals is not None and _nested_intervals(attr):
        levels = [attr.intervals.generalize(values, level) for level in range(1, attr.intervals.height)]
        check_label_rows(name, m, sum(len(set(labels)) for labels in levels))
        for labels in levels:
            check_deadline(deadline, stage)
            # An interval holds the values (sorted) between its first and its last.
            first: dict[str, int] = {}
            last: dict[str, int] = {}
            for i, text in enumerate(labels):
                first.setdefault(text, i)
                last[text] = i
            candidates.extend((text, first[text], last[text] + 1) for text in first)
    candidates.append((SUPPRESSED, 0, m))

    texts = list(own_text)
    lo_of, hi_of = rank.tolist(), (rank + 1).tolist()
    if range_texts is not None:
        # Distinct runs, the widest (every value) '*' already.
        texts.extend(range_texts)
        lo_arr = np.concatenate([rank, range_lo])
        hi_arr = np.concatenate([rank + 1, range_hi + 1])
    else:
        seen: set[tuple[int, int]] = set()
        for i, (text, lo, hi) in enumerate(candidates):
            if i % LABEL_BLOCK == 0:
                check_deadline(deadline, stage)
            if (lo, hi) in seen:
                continue
            seen.add((lo, hi))
            # One rule for every kind of label: covering every value present is ``*``.
            texts.append(SUPPRESSED if hi - lo == m else text)
            lo_of.append(lo)
            hi_of.append(hi)
        lo_arr, hi_arr = np.array(lo_of, dtype=np.int64), np.array(hi_of, dtype=np.int64)
    check_deadline(deadline, stage)
    if attr.kind == "numeric":
        ncp, lm = _label_losses(attr, values, None, texts, deadline=deadline, stage=stage)
    else:
        # the first and last covered values in domain order: the least and the largest
        # value index over each run (reduceat over start, stop pairs; a sentinel past
        # the end lets a run stop at m)
        by_rank = np.empty(m + 1, dtype=np.int64)
        by_rank[rank] = np.arange(m)
        by_rank[m] = 0
        bounds = np.column_stack([lo_arr, hi_arr]).reshape(-1)
        first_i = np.minimum.reduceat(by_rank, bounds)[::2] if m else lo_arr
        last_i = np.maximum.reduceat(by_rank, bounds)[::2] if m else lo_arr
        ncp, lm = span_losses(attr, m, hi_arr - lo_arr, first_i, last_i)
    return LabelSpace(name, attr, values, texts, np.arange(m, dtype=np.int64), ncp, lm,
                      np.array([t == SUPPRESSED for t in texts], dtype=bool), row_value,
                      rank=rank, lo=lo_arr, hi=hi_arr)


def _label_losses(attr: Attribute, values: list, masks: np.ndarray | None, texts: list[str],
                  deadline: float | None = None, stage: str = "costing the labels"):
    """Per-label NCP and LM cell losses, exactly as :mod:`fairanon.models.metrics`
    defines them over the active domain (`masks`: the active values each label covers;
    a numeric attribute reads its `texts` only). Past `deadline`
    (``time.perf_counter``), :class:`BuildStopped` (`stage` says what was
    being built) between two labels of a numeric attribute, each costed in fractions."""
    m = len(values)
    ncp = []
    if attr.kind == "numeric":
        from ...instances.generalization import label_covers

        lo_v, hi_v = Fraction(values[0]), Fraction(values[-1])
        rng = hi_v - lo_v
        # Read a block of labels at a time between two reads of the clock: the million
        # ranges of the KDD census' 1,425 wages took 0.8 s to read at once.
        lows, highs = [], []
        for start in range(0, len(texts), LABEL_BLOCK):
            check_deadline(deadline, stage)
            covers = label_covers(attr, texts[start:start + LABEL_BLOCK])
            lows.extend(covers.lo.tolist())
            highs.extend(covers.hi.tolist())
        for j in range(len(texts)):
            check_deadline(deadline, stage)
            if rng == 0:
                ncp.append(Fraction(0))
                continue
            lo = min(max(Fraction(lows[j]) if math.isfinite(lows[j]) else lo_v, lo_v), hi_v)
            hi = min(max(Fraction(highs[j]) if math.isfinite(highs[j]) else hi_v, lo_v), hi_v)
            ncp.append(max(hi - lo, Fraction(0)) / rng)
        return ncp, list(ncp)
    count = masks.sum(axis=1)
    first = masks.argmax(axis=1) if m else count
    last = m - 1 - masks[:, ::-1].argmax(axis=1) if m else count
    return span_losses(attr, m, count, first, last)


def span_losses(attr: Attribute, m: int, count: np.ndarray, first: np.ndarray, last: np.ndarray):
    """Per-label NCP and LM cell losses of a non-numeric attribute of `m` active values,
    from each label's number of covered active values and the ranks of its first and
    last (as :meth:`~fairanon.instances.generalization.LabelCovers.active_spans` gives
    them), exactly as :mod:`fairanon.models.metrics` defines them."""
    ncp, lm = [], []
    for n, lo, hi in zip(count.tolist(), first.tolist(), last.tolist()):
        lm.append(Fraction(n - 1, m - 1) if m > 1 else Fraction(0))
        if attr.kind == "categorical":
            ncp.append(Fraction(n, m) if n > 1 else Fraction(0))
        else:
            ncp.append(Fraction(hi - lo, m - 1) if m > 1 else Fraction(0))
    return ncp, lm
