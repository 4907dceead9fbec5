"""Local recoding through the lattice: full-domain rounds over the records still left.

Kohlmayer et al.'s idea behind ARX's local recoding: a full-domain search with a
generous suppression limit releases the classes that meet the requirements at one
lattice node; the records it would suppress are anonymized again by a new lattice
search over them alone, round after round, until none are left or the remainder is
released as one block of ``*``. Each round may pick a different node, so the release
is a local recoding: an attribute's values are shown at different levels for
different records.

Which nodes a round takes. A full-domain search minimizes the total loss of the whole
table, charging a suppressed record the full loss ``star``; in a round that charge is
wrong, since the suppressed records are not lost but anonymized again later. A round
here ranks nodes by the *average* loss of the records they keep, ``cost(kept) /
|kept|``, among the nodes that keep at least a share of the records left (``min_kept``,
as ARX's 99 % suppression limit keeps 1 %). The average grows upwards in the lattice
(every record's label widens), so the round searches downwards: a beam descent from the
top node, one attribute one level lower per step, keeping the ``beam`` best nodes that
still keep enough. The classes of the ``nodes`` best nodes found are then packed,
cheapest per record first, each taken when none of its records is taken yet (a class
is all the records left that read the same at its node, so a taken class is whole);
the records no taken class holds go to the next round.

Guarantees. Every released class of a round meets k, l and t (t against the whole
table's distribution, as every class of a release is measured). Classes of different
rounds or nodes that read the same are one class to the verifier; their union still meets k,
distinct/entropy/recursive l (Machanavajjhala et al. 2007, monotonicity) and t (the
EMD to a fixed distribution is convex). The remainder, with every class released as
``*`` on every attribute, forms one block per protected value; when a block fails,
released classes are moved into it, cheapest first, until it passes (the whole table
at the top node is the last resort; if even that fails, nothing does).

A second schedule of rounds, each keeping at least the share of the records left that
leaves about k of them after :data:`FEW_ROUNDS` rounds, runs first (it is quick; the
cheapest-first rounds run in the time it leaves, all of it without a limit): under
l-diversity the cheapest-first rounds can leave the records whose sensitive values mix
worst to the end, where they are suppressed, and fewer, larger rounds lose less.

Then every class is lowered one attribute level at a time while its parts pass
(:func:`_refine`), and the results of both schedules are compared with the optimal
full-domain node without suppression (found by :mod:`.search`, lowered the same way):
the best is returned, so the method never loses more than ``fulldomain``.

On ARX's Adult setting (``benchmarks/arx.py``) it loses 0.0128 / 0.0310 / 0.0469
LM_avg for k = 2 / 5 / 10 in about 4 s CPU each, where ARX's local recoding loses
0.0192 / 0.0357 / 0.0522.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
import pandas as pd

from ..._validation import check_fraction
from ...exceptions import IncompatibleRequirementError, InvalidParameterError
from ...instances.instance import Instance
from ...models.requirements import (
    KAnonymity,
    LDiversity,
    Requirement,
    TCloseness,
    validate_requirements,
)
from ...models.objectives import objective_value
from ...release import Release, Status, generalize_partition, provenance
from .. import _cpsat
from ..local_recoding.labels import _active
from ..local_recoding.solve import _verified
from .evaluate import Evaluator
from .frequency import FrequencySet, Records, records, roll_up
from .lattice import OutOfTime, Space
from .memory import check_lattice_local_memory, lattice_local_memory
from .method import (
    LATTICE_NODES,
    _Problem,
    _release_table,
    _run,
    judged,
    lattice_space,
    release_reserve,
    stars_release,
)

__all__ = ["OBJECTIVES", "lattice_local"]

#: The objectives a round can average over the records it keeps (per-cell losses).
OBJECTIVES = ("lm", "ncp", "generalized", "stars")
_SUPPORTED = (KAnonymity, LDiversity, TCloseness)


def _subset(recs: Records, keep: np.ndarray) -> Records:
    """The records of the base classes `keep`; the targets keep the whole table's
    distributions (t-closeness measures every class against the table)."""
    base = recs.base
    sub = FrequencySet(base.grains, base.codes[:, keep], base.protected[keep], base.cols[:, keep])
    return dataclasses.replace(recs, base=sub)


@dataclasses.dataclass
class _Round:
    """One round: its node, the base classes (positions in the whole base set) it
    releases and their class ids within the round."""

    levels: tuple
    base_classes: np.ndarray
    classes: np.ndarray
    kept: int


class _Checker:
    """A round's node checks on the base classes left: each check groups them by
    their labels at the node (no cached sets: a round's checks are few and its rows
    shrink round after round)."""

    def __init__(
        self, space: Space, evaluator: Evaluator, base: FrequencySet, n_protected, numbers
    ):
        self.evaluator = evaluator
        self.base = base
        self.n_protected = n_protected
        self.labels = [
            [attr.maps[0, g][codes] for g in range(1, attr.height + 2)]
            for attr, codes in zip(space.attributes, base.codes)
        ]
        # Numeric attributes are released as the range of each class's values (the
        # tight summary), so a class costs that range, not its interval's width.
        self.numbers = [
            (a, values[base.codes[a]], float(space.scale) / span) for a, values, span in numbers
        ]
        tight = {a for a, _, _ in self.numbers}
        # The other attributes' level costs of the records, one row per (attribute, level).
        self.costs = np.stack(
            [
                (attr.label_cost[0, g][codes] * base.sizes).astype(float) * (a not in tight)
                for a, (attr, codes) in enumerate(zip(space.attributes, base.codes))
                for g in range(1, attr.height + 2)
            ]
        )
        self.first = np.cumsum([0] + [attr.height + 1 for attr in space.attributes])[:-1]
        self.widths = [attr.n_labels[1:] for attr in space.attributes]
        self.k_only = all(isinstance(req, KAnonymity) for _, req in evaluator.checks)
        self.k = evaluator.k

    def classes(self, node: tuple) -> np.ndarray:
        """The class of each base class at `node`."""
        key = self.base.protected.copy()
        radix = self.n_protected
        for labels, widths, j in zip(self.labels, self.widths, node):
            if radix * widths[j] >= 2**62:
                key = pd.factorize(key)[0].astype(np.int64)
                radix = int(key.max()) + 1
            key = key * widths[j] + labels[j]
            radix *= widths[j]
        if radix <= 4 * len(key) + 4096:
            present = np.bincount(key, minlength=radix) > 0
            return (np.cumsum(present) - 1)[key]
        return pd.factorize(key)[0].astype(np.int64)

    def kept(self, node: tuple, inverse: np.ndarray | None = None) -> np.ndarray:
        """Which base classes are in classes that meet k, l and t at `node`."""
        inverse = self.classes(node) if inverse is None else inverse
        ok = np.bincount(inverse, weights=self.base.sizes) >= self.k
        if not self.k_only and ok.any():
            # l and t only on the classes that meet k, the costly checks.
            big = np.flatnonzero(ok)
            where = np.full(len(ok), -1, dtype=np.int64)
            where[big] = np.arange(len(big))
            rows = ok[inverse]
            cols = _sum_by(where[inverse[rows]], self.base.cols[:, rows], len(big))
            ok[big] = ~_fails(self.evaluator, cols)
        return ok[inverse]

    def class_costs(self, node: tuple):
        """The classes at `node` (of each base class), which base classes are kept, and
        each class's loss (scaled, a float: it only ranks nodes and classes; the
        release's objective is computed exactly)."""
        inverse = self.classes(node)
        kept = self.kept(node, inverse)
        n = int(inverse.max()) + 1
        per_row = self.costs[self.first + np.asarray(node)].sum(axis=0)
        cost = np.bincount(inverse, weights=per_row, minlength=n)
        if self.numbers:
            sizes = np.bincount(inverse, weights=self.base.sizes, minlength=n)
            for _, values, per_unit in self.numbers:
                low = np.full(n, np.inf)
                high = np.full(n, -np.inf)
                np.minimum.at(low, inverse, values)
                np.maximum.at(high, inverse, values)
                cost += (high - low) * per_unit * sizes
        return inverse, kept, cost

    def check(self, node: tuple) -> tuple[float, int]:
        """The scaled loss of the records kept at `node` and their number."""
        inverse, kept, cost = self.class_costs(node)
        counted = np.bincount(inverse, weights=kept, minlength=len(cost)) > 0
        return float(cost[counted].sum()), int(self.base.sizes @ kept)


def _best_node(checker: _Checker, top: tuple, need: int, beam: int, deadline: float | None = None):
    """A node keeping at least `need` records at a low average scaled loss per kept
    record: a beam descent from the top node (which keeps every record that can be
    kept), each step lowering one attribute by one level and keeping the `beam` best
    nodes that still keep enough (see the module docstring); None when even the top
    node does not. Past `deadline` (a ``time.perf_counter`` value, read before each
    node's check below the top) the best node found so far, which keeps enough: a round's
    descent read no clock (UCI Adult, k = 5: 0.23-0.33 s for the first, 439 nodes, which
    took lattice-local 0.1-0.45 s past limits of 0.05-0.4 s)."""
    costs = {}

    def check(x: tuple):
        if x not in costs:
            cost, kept = checker.check(x)
            costs[x] = None if kept < need else (cost, kept)
        return costs[x]

    if check(top) is None:
        return None, costs
    best = (*costs[top], top)
    layer = [top]
    while layer:
        children = {
            x[:a] + (x[a] - 1,) + x[a + 1 :] for x in layer for a in range(len(x)) if x[a]
        }
        passing = []
        for x in sorted(children):
            if deadline is not None and time.perf_counter() >= deadline:
                return best, costs
            found = check(x)
            if found is not None:
                passing.append((found[0] / found[1], x))
                # Cost / kept, cross-multiplied. On a tie the lower node (met
                # later) wins: it shows more.
                if found[0] * best[1] <= best[0] * found[1]:
                    best = (*found, x)
        passing.sort()
        layer = [x for _, x in passing[:beam]]
    return best, costs


def _pack(checker: _Checker, nodes: list[tuple]):
    """The classes of several nodes, cheapest per record first, each taken when none
    of its records is taken yet: (each base class's pick or -1, the levels of each
    pick)."""
    sizes = checker.base.sizes
    entries = []
    for i, node in enumerate(nodes):
        inverse, kept, cost = checker.class_costs(node)
        n = len(cost)
        count = np.bincount(inverse, weights=sizes, minlength=n)
        ok = np.bincount(inverse, weights=kept, minlength=n) > 0
        order = np.argsort(inverse, kind="stable")
        bounds = np.r_[0, np.cumsum(np.bincount(inverse, minlength=n))]
        for c in np.flatnonzero(ok):
            entries.append((cost[c] / count[c], i, order[bounds[c] : bounds[c + 1]]))
    entries.sort(key=lambda e: (e[0], e[1]))
    pick = np.full(len(sizes), -1, dtype=np.int64)
    levels = []
    for _, i, members in entries:
        if (pick[members] < 0).all():
            pick[members] = len(levels)
            levels.append(nodes[i])
    return pick, np.array(levels, dtype=np.int64).T.reshape(len(nodes[0]), -1)


#: The rounds of the second schedule (:func:`_rounds`' `few`): each keeps at least the
#: share of the records left that leaves about k of them after this many rounds. Under
#: l-diversity the rounds of the first schedule, each keeping the cheapest classes it
#: can, leave the records whose sensitive values mix worst to the last rounds, where
#: they are suppressed; rounds that keep more each mix them with the others. Bundled
#: Adult, occupation sensitive, k = 5, LM_avg without a limit, the first schedule
#: against 6 / 8 / 12 / 16 / 32 rounds: recursive (3, 4)-diversity 0.0851 (the
#: full-domain node; the rounds lost) against - / 0.0688 / - / 0.0763 / 0.0851,
#: recursive (2, 2) 0.0536 against - / 0.0415 / - / 0.0551 / 0.0491, entropy 3-diversity
#: 0.0558 against 0.0453 / 0.0412 / 0.0477 / - / -; distinct 3-diversity 0.0260 against
#: 0.0283 / 0.0277 / 0.0281, and k-anonymity alone (ARX's setting, k = 2, 5, 10; bundled
#: Adult, k = 5) 0.0128 / 0.0310 / 0.0469 / 0.0397 against 0.0149 / 0.0348 / 0.0534 /
#: 0.0469 with 8: neither schedule wins everywhere, so both run and the cheaper stands.
FEW_ROUNDS = 8


#: The rounds keep more records each (the spread) only when, at the rounds' pace so
#: far (their seconds per record kept), the records left would take more than this
#: share of the time left. Otherwise the rounds are those without a deadline, whatever
#: the clock: sized from the elapsed time always, German credit (k = 5, NCP) gave 4
#: objectives in 6 runs at a limit of 12 s that did not bind (the rounds end in 0.7 s
#: CPU), and so lns's starts changed from run to run.
SPREAD_SHARE = 1 / 3


def _spread(total: int, k: int, allowed: float) -> int:
    """The records a round keeps so that, each of `allowed` rounds keeping the same
    share of the records left, about k of the `total` are left after them."""
    return math.ceil(total * (1 - (k / total) ** (1 / max(allowed, 1.0))))


def _short_of_time(now: float, began: float, kept: int, total: int, deadline: float) -> bool:
    """Whether the `total` records left, kept at the pace of the rounds so far (which
    took ``now - began`` seconds for `kept` records; later rounds are cheaper, on fewer
    records), would take more than :data:`SPREAD_SHARE` of the time to `deadline`."""
    return (now - began) * total / max(kept, 1) > SPREAD_SHARE * (deadline - now)


def _rounds(
    problem: _Problem, checks, share: Fraction, beam: int, mix: int, numbers, deadline,
    final_deadline=None, few: int | None = None,
) -> tuple[list[_Round], bool]:
    """Rounds until no record is left or no node keeps enough of them (the records
    left are then the remainder); once the time is up, one last round keeps all it
    can. A round's descent stops at `deadline`, the last round's at `final_deadline`
    (:func:`_best_node`), and no round starts past `final_deadline`. With `few`, each
    round keeps enough of the records left that about k are left after `few` rounds
    (:data:`FEW_ROUNDS`). When the time left
    is short (:func:`_short_of_time`) a round keeps more records; else the rounds are
    those without a deadline. Also returns
    whether a round kept more for being short of time: the rounds then differ from
    those without a deadline though they may end well before it."""
    recs, space = problem.recs, problem.space
    top = tuple(space.heights)
    left = np.ones(recs.base.n, dtype=bool)
    rounds: list[_Round] = []
    last = began = time.perf_counter()
    final = short = False
    while left.any() and not final:
        now = time.perf_counter()
        final = deadline is not None and now >= deadline
        if final and final_deadline is not None and now >= final_deadline:
            # Not even the last round's descent has time: its set-up alone (the records
            # left's labels and costs per level) took 0.01-0.018 s on UCI Adult, 0.012 s
            # past a limit of 0.05 s. The records left are the block of *.
            break
        where = np.flatnonzero(left)
        sub = _subset(recs, where)
        evaluator = Evaluator(space, sub, problem.instance.schema, checks, 0)
        checker = _Checker(space, evaluator, sub.base, recs.n_protected, numbers)
        total = int(sub.base.sizes.sum())
        need = max(1, math.ceil(share * total))
        most = checker.check(top)[1]  # the top node keeps the most (k, distinct l)
        if most < need:
            break
        if final:
            need = most
        else:
            if few is not None:
                need = max(need, min(most, _spread(total, checker.k, few - len(rounds))))
            if deadline is not None and rounds and _short_of_time(
                    now, began, sum(r.kept for r in rounds), total, deadline):
                # Short of time, keep more per round so that the rounds the time still
                # allows leave about k records, not a large remainder. Rounds get cheaper
                # as the records left shrink (the last one's time, thrice, sets the pace).
                spread = _spread(total, checker.k,
                                 3 * (deadline - now) / max(now - last, 1e-3))
                short |= min(most, spread) > need
                need = max(need, min(most, spread))
        last = now
        best, costs = _best_node(checker, top, need, beam, final_deadline if final else deadline)
        if best is None:
            break
        passing = sorted((v[0] / v[1], x) for x, v in costs.items() if v is not None)
        nodes = [best[2]] + [x for _, x in passing if x != best[2]][: mix - 1]
        pick, levels = _pack(checker, nodes)
        keep = pick >= 0
        rounds.append(_Round(levels, where[keep], pick[keep], int(checker.base.sizes[keep].sum())))
        left[where[keep]] = False
    return rounds, short


@dataclasses.dataclass
class _Partition:
    """The released classes over the base classes: each base class's class, each
    class's levels and whether it is released as ``*`` (the suppressed block)."""

    of: np.ndarray  # (n_base,) class id
    levels: np.ndarray  # (d, classes)
    star: np.ndarray  # (classes,) bool


def _partition(space: Space, base: FrequencySet, rounds: list[_Round]) -> _Partition:
    """The rounds' classes and, per protected value, the block of the records left."""
    of = np.full(base.n, -1, dtype=np.int64)
    levels, offset = [], 0
    for rnd in rounds:
        of[rnd.base_classes] = offset + rnd.classes
        count = rnd.levels.shape[1]
        levels.append(rnd.levels)
        offset += count
    star = np.zeros(offset, dtype=bool)
    left = of < 0
    if left.any():
        blocks, ids = np.unique(base.protected[left], return_inverse=True)
        of[left] = offset + ids.reshape(-1)
        top = np.array(space.heights, dtype=np.int64)
        levels.append(np.repeat(top[:, None], len(blocks), axis=1))
        star = np.concatenate([star, np.ones(len(blocks), dtype=bool)])
    return _Partition(of, np.concatenate(levels, axis=1), star)


def _fails(evaluator: Evaluator, cols: np.ndarray) -> np.ndarray:
    """Per column of counts: does it fail k, l or t?"""
    bad = np.zeros(cols.shape[1], dtype=bool)
    for _, req in evaluator.checks:
        bad |= evaluator.fails(req, cols)
    return bad


def _sum_by(ids: np.ndarray, cols: np.ndarray, n: int) -> np.ndarray:
    return np.stack([np.bincount(ids, weights=c, minlength=n) for c in cols]).astype(np.int64)


def _record_costs(space: Space, part: _Partition, base: FrequencySet) -> np.ndarray:
    """Each base class's scaled loss per record (``star`` in the suppressed block)."""
    here = _level_costs(space, part.levels[:, part.of], base.codes)
    return np.where(part.star[part.of], space.star_total, here)


def _repair(evaluator: Evaluator, space: Space, part: _Partition) -> _Partition:
    """Make every block of ``*`` pass: per protected value whose block (the records
    left) fails a requirement, move released classes into it, cheapest to suppress
    first, until it passes. All classes of the protected value, the top node's class,
    pass (the caller checked). A class whose labels at its node read ``*`` costs
    nothing to move, so it goes first; it is not counted in the block before it is
    moved, since it is released as its tight summary (a range, a lowest common
    ancestor), not as ``*``, and the block must pass alone."""
    base = evaluator.recs.base
    suppressed = part.star[part.of]
    if not suppressed.any():
        return _Partition(part.of.copy(), part.levels, part.star.copy())
    star = suppressed
    extra = (space.star_total - _record_costs(space, part, base)) * base.sizes
    of, flags = part.of.copy(), part.star.copy()
    for p in np.unique(base.protected[suppressed]):
        mine = base.protected == p
        block = base.cols[:, star & mine].sum(axis=1)
        if not _fails(evaluator, block[:, None])[0]:
            continue
        movable = np.flatnonzero(~star & mine)
        ids, owner = np.unique(of[movable], return_inverse=True)
        owner = owner.reshape(-1)
        # Float weights only order the classes; costs stay exact elsewhere.
        order = np.argsort(np.bincount(owner, weights=extra[movable].astype(float)), kind="stable")
        cols = _sum_by(owner, base.cols[:, movable], len(ids))
        prefixes = block[:, None] + np.cumsum(cols[:, order], axis=1)
        first = int(np.argmin(_fails(evaluator, prefixes)))
        target = of[np.flatnonzero(suppressed & mine)[0]]
        moved = np.isin(owner, order[: first + 1])
        of[movable[moved]] = target
    return _Partition(of, part.levels, flags)


def _level_costs(space: Space, levels: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The scaled loss per record of base classes (`codes`) at per-class `levels`."""
    out = np.zeros(codes.shape[1], dtype=space.dtype)
    for a, attr in enumerate(space.attributes):
        for j in np.unique(levels[a]):
            rows = levels[a] == j
            out[rows] += attr.label_cost[0, j + 1][codes[a, rows]]
    return out


def _first_passing(evaluator: Evaluator, owner, order_cols, start_cols) -> np.ndarray:
    """For groups of consecutive items (`owner` sorted), the position within the
    group of the first prefix whose counts plus the group's `start_cols` pass."""
    prefixes = np.cumsum(order_cols, axis=1)
    starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
    before = np.where(starts > 0, prefixes[:, np.maximum(starts - 1, 0)], 0)
    group = np.cumsum(np.r_[True, owner[1:] != owner[:-1]]) - 1
    prefixes = prefixes - before[:, group] + start_cols[:, group]
    ok = ~_fails(evaluator, prefixes)
    # Every group's full prefix passes (it is a class that passes).
    first = np.full(len(starts), len(owner), dtype=np.int64)
    np.minimum.at(first, group[ok], np.flatnonzero(ok))
    return first - starts, group


def _refine(evaluator: Evaluator, space: Space, part: _Partition, deadline=None) -> _Partition:
    """Lower classes one attribute level at a time while the parts meet k, l and t.

    A class splits by its records' labels one level lower on one attribute; the parts
    that pass take the lower label, those that fail stay together at the old one with,
    when they fail together, the passing parts that save least, until the rest passes.
    Each class takes the attribute that saves the most loss, until none saves any.
    Any partition of a class into parts that pass is a valid release (the module
    docstring); every class keeps passing, so stopping at `deadline` is safe."""
    base = evaluator.recs.base
    of, levels, star = part.of.copy(), part.levels.copy(), part.star.copy()
    sizes = base.sizes
    while deadline is None or time.perf_counter() < deadline:
        n_classes = levels.shape[1]
        level = levels[:, of]
        here = _level_costs(space, level, base.codes)
        current = np.where(star[of], space.star_total, here)
        gains = np.zeros((space.d, n_classes), dtype=np.float64)
        splits = []
        for a, attr in enumerate(space.attributes):
            finer = np.full(base.n, -1, dtype=np.int64)
            saved = np.zeros(base.n, dtype=np.float64)
            for j in np.unique(level[a]):
                if j == 0:
                    continue
                rows = level[a] == j
                v = base.codes[a, rows]
                finer[rows] = attr.codes[j][v]
                lower = here[rows] - attr.label_cost[0, j + 1][v] + attr.label_cost[0, j][v]
                saved[rows] = ((current[rows] - lower) * sizes[rows]).astype(float)
            eligible = finer >= 0
            key = np.where(eligible, of * (int(finer.max()) + 2) + finer + 1, -1)
            parts, part_of = np.unique(key, return_inverse=True)
            part_of = part_of.reshape(-1)
            cols = _sum_by(part_of, base.cols, len(parts))
            part_class = np.zeros(len(parts), dtype=np.int64)
            part_class[part_of] = of
            part_gain = np.bincount(part_of, weights=saved, minlength=len(parts))
            ok = ~_fails(evaluator, cols) & (parts >= 0)
            failed = ~ok & (parts >= 0)
            rest_cols = _sum_by(part_class[failed], cols[:, failed], n_classes)
            stuck = (rest_cols[0] > 0) & _fails(evaluator, rest_cols)
            # Classes whose rest fails: the passing parts saving least join the rest.
            candidates = np.flatnonzero(ok & stuck[part_class])
            if len(candidates):
                order = candidates[np.lexsort((part_gain[candidates], part_class[candidates]))]
                owner = part_class[order]
                starts = rest_cols[:, np.unique(owner)]
                first, group = _first_passing(evaluator, owner, cols[:, order], starts)
                heads = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
                within = np.arange(len(order)) - heads[group]
                ok[order[within <= first[group]]] = False
            gains[a] = np.bincount(part_class[ok], weights=part_gain[ok], minlength=n_classes)
            splits.append((ok[part_of] & eligible, part_of))
        best = gains.argmax(axis=0)
        take = gains[best, np.arange(n_classes)] > 0
        if not take.any():
            return _Partition(of, levels, star)
        new_of = of.copy()
        new_levels = [levels]
        new_star = [star]
        for a in range(space.d):
            moving, part_of = splits[a]
            rows = moving & (take & (best == a))[of]
            if not rows.any():
                continue
            ids, local = np.unique(part_of[rows], return_inverse=True)
            start = sum(x.shape[1] for x in new_levels)
            owners = np.zeros(len(ids), dtype=np.int64)
            owners[local.reshape(-1)] = of[rows]
            lowered = levels[:, owners].copy()
            lowered[a] -= 1
            new_levels.append(lowered)
            new_star.append(np.zeros(len(ids), dtype=bool))
            new_of[rows] = start + local.reshape(-1)
        of = new_of
        levels = np.concatenate(new_levels, axis=1)
        star = np.concatenate(new_star)
    return _Partition(of, levels, star)


def lattice_local(
    instance: Instance,
    requirements: Sequence[Requirement],
    *,
    seed=None,
    time_limit: float | None = None,
    objective: str = "lm",
    min_kept: float | Fraction = 0.002,
    beam: int = 8,
    nodes: int = 3,
) -> Release:
    """Local recoding by full-domain rounds over the lattice (Kohlmayer et al.'s
    iterative scheme behind ARX's local recoding; see :mod:`.local`).

    Parameters
    ----------
    instance, seed, time_limit
        As in :func:`fairanon.anonymize`. When the time runs out the records left are
        released as the block of ``*``. The release, its objective and its verification
        are kept :func:`~fairanon.solver.fulldomain.method.release_reserve` (three times the
        set-up's time, at most half the limit);
        of the rest, the full-domain search has a quarter, the rounds stop at 0.7 (a
        round's descent there, with its best node so far) and the last round, keeping
        every record it can, at 0.85. UCI Adult, k = 5, LM (``fa.anonymize``, 2 shared
        cores, 6 runs each): returned after 0.046-0.062, 0.085-0.112, 0.179-0.205 and
        0.346-0.385 s CPU at limits of 0.05, 0.1, 0.2 and 0.4 s; before the reserve and
        a cheaper set-up, 0.114-0.148, 0.123-0.159, 0.209-0.233 and 0.364-0.412 s (the
        set-up took 0.08 s: the ladders were built three times and every column
        sorted; now 0.01-0.02 s). The set-up reads the deadline as fulldomain's does
        and stops at half the limit, each protected value's records then released as
        one block of ``*``: at 0.01 and 0.02 s 0.018-0.027 s CPU, 0.050-0.087 s when
        it read no clock (2 cores at a load of 5.8); verified with the metrics, as the
        other releases are, 0.029-0.034 and 0.031-0.057 s (0.024-0.027 and
        0.027-0.057 s without them, a load of 2-2.5). The rounds keep more records
        each only when the time left is short (:data:`SPREAD_SHARE`): a limit they do
        not near gives the release without a limit, whatever the machine's load. The
        few rounds (:data:`FEW_ROUNDS`) run first, the cheapest-first rounds in the
        rounds' time they leave, not when the few were short of time.
    requirements : sequence of Requirement
        KAnonymity, LDiversity, TCloseness (against the whole table's distribution).
    objective : {"lm", "ncp", "generalized", "stars"}, default="lm"
        The loss a round averages over the records it keeps and the release's
        objective (a suppressed record's cells count as ``*``).
    min_kept : float or Fraction in (0, 1], default=0.002
        The least share of the records left that a round's best node keeps; smaller
        shares take more rounds and lose less.
    beam : int, default=8
        Nodes kept per layer of a round's descent (more check more nodes).
    nodes : int, default=3
        How many of a round's best nodes give classes to it (1: one node per round,
        the scheme of ARX's local recoding).

    Returns
    -------
    Release
        FEASIBLE with the exact objective, INFEASIBLE when no release meets the
        requirements (the whole table as one class fails them).
        ``provenance["rounds"]`` lists the records each round released and the
        nodes its classes come from (``"nodes"``: each node's levels and records),
        ``provenance["few_rounds"]`` the same for the second schedule (empty when it
        did not run), ``provenance["winner"]`` whether the rounds, the few rounds or
        the optimal full-domain node without suppression ("fulldomain") won, or
        "set-up stopped";
        ``provenance["fulldomain_stopped"]``, when the memory limit ended that node's
        search early (its best node so far then competes), why;
        ``provenance["time_limit_reached"]`` whether the limit shaped the release (the
        full-domain search, the rounds or the lowering stopped at their deadlines, or
        the rounds kept more records each for being short of time).

    Raises
    ------
    IncompatibleRequirementError
        Alpha-protection and diversity constraints: a round cannot keep them, since
        they count over the whole release, not class by class.
    MemoryLimitError
        Before any work, when :func:`~.memory.lattice_local_memory` is above the memory
        limit (:mod:`fairanon._memory`); before the first solve of the CP-SAT master (a
        lattice of more than ``LATTICE_NODES`` nodes), when the master would pass it. A
        later solve that would pass it ends that search with its best node so far.

    References
    ----------
    .. [1] F. Kohlmayer, F. Prasser, K. A. Kuhn. The cost of quality: Implementing
       generalization and suppression for anonymizing biomedical data with minimal
       information loss. J. Biomed. Inform. 58, 2015 (ARX's local recoding).
    .. [2] A. Machanavajjhala et al. l-Diversity: Privacy beyond k-anonymity. TKDD 2007.

    Examples
    --------
    >>> inst = fa.load("ruggieri_loan")
    >>> rel = lattice_local(inst, [fa.KAnonymity(2)], objective="generalized", seed=0)
    >>> rel.status, fa.verify(inst, rel, [fa.KAnonymity(2)]).passed
    (<Status.FEASIBLE: 'FEASIBLE'>, True)
    """
    started = time.perf_counter()
    cpu_started = time.process_time()
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            "The 'instance' parameter of lattice_local must be an Instance. "
            f"Got {type(instance).__name__} instead."
        )
    requirements = validate_requirements(instance, requirements, caller="lattice_local")
    for req in requirements:
        if not isinstance(req, _SUPPORTED):
            raise IncompatibleRequirementError(
                f"lattice-local cannot enforce {req}: it enforces k-anonymity, l-diversity "
                "and t-closeness, which hold class by class; use fulldomain (one node for "
                "the whole table) or cpsat for alpha-protection and diversity constraints."
            )
    if objective not in OBJECTIVES:
        raise InvalidParameterError(
            "The 'objective' parameter of lattice_local must be one of "
            f"{', '.join(map(repr, OBJECTIVES))}. Got {objective!r} instead."
        )
    for name, value in (("beam", beam), ("nodes", nodes)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidParameterError(
                f"The '{name}' parameter of lattice_local must be an int in [1, inf). "
                f"Got {value!r} instead."
            )
    share = check_fraction(min_kept, "min_kept", "lattice_local", low=0, high=1)
    if share == 0:
        raise InvalidParameterError(
            "The 'min_kept' parameter of lattice_local must be a share in (0, 1]. Got 0 instead."
        )
    time_limit = _cpsat.check_time_limit(time_limit, "lattice_local")
    deadline = None if time_limit is None else started + time_limit
    check_lattice_local_memory(instance, LATTICE_NODES)
    params = {
        "objective": objective,
        "min_kept": str(min_kept),
        "beam": beam,
        "nodes": nodes,
        "time_limit": time_limit,
    }

    def record(**extra) -> dict:
        info = {
            "search_s": time.perf_counter() - started,
            "search_cpu_s": time.process_time() - cpu_started,
        }
        return provenance(
            "lattice-local", params, requirements, seed, started, search=info, **extra
        )

    # As fulldomain's: release_reserve keeps at most half the limit, so a set-up past
    # half of it leaves the rounds no time (it took 0.013-0.02 s on UCI Adult, read no
    # clock, and lattice-local returned 0.03-0.07 s past limits of 0.01-0.02 s).
    set_up_deadline = None if deadline is None else started + time_limit / 2
    try:
        space, values = lattice_space(instance, objective, set_up_deadline)
        recs = records(instance, requirements, space, values, set_up_deadline)
    except OutOfTime:
        return _blocks_of_stars(instance, requirements, objective, record)
    problem = _Problem(instance, space, recs, values, 0, deadline, _cpsat.random_seed(seed), "auto")
    base = recs.base
    evaluator = Evaluator(space, recs, instance.schema, requirements, 0)

    top = tuple(attr.height for attr in space.attributes)
    whole = np.stack(
        [np.bincount(base.protected, weights=c, minlength=recs.n_protected) for c in base.cols]
    ).astype(np.int64)
    whole = whole[:, whole[0] > 0]
    failed = [str(req) for _, req in evaluator.checks if evaluator.fails(req, whole).any()]
    if failed:
        table = _release_table(instance, space, values, top, np.zeros(instance.n_rows, bool))
        return Release(
            table=table,
            groups=base.protected[recs.row_class],
            status=Status.INFEASIBLE,
            reason=(
                "no release meets the requirements: the whole table as one class fails "
                + "; ".join(failed)
            ),
            provenance=record(),
        )

    # Time is kept for the release, its objective and its verification after the rounds
    # and the lowering: twice fulldomain's, since both candidates are built as released.
    reserve = (0.0 if deadline is None
               else release_reserve(time_limit, 2 * (time.perf_counter() - started)))
    # The optimal full-domain node without suppression first (a fraction of the
    # time): the rounds must beat it, and it stands when they are cut short.
    share_deadline = None if deadline is None else started + (time_limit - reserve) / 4
    # Its CP-SAT master (a lattice beyond LATTICE_NODES) counts all lattice-local holds.
    _, outcome = _run(
        dataclasses.replace(problem, deadline=share_deadline),
        requirements,
        caller="lattice_local",
        held=lattice_local_memory(instance, LATTICE_NODES),
    )
    rounds_deadline = None if deadline is None else started + 0.7 * (time_limit - reserve)
    # Lowering classes stops with time left for the release and its verification.
    refine_deadline = None if deadline is None else started + 0.85 * (time_limit - reserve)
    # Numeric attributes (under LM or NCP, whose cell loss is a range's width over the
    # table's range) are ranked by each class's range of values.
    numbers = [
        (a, np.asarray(vals, dtype=float), float(np.ptp(vals)) or 1.0)
        for a, attr in enumerate(space.attributes)
        if objective in ("lm", "ncp") and instance.schema[attr.name].kind == "numeric"
        for vals in [_active(instance, attr.name)[0]]
    ]
    # The few rounds first: they take a fraction of the many (UCI Adult, occupation
    # sensitive, k = 5, recursive (3, 4)-diversity: 7 rounds in under 0.1 s against 107
    # in 6.6 s), so that a limit which cuts the many still leaves the few, which lose
    # least there (0.0688 per cell, where the many cut at 5-10 s left 0.0851).
    few, short = _rounds(problem, requirements, share, beam, nodes, numbers,
                         rounds_deadline, refine_deadline, few=FEW_ROUNDS)
    # The cheapest-first rounds in the time the few leave (none when they were short of
    # time: the rounds then kept more records each already).
    rounds = []
    if deadline is None or (not short and time.perf_counter() < rounds_deadline):
        rounds, many_short = _rounds(problem, requirements, share, beam, nodes, numbers,
                                     rounds_deadline, refine_deadline)
        short |= many_short
    # Whether the limit shaped the release: the full-domain search stopped, the rounds
    # kept more records each for being short of time (they may then end well before
    # their deadline: German credit, k = 5, LM at 0.4-2 s), or they ran to their
    # deadline (a descent stopped there, or the last round kept all it could).
    cut = deadline is not None and (
        (outcome.stopped is None and outcome.status not in (Status.OPTIMAL, Status.INFEASIBLE))
        or short
        or time.perf_counter() >= rounds_deadline
    )

    sizes = base.sizes
    # A schedule whose first round kept nothing leaves every record to the block of '*'
    # (one candidate stands for both then).
    candidates = [(name, _partition(space, base, schedule))
                  for name, schedule in (("rounds", rounds), ("few rounds", few)) if schedule]
    candidates = candidates or [("rounds", _partition(space, base, []))]
    if outcome.best is not None:
        levels = tuple(int(j) for j in outcome.best)
        of = roll_up(space, base, tuple(j + 1 for j in levels), recs.n_protected)[1]
        levels = np.repeat(np.array(levels, dtype=np.int64)[:, None], int(of.max()) + 1, axis=1)
        one_node = _Round(levels, np.arange(base.n), of, recs.n_rows)
        candidates.append(("fulldomain", _partition(space, base, [one_node])))
    best = None
    for name, part in candidates:
        part = _refine(evaluator, space, _repair(evaluator, space, part), refine_deadline)
        cut |= refine_deadline is not None and time.perf_counter() >= refine_deadline
        groups = part.of[recs.row_class]
        suppressed = part.star[groups]
        # Each class released as its tight summary (the lowest common ancestor, the range
        # of its numbers): inside its node's labels, so it loses no more and still reads
        # as one class. The candidates are compared as released: a summary can lose
        # much less than its node's labels.
        starred = {a.name: suppressed for a in space.attributes} if suppressed.any() else None
        table = generalize_partition(instance, groups, starred=starred)
        value = Fraction(objective_value(instance, Release(table=table, groups=groups), objective))
        if best is None or value < best[1]:
            cost = int((_record_costs(space, part, base) * sizes).sum())
            best = (name, value, cost, part, table, groups, suppressed)
    winner, value, cost, part, table, groups, suppressed = best
    release = Release(
        table=table,
        groups=groups,
        status=Status.FEASIBLE,
        suppressed=tuple(instance.row_ids[suppressed].tolist()),
        objective=_number(value),
        provenance=record(
            lattice_objective=_number(Fraction(cost, space.scale)),
            objective_name=objective,
            winner=winner,
            rounds=[_round_record(space, base, rnd) for rnd in rounds],
            few_rounds=[_round_record(space, base, rnd) for rnd in few],
            suppressed=int(sizes[part.star[part.of]].sum()),
            fulldomain_objective=(
                None if outcome.best is None else _number(Fraction(outcome.cost, space.scale))
            ),
            **({} if outcome.stopped is None else {"fulldomain_stopped": outcome.stopped}),
            time_limit_reached=bool(cut),
        ),
    )
    return _verified(instance, release, requirements)


def _round_record(space: Space, base: FrequencySet, rnd: _Round) -> dict:
    """A round for the provenance: the records it releases and, per node its classes
    come from (a round packs the classes of several), the node and its records."""
    levels = rnd.levels[:, rnd.classes]
    nodes, which = np.unique(levels, axis=1, return_inverse=True)
    sizes = base.sizes[rnd.base_classes]
    records = np.bincount(which.reshape(-1), weights=sizes, minlength=nodes.shape[1])
    return {
        "records": rnd.kept,
        "nodes": [
            {"levels": {a.name: int(j) for a, j in zip(space.attributes, nodes[:, i])},
             "records": int(records[i])}
            for i in range(nodes.shape[1])
        ],
    }


def _blocks_of_stars(instance: Instance, requirements, objective: str, record) -> Release:
    """The release when the time ran out during the set-up: the records of each
    protected value as one block of ``*``, as the rounds leave them when none runs
    (:func:`~.method.stars_release`), with the provenance keys of the other releases.
    FEASIBLE when the verifier finds that it meets the requirements, else INFEASIBLE:
    k, l and t hold class by class, so when the whole table as one class per protected
    value fails one no release meets it, as in the check that follows the set-up. The
    verdict reads the requirements' checks only (:func:`~.method.judged`: a failed
    integrity check is a bug, not infeasibility)."""
    # No lattice was built: no lattice cost, and no full-domain node competed.
    release = stars_release(instance, record(
        lattice_objective=None, objective_name=objective, winner="set-up stopped", rounds=[],
        few_rounds=[],
        suppressed=instance.n_rows, fulldomain_objective=None, time_limit_reached=True,
    ), objective)

    def failing(names):
        return dataclasses.replace(
            release, status=Status.INFEASIBLE, objective=None,
            reason="no release meets the requirements: the whole table as one class fails "
            + "; ".join(names),
        )

    return judged(instance, release, requirements, failing)


def _number(value: Fraction):
    return int(value) if value.denominator == 1 else value
