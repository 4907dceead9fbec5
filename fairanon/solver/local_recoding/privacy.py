"""The constraints of k-anonymity, l-diversity, t-closeness and the sample-based risk
requirements on the local-recoding model.

One builder per family, over the class sizes ``y[v]`` and, per target attribute, the
counts ``cnt[v,s]`` of the records of each value s released as vector v; the linear
forms are tabled in :mod:`fairanon.solver.local_recoding` (docs/papers.md, B-8).
Entropy l-diversity is a relaxation made exact by lazy cuts: :func:`_entropy_violations`
finds the classes exact arithmetic rejects and :func:`_forbid_counts` cuts their count
vectors off, until :func:`~fairanon.solver.local_recoding.solve_model` finds none.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from ortools.sat.python import cp_model

from ...models import measures as M
from ...models.requirements import AverageRisk, KAnonymity, LDiversity, SampleUniqueness, TCloseness
from .encoding import _Target
from .model import LocalRecodingModel

#: Scale of the entropy tables (relaxed by one unit each way; exactness comes from the
#: lazy check).
_ENTROPY_SCALE = 2**30


def _add_kanonymity(pm: LocalRecodingModel, req: KAnonymity, index, guard) -> None:
    """Every used vector holds at least k records."""
    for v in range(len(pm.vectors)):
        pm.check(v, "adding k-anonymity")
        pm.model.add(pm.y[v] >= req.k * pm.z[v]).with_name(f"k[{index},{v}]").only_enforce_if(guard)


def _add_risk(pm: LocalRecodingModel, req: AverageRisk | SampleUniqueness, index, guard) -> None:
    """Average risk J/n <= r and sample uniques c_1/n <= u (El Emam and Dankar, JAMIA
    15(5), 2008; docs/risk.md), exactly in integers: J <= floor(r n), c_1 <= floor(u n).

    A vector is one released class: the vectors carry the protected code, as the
    verifier regroups classes by released labels and protected value, and the suppressed
    vector of each protected value is that value's suppressed block. ``z[v]`` is exact
    (``x > 0`` forces it, ``y[v] >= z[v]``), so J = sum_v z[v]; a class of size 1 is
    counted by ``one[v]`` through ``y[v] >= 2 z[v] - one[v]``.

    With a rest (a neighbourhood), the outside classes are counted as constants: a
    vector already held by outside records is a class whether used or not (it adds no
    class), and is unique exactly when it holds one outside record and no inside one
    (``1 - z[v]``); only the vectors no outside record holds add classes and uniques.
    """
    n = pm.encoding.instance.n_rows
    model = pm.model
    rest, held = pm.rest, pm.held
    fresh = [v for v in range(len(pm.vectors)) if rest is None or not held[v]]
    outside_classes = rest.classes if rest is not None else 0
    if isinstance(req, AverageRisk):
        bound = math.floor(req.r * n) - outside_classes
        model.add(cp_model.LinearExpr.sum([pm.z[v] for v in fresh]) <= bound).with_name(
            f"risk[{index}]"
        ).only_enforce_if(guard)
        return
    bound = math.floor(req.u * n)
    ones: list = []
    if rest is not None:
        single = [v for v in range(len(pm.vectors)) if held[v] == 1]
        # The outside uniques whose vector is a candidate are counted below instead.
        bound -= rest.uniques - len(single)
        ones += [1 - pm.z[v] for v in single]
    for v in fresh:
        pm.check(v, f"adding {req}")
        one = model.new_bool_var(f"one[{index},{v}]")
        model.add(pm.y[v] >= 2 * pm.z[v] - one)
        ones.append(one)
    model.add(cp_model.LinearExpr.sum(ones) <= bound).with_name(f"risk[{index}]").only_enforce_if(guard)


def _counts(pm: LocalRecodingModel, target: _Target, v: int) -> list:
    """cnt[v,s] as linear expressions (outside records released as v included)."""
    members = pm.by_vector[v]
    per = [[] for _ in range(target.m)]
    for i in members:
        per[int(target.codes[pm.pair_t[i]])].append(pm.x[i])
    held = pm.held_counts(target.name, v, target.m)
    return [cp_model.LinearExpr.sum(p) + h for p, h in zip(per, held)]


def _add_target_requirement(pm, req, index, target: _Target, guard, reach) -> None:
    model = pm.model
    stage = f"adding {req}"
    m = target.m
    if isinstance(req, LDiversity) and req.variant == "distinct":
        for v in range(len(pm.vectors)):
            pm.check(v, stage)
            cnt = _counts(pm, target, v)
            has = []
            for s in range(m):
                h = model.new_bool_var(f"has[{index},{v},{s}]")
                model.add(h <= cnt[s])
                has.append(h)
            model.add(cp_model.LinearExpr.sum(has) >= int(req.l) * pm.z[v]).with_name(
                f"l[{index},{v}]"
            ).only_enforce_if(guard)
    elif isinstance(req, LDiversity) and req.variant == "recursive":
        c_n, c_d, l = req.c.numerator, req.c.denominator, int(req.l)
        for v in range(len(pm.vectors)):
            pm.check(v, stage)
            cnt = _counts(pm, target, v)
            top = model.new_int_var(0, reach[v], f"rmax[{index},{v}]")
            lam = model.new_int_var(0, reach[v], f"rlam[{index},{v}]")
            mus = []
            for s in range(m):
                model.add(top >= cnt[s])
                mu = model.new_int_var(0, reach[v], f"rmu[{index},{v},{s}]")
                model.add(mu >= cnt[s] - lam)
                mus.append(mu)
            tail = (l - 1) * lam + cp_model.LinearExpr.sum(mus)
            model.add(c_d * top + c_n * tail <= c_n * pm.y[v] - 1).with_name(
                f"l[{index},{v}]"
            ).only_enforce_if(guard + [pm.z[v]])
    elif isinstance(req, LDiversity):  # entropy: a relaxation, made exact by lazy cuts
        l_val = Fraction(req.l)
        for v in range(len(pm.vectors)):
            pm.check(v, stage)
            cnt = _counts(pm, target, v)
            n_v = reach[v]
            f_table = [0] + [
                math.floor(_ENTROPY_SCALE * c * math.log(c)) - 1 for c in range(1, n_v + 1)
            ]
            g_table = [0] + [
                math.ceil(_ENTROPY_SCALE * (s * (math.log(s) - math.log(l_val)))) + 1
                for s in range(1, n_v + 1)
            ]
            cvars, fvals = [], []
            for s in range(m):
                cv = model.new_int_var(0, n_v, f"ecnt[{index},{v},{s}]")
                model.add(cv == cnt[s])
                fv = model.new_int_var(min(f_table), max(f_table), f"ef[{index},{v},{s}]")
                model.add_element(cv, f_table, fv)
                cvars.append(cv)
                fvals.append(fv)
            size = model.new_int_var(0, n_v, f"esize[{index},{v}]")
            model.add(size == pm.y[v])
            gv = model.new_int_var(min(g_table), max(g_table), f"eg[{index},{v}]")
            model.add_element(size, g_table, gv)
            model.add(cp_model.LinearExpr.sum(fvals) <= gv).with_name(
                f"l[{index},{v}]"
            ).only_enforce_if(guard)
            pm.entropy.append((v, cvars, l_val, guard))
    else:  # t-closeness
        _add_tcloseness(pm, req, index, target, guard, reach)


def _add_tcloseness(pm, req: TCloseness, index, target: _Target, guard, reach) -> None:
    model = pm.model
    stage = f"adding {req}"
    glob = [int(c) for c in target.global_counts]
    total = int(sum(glob))
    t_n, t_d = req.t.numerator, req.t.denominator
    # Each row: a weight and the columns whose mass difference it takes in absolute value.
    if req.distance == "hierarchical":
        hierarchy = pm.encoding.instance.schema[target.name].hierarchy
        ground = M.EMDGround.hierarchical(hierarchy, [str(v) for v in target.values])
        rows = [(weight, columns.tolist()) for weight, columns in ground.node_columns()]
        factor = 2 * ground.height
    elif req.distance == "ordered":
        ground = M.emd_ground("ordered", target.values, pm.encoding.instance.schema[target.name], req.ordered_domain)
        # Row i: the cumulative mass up to value i, weighted by the domain step to value i + 1.
        rows = [(int(step), list(range(i + 1))) for i, step in enumerate(ground.steps)]
        factor = ground.scale
    else:
        rows = [(1, [i]) for i in range(target.m)]
        factor = 2
    for v in range(len(pm.vectors)):
        pm.check(v, stage)
        cnt = _counts(pm, target, v)
        bound = total * reach[v]
        terms = []
        for r, (weight, columns) in enumerate(rows):
            glob_part = sum(glob[j] for j in columns)
            expr = total * cp_model.LinearExpr.sum([cnt[j] for j in columns]) - glob_part * pm.y[v]
            aux = model.new_int_var(0, bound, f"emd[{index},{v},{r}]")
            model.add(aux >= expr)
            model.add(aux >= -expr)
            terms.append((weight, aux))
        lhs = cp_model.LinearExpr.weighted_sum([a for _, a in terms], [wt for wt, _ in terms])
        model.add(t_d * lhs <= t_n * factor * total * pm.y[v]).with_name(
            f"t[{index},{v}]"
        ).only_enforce_if(guard)


def _entropy_violations(pm: LocalRecodingModel, solver: cp_model.CpSolver) -> list:
    """Classes the relaxed entropy constraint admitted but exact arithmetic rejects."""
    bad = []
    for v, cvars, l_val, guard in pm.entropy:
        counts = np.array([[solver.value(c) for c in cvars]], dtype=np.int64)
        if counts.sum() and not M.entropy_l_ok(counts, l_val)[0]:
            bad.append((v, cvars, counts[0].tolist(), guard))
    return bad


def _forbid_counts(model: cp_model.CpModel, cvars, counts, guard) -> None:
    """No-good: these count variables may not take exactly these values."""
    differs = []
    for var, value in zip(cvars, counts):
        lit = model.new_bool_var("")
        model.add(var != value).only_enforce_if(lit)
        model.add(var == value).only_enforce_if(~lit)
        differs.append(lit)
    model.add_bool_or(differs).only_enforce_if(guard)
