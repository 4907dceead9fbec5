"""Generalization hierarchies: categorical trees and numeric interval ladders.

A :class:`Hierarchy` is a rooted tree of string labels whose leaves are the domain
values of one categorical attribute. A released cell holds a node label (a leaf is an
ungeneralized value, an inner node a generalization, the root or ``*`` a suppression).
Trees come from a nested mapping (YAML/JSON), from an ARX-style CSV (one row per leaf,
one column per level, ``;``-separated) or are flat (``*`` above every value).

Full-domain generalization releases every value at one *level*. A tree alone does not
say at which level a shallow leaf's ancestors stand: ARX reads a CSV row
``80;>=80;>=80;*`` as "80 is ``>=80`` on levels 1 and 2", so a hierarchy keeps each
leaf's row (:meth:`Hierarchy.generalize`, :meth:`Hierarchy.to_levels`). A tree given
without rows (a mapping, :meth:`Hierarchy.flat`) climbs one node per level and stays at
the root once there.

An :class:`IntervalHierarchy` gives numeric attributes a ladder of fixed-width
intervals for full-domain generalization; local-recoding methods instead release the
tight ``[lo-hi]`` range of each group.
"""

from __future__ import annotations

import csv
import io
import math
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..exceptions import SchemaError
from .files import formula_readings, note_input
from .texts import value_text

__all__ = ["Hierarchy", "IntervalHierarchy", "SUPPRESSED"]

#: The label of a fully suppressed cell, accepted for every attribute.
SUPPRESSED = "*"


class Hierarchy:
    """A generalization tree over the values of a categorical attribute.

    Parameters
    ----------
    parent : mapping of str to str or None
        Each node label to its parent label; exactly one node (the root) maps to None.
    leaf_order : sequence of str, optional
        The order of the leaves (domain values); default: depth-first order of insertion.
    levels : mapping of str to sequence of str, optional
        Each leaf's label at every level, ARX's row ``[leaf, level 1, ..., top]``: a
        label may repeat on consecutive levels (a node kept one level up), and the
        labels of a row, repeats dropped, must be the leaf's path to the root. All rows
        have the same length. Default: the path to the root, the root repeated at the
        end so that every row is as long as the deepest leaf's.

    Notes
    -----
    Labels are unique in a tree, so a released label names exactly one node. The root
    may carry any label; ``*`` always names the root as well.

    Examples
    --------
    >>> h = Hierarchy.from_mapping({"*": {"Married": ["CF-Spouse", "Spouse Present"],
    ...                                   "Not Married": ["Divorced", "Separated"]}})
    >>> h.leaves
    ('CF-Spouse', 'Spouse Present', 'Divorced', 'Separated')
    >>> h.covers("Married", "CF-Spouse"), h.covers("Married", "Divorced")
    (True, False)
    >>> h.height, h.lca(["CF-Spouse", "Divorced"])
    (2, '*')
    """

    def __init__(self, parent: Mapping[str, str | None], leaf_order: Sequence[str] | None = None,
                 levels: Mapping[str, Sequence[str]] | None = None):
        self.parent: dict[str, str | None] = {value_text(k): (None if v is None else value_text(v))
                                              for k, v in parent.items()}
        roots = [n for n, p in self.parent.items() if p is None]
        if len(roots) != 1:
            raise SchemaError(f"A hierarchy needs exactly one root; found {len(roots)}: {roots[:5]}.")
        self.root: str = roots[0]
        self.children: dict[str, list[str]] = {n: [] for n in self.parent}
        for node, par in self.parent.items():
            if par is not None:
                if par not in self.children:
                    raise SchemaError(f"Hierarchy node {node!r} has an unknown parent {par!r}.")
                self.children[par].append(node)
        self.depth: dict[str, int] = {self.root: 0}
        order: list[str] = []
        stack = [self.root]
        while stack:  # depth-first, children in insertion order
            node = stack.pop()
            order.append(node)
            for child in reversed(self.children[node]):
                self.depth[child] = self.depth[node] + 1
                stack.append(child)
        if len(order) != len(self.parent):
            raise SchemaError("A hierarchy must be a tree: some nodes are not reachable from the root.")
        dfs_leaves = [n for n in order if not self.children[n]]
        if leaf_order is None:
            leaf_order = dfs_leaves
        leaf_order = tuple(value_text(v) for v in leaf_order)
        if sorted(leaf_order) != sorted(dfs_leaves):
            raise SchemaError("The leaf order of a hierarchy must list each leaf exactly once.")
        self.leaves: tuple[str, ...] = leaf_order
        self.leaf_index: dict[str, int] = {v: i for i, v in enumerate(self.leaves)}
        self.height: int = max(self.depth[leaf] for leaf in self.leaves)
        # Leaf sets of every node as ranges: in depth-first order the leaves under a node
        # are consecutive, so node i covers the leaves at depth-first positions
        # _first[i] <= p < _end[i]. A node-by-leaf table would take nodes x leaves bytes
        # (84 GiB for a flat tree of 300,000 values); the ranges take O(nodes + leaves).
        self._node_index = {n: i for i, n in enumerate(order)}
        self._nodes = order
        is_leaf = np.array([not self.children[n] for n in order], dtype=np.int64)
        self._first = np.cumsum(is_leaf) - is_leaf
        under = is_leaf.copy()
        for i in range(len(order) - 1, 0, -1):  # children follow their parent in `order`
            under[self._node_index[self.parent[order[i]]]] += under[i]
        self._end = self._first + under
        # Leaf-order index of the leaf at each depth-first position, and its inverse.
        self._leaf_at = np.array([self.leaf_index[v] for v in dfs_leaves], dtype=np.int64)
        self._position = np.empty(len(self.leaves), dtype=np.int64)
        self._position[self._leaf_at] = np.arange(len(self.leaves), dtype=np.int64)
        self._levels: dict[str, tuple[str, ...]] = self._level_rows(levels)
        self._arrays: NodeArrays | None = None  # node_arrays(), made on first use

    def _level_rows(self, levels: Mapping[str, Sequence[str]] | None) -> dict[str, tuple[str, ...]]:
        """Each leaf's row of labels per level (see the `levels` parameter), checked."""
        if levels is None:
            paths = {leaf: self.ancestors(leaf) for leaf in self.leaves}
            return {leaf: tuple(path + [self.root] * (self.height + 1 - len(path))) for leaf, path in paths.items()}
        rows = {value_text(leaf): tuple(value_text(label) for label in row)
                for leaf, row in levels.items()}
        if sorted(rows) != sorted(self.leaves):
            raise SchemaError("The level rows of a hierarchy must give exactly one row per leaf.")
        if len({len(row) for row in rows.values()}) != 1:
            raise SchemaError("The level rows of a hierarchy must all have one label per level (the same length).")
        for leaf, row in rows.items():
            path = [label for i, label in enumerate(row) if i == 0 or label != row[i - 1]]
            if path != self.ancestors(leaf):
                raise SchemaError(f"The level row {list(row)} of leaf {leaf!r} is not its path to the root "
                                  f"{self.ancestors(leaf)} (with labels repeated on consecutive levels).")
        return rows

    # ------------------------------------------------------------------ builders
    @classmethod
    def from_mapping(cls, mapping: Mapping) -> "Hierarchy":
        """Build a tree from a nested mapping ``{node: {child: ...} | [leaf, ...]}``.

        A mapping with several top-level keys gets a ``*`` root above them.
        """
        if not isinstance(mapping, Mapping) or not mapping:
            raise SchemaError(f"A hierarchy mapping must be a non-empty mapping; got {mapping!r}.")
        parent: dict[str, str | None] = {}
        leaves: list[str] = []

        def add(node, par):
            node = value_text(node)
            if node in parent:
                raise SchemaError(f"Hierarchy label {node!r} occurs twice; labels must be unique.")
            parent[node] = par

        def walk(sub, par):
            if isinstance(sub, Mapping):
                for key, val in sub.items():
                    add(key, par)
                    walk(val, value_text(key))
            elif isinstance(sub, (list, tuple)):
                for item in sub:
                    if isinstance(item, Mapping):
                        walk(item, par)
                    else:
                        add(item, par)
                        leaves.append(value_text(item))
            elif sub is None:
                leaves.append(par)
            else:
                add(sub, par)
                leaves.append(value_text(sub))

        if len(mapping) == 1:
            walk(mapping, None)
        else:
            add(SUPPRESSED, None)
            walk(mapping, SUPPRESSED)
        return cls(parent)

    @classmethod
    def from_levels(cls, rows: Iterable[Sequence[str]], *, what: str = "The hierarchy") -> "Hierarchy":
        """Build a tree from rows ``[leaf, level1, ..., top]`` (ARX's layout).

        Repeated labels on consecutive levels of a row are one node, and the rows are kept
        as the levels (:meth:`generalize`): ``80;>=80;>=80;*`` releases 80 as ``>=80`` on
        levels 1 and 2. Several distinct top labels get a ``*`` root above them (one more
        level). Blank rows and blank
        cells at the end of a row are skipped; every other row has one cell per level,
        the same number in every row (a ragged table, with a row shorter than the others
        or an empty cell before its last level, is refused naming the row: its levels
        would not line up). `what` names the rows in messages (e.g. the file).
        """
        parent: dict[str, str | None] = {}
        leaves: dict[str, None] = {}  # in row order; a dict so the check for a repeated leaf is O(1)
        rows = _level_rows(rows, what)
        if not rows:
            raise SchemaError("A hierarchy needs at least one row.")
        if len({r[-1] for r in rows}) > 1:
            rows = [row + [SUPPRESSED] for row in rows]
        for row in rows:
            chain = [row[0]]
            for label in row[1:]:
                if label != chain[-1]:
                    chain.append(label)
            if chain[0] in leaves:
                raise SchemaError(f"Leaf {chain[0]!r} occurs in more than one hierarchy row.")
            leaves[chain[0]] = None
            for child, par in zip(chain, chain[1:] + [None]):
                old = parent.get(child, "<unset>")
                if old != "<unset>" and old != par:
                    raise SchemaError(
                        f"Hierarchy label {child!r} has two parents ({old!r} and {par!r})."
                    )
                parent[child] = par
        return cls(parent, leaf_order=list(leaves), levels={row[0]: row for row in rows})

    @classmethod
    def from_arx_csv(cls, source: str | os.PathLike | bytes | io.IOBase, sep: str = ";", *,
                     name: str | None = None, neutralized: bool | None = None) -> "Hierarchy":
        """Read an ARX hierarchy CSV: one row per leaf, one column per level.

        Parameters
        ----------
        source : path, bytes, or text or binary stream
            The file, its content, or an open file.
        sep : str, default=";"
            The separator, one character.
        name : str, optional
            How messages name the file (e.g. an uploaded file's name); default: the path.
        neutralized : bool, optional
            Whether cells a spreadsheet would run as formulas were written with a ``'``
            in front (as :func:`~fairanon.instances.builders.to_arx_csv` writes them),
            to be removed. Default: yes, unless a cell holds such a formula without the
            ``'`` (the file was then written as it is), as
            :func:`~fairanon.instances.files.formula_readings` reads a release. A label
            that itself starts with ``'`` and a formula character is read without the
            ``'`` then: give ``neutralized=False`` to keep it.

        A UTF-8 byte-order mark is skipped; a file that is not UTF-8 or not CSV is
        refused naming it. A file whose every row is one field holding the same number of
        another separator (``,``, tab) is refused with a hint: it is almost surely
        written with that separator.
        """
        if not isinstance(sep, str) or len(sep) != 1:
            raise SchemaError(f"The separator of a hierarchy file must be one character. Got {sep!r} instead.")
        if isinstance(source, (str, os.PathLike)):
            name = repr(os.fspath(source)) if name is None else repr(name)
            if not os.path.isfile(source):
                raise SchemaError(
                    f"Hierarchy file {name} {'is a folder' if os.path.isdir(source) else 'does not exist'}.")
            note_input(source)
            with open(source, "rb") as fh:
                content = fh.read()
        else:
            content = source if isinstance(source, (bytes, bytearray)) else source.read()
            name = "stream" if name is None else repr(name)
        what = "The hierarchy stream" if name == "stream" else f"Hierarchy file {name}"
        try:
            text = content.decode("utf-8-sig") if isinstance(content, (bytes, bytearray)) else content.lstrip("\ufeff")
            rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=sep))
        except UnicodeDecodeError as exc:
            raise SchemaError(f"{what} is not UTF-8 text ({exc.reason}).") from None
        except csv.Error as exc:
            raise SchemaError(f"{what} is not a valid CSV file: {exc}.") from None
        _check_separator(rows, sep, what)
        return cls.from_levels(_restored_rows(rows, neutralized), what=what)

    @classmethod
    def flat(cls, values: Iterable) -> "Hierarchy":
        """A two-level tree: ``*`` above every value (in the given order)."""
        values = [value_text(v) for v in values]
        if SUPPRESSED in values:
            raise SchemaError("The value '*' is reserved for suppression.")
        parent: dict[str, str | None] = {SUPPRESSED: None}
        parent.update({v: SUPPRESSED for v in values})
        return cls(parent, leaf_order=values)

    # ------------------------------------------------------------------ queries
    @property
    def nodes(self) -> tuple[str, ...]:
        return tuple(self._nodes)

    def node(self, label: str) -> str:
        """The node a released label names (``*`` is the root)."""
        if label == SUPPRESSED:
            return self.root
        if label not in self.parent:
            raise KeyError(label)
        return label

    def __contains__(self, label: object) -> bool:
        return label == SUPPRESSED or label in self.parent

    def leaf_mask(self, label: str) -> np.ndarray:
        """Boolean mask over :attr:`leaves` of the leaves under `label` (a new array)."""
        i = self._node_index[self.node(label)]
        mask = np.zeros(len(self.leaves), dtype=bool)
        mask[self._leaf_at[self._first[i] : self._end[i]]] = True
        return mask

    def leaf_count(self, label: str) -> int:
        """The number of leaves under `label` (``leaf_mask(label).sum()``, without the mask)."""
        i = self._node_index[self.node(label)]
        return int(self._end[i] - self._first[i])

    def leaf_range(self, label: str) -> tuple[int, int]:
        """The depth-first positions ``first <= p < end`` of the leaves under `label`
        (:attr:`depth_first_leaves` names the leaf at each position)."""
        i = self._node_index[self.node(label)]
        return int(self._first[i]), int(self._end[i])

    @property
    def depth_first_leaves(self) -> np.ndarray:
        """Index into :attr:`leaves` of the leaf at each depth-first position (read-only)."""
        view = self._leaf_at.view()
        view.flags.writeable = False
        return view

    @property
    def leaf_positions(self) -> np.ndarray:
        """Depth-first position of each leaf of :attr:`leaves` (read-only)."""
        view = self._position.view()
        view.flags.writeable = False
        return view

    def node_arrays(self) -> NodeArrays:
        """Every node's leaf range, parent and depth as arrays, for passes over all the
        nodes without a Python call per node (:meth:`leaf_range` over 111,111 nodes took
        0.2 s CPU); made on first use and kept.

        >>> a = Hierarchy.from_mapping({"*": {"A": ["a1", "a2"], "b": None}}).node_arrays()
        >>> a.first.tolist(), a.end.tolist(), a.parent.tolist(), a.depth.tolist(), a.leaf_node.tolist()
        ([0, 0, 0, 1, 2], [3, 2, 1, 2, 3], [-1, 0, 1, 1, 0], [0, 1, 2, 2, 1], [2, 3, 4])
        >>> a.height.tolist()
        [2, 1, 0, 0, 0]
        """
        if self._arrays is None:
            index = self._node_index
            n = len(self._nodes)
            parent = np.fromiter((-1 if self.parent[v] is None else index[self.parent[v]] for v in self._nodes),
                                 dtype=np.int64, count=n)
            depth = np.fromiter((self.depth[v] for v in self._nodes), dtype=np.int64, count=n)
            leaf_node = np.fromiter((index[v] for v in self.leaves), dtype=np.int64, count=len(self.leaves))
            # Each node's height from its children's, the deepest nodes first.
            height = np.zeros(n, dtype=np.int64)
            by_depth = np.argsort(depth, kind="stable")
            bounds = np.searchsorted(depth[by_depth], np.arange(int(depth.max(initial=0)) + 2))
            for d in range(int(depth.max(initial=0)), 0, -1):
                at_d = by_depth[bounds[d] : bounds[d + 1]]
                np.maximum.at(height, parent[at_d], height[at_d] + 1)
            arrays = [self._first.copy(), self._end.copy(), parent, depth, leaf_node, height]
            for a in arrays:
                a.flags.writeable = False
            self._arrays = NodeArrays(*arrays)
        return self._arrays

    def covers(self, label: str, value: str) -> bool:
        """Whether the node `label` generalizes the leaf `value`."""
        i = self._node_index[self.node(label)]
        return bool(self._first[i] <= self._position[self.leaf_index[value]] < self._end[i])

    def ancestors(self, label: str) -> list[str]:
        """`label` and every ancestor up to the root."""
        out, node = [], self.node(label)
        while node is not None:
            out.append(node)
            node = self.parent[node]
        return out

    def lca(self, labels: Iterable[str]) -> str:
        """The lowest common ancestor of the given nodes."""
        labels = list(labels)
        common = self.ancestors(labels[0])
        for lab in labels[1:]:
            anc = set(self.ancestors(lab))
            common = [n for n in common if n in anc]
        return common[0]

    @property
    def n_levels(self) -> int:
        """The number of generalization levels above the values (the top one at least
        the tree's :attr:`height`): a CSV row holds ``n_levels + 1`` labels."""
        return len(next(iter(self._levels.values()))) - 1

    def generalize(self, value: str, level: int) -> str:
        """Leaf `value`'s label at `level` (0: the value itself; from :attr:`n_levels`
        on, the root), as column `level` of its ARX row reads.

        >>> h = Hierarchy.from_levels([["80", ">=80", ">=80", "*"], ["23", "[20-25)", "[20-30)", "*"]])
        >>> [h.generalize("80", j) for j in range(4)]
        ['80', '>=80', '>=80', '*']
        """
        row = self._levels[value]
        return row[min(level, len(row) - 1)]

    def restricted_to(self, values: Iterable[str]) -> "Hierarchy":
        """The subtree spanned by `values` (nodes with no such leaf below them are cut)."""
        keep = set()
        for v in values:
            keep.update(self.ancestors(v))
        parent = {n: p for n, p in self.parent.items() if n in keep}
        leaves = [v for v in self.leaves if v in keep]
        return Hierarchy(parent, leaf_order=leaves, levels={v: self._levels[v] for v in leaves})

    def to_levels(self) -> list[list[str]]:
        """ARX's layout of the tree, what :meth:`from_levels` reads back: per leaf (in
        leaf order) its label at every level (:meth:`generalize`), one cell per level.

        >>> Hierarchy.from_mapping({"*": {"A": ["a1", "a2"], "b": None}}).to_levels()
        [['a1', 'A', '*'], ['a2', 'A', '*'], ['b', '*', '*']]
        """
        return [list(self._levels[leaf]) for leaf in self.leaves]

    def to_mapping(self) -> dict:
        """The nested-mapping form accepted by :meth:`from_mapping`."""

        def sub(node):
            kids = self.children[node]
            if all(not self.children[k] for k in kids):
                return list(kids)
            return {k: (sub(k) if self.children[k] else None) for k in kids}

        return {self.root: sub(self.root)}

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Hierarchy) and self.parent == other.parent and self.leaves == other.leaves
                and self._levels == other._levels)

    def __reduce__(self):
        # Pickled as the tree itself: the leaf ranges of the nodes are rebuilt in
        # milliseconds, and every task that ships a schema to a Dask worker would
        # otherwise carry them.
        return type(self), (self.parent, self.leaves, self._levels)

    def __hash__(self) -> int:
        return hash((self.root, self.leaves))

    def __repr__(self) -> str:
        return f"Hierarchy(root={self.root!r}, leaves={len(self.leaves)}, height={self.height})"


class NodeArrays(NamedTuple):
    """A hierarchy's nodes as read-only int64 arrays, indexed by position in
    :attr:`Hierarchy.nodes` (depth-first, each parent before its children):
    ``first``, ``end``: the depth-first positions ``first <= p < end`` of the leaves under
    each node (:meth:`Hierarchy.leaf_range`); ``parent``: its parent's position (-1 for
    the root); ``depth``: its depth (0 for the root); ``leaf_node``: the position of
    each leaf of :attr:`Hierarchy.leaves`, in that order; and ``height``: the edges
    on its longest path down to a leaf (0 for a leaf, :attr:`Hierarchy.height` for the
    root)."""

    first: np.ndarray
    end: np.ndarray
    parent: np.ndarray
    depth: np.ndarray
    leaf_node: np.ndarray
    height: np.ndarray


def _level_rows(rows: Iterable[Sequence[str]], what: str) -> list[list[str]]:
    """The stripped cells of the non-blank rows, blank cells at a row's end dropped;
    SchemaError naming the row when the rows do not have one cell per level each."""
    out: list[list[str]] = []
    first: tuple[int, list[str]] | None = None
    for number, row in enumerate(rows, 1):
        cells = [str(c).strip() for c in row]
        while cells and cells[-1] == "":
            cells.pop()
        if not cells:
            continue
        if "" in cells:
            level = cells.index("")
            raise SchemaError(
                f"{what} is ragged (a level missing): row {number} {_row_text(cells)} has an empty cell at "
                f"{'its leaf' if level == 0 else f'level {level}'} before its last level. Every row "
                "holds a leaf and then one label per level, up to the top; to keep a value unchanged "
                "one level up, repeat it (e.g. 'Private;Private;*')."
            )
        if first is None:
            first = (number, cells)
        elif len(cells) != len(first[1]):
            raise SchemaError(
                f"{what} is ragged (rows of different lengths): row {number} {_row_text(cells)} has "
                f"{len(cells)} cells where row {first[0]} {_row_text(first[1])} has {len(first[1])}. Every row holds a leaf and "
                "then one label per level, the same number of levels in every row; to keep a value "
                "unchanged one level up, repeat it (e.g. 'Private;Private;*')."
            )
        out.append(cells)
    return out


def _row_text(cells: list[str]) -> str:
    shown = repr(cells)
    return shown if len(shown) <= 80 else shown[:76] + "...]"


def _restored_rows(rows: list[list[str]], neutralized: bool | None) -> list[list[str]]:
    """The cells as they were before :func:`~fairanon.instances.files.neutralize_formulas`
    (see :meth:`Hierarchy.from_arx_csv`). A short row is padded with blank cells, which
    :meth:`Hierarchy.from_levels` skips at a row's end as it does in the file."""
    if not rows:
        return rows
    width = max(len(row) for row in rows)
    frame = pd.DataFrame([row + [""] * (width - len(row)) for row in rows], dtype=object)
    return formula_readings(frame, neutralized)[0].to_numpy().tolist()


def _check_separator(rows: list[list[str]], sep: str, what: str) -> None:
    """Refuse a hierarchy read with the wrong separator (see Hierarchy.from_arx_csv)."""
    cells = [row[0] for row in rows if len(row) == 1 and row[0].strip()]
    if not cells or len(cells) != sum(1 for row in rows if any(c.strip() for c in row)):
        return
    for other in (",", "\t", ";"):
        if other != sep and len({cell.count(other) for cell in cells}) == 1 and other in cells[0]:
            shown = {"\t": "tab"}.get(other, other)
            raise SchemaError(
                f"{what} looks {shown!r}-separated (every row is one field holding "
                f"{cells[0].count(other)} {shown!r}), but is read with {sep!r}: ARX hierarchies are "
                f"';'-separated. Replace the separators, or give hierarchy_sep: {other!r} in the schema "
                f"(Hierarchy.from_arx_csv(path, sep={other!r}) in Python)."
            )


def _fmt(x: float) -> str:
    x = float(x)
    return str(int(x)) if x.is_integer() else repr(x)


@dataclass(frozen=True)
class IntervalHierarchy:
    """A ladder of fixed-width intervals for a numeric attribute.

    Level 0 is the exact value; level i (1-based) releases the half-open interval
    ``[lo-hi)`` of width ``widths[i-1]`` aligned on `origin`; the level after the last
    width is ``*``.

    >>> IntervalHierarchy(widths=(5, 10)).generalize([23, 37], 1)
    ['[20-25)', '[35-40)']
    """

    widths: tuple[float, ...]
    origin: float = 0.0
    labels: tuple = field(default=(), compare=False)

    def __post_init__(self):
        try:
            widths = tuple(float(w) for w in self.widths)
            origin = float(self.origin)
        except (TypeError, ValueError):
            raise SchemaError(
                f"Interval widths and origin must be numbers; got widths={self.widths!r}, "
                f"origin={self.origin!r}."
            ) from None
        if (not widths or not all(0 < w < math.inf for w in widths)
                or list(widths) != sorted(widths)):
            raise SchemaError(
                "Interval widths must be positive and non-decreasing finite numbers; "
                f"got {self.widths!r}."
            )
        if not math.isfinite(origin):
            raise SchemaError(
                f"The intervals' origin must be a finite number; got {self.origin!r}."
            )
        object.__setattr__(self, "widths", widths)
        object.__setattr__(self, "origin", origin)

    @property
    def height(self) -> int:
        return len(self.widths) + 1

    def generalize(self, values: Sequence[float], level: int) -> list[str]:
        if level <= 0:
            return [_fmt(v) for v in values]
        if level > len(self.widths):
            return [SUPPRESSED] * len(values)
        w = self.widths[level - 1]
        lo = [self.origin + math.floor((float(v) - self.origin) / w) * w for v in values]
        return [f"[{_fmt(a)}-{_fmt(a + w)})" for a in lo]
