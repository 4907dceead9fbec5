"""Exact checks and costs of lattice nodes, and the bounds each check proves for other
nodes.

A node's classes come from the cheapest cached finer frequency set (:mod:`.frequency`).
Without suppression, a node passes when every class meets k-anonymity, l-diversity and
t-closeness (which are union-monotone: a failure condemns every node the node refines,
its *down-set*), then the diversity constraints and alpha-protection (which are not).
With a suppression limit, the classes that fail k, l or t are suppressed (released as
``*`` on every generalizable quasi-identifier; per protected value they form one more
class, which must meet the requirements too) and the node passes when at most the
limit is suppressed.

Two facts about suppression give bounds on nodes not yet checked. The records of
classes smaller than k (or with fewer than l distinct values) at a node U are in such
classes at every node L that U's classes are unions of, so (i) when they exceed the
limit every such L fails too (ARX's predictive tagging), and (ii) L suppresses at least
them, each at a cost of ``star - cell cost at L`` more than L's cost without
suppression: a lower bound linear in L's levels. t-closeness is not monotone (a class
failing it may split into classes that pass), but a class E failing it at U still
forces every such L to suppress a number of E's records (:mod:`.closeness`: the EMD is
convex, so L's kept part of E is itself t-close); these records count towards (i), and
towards (ii) at the least penalty any value of E's label at U can have at L.

Discernibility is Bayardo and Agrawal's C_DM [1]_ as the verifier's report computes it:
a record released as ``*`` on every generalizable quasi-identifier (suppressed, or in a
class generalized to ``*`` everywhere) costs n, the table's records; any other record
costs the size of its class. So every record costs at least k (a kept class holds k
records, and n >= k), and a record of a class E at U costs at least ``max(k, |E|)`` at
every feasible node coarser than U (its class there contains E, or it costs n); at
every node L that U refines, the records of U's doomed classes are suppressed, so L
costs at least ``n D + k (n - D)`` with D their number.

.. [1] R. J. Bayardo, R. Agrawal. Data privacy through optimal k-anonymization.
   ICDE 2005.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...models import measures as M
from ...models.released import group_ids
from ...models.requirements import (
    RISK_REQUIREMENTS,
    AlphaProtection,
    KAnonymity,
    LDiversity,
    TCloseness,
    requirement_targets,
)
from ...models.risk.requirements import risk_requirement
from .closeness import kept
from .frequency import FrequencySet, Records, roll_up
from .lattice import Space

__all__ = [
    "DOMINATED",
    "FAILED",
    "FEASIBLE",
    "MONOTONE",
    "Evaluation",
    "Evaluator",
    "whole_table_alpha",
]

MONOTONE = "monotone"  # fails, and so does every node whose classes it merges
FAILED = "failed"  # fails, this node only
DOMINATED = "dominated"  # costs at least the incumbent: not checked further
FEASIBLE = "feasible"

#: Memory for frequency sets kept as roll-up sources (bytes over all cached sets).
CACHE_BYTES = 128 * 2**20


@dataclass
class Evaluation:
    """The outcome of checking one node.

    Attributes
    ----------
    kind : str
        MONOTONE, FAILED, DOMINATED or FEASIBLE.
    failed : tuple of int
        Indices of the requirements that together make the node fail.
    cost : int or None
        The node's scaled cost (FEASIBLE and DOMINATED).
    down : list of numpy.ndarray, int or None
        With suppression, for every node L refining this one: a lower bound of the
        extra cost suppression adds, ``sum(down[a][L[a]])`` (separable objectives), or
        of the cost itself (discernibility, an int).
    up : int or None
        Discernibility: a lower bound of the cost of every feasible node coarser than
        this one.
    """

    kind: str
    failed: tuple = ()
    cost: int | None = None
    down: list | None = None
    up: int | None = None


class Evaluator:
    """Checks nodes exactly on frequency sets rolled up from cached finer ones."""

    def __init__(self, space: Space, recs: Records, schema, requirements, limit: int):
        self.space = space
        self.schema = schema
        self.recs = recs
        self.requirements = list(requirements)
        self.limit = limit
        self.k = max([r.k for r in requirements if isinstance(r, KAnonymity)] + [1])
        self.checks = [
            (i, r)
            for i, r in enumerate(requirements)
            if isinstance(r, (KAnonymity, LDiversity, TCloseness))
        ]
        # Failing these at a class means failing them at every part of it.
        self.set_monotone = {
            i
            for i, r in self.checks
            if isinstance(r, KAnonymity) or (isinstance(r, LDiversity) and r.variant == "distinct")
        }
        self.diversity = recs.diversity_of(requirements)
        self.alpha = [(i, r) for i, r in enumerate(requirements) if isinstance(r, AlphaProtection)]
        # Average risk, sample and population uniques: read from the released class sizes.
        self.risk = [(i, r) for i, r in enumerate(requirements) if isinstance(r, RISK_REQUIREMENTS)]
        self.n = recs.n_rows
        self._grounds: dict = {}
        self.cache: dict[tuple, FrequencySet] = {recs.base.grains: recs.base}
        self._cached_grains = np.array([recs.base.grains], dtype=np.int64).reshape(1, space.d)
        self._cached_sizes = np.array([recs.base.n], dtype=np.int64)
        self._cached_bytes = _nbytes(recs.base)
        self.results: dict[tuple, Evaluation] = {}
        self._last_histograms: tuple = (None, None)
        self._rooms: tuple = (None, {})  # (frequency set, requirement -> _kept_room)
        self._middle: dict = {}  # (attribute, grain, grain) -> the grain halfway
        self._below: dict = {}
        self._penalties: dict = {}
        self._req_targets: dict = {}
        self.frequency_sets = 0  # frequency sets computed (nodes and snapshots)
        self.rows_rolled = 0  # source rows read by roll-ups

    # ------------------------------------------------------------------ classes
    def _source(self, grains: tuple) -> int:
        feeds = np.ones(len(self._cached_sizes), dtype=bool)
        for attr, column, g in zip(self.space.attributes, self._cached_grains.T, grains):
            feeds &= attr.feeds[:, g][column]
        candidates = np.flatnonzero(feeds)
        sizes = self._cached_sizes[candidates]
        return int(candidates[np.argmin(sizes)])

    def classes(self, grains: tuple) -> tuple[FrequencySet, FrequencySet, np.ndarray]:
        """The frequency set at `grains`, the finer set it came from and the class of
        each row of that set."""
        index = self._source(grains)
        source = self.cache[tuple(int(g) for g in self._cached_grains[index])]
        if source.grains == tuple(grains):
            return source, source, np.arange(source.n)
        if self.space.d and self._cached_bytes < CACHE_BYTES:
            # The nearest finer set is far below: first cache a snapshot halfway
            # between, from which this node and its neighbours roll up cheaply. The
            # search checks a region's coarse nodes first, so a node is seldom finer
            # than one already checked, and halving the distance each time gives the
            # nodes of a region a chain of ever closer sources.
            half = self._halfway(source.grains, tuple(grains))
            if half is not None and half not in self.cache:
                if self._store(self._roll(source, half), CACHE_BYTES):
                    return self.classes(grains)
        fs, inverse = self._roll_with_inverse(source, grains)
        # Checked nodes take at most half the memory: snapshots serve more nodes.
        self._store(fs, CACHE_BYTES // 2)
        return fs, source, inverse

    def _halfway(self, source: tuple, grains: tuple) -> tuple | None:
        """Per attribute, the middle one of the grains from `source`'s to `grains`'
        that the first feeds and that feed the second (the source's own when a finer
        grain has the larger index); None when that is `source` or `grains` itself."""
        out = []
        for a, (attr, f, g) in enumerate(zip(self.space.attributes, source, grains)):
            if (a, f, g) not in self._middle:
                between = [h for h in range(f, g + 1) if attr.feeds[f, h] and attr.feeds[h, g]]
                self._middle[a, f, g] = between[(len(between) - 1) // 2] if between else f
            out.append(self._middle[a, f, g])
        out = tuple(out)
        return None if out in (source, grains) else out

    def _roll(self, source: FrequencySet, grains: tuple) -> FrequencySet:
        return self._roll_with_inverse(source, grains)[0]

    def _roll_with_inverse(self, source, grains):
        self.frequency_sets += 1
        self.rows_rolled += source.n
        return roll_up(self.space, source, tuple(grains), self.recs.n_protected)

    def _store(self, fs: FrequencySet, budget: int) -> bool:
        """Keep `fs` as a roll-up source if the cached sets then take at most `budget`
        bytes; whether it was kept."""
        size = _nbytes(fs)
        if fs.grains in self.cache or self._cached_bytes + size > budget:
            return False
        self.cache[fs.grains] = fs
        self._cached_grains = np.vstack([self._cached_grains, np.array(fs.grains)[None, :]])
        self._cached_sizes = np.append(self._cached_sizes, fs.n)
        self._cached_bytes += size
        return True

    # ------------------------------------------------------------------ checks
    def _ground(self, req: TCloseness, target) -> M.EMDGround:
        key = (req.distance, req.ordered_domain, target.name)
        if key not in self._grounds:
            self._grounds[key] = M.emd_ground(
                req.distance, target.values, self.schema[target.name], req.ordered_domain
            )
        return self._grounds[key]

    def _targets(self, req) -> list:
        """The count targets an l-diversity or t-closeness requirement reads."""
        key = id(req)
        if key not in self._req_targets:
            self._req_targets[key] = [
                self.recs.targets[name] for name in requirement_targets(self.schema, req)
            ]
        return self._req_targets[key]

    def fails(self, req, cols: np.ndarray) -> np.ndarray:
        """Per class (column of `cols`): does it violate k, l or t?"""
        if isinstance(req, KAnonymity):
            return cols[0] < req.k
        bad = np.zeros(cols.shape[1], dtype=bool)
        for target in self._targets(req):
            counts = np.ascontiguousarray(cols[target.rows].T)
            if isinstance(req, LDiversity):
                if req.variant == "distinct":
                    ok = M.distinct_l(counts) >= req.l
                elif req.variant == "entropy":
                    ok = M.entropy_l_ok(counts, req.l)
                else:
                    ok = M.recursive_cl_ok(counts, req.c, int(req.l))[0]
            else:
                ok = M.emd_within(counts, target.global_counts, self._ground(req, target), req.t)
            bad |= ~ok
        return bad

    def failing(self, fs: FrequencySet) -> tuple[dict[int, np.ndarray], np.ndarray]:
        """The classes failing each of k, l and t (requirement index -> mask, only
        requirements with a failing class) and the classes failing any.

        The other requirements are checked only on the classes that meet the
        set-monotone ones (k-anonymity, distinct l-diversity): a class failing one of
        those is suppressed, and condemned at every refinement, whatever the others
        say (with k = 5 on Adult most classes are)."""
        found: dict[int, np.ndarray] = {}
        bad = np.zeros(fs.n, dtype=bool)
        for i, req in self.checks:
            if i in self.set_monotone:
                found[i] = self.fails(req, fs.cols)
                bad |= found[i]
        rest = np.flatnonzero(~bad)
        self._rooms = (fs, {})
        for i, req in self.checks:
            if i in self.set_monotone:
                continue
            found[i] = np.zeros(fs.n, dtype=bool)
            if isinstance(req, TCloseness) and req.distance == "equal" and self.n < 2**25:
                rooms = self._kept_room(req, fs, rest)
                self._rooms[1][i] = rooms
                for room in rooms:
                    found[i][rest] |= room[rest] < fs.sizes[rest]
            else:
                found[i][rest] = self.fails(req, fs.cols[:, rest])
        for f in found.values():
            bad |= f
        failing = {i: found[i] for i, _ in self.checks if found[i].any()}
        return failing, bad

    def _kept_room(self, req: TCloseness, fs: FrequencySet, where: np.ndarray) -> list:
        """Equal-distance t-closeness: per target, :func:`.closeness.kept`'s count for
        each class `where` of `fs` (0 elsewhere), before its cut at k: a bound of the
        records any refinement keeps of the class. At w = |E| kept's test is the
        class's own EMD <= t, so a class is t-close exactly when the count is the whole
        class; :meth:`failing` reads the failing classes from it and
        :meth:`_must_suppress` the records they lose. (kept orders each class's values
        by ``c_i / G_i`` in floats: two different such ratios with counts below 2^25
        differ by far more than their rounding, so the order is exact; `failing` asks
        only then.)"""
        out = []
        for target in self._targets(req):
            room = np.zeros(fs.n, dtype=np.int64)
            counts = fs.cols[target.rows][:, where].T
            room[where] = kept(counts, target.global_counts, req.t, self._ground(req, target), 1)
            out.append(room)
        return out

    def merged(self, levels, fs: FrequencySet, bad: np.ndarray) -> np.ndarray:
        """The classes in the blocks of suppressed records: the suppressed ones and,
        per protected value with suppressed records, classes released as '*' on every
        attribute, which the suppressed records join."""
        if not bad.any():
            return bad
        stars = self.starred(levels, fs)
        return bad | (stars & np.isin(fs.protected, fs.protected[bad]))

    def starred(self, levels, fs: FrequencySet) -> np.ndarray:
        """The classes whose every label at `levels` tells nothing (``*``, or a label
        over every value present: suppressed, as the metrics count them), every class
        when there is no attribute."""
        stars = np.ones(fs.n, dtype=bool)
        for a, attr in enumerate(self.space.attributes):
            stars &= attr.tells_nothing[levels[a] + 1][fs.codes[a]]
        return stars

    def evaluate(self, levels: tuple, incumbent: int | None = None) -> Evaluation:
        """Check `levels` (cached: each node is checked once)."""
        levels = tuple(int(j) for j in levels)
        if levels not in self.results:
            self.results[levels] = self._evaluate(levels, incumbent)
        return self.results[levels]

    def _evaluate(self, levels: tuple, incumbent) -> Evaluation:
        space = self.space
        fs, source, inverse = self.classes(tuple(j + 1 for j in levels))
        sizes = fs.sizes
        failing, bad = self.failing(fs)
        down = None
        if not self.limit:
            if bad.any():
                return Evaluation(MONOTONE, tuple(failing))
        else:
            doomed = np.zeros(fs.n, dtype=bool)
            for i in self.set_monotone & set(failing):
                doomed |= failing[i]
            partial, partial_causes = self._must_suppress(fs, failing, doomed)
            if int(sizes[doomed].sum()) + int(partial.sum()) > self.limit:
                return Evaluation(
                    MONOTONE,
                    tuple(i for i in failing if i in self.set_monotone or i in partial_causes),
                )
            if doomed.any() or partial_causes:
                down = (
                    self._blocks_bound(fs, doomed, partial)
                    if space.objective == "discernibility"
                    else self._suppression_bound(levels, fs, source, inverse, doomed, partial)
                )
            if int(sizes[bad].sum()) > self.limit:
                return Evaluation(FAILED, tuple(failing), down=down)
        causes = tuple(failing)
        up = None
        if space.objective == "discernibility":
            up = int((sizes * np.maximum(sizes, self.k)).sum())
            # n per record released as '*' on every attribute (the suppressed ones and
            # the classes generalized to labels that tell nothing), |E| per record of
            # any other class E.
            # Without attributes no record is: each protected value is one class.
            starred = (bad | self.starred(levels, fs)) if space.d else np.zeros_like(bad)
            cost = self.n * int(sizes[starred].sum()) + int((sizes[~starred] ** 2).sum())
        else:
            cost = space.separable(levels)
            if bad.any():
                cost += self._extra(levels, fs, source, inverse, bad)
        if incumbent is not None and cost >= incumbent:
            return Evaluation(DOMINATED, cost=cost, down=down, up=up)
        if bad.any():
            merged = self.merged(levels, fs, bad)
            block_cols = np.stack(
                [
                    np.bincount(
                        fs.protected[merged], weights=row[merged], minlength=self.recs.n_protected
                    )
                    for row in fs.cols
                ]
            ).astype(np.int64)
            block_cols = block_cols[:, block_cols[0] > 0]
            for i, req in self.checks:
                if self.fails(req, block_cols).any():
                    return Evaluation(FAILED, causes + (i,), down=down, up=up)
        for i, target in self.diversity:
            if not self._diversity_ok(target, levels, fs, bad):
                return Evaluation(FAILED, causes + (i,), down=down, up=up)
        for i, req in self.alpha:
            if not self._alpha_ok(req, levels, fs, bad):
                return Evaluation(FAILED, causes + (i,), down=down, up=up)
        if self.risk:
            released = self.released_sizes(levels, fs, bad)
            for i, req in self.risk:
                if not risk_requirement(req, released).passed:
                    return Evaluation(FAILED, causes + (i,), down=down, up=up)
        return Evaluation(FEASIBLE, cost=cost, down=down, up=up)

    def released_sizes(self, levels, fs: FrequencySet, bad: np.ndarray) -> np.ndarray:
        """The sizes of the released classes at `levels`: the node's classes regrouped by
        their released labels and protected value, the suppressed ones (`bad`) and those
        generalized to '*' everywhere forming one block per protected value, as the
        verifier regroups the released table."""
        columns = []
        for a, attr in enumerate(self.space.attributes):
            ids = attr.text_id[levels[a] + 1]
            columns.append((np.where(bad, 0, ids[fs.codes[a]]), int(ids.max()) + 1))
        columns.append((fs.protected, int(fs.protected.max()) + 1 if fs.n else 1))
        key, n_key = group_ids(columns)
        sizes = np.bincount(key, weights=fs.sizes, minlength=n_key)
        return sizes[sizes > 0].astype(np.int64)

    # ------------------------------------------------------------------ costs
    def _histograms(self, source: FrequencySet, rows: np.ndarray) -> list[np.ndarray]:
        """Per attribute: the records of source rows `rows` per source label."""
        key = (id(source), rows.tobytes())
        if self._last_histograms[0] != key:
            where = np.flatnonzero(rows)
            weights = source.sizes[where].astype(float)
            self._last_histograms = (
                key,
                [
                    np.bincount(codes[where], weights=weights, minlength=attr.n_labels[g]).astype(
                        np.int64
                    )
                    for attr, g, codes in zip(self.space.attributes, source.grains, source.codes)
                ],
            )
        return self._last_histograms[1]

    def _extra(self, levels, fs: FrequencySet, source: FrequencySet, inverse, bad) -> int:
        """The extra cost of suppressing the records of the `bad` classes of `fs` (the
        classes at `levels`; `source` the finer set they were rolled up from)."""
        sizes = fs.sizes[bad]
        extra = self.space.star_total * int(sizes.sum())
        rows = bad[inverse]
        # The suppression bound may just have counted these rows (k-anonymity alone).
        hists = (
            self._last_histograms[1]
            if self._last_histograms[0] == (id(source), rows.tobytes())
            else None
        )
        for a, (attr, j) in enumerate(zip(self.space.attributes, levels)):
            g = j + 1
            if hists is None and attr.feeds[g, g]:
                # The cell cost is one per label at this level: read it per class.
                cost = attr.label_cost[g, g]
                extra -= int(np.dot(sizes.astype(cost.dtype, copy=False), cost[fs.codes[a][bad]]))
                continue
            if hists is None:
                hists = self._histograms(source, rows)
            cost = attr.label_cost[source.grains[a], g]
            extra -= int(np.dot(hists[a].astype(cost.dtype), cost))
        return extra

    def _levels_below(self, a: int, g: int, u: int) -> tuple[np.ndarray, np.ndarray]:
        """Attribute a's levels j that level u covers whose suppression cost can be
        bounded from grain-g labels, and per such level the cell cost of each grain-g
        label (at j itself, or at g - 1 when g does not feed j but suppressing costs at
        least as much at j as at g - 1)."""
        key = (a, g, u)
        if key not in self._below:
            attr = self.space.attributes[a]
            js, rows = [], []
            for j in range(attr.height + 1):
                if not attr.covers[j, u]:
                    continue
                if attr.feeds[g, j + 1]:
                    at = j
                elif g >= 1 and attr.feeds[g, g] and attr.penalty_order[j, g - 1]:
                    at = g - 1
                else:
                    continue
                js.append(j)
                rows.append(attr.label_cost[g, at + 1])
            cost = (
                np.stack(rows).astype(self.space.dtype)
                if rows
                else np.zeros((0, attr.n_labels[g]), dtype=self.space.dtype)
            )
            self._below[key] = (np.array(js, dtype=np.int64), cost)
        return self._below[key]

    def _least_penalty(self, a: int, u: int) -> tuple[np.ndarray, np.ndarray]:
        """Attribute a's levels j that level u covers and, per such level and level-u
        label, the least extra cost at j of suppressing a record of the label (``star``
        less the largest cell cost at j of the label's values)."""
        key = (a, u)
        if key not in self._penalties:
            attr = self.space.attributes[a]
            codes = attr.codes[u + 1]
            ks = [j for j in range(attr.height + 1) if attr.covers[j, u]]
            most = np.zeros((len(ks), attr.n_labels[u + 1]), dtype=self.space.dtype)
            for r, j in enumerate(ks):
                np.maximum.at(most[r], codes, attr.cost[j])
            self._penalties[key] = (np.array(ks), attr.star - most)
        return self._penalties[key]

    def _suppression_bound(
        self, levels, fs, source, inverse, doomed: np.ndarray, partial: np.ndarray
    ) -> list[np.ndarray]:
        """Per attribute and level j: a lower bound of the extra cost, at level j, of the
        suppression at any node refining `levels` (see the module docstring): every
        record of the `doomed` classes, and `partial[E]` records of class E, each
        costing at least the least penalty of a value of E's label."""
        count = int(fs.sizes[doomed].sum())
        hists = self._histograms(source, doomed[inverse]) if count else [None] * self.space.d
        some = np.flatnonzero(partial)
        forced = partial[some].astype(float)
        out = []
        for a, (attr, g, u, hist) in enumerate(
            zip(self.space.attributes, source.grains, levels, hists)
        ):
            js, cost = self._levels_below(a, g, u)
            bound = np.zeros(attr.height + 1, dtype=self.space.dtype)
            if count:
                bound[js] = attr.star * count - cost @ hist.astype(cost.dtype, copy=False)
            if len(some):
                ks, penalty = self._least_penalty(a, u)
                # Records forced out per level-u label (exact in floats: at most n).
                per_label = np.bincount(
                    fs.codes[a][some], weights=forced, minlength=penalty.shape[1]
                )
                per_label = per_label.astype(np.int64).astype(penalty.dtype, copy=False)
                bound[ks] += penalty @ per_label
            out.append(bound)
        return out

    def _must_suppress(self, fs: FrequencySet, failing: dict, doomed: np.ndarray):
        """Per class not `doomed`: how many of its records every node refining this one
        suppresses because of t-closeness (:mod:`.closeness`); and the t-closeness
        requirements that force some."""
        out = np.zeros(fs.n, dtype=np.int64)
        causes = set()
        for i, req in self.checks:
            if i not in failing or not isinstance(req, TCloseness):
                continue
            where = np.flatnonzero(failing[i] & ~doomed)
            if not len(where):
                continue
            rooms = self._rooms[1].get(i) if self._rooms[0] is fs else None
            for r, target in enumerate(self._targets(req)):
                if rooms is None:
                    counts = fs.cols[target.rows][:, where].T
                    ground = self._ground(req, target)
                    room = kept(counts, target.global_counts, req.t, ground, self.k)
                else:
                    room = rooms[r][where]
                    room = np.where(room < self.k, 0, room)
                lost = fs.sizes[where] - room
                if lost.any():
                    causes.add(i)
                    out[where] = np.maximum(out[where], lost)
        return out, causes

    def _blocks_bound(self, fs: FrequencySet, doomed: np.ndarray, partial) -> int:
        """Discernibility at any node refining this one: it suppresses at least the
        D records `doomed` here, n each, and every other record costs at least k (a
        kept class holds k records; a suppressed record costs n), so it is at least
        ``n D + k (n - D)``."""
        n, k = self.n, min(self.k, self.n)
        count = int(fs.sizes[doomed].sum()) + int(partial.sum())
        return n * count + k * (n - count)

    # ------------------------------------------------------------------ non-monotone
    def _diversity_ok(self, target, levels, fs: FrequencySet, bad: np.ndarray) -> bool:
        shown = ~bad
        for a, matches in target.matches:
            shown &= matches[levels[a] + 1][fs.codes[a]]
        row = fs.cols[target.row]
        count = int(row[shown].sum())
        if target.star_matches:
            count += int(row[bad].sum())
        req = target.requirement
        return req.lower <= count <= req.upper

    def _alpha_ok(self, req: AlphaProtection, levels, fs: FrequencySet, bad) -> bool:
        """Every itemset of released values of the generalizable quasi-identifiers (the
        verifier's contexts), grouped from the node's classes."""
        flag = self.recs.protected_flag[fs.protected]
        negative = fs.cols[self.recs.negative]
        positive = fs.sizes - negative
        zero = np.zeros(fs.n, dtype=np.int64)
        cells = [
            np.where(flag, negative, zero),
            np.where(flag, positive, zero),
            np.where(flag, zero, negative),
            np.where(flag, zero, positive),
        ]
        total = self.n
        neg = int(self.recs.base.cols[self.recs.negative].sum())
        if req.larger_is_worse:
            op = "lt" if req.strict else "le"
        else:
            op = "gt" if req.strict else "ge"
        support = req.min_support or 1
        texts = []
        for a, attr in enumerate(self.space.attributes):
            ids = attr.text_id[levels[a] + 1][fs.codes[a]]
            texts.append((np.where(bad, 0, ids), int(attr.text_id[levels[a] + 1].max()) + 1))

        def holds(key: np.ndarray, n_key: int) -> bool:
            a_, b_, c_, d_ = (
                np.bincount(key, weights=c, minlength=n_key).astype(np.int64) for c in cells
            )
            keep = (a_ + b_ + c_ + d_) >= support
            if not keep.any():
                return True
            props = M.Proportions(a_[keep], b_[keep], c_[keep], d_[keep], neg, total)
            values = M.discrimination(req.measure, props)
            ok = M.exact_compare(
                values,
                lambda i: M.discrimination_exact(req.measure, *props.row(i), neg, total),
                req.alpha,
                op,
            )
            return bool(ok.all())

        # Depth-first over itemsets; an itemset without a context of enough support
        # has none among its refinements either.
        stack = [(np.zeros(fs.n, dtype=np.int64), 0)]
        while stack:
            key, start = stack.pop()
            for a in range(start, len(texts)):
                ids, width = texts[a]
                child, uniques = pd.factorize(key * width + ids)
                child = child.astype(np.int64)
                if not holds(child, len(uniques)):
                    return False
                sizes = np.bincount(child, weights=fs.sizes, minlength=len(uniques))
                if (sizes >= support).any():
                    stack.append((child, a + 1))
        return True


def _nbytes(fs: FrequencySet) -> int:
    return fs.codes.nbytes + fs.protected.nbytes + fs.cols.nbytes


def whole_table_alpha(req: AlphaProtection, recs: Records) -> bool:
    """The empty itemset: the whole table's measure, the same at every node."""
    base = recs.base
    flag = recs.protected_flag[base.protected]
    negative = base.cols[recs.negative]
    positive = base.sizes - negative
    a = int(negative[flag].sum())
    b = int(positive[flag].sum())
    c = int(negative[~flag].sum())
    d = int(positive[~flag].sum())
    total, neg = recs.n_rows, a + c
    if req.min_support and total < req.min_support:
        return True
    value = M.discrimination_exact(req.measure, a, b, c, d, neg, total)
    if req.larger_is_worse:
        return value < req.alpha if req.strict else value <= req.alpha
    return value > req.alpha if req.strict else value >= req.alpha

