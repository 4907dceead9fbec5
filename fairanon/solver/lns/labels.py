"""The labels of the large-neighbourhood search: one registry per attribute, and the
label space of each neighbourhood.

A :class:`Registry` holds every label of one generalizable quasi-identifier that the
search has met -- the values themselves, the labels of the starting release, hierarchy
nodes and ranges made for neighbourhoods -- with the set of active values it covers and
its exact NCP and LM cell losses over the *whole* table, as
:mod:`fairanon.models.metrics` measures them. Label ids are stable for the whole search.

:func:`neighbourhood_space` builds, for the records of one neighbourhood, the
:class:`~fairanon.solver.local_recoding.LabelSpace` the exact model takes: the values
present in the neighbourhood, their own labels first, then the labels that may cover
them -- hierarchy nodes (categorical attributes), ranges in order (ordered and numeric
ones: every range over the neighbourhood's values when there are at most
``max_range_values`` of them, else the ranges between evenly spaced values and the ends
of the labels in use), ``*`` and the labels the neighbourhood's classes and the classes
around it use now. Costs stay those of the whole table, so the model's objective is the
exact change of the release's objective. A range covering every value present in the
table is ``*`` (the one rule of :mod:`fairanon.solver.local_recoding.labels`).
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from ...instances.generalization import format_number, format_range, label_covers
from ...instances.hierarchy import SUPPRESSED
from ...instances.instance import Instance
from ..local_recoding.labels import (
    LabelSpace,
    _active,
    _label_losses,
    check_deadline,
    tree_positions,
)

__all__ = ["JOIN_BLOCK", "OWN_BLOCK", "Covers", "Registry", "neighbourhood_space",
           "suppression_only"]

#: Label-value cells :meth:`Registry.join_costs` reads at a time (a byte each, twice).
JOIN_BLOCK = 2**20
#: Values whose own labels :class:`Registry` registers between two deadline checks.
OWN_BLOCK = 4096


class Covers:
    """The active values each label of a :class:`Registry` covers, kept small: a run of
    values in order (a range, an interval, a value's own label, ``*``, a tree node
    whose leaves are in domain order) as its (start, stop), any other set as packed
    bits, m / 8 bytes. As boolean rows over every value (m bytes a label), the
    registry grew by m bytes per label over a long search, and held m x m bytes for
    the values' own labels alone. ``covers[j]`` is label j's boolean row, made when
    read."""

    def __init__(self, m: int):
        self.m = m
        self._runs: list[tuple[int, int] | np.ndarray] = []
        self.sizes: list[int] = []

    def __len__(self) -> int:
        return len(self._runs)

    def append_run(self, start: int, stop: int) -> None:
        """Add a label covering active values start..stop-1 (a value's own label:
        (i, i + 1)) without a row over every value."""
        self.sizes.append(stop - start)
        self._runs.append((start, stop))

    def append(self, mask: np.ndarray) -> None:
        covered = np.flatnonzero(mask)
        self.sizes.append(len(covered))
        if not len(covered):
            self._runs.append((0, 0))
        elif covered[-1] - covered[0] + 1 == len(covered):
            self._runs.append((int(covered[0]), int(covered[-1]) + 1))
        else:
            self._runs.append(np.packbits(mask))

    def __getitem__(self, j):
        if isinstance(j, slice):
            return [self[i] for i in range(*j.indices(len(self)))]
        run = self._runs[j]
        if isinstance(run, tuple):
            mask = np.zeros(self.m, dtype=bool)
            mask[run[0] : run[1]] = True
            return mask
        return np.unpackbits(run, count=self.m).astype(bool)

    @property
    def nbytes(self) -> int:
        """Bytes of the packed sets (a run holds two integers)."""
        return sum(r.nbytes if isinstance(r, np.ndarray) else 16 for r in self._runs)


class Registry:
    """Every label of one generalizable quasi-identifier met during the search.

    Attributes
    ----------
    name : str
    values : list
        Active values (domain order; numeric: by value).
    row_value : numpy.ndarray of int
        Active value index of every instance row.
    texts : list of str
    masks : Covers
        Active values covered by each label (``masks[j]``: a boolean row).
    ncp, lm : list of Fraction
        Cell losses over the whole table.
    star : list of bool
    position : list of tuple of float
        Where each label lies in [0, 1]: first and last covered value (by rank;
        numeric: by value), for the distances between classes.

    Past `deadline` (``time.perf_counter``),
    :class:`~fairanon.solver.local_recoding.labels.BuildStopped` between two blocks
    of :data:`OWN_BLOCK` values while their own labels are registered.
    """

    def __init__(self, instance: Instance, name: str, deadline: float | None = None):
        self.name = name
        self.attr = instance.schema[name]
        self.values, self.row_value = _active(instance, name)
        self.m = len(self.values)
        self.texts: list[str] = []
        self.masks = Covers(self.m)
        self.ncp: list[Fraction] = []
        self.lm: list[Fraction] = []
        self.star: list[bool] = []
        self.position: list[tuple[float, float]] = []
        self.index: dict[str, int] = {}
        numeric = self.attr.kind == "numeric"
        if numeric:
            lo, hi = float(self.values[0]), float(self.values[-1])
            span = (hi - lo) or 1.0
            self._coord = np.array([(float(v) - lo) / span for v in self.values])
        else:
            self._coord = np.arange(self.m) / max(self.m - 1, 1)
        own = [format_number(v) if numeric else str(v) for v in self.values]
        zero = Fraction(0)
        for start in range(0, self.m, OWN_BLOCK):
            check_deadline(deadline, "registering the values' own labels")
            for i in range(start, min(start + OWN_BLOCK, self.m)):
                text = own[i]
                if text in self.index:  # a text met already keeps its label, as in _add
                    continue
                # A value's own label covers it alone: the run (i, i + 1), with NCP and
                # LM 0 (one value: n - 1 = 0, hi - lo = 0, a numeric point's width 0), as
                # _label_losses gives them. Built through _add, each took a row over all
                # m values: m^2 work for the m of them.
                self.index[text] = len(self.texts)
                self.texts.append(text)
                self.masks.append_run(i, i + 1)
                self.ncp.append(zero)
                self.lm.append(zero)
                self.star.append(text == SUPPRESSED)
                self.position.append((float(self._coord[i]), float(self._coord[i])))
        self.own = np.arange(self.m, dtype=np.int64)
        self._ancestors: dict[int, list[int]] = {}
        self._ranges: dict[tuple[int, int], int] = {}

    def __len__(self) -> int:
        return len(self.texts)

    def _add(self, text: str, mask: np.ndarray) -> int:
        if text in self.index:
            return self.index[text]
        ncp, lm = _label_losses(self.attr, self.values, mask.reshape(1, -1), [text])
        covered = np.flatnonzero(mask)
        j = len(self.texts)
        self.index[text] = j
        self.texts.append(text)
        self.masks.append(mask)
        self.ncp.append(ncp[0])
        self.lm.append(lm[0])
        self.star.append(text == SUPPRESSED)
        if len(covered):
            self.position.append((float(self._coord[covered[0]]), float(self._coord[covered[-1]])))
        else:
            self.position.append((0.0, 1.0))
        return j

    def adopt(self, texts: Sequence[str], masks: Sequence[np.ndarray]) -> np.ndarray:
        """The ids here of labels another copy of this registry made (a search in
        another process), each registered by its text and covered values as it was
        there."""
        return np.array([self._add(t, m) for t, m in zip(texts, masks)], dtype=np.int64)

    # ------------------------------------------------------------------ labels
    def parse(self, texts: Sequence[str]) -> np.ndarray:
        """Label ids of released texts (registered on first sight). A numeric point
        label is its value's own label, as the metrics read it; a generalized label
        covering every value present is ``*``."""
        texts = [str(t) for t in texts]
        fresh = [t for t in dict.fromkeys(texts) if t not in self.index]
        if fresh:
            covers = label_covers(self.attr, fresh)
            if self.attr.kind != "numeric":
                index = {v: i for i, v in enumerate(self.attr.domain)}
                codes = np.array([index[v] for v in self.values], dtype=np.int64)
            for u, text in enumerate(fresh):
                if self.attr.kind == "numeric":
                    vals = np.array(self.values, dtype=float)
                    mask = covers.contains(np.full(self.m, u), vals)
                    point = covers.lo[u] == covers.hi[u] and not covers.lo_open[u]
                    if point and mask.sum() == 1:
                        self.index[text] = int(np.flatnonzero(mask)[0])
                        continue
                else:
                    mask = covers.contains(np.full(self.m, u), codes)
                # The one rule for stars: a generalized label covering every value
                # present is ``*``, so the start's ranges and nodes of that kind count as
                # stars, as in the exact model.
                self.index[text] = self.star_label() if mask.all() else self._add(text, mask)
        return np.array([self.index[t] for t in texts], dtype=np.int64)

    def range_label(self, lo: int, hi: int) -> int:
        """The label of the range of active values lo..hi (``*`` if it is all of them)."""
        key = (lo, hi)
        if key not in self._ranges:
            if lo == hi:
                self._ranges[key] = lo
            else:
                mask = np.zeros(self.m, dtype=bool)
                mask[lo : hi + 1] = True
                if lo == 0 and hi == self.m - 1:
                    text = SUPPRESSED
                elif self.attr.kind == "numeric":
                    text = format_range(self.attr, self.values[lo], self.values[hi])
                else:
                    text = f"[{self.values[lo]}-{self.values[hi]}]"
                self._ranges[key] = self._add(text, mask)
        return self._ranges[key]

    def star_label(self) -> int:
        return self._add(SUPPRESSED, np.ones(self.m, dtype=bool))

    def ancestors(self, value: int) -> list[int]:
        """Label ids of the hierarchy nodes above active value `value` (its own label
        excluded); a node covering every value present is ``*``."""
        if value not in self._ancestors:
            h = self.attr.hierarchy
            where = tree_positions(h, self.values)
            out = []
            for node in h.ancestors(self.values[value])[1:]:
                first, end = h.leaf_range(node)
                mask = (first <= where) & (where < end)
                out.append(self._add(SUPPRESSED if mask.all() else node, mask))
            self._ancestors[value] = list(dict.fromkeys(out))
        return self._ancestors[value]

    def join_costs(self, label: int, others: np.ndarray) -> np.ndarray:
        """Per label of `others`, the NCP cell loss of the cheapest label covering both it
        and `label` (the lowest common hierarchy node, or the range spanning both).

        Categorical: the labels above `label` (itself, the hierarchy nodes above its
        values, ``*``) are nested, so the first of them covering another label is the
        farthest one any of that label's values first enters. The values' entry depths
        are read :data:`JOIN_BLOCK` cells at a time, so the memory stays a few MB however
        many values and labels there are (a table of which label of the chain covers
        which of `others` at each value peaked at 45 MB for 3,000 labels on 3,000
        values; now 2.2 MB)."""
        others = np.asarray(others, dtype=np.int64)
        if self.attr.kind != "categorical":
            pos = np.array(self.position, dtype=float).reshape(-1, 2)
            span = np.maximum(pos[others, 1], pos[label, 1]) - np.minimum(
                pos[others, 0], pos[label, 0]
            )
            return span
        covered = np.flatnonzero(self.masks[label])
        chain = [label]
        if len(covered):
            chain += [j for j in self.ancestors(int(covered[0])) if self.masks[j][covered].all()]
        chain.append(self.star_label())
        # Per value, the first label of the chain covering it.
        depth = np.zeros(self.m, dtype=np.min_scalar_type(len(chain)))
        for c in range(len(chain) - 1, -1, -1):
            depth[self.masks[chain[c]]] = c
        first = np.zeros(len(others), dtype=np.int64)
        block = max(1, JOIN_BLOCK // max(self.m, 1))
        for start in range(0, len(others), block):
            ids = others[start : start + block].tolist()
            masks = np.array([self.masks[j] for j in ids], dtype=bool).reshape(len(ids), self.m)
            first[start : start + len(ids)] = (masks * depth).max(axis=1, initial=0)
        costs = np.array([float(self.ncp[j]) for j in chain])
        return costs[first]

    def cost(self, objective: str) -> np.ndarray | None:
        """Per label, its cell cost under a per-cell objective (None for
        "generalized", whose cost depends on the record, and "discernibility")."""
        if objective == "ncp":
            return np.array(self.ncp, dtype=object)
        if objective == "lm":
            return np.array(self.lm, dtype=object)
        if objective == "stars":
            return np.array([Fraction(int(s)) for s in self.star], dtype=object)
        return None

    def cell_cost(self, objective: str, label: int, value: int) -> Fraction:
        """The cost of releasing active value `value` as `label`."""
        if objective == "ncp":
            return self.ncp[label]
        if objective == "lm":
            return self.lm[label]
        if objective == "stars":
            return Fraction(int(self.star[label]))
        if objective == "generalized":
            return Fraction(int(label != value))
        return Fraction(0)


def suppression_only(registries: Sequence[Registry], labels: np.ndarray) -> np.ndarray:
    """Per row of `labels` (registry label ids, one column per registry), whether each of
    its labels is a value's own label or ``*``: a vector ``recoding="suppression"`` may
    release."""
    allowed = np.ones(len(labels), dtype=bool)
    for a, reg in enumerate(registries):
        column = labels[:, a]
        allowed &= (column < reg.m) | np.asarray(reg.star, dtype=bool)[column]
    return allowed


def _family(reg: Registry, present: np.ndarray, recoding: str, max_range_values: int, ends):
    """Labels that may cover the neighbourhood's values: nodes or ranges (see module)."""
    if recoding == "suppression":
        return []
    kind = reg.attr.kind
    if kind == "categorical":
        return [j for v in present.tolist() for j in reg.ancestors(v)]
    if len(present) <= max_range_values:
        points = present
    else:
        picks = np.linspace(0, len(present) - 1, max_range_values).round().astype(np.int64)
        points = np.union1d(present[picks], np.asarray(sorted(ends), dtype=np.int64))
    points = points.tolist()
    return [reg.range_label(a, b) for i, a in enumerate(points) for b in points[i + 1 :]]


def neighbourhood_space(
    reg: Registry,
    rows: np.ndarray,
    keep: Sequence[int],
    *,
    objective: str,
    recoding: str = "generalization",
    max_range_values: int = 16,
) -> tuple[LabelSpace, np.ndarray]:
    """The label space of the records at `rows` (instance positions) on one attribute,
    and the registry id of each of its labels.

    `keep` are registry labels that must be in the space as they are (those of the
    neighbourhood's classes and of the classes around it, so that the current release
    and a record joining an outside class can be expressed); with suppression they are
    values and ``*`` (the search starts from such a release and offers only such
    vectors). Other labels covering the same values as a cheaper one are left out.
    """
    row_value = reg.row_value[rows]
    present = np.unique(row_value)
    keep = [j for j in dict.fromkeys(int(j) for j in keep) if j not in set(present.tolist())]
    ends = set()
    if reg.attr.kind != "categorical":
        for j in keep:
            covered = np.flatnonzero(reg.masks[j][present])
            if len(covered):
                ends.update((int(present[covered[0]]), int(present[covered[-1]])))
    family = _family(reg, present, recoding, max_range_values, ends) + [reg.star_label()]
    cost = reg.cost(objective)

    def rank(j: int):
        size = reg.masks.sizes[j]
        return (cost[j] if cost is not None else 0, reg.ncp[j], size, j)

    chosen: list[int] = []
    seen: set[bytes] = set()
    for j in keep:
        seen.add(np.packbits(reg.masks[j][present]).tobytes())
        chosen.append(j)
    for j in sorted(set(family) - set(keep) - set(present.tolist()), key=rank):
        sub = reg.masks[j][present]
        key = np.packbits(sub).tobytes()
        if key in seen or not sub.any():
            continue
        seen.add(key)
        chosen.append(j)
    # Own labels first (the model reads label ids below m as shown values); then by
    # cost, so that the join of two labels is the cheapest label covering both.
    chosen.sort(key=rank)
    ids = np.array(present.tolist() + chosen, dtype=np.int64)
    masks = np.array([reg.masks[j][present] for j in ids], dtype=bool).reshape(
        len(ids), len(present)
    )
    space = LabelSpace(
        name=reg.name,
        attr=reg.attr,
        values=[reg.values[i] for i in present.tolist()],
        texts=[reg.texts[j] for j in ids],
        own=np.arange(len(present), dtype=np.int64),
        ncp=[reg.ncp[j] for j in ids],
        lm=[reg.lm[j] for j in ids],
        star=np.array([reg.star[j] for j in ids], dtype=bool),
        row_value=np.searchsorted(present, row_value),
        masks=masks,
    )
    return space, ids
