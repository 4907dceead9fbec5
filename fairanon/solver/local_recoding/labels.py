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
from dataclasses import dataclass, field
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


def check_deadline(deadline: float | None, stage: str) -> None:
    """Raise :class:`BuildStopped` when `deadline` (``time.perf_counter``) has passed."""
    if deadline is not None and time.perf_counter() >= deadline:
        raise BuildStopped(stage)


@dataclass
class LabelSpace:
    """The candidate labels of one generalizable quasi-identifier.

    Values are the attribute's *active* values (those present in the data), in domain
    order (numeric: by value). Each label covers a set of them; labels covering the
    same set are merged into the most specific one, except that a value's own label
    (which shows it) is kept apart from the generalized labels.

    Attributes
    ----------
    name : str
    values : list
        Active values (domain strings, or floats for numeric attributes).
    texts : list of str
        The released text of each label.
    masks : numpy.ndarray of bool, shape (L, m)
        ``masks[j, i]``: label j covers active value i.
    own : numpy.ndarray of int, shape (m,)
        The label id showing value i itself.
    ncp, lm : list of Fraction
        Per-label cell losses, as :mod:`fairanon.models.metrics` measures them.
    star : numpy.ndarray of bool
        Labels released as ``*``.
    row_value : numpy.ndarray of int
        Active value index of every instance row.
    """

    name: str
    attr: Attribute
    values: list
    texts: list[str]
    masks: np.ndarray
    own: np.ndarray
    ncp: list[Fraction]
    lm: list[Fraction]
    star: np.ndarray
    row_value: np.ndarray
    _cover: list | None = field(default=None, repr=False)
    _bits: np.ndarray | None = field(default=None, repr=False)
    _words: np.ndarray | None = field(default=None, repr=False)
    _table: np.ndarray | None = field(default=None, repr=False)
    _no_table: bool = field(default=False, repr=False)
    _scan: np.ndarray | None = field(default=None, repr=False)

    @property
    def m(self) -> int:
        return len(self.values)

    @property
    def n_labels(self) -> int:
        return len(self.texts)

    @property
    def sizes(self) -> np.ndarray:
        return self.masks.sum(axis=1)

    def covering(self, i: int) -> list[int]:
        """Label ids covering active value i, most specific first."""
        if self._cover is None:
            order = np.lexsort((np.arange(self.n_labels), self.sizes))
            self._cover = [[int(j) for j in order if self.masks[j, v]] for v in range(self.m)]
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
        first (a value's own label before a generalized one), that covers every value
        of both. Masks are packed into 64-bit words, so a label covers a pair when no
        word of the pair's union has a bit outside it; pairs go in chunks that keep the
        pairs x labels x words array to a few million words."""
        if self._scan is None:
            own = np.zeros(self.n_labels, dtype=bool)
            own[self.own] = True
            self._scan = np.lexsort((np.arange(self.n_labels), ~own, self.sizes))
            self._words = _packed(self.masks)
            self._bits = ~self._words[self._scan]
        words = self._words.shape[1]
        out = np.empty(len(keys), dtype=np.int64)
        step = max(1, 4_000_000 // max(self.n_labels * words, 1))
        for lo in range(0, len(keys), step):
            a, b = np.divmod(np.asarray(keys[lo : lo + step], dtype=np.int64), self.n_labels)
            union = self._words[a] | self._words[b]
            fits = ~(union[:, None, :] & self._bits[None, :, :]).any(axis=2)
            out[lo : lo + step] = self._scan[np.argmax(fits, axis=1)]
        return out


def check_unit_labels(name: str, m: int, copies: int = 1) -> None:
    """Refuse, before they are built, the one-value labels of an attribute of `m`
    active values: a boolean row of m values each, `copies` times (m x m bytes each,
    900 MB for 30,000 values)."""
    check_memory(
        copies * m * m,
        f"the labels of the {m:,} values of {name!r} present, each a row over all of them",
        f"generalize {name!r} to fewer distinct values before (a hierarchy with fewer leaves), "
        "or give it the role 'identifier' if it identifies records",
        at_least=True,
    )


#: Bytes a candidate label holds besides its row of values: its text and the list entry.
LABEL_OVERHEAD = 150


def check_label_rows(name: str, m: int, rows: int) -> None:
    """Refuse, before they are built, `rows` candidate labels of an attribute of `m`
    active values, each a boolean row over them kept twice (the list and the array):
    the ranges of an ordered attribute are m(m - 1)/2 of them, cubic in m."""
    check_memory(
        rows * (2 * m + LABEL_OVERHEAD),
        f"the {rows:,} candidate labels of the {m:,} values of {name!r} present, each a row "
        "over all of them",
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
    """The candidate labels of attribute `name` (see the module docstring); past
    `deadline` (``time.perf_counter``), :class:`BuildStopped` between two
    labels: the ranges of an ordered or numeric attribute are m(m - 1)/2 of them (2,556
    for UCI Adult's 72 ages, about 0.1 s CPU with their losses)."""
    stage = f"building the labels of {name!r}"
    attr = instance.schema[name]
    values, row_value = _active(instance, name)
    m = len(values)
    check_unit_labels(name, m, copies=2)
    own_text = [format_number(v) if attr.kind == "numeric" else str(v) for v in values]
    candidates: list[tuple[str, np.ndarray]] = []  # (text, mask), most specific first

    def unit(i):
        mask = np.zeros(m, dtype=bool)
        mask[i] = True
        return mask

    missing = missing_labels(attr, m, recoding, max_range_values)
    if missing is not None:
        why, remedy = missing
        raise InvalidParameterError(
            f"The 'max_range_values' parameter of cpsat ({max_range_values}) is smaller than {why}. "
            f"Raise max_range_values, {remedy}, or use recoding='suppression'."
        )
    full = np.ones(m, dtype=bool)
    if recoding == "suppression":
        candidates = [(SUPPRESSED, full)]
    elif attr.kind == "categorical" or (attr.kind == "ordered" and m > max_range_values):
        h = attr.hierarchy
        check_label_rows(name, m, sum(1 for node in h.nodes if h.children[node]))
        where = tree_positions(h, values)
        nodes = sorted(h.nodes, key=lambda node: -h.depth[node])
        for node in nodes:
            if not h.children[node]:
                continue  # leaves are the own labels
            first, end = h.leaf_range(node)
            mask = (first <= where) & (where < end)
            if mask.any():
                candidates.append((node, mask))
    elif m <= max_range_values:
        check_label_rows(name, m, m * (m - 1) // 2)
        for width in range(1, m):
            for lo in range(m - width):
                check_deadline(deadline, stage)
                hi = lo + width
                mask = np.zeros(m, dtype=bool)
                mask[lo : hi + 1] = True
                if lo == 0 and hi == m - 1:
                    text = SUPPRESSED
                elif attr.kind == "numeric":
                    text = format_range(attr, values[lo], values[hi])
                else:
                    text = f"[{values[lo]}-{values[hi]}]"
                candidates.append((text, mask))
    elif attr.kind == "numeric" and attr.intervals is not None and _nested_intervals(attr):
        levels = [attr.intervals.generalize(values, level) for level in range(1, attr.intervals.height)]
        check_label_rows(name, m, sum(len(set(labels)) for labels in levels))
        for labels in levels:
            for text in dict.fromkeys(labels):
                candidates.append((text, np.array([lab == text for lab in labels])))
        candidates.append((SUPPRESSED, full))
    if not any(text == SUPPRESSED or mask.all() for text, mask in candidates):
        candidates.append((SUPPRESSED, full))

    texts = list(own_text)
    masks = [unit(i) for i in range(m)]
    seen: set[bytes] = set()
    for text, mask in candidates:
        check_deadline(deadline, stage)
        key = np.packbits(mask).tobytes()
        if key in seen:
            continue
        seen.add(key)
        # One rule for every kind of label: covering every value present is ``*``.
        texts.append(SUPPRESSED if mask.all() else text)
        masks.append(mask)
    masks_arr = np.array(masks, dtype=bool).reshape(len(masks), m)
    ncp, lm = _label_losses(attr, values, masks_arr, texts, deadline=deadline, stage=stage)
    return LabelSpace(
        name=name,
        attr=attr,
        values=values,
        texts=texts,
        masks=masks_arr,
        own=np.arange(m, dtype=np.int64),
        ncp=ncp,
        lm=lm,
        star=np.array([t == SUPPRESSED for t in texts], dtype=bool),
        row_value=row_value,
    )


def _label_losses(attr: Attribute, values: list, masks: np.ndarray | None, texts: list[str],
                  deadline: float | None = None, stage: str = "costing the labels"):
    """Per-label NCP and LM cell losses, exactly as :mod:`fairanon.models.metrics`
    defines them over the active domain (`masks`: the active values each label covers;
    a numeric attribute reads its `texts` only). Past `deadline`
    (``time.perf_counter``), :class:`BuildStopped` (`stage` says what was
    being built) between two labels of a numeric attribute, each costed in fractions."""
    m = len(values)
    ncp, lm = [], []
    if attr.kind == "numeric":
        from ...instances.generalization import label_covers

        lo_v, hi_v = Fraction(values[0]), Fraction(values[-1])
        rng = hi_v - lo_v
        covers = label_covers(attr, texts)
        for j in range(len(texts)):
            check_deadline(deadline, stage)
            if rng == 0:
                ncp.append(Fraction(0))
                continue
            lo = min(
                max(Fraction(covers.lo[j]) if math.isfinite(covers.lo[j]) else lo_v, lo_v), hi_v
            )
            hi = min(
                max(Fraction(covers.hi[j]) if math.isfinite(covers.hi[j]) else hi_v, lo_v), hi_v
            )
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
