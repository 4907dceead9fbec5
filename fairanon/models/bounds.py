"""Lower bounds on the information loss of any release that meets the requirements.

A bound holds for every release the verifier accepts -- every partition of the records
into classes (never mixing protected values) and every truthful label per class and
attribute, whatever method made it -- so the gap ``(loss - bound) / loss`` of a release
certifies how far it is from the optimum at most.

The per-record bound (for the per-cell objectives ``ncp``, ``lm``, ``stars`` and
``generalized`` of :mod:`fairanon.models.objectives`). Record r lies in a class E of at
least k records of its protected value, and each of its cells costs at least what the
cheapest label covering E's values costs. For every other record s of E that cover
costs at least c_a(r, s), the cost of the cheapest label covering r's and s's values
(the lowest common hierarchy node; for ranges, split in what lies above and below r's
value, which add up). So r costs at least

    m(r) = min over sets T of k - 1 other records of  sum over dimensions of max_{s in T} D(s),

where D(s) holds, per attribute, c_a(r, s) (or the parts of a range above and below).
With l-diversity (any variant), E also holds at least l distinct sensitive values, so T
must bring them. The bound is the sum of m(r) over the records. m(r) is found exactly by
branch and bound over the records whose summed D is at most an upper bound u(r) -- the
record's cost in a release, when one is given, else the all-``*`` cost -- and is u(r)
when no set costs less. Any u gives a valid bound (a wrong one only a weaker bound).
The search runs below the cost of the box of r's nearest records in summed D (enough of
them, with enough sensitive values), a set it would read, when that is less than u(r):
fewer candidates and nodes. Without a release, 2,000 records of two numeric QIs of
distinct values, k = 5, LM: all m(r) exact in 1.4 s CPU (0.067 per record), where
searches below the all-``*`` cost passed :data:`MAX_NODES` and 60 s gave 27 of them
(0.005 per record); 20,000 records: 16,033 exact in 60 s (0.0171 per record with the
shared cost) where none were (0.0071, on the quicker bound); UCI Adult (8 QIs, LM, k = 5, pruned by
lattice-local's release): 6 types on the quicker bound, not 208, 0.022227 per cell
against 0.022177, 20.5 s CPU against 23.1 s.
Records with too many candidates, or whose search grows too large, get a quicker bound
instead: the larger of the (k-1)-th smallest summed D and the sum over dimensions of
the (k-1)-th smallest D on each (per attribute, the narrowest label covering the
record's value and k - 1 other records).

The classes' shared cost. The sum of m(r) lets a record that needs a wide class pay
for it alone, while its k - 1 classmates, who would be cheap elsewhere, pay as much. For
any numbers lam(r), a release's cost, the sum over its classes E of |E| w(E) (w(E) the
cost per record of E's labels), is

    sum over records r of  lam(r) + w(E_r) - mean of lam over E_r,

since the means over E_r add up, over the records, to the sum of lam. Each term is at
least lam(r) + s(r), with s(r) the least, over the boxes B that hold r and at least k
records (and l sensitive values), of B's cost (a threshold per dimension of D) minus
the mean of the k largest lam among the records B covers (a class's box covers it, and
no mean of lam over k records or more of it exceeds that). With lam = m, each term is
also at least m(r): every record s of E_r has m(s) <= w(E_r) (E_r is a class holding
s), so the mean of m over E_r is at most w(E_r). So r adds max(0, s(r)) to the sum of
m(r): a record whose every box holds records that are cheaper elsewhere adds the share
of its classmates' cost that is its own. (A box's excess can be below 0, as for an
ordered attribute whose LM cover is the cheaper of a range and a hierarchy node that is
not a run of values: D is then no metric; the class argument holds all the same.)
s(r) is found by branch and bound over the thresholds, as m(r) is, with the records
whose D sums to more than u(r) plus the largest m within that sum left out (a box
holding one costs more than u(r) in excess, and the release's class of r, a box, costs
at most u(r)). The box attaining m(r) is one of those boxes, so its excess bounds s(r)
from above: a record whose box has none adds 0 unsearched, and the others are searched
below it (a far smaller radius than u(r)), adding it when no box has less; or below the
least excess of a box an earlier search found that holds it, where the covers nest (it
is then a box around the type too). A record whose search finds a box of excess at most
:data:`NO_GAIN` (1e-8), passes :data:`SHARED_NODES` nodes or is not reached in the time
adds 0. This is the Lagrangian relaxation of the set-partitioning model at the
per-record multipliers (cf. the LP bound of :mod:`fairanon.solver.bounds`), taken record
by record rather than as one minimum over all boxes, so it never exceeds that LP.
Measured (2 cores): German credit, the 7 QIs of ``benchmarks/exact.py``, NCP: 815.5 ->
1,020.2 for k = 5 (LP 1,237), 1,180.7 -> 1,512.1 for k = 10 (LP 1,885), 888.0 -> 1,084.0
with 2-diversity too (which the LP does not count), 0.5-1.6 s CPU more than m(r)'s
0.4-0.6 s; UCI Adult (8 QIs, LM, k = 5, pruned by a lattice-local release): 0.0181 ->
0.0222 per cell, about 15 s CPU more than m(r)'s 8-10 s. With the box searches on numpy
arrays (a dozen calls a node, where they now work on sets held in the bits of Python
ints, :class:`_Boxes`) and every record's search reading the types within the group's
largest m (where it now reads those within L', :func:`_shared`), the same bounds, from
the same nodes, took 1.4-3.1 s and 1-1.3 s on German credit, 33 s and 12-13 s on Adult.
A search from u(r) took 100-118 s on Adult (the records with the most weight times
excess first: 0.0212 after 33 s in all). The multipliers m are feasible for the dual of
the set-partitioning LP (no box's k largest m average above its cost); raising them one
record at a time as far as every box holding the record allows (a sequential dual ascent
over Adult's types of one record, most weight times m first) gives a bound of its own,
and it beat the shared cost only after 150 s: 0.0223 after 5,000 of the 18,109 types,
0.0235 after all of them in 486 s CPU. The boxes that bound a raise can hold any record
of the group, so each search read 13,000-18,000 candidates; the shared cost, 0.0222 in
14 s, stays the bound's second step.

The ascent. The multipliers lam = m + max(0, s) are feasible for every class E (the mean
of lam over E is at most w(E): every s(q) of a record q of E is at most w(E) less the
mean of m over E, E's box around q being one of q's boxes), so their sum, the bound
above, is a value of the set-partitioning LP's dual. The same holds from any feasible
multipliers lam: each term is at least lam(r) + max(0, s(r)) (the mean of lam over E_r
is at most w(E_r)), and lam + max(0, s) is feasible again (in a class E, each s(q) is at
most w(E) less the mean of lam over E, and that is at least 0). So, with the ascent, the
shared cost is first taken a second time, at m + max(0, s), in :data:`AGAIN_SHARE` of
the time left: every type at once, each rising by its own least slack, where the ascent
raises one type by up to k / min(w, k) times its least slack but searches the types one
after the other from larger slacks, more slowly (3.6 ms a search against 19 ms on UCI
Adult). The multipliers are then raised one type at a time: with sigma the least slack
(cost less the mean of the k largest lam it covers) of the boxes around the type (by the
search of the shared cost, from that box's slack), each of its w records rises by k
sigma' / min(w, k), with sigma' half of sigma (all of it when sigma is at most
:data:`WHOLE_RAISE`), and the type goes back in the queue. A class E holding the type
lies in its box around the type, whose k largest lam rise by at most min(w, k) times the
raise, so E's mean of lam stays at most w(E); classes without it do not change; the sum
of lam stays a bound. A whole raise leaves the box that bounded it with no slack for the
other types it holds; half leaves them room, and the type takes more when its turn comes
back, its search then starting from the slack left to the box its last search found when
that is less than its own box's (a smaller radius: bundled Adult, two processes, 60 s,
0.02495 -> 0.02500 per cell; ARX's setting, k = 5, 0.02565 -> 0.02570). Where the covers
nest, a box found around one type is one around each type it holds, of the same cost and
records: each type also keeps the last :data:`KNOWN_BOXES` boxes found around others
that hold it (by the shared cost's searches too), and the least slack of these now
bounds its raise and its place in the order before it is searched (found boxes hold 5-25
types on UCI Adult, and a search finds a quarter of the slack it starts from at the
median). Bundled Adult, k = 5, one process, 45 s: 0.02389 -> 0.0243 per cell (1,308
raises, 1,314 before, now each worth more); two processes, 60 s: 0.02500 -> 0.02523;
German credit, the 7 QIs, every type raised as far as it goes: 1,180.2 -> 1,184.8 for
k = 5 and 1,757.5 -> 1,783.5 for k = 10 (17.1 s). With the shared cost's second pass
before the ascent, its searches starting below the boxes the first pass found (each read
at the raised multipliers): bundled Adult, one process, 45 s, 0.0243 -> 0.02496; two
processes, 60 s, 0.02523 -> 0.02581; German credit, every type raised, 1,185.5 for k = 5
(4.1 s) and 1,804.3 for k = 10 (14.8 s). Until the time limit, the type whose box (of
m(r), or the one last found) has the most slack now (times k / min(w, k) and w, and
:data:`UNSEARCHED_FIRST` for a type not searched yet) first, over the types whose boxes
have slack left (each raise takes a search that may read many records: the largest lam
within reach grows). A box with no slack left (a whole raise leaves the box that bounded
it with the margin) stays so, lam only rising: the types it holds are not searched again
(where the covers nest, so that it is a box around each of them: ranges, hierarchy
nodes).

Two processes. m(r) and the shared cost search each type on its own, so with two
processes every other type, in the order above, is searched in a forked process. The
ascent's searches depend on the raises before them: it searches two types at the same
multipliers, the second in a forked process, and raises each by half of its least
slack. A class holding both had at least the larger of the two slacks (each type's
least is at most any of its boxes'), so both halves fit in it; a class holding one sees
that one's raise only. The process whose search ends first waits for the other (a
fifth of the ascent's time on UCI Adult); going on searching here meanwhile, with the
other type counted at the most it may rise until its answer came, searched no more
types in the minute (0.02479 per cell against 0.02482).

Measured (2 cores, ``ascent=True``, LM per cell, 60 s in all from lattice-local's
release): ARX's Adult setting, k = 5, 0.02233 -> 0.02475 by whole raises in one process
(1,632 raised: every type reached, the fixed point, in 30 s), 0.02527 by halves, 0.02543
in two processes; k = 10, 0.03531 (fixed point in 27 s), 0.03724 and 0.03773; k = 2,
0.010272 (7 s), 0.010282 in two processes (fixed point in 20 s). Bundled UCI Adult,
k = 5: 0.02223 -> 0.02421 by whole raises (819 raised, 6,400 types not reached), 0.02415
by halves, 0.02463 with the ascent in two processes, 0.02482 with m(r) and the shared
cost too (8.2 s and 12.1 s down to 4.4 s and 6.2 s; 2,859 raises). German credit, the
7 QIs, NCP, every type raised as far as it goes (one process, :data:`PAIRED_TYPES`):
1,020.2 -> 1,179.1 for k = 5 in 4.2 s CPU and 1,512.1 -> 1,748.5 for k = 10 in 11.1 s
(LP 1,237 and 1,885), where whole raises reached 1,156.5 and 1,652.9. With each
search's radius narrowed to best0 plus the mean of the k largest lam within it
(:func:`_excess_search`: on bundled Adult a quarter fewer candidates, and 1,017 raises
in 40 s in one process where there were 732) and the types not searched yet first
(:data:`UNSEARCHED_FIRST`): bundled Adult 0.02495 in two processes, ARX's setting, k = 5,
0.02565, and German credit 1,180.2 for k = 5 in 4.2 s and 1,757.5 for k = 10 in 13.7 s.

Discernibility (C_DM: n per suppressed record, |E| per record of any other class E, as
:func:`~fairanon.models.metrics.discernibility` reads it): classes of at least k records
partition each protected group -- the suppressed records of a group, released alike,
form one of them -- and a suppressed record costs n, at least its class's size, so C_DM
is at least the sum of squared class sizes, itself at least that of the most even split
into floor(n_g / k) classes.

Privacy objectives (``privacy_log``, ``privacy_stretch``): classes never mix protected
values and merging two classes never lowers privacy, so the partition into one class
per protected value bounds them for every release, whatever the requirements. A
lexicographic objective has no bound here (a pair has no gap).

Ratings: the bound is a relaxation of the set-partitioning LP (a dual solution, and
with the shared cost a Lagrangian bound), valid for any release; it ignores that the
chosen sets must be disjoint, so on tables where most records need generalizing it can
lie well below the optimum.
"""

from __future__ import annotations

import bisect
import contextlib
import dataclasses
import heapq
import itertools
import math
import multiprocessing
import os
import signal
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .._arrays import unique_rows
from .._processes import can_fork, cores, start_forked
from .._validation import check_int, check_option
from ..exceptions import InvalidParameterError
from ..instances.instance import Instance
from ..release import Release
from .objectives import OBJECTIVES, Objective, objective_spec, privacy_value, relative_gap
from .requirements import (
    KAnonymity,
    LDiversity,
    Requirement,
    requirement_targets,
    validate_requirements,
)

__all__ = ["LowerBound", "lower_bound"]

#: Candidates above which a record gets the quicker bound (the (k-1)-th smallest summed D).
#: A node's work grows with the candidates (its sets are bits of Python ints). Measured
#: when the searches ran below u(r) alone: at 30,000, 20,000 records of two numeric QIs
#: of distinct values without a release got nothing in 60 s (searches of 20,000
#: candidates each cut at MAX_NODES), where this cap gave 10,278 of them the quicker
#: bound (0.0071 per record), against 0.24 % more on UCI Adult (8 QIs, LM, k = 5, every
#: type exact: 0.022230 per cell against 0.022177).
MAX_CANDIDATES = 3_000
#: Branch-and-bound nodes per record before it settles for the quicker bound.
MAX_NODES = 20_000
#: Branch-and-bound nodes per record of the shared-cost pass before it adds nothing.
SHARED_NODES = 5_000
#: The same for a search of the ascent. Its first types, those that can rise the most,
#: have the largest searches: on UCI Adult (8 QIs, LM, k = 5, 60 s from lattice-local's
#: release) caps of 5,000, 10,000, 20,000 and 50,000 nodes cut 494, 190, 62 and 4
#: searches, for 0.02395, 0.02407, 0.02411 and 0.02411 per cell.
ASCENT_NODES = 20_000
#: Nodes of a record's search (m(r) or its shared cost) between two reads of the deadline.
SHARED_CLOCK = 32
#: Types of the shared-cost pass between two reads of the deadline while their boxes'
#: excesses are worked out.
SHARED_CLOCK_TYPES = 256
#: Types of a protected group with the largest m whose reach the shared-cost pass reads
#: for each record, to bound the summed D of the records its search needs.
SHARED_HIGH = 256
#: Lengths of the first candidates in which the shared-cost search looks for a set's k
#: largest multipliers before the whole set.
TOP_MASKS = (64, 256, 1024, 4096)
#: Subtracted from each record's shared cost: the floats that chose its box may have
#: missed one cheaper by their rounding (sums of at most a few dozen costs of at most 1).
SHARED_MARGIN = Fraction(1, 10**9)
#: Objectives that count cells: their bounds are rounded up to a whole number.
INTEGER_OBJECTIVES = ("stars", "generalized")
#: A search stops at a box of float excess up to this: a raise of at most this adds
#: nearly nothing (a box a raise left tight keeps SHARED_MARGIN of slack, more in floats).
NO_GAIN = 10 * float(SHARED_MARGIN)
#: The share of a type's least slack that a raise of the ascent takes, and the slack at
#: most which it takes all of it (module docstring, with what halves and whole raises
#: gave). On bundled UCI Adult, k = 5, where one process searches a tenth of the types
#: in the minute, halves and whole raises give 0.02415 and 0.02421 per cell, and 0.02506
#: and 0.02499 in 120 s. Halves are also what two searches at the same multipliers may
#: raise together.
RAISE_SHARE = Fraction(1, 2)
#: See :data:`RAISE_SHARE`.
WHOLE_RAISE = 1e-3
#: The share of its least slack that each type of a pair searched at the same
#: multipliers takes: at most a half, whatever RAISE_SHARE (module docstring).
PAIR_SHARE = Fraction(1, 2)
#: How many times its own box's slack a type never searched yet counts for in the
#: ascent's order, against the slack left to a type searched before: raising more
#: types once gives more than raising fewer again, though a first search finds a
#: quarter of the own box's slack at the median. Bundled UCI Adult, k = 5, LM, from
#: lattice-local's release: 0.02380 -> 0.02390 per cell in 45 s in one process (1
#: -> 3; 0.02353 for 0.3, 0.02390 for 10), 0.02486 -> 0.02495 in 60 s in two; ARX's
#: Adult setting, k = 5, 60 s in two, 0.02550 -> 0.02565.
UNSEARCHED_FIRST = 3.0
#: The share of the time left after the shared cost that its second pass, at the
#: multipliers the first raised, may take before the ascent. Bundled UCI Adult, k = 5,
#: LM, one process, 45 s (26 s left), the second pass reading the first's boxes: 0.02484
#: per cell with 0.3, 0.02493 with 0.45, 0.02496 with 0.5, 0.02492 with 0.6, 0.02471
#: with 0.75 (the ascent's first raises, the largest, then get too little time). Before
#: it read them: 0.0243 without the pass, 0.02427 with the whole pass (26 s); a third
#: pass of 7 s after a second of 7 s, 0.02441 where the second alone for 13 s gave
#: 0.02473.
AGAIN_SHARE = 0.5
#: Boxes found around other types that the ascent keeps per type they hold (the last
#: ones). Bundled UCI Adult, k = 5, one process, 45 s: 0.02406 per cell with 2, 0.02414
#: with 4, 0.02421 with 8, 0.02415 with 16, 0.02402 with 32 (each read at every turn).
KNOWN_BOXES = 8
#: Types from which the bound searches in two processes when it may (the ascent two
#: types at a time, m(r) and the shared cost every other type). Below, one process is
#: done sooner: German credit, the 7 QIs of ``benchmarks/exact.py`` (733 types), NCP,
#: k = 10, every type raised as far as it goes in 11.1 s in one process, in 16.7 s wall
#: in two (pairs take halves where one process takes the last small raises whole: 2,978
#: raises against 1,132).
PAIRED_TYPES = 2_000
#: Seconds past the deadline that the ascent waits for its partner's search, which reads
#: the clock as often as its own.
PARTNER_GRACE = 1.0


@dataclass(frozen=True)
class LowerBound:
    """A lower bound on an objective over every release meeting some requirements.

    Attributes
    ----------
    objective : str
    value : int or Fraction
        Exact.
    method : str
        How it was found ("per-record", "class sizes", "none").
    complete : bool
        Every record got its exact m(r) (not the quicker bound or its upper bound).
    details : dict
        Records, types, how many were solved exactly, got the quicker bound (too many
        candidates, or too many branch-and-bound nodes) or were left at 0 by the time
        limit, seconds.
    """

    objective: str
    value: object
    method: str
    complete: bool = True
    details: dict = field(default_factory=dict)

    def gap(self, value) -> float | None:
        """``(value - bound) / value`` for a release's objective `value`."""
        return relative_gap(value, self.value)

    def to_dict(self) -> dict:
        return {
            "objective": self.objective,
            "value": float(self.value),
            "exact": str(self.value),
            "method": self.method,
            "complete": self.complete,
            **self.details,
        }


def lower_bound(
    instance: Instance,
    requirements: Sequence[Requirement],
    objective: str = "ncp",
    *,
    release: Release | None = None,
    time_limit: float | None = None,
    shared: bool = True,
    ascent: bool = False,
    processes: int | None = None,
) -> LowerBound:
    """A lower bound on `objective` over every release of `instance` meeting
    `requirements` (see the module docstring).

    Parameters
    ----------
    instance : Instance
    requirements : sequence of Requirement
        k-anonymity and l-diversity make the bound positive; other requirements only
        shrink the set of releases, so the bound stays valid for them.
    objective : {"ncp", "lm", "stars", "generalized", "discernibility"}
    release : Release, optional
        A release whose per-record costs prune the search (any release: a bad one only
        weakens the bound).
    time_limit : float, optional
        Seconds; records left when it runs out count 0 (the bound stays valid, and is
        marked incomplete).
    shared : bool, default=True
        Add what the classes' shared cost adds to the sum of m(r) (module docstring),
        in the time left after m(r) (``details["shared"]``); False gives the sum of m(r)
        alone.
    ascent : bool, default=False
        With `shared`, then take the shared cost again at the multipliers it raised, in
        :data:`AGAIN_SHARE` of the time left (``details["shared_again"]``), and raise
        the multipliers one type at a time (the dual ascent of the module docstring)
        until the time limit (without one, over every type): ``details["ascent"]``. It
        takes all the time given, where the shared cost ends sooner (UCI Adult: 20 s).
    processes : {1, 2}, optional
        Processes the bound searches in: with 2, m(r) and the shared cost search every
        other type in a forked process, and the ascent two types at a time (module
        docstring), each when it has at least :data:`PAIRED_TYPES` types to search.
        Default 2 when this process may fork and runs on at least two cores, else 1.

    Examples
    --------
    >>> import fairanon as fa
    >>> inst = fa.load("diva_table1")
    >>> reqs = [fa.KAnonymity(2)]
    >>> b = lower_bound(inst, reqs, "stars")
    >>> rel = fa.anonymize(inst, reqs, method="cpsat", objective="stars", seed=0)
    >>> b.value <= rel.objective
    True
    """
    started = time.perf_counter()
    if processes is None:
        processes = 2 if can_fork() and cores() >= 2 else 1
    processes = check_int(processes, "processes", "lower_bound", low=1)
    if processes > 2:
        raise InvalidParameterError(
            f"lower_bound searches in 1 or 2 processes (a pair of the ascent's raises take "
            f"half each); got processes={processes}."
        )
    if not isinstance(objective, str) or objective not in OBJECTIVES:
        spec = objective_spec(objective, "lower_bound")
        if isinstance(spec, Objective):
            return _privacy_bound(instance, spec, started)
    check_option(objective, "objective", "lower_bound", OBJECTIVES)
    if ascent and not shared:
        raise InvalidParameterError(
            "lower_bound's ascent starts from the shared cost's multipliers: "
            "ascent=True needs shared=True."
        )
    requirements = validate_requirements(instance, requirements, caller="lower_bound", sizes=False)
    k = max([r.k for r in requirements if isinstance(r, KAnonymity)] + [1])
    ls = [r for r in requirements if isinstance(r, LDiversity)]
    prot = instance.schema.protected
    groups = instance.codes(prot) if prot else np.zeros(instance.n_rows, dtype=np.int64)
    if objective == "discernibility":
        value = 0
        for size in np.bincount(np.unique(groups, return_inverse=True)[1].reshape(-1)):
            value += _even_split(int(size), k)
        return LowerBound(
            objective, value, "class sizes", details={"seconds": time.perf_counter() - started}
        )
    if k <= 1 and not ls:
        return LowerBound(objective, 0, "none", details={"seconds": time.perf_counter() - started})
    # Each requirement asks its own attribute for its l distinct values, and one
    # attribute suffices for a valid bound: the one asked the most (schema order on
    # ties), with the largest l asked of it alone (the largest l of all, applied to
    # another attribute, bounded above the optimum).
    asked: dict[str, int] = {}
    for r in ls:
        for n in requirement_targets(instance.schema, r):
            asked[n] = max(asked.get(n, 1), math.ceil(r.l))
    l_name = max((n for n in instance.schema.released if n in asked), key=asked.get, default=None)
    need_l = 1 if l_name is None else asked[l_name]
    deadline = None if time_limit is None else started + time_limit
    names = list(instance.schema.generalizable)
    dims = []
    for i, name in enumerate(names):
        # Looked at per attribute: reading every label's cost took 0.03 s on UCI Adult
        # (0.07-0.1 s wall on a loaded machine), past a deadline already gone.
        if deadline is not None and time.perf_counter() >= deadline:
            stage = (f"after the labels' costs of {i} of {len(names)} attributes" if i
                     else "before any attribute's label costs")
            return _stopped(objective, instance, stage, started)
        dims.extend(_dimensions(instance, name, objective))
    if not dims:
        return LowerBound(objective, 0, "none", details={"seconds": time.perf_counter() - started})
    target = None
    if need_l > 1:
        target = np.unique(instance.codes(l_name), return_inverse=True)[1].reshape(-1)
    if deadline is not None and time.perf_counter() >= deadline:
        return _stopped(objective, instance, "after the labels' costs", started)
    upper = _record_costs(instance, release, objective) if release is not None else None
    if deadline is not None and time.perf_counter() >= deadline:
        return _stopped(objective, instance, "after the release's record costs", started)
    found = _per_record(dims, groups, k, need_l, target, upper, deadline, processes)
    if found is None:
        return _stopped(objective, instance, "after the records' types", started)
    value, counts, types = found
    details = {"records": instance.n_rows, **counts}
    if shared and k > 1:
        raised, how, added, boxes = _shared(dims, types, k, need_l, deadline, processes)
        value += raised
        details["shared"] = {**how, "value": float(raised)}
        if ascent:
            # The shared cost again, at the multipliers it raised (module docstring).
            until = deadline
            if deadline is not None:
                left = max(0.0, deadline - time.perf_counter())
                until = time.perf_counter() + AGAIN_SHARE * left
            lifted = _lifted(types, added)
            raised, how, more, again = _shared(dims, lifted, k,
                                               need_l, until, processes, boxes)
            value += raised
            details["shared_again"] = {**how, "value": float(raised)}
            for t, x in more.items():
                added[t] = added.get(t, 0) + x
            boxes.update(again)
            raised, how = _ascent(dims, types, k, need_l, added, boxes, deadline, processes)
            value += raised
            details["ascent"] = {**how, "value": float(raised)}
        if isinstance(value, Fraction) and value.denominator == 1:
            value = int(value)
    if objective in INTEGER_OBJECTIVES:
        # Every release's count is a whole number: so is the least of them (the raises
        # are exact, so rounding up cannot pass the optimum).
        value = math.ceil(value)
    details["seconds"] = time.perf_counter() - started
    complete = counts["quick"] == 0 and counts["capped"] == 0 and counts["unsolved"] == 0
    return LowerBound(objective, value, "per-record", complete, details)


def _stopped(objective: str, instance: Instance, stage: str, started: float) -> LowerBound:
    """The bound 0, incomplete, when the time ran out at `stage` of the set-up (e.g.
    "after the labels' costs"), before any record was bounded (as every record left
    counts 0): the rest of the set-up would only pass the time limit (a quarter of a
    second on UCI Adult)."""
    details = {"records": instance.n_rows, "stopped": f"the time ran out {stage}",
               "seconds": time.perf_counter() - started}
    return LowerBound(objective, 0, "per-record", False, details)


def _privacy_bound(instance: Instance, objective: Objective, started: float) -> LowerBound:
    """The bound of a privacy objective: one class per protected value (module docstring)."""
    if objective.secondary is not None:
        raise InvalidParameterError(
            f"lower_bound has no bound for the lexicographic objective {objective}: a pair "
            "of values has no gap. Bound its terms one at a time."
        )
    prot = instance.schema.protected
    groups = instance.codes(prot) if prot else np.zeros(instance.n_rows, dtype=np.int64)
    sizes = np.bincount(np.unique(groups, return_inverse=True)[1].reshape(-1)).tolist()
    value = privacy_value(sizes, objective.primary, objective.stretch_k)
    return LowerBound(
        str(objective),
        value,
        "one class per protected value",
        details={"seconds": time.perf_counter() - started},
    )


def _even_split(n: int, k: int) -> int:
    """min sum of squared sizes of a partition of n records into classes of >= k."""
    if n < k or k <= 1:
        return n * n if n < k else n
    q = n // k
    a, rem = divmod(n, q)
    return (q - rem) * a * a + rem * (a + 1) ** 2


# ---------------------------------------------------------------------- dimensions
@dataclass
class _Dim:
    """One dimension of D: per record, an index (active value, or position) and a rule
    for the cost against another record. ``table`` (:class:`_PairCosts`, the cover of
    two values, row by row) for covers read from a table; ``up``/``down`` for the part
    of a range above / below."""

    kind: str
    index: np.ndarray  # per instance row
    table: "_PairCosts | None" = None
    positions: list | None = None  # per index, a Fraction position (ranges)
    fpos: np.ndarray | None = None
    name: str = ""


def _active(instance: Instance, name: str):
    codes = instance.codes(name)
    present, index = np.unique(codes, return_inverse=True)
    return present, index.reshape(-1).astype(np.int64)


def _dimensions(instance: Instance, name: str, objective: str) -> list[_Dim]:
    attr = instance.schema[name]
    present, index = _active(instance, name)
    m = len(present)
    if m <= 1:
        return []
    if objective == "generalized":
        return [_Dim("table", index, table=_PairCosts(m), name=name)]
    if attr.kind == "numeric":
        if objective == "stars":
            # No cost counted: a range can cover any values short of all of them at no
            # star, and the one that covers all is counted nowhere here (a weaker, valid
            # bound).
            return []
        lo, hi = Fraction(float(present[0])), Fraction(float(present[-1]))
        pos = [(Fraction(float(v)) - lo) / (hi - lo) for v in present]
        return _range_dims(index, pos, name)
    hierarchy = attr.hierarchy
    domain = attr.domain
    values = [domain[int(c)] for c in present]
    if attr.kind == "ordered":
        if objective == "stars":
            return []
        pos = [Fraction(i, m - 1) for i in range(m)]
        contiguous = True
        if hierarchy is not None and objective == "lm":
            contiguous = _contiguous_nodes(hierarchy, values)
        if contiguous or objective == "ncp":
            return _range_dims(index, pos, name)
        # LM with a non-contiguous node: the cheaper of the range and the node
        return [_Dim("table", index, table=_PairCosts(m, hierarchy, values, "lm", ranged=True), name=name)]
    return [_Dim("table", index, table=_PairCosts(m, hierarchy, values, objective), name=name)]


def _contiguous_nodes(hierarchy, values) -> bool:
    """Whether every hierarchy node covers a run of `values` (active, in domain order)."""
    pos = np.array([hierarchy.leaf_positions[hierarchy.leaf_index[v]] for v in values], dtype=np.int64)
    by_pos = np.argsort(pos, kind="stable")
    placed, rank = pos[by_pos], by_pos  # the values in depth-first order and their ranks
    ranges = np.array([hierarchy.leaf_range(node) for node in hierarchy.nodes], dtype=np.int64).reshape(-1, 2)
    lo, hi = np.searchsorted(placed, ranges[:, 0]), np.searchsorted(placed, ranges[:, 1])
    held = hi > lo
    lo, hi = lo[held], hi[held]
    if not len(lo):
        return True
    ends = np.column_stack([lo, hi]).reshape(-1)
    padded = np.append(rank, 0)  # a run may stop at the end
    first = np.minimum.reduceat(padded, ends)[::2]
    last = np.maximum.reduceat(padded, ends)[::2]
    return bool((last - first + 1 == hi - lo).all())


class _PairCosts:
    """c(i, j), the cost of the cheapest label covering active values i and j (0 when
    i = j), row by row: the lowest common hierarchy node's (`hierarchy`), its cheaper
    with the range between them for ordered LM (`ranged`), or 1 for two different
    values (no hierarchy: the ``generalized`` objective). A row is made when read, along
    the ancestors of value i (the last rows read are kept). An m x m table of Fractions
    (one lowest common ancestor a pair) took the bound 23 s CPU at 3,000 codes one
    record each (2.3 s now) and would have held 10^8 Fractions at 10,000."""

    def __init__(self, m, hierarchy=None, values=None, objective=None, ranged=False):
        self.m, self.hierarchy, self.objective, self.ranged = m, hierarchy, objective, ranged
        self._rows: dict[int, np.ndarray] = {}
        self._costs: dict = {}
        if hierarchy is not None:
            self.leaves = [hierarchy.leaf_index[v] for v in values]
            self.pos = hierarchy.leaf_positions[np.array(self.leaves, dtype=np.int64)]
            self.placed = np.sort(self.pos)

    def node_cost(self, node) -> Fraction:
        """The cost of a hierarchy node, as the old table read it per pair."""
        if node not in self._costs:
            h = self.hierarchy
            first, end = h.leaf_range(node)
            count = int(np.searchsorted(self.placed, end) - np.searchsorted(self.placed, first))
            if self.objective == "stars":
                # A node over every value present tells nothing: it counts as a star
                # (fairanon.instances.generalization.tells_nothing), whatever its name;
                # so does every label over the two values, all above it.
                self._costs[node] = Fraction(int(count == self.m))
            elif self.objective == "ncp":
                self._costs[node] = Fraction(count, self.m) if count > 1 else Fraction(0)
            else:
                self._costs[node] = Fraction(count - 1, self.m - 1)
        return self._costs[node]

    def _chain(self, i: int) -> list:
        """Value i's proper ancestors, root first, with their leaf ranges and costs."""
        h = self.hierarchy
        nodes = h.ancestors(h.leaves[self.leaves[i]])[1:][::-1]
        return [(*h.leaf_range(node), self.node_cost(node)) for node in nodes]

    def row(self, i: int) -> np.ndarray:
        """c(i, j) for every j, as floats."""
        if i in self._rows:
            return self._rows[i]
        if self.hierarchy is None:
            out = np.ones(self.m)
        else:
            out = np.zeros(self.m)
            for first, end, cost in self._chain(i):  # deeper nodes overwrite
                out[(self.pos >= first) & (self.pos < end)] = float(cost)
            if self.ranged:
                out = np.minimum(out, np.abs(np.arange(self.m) - i) / (self.m - 1))
        out[i] = 0.0
        if len(self._rows) >= 4:
            self._rows.pop(next(iter(self._rows)))
        self._rows[i] = out
        return out

    def exact(self, i: int, j: int) -> Fraction:
        if i == j:
            return Fraction(0)
        if self.hierarchy is None:
            return Fraction(1)
        cost = next(c for first, end, c in reversed(self._chain(i)) if first <= self.pos[j] < end)
        return min(Fraction(abs(i - j), self.m - 1), cost) if self.ranged else cost

    def worst(self, deadline: float | None = None) -> Fraction:
        """The largest c(i, j), or a larger cost once `deadline` (time.perf_counter)
        has passed. Without ranges, value 0's row holds it: a cost grows with what its
        node covers, and value 0 meets some value at the lowest node over them all (or,
        with no hierarchy, every other value at 1). With ranges (LM only) every row is
        read, O(m^2 depth): 0.7-0.9 s CPU at 10,000 values (a hierarchy of 50-value groups
        out of order), after which a time limit of 0.5 s was kept 0.67 s late; the clock
        is read per row, and once the deadline has passed 1 is returned, LM's largest
        cost ((m - 1)/(m - 1), a label over all m values), at least every c(i, j)."""
        best, at = -1.0, (0, 0)
        for i in range(self.m) if self.ranged else [0]:
            if self.ranged and deadline is not None and time.perf_counter() >= deadline:
                return Fraction(1)
            row = self.row(i)
            j = int(np.argmax(row))
            if row[j] > best:
                best, at = float(row[j]), (i, j)
        return self.exact(*at)


def _range_dims(index, pos, name) -> list[_Dim]:
    fpos = np.array([float(p) for p in pos])
    return [
        _Dim("up", index, positions=pos, fpos=fpos, name=name),
        _Dim("down", index, positions=pos, fpos=fpos, name=name),
    ]


def _exact(dim: _Dim, r: int, s: int) -> Fraction:
    """D of index s against index r on `dim`, exactly."""
    if dim.kind == "table":
        return dim.table.exact(r, s)
    diff = dim.positions[s] - dim.positions[r]
    return max(diff, Fraction(0)) if dim.kind == "up" else max(-diff, Fraction(0))


def _floats(dim: _Dim, r: int, s: np.ndarray) -> np.ndarray:
    if dim.kind == "table":
        return dim.table.row(r)[s]
    diff = dim.fpos[s] - dim.fpos[r]
    return np.maximum(diff, 0.0) if dim.kind == "up" else np.maximum(-diff, 0.0)


def _values(dim: _Dim) -> int:
    """How many values the dimension's index takes (every one present)."""
    return len(dim.fpos) if dim.kind != "table" else int(dim.index.max()) + 1


#: Values of a table up to which the trie of :class:`_Index` reads all its rows to order
#: its levels (beyond, the table's level comes last).
SPREAD_VALUES = 128

#: Values per dimension up to which its float D is kept as an m x m matrix (8 MB at most).
MATRIX_VALUES = 1_024


class _Costs:
    """The float D of a record type against many, as :func:`_floats` gives it column by
    column: from one m x m matrix per dimension of at most :data:`MATRIX_VALUES` values
    (a row filled when first read; the ranges' in full, the tables' by
    :meth:`_PairCosts.row`), read for every dimension at once by one gather when all
    dimensions have one. Building D per dimension (a table row, or a range's difference
    and maximum, then ``np.column_stack``) took a third of the per-record pass on UCI
    Adult."""

    def __init__(self, dims: list[_Dim], idx: np.ndarray):
        self.dims, self.idx = dims, idx
        sizes = [_values(d) for d in dims]
        small = [m <= MATRIX_VALUES for m in sizes]
        self.flat = np.empty(sum(m * m for m, ok in zip(sizes, small) if ok))
        self.mats, self.filled, self.offsets = [], [], []
        at = 0
        for d, m, ok in zip(dims, sizes, small):
            if not ok:
                self.mats.append(None)
                self.filled.append(None)
                self.offsets.append(-1)
                continue
            mat = self.flat[at: at + m * m].reshape(m, m)
            if d.kind == "table":
                self.filled.append(np.zeros(m, dtype=bool))
            else:
                diff = d.fpos[None, :] - d.fpos[:, None]  # diff[r, s] = fpos[s] - fpos[r]
                mat[:] = np.maximum(diff, 0.0) if d.kind == "up" else np.maximum(-diff, 0.0)
                self.filled.append(None)
            self.mats.append(mat)
            self.offsets.append(at)
            at += m * m
        self.sizes = sizes
        self.all_small = all(small)
        if self.all_small:
            # per type and dimension, where its value's column starts in `flat`
            self.base = idx + np.array(self.offsets, dtype=np.int64)[None, :]

    def row(self, j: int, r: int) -> np.ndarray:
        """Dimension j's D against value r, for every value (j a table, or a range of
        at most :data:`MATRIX_VALUES` values)."""
        mat = self.mats[j]
        if mat is None:
            d = self.dims[j]
            return d.table.row(r) if d.kind == "table" else _floats(d, r, np.arange(self.sizes[j]))
        filled = self.filled[j]
        if filled is not None and not filled[r]:
            mat[r] = self.dims[j].table.row(r)
            filled[r] = True
        return mat[r]

    def against(self, t: int, types: np.ndarray) -> np.ndarray:
        """D of type t against `types`, an (n, q) C-ordered array of floats."""
        own = self.idx[t]
        if self.all_small:
            shift = np.empty(len(own), dtype=np.int64)
            for j, r in enumerate(own.tolist()):
                self.row(j, r)
                shift[j] = r * self.sizes[j]
            return self.flat[self.base[types] + shift]
        out = np.empty((len(types), len(own)))
        for j, r in enumerate(own.tolist()):
            if self.mats[j] is None:
                out[:, j] = _floats(self.dims[j], r, self.idx[types, j])
            else:
                out[:, j] = self.row(j, r)[self.idx[types, j]]
        return out


# ---------------------------------------------------------------------- per record
def _record_costs(instance, release, objective) -> tuple[list, np.ndarray] | None:
    """Each record's exact cost in `release`, as the distinct costs (Fractions, sorted)
    and each record's index among them; None if the release cannot be read.

    The label costs are put over one common denominator, so that a record's cost is an
    integer sum (in int64 when it cannot overflow)."""
    from .metrics.classes import _prepare

    if objective == "generalized":
        return None  # per-cell 0/1 against the value: not worth the parsing here
    try:
        p = _prepare(instance, release, "lower_bound")
    except Exception:  # noqa: BLE001 - an unreadable release only loses the pruning
        return None
    per_label, codes = [], []
    for name in instance.schema.generalizable:
        col = p.qi[name]
        if objective == "stars":
            per_label.append([Fraction(int(s)) for s in col.tells_nothing])
        else:
            per_label.append(col.cell_values(objective, "width", exact=True))
        codes.append(p.to_instance_order(np.asarray(col.codes, dtype=np.int64)))
    den = math.lcm(1, *(c.denominator for costs in per_label for c in costs))
    numerators = [[c.numerator * (den // c.denominator) for c in costs] for costs in per_label]
    largest = sum(max(nums, default=0) for nums in numerators)
    dtype = np.int64 if largest < 2**62 else object
    total = np.zeros(instance.n_rows, dtype=dtype)
    for nums, rows in zip(numerators, codes):
        total = total + np.array(nums, dtype=dtype)[rows]
    values, rank = np.unique(total, return_inverse=True)
    return [Fraction(int(v), den) for v in values.tolist()], rank.reshape(-1)


def _per_record(dims, groups, k, need_l, target, upper, deadline, processes=1):
    """Sum of m(r) over the records (see the module docstring), by distinct type; with
    `processes` = 2, every other type in a forked process (:func:`_in_two`). None when
    the deadline passed while the types were read (before any search)."""
    columns = [d.index for d in dims if d.kind != "down"]
    key = np.column_stack(
        [groups.astype(np.int64), *columns] + ([target] if target is not None else [])
    )
    uniq, inverse = unique_rows(key)
    n_types = len(uniq)
    weight = np.bincount(inverse, minlength=n_types)
    first = np.full(n_types, len(inverse), dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(len(inverse)))
    idx = np.column_stack([d.index[first] for d in dims])  # per type, per dim
    group = groups[first]
    sens = target[first] if target is not None else None
    # The most a record can cost: the largest cover per table, a whole range per range.
    worst = Fraction(0)
    for d in dims:
        if d.kind == "table":
            worst += d.table.worst(deadline)
        elif d.kind == "up":
            worst += d.positions[-1] - d.positions[0]
    ub = [worst] * n_types
    ub_f = np.full(n_types, float(worst))
    if upper is not None:
        costs, rank = upper  # a type's records may sit in classes of different costs
        highest = np.zeros(n_types, dtype=np.int64)
        np.maximum.at(highest, inverse, rank)
        below = bisect.bisect_left(costs, worst)  # costs from here on are at least `worst`
        ub = [costs[i] if i < below else worst for i in highest.tolist()]
        # As floats from the few distinct costs: float() of each type's Fraction took
        # 0.1 s on the KDD census' 157,417 types.
        costs_f = np.array([float(c) for c in costs[:below]] + [float(worst)])
        ub_f = costs_f[np.minimum(highest, below)]
    if deadline is not None and time.perf_counter() >= deadline:
        return None
    counts = {"types": n_types, "solved": 0, "quick": 0, "capped": 0, "unsolved": 0}
    total = Fraction(0)
    pi = [Fraction(0)] * n_types  # m(r) or the lower bound found for it, per type
    boxes = [None] * n_types  # per type whose m(r) a box attains: (its other types, cost)
    table = _Costs(dims, idx)
    by_group = {g: _Index(np.flatnonzero(group == g), idx, dims, table)
                for g in np.unique(group).tolist()}
    for index in by_group.values():
        index.worst = float(worst)  # u(r) of all '*' is every type's within reach
    # The types that can add the most (weight times upper cost) first, so that a bound
    # cut short by its time holds most of what the whole would.
    most = ub_f * weight

    def solve(t) -> tuple:
        """How m(r) of type t ended, it (or the lower bound found for it) and its box."""
        if deadline is not None and time.perf_counter() >= deadline:
            return "unsolved", Fraction(0), None  # bounded by 0 only
        need = k - int(weight[t])
        if ub[t] == 0 or (need <= 0 and (sens is None or need_l <= 1)):
            return "solved", Fraction(0), None  # m(r) <= u(r) = 0, or r's type alone is a class
        u = float(ub[t])
        index = by_group[int(group[t])]
        members = index.near(idx[t], u + 1e-6)  # all those within u (sums round below 1e-6)
        members = index.within(idx[t], u, members[members != t])
        D = table.against(t, members)
        total_d = D.sum(axis=1)
        own_sens = sens[t] if sens is not None else None
        # The box of the nearest candidates is one the search would find, so no box
        # costing more counts, nor a candidate whose summed D does (a box dominating it
        # costs at least that).
        radius = min(u, _nearest_box(D, weight[members], max(need, 0), total_d,
                                     sens[members] if sens is not None else None,
                                     own_sens, need_l))
        keep = total_d <= radius + 1e-9
        cand, D, total_d = members[keep], D[keep], total_d[keep]
        w = weight[cand].astype(np.int64)
        chosen, how = _min_box(
            D, w, max(need, 0), sens, cand, own_sens, need_l, radius, total_d, deadline
        )
        if chosen is None:
            return how, ub[t], None
        # per dim, the candidate position giving the threshold (or -1)
        exact = Fraction(0)
        for j, d in enumerate(dims):
            if chosen[j] >= 0:
                exact += _exact(d, int(idx[t, j]), int(idx[cand[chosen[j]], j]))
        box = None
        if how == "solved":  # a box (the quicker bound's picks are none)
            th = np.array([D[c, j] if c >= 0 else 0.0 for j, c in enumerate(chosen)])
            box = (cand[(D <= th + 1e-15).all(axis=1)], exact)
        return how, min(exact, ub[t]), box

    order = np.argsort(-most, kind="stable").tolist()
    pi_f = np.zeros(n_types)
    for t, (how, value, box) in zip(order, _in_two(order, solve, processes, deadline,
                                                   ("unsolved", Fraction(0), None))):
        counts[how] += 1
        if value:  # Fraction arithmetic only where it adds (most types are unsolved at scale)
            pi[t], pi_f[t] = value, float(value)
            total += value * int(weight[t])
        boxes[t] = box
    types = _Types(weight, idx, group, sens, ub, pi, by_group, table, boxes, pi_f)
    return (int(total) if total.denominator == 1 else total), counts, types


def _in_two(items: list, work, processes: int, deadline, missing) -> list:
    """``[work(x) for x in items]``; with `processes` = 2 and at least
    :data:`PAIRED_TYPES` items, every other item is worked in a forked process (the
    items come most important first, so both halves hold as much when time runs out).
    The items of a process that gave no answer by the deadline (and
    :data:`PARTNER_GRACE` seconds) get `missing`."""
    if processes < 2 or len(items) < PAIRED_TYPES or not can_fork():
        return _until(items, work, deadline, missing)
    context = multiprocessing.get_context("fork")
    conn, child = context.Pipe(duplex=False)
    process = context.Process(target=_work_out,
                              args=(child, conn, work, items[1::2], os.getpid(), deadline),
                              daemon=True)
    start_forked(process)
    child.close()
    try:
        here = _until(items[0::2], work, deadline, missing)
        there = _answer(conn, deadline)
    finally:
        if process.is_alive():
            process.terminate()
        process.join()
        conn.close()
    out = [missing] * len(items)
    out[0::2] = here
    if there is not None:  # the items worked before the deadline
        out[1 : 2 * len(there) : 2] = there
    return out


def _until(items: list, work, deadline, missing) -> list:
    """``[work(x) for x in items]`` until `deadline`, `missing` for the items after it
    (each `work` reads the clock too, but on the KDD census' 160,501 types the calls
    that only found the time gone took 0.4 s past the deadline)."""
    out = []
    for i, x in enumerate(items):
        if deadline is not None and time.perf_counter() >= deadline:
            return out + [missing] * (len(items) - i)
        out.append(work(x))
    return out


def _answer(conn, deadline):
    """What a forked search sent on `conn` (``("ok", value)``: the value), or None when
    it sent nothing by `deadline` and :data:`PARTNER_GRACE` seconds (its searches read
    the clock as this process's do) or has ended; its error (``("error", traceback)``)
    is raised here."""
    wait = None
    if deadline is not None:
        wait = max(0.0, deadline - time.perf_counter()) + PARTNER_GRACE
    try:
        if not conn.poll(wait):
            return None
        kind, value = conn.recv()
    except (EOFError, OSError):
        return None
    if kind == "error":
        raise RuntimeError(f"a search of the lower bound failed in its forked process: {value}")
    return value


def _work_out(conn, parents, work, items, parent: int, deadline) -> None:
    """The forked half of :func:`_in_two`: the items worked before `deadline` are sent
    (the others, `missing` in the parent, are not: on the KDD census' 80,000 types of a
    half, sending them passed a deadline of 0.5 s by 0.1 s); Ctrl-C is the parent's to
    handle (it ends this process), and a parent that has ended, however, ends it too."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parents.close()
    try:
        out = []
        for x in items:
            if os.getppid() != parent:
                return
            if deadline is not None and time.perf_counter() >= deadline:
                break
            out.append(work(x))
        answer = ("ok", out)
    except Exception:  # noqa: BLE001 -- the parent raises it
        answer = ("error", traceback.format_exc())
    with contextlib.suppress(OSError):
        conn.send(answer)
    conn.close()


@dataclass
class _Types:
    """The distinct records of :func:`_per_record` and what it found for them: weight,
    per-dimension index, protected group, sensitive value (or None), upper cost u(r),
    m(r) (or the lower bound found for it), the groups' indexes, the float D and, per
    type whose m(r) a box attains (a search of :func:`_min_box` run to its end), that
    box: the other types it covers and its exact cost (None for the other types)."""

    weight: np.ndarray
    idx: np.ndarray
    group: np.ndarray
    sens: np.ndarray | None
    ub: list
    pi: list
    by_group: dict
    costs: _Costs
    boxes: list
    #: m(r) as floats (the search's multipliers), kept beside `pi`: reading 160,501
    #: Fractions as floats took a quarter of a second on the KDD census.
    pi_f: np.ndarray


def _lifted(types: _Types, added: dict) -> _Types:
    """`types` with each type's m(r) raised by what `added` adds to it (exact and float)."""
    pi, pi_f = list(types.pi), types.pi_f.copy()
    for t, x in added.items():
        pi[t] = pi[t] + x
        pi_f[t] = float(pi[t])
    return dataclasses.replace(types, pi=pi, pi_f=pi_f)


def _nested(dims) -> bool:
    """Whether the covers nest (ranges, hierarchy nodes), so that a box around type t
    holding s is one around s (the same records, the same cost): not where LM takes the
    cheaper of a range and a hierarchy node that is no run of values."""
    # A table that does not say (one made elsewhere) is taken as not nesting.
    return not any(d.kind == "table" and getattr(d.table, "ranged", True) for d in dims)


def _shared(dims, types: _Types, k: int, need_l: int, deadline,
            processes: int = 1, earlier: dict | None = None) -> tuple[Fraction, dict, dict, dict]:
    """What the shared cost of the classes adds to the sum of m(r): the sum over the
    types of their weight times max(0, s(r)) (see the module docstring), until
    `deadline` (types left add 0).

    The box that attains m(r) holds r and k records, so its excess -- its cost (m(r), or
    a little more when m(r) is u(r)) less the mean of the k largest m it covers -- is at
    least s(r): a type whose box has no excess adds
    nothing unsearched, and the others are searched for a box of less excess than their
    own, the most weight times excess first (a bound cut short by its time holds most of
    what the whole would); a search that finds none adds that excess. The types whose
    m(r) no box attains (the quicker bound, or u(r)) are searched last, from u(r) (an
    excess no box below it reaches adds 0 then). With `processes` = 2, every other type
    is searched in a forked process (:func:`_in_two`). Returns the sum; how many types added
    something, were searched to the end, had a box of no excess, were cut by
    :data:`SHARED_NODES` or by the time (each adds 0 then); per type that added
    something, what it added per record (exact); and per type whose search ran to its
    end and found a box below the least excess known to hold it, that box (the types it
    holds, its exact cost). `earlier`, such boxes of an earlier pass, bound the excess
    of the types they hold (where the covers nest) before any search.
    """
    weight, idx, pi = types.weight, types.idx, types.pi
    counts = {"raised": 0, "searched": 0, "no_excess": 0, "cut": 0, "unsearched": 0}
    lam = types.pi_f.copy()  # the searches read it; the types keep their own
    positive = int((lam > 0).sum())
    own = {}  # per type with a box: its excess, exact
    for t, box in enumerate(types.boxes):
        # The clock is read every SHARED_CLOCK_TYPES types: the excesses of Adult's 17,014
        # boxes took 0.36 s CPU, past a deadline m(r) may have reached.
        if deadline is not None and t % SHARED_CLOCK_TYPES == 0 and time.perf_counter() >= deadline:
            counts["unsearched"] = positive
            return Fraction(0), counts, {}, {}
        if box is not None and pi[t] > 0:
            covers, cost = box
            own[t] = cost - _top_k(np.concatenate([[t], covers]), lam, pi, weight, k) / k
    nested = _nested(dims)
    for i, (t, (rows, cost)) in enumerate((earlier or {}).items()):
        # Boxes found before: where the covers nest, each is one around every type it
        # holds, so its excess at these multipliers bounds theirs.
        if deadline is not None and i % SHARED_CLOCK_TYPES == 0 and time.perf_counter() >= deadline:
            counts["unsearched"] = positive
            return Fraction(0), counts, {}, {}
        excess = cost - _top_k(rows, lam, pi, weight, k) / k
        for u in (rows.tolist() if nested else [t]):
            if pi[u] > 0 and (u not in own or excess < own[u]):
                own[u] = excess
    boxed = [t for t, e in own.items() if e > 0]
    counts["no_excess"] = len(own) - len(boxed)
    excess_f = np.array([float(own[t]) for t in boxed])
    boxed = np.array(boxed, dtype=np.int64)[np.argsort(-excess_f * weight[boxed], kind="stable")]
    rest = np.array([t for t in np.flatnonzero(lam > 0).tolist() if t not in own], dtype=np.int64)
    rest = rest[np.argsort(-lam[rest] * weight[rest], kind="stable")]
    highest = {}  # per group, the types of its largest m and the largest m of the others
    total = Fraction(0)
    added = {}  # per type raised, what it adds per record (exact)
    known = {}  # per type, the least excess (exact) of a box a search found holding it

    def settle(t) -> tuple:
        """How the search of type t ended, what it adds per record (None: nothing) and
        the box it found below its own (the types it holds and its exact cost; None)."""
        if deadline is not None and time.perf_counter() >= deadline:
            return "unsearched", None, None
        upper = own.get(t)  # the least excess of a box known to hold t
        if t in known and (upper is None or known[t] < upper):
            upper = known[t]
        if upper is not None and upper <= NO_GAIN:
            return "no_excess", None, None
        best0 = float(upper) if upper is not None else float(types.ub[t])
        found, how, cand = _excess_search(t, lam, best0, types, highest, k, need_l, deadline)
        if found is not None:
            # Where the covers nest, the box is one around each type it holds, of the
            # same excess at these multipliers: a bound on theirs, searched below it.
            cost = _box_cost(dims, idx, t, cand, found[0])
            box = (cand[found[1]], cost)
            excess = cost - _top_k(box[0], lam, pi, weight, k) / k
            for u in (box[0].tolist() if nested else [t]):
                if u not in known or excess < known[u]:
                    known[u] = excess
        if how != "searched":
            return how, None, None
        if found is None:
            if upper is None:
                return how, None, None
            excess = upper  # no box has less excess than one known to hold t
        elif upper is not None:
            excess = min(excess, upper)
        excess -= SHARED_MARGIN  # the floats that chose the box may have missed a cheaper one
        return how, (excess if excess > 0 else None), (box if found is not None else None)

    order = boxed.tolist() + rest.tolist()
    boxes = {}
    for t, (how, excess, box) in zip(order, _in_two(order, settle, processes, deadline,
                                                    ("unsearched", None, None))):
        counts[how] += 1
        if box is not None:
            boxes[t] = box
        if excess is not None:
            counts["raised"] += 1
            total += excess * int(weight[t])
            added[t] = excess
    return total, counts, added, boxes


def _ascent(dims, types: _Types, k: int, need_l: int, added: dict, boxes: dict, deadline,
            processes: int = 1) -> tuple[Fraction, dict]:
    """What raising the multipliers one type at a time adds to the shared-cost bound,
    until `deadline` (see the module docstring): from lam = m(r) plus what the shared
    cost added for r (`added`; `boxes`, per type, the box its search found), each type
    with a box, the largest raise its box (or the box of least slack known to hold it)
    allows now times its weight first (:data:`UNSEARCHED_FIRST` times for a type not
    searched yet), is raised by :data:`RAISE_SHARE` of what every box holding it allows
    (then queued again; all of it when that is at most :data:`WHOLE_RAISE`); the types
    of a box left with no slack are not searched. With `processes` = 2 and at least
    :data:`PAIRED_TYPES` types to raise, two types are searched at a time, the second in
    a forked process (:class:`_Partner`), at the same multipliers, each then raised by
    :data:`PAIR_SHARE`. Returns the sum of the raises times the weights and how many
    types were raised, searched to the end, had a box of no slack, were cut by
    :data:`ASCENT_NODES` or by the time, and how many searches ran in pairs."""
    counts = {"raised": 0, "searched": 0, "no_excess": 0, "cut": 0, "unsearched": 0, "paired": 0}
    lifted = _lifted(types, added)
    weight, lam_x, lam = types.weight, lifted.pi, lifted.pi_f  # exact, and as floats
    slack = {}
    for t, box in enumerate(types.boxes):
        if deadline is not None and t % SHARED_CLOCK_TYPES == 0 and time.perf_counter() >= deadline:
            counts["unsearched"] = sum(1 for b in types.boxes if b is not None)
            return Fraction(0), counts
        if box is not None:
            covers, cost = box
            slack[t] = cost - _top_k(np.concatenate([[t], covers]), lam, lam_x, weight, k) / k
    # A raise of lam by d on each of a type's w records adds at most min(w, k) d / k to
    # the mean of the k largest lam of a box holding them.
    share = {t: Fraction(k, min(int(weight[t]), k)) for t in slack}
    # The types of a box with no slack left (at most NO_GAIN): none of them can rise (lam
    # only rise, so slacks only fall), and their searches are skipped. On UCI Adult a
    # third of the searches found such a box, most often one a raise before had left
    # tight. A box around t holding s is one around s (the same records, the same cost)
    # where the covers nest (ranges, hierarchy nodes); not where LM takes the cheaper of
    # a range and a node that is no run of values, and there only t is left out.
    nested = _nested(dims)
    tight: set = set()

    def close(t, rows) -> None:
        tight.update(rows.tolist() if nested else [t])

    for t, e in slack.items():
        if e <= NO_GAIN:
            close(t, np.concatenate([[t], types.boxes[t][0]]))

    seen: set = set()  # the types searched so far
    last_box: dict = {}  # per type, the box of least slack its last search found
    known: dict = {}  # per type, the last KNOWN_BOXES boxes other types' searches found

    def register(t, rows, box) -> None:
        for u in (rows.tolist() if nested else ()):
            if u != t:
                kept = known.setdefault(u, [])
                kept.append((rows, box))
                del kept[:-KNOWN_BOXES]

    for t, (rows, box) in boxes.items():  # the shared cost's searches
        last_box[t] = (rows, box)
        register(t, rows, box)

    def most(t, e) -> float:
        # What t adds when `e` (the least slack of its own box, the box its last search
        # found and those known to hold it) bounds its raise, a type never searched
        # counting UNSEARCHED_FIRST times: the order of the raises (UCI Adult, 60 s:
        # 0.02411 per cell in the order of the slacks at the start, 0.02413 with each
        # type put back in its place when its slack fell).
        return float(e * share[t]) * int(weight[t]) * (1.0 if t in seen else UNSEARCHED_FIRST)

    queue = [(-most(t, e), t) for t, e in slack.items() if t not in tight]
    heapq.heapify(queue)
    counts["no_excess"] = len(slack) - len(queue)

    def next_type():
        """The type whose own box, or the box its last search found or one found around
        another type that holds it when that has less, has the most slack now (times
        its share, its weight and, not searched yet, UNSEARCHED_FIRST), with that slack,
        the box's rows and cost; None when no type is left."""
        while queue:
            _, t = heapq.heappop(queue)
            if t in tight:
                counts["no_excess"] += 1
                continue
            covers, cost = types.boxes[t]
            own = np.concatenate([[t], covers])
            # The slack of its own box now (types raised before may share it).
            best = cost - _top_k(own, lam, lam_x, weight, k) / k
            # The box its last search found, and those found around other types that hold
            # it, if one has less now.
            for rows, box in ([last_box[t]] if t in last_box else []) + known.get(t, []):
                slack_now = box - _top_k(rows, lam, lam_x, weight, k) / k
                if slack_now < best:
                    best, own, cost = slack_now, rows, box
            if best <= NO_GAIN:
                close(t, own)
                counts["no_excess"] += 1
                continue
            if queue and most(t, best) < -queue[0][0]:
                heapq.heappush(queue, (-most(t, best), t))  # another can now rise more
                continue
            return t, best, own, cost
        return None

    partner = None
    if processes > 1 and len(queue) >= PAIRED_TYPES and can_fork():
        partner = _Partner(dims, types, k, need_l, deadline, lam_x, lam)
    highest: dict = {}
    total = Fraction(0)
    changed = []  # the raises the partner has not seen: (type, its lam, exact)
    try:
        while queue:
            if deadline is not None and time.perf_counter() >= deadline:
                counts["unsearched"] += sum(1 for _, s in queue if s not in tight)
                counts["no_excess"] += sum(1 for _, s in queue if s in tight)
                break
            first = next_type()
            if first is None:
                break
            picked = [first]
            if partner is not None and first[1] > WHOLE_RAISE:
                second = next_type()
                if second is not None and second[1] > WHOLE_RAISE:
                    picked.append(second)
                    partner.ask(changed, second[0], float(second[1]))
                    changed = []
                elif second is not None:  # a raise it may take whole: searched alone later
                    heapq.heappush(queue, (-most(second[0], second[1]), second[0]))
            found = [_ascent_search(first[0], float(first[1]), lam, types, highest, dims, k,
                                    need_l, deadline)]
            if len(picked) == 2:
                counts["paired"] += 2
                answer = partner.answer(deadline)
                if answer is None:  # no answer in time: the rest is searched here
                    partner.stop(0.0)
                    partner = None
                    answer = ("unsearched", None, None)
                found.append(answer)
            # Both searches read the same multipliers: each type's least slack is found
            # at them before either rises. A class holding both types had at least the
            # larger of the two slacks, so half of each fits in it.
            raises = []
            for (t, best, own, cost), (how, rows, box) in zip(picked, found):
                counts[how] += 1
                if how == "no_excess":
                    close(t, rows)
                if how != "searched":
                    continue
                if rows is not None:
                    excess = box - _top_k(rows, lam, lam_x, weight, k) / k
                    if excess < best:
                        best, own, cost = excess, rows, box
                    last_box[t] = (rows, box)
                    register(t, rows, box)
                best -= SHARED_MARGIN  # the floats that chose the box may have missed a tighter one
                if best > 0:
                    raises.append((t, best, own, cost))
            seen.update(t for t, *_ in picked)
            for t, best, own, cost in raises:
                whole = len(picked) == 1 and best <= WHOLE_RAISE
                step = best if whole else best * (RAISE_SHARE if len(picked) == 1 else PAIR_SHARE)
                lam_x[t] += step * share[t]
                lam[t] = float(lam_x[t])
                if partner is not None:
                    changed.append((t, lam_x[t]))
                highest.pop(int(types.group[t]), None)  # its group's largest lam may have changed
                counts["raised"] += 1
                total += step * share[t] * int(weight[t])
                if not whole:
                    heapq.heappush(queue, (-most(t, best - step), t))
                elif cost - _top_k(own, lam, lam_x, weight, k) / k <= NO_GAIN:
                    # The box that bounded the raise is left with the margin, unless t's
                    # records are not all among its k largest lam.
                    close(t, own)
    finally:
        if partner is not None:
            partner.stop()
    return total, counts


def _ascent_search(t, best0, lam, types, highest, dims, k, need_l, deadline) -> tuple:
    """The ascent's search for type t below `best0` (:func:`_excess_search`): how it
    ended, the rows of the box it found (a box of no slack, or of the least excess
    below `best0`; else None) and, for the latter, the box's exact cost."""
    found, how, cand = _excess_search(t, lam, best0, types, highest, k, need_l, deadline,
                                      ASCENT_NODES)
    if found is None:
        return how, None, None
    box = _box_cost(dims, types.idx, t, cand, found[0]) if how == "searched" else None
    return how, cand[found[1]], box


def _partner(conn, parents, dims, types, k, need_l, deadline, lam_x, lam) -> None:
    """The searches of :class:`_Partner`, in the forked process: each request brings the
    raises made since the last (so that the multipliers here are those of the parent)
    and a type to search; Ctrl-C is the parent's to handle (it ends this process). The
    parent's end of the pipe is closed here, so that this process reads the end of it
    when the parent ends, however it ends."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parents.close()
    highest: dict = {}
    while True:
        try:
            request = conn.recv()
        except (EOFError, OSError):
            return
        if request is None:
            return
        changed, t, best0 = request
        for s, value in changed:
            lam_x[s] = value
            lam[s] = float(value)
            highest.pop(int(types.group[s]), None)
        try:
            answer = ("ok", _ascent_search(t, best0, lam, types, highest, dims, k, need_l,
                                           deadline))
        except Exception:  # noqa: BLE001 -- the parent raises it
            answer = ("error", traceback.format_exc())
        try:
            conn.send(answer)
        except OSError:  # the parent has ended
            return
        if answer[0] == "error":
            return


class _Partner:
    """A forked process that searches the second type of each pair of the ascent (its
    copy of the multipliers kept in step by the raises sent with each request)."""

    def __init__(self, dims, types, k, need_l, deadline, lam_x, lam):
        context = multiprocessing.get_context("fork")
        self._conn, child = context.Pipe()
        self._process = context.Process(
            target=_partner,
            args=(child, self._conn, dims, types, k, need_l, deadline, lam_x, lam),
            daemon=True,
        )
        start_forked(self._process)
        child.close()

    def ask(self, changed, t, best0) -> None:
        """Send a request (a process that has ended then gives no answer)."""
        with contextlib.suppress(OSError, ValueError):
            self._conn.send((changed, t, best0))

    def answer(self, deadline) -> tuple | None:
        """The search's result, or None when none came in time (:func:`_answer`)."""
        return _answer(self._conn, deadline)

    def stop(self, patience: float = PARTNER_GRACE) -> None:
        """End the process: asked to, then after `patience` seconds terminated."""
        with contextlib.suppress(OSError, ValueError):
            self._conn.send(None)
        self._process.join(patience)
        if self._process.is_alive():
            self._process.terminate()
            self._process.join()
        self._conn.close()


def _excess_search(t, lam, best0, types, highest, k, need_l, deadline, cap=SHARED_NODES):
    """:func:`_least_excess` for type t at multipliers `lam` (floats) below `best0`, over
    the types that a box of less excess can hold; `highest` caches, per protected group,
    its types of largest lam (drop a group's entry when its lam change). Returns the
    search's result and how it ended, and the candidates its rows are."""
    weight, idx, group, sens = types.weight, types.idx, types.group, types.sens
    index = types.by_group[int(group[t])]
    # The boxes that could cost less than best0 in excess: those whose cost minus the
    # largest lam(s) of a record s within it is below best0 (module docstring). None
    # holds a record s whose summed D is above best0 plus the largest lam of a record
    # within it (its cost less any lam is above best0), so none beyond best0 plus L',
    # the larger of L, the largest lam but the group's SHARED_HIGH largest, and the
    # largest lam of those whose summed D less their lam is below best0 (the largest lam
    # within a box beyond best0 + L is one of them): the types within that, all of them
    # (those the trie finds, within a margin of the sums' rounding, then the sum). The
    # group's largest m instead of L' kept nearly every type on UCI Adult, a third of
    # the pass.
    if int(group[t]) not in highest:
        ranked = index.members[np.argsort(-lam[index.members], kind="stable")]
        floor = float(lam[ranked[SHARED_HIGH]]) if len(ranked) > SHARED_HIGH else 0.0
        highest[int(group[t])] = (ranked[:SHARED_HIGH], floor)
    high, floor = highest[int(group[t])]
    near = lam[high] - types.costs.against(t, high).sum(axis=1) > -best0 - 1e-6
    reachable = best0 + max([floor] + lam[high[near]].tolist()) + 1e-7
    members = np.sort(index.near(idx[t], reachable + 1e-6))
    D = types.costs.against(t, members)
    reach = D.sum(axis=1)
    inside = reach <= reachable
    members, D, reach = members[inside], D[inside], reach[inside]
    order = np.argsort(reach, kind="stable")
    lows = reach[order] - np.maximum.accumulate(lam[members[order]])
    under = np.flatnonzero(lows < best0 + 1e-9)
    radius = reach[order[under[-1]]] if len(under) else 0.0
    radius = _narrowed(radius, reach, lam[members], weight[members], best0, k)
    keep = reach <= radius + 1e-9
    keep[members == t] = False
    cand, D = members[keep], D[keep]
    # The record's own type leads the candidates, at D = 0.
    cand = np.concatenate([[t], cand])
    D = np.vstack([np.zeros((1, D.shape[1])), D])
    found, how = _least_excess(D, weight[cand].astype(np.int64), lam[cand], k,
                               sens[cand] if sens is not None else None, need_l, best0,
                               deadline, cap)
    return found, how, cand


def _box_cost(dims, idx, t, cand, picks) -> Fraction:
    """The exact cost of the box around type t whose threshold on each dimension is the
    D of the candidate `picks` names there (none: -1)."""
    cost = Fraction(0)
    for j, d in enumerate(dims):
        if picks[j] >= 0:
            cost += _exact(d, int(idx[t, j]), int(idx[cand[picks[j]], j]))
    return cost

def _top_k(rows: np.ndarray, lam: np.ndarray, pi: list, weight: np.ndarray, k: int) -> Fraction:
    """The sum of the k largest multipliers `pi` (exact; `lam` as floats) over the
    records of the types `rows`."""
    out, left = Fraction(0), k
    for s in rows[np.argsort(-lam[rows], kind="stable")].tolist():
        take = min(int(weight[s]), left)
        out += pi[s] * take
        left -= take
        if not left:
            break
    return out


def _narrowed(radius: float, reach: np.ndarray, lam: np.ndarray, weight: np.ndarray,
              best0: float, k: int) -> float:
    """A radius (in summed D, `reach`) that every box of excess below `best0` lies
    within, from one that does (`radius`), for records of multipliers `lam` and weights
    `weight`: a box within the radius covers records within it only, so the mean of its
    k largest lam is at most T / k, T the sum of the k largest within the radius, and
    its cost, at least the reach of each record it covers, is below best0 + T / k,
    a smaller radius, until it holds."""
    while True:
        keep = reach <= radius + 1e-9
        within = best0 + _top_sum(lam[keep], weight[keep], k) / k + 1e-7
        if not within < radius:  # also ends on a NaN
            return radius
        radius = within


def _top_sum(lam: np.ndarray, weight: np.ndarray, k: int) -> float:
    """The sum of the k largest multipliers (floats) over the records of types of
    multipliers `lam` and weights `weight` (fewer than k records: all of them)."""
    if len(lam) > k:  # every type weighs at least 1: the k largest types hold them
        top = np.argpartition(-lam, k - 1)[:k]
        lam, weight = lam[top], weight[top]
    order = np.argsort(-lam, kind="stable")
    taken = np.minimum(weight[order], np.maximum(0, k - (np.cumsum(weight[order]) - weight[order])))
    return float((lam[order] * taken).sum())


def _least_excess(D, w, lam, k, sens, need_l, best0, deadline=None, cap=SHARED_NODES):
    """min over boxes (a threshold per dimension on D) covering at least k records (and
    l sensitive values) of the box's cost minus the mean of the k largest lam among the
    records it covers; row 0, the record's own type, has D = 0 and is always covered.
    Returns ((per-dimension row giving each threshold or -1, the rows covered), how):
    None when no box is below `best0` ("searched"), stops at the first box of excess at
    most :data:`NO_GAIN` (that box, "no_excess": the record adds nothing), None when the
    search passes `cap` nodes ("cut"), and None once `deadline` (``time.perf_counter``,
    read every :data:`SHARED_CLOCK` nodes) has passed ("unsearched"): a search over
    20,000 candidates of 16 dimensions of 1,000 values each takes 1-2 s CPU to reach
    its node cap (8-15 s when each node stepped through the values one at a time)."""
    n, q = D.shape
    own = sens[0] if sens is not None else None
    if not _feasible(np.ones(n, dtype=bool), w, k, sens, own, need_l):
        return None, "searched"
    by_lam = np.argsort(-lam, kind="stable")
    at = _Boxes(D, w, by_lam, sens if need_l > 1 else None, own, need_l)
    lam_list, w_list = lam[by_lam].tolist(), at.w
    lam_np, w_np = lam[by_lam], w[by_lam]

    # Masks of the first 64, 256, 1,024, ... candidates: the k largest lam of a set lie
    # in its first k bits, most often among the first few hundred candidates, and the
    # bit operations below then work on that short int, not on the whole set.
    masks = [(1 << m) - 1 for m in itertools.takewhile(lambda m: m < n, TOP_MASKS)]

    # The sums of top() by the first bits of a set that hold k records: the nodes and
    # leaves of a search share their largest lam most often (UCI Adult's ascent: 70 % of
    # the calls found here, and a fifth more nodes a second).
    tops: dict = {}

    def top(x: int) -> float:
        """The sum of the k largest lam over the records of the set x: its first bits
        (the candidates are numbered in descending lam)."""
        for mask in masks:
            low = x & mask
            if low.bit_count() >= k:  # every record weighs at least 1
                out = tops.get(low)
                if out is None:
                    out = tops[low] = _sum_top(low)
                return out
        return _sum_top(x)

    def _sum_top(x: int) -> float:
        if k < 8:  # numpy sums fewer than 8 numbers one after the other, as here
            out, left = 0.0, k
            while left > 0 and x:
                rest = x & (x - 1)
                r = (x ^ rest).bit_length() - 1
                x = rest
                out += lam_list[r] * (w_list[r] if w_list[r] < left else left)
                left -= w_list[r]
            return out
        rows = []
        while len(rows) < k and x:
            low = x & -x
            rows.append(low.bit_length() - 1)
            x ^= low
        return _top_sum(lam_np[rows], w_np[rows], k)

    best = [best0, None]
    nodes, read = [0], [0]
    path = []  # per depth above the node, (its alive set, the index of its threshold)
    weighs, diverse, last = at.weighs, at.diverse, q - 1

    def dfs(depth, alive, partial, lo):
        # Each call is one node; at the last dimension its children, the leaves, are
        # counted and compared here rather than called.
        nodes[0] += 1
        if nodes[0] > cap:
            raise _Capped
        if deadline is not None and nodes[0] - read[0] >= SHARED_CLOCK:
            read[0] = nodes[0]  # leaves count as nodes too: the clock is read by the count
            if time.perf_counter() >= deadline:
                raise _Late
        mean = top(alive) / k
        rest, below = at.rest(alive, depth, k, lo)
        values, eq, held = at.values[depth], at.eq[depth], at.held[depth]
        places, live = at.children(alive, depth, lo[depth])
        for i in places:
            v = values[i]
            if partial + v + rest - mean >= best[0] - 1e-12:
                break  # larger thresholds cost more and cover no more than `alive`
            if not live and not alive & eq[i]:
                continue  # no alive candidate at this value: not a child
            sub = alive & held[i]
            if sub.bit_count() < k and not weighs(sub, k):
                continue
            if diverse is not None and not diverse(sub):
                continue
            path.append((alive, i))
            if depth == last:
                nodes[0] += 1
                if nodes[0] > cap:
                    raise _Capped
                excess = (partial + v) - top(sub) / k
                if excess < best[0] - 1e-12:
                    best[0], best[1] = excess, (at.picks(path), at.rows(sub))
                    if best[0] <= NO_GAIN:
                        raise _Nothing
            else:
                dfs(depth + 1, sub, partial + v, below)
            path.pop()

    try:
        dfs(0, at.everything, 0.0, [0] * q)
    except _Capped:
        return None, "cut"
    except _Late:
        return None, "unsearched"
    except _Nothing:
        return best[1], "no_excess"
    if best[1] is None:
        return None, "searched"
    return best[1], "searched"


class _Nothing(Exception):
    """A box of excess at most :data:`NO_GAIN` was found: the record adds nothing."""


class _Late(Exception):
    """The shared-cost search of a record passed the bound's deadline."""


class _Index:
    """The types of one protected group, indexed to find those within a cost without
    scanning them all: per dimension by value (:meth:`within`, the most selective
    dimension's superset, whose order the searches keep), and in a trie over the
    attributes (:meth:`near`, the types whose D sums to at most a cost, plus a few)."""

    def __init__(self, members: np.ndarray, idx: np.ndarray, dims: list[_Dim], costs: _Costs):
        self.members = members
        self.dims = dims
        self.costs = costs
        self.idx = idx
        self.sorted = []
        self.counts = []  # per table dimension, the group's types per value
        for j, d in enumerate(dims):
            values = idx[members, j]
            order = np.argsort(values, kind="stable")
            self.sorted.append((values[order], members[order]))
            table = d.kind == "table"
            self.counts.append(np.bincount(values, minlength=_values(d)) if table else None)
        self.levels = None  # the trie, made on the first call of near()
        self.worst = math.inf  # a cost no summed D exceeds: near() of more is every type

    def _trie(self) -> None:
        """The trie: a level per attribute (a range's two dimensions together), the
        costliest first (:meth:`_spread`); the types sorted by their values level by
        level, so that a node's types, and its children, are contiguous. Made when
        first read, after the deadline was read for a type (it reads the tables' rows
        of at most SPREAD_VALUES values)."""
        dims, members, idx = self.dims, self.members, self.idx
        levels: list[list[int]] = []
        for j, d in enumerate(dims):
            before = dims[levels[-1][0]] if levels else None  # a range's up, then its down
            if d.kind == "down" and before is not None and before.name == d.name:
                levels[-1].append(j)
            else:
                levels.append([j])
        levels.sort(key=lambda js: -self._spread(js, idx[members, js[0]]))
        keys = idx[members][:, [js[0] for js in levels]]
        order = np.lexsort(keys.T[::-1])
        keys = keys[order]
        self.leaf_types = members[order]
        n = len(members)
        change = np.ones((n, len(levels)), dtype=bool)
        if n > 1:
            change[1:] = np.logical_or.accumulate(keys[1:] != keys[:-1], axis=1)
        self.starts = [np.flatnonzero(change[:, i]) for i in range(len(levels))]
        self.values = [keys[start, i] for i, start in enumerate(self.starts)]
        self.children = []  # per level but the last, each node's first child and end
        for i in range(len(levels) - 1):
            first = np.searchsorted(self.starts[i + 1], self.starts[i])
            self.children.append((first, np.append(first[1:], len(self.starts[i + 1]))))
        self.leaf_end = np.append(self.starts[-1][1:], n)
        self.levels = levels

    def _spread(self, js: list, values: np.ndarray) -> float:
        """The mean summed D of an attribute's dimensions between two of the group's
        types (0 without their matrices): the trie reads the costliest first, where
        most nodes fall beyond a cost."""
        costs = self.costs
        if any(costs.mats[j] is None
               or (costs.filled[j] is not None and costs.sizes[j] > SPREAD_VALUES) for j in js):
            return 0.0
        counts = np.bincount(values, minlength=self.costs.sizes[js[0]]).astype(float)
        present = np.flatnonzero(counts)
        for j in js:
            if self.costs.filled[j] is not None:
                for r in present.tolist():
                    self.costs.row(j, r)
        # Only the present values' rows are filled (the others hold whatever memory
        # held, NaN included, which a zero count would not cancel).
        counts = counts[present]
        mean = sum(float(counts @ costs.mats[j][np.ix_(present, present)] @ counts) for j in js)
        return mean / max(len(values), 1) ** 2

    def near(self, own: np.ndarray, u: float) -> np.ndarray:
        """The types (in no set order) whose D, summed an attribute at a time, is at
        most `u`: a superset of those whose summed D is (give `u` a margin for the
        rounding of the sums)."""
        if u >= self.worst:
            return self.members
        if self.levels is None:
            self._trie()
        nodes = np.arange(len(self.starts[0]))
        cost = np.zeros(len(nodes))
        for i, js in enumerate(self.levels):
            if i:
                first, end = self.children[i - 1]
                first, many = first[nodes], end[nodes] - first[nodes]
                nodes = _ranges(first, many)
                cost = np.repeat(cost, many)
            values = self.values[i][nodes]
            for j in js:
                cost = cost + self.costs.row(j, int(own[j]))[values]
            keep = cost <= u
            nodes, cost = nodes[keep], cost[keep]
        first = self.starts[-1][nodes]
        return self.leaf_types[_ranges(first, self.leaf_end[nodes] - first)]

    def within(self, own: np.ndarray, u: float, types: np.ndarray) -> np.ndarray:
        """Those of `types` whose D on the most selective dimension (by how many of the
        group's types it holds) can be at most `u`, in that dimension's value order
        (ties by type): as the group's types in that order would be read."""
        best = None
        for j, d in enumerate(self.dims):
            if d.kind == "table":
                # the values whose cover costs at most u, counted by the types holding them
                near = self.costs.row(j, int(own[j])) <= u + 1e-9
                size = int(self.counts[j] @ near)
                if best is None or size < best[0]:
                    best = (size, j, near, None)
            else:
                values = self.sorted[j][0]
                pos = d.fpos
                here = pos[int(own[j])]
                inside = np.flatnonzero((pos >= here - u - 1e-9) & (pos <= here + u + 1e-9))
                lo = np.searchsorted(values, inside.min(), "left")
                hi = np.searchsorted(values, inside.max(), "right")
                if best is None or hi - lo < best[0]:
                    best = (int(hi - lo), j, inside.min(), inside.max())
        _, j, near, top = best
        values = self.idx[types, j]
        if top is None:
            types, values = types[near[values]], values[near[values]]
        else:
            held = (values >= near) & (values <= top)
            types, values = types[held], values[held]
        return types[np.lexsort((types, values))]


def _ranges(first: np.ndarray, many: np.ndarray) -> np.ndarray:
    """first[i], first[i] + 1, ..., first[i] + many[i] - 1, for each i in turn."""
    total = int(many.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    ends = np.cumsum(many)
    return np.arange(total) + np.repeat(first - (ends - many), many)


def _nearest_box(D, w, need, total_d, sens, own_sens, need_l) -> float:
    """The cost of the box (the largest D per dimension) of the candidates nearest in
    summed D that weigh `need` and bring `need_l` sensitive values with the record's
    own: a box the search of :func:`_min_box` reads, so m(r) is at most that (inf when
    the candidates cannot make one)."""
    order = np.argsort(total_d, kind="stable")
    enough = np.cumsum(w[order]) >= need
    if sens is not None and need_l > 1:
        # where each sensitive value other than the record's own first appears
        ranked = sens[order]
        places = np.flatnonzero(ranked != own_sens)
        firsts = np.sort(np.unique(ranked[places], return_index=True)[1])
        if len(firsts) < need_l - 1:
            return math.inf
        enough[: places[firsts[need_l - 2]]] = False
    if not enough.any():
        return math.inf
    last = int(np.argmax(enough))
    return float(D[order[: last + 1]].max(axis=0).sum())


def _feasible(alive, w, need, sens, own_sens, need_l) -> bool:
    if int(w[alive].sum()) < need:
        return False
    if sens is None or need_l <= 1:
        return True
    values = set(sens[alive].tolist())
    values.add(int(own_sens))
    return len(values) >= need_l


class _Boxes:
    """The candidates of a box search, as sets held in the bits of Python ints (bit i
    for the i-th candidate of `by_lam`, or of D's rows without it): a node's work is a
    few operations on whole sets, where numpy's cost per call on the short arrays of a
    node took most of the search. Per dimension, in the search's order (fewest distinct
    values first): its distinct D values ascending (`values`) and, by their places, the
    candidates at each (`eq`), at or below each (`le`) and at or below each plus 1e-15
    (`held`, a threshold's box; `upto`, the place of the last value it holds, None when
    that is each value's own). A search over these reads the same thresholds, bounds
    and nodes as one sorting the alive candidates per dimension at every node."""

    def __init__(self, D, w, by_lam=None, sens=None, own_sens=None, need_l=1):
        n, q = D.shape
        if by_lam is not None:
            D, w = D[by_lam], w[by_lam]
            sens = sens[by_lam] if sens is not None else None
        self.ids, self.n, self.q = by_lam, n, q
        self.everything = (1 << n) - 1
        self.w = w.tolist()
        self.unit = bool((w == 1).all())
        DT = np.ascontiguousarray(D.T)  # a row per dimension
        orders = np.argsort(DT, axis=1, kind="stable")
        ranked = np.take_along_axis(DT, orders, axis=1)
        new = np.ones((q, n), dtype=bool)
        np.not_equal(ranked[:, 1:], ranked[:, :-1], out=new[:, 1:])
        counts = new.sum(axis=1)
        dims = np.argsort(counts, kind="stable")  # as np.unique would count them
        self.dims = dims.tolist()
        rank = np.empty((q, n), dtype=np.int32)  # per dimension and row, its value's place
        np.put_along_axis(rank, orders, new.cumsum(axis=1, dtype=np.int32) - 1, axis=1)
        rank, counts = rank[dims], counts[dims].tolist()
        self.rank = rank
        flat = ranked[dims][new[dims]]
        close = flat[1:] <= flat[:-1] + 1e-15
        close[np.cumsum(counts)[:-1] - 1] = False  # a dimension's last and the next's first
        close = bool(close.any())
        flat = flat.tolist()
        eager = None
        if len(flat) * n <= EAGER_BITS:
            # few enough to make every set at once (one comparison and one packing)
            level = np.arange(len(flat)) - np.repeat(np.cumsum(counts) - counts, counts)
            eager = _bitsets(np.repeat(rank, counts, axis=0) <= level[:, None])
        self.values, self.le, self.eq, self.held, self.upto = [], [], [], [], []
        at = 0
        for j, m in enumerate(counts):
            values = flat[at: at + m]
            upto = None
            if close:
                upto = [bisect.bisect_right(values, v + 1e-15) - 1 for v in values]
                if all(u == i for i, u in enumerate(upto)):
                    upto = None
            self.values.append(values)
            self.upto.append(upto)
            if eager is None:
                self.le.append(_Sets(rank[j], "le"))
                self.eq.append(_Sets(rank[j], "eq"))
                self.held.append(self.le[j] if upto is None else _Sets(rank[j], "le", upto))
            else:
                sets = eager[at: at + m]
                self.le.append(sets)
                self.eq.append([sets[0]] + [a ^ b for a, b in zip(sets[1:], sets[:-1])])
                self.held.append(sets if upto is None else [sets[u] for u in upto])
            at += m
        self.diverse = None
        if sens is not None and need_l > 1:
            others = np.unique(sens[sens != own_sens]).tolist()
            self.others = [_bitset(sens == other) for other in others]
            self.need_l = need_l
            self.diverse = self._diverse

    def weighs(self, x: int, need: int) -> bool:
        """Whether the records of the set x, fewer than `need` candidates (each weighs 1
        at least, so `need` candidates always weigh enough), weigh `need` or more."""
        if self.unit:
            return False
        total, w = 0, self.w
        while x:
            low = x & -x
            total += w[low.bit_length() - 1]
            x ^= low
        return total >= need

    def _diverse(self, x: int) -> bool:
        """Whether the set x and the record's own sensitive value make `need_l` values."""
        found = 1
        for other in self.others:
            if x & other:
                found += 1
                if found >= self.need_l:
                    return True
        return False

    def start(self, depth: int, lo: int) -> int:
        """The first value of the depth-th dimension whose box reaches the lo-th value."""
        upto = self.upto[depth]
        return lo if upto is None else bisect.bisect_left(upto, lo)

    def children(self, alive: int, depth: int, lo: int) -> tuple:
        """The places, ascending, of the depth-th dimension's values from the one
        :meth:`start` gives, and whether each is known to hold a candidate of the set
        `alive` (a node's child): where the values to read outnumber both
        :data:`LIVE_VALUES` and the alive candidates, they are read from the candidates
        (their places, sorted) rather than by testing each value's set: 2,900 records of
        8 attributes with every value distinct spent 100 us a node testing the sets of
        values no candidate held."""
        first = self.start(depth, lo)
        many = len(self.values[depth]) - first
        if many > LIVE_VALUES and alive.bit_count() < many:
            places = np.unique(self.rank[depth][self.rows(alive, raw=True)])
            return places[np.searchsorted(places, first):].tolist(), True
        return range(first, first + many), False

    def rest(self, alive: int, depth: int, need: int, lo: list) -> tuple[float, list]:
        """At a node of `depth` (its dimension the depth-th in order): the bound on the
        dimensions after it -- the sum, in order, of each one's smallest value at or
        below which `alive` weighs `need` (0.0 if `need` is 0) -- and the places of
        those values. `lo`, the places at the node's parent, are where to start: a
        node's alive set is in its parent's, so its places are no lower."""
        if need <= 0 or depth + 1 >= self.q:
            return 0.0, lo
        below, parts = list(lo), []
        weighs = self.weighs
        for e in range(depth + 1, self.q):
            sets, i, last = self.le[e], lo[e], len(self.values[e]) - 1
            # alive & le[i] grows with i: a few steps one at a time (the place is most
            # often the parent's or next to it), then galloping and halving the last
            # step, so a dimension of thousands of values costs a few dozen sets rather
            # than a scan (one step at a time, 20,000 candidates of 16 dimensions of
            # 1,000 values each spent 19 s of a 20 s search here).
            for _ in range(REST_STEPS):
                x = alive & sets[i]
                if x.bit_count() >= need or weighs(x, need):
                    break
                i += 1
            else:
                i, step = i - 1, 1  # the last place not enough
                while i + step < last:
                    x = alive & sets[i + step]
                    if x.bit_count() >= need or weighs(x, need):
                        break
                    i += step
                    step *= 2
                hi = min(i + step, last)  # enough there: the whole alive set is
                while hi - i > 1:
                    mid = (i + hi) // 2
                    x = alive & sets[mid]
                    if x.bit_count() >= need or weighs(x, need):
                        hi = mid
                    else:
                        i = mid
                i = hi
            below[e] = i
            parts.append(self.values[e][i])
        return sum(parts), below

    def rows(self, x: int, raw: bool = False) -> np.ndarray:
        """The rows of D (ascending) of the set x (with `raw`, its bits' places)."""
        bits = np.frombuffer(x.to_bytes((self.n + 7) // 8, "little"), dtype=np.uint8)
        held = np.flatnonzero(np.unpackbits(bits, count=self.n, bitorder="little"))
        return held if raw or self.ids is None else np.sort(self.ids[held])

    def picks(self, path: list) -> list:
        """Per dimension, the first row of D giving the threshold chosen on the search's
        `path` (per depth, the node's alive set and the threshold's place), or -1 for a
        threshold of 0."""
        out = [-1] * self.q
        for depth, (alive, i) in enumerate(path):
            if self.values[depth][i] > 0:
                out[self.dims[depth]] = int(self.rows(alive & self.eq[depth][i])[0])
        return out


#: Values times candidates up to which a box search makes all its sets at once (beyond,
#: each when first read).
EAGER_BITS = 1 << 16
#: Places a node's bound on a later dimension steps one at a time before galloping.
REST_STEPS = 4
#: Values of a dimension past a node's first beyond which its children are read from its
#: alive candidates' values (when fewer) rather than by testing each value's set.
LIVE_VALUES = 128


class _Sets(dict):
    """The candidates at (`how` "eq"), or at and below ("le"), each value of a dimension
    of :class:`_Boxes`, by the value's place (or up to the place `upto` gives), each set
    made when first read: a search reads few of them, and making them all took most of
    the search on UCI Adult (a node of a few thousand candidates and 300 values)."""

    __slots__ = ("how", "rank", "upto")

    def __init__(self, rank: np.ndarray, how: str, upto: list | None = None):
        super().__init__()
        self.rank, self.how, self.upto = rank, how, upto

    def __missing__(self, i: int) -> int:
        if self.how == "eq":
            out = _bitset(self.rank == i)
        else:
            out = _bitset(self.rank <= (i if self.upto is None else self.upto[i]))
        self[i] = out
        return out


def _bitsets(rows: np.ndarray) -> list:
    """Each row of a boolean matrix as a Python int (bit j for column j)."""
    packed = np.packbits(rows, axis=1, bitorder="little")
    size = packed.shape[1]
    if size <= 8:  # one word a row: read as unsigned 64-bit integers in one call
        wide = np.zeros((len(packed), 8), dtype=np.uint8)
        wide[:, :size] = packed
        return wide.view("<u8").reshape(-1).tolist()
    blob = packed.tobytes()
    return [int.from_bytes(blob[i: i + size], "little") for i in range(0, len(blob), size)]


def _bitset(mask: np.ndarray) -> int:
    """A boolean array as a Python int (bit j for item j)."""
    return int.from_bytes(np.packbits(mask, bitorder="little").tobytes(), "little")


def _min_box(D, w, need, sens_all, cand, own_sens, need_l, ub, total_d, deadline=None):
    """min over thresholds e of sum(e) with enough candidates dominated (D <= e): the
    per-dimension candidate attaining each threshold, and how it was found. None when no
    box costs less than `ub`. Past `deadline` (``time.perf_counter``, read every
    :data:`SHARED_CLOCK` nodes) the search settles for the quicker bound, as at
    :data:`MAX_NODES`: a node's cost grows with the values of a dimension (the sets of
    each value held in bits), so on attributes of thousands of values the node cap alone
    no longer bounds the time."""
    sens = sens_all[cand] if sens_all is not None else None
    if len(cand) == 0:
        return None, "solved"
    if not _feasible(np.ones(len(cand), dtype=bool), w, need, sens, own_sens, need_l):
        return None, "solved"
    q = D.shape[1]
    if len(cand) > MAX_CANDIDATES:
        return _quick(D, w, need, total_d), "quick"
    at = _Boxes(D, w, None, sens, own_sens, need_l)
    best = [ub + 1e-9, None]
    nodes = [0]
    read = [0]
    path = []  # per depth above the node, (its alive set, the index of its threshold)
    weighs, diverse, last = at.weighs, at.diverse, q - 1

    def dfs(depth, alive, partial, lo):
        # Each call is one node; at the last dimension its children, the leaves, are
        # counted and compared here rather than called.
        nodes[0] += 1
        if nodes[0] > MAX_NODES:
            raise _Capped
        if deadline is not None and nodes[0] - read[0] >= SHARED_CLOCK:
            read[0] = nodes[0]
            if time.perf_counter() >= deadline:
                raise _Capped
        rest, below = at.rest(alive, depth, need, lo)
        values, eq, held = at.values[depth], at.eq[depth], at.held[depth]
        places, live = at.children(alive, depth, lo[depth])
        for i in places:
            v = values[i]
            if partial + v + rest > best[0] + 1e-12:
                break
            if not live and not alive & eq[i]:
                continue  # no alive candidate at this value: not a child
            sub = alive & held[i]
            if sub.bit_count() < need and not weighs(sub, need):
                continue
            if diverse is not None and not diverse(sub):
                continue
            path.append((alive, i))
            if depth == last:
                nodes[0] += 1
                if nodes[0] > MAX_NODES:
                    raise _Capped
                if partial + v < best[0] - 1e-12:
                    best[0], best[1] = partial + v, at.picks(path)
            else:
                dfs(depth + 1, sub, partial + v, below)
            path.pop()

    try:
        dfs(0, at.everything, 0.0, [0] * q)
    except _Capped:
        return _quick(D, w, need, total_d), "capped"
    if best[1] is None:
        return None, "solved"
    return best[1], "solved"


class _Capped(Exception):
    pass


def _quick(D, w, need, total_d):
    """The quicker bound, as per-dimension picks: the larger of two that every box
    dominating `need` candidates meets. Its cost is at least each candidate's summed D,
    so at least the need-th smallest summed D (one candidate's picks); and on each
    dimension at least the need-th smallest D there -- per attribute, the narrowest
    label covering the record and `need` others (one candidate per dimension)."""
    need = max(need, 1)

    def nth(values: np.ndarray) -> int:
        order = np.argsort(values, kind="stable")
        return int(order[min(int(np.searchsorted(np.cumsum(w[order]), need)), len(order) - 1)])

    s = nth(total_d)
    whole = [s if D[s, j] > 0 else -1 for j in range(D.shape[1])]
    per_dim = [nth(D[:, j]) for j in range(D.shape[1])]
    per_dim = [c if D[c, j] > 0 else -1 for j, c in enumerate(per_dim)]
    if sum(D[c, j] for j, c in enumerate(per_dim) if c >= 0) > total_d[s]:
        return per_dim
    return whole


#: Seconds the verifier gives the per-record bound, per objective.
REPORT_SECONDS = 30.0


def release_bounds(
    instance: Instance,
    release: Release,
    requirements: Sequence[Requirement],
    metrics: dict,
    *,
    compute: bool = False,
) -> dict:
    """The bounds a report shows for a release: per objective ("ncp", "lm") the loss of
    the release, a lower bound and the gap between them, the loss and the bound as
    exact fractions (so that a bound equal to the loss is shown equal to it).

    Two sources, kept apart: the bound the release itself carries (``Release.bound``
    for its ``provenance["objective_name"]``, certified by the method that made it --
    a CP-SAT proof, an LP bound -- and not re-checked here), and the per-record bound
    computed here with `compute` (:func:`lower_bound`, with the release's costs for
    pruning, in at most :data:`REPORT_SECONDS` per objective).
    """
    if not metrics:
        return {}
    from .objectives import objective_value

    losses: dict[str, Fraction] = {}

    def loss(objective: str) -> Fraction:
        # Exact, read from the released table as the metrics are (their floats could
        # round a loss below a bound equal to it).
        if objective not in losses:
            losses[objective] = Fraction(objective_value(instance, release, objective))
        return losses[objective]

    out: dict[str, dict] = {}
    claimed = release.provenance.get("objective_name")
    if claimed in ("ncp", "lm") and release.bound is not None:
        value = loss(claimed)
        own = _exact_bound(release.bound, value)
        out[claimed] = {
            "loss": value,
            "bound": own,
            "gap": relative_gap(
                release.objective if release.objective is not None else value, own
            ),
            "source": f"the {release.method} release's own bound",
        }
    if not compute:
        return out
    for objective in ("ncp", "lm"):
        found = lower_bound(
            instance, requirements, objective, release=release, time_limit=REPORT_SECONDS
        )
        value = loss(objective)
        computed = _exact_bound(found.value, value)
        if objective in out and out[objective]["bound"] >= computed:
            continue
        out[objective] = {
            "loss": value,
            "bound": computed,
            "gap": relative_gap(value, computed),
            "source": f"{found.method} bound" + ("" if found.complete else " (time ran out)"),
        }
    return out


def _exact_bound(bound, loss: Fraction) -> Fraction:
    """A bound as an exact number: a float one (a solver's) that exceeds the exact loss
    by its rounding only is the loss itself."""
    exact = Fraction(bound)
    if isinstance(bound, float) and exact > loss and exact - loss <= 1e-9 * max(1, abs(loss)):
        return loss
    return exact
