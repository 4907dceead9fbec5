"""The incumbent of the large-neighbourhood search: the release as label ids per record.

A release is determined by the released vector of each record (protected value, label
per generalizable quasi-identifier), and its equivalence classes are the records that
share a vector. :class:`Incumbent` keeps the label ids of every record, the classes as
vector -> record positions, and the exact value of the objective; replacing the records
of some classes (:meth:`Incumbent.replace`) updates all three. Discernibility is
Bayardo and Agrawal's C_DM as the verifier's report computes it: n per record of a
vector that is ``*`` on every generalizable quasi-identifier, the squared size of any
other class.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import pandas as pd

from ..._arrays import unique_rows
from ...instances.instance import Instance
from ...models.objectives import PRIVACY_OBJECTIVES, Lexicographic, Objective, privacy_value
from ...models.requirements import (
    DiversityConstraint,
    LDiversity,
    Requirement,
    TCloseness,
    requirement_targets,
)
from ...release import Release
from ..local_recoding.encoding import check_deadline
from .labels import Registry

__all__ = ["Incumbent", "release_labels"]


def release_labels(
    instance: Instance, registries: list[Registry], release: Release, deadline: float | None = None
) -> np.ndarray:
    """The registry label id of every record (instance order) on every generalizable
    quasi-identifier of a release, labels met for the first time registered. Past
    `deadline` (a ``time.perf_counter`` value),
    :class:`~fairanon.solver.local_recoding.encoding.BuildStopped` between attributes."""
    table = release.table
    if not table.index.equals(instance.row_ids):
        table = table.loc[instance.row_ids]
    if not registries:
        return np.zeros((instance.n_rows, 0), dtype=np.int64)
    columns = []
    for reg in registries:
        check_deadline(deadline, f"reading the start's labels of {reg.name!r}")
        # Each distinct label parsed once (a release has far fewer labels than records).
        codes, labels = pd.factorize(table[reg.name], use_na_sentinel=False)
        columns.append(reg.parse([str(label) for label in labels])[codes])
    return np.column_stack(columns)


def _group(keys: np.ndarray) -> dict[tuple, np.ndarray]:
    """Rows of `keys` (n x w ints) grouped by their row: key tuple -> positions."""
    if not len(keys):
        return {}
    uniq, inverse = unique_rows(keys)
    order = np.argsort(inverse, kind="stable")
    bounds = np.cumsum(np.bincount(inverse, minlength=len(uniq)))[:-1]
    return {tuple(int(x) for x in row): part for row, part in zip(uniq, np.split(order, bounds))}


class Incumbent:
    """The current release of the search (see the module docstring).

    Attributes
    ----------
    labels : numpy.ndarray of int, shape (n, d)
        Registry label id of every record on every generalizable quasi-identifier.
    protected : numpy.ndarray of int
        Protected code of every record (0 without a protected attribute).
    classes : dict of tuple -> numpy.ndarray
        Released vector (protected code, label ids) -> record positions.
    uniques : int
        Classes of one record (for the sample-uniques requirement).
    value : int, Fraction, LogLoss or Lexicographic
        The exact objective.
    cells : int or Fraction
        With a privacy or lexicographic objective
        (:class:`~fairanon.models.objectives.Objective`), the per-cell cost of its loss
        term (0 without one, or when it is discernibility).
    """

    def __init__(
        self,
        instance: Instance,
        requirements: Sequence[Requirement],
        registries: list[Registry],
        labels: np.ndarray,
        objective: str,
    ):
        self.instance = instance
        self.registries = registries
        self.objective = objective
        self.labels = np.ascontiguousarray(labels, dtype=np.int64)
        prot = instance.schema.protected
        n = instance.n_rows
        self.protected = (
            instance.codes(prot).astype(np.int64) if prot else np.zeros(n, dtype=np.int64)
        )
        self.classes = _group(np.column_stack([self.protected, self.labels]))
        self.uniques = sum(len(part) == 1 for part in self.classes.values())
        self.targets = {
            name: np.unique(instance.codes(name), return_inverse=True)[1].reshape(-1)
            for req in requirements
            if isinstance(req, (LDiversity, TCloseness))
            for name in requirement_targets(instance.schema, req)
        }
        self.diversity = {
            i: req for i, req in enumerate(requirements) if isinstance(req, DiversityConstraint)
        }
        self._matches = {i: self._matching(req) for i, req in self.diversity.items()}
        self.shown = {i: int(self.showing(i, np.arange(n)).sum()) for i in self.diversity}
        self.cells = 0
        if isinstance(objective, Objective):
            self.cells = self._cells(np.arange(n), self.labels)
            self.value = self._sized(
                {vec: len(r) for vec, r in self.classes.items()}, self.cells
            )
        else:
            self.value = self.cost(np.arange(n), self.labels)

    @classmethod
    def from_release(
        cls,
        instance: Instance,
        requirements: Sequence[Requirement],
        registries: list[Registry],
        release: Release,
        objective: str,
        deadline: float | None = None,
    ) -> Incumbent:
        """The incumbent of `release`; past `deadline` (a ``time.perf_counter`` value),
        :class:`~fairanon.solver.local_recoding.encoding.BuildStopped` before each
        attribute's labels are read and before the classes are formed."""
        labels = release_labels(instance, registries, release, deadline)
        check_deadline(deadline, "forming the start's classes")
        return cls(instance, requirements, registries, labels, objective)

    # ------------------------------------------------------------------ costs
    def cost(self, rows: np.ndarray, labels: np.ndarray, objective: str | None = None):
        """The cells cost of `rows` released with `labels` under a per-cell objective
        (default: the incumbent's), or the discernibility of the whole release."""
        objective = objective or self.objective
        if objective == "discernibility":
            return sum(self._discernibility(vec, len(r)) for vec, r in self.classes.items())
        total = Fraction(0)
        for a, reg in enumerate(self.registries):
            col = labels[:, a]
            if objective == "generalized":
                total += int((col != reg.row_value[rows]).sum())
                continue
            costs = reg.cost(objective)
            ids, counts = np.unique(col, return_counts=True)
            total += sum((costs[j] * int(c) for j, c in zip(ids.tolist(), counts)), Fraction(0))
        return int(total) if total.denominator == 1 else total

    def _discernibility(self, vec: tuple, size: int) -> int:
        """A class's share of C_DM: n per record when its vector is ``*`` on every
        generalizable quasi-identifier (suppressed), else its squared size."""
        suppressed = bool(self.registries) and all(
            reg.star[j] for reg, j in zip(self.registries, vec[1:])
        )
        return self.instance.n_rows * size if suppressed else size * size

    @property
    def _per_cell(self) -> bool:
        loss = self.objective.loss
        return loss is not None and loss != "discernibility"

    def _cells(self, rows: np.ndarray, labels: np.ndarray):
        """The per-cell cost of a privacy or lexicographic objective's loss term."""
        return self.cost(rows, labels, self.objective.loss) if self._per_cell else 0

    def _sized(self, sizes: dict[tuple, int], cells):
        """A privacy or lexicographic objective's value from the class sizes (vector ->
        size) and the per-cell cost of its loss term."""
        values = []
        for term in self.objective.terms:
            if term in PRIVACY_OBJECTIVES:
                values.append(privacy_value(list(sizes.values()), term, self.objective.stretch_k))
            elif term == "discernibility":
                values.append(sum(self._discernibility(vec, s) for vec, s in sizes.items()))
            else:
                values.append(cells)
        return values[0] if len(values) == 1 else Lexicographic(values)

    def _sizes_after(self, vectors: Sequence[tuple], rows: np.ndarray, labels: np.ndarray):
        freed = set(vectors)
        sizes = {vec: len(part) for vec, part in self.classes.items() if vec not in freed}
        for vec, part in _group(np.column_stack([self.protected[rows], labels])).items():
            sizes[vec] = sizes.get(vec, 0) + len(part)
        return sizes

    # ------------------------------------------------------------------ diversity
    def _matching(self, req: DiversityConstraint) -> np.ndarray:
        """Records whose original values are the constraint's target values."""
        out = np.ones(self.instance.n_rows, dtype=bool)
        for name, value in req.target:
            col = self.instance.table[name]
            if self.instance.schema[name].kind == "numeric":
                try:
                    out &= col.to_numpy(dtype=float) == float(value)
                except ValueError:
                    out[:] = False
            else:
                out &= col.astype(str).to_numpy() == value
        return out

    def showing(self, index: int, rows: np.ndarray, labels: np.ndarray | None = None) -> np.ndarray:
        """Per record of `rows`: does it show diversity constraint `index`'s target
        values (with `labels`, default the current ones)?"""
        labels = self.labels[rows] if labels is None else labels
        out = self._matches[index][rows].copy()
        names = [reg.name for reg in self.registries]
        for name, _ in self.diversity[index].target:
            if name in names:
                a = names.index(name)
                out &= labels[:, a] == self.registries[a].row_value[rows]
        return out

    # ------------------------------------------------------------------ moves
    def value_after(self, vectors: Sequence[tuple], rows: np.ndarray, labels: np.ndarray):
        """The objective if the classes `vectors` (records `rows`) took `labels`."""
        if isinstance(self.objective, Objective):
            cells = self.cells
            if self._per_cell:
                cells = cells - self._cells(rows, self.labels[rows]) + self._cells(rows, labels)
            return self._sized(self._sizes_after(vectors, rows, labels), cells)
        if self.objective != "discernibility":
            return self.value - self.cost(rows, self.labels[rows]) + self.cost(rows, labels)
        freed = set(vectors)
        value = self.value - sum(self._discernibility(v, len(self.classes[v])) for v in freed)
        for vec, part in _group(np.column_stack([self.protected[rows], labels])).items():
            outside = len(self.classes[vec]) if vec in self.classes and vec not in freed else 0
            value += self._discernibility(vec, len(part) + outside) - self._discernibility(
                vec, outside
            )
        return value

    def replace(self, vectors: Sequence[tuple], rows: np.ndarray, labels: np.ndarray) -> None:
        """Release the records of the classes `vectors` (exactly the records at `rows`)
        with new `labels`, merging with classes of the same vector."""
        sized = isinstance(self.objective, Objective)
        if sized:
            self.value = self.value_after(vectors, rows, labels)
            if self._per_cell:
                self.cells += self._cells(rows, labels) - self._cells(rows, self.labels[rows])
        else:
            before = self.cost(rows, self.labels[rows])
        for i in self.diversity:
            self.shown[i] += int(self.showing(i, rows, labels).sum()) - int(
                self.showing(i, rows).sum()
            )
        for vec in vectors:
            self.uniques -= len(self.classes.pop(vec)) == 1
        self.labels[rows] = labels
        for vec, part in _group(np.column_stack([self.protected[rows], labels])).items():
            part = rows[part]
            if vec in self.classes:
                self.uniques -= len(self.classes[vec]) == 1
                part = np.sort(np.concatenate([self.classes[vec], part]))
            self.uniques += len(part) == 1
            self.classes[vec] = part
        if sized:
            return
        if self.objective == "discernibility":
            self.value = self.cost(rows, labels)
        else:
            self.value = self.value - before + self.cost(rows, labels)
        self.value = int(self.value) if Fraction(self.value).denominator == 1 else self.value

    def tight_vector(self, vec: tuple) -> tuple:
        """The class `vec` with each label narrowed to its tight summary where that costs
        less: per attribute, the cheapest label covering the values its records hold --
        the value itself, else the lowest hierarchy node above them all (categorical
        attributes) or the range from the least to the greatest (ordered and numeric
        ones), ``*`` when that covers every value present -- unless the class's label
        costs its records no more (NCP and LM grow with the values a label covers, but a
        hierarchy node of an ordered attribute is no range)."""
        rows = self.classes[vec]
        out = [vec[0]]
        for reg, label in zip(self.registries, vec[1:]):
            values = reg.row_value[rows]
            present = np.unique(values)
            lo, hi = int(present[0]), int(present[-1])
            if lo == hi:
                tight = lo
            elif reg.attr.kind != "categorical":
                tight = reg.range_label(lo, hi)
            elif reg.attr.hierarchy is None:
                tight = reg.star_label()
            else:
                above = [j for j in reg.ancestors(lo) if reg.masks[j][present].all()]
                tight = above[0] if above else reg.star_label()
            if tight != label and self._label_cost(reg, tight, values) < self._label_cost(
                reg, label, values
            ):
                label = tight
            out.append(label)
        return tuple(out)

    def _label_cost(self, reg: Registry, label: int, values: np.ndarray) -> int | Fraction:
        """What releasing the active `values` of `reg` all as `label` costs under the
        objective, in bulk: the cells that differ from their value ("generalized"), else
        as many times the label's cell cost (the same for every value it covers)."""
        if self.objective == "generalized":
            return int(np.count_nonzero(values != label))
        return len(values) * reg.cell_cost(self.objective, label, int(values[0]))

    def tighten(self, vectors: Sequence[tuple] | None = None, deadline: float | None = None) -> int:
        """Release each class of `vectors` (default: all, in the order given) as
        :meth:`tight_vector` when no other class holds that vector already -- the first
        class to reach a vector keeps it: the classes stay the same records and only
        their labels narrow, so a requirement on the classes alone (k-anonymity,
        l-diversity, t-closeness, the class-size risks) holds as before, and the
        objective drops. For the per-cell objectives "ncp", "lm", "stars" and
        "generalized" (else nothing changes), and requirements that do not read the
        labels -- not diversity constraints or alpha-protection, which the caller
        ensures. Stops before the next class once `deadline` (a ``time.perf_counter``
        value) has passed. Returns the classes narrowed."""
        if self.objective not in ("ncp", "lm", "stars", "generalized"):
            return 0
        taken = set(self.classes)
        changed = 0
        for vec in list(self.classes if vectors is None else vectors):
            if deadline is not None and time.perf_counter() >= deadline:
                break
            if vec not in self.classes:
                continue
            tight = self.tight_vector(vec)
            if tight == vec or tight in taken:
                continue
            rows = self.classes[vec]
            labels = np.tile(np.array(tight[1:], dtype=np.int64), (len(rows), 1))
            self.replace([vec], rows, labels)
            taken.add(tight)
            changed += 1
        return changed

    # ------------------------------------------------------------------ release
    def table(self) -> pd.DataFrame:
        """The released table: labels as text, other released columns unchanged."""
        instance = self.instance
        out = {}
        names = {reg.name: a for a, reg in enumerate(self.registries)}
        for name in instance.table.columns:
            if not instance.schema[name].released:
                continue
            if name in names:
                reg = self.registries[names[name]]
                used, inv = np.unique(self.labels[:, names[name]], return_inverse=True)
                out[name] = pd.Categorical.from_codes(
                    inv.reshape(-1), [reg.texts[j] for j in used.tolist()]
                )
            else:
                out[name] = instance.table[name]
        return pd.DataFrame(out, index=instance.table.index)

    def groups(self) -> np.ndarray:
        """A class id per record (classes numbered by first record)."""
        out = np.empty(self.instance.n_rows, dtype=np.int64)
        for g, part in enumerate(sorted(self.classes.values(), key=lambda r: int(r[0]))):
            out[part] = g
        return out
