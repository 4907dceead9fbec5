"""Mondrian that cuts where the least information is lost: top-down partitioning whose
cut of each partition is, among Mondrian's allowable cuts on every attribute, the one
whose children lose least under the objective.

Mondrian (LeFevre, DeWitt, Ramakrishnan, ICDE 2006; :mod:`fairanon.heuristics.mondrian`)
cuts the attribute with the widest normalized range, which ignores what the release
will lose: a flat hierarchy (race, sex) counts as wide as the full range of age, and
the classes that end up mixing its values lose a whole cell per record. Here every
candidate cut of a partition -- the relaxed median cut of each numeric and ordered
attribute, the split into the children of the current hierarchy node of each
categorical one -- is scored by the loss of its children's tight summaries (per
record and attribute, the NCP or LM cell loss of the range or lowest common ancestor),
and the cheapest is taken: the greedy specialization of top-down specialization (Fung,
Wang, Yu, ICDE 2005) with the loss as score, on Mondrian's multidimensional cuts.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from .._validation import check_option, check_random_state
from ..exceptions import InvalidParameterError
from ..instances.instance import Instance
from ..models.requirements import Requirement, validate_requirements
from ..release import Release, Status, generalize_partition, provenance
from . import topdown as E
from .mondrian import _reject_non_monotone, mondrian_columns
from .risksearch import smallest_k, split_risk

__all__ = ["LOSSES", "mondrian_loss"]

#: The cell losses a cut can be scored by.
LOSSES = ("ncp", "lm")
#: Seconds per cell (record x generalizable attribute) a part's cut is expected to take
#: before one has been timed: the root of UCI Adult (30,162 records x 7 generalizable
#: attributes, the cells counted below) took 0.016 s CPU, 7.6e-8 a cell; the longest per
#: cell timed so far is used after.
CUT_SECONDS_PER_CELL = 1e-7
#: Cells a part counts as at least in that estimate: a cut's fixed cost (0.1-0.4 ms CPU
#: for parts of under 100 records on Adult).
CUT_MIN_CELLS = 8000


class _Scorer:
    """The loss of a partition's tight summary, from the coded columns."""

    def __init__(self, instance: Instance, loss: str):
        cols = mondrian_columns(instance)
        self.loss = loss
        self.columns = []
        for kind, j in cols.attrs:
            self.columns.append((kind, cols.ranked[j] if kind == "r" else cols.hier[j]))
        names = instance.schema.generalizable
        self.numeric = [instance.schema[name].kind == "numeric" for name in names]

    def _cell(self, more: float, total: float) -> float:
        """The cell loss of a label covering `more` + 1 of `total` + 1 values."""
        if self.loss == "lm" or more == 0:
            return more / total
        return (more + 1) / (total + 1)

    def lca(self, h: E.HierarchyColumn, codes: np.ndarray) -> int:
        """The lowest hierarchy node above every code."""
        for d in range(h.anc.shape[0] - 1, 0, -1):
            a = h.anc[d, codes]
            if a.min() == a.max():
                return int(a[0])
        return int(h.anc[0, 0])

    def attribute(self, a: int, rows: np.ndarray) -> float:
        kind, col = self.columns[a]
        if kind == "r":
            x = col.ranks[rows]
            width = float(col.values[x.max()] - col.values[x.min()])
            span = col.span or 1.0
            return width / span if self.numeric[a] else self._cell(width, span)
        node = self.lca(col, col.codes[rows])
        return self._cell(float(col.n_leaves_under[node] - 1), float(max(col.n_leaves - 1, 1)))

    def __call__(self, rows: np.ndarray) -> float:
        return len(rows) * sum(self.attribute(a, rows) for a in range(len(self.columns)))


def _candidate_cuts(scorer: _Scorer, checks: E.Checks, rows: np.ndarray):
    """Every allowable cut of the partition `rows`, as a list of children."""

    def passing(parts: list[np.ndarray]) -> np.ndarray:
        sizes = np.array([len(p) for p in parts])
        counts = {
            name: np.array([np.bincount(t.codes[p], minlength=t.m) for p in parts])
            for name, t in checks.targets.items()
        }
        return checks.passing(sizes, counts)

    out = []
    for kind, col in scorer.columns:
        if kind == "r":
            x = col.ranks[rows]
            half = len(rows) // 2
            if x.min() == x.max() or half < checks.min_size:
                continue
            # The relaxed median cut: records equal to the median go left, in row
            # order, until the left child holds half the records.
            order = np.argsort(x, kind="stable")
            parts = [rows[order[:half]], rows[order[half:]]]
            if passing(parts).all():
                out.append(parts)
            continue
        codes = col.codes[rows]
        node = scorer.lca(col, codes)
        if col.is_leaf[node]:
            continue
        child = col.anc[col.depth[node] + 1, codes]
        present, inverse = np.unique(child, return_inverse=True)
        if len(present) < 2:
            continue
        parts = [rows[inverse == i] for i in range(len(present))]
        ok = passing(parts)
        kept = [p for p, good in zip(parts, ok) if good]
        rest = [p for p, good in zip(parts, ok) if not good]
        if rest:
            pool = np.sort(np.concatenate(rest))
            if passing([pool])[0]:
                kept.append(pool)
            elif kept:
                # Joined to the largest child, when that still passes (a requirement
                # such as entropy l-diversity can fail on the union).
                big = int(np.argmax([len(p) for p in kept]))
                joined = np.sort(np.concatenate([kept[big], pool]))
                if not passing([joined])[0]:
                    continue
                kept[big] = joined
        if len(kept) >= 2:
            out.append(kept)
    return out


def _failures(checks: E.Checks, parts: Sequence[np.ndarray]) -> list[str]:
    """The requirements some of the given record sets (one class each) violate."""
    sizes = np.array([len(p) for p in parts])
    counts = {
        name: np.vstack([np.bincount(t.codes[p], minlength=t.m) for p in parts])
        for name, t in checks.targets.items()
    }
    return checks.failures(sizes, counts)


def mondrian_loss(
    instance: Instance,
    requirements: Sequence[Requirement],
    *,
    objective: str = "ncp",
    seed=None,
    time_limit: float | None = None,
) -> Release:
    """Top-down partitioning with the least-loss cut (see the module docstring).

    Parameters
    ----------
    instance : Instance
        Only role "qi" attributes are generalized; the protected attribute is released
        unchanged, so the root is first split by its values.
    requirements : sequence of Requirement
        KAnonymity, LDiversity and TCloseness, checked on every child of every cut;
        each must be union-monotone (as in :func:`~fairanon.heuristics.mondrian.mondrian`).
    objective : {"ncp", "lm"}, default="ncp"
        The cell loss the cuts are scored by: NCP (a label covering u > 1 of m values
        loses u / m, a numeric range its width over the table's) or LM ((u - 1) / (m - 1)).
    seed : None, int or numpy.random.Generator
        Recorded only: nothing is random (ties go to the lowest attribute index).
    time_limit : float, optional
        Seconds, the release's build included: no partition is cut whose cut, at the
        longest time per cell so far (:data:`CUT_SECONDS_PER_CELL` before one is
        timed), would end past the limit less the build's expected time
        (:data:`~fairanon.heuristics.topdown.RELEASE_SECONDS_PER_CELL` a cell); the
        partitions not yet cut then become classes as they are (the release stays
        valid) and ``provenance["time_limit_reached"]`` is True.

    Returns
    -------
    Release
        FEASIBLE; INFEASIBLE with a ``reason`` when the whole table or the records of
        one protected value violate a requirement.

    Notes
    -----
    A partition of fewer than twice the smallest admissible class is not cut. A
    numeric or ordered attribute is cut at the median as relaxed Mondrian does (both
    halves must pass); a categorical one into the children of the lowest hierarchy node
    above the partition's values, the children that fail pooled together, or added to
    the largest child when the pool fails too (and the union passes).
    Each cut is scored by the sum, over its children, of size times the cell losses
    of the child's tight summary, and the cheapest is taken. A partition costs
    O(a d^2) for its a records and d quasi-identifiers (every cut scored on every
    attribute), O(n d^2 log n) in all with median cuts.

    References
    ----------
    .. [1] K. LeFevre, D. J. DeWitt, R. Ramakrishnan. Mondrian multidimensional
       k-anonymity. ICDE 2006. https://doi.org/10.1109/ICDE.2006.101
    .. [2] B. C. M. Fung, K. Wang, P. S. Yu. Top-down specialization for information
       and privacy preservation. ICDE 2005. https://doi.org/10.1109/ICDE.2005.143

    Examples
    --------
    >>> inst = fa.load("diva_table1")
    >>> rel = mondrian_loss(inst, [fa.KAnonymity(2)], objective="lm")
    >>> rel.status, fa.verify(inst, rel, [fa.KAnonymity(2)]).passed
    (<Status.FEASIBLE: 'FEASIBLE'>, True)
    """
    method = "mondrian-loss"
    started = time.perf_counter()
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            f"The 'instance' parameter of {method} must be an Instance. "
            f"Got {type(instance).__name__} instead."
        )
    requirements = validate_requirements(instance, requirements, caller=method)
    if split_risk(requirements)[0]:  # enforced by the smallest k that meets them
        check_option(objective, "objective", method, LOSSES)
        E.check_time_limit(time_limit, method)
        return smallest_k(lambda reqs, limit: mondrian_loss(instance, reqs, objective=objective, seed=seed,
                                                            time_limit=limit), instance, requirements, time_limit)
    _reject_non_monotone(requirements, method)
    check_option(objective, "objective", method, LOSSES)
    limit = E.check_time_limit(time_limit, method)
    check_random_state(seed)
    deadline = E.cut_deadline(started, limit, instance)  # the release is built within the limit
    checks = E.Checks(instance, requirements)
    n = instance.n_rows
    params = {"objective": objective, "time_limit": limit}

    def release(groups, status=Status.FEASIBLE, reason=None, timed_out=False):
        return Release(
            table=generalize_partition(instance, groups),
            groups=groups,
            status=status,
            reason=reason,
            provenance=provenance(
                method, params, requirements, seed, started, time_limit_reached=timed_out
            ),
        )

    protected = instance.schema.protected
    if protected is not None:
        _, part = E.dense_codes(instance.codes(protected))
    else:
        part = np.zeros(n, dtype=np.int64)
    order = np.argsort(part, kind="stable")
    roots = np.split(order, np.cumsum(np.bincount(part))[:-1])
    failed = _failures(checks, [np.arange(n)])
    if not failed:
        for rows in roots:
            failed = _failures(checks, [rows])
            if failed:
                failed = [f"{failed[0]} (records of one protected value)"]
                break
    if failed:
        reason = (
            f"{failed[0]} is violated before any cut; the requirements are union-monotone, "
            "so no partition satisfies it."
        )
        return release(part, Status.INFEASIBLE, reason)

    scorer = _Scorer(instance, objective)
    groups = np.empty(n, dtype=np.int64)
    stack = list(reversed(roots))
    leaves = 0
    timed_out = False
    # Seconds per cell a part's cut took at most (parts of fewer than CUT_MIN_CELLS
    # cells counted as that many): a part is not cut when its cut would end past the
    # deadline at that rate.
    rate = CUT_SECONDS_PER_CELL
    d = max(len(instance.schema.generalizable), 1)
    while stack:
        rows = stack.pop()
        cuts = []
        cells = max(len(rows) * d, CUT_MIN_CELLS)
        if timed_out or (deadline is not None and time.perf_counter() + rate * cells > deadline):
            timed_out = True
        elif len(rows) >= 2 * checks.min_size:
            clock = time.perf_counter()
            cuts = _candidate_cuts(scorer, checks, rows)
            costs = [sum(scorer(p) for p in parts) for parts in cuts]
            rate = max(rate, (time.perf_counter() - clock) / cells)
        if not cuts:
            groups[rows] = leaves
            leaves += 1
            continue
        stack.extend(reversed(cuts[int(np.argmin(costs))]))
    return release(groups, timed_out=timed_out)
