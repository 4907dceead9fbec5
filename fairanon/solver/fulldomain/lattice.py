"""The lattice of full-domain generalization: each attribute's levels, how the levels
refine one another, and the exact integer cell costs of each level.

A lattice node gives one level per generalizable quasi-identifier. Level j of an
attribute releases each active value as one label (a hierarchy node at depth j above
the leaves, a fixed-width interval, or ``*``). Besides its levels, every attribute has
a finer *grain*, its active values themselves: grain 0 is the values and grain j + 1 is
level j. Frequency sets (:mod:`.frequency`) are kept at grains, so the table of the
records' own values is a frequency set like any node's.

Grain f *feeds* grain g when every label of f lies inside one label of g (so a
frequency set at f rolls up to g, as ARX's snapshots do) and the cell cost at g is the
same for every value of an f label (so the cost at g can be read from f's counts).
Hierarchies and nested intervals feed every coarser level; interval widths that do not
divide each other do not, and the search never assumes they do.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from ...exceptions import SchemaError
from ...instances.generalization import format_number, label_covers, tells_nothing
from ...instances.hierarchy import SUPPRESSED, Hierarchy
from ...instances.instance import Instance
from ..local_recoding.labels import OBJECTIVES, _active, _label_losses, span_losses, tree_positions

__all__ = [
    "AttributeLevels", "Ladder", "OutOfTime", "Space", "build_space", "check_deadline", "heights",
    "ladders", "lattice_size",
]


class OutOfTime(Exception):
    """The deadline passed before the set-up ended or the frontier could pick a node."""


def check_deadline(deadline: float | None) -> None:
    """Raise :class:`OutOfTime` once `deadline` (a :func:`time.perf_counter` value) has
    passed; read between the set-up's steps, an attribute or a requirement at a time
    (about 1 ms each on UCI Adult)."""
    if deadline is not None and time.perf_counter() >= deadline:
        raise OutOfTime


# ====================================================================== levels
@dataclass
class Ladder:
    """The generalization levels of one attribute.

    Attributes
    ----------
    name : str
    height : int
        The top level (levels are 0..height; 0 releases the values themselves).
    labels : list of list of str
        ``labels[j][i]``: the text of active value i at level j.
    codes : list of numpy.ndarray
        ``codes[j][i]``: the label id of value i among level j's distinct labels.
    texts : list of list of str
        Level j's distinct labels.
    cost : dict of str -> list of list of Fraction
        ``cost[objective][j][i]``: the cell cost of value i at level j.
    star_cost : dict of str -> Fraction
        The cost of a cell released as ``*`` (a suppressed record).
    """

    name: str
    height: int
    labels: list[list[str]]
    codes: list[np.ndarray]
    texts: list[list[str]]
    cost: dict[str, list[list[Fraction]]]
    star_cost: dict[str, Fraction]


def _height(instance: Instance, name: str) -> int:
    """The top level of an attribute, from its schema alone (no pass over the rows)."""
    attr = instance.schema[name]
    if attr.kind == "numeric":
        if attr.intervals is None:
            raise SchemaError(
                "Full-domain generalization (fulldomain, lattice-local) needs levels for numeric "
                f"attribute {name!r}: give it intervals, e.g. Attribute({name!r}, kind='numeric', "
                "intervals=IntervalHierarchy((5, 10, 20))), or bin it into an ordered attribute."
            )
        return attr.intervals.height
    if attr.hierarchy is not None:
        # the levels of its ARX rows (a top-coded value keeps its label)
        return max(attr.hierarchy.n_levels, 1)
    return 1  # an ordered attribute without a hierarchy: the value or '*'


def _ladder(instance: Instance, name: str) -> Ladder:
    attr = instance.schema[name]
    height = _height(instance, name)
    values, _ = _active(instance, name)
    own = [format_number(v) if attr.kind == "numeric" else str(v) for v in values]
    if attr.kind == "numeric":
        present = np.asarray(values, dtype=float)
    else:
        index = {v: i for i, v in enumerate(attr.domain)}
        present = np.array([index[v] for v in values], dtype=np.int64)
    if attr.kind == "numeric":
        labels = [own] + [attr.intervals.generalize(values, j) for j in range(1, height + 1)]
    elif attr.hierarchy is not None:
        h = attr.hierarchy
        labels = [own] + [[h.generalize(v, j) for v in values] for j in range(1, height + 1)]
    else:
        labels = [own, [SUPPRESSED] * len(values)]
    m = len(values)
    codes, texts = [], []
    cost = {obj: [] for obj in OBJECTIVES if obj != "discernibility"}
    for j, level in enumerate(labels):
        distinct = list(dict.fromkeys(level))
        index = {t: i for i, t in enumerate(distinct)}
        code = np.array([index[t] for t in level], dtype=np.int64)
        if j == 0:
            # The values themselves cost nothing (and a labels-by-values table of them
            # would be quadratic in the values: 84 GiB for 300,000 IDs).
            ncp = lm = [Fraction(0)] * len(distinct)
        elif attr.kind == "numeric":
            ncp, lm = _label_losses(attr, values, None, distinct)
        elif attr.hierarchy is not None:
            ncp, lm = span_losses(attr, m, *_node_spans(attr.hierarchy, values, distinct))
        else:  # each value's own label or '*': a label covers the values that reach it
            first, last = np.full(len(distinct), m, dtype=np.int64), np.full(len(distinct), -1, dtype=np.int64)
            np.minimum.at(first, code, np.arange(m))
            np.maximum.at(last, code, np.arange(m))
            ncp, lm = span_losses(attr, m, np.bincount(code, minlength=len(distinct)), first, last)
        codes.append(code)
        texts.append(distinct)
        # The one rule for stars: '*' or a generalized label covering every value present.
        star = (np.zeros(len(distinct), dtype=bool) if j == 0
                else tells_nothing(attr, label_covers(attr, distinct), present))
        cost["stars"].append([Fraction(int(star[c])) for c in code])
        cost["generalized"].append([Fraction(int(t != o)) for t, o in zip(level, own)])
        cost["ncp"].append([ncp[c] for c in code])
        cost["lm"].append([lm[c] for c in code])
    star_ncp, star_lm = _label_losses(attr, values, np.ones((1, m), dtype=bool), [SUPPRESSED])
    star_cost = {
        "stars": Fraction(1),
        "generalized": Fraction(1),
        "ncp": star_ncp[0],
        "lm": star_lm[0],
    }
    return Ladder(name, height, labels, codes, texts, cost, star_cost)


def _node_spans(hierarchy: Hierarchy, values: list[str], labels: list[str]):
    """Per node of `labels`: how many of `values` (leaves, in rank order) are below it
    and the ranks of the first and the last -- every value below the node, not only
    those that reach it at this level (a shallow leaf reaches the root early) -- from
    the nodes' depth-first leaf ranges instead of a labels-by-values table."""
    where = tree_positions(hierarchy, values)
    order = np.argsort(where, kind="stable")
    ranges = np.array([hierarchy.leaf_range(t) for t in labels], dtype=np.int64).reshape(-1, 2)
    lo, hi = np.searchsorted(where[order], ranges[:, 0]), np.searchsorted(where[order], ranges[:, 1])
    # Each label of a level is the node of a value, so lo < hi and reduceat over the
    # pairs (lo, hi) reduces exactly order[lo:hi]; the entries from hi to the next lo
    # are dropped.
    bounds = np.column_stack([lo, hi]).ravel()
    padded = np.append(order, 0)
    return hi - lo, np.minimum.reduceat(padded, bounds)[0::2], np.maximum.reduceat(padded, bounds)[0::2]


def ladders(instance: Instance, deadline: float | None = None) -> list[Ladder]:
    """The levels of every generalizable quasi-identifier (schema order).

    Raises
    ------
    SchemaError
        A numeric attribute without intervals.
    OutOfTime
        Past `deadline`, read before each attribute.

    >>> [(l.name, l.height) for l in ladders(fa.load("ruggieri_loan"))]
    [('purpose', 1), ('emp', 1)]
    """
    out = []
    for name in instance.schema.generalizable:
        check_deadline(deadline)
        out.append(_ladder(instance, name))
    return out


def heights(instance: Instance) -> list[int]:
    """The top level of every generalizable quasi-identifier (schema order), as
    :func:`ladders` gives them but from the schema alone: the lattice's shape without
    a pass over the rows (UCI Adult: 0.02 s CPU for the ladders).

    Raises
    ------
    SchemaError
        A numeric attribute without intervals.

    >>> heights(fa.load("ruggieri_loan"))
    [1, 1]
    """
    return [_height(instance, name) for name in instance.schema.generalizable]


def lattice_size(instance: Instance) -> int:
    """The number of lattice nodes (product of the attributes' level counts).

    >>> lattice_size(fa.load("adult"))
    4320
    """
    return math.prod(h + 1 for h in heights(instance))


# ====================================================================== grains
@dataclass
class AttributeLevels:
    """One attribute's grains (0: its values; j + 1: level j) and integer costs.

    Attributes
    ----------
    ladder : Ladder
    codes : list of numpy.ndarray
        ``codes[g][i]``: the label of value i at grain g.
    n_labels : list of int
    feeds : numpy.ndarray of bool, shape (height + 2, height + 2)
        ``feeds[f, g]``: grain f's labels lie inside grain g's and determine its cost.
    maps : dict of (int, int) -> numpy.ndarray
        For ``feeds[f, g]``: the grain-g label of each grain-f label.
    label_cost : dict of (int, int) -> numpy.ndarray
        For ``feeds[f, g]`` with g >= 1: the scaled cell cost at level g - 1 of each
        grain-f label.
    cost : list of numpy.ndarray
        ``cost[j][i]``: the scaled cell cost of value i at level j.
    star : int
        The scaled cost of a suppressed cell.
    covers : numpy.ndarray of bool, shape (height + 1, height + 1)
        ``covers[j, u]`` (levels): every level-j label lies inside a level-u label, so
        classes at u are unions of classes at j.
    penalty_order : numpy.ndarray of bool, shape (height + 1, height + 1)
        ``penalty_order[j, u]``: suppressing any value costs at least as much extra at
        level j as at level u (star minus cell cost).
    tells_nothing : list of numpy.ndarray of bool
        Per grain: which labels tell nothing (``*``, or a label over every value
        present: :func:`fairanon.instances.generalization.tells_nothing`).
    text_id : list of numpy.ndarray of int
        Per grain: a text id per label, unique within the attribute, ``*`` being 0.
    """

    ladder: Ladder
    codes: list[np.ndarray]
    n_labels: list[int]
    feeds: np.ndarray
    maps: dict
    label_cost: dict
    cost: list[np.ndarray]
    star: int
    covers: np.ndarray
    penalty_order: np.ndarray
    tells_nothing: list[np.ndarray]
    text_id: list[np.ndarray]

    @property
    def name(self) -> str:
        return self.ladder.name

    @property
    def height(self) -> int:
        return self.ladder.height

    @property
    def m(self) -> int:
        return len(self.codes[0])


@dataclass
class Space:
    """The lattice of an instance under one objective.

    Attributes
    ----------
    attributes : list of AttributeLevels
    objective : str
    scale : int
        Separable costs are integers: the true cost times `scale`.
    dtype : numpy dtype
        ``int64`` when every total fits, else ``object`` (exact Python integers).
    level_cost : list of list of int
        ``level_cost[a][j]``: the scaled cost of releasing attribute a at level j
        (every record, none suppressed).
    magnitude : int
        A bound of every scaled cost and of the sums the search forms from them.
    """

    attributes: list[AttributeLevels]
    objective: str
    scale: int
    dtype: object
    level_cost: list[list[int]]
    magnitude: int

    @property
    def d(self) -> int:
        return len(self.attributes)

    @property
    def heights(self) -> list[int]:
        return [attr.height for attr in self.attributes]

    @property
    def size(self) -> int:
        return math.prod(h + 1 for h in self.heights)

    @property
    def star_total(self) -> int:
        return sum(attr.star for attr in self.attributes)

    def separable(self, levels) -> int:
        """The scaled cost of `levels` when no record is suppressed."""
        return sum(self.level_cost[a][j] for a, j in enumerate(levels))

    def coarser(self, a: int, level: int) -> list[int]:
        """The levels above `level` of attribute a whose classes are unions of its
        classes, nearest first."""
        covers = self.attributes[a].covers
        return [u for u in range(level + 1, covers.shape[0]) if covers[level, u]]


def _per_label(codes_f: np.ndarray, values: np.ndarray, n_f: int) -> np.ndarray | None:
    """`values` (one per active value) as one per grain-f label, or None if some f
    label holds values with different ones."""
    out = np.zeros(n_f, dtype=values.dtype)
    out[codes_f] = values
    return out if np.array_equal(out[codes_f], values) else None


def _attribute(lad: Ladder, objective: str, scale: int, dtype) -> AttributeLevels:
    m = len(lad.codes[0])
    codes = [np.arange(m, dtype=np.int64)] + list(lad.codes)
    n_labels = [m] + [len(t) for t in lad.texts]
    grains = len(codes)
    if objective == "discernibility":
        cost = [np.zeros(m, dtype=np.int64) for _ in range(lad.height + 1)]
        star = 0
    else:
        cost = [
            np.array([int(c * scale) for c in level], dtype=dtype)
            for level in lad.cost[objective]
        ]
        star = int(lad.star_cost[objective] * scale)
    feeds = np.zeros((grains, grains), dtype=bool)
    maps, label_cost = {}, {}
    for f in range(grains):
        for g in range(grains):
            label_map = _per_label(codes[f], codes[g], n_labels[f])
            per_label = _per_label(codes[f], cost[g - 1], n_labels[f]) if g else None
            if label_map is None or (g and per_label is None):
                continue
            feeds[f, g] = True
            maps[f, g] = label_map
            if g:
                label_cost[f, g] = per_label
    covers = np.array(
        [
            [_per_label(codes[j], codes[u], n_labels[j]) is not None for u in range(1, grains)]
            for j in range(1, grains)
        ]
    )
    penalty = [star - c for c in cost]
    penalty_order = np.array(
        [
            [bool(np.all(penalty[j] >= penalty[u])) for u in range(grains - 1)]
            for j in range(grains - 1)
        ]
    )
    text_ids: dict[str, int] = {SUPPRESSED: 0}
    for level in lad.texts:
        for t in level:
            text_ids.setdefault(t, len(text_ids))
    text_id = [np.array([text_ids[t] for t in level], dtype=np.int64) for level in lad.texts]
    text_id.insert(0, text_id[0][lad.codes[0]])
    # Per grain, the labels that tell nothing (the stars objective's costs per value, read
    # per label): '*' or a label over every value present; grain 0, the values, none.
    empty = [np.zeros(m, dtype=bool)]
    for code, stars, n in zip(lad.codes, lad.cost["stars"], n_labels[1:]):
        per_label = np.zeros(n, dtype=bool)
        per_label[code] = [bool(c) for c in stars]
        empty.append(per_label)
    return AttributeLevels(
        lad,
        codes,
        n_labels,
        feeds,
        maps,
        label_cost,
        cost,
        star,
        covers,
        penalty_order,
        empty,
        text_id,
    )


def build_space(
    instance: Instance, lads: list[Ladder], objective: str, value_counts: list[np.ndarray],
    deadline: float | None = None,
) -> Space:
    """The lattice under `objective`; `value_counts[a][i]` is the number of records
    with active value i of attribute a. Past `deadline`, read before each attribute,
    :class:`OutOfTime`."""
    n = instance.n_rows
    if objective == "discernibility":
        scale, dtype = 1, np.int64
        magnitude = (n + 1) ** 2
    else:
        denominators = {lad.star_cost[objective].denominator for lad in lads}
        for lad in lads:
            for level in lad.cost[objective]:
                denominators.update(c.denominator for c in level)
        scale = math.lcm(*denominators) if denominators else 1
        largest = sum(int(lad.star_cost[objective] * scale) for lad in lads) + sum(
            int(max(max(level) for level in lad.cost[objective]) * scale) for lad in lads
        )
        magnitude = (n + 1) * (largest + 1)
        dtype = np.int64 if magnitude < 2**62 else object
    attributes = []
    for lad in lads:
        check_deadline(deadline)
        attributes.append(_attribute(lad, objective, scale, dtype))
    level_cost = [
        [sum(int(w) * int(c) for w, c in zip(counts, level) if w) for level in attr.cost]
        for attr, counts in zip(attributes, value_counts)
    ]
    return Space(attributes, objective, scale, dtype, level_cost, magnitude)
