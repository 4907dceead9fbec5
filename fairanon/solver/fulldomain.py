"""Optimal full-domain generalization: one level per attribute, over the lattice of levels.

Full-domain (global) recoding releases every value of an attribute at the same level
of its hierarchy (categorical and ordered attributes) or of its interval ladder
(numeric attributes, :class:`~fairanon.instances.hierarchy.IntervalHierarchy`); a
solution is a lattice node, one level per generalizable quasi-identifier. ARX's Flash
searches this lattice for the best node under monotone privacy models; this module
finds the same optimum as a CP-SAT model over level choices and also takes the
requirements Flash cannot (alpha-protection and diversity constraints, which are not
monotone on the lattice), together with an optional record-suppression limit.

The model is solved by logic-based Benders decomposition:

- the *master* is a CP-SAT model over one-hot level choices ``b[A,j]`` (and their order
  encoding ``ge[A,j]`` = "level of A >= j"); it minimizes the separable part of the
  objective, a lower bound of the true cost of every node;
- each master solution is checked exactly on the weighted types; a failure adds a
  *cut*: when the node fails a union-monotone requirement (k, l, t without suppression,
  or more records in classes smaller than k than the suppression limit), every node
  below it fails too, so the node is first raised greedily to a maximal failing node F
  and the clause ``OR_A ge[A, F_A + 1]`` removes F's whole down-set; any other failure
  (alpha-protection, diversity, the suppressed block) removes the node alone;
- a feasible node updates the incumbent and is removed; for the discernibility
  objective it also adds ``theta >= DM(L)`` on L's up-set (DM only grows upward);
- the search stops when the master's optimum reaches the incumbent (proven optimal)
  or the master is infeasible (every node evaluated or cut).

Diversity constraints also go straight into the master as valid implications (a lower
bound needs every target attribute at level 0; an upper bound below the visible count
forbids that).
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property

import numpy as np
import pandas as pd
from ortools.sat.python import cp_model

from ..exceptions import InvalidParameterError, SchemaError
from ..instances.generalization import format_number
from ..instances.hierarchy import SUPPRESSED
from ..instances.instance import Instance
from ..models import measures as M
from ..models.requirements import (
    AlphaProtection,
    DiversityConstraint,
    KAnonymity,
    LDiversity,
    Requirement,
    TCloseness,
    requirement_targets,
    validate_requirements,
)
from ..release import Release, Status, provenance
from . import _cpsat
from .local_recoding.alpha import _alpha_holds_exact
from .local_recoding.diversity import _type_matches
from .local_recoding.encoding import Encoding, type_table
from .local_recoding.labels import OBJECTIVES, _active, _label_losses
from .local_recoding.model import _lcm
from .local_recoding.solve import _verified

__all__ = ["Ladder", "fulldomain", "ladders", "lattice_size"]


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


def _ladder(instance: Instance, name: str) -> Ladder:
    attr = instance.schema[name]
    values, _ = _active(instance, name)
    own = [format_number(v) if attr.kind == "numeric" else str(v) for v in values]
    if attr.kind == "numeric":
        if attr.intervals is None:
            raise SchemaError(
                f"fulldomain needs generalization levels for numeric attribute {name!r}: give it "
                f"intervals, e.g. Attribute({name!r}, kind='numeric', "
                "intervals=IntervalHierarchy((5, 10, 20))), or bin it into an ordered attribute."
            )
        height = attr.intervals.height
        labels = [own] + [attr.intervals.generalize(values, j) for j in range(1, height + 1)]
    elif attr.hierarchy is not None:
        h = attr.hierarchy
        height = max(h.height, 1)
        labels = [own] + [[h.generalize(v, j) for v in values] for j in range(1, height + 1)]
    else:  # an ordered attribute without a hierarchy: the value or '*'
        height = 1
        labels = [own, [SUPPRESSED] * len(values)]
    m = len(values)
    codes, texts = [], []
    cost = {obj: [] for obj in OBJECTIVES if obj != "discernibility"}
    for j, level in enumerate(labels):
        distinct = list(dict.fromkeys(level))
        index = {t: i for i, t in enumerate(distinct)}
        code = np.array([index[t] for t in level], dtype=np.int64)
        masks = np.zeros((len(distinct), m), dtype=bool)
        masks[code, np.arange(m)] = True
        # A value's own text at level 0; any text at a higher level covers its group.
        if j == 0:
            ncp = lm = [Fraction(0)] * len(distinct)
        else:
            ncp, lm = _label_losses(attr, values, masks, distinct)
        codes.append(code)
        texts.append(distinct)
        cost["stars"].append([Fraction(int(t == SUPPRESSED)) for t in level])
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


def ladders(instance: Instance) -> list[Ladder]:
    """The levels of every generalizable quasi-identifier (schema order).

    Raises
    ------
    SchemaError
        A numeric attribute without intervals.

    >>> [(l.name, l.height) for l in ladders(fa.load("ruggieri_loan"))]
    [('purpose', 1), ('emp', 1)]
    """
    return [_ladder(instance, name) for name in instance.schema.generalizable]


def lattice_size(instance: Instance) -> int:
    """The number of lattice nodes (product of the attributes' level counts).

    >>> lattice_size(fa.load("adult"))
    4320
    """
    return math.prod(lad.height + 1 for lad in ladders(instance))


# ====================================================================== the oracle
@dataclass
class _Evaluation:
    feasible: bool
    monotone: bool  # the failure extends to every node below
    failed: tuple = ()  # indices of requirements that together justify the failure
    cost: Fraction | int | None = None
    suppressed: np.ndarray | None = None  # per type
    classes: np.ndarray | None = None  # final class id per type


class _Oracle:
    """Exact checks and costs of lattice nodes on the weighted types."""

    def __init__(self, enc: Encoding, lads: list[Ladder], requirements, objective, max_suppressed):
        self.enc = enc
        self.lads = lads
        self.requirements = list(requirements)
        self.objective = objective
        self.max_suppressed = max_suppressed
        self.k = max([r.k for r in requirements if isinstance(r, KAnonymity)] + [1])
        self.monotone_reqs = [
            (i, r)
            for i, r in enumerate(requirements)
            if isinstance(r, (KAnonymity, LDiversity, TCloseness))
        ]
        # Per attribute and level: label id per type, and a global text id per type
        # ('*' of suppressed records shares the text id of '*' labels).
        self.type_codes, self.type_text = [], []
        self.text_ids: list[dict[str, int]] = []
        for a, lad in enumerate(lads):
            ids: dict[str, int] = {SUPPRESSED: 0}
            for level in lad.texts:
                for t in level:
                    ids.setdefault(t, len(ids))
            self.text_ids.append(ids)
            values = enc.qi[:, a]
            self.type_codes.append([code[values] for code in lad.codes])
            self.type_text.append(
                [np.array([ids[t] for t in level], dtype=np.int64)[values] for level in lad.labels]
            )
        self.cache: dict[tuple, _Evaluation] = {}
        self.evaluations = 0
        self._grounds = {}

    # -- classes
    def _group(self, columns: list[np.ndarray]) -> tuple[np.ndarray, int]:
        key = self.enc.protected.astype(np.int64)
        n_key = int(key.max()) + 1 if len(key) else 1
        for col in columns:
            width = int(col.max()) + 1 if len(col) else 1
            if n_key * width < 2**62:
                key, n_key = key * width + col, n_key * width
            else:
                key = pd.factorize(key)[0].astype(np.int64)
                key, n_key = key * width + col, (int(key.max()) + 1) * width
        ids, uniq = pd.factorize(key)
        return ids.astype(np.int64), len(uniq)

    def _fails(self, req: Requirement, ids: np.ndarray, n: int, sizes: np.ndarray) -> np.ndarray:
        """Per class: does it violate `req` (k, l or t)?"""
        if isinstance(req, KAnonymity):
            return sizes < req.k
        bad = np.zeros(n, dtype=bool)
        for name in requirement_targets(self.enc.instance.schema, req):
            target = self.enc.targets[name]
            counts = (
                np.bincount(
                    ids * target.m + target.codes, weights=self.enc.weight, minlength=n * target.m
                )
                .astype(np.int64)
                .reshape(n, target.m)
            )
            if isinstance(req, LDiversity):
                if req.variant == "distinct":
                    ok = M.distinct_l(counts) >= req.l
                elif req.variant == "entropy":
                    ok = M.entropy_l_ok(counts, req.l)
                else:
                    ok = M.recursive_cl_ok(counts, req.c, int(req.l))[0]
            else:
                ground = self._ground(req.distance, target)
                distances = M.emd(counts, target.global_counts, ground)
                ok = M.exact_compare(
                    distances,
                    lambda i, c=counts, t=target, g=ground: M.emd_exact(c[i], t.global_counts, g),
                    req.t,
                    "le",
                )
            bad |= ~ok
        return bad

    def _ground(self, distance: str, target) -> M.EMDGround:
        key = (distance, target.name)
        if key not in self._grounds:
            if distance == "equal":
                ground = M.EMDGround.equal(target.m)
            elif distance == "ordered":
                ground = M.EMDGround.ordered(target.m)
            else:
                hierarchy = self.enc.instance.schema[target.name].hierarchy
                ground = M.EMDGround.hierarchical(hierarchy, [str(v) for v in target.values])
            self._grounds[key] = ground
        return self._grounds[key]

    def monotone_failure(self, levels: tuple, only: int | None = None) -> int | None:
        """The requirement whose failure at `levels` also condemns every node below, if
        any (checking requirement `only` alone when given)."""
        ids, n = self._group([self.type_codes[a][j] for a, j in enumerate(levels)])
        sizes = np.bincount(ids, weights=self.enc.weight, minlength=n).astype(np.int64)
        for i, req in self.monotone_reqs:
            if only is not None and i != only:
                continue
            if self.max_suppressed == 0:
                if self._fails(req, ids, n, sizes).any():
                    return i
            # With suppression, only k is monotone: records of classes smaller than k can
            # only grow in number as the node is specialized.
            elif (
                isinstance(req, KAnonymity)
                and int(sizes[sizes < req.k].sum()) > self.max_suppressed
            ):
                return i
        return None

    def evaluate(self, levels: tuple) -> _Evaluation:
        if levels in self.cache:
            return self.cache[levels]
        self.evaluations += 1
        result = self._evaluate(levels)
        self.cache[levels] = result
        return result

    def _evaluate(self, levels: tuple) -> _Evaluation:
        enc = self.enc
        failed = self.monotone_failure(levels)
        if failed is not None:
            return _Evaluation(False, True, (failed,))
        ids, n = self._group([self.type_codes[a][j] for a, j in enumerate(levels)])
        sizes = np.bincount(ids, weights=enc.weight, minlength=n).astype(np.int64)
        suppressed = np.zeros(enc.n_types, dtype=bool)
        # Requirements whose failing classes are suppressed: every later failure of the
        # node depends on them too.
        causes: tuple = ()
        if self.max_suppressed:
            bad = np.zeros(n, dtype=bool)
            for i, req in self.monotone_reqs:
                fails = self._fails(req, ids, n, sizes)
                if fails.any():
                    causes += (i,)
                bad |= fails
            suppressed = bad[ids]
            if int(enc.weight[suppressed].sum()) > self.max_suppressed:
                return _Evaluation(False, False, causes)
        # The released classes: suppressed records show '*' on every attribute and
        # merge with any class released as all '*'.
        texts = [np.where(suppressed, 0, self.type_text[a][j]) for a, j in enumerate(levels)]
        final, n_final = self._group(texts)
        final_sizes = np.bincount(final, weights=enc.weight, minlength=n_final).astype(np.int64)
        if suppressed.any():
            for i, req in self.monotone_reqs:
                if self._fails(req, final, n_final, final_sizes).any():
                    return _Evaluation(False, False, causes + (i,))
        for i, req in enumerate(self.requirements):
            if isinstance(req, DiversityConstraint) and not self._diversity_ok(
                req, levels, suppressed
            ):
                return _Evaluation(False, False, causes + (i,))
            if isinstance(req, AlphaProtection) and not self._alpha_ok(req, texts):
                return _Evaluation(False, False, causes + (i,))
        cost = self._cost(levels, suppressed, final_sizes)
        return _Evaluation(True, False, (), cost, suppressed, final)

    def _diversity_ok(self, req: DiversityConstraint, levels, suppressed) -> bool:
        enc = self.enc
        count = 0
        for t in range(enc.n_types):
            if suppressed[t] and any(name in enc.names for name, _ in req.target):
                continue
            if not _type_matches(enc, t, req):
                continue
            shown = all(
                levels[enc.names.index(name)] == 0 for name, _ in req.target if name in enc.names
            )
            if shown:
                count += int(enc.weight[t])
        return req.lower <= count <= req.upper

    def _alpha_ok(self, req: AlphaProtection, texts: list[np.ndarray]) -> bool:
        enc = self.enc
        w = enc.weight
        cells = [
            enc.prot_flag & enc.neg_flag,
            enc.prot_flag & ~enc.neg_flag,
            ~enc.prot_flag & enc.neg_flag,
            ~enc.prot_flag & ~enc.neg_flag,
        ]
        total, neg = int(w.sum()), int(w[enc.neg_flag].sum())
        if not _alpha_holds_exact(req, [int(w[c].sum()) for c in cells], neg, total):
            return False
        op = (
            ("lt" if req.strict else "le")
            if req.larger_is_worse
            else ("gt" if req.strict else "ge")
        )
        for size in range(1, len(texts) + 1):
            for attrs in itertools.combinations(range(len(texts)), size):
                key = np.zeros(enc.n_types, dtype=np.int64)
                for a in attrs:
                    key = key * (int(texts[a].max()) + 1) + texts[a]
                ids, uniq = pd.factorize(key)
                n = len(uniq)
                a_, b_, c_, d_ = (
                    np.bincount(ids, weights=w * c, minlength=n).astype(np.int64) for c in cells
                )
                keep = (a_ + b_ + c_ + d_) >= (req.min_support or 1)
                if not keep.any():
                    continue
                props = M.Proportions(a_[keep], b_[keep], c_[keep], d_[keep], neg, total)
                values = M.discrimination(req.measure, props)
                ok = M.exact_compare(
                    values,
                    lambda i, p=props: M.discrimination_exact(req.measure, *p.row(i), neg, total),
                    req.alpha,
                    op,
                )
                if not ok.all():
                    return False
        return True

    def separable(self, levels) -> Fraction:
        """The cost of `levels` without suppression: a lower bound of its true cost."""
        if self.objective == "discernibility":
            return Fraction(0)
        return sum((self.level_cost[a][j] for a, j in enumerate(levels)), Fraction(0))

    def _cost(self, levels, suppressed, final_sizes) -> Fraction | int:
        if self.objective == "discernibility":
            return int((final_sizes.astype(object) ** 2).sum())
        total = self.separable(levels)
        if suppressed.any():
            w = self.enc.weight
            for a, (lad, j) in enumerate(zip(self.lads, levels)):
                per = lad.cost[self.objective][j]
                values = self.enc.qi[suppressed, a]
                total += sum(
                    (
                        int(wt) * (lad.star_cost[self.objective] - per[int(v)])
                        for wt, v in zip(w[suppressed], values)
                    ),
                    Fraction(0),
                )
        return total

    @cached_property
    def level_cost(self) -> list[list[Fraction]]:
        """``level_cost[a][j]``: the cost of releasing attribute a at level j (no suppression)."""
        out = []
        for a, lad in enumerate(self.lads):
            counts = np.bincount(
                self.enc.qi[:, a], weights=self.enc.weight, minlength=len(lad.labels[0])
            )
            out.append(
                [
                    sum(
                        (
                            int(c) * cost
                            for c, cost in zip(counts, lad.cost[self.objective][j])
                            if c
                        ),
                        Fraction(0),
                    )
                    for j in range(lad.height + 1)
                ]
            )
        return out


# ====================================================================== the master
@dataclass
class _Master:
    model: cp_model.CpModel
    b: list[list]
    ge: list[list]
    theta: object
    scale: int
    cuts: int = 0
    attributed: set = field(default_factory=set)


def _build_master(oracle: _Oracle, requirements, guarded: set | None = None) -> _Master:
    lads = oracle.lads
    model = cp_model.CpModel()
    b = [
        [model.new_bool_var(f"level[{lad.name}]={j}") for j in range(lad.height + 1)]
        for lad in lads
    ]
    ge = []
    for a, lad in enumerate(lads):
        model.add_exactly_one(b[a])
        row = [None]
        for j in range(1, lad.height + 1):
            g = model.new_bool_var(f"level[{lad.name}]>={j}")
            model.add(g == cp_model.LinearExpr.sum(b[a][j:]))
            row.append(g)
        ge.append(row)
    n = int(oracle.enc.weight.sum())
    theta = None
    if oracle.objective == "discernibility":
        theta = model.new_int_var(0, n * n, "theta")
        if oracle.k > 1:
            model.add(theta >= oracle.k * n)  # sum of squares of classes >= k each
        model.minimize(theta)
        scale = 1
    else:
        costs = oracle.level_cost
        scale = _lcm({c.denominator for row in costs for c in row})
        terms = [
            (b[a][j], int(costs[a][j] * scale))
            for a in range(len(lads))
            for j in range(lads[a].height + 1)
        ]
        model.minimize(
            cp_model.LinearExpr.weighted_sum([t for t, _ in terms], [c for _, c in terms])
        )
    master = _Master(model, b, ge, theta, scale)
    _diversity_implications(master, oracle, requirements)
    return master


def _diversity_implications(master: _Master, oracle: _Oracle, requirements) -> None:
    """Valid consequences of each diversity constraint on the levels alone."""
    enc = oracle.enc
    for req in requirements:
        if not isinstance(req, DiversityConstraint):
            continue
        gen = [enc.names.index(name) for name, _ in req.target if name in enc.names]
        available = int(
            sum(enc.weight[t] for t in range(enc.n_types) if _type_matches(enc, t, req))
        )
        shown = [master.b[a][0] for a in gen]
        if req.lower > 0:
            if available < req.lower:
                master.model.add_bool_or([])
            for lit in shown:
                master.model.add(lit == 1)
        if available - oracle.max_suppressed > req.upper:
            master.model.add_bool_or([lit.negated() for lit in shown])


def _cut_down(master: _Master, levels) -> None:
    """Exclude `levels` and every node below it."""
    master.model.add_bool_or(
        [master.ge[a][j + 1] for a, j in enumerate(levels) if j + 1 < len(master.b[a])]
    )
    master.cuts += 1


def _cut_node(master: _Master, levels) -> None:
    master.model.add_bool_or([master.b[a][j].negated() for a, j in enumerate(levels)])
    master.cuts += 1


def _climb(oracle: _Oracle, levels: tuple, failed: int) -> tuple:
    """Raise each attribute while requirement `failed` keeps failing: a maximal node
    above `levels` that fails it (so does its whole down-set)."""
    current = list(levels)
    for a, lad in enumerate(oracle.lads):
        while current[a] < lad.height:
            trial = current.copy()
            trial[a] += 1
            if oracle.monotone_failure(tuple(trial), only=failed) is None:
                break
            current = trial
    return tuple(current)


@dataclass
class _Search:
    status: Status
    best: tuple | None
    best_eval: _Evaluation | None
    bound: Fraction | int | None
    iterations: int
    attributed: set


def _search(oracle: _Oracle, requirements, deadline, seed) -> _Search:
    master = _build_master(oracle, requirements)
    best, best_eval, best_cost = None, None, None
    iterations = 0
    bound = None
    while True:
        iterations += 1
        solver, outcome = _cpsat.solve(
            master.model, time_limit=_cpsat.remaining(deadline), num_workers=1, seed=seed
        )
        if outcome.status == Status.INFEASIBLE:
            status = Status.OPTIMAL if best is not None else Status.INFEASIBLE
            bound = best_cost
            break
        if outcome.status == Status.UNKNOWN:
            status = Status.FEASIBLE if best is not None else Status.UNKNOWN
            break
        lower = Fraction(math.ceil(outcome.bound - 1e-6), master.scale)
        bound = lower if best_cost is None else min(lower, best_cost)
        if best_cost is not None and lower >= best_cost:
            status = Status.OPTIMAL
            bound = best_cost
            break
        levels = tuple(
            next(j for j, lit in enumerate(row) if solver.boolean_value(lit)) for row in master.b
        )
        result = oracle.evaluate(levels)
        if result.feasible:
            if best_cost is None or result.cost < best_cost:
                best, best_eval, best_cost = levels, result, result.cost
            _cut_node(master, levels)
            if master.theta is not None and oracle.max_suppressed == 0:
                # DM only grows when classes merge: a bound for every node above.
                lits = [master.ge[a][j] for a, j in enumerate(levels) if j > 0]
                master.model.add(master.theta >= int(result.cost)).only_enforce_if(lits)
        elif result.monotone:
            master.attributed.update(result.failed)
            _cut_down(master, _climb(oracle, levels, result.failed[0]))
        else:
            master.attributed.update(result.failed)
            _cut_node(master, levels)
        if deadline is not None and time.perf_counter() >= deadline:
            status = Status.FEASIBLE if best is not None else Status.UNKNOWN
            break
    return _Search(
        status,
        best,
        best_eval,
        bound,
        iterations,
        master.attributed
        | {i for i, r in enumerate(requirements) if isinstance(r, DiversityConstraint)},
    )


# ====================================================================== the method
def _release_table(oracle: _Oracle, levels: tuple, suppressed: np.ndarray) -> pd.DataFrame:
    enc = oracle.enc
    instance = enc.instance
    out = {}
    row_suppressed = suppressed[enc.row_type]
    for name in instance.table.columns:
        attr = instance.schema[name]
        if not attr.released:
            continue
        if name in enc.names:
            a = enc.names.index(name)
            lad = oracle.lads[a]
            level_texts = lad.texts[levels[a]] + [SUPPRESSED]
            row_codes = lad.codes[levels[a]][enc.qi[enc.row_type, a]]
            row_codes = np.where(row_suppressed, len(level_texts) - 1, row_codes)
            used, inv = np.unique(row_codes, return_inverse=True)
            cats = list(dict.fromkeys(level_texts[c] for c in used))
            remap = np.array([cats.index(level_texts[c]) for c in used], dtype=np.int64)
            out[name] = pd.Categorical.from_codes(remap[inv.reshape(-1)], cats)
        else:
            out[name] = instance.table[name]
    return pd.DataFrame(out, index=instance.table.index)


def _check(objective, max_suppressed):
    if objective not in OBJECTIVES:
        raise InvalidParameterError(
            "The 'objective' parameter of fulldomain must be one of "
            f"{', '.join(map(repr, OBJECTIVES))}. "
            f"Got {objective!r} instead."
        )
    if (
        isinstance(max_suppressed, bool)
        or not isinstance(max_suppressed, int)
        or max_suppressed < 0
    ):
        raise InvalidParameterError(
            "The 'max_suppressed' parameter of fulldomain must be an int in [0, inf) (records). "
            f"Got {max_suppressed!r} instead."
        )


def fulldomain(
    instance: Instance,
    requirements: Sequence[Requirement],
    *,
    seed=None,
    time_limit: float | None = None,
    objective: str = "lm",
    max_suppressed: int = 0,
    explain: bool = True,
) -> Release:
    """Optimal full-domain generalization with an optional record-suppression limit, as
    in ARX [1]_ and k-Optimize [2]_, by the lattice search of the module docstring.

    Parameters
    ----------
    instance, seed, time_limit
        As in :func:`fairanon.anonymize`; the master problem's CP-SAT seed derives from
        `seed`.
    requirements : sequence of Requirement
        KAnonymity, LDiversity, TCloseness, DiversityConstraint, AlphaProtection.
    objective : {"stars", "generalized", "discernibility", "ncp", "lm"}, default="lm"
        As in :func:`fairanon.solver.local_recoding.local_recoding` (totals over cells; a suppressed
        record's cells count as ``*``).
    max_suppressed : int, default=0
        How many records may be suppressed: records of classes that fail k, l or t are
        released with ``*`` on every generalizable quasi-identifier (listed in
        ``Release.suppressed``); together, per protected value, they form one more
        class, which must meet the requirements too (the verifier sees it).
    explain : bool, default=True
        On infeasibility, shrink the requirements that cut the lattice to a minimal
        conflicting set by re-running the search without each of them.

    Returns
    -------
    Release
        OPTIMAL with the node's exact objective, FEASIBLE with the master's bound when
        the time ran out, INFEASIBLE (no node works) or UNKNOWN. ``provenance["levels"]``
        gives the chosen level of each attribute; ``provenance["verification"]`` holds
        the verifier's report.

    Raises
    ------
    SchemaError
        A numeric quasi-identifier without intervals (levels).

    Notes
    -----
    Levels: a categorical (or ordered) attribute's levels are the depths of its
    hierarchy above the leaves (``Hierarchy.generalize``, a shallow leaf stopping at the
    root); an ordered attribute without a hierarchy has levels value and ``*``; a
    numeric one its intervals (``IntervalHierarchy.generalize``, then ``*``).

    The master has one Boolean per (attribute, level); each iteration costs one small
    CP-SAT solve and one O(types) grouping per evaluated node (a climb evaluates at
    most the sum of the heights). In the worst case (non-monotone requirements, or
    discernibility with suppression) every node of the lattice is evaluated.

    References
    ----------
    .. [1] F. Prasser, F. Kohlmayer, R. Lautenschläger, K. A. Kuhn. ARX -- a
       comprehensive tool for anonymizing biomedical data. AMIA 2014 (Flash).
    .. [2] R. J. Bayardo, R. Agrawal. Data privacy through optimal k-anonymization.
       ICDE 2005.

    Examples
    --------
    >>> inst = fa.load("ruggieri_loan")
    >>> rel = fulldomain(inst, [fa.KAnonymity(2)], objective="generalized", seed=0)
    >>> rel.status, rel.objective, rel.provenance["levels"]
    (<Status.OPTIMAL: 'OPTIMAL'>, 17, {'purpose': 0, 'emp': 1})
    >>> fa.verify(inst, rel, [fa.KAnonymity(2)]).passed
    True
    """
    started = time.perf_counter()
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            "The 'instance' parameter of fulldomain must be an Instance. "
            f"Got {type(instance).__name__} instead."
        )
    requirements = validate_requirements(instance, requirements, caller="fulldomain")
    _check(objective, max_suppressed)
    limit = _cpsat.check_time_limit(time_limit, "fulldomain")
    solver_seed = _cpsat.random_seed(seed)
    deadline = None if limit is None else started + limit
    lads = ladders(instance)
    names = [lad.name for lad in lads]
    row_values, values = [], []
    for name in names:
        vals, index = _active(instance, name)
        values.append(vals)
        row_values.append(index)
    enc = type_table(instance, requirements, "fulldomain", [], row_values, values)
    oracle = _Oracle(enc, lads, requirements, objective, max_suppressed)
    params = {
        "objective": objective,
        "max_suppressed": max_suppressed,
        "time_limit": limit,
        "explain": explain,
    }
    search = _search(oracle, requirements, deadline, solver_seed)
    info = {
        "lattice_size": math.prod(lad.height + 1 for lad in lads),
        "types": enc.n_types,
        "iterations": search.iterations,
        "nodes_evaluated": oracle.evaluations,
    }
    if search.best is not None:
        levels, result = search.best, search.best_eval
        table = _release_table(oracle, levels, result.suppressed)
        groups = result.classes[enc.row_type]
        suppressed_rows = instance.row_ids[result.suppressed[enc.row_type]]
        value = result.cost
        if isinstance(value, Fraction) and value.denominator == 1:
            value = int(value)
        bound = value if search.status == Status.OPTIMAL else search.bound
        gap = (
            0.0
            if search.status == Status.OPTIMAL
            else (float((value - bound) / value) if value else 0.0)
        )
        release = Release(
            table=table,
            groups=groups,
            status=search.status,
            suppressed=tuple(suppressed_rows.tolist()),
            objective=value,
            bound=bound,
            provenance=provenance(
                "fulldomain",
                params,
                requirements,
                seed,
                started,
                objective_name=objective,
                gap=gap,
                levels=dict(zip(names, (int(j) for j in levels))),
                search=info,
            ),
        )
        return _verified(instance, release, requirements)

    top = tuple(lad.height for lad in lads)
    table = _release_table(oracle, top, np.zeros(enc.n_types, dtype=bool))
    groups = enc.protected[enc.row_type]
    if search.status == Status.INFEASIBLE:
        conflict = _minimal_conflict(
            oracle, requirements, sorted(search.attributed), explain, deadline, solver_seed
        )
        names_ = [str(requirements[i]) for i in conflict]
        why = (
            f"{names_[0]} cannot be met by any full-domain generalization on its own"
            if len(names_) == 1
            else f"these requirements conflict on every lattice node: {'; '.join(names_)}"
        )
        reason = f"no full-domain generalization satisfies the requirements: {why}"
        if max_suppressed:
            reason += f" (with at most {max_suppressed} suppressed records)"
        return Release(
            table=table,
            groups=groups,
            status=Status.INFEASIBLE,
            reason=reason,
            provenance=provenance(
                "fulldomain", params, requirements, seed, started, conflict=names_, search=info
            ),
        )
    return Release(
        table=table,
        groups=groups,
        status=Status.UNKNOWN,
        reason=f"the time limit ({limit} s) ran out before any lattice node passed",
        provenance=provenance("fulldomain", params, requirements, seed, started, search=info),
    )


def _minimal_conflict(
    oracle: _Oracle, requirements, candidates: list[int], explain, deadline, seed
) -> list[int]:
    """Shrink the requirements that cut the lattice by deletion: drop one, search again."""
    core = list(candidates) or list(range(len(requirements)))
    if not explain:
        return core
    for index in list(core):
        if len(core) == 1 or (deadline is not None and time.perf_counter() >= deadline):
            break
        trial = [i for i in core if i != index]
        subset = [requirements[i] for i in trial]
        sub_oracle = _Oracle(
            oracle.enc, oracle.lads, subset, oracle.objective, oracle.max_suppressed
        )
        if _search(sub_oracle, subset, deadline, seed).status == Status.INFEASIBLE:
            core = trial
    return core
