"""Brute force for the exact models: every partition of a tiny table into classes, every
label choice per class, each release checked in exact arithmetic.

Independent of the CP-SAT models: it shares only the candidate labels
(:class:`fairanon.solver.local_recoding.LabelSpace`, whose costs the tests check against
:mod:`fairanon.models.metrics` separately) and the exact measures of
:mod:`fairanon.models.measures`.
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np

from fairanon.instances.generalization import label_covers
from fairanon.models import measures as M
from fairanon.models.requirements import (
    AlphaProtection,
    AverageRisk,
    DiversityConstraint,
    KAnonymity,
    LDiversity,
    SampleUniqueness,
    TCloseness,
    requirement_targets,
)
from fairanon.solver.fulldomain import ladders
from fairanon.solver.local_recoding import encode

MONOTONE = (KAnonymity, LDiversity, TCloseness)


def set_partitions(items, min_size=1):
    """Every partition of `items` into blocks of at least `min_size`."""
    items = list(items)
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for size in range(min_size - 1, len(rest) + 1):
        for others in itertools.combinations(rest, size):
            remaining = [r for r in rest if r not in others]
            for tail in set_partitions(remaining, min_size):
                yield [[first, *others], *tail]


class Table:
    """Per record: protected code, active value per generalizable attribute, target
    codes, flags and values read by diversity constraints."""

    def __init__(self, instance, requirements):
        self.instance = instance
        self.requirements = list(requirements)
        self.n = instance.n_rows
        schema = instance.schema
        self.names = list(schema.generalizable)
        self.protected = (
            instance.codes(schema.protected) if schema.protected else np.zeros(self.n)
        ).astype(int)
        self.targets = {}
        for req in requirements:
            if isinstance(req, (LDiversity, TCloseness)):
                for name in requirement_targets(schema, req):
                    present, dense = np.unique(instance.codes(name), return_inverse=True)
                    attr = schema[name]
                    values = [attr.domain[int(c)] if attr.domain else float(c) for c in present]
                    self.targets[name] = (dense.reshape(-1), len(present), values)
        if any(isinstance(r, AlphaProtection) for r in requirements):
            self.prot_flag = instance.protected_mask()
            self.neg_flag = instance.negative_mask()
        self.text = {c: instance.table[c].astype(str).to_numpy() for c in instance.table.columns}

    # ------------------------------------------------------------------ checks
    def feasible(self, labels, texts, shown) -> bool:
        """labels[r]: tuple of label ids per attribute; texts[r][a]: released text;
        shown[r][a]: the cell shows the record's own value."""
        classes = {}
        for r in range(self.n):
            classes.setdefault((self.protected[r],) + tuple(labels[r]), []).append(r)
        members = list(classes.values())
        for req in self.requirements:
            if isinstance(req, KAnonymity):
                if min(len(m) for m in members) < req.k:
                    return False
            elif isinstance(req, (LDiversity, TCloseness)):
                for name in requirement_targets(self.instance.schema, req):
                    codes, m, values = self.targets[name]
                    glob = np.bincount(codes, minlength=m)
                    for cls in members:
                        counts = np.bincount(codes[cls], minlength=m)
                        if not self._target_ok(req, name, counts, glob, values):
                            return False
            elif isinstance(req, DiversityConstraint):
                count = 0
                for r in range(self.n):
                    ok = True
                    for name, value in req.target:
                        if name in self.names:
                            a = self.names.index(name)
                            ok &= bool(shown[r][a]) and self.text[name][r] == value
                        else:
                            ok &= self.text[name][r] == value
                    count += ok
                if not req.lower <= count <= req.upper:
                    return False
            elif isinstance(req, AlphaProtection) and not self._alpha_ok(req, texts):
                return False
            # Risk over the classes as grouped here (the suppressed records of a protected
            # value share one key, so they are one block): J/n and c_1/n (docs/risk.md).
            elif isinstance(req, AverageRisk) and Fraction(len(members), self.n) > req.r:
                return False
            elif isinstance(req, SampleUniqueness) and Fraction(
                sum(len(m) == 1 for m in members), self.n
            ) > req.u:
                return False
        return True

    def _target_ok(self, req, name, counts, glob, values) -> bool:
        if isinstance(req, LDiversity):
            row = counts.reshape(1, -1)
            if req.variant == "distinct":
                return int((counts > 0).sum()) >= req.l
            if req.variant == "entropy":
                return bool(M.entropy_l_ok(row, req.l)[0])
            return bool(M.recursive_cl_ok(row, req.c, int(req.l))[0][0])
        if req.distance == "equal":
            ground = M.EMDGround.equal(len(values))
        elif req.distance == "ordered":
            ground = M.EMDGround.ordered(len(values))
        else:
            hierarchy = self.instance.schema[name].hierarchy
            ground = M.EMDGround.hierarchical(hierarchy, [str(v) for v in values])
        return M.emd_exact(counts, glob, ground) <= req.t

    def _alpha_ok(self, req, texts) -> bool:
        total, neg = self.n, int(self.neg_flag.sum())
        d = len(self.names)
        for size in range(d + 1):
            for attrs in itertools.combinations(range(d), size):
                groups = {}
                for r in range(self.n):
                    key = tuple(texts[r][a] for a in attrs)
                    cell = 0 if self.prot_flag[r] else 2
                    cell += 0 if self.neg_flag[r] else 1
                    groups.setdefault(key, [0, 0, 0, 0])[cell] += 1
                for a, b, c, dd in groups.values():
                    if req.min_support and a + b + c + dd < req.min_support:
                        continue
                    value = M.discrimination_exact(req.measure, a, b, c, dd, neg, total)
                    if req.larger_is_worse:
                        ok = value < req.alpha if req.strict else value <= req.alpha
                    else:
                        ok = value > req.alpha if req.strict else value >= req.alpha
                    if not ok:
                        return False
        return True


def _cost(spaces, objective, labels, values, n):
    total = Fraction(0)
    for r in range(n):
        for a, space in enumerate(spaces):
            j = labels[r][a]
            if objective == "stars":
                total += int(space.star[j])
            elif objective == "generalized":
                total += int(j != space.own[values[r][a]])
            elif objective == "ncp":
                total += space.ncp[j]
            else:
                total += space.lm[j]
    return total


def dm_share(size, suppressed, n):
    """A class's share of Bayardo and Agrawal's discernibility: n per record released
    as '*' on every generalizable quasi-identifier, else the class's size per record."""
    return n * size if suppressed else size * size


def size_key(term, sizes, stretch_k=None):
    """A privacy objective as an exact key to minimize, from the class sizes alone:
    privacy_log as -prod s^s (sum s log s is larger exactly when the product is),
    privacy_stretch as the records in classes smaller than k'."""
    if term == "privacy_log":
        return -int(np.prod([int(s) ** int(s) for s in sizes], dtype=object))
    return sum(int(s) for s in sizes if s < stretch_k)


def partition_optimum(instance, requirements, *, recoding, objective, tight=None, stretch_k=None,
                      max_range_values=16):
    """The optimum of the local recoding/suppression problem by brute force, or None if
    no release satisfies the requirements (`max_range_values` as in cpsat).

    `objective` may be a privacy objective or a lexicographic pair (a tuple); their
    optimum is given as :func:`size_key` values (a tuple for a pair). With ``tight``
    (default: every requirement union-monotone and the objective not
    discernibility), each class takes its most specific covering label only."""
    terms = objective if isinstance(objective, tuple) else (objective,)
    enc = encode(instance, requirements, recoding=recoding, max_range_values=max_range_values)
    spaces = enc.spaces
    table = Table(instance, requirements)
    n = instance.n_rows
    values = [[int(s.row_value[r]) for s in spaces] for r in range(n)]
    if tight is None:
        tight = all(isinstance(r, MONOTONE) for r in requirements) and "discernibility" not in terms
    k = max([r.k for r in requirements if isinstance(r, KAnonymity)] + [1])
    best = None
    rows = [space.masks for space in spaces]  # made once: a space of runs builds them when read
    for blocks in set_partitions(range(n), k):
        if any(len({table.protected[r] for r in block}) > 1 for block in blocks):
            continue
        choices = []
        for block in blocks:
            per_attr = []
            for a, masks in enumerate(rows):
                covered = {values[r][a] for r in block}
                fits = [j for j in range(len(masks)) if all(masks[j, v] for v in covered)]
                if tight:
                    fits = [min(fits, key=lambda j: (int(masks[j].sum()), j))]
                per_attr.append(fits)
            choices.append(list(itertools.product(*per_attr)))
        for combo in itertools.product(*choices):
            labels = [None] * n
            for block, vec in zip(blocks, combo):
                for r in block:
                    labels[r] = vec
            texts = [[spaces[a].texts[labels[r][a]] for a in range(len(spaces))] for r in range(n)]
            shown = [[labels[r][a] < spaces[a].m for a in range(len(spaces))] for r in range(n)]
            sizes = {}
            for r in range(n):
                key = (table.protected[r],) + labels[r]
                sizes[key] = sizes.get(key, 0) + 1
            parts = []
            for term in terms:
                if term == "discernibility":
                    parts.append(
                        sum(
                            dm_share(s, bool(spaces) and all(
                                spaces[a].star[j] for a, j in enumerate(key[1:])
                            ), n)
                            for key, s in sizes.items()
                        )
                    )
                elif term in ("privacy_log", "privacy_stretch"):
                    parts.append(size_key(term, sizes.values(), stretch_k))
                else:
                    parts.append(_cost(spaces, term, labels, values, n))
            cost = parts[0] if len(parts) == 1 else tuple(parts)
            if best is not None and cost >= best:
                continue
            if table.feasible(labels, texts, shown):
                best = cost
    return best


def fulldomain_optimum(instance, requirements, *, objective, max_suppressed=0):
    """The optimum over every lattice node by brute force (None if none passes)."""
    lads = ladders(instance)
    table = Table(instance, requirements)
    active = _active_values(instance, lads)
    best = None
    for node in itertools.product(*[range(lad.height + 1) for lad in lads]):
        suppressed, texts, cost = _node(
            table, lads, active, node, requirements, objective, max_suppressed
        )
        if sum(suppressed) > max_suppressed:
            continue
        shown = [
            [(not suppressed[r]) and node[a] == 0 for a in range(len(lads))]
            for r in range(table.n)
        ]
        if not table.feasible([tuple(t) for t in texts], texts, shown):
            continue
        if best is None or cost < best:
            best = cost
    return best


def fulldomain_node(instance, requirements, node, *, objective):
    """At lattice node `node` with suppression: the records suppressed (those of the
    classes failing k, l or t) and the objective's cost, whether or not the node
    passes."""
    table, lads = Table(instance, requirements), ladders(instance)
    active = _active_values(instance, lads)
    suppressed, _, cost = _node(table, lads, active, node, requirements, objective, True)
    return sum(suppressed), cost


def _active_values(instance, lads):
    """Each row's active value per generalizable attribute."""
    from fairanon.solver.local_recoding.labels import _active

    return [_active(instance, lad.name)[1] for lad in lads]


def _node(table, lads, active, node, requirements, objective, suppress):
    """Suppressed flags, released texts and cost of `node` (suppressing when `suppress`)."""
    n = table.n
    texts = [
        [lad.labels[j][int(active[a][r])] for a, (lad, j) in enumerate(zip(lads, node))]
        for r in range(n)
    ]
    suppressed = [False] * n
    if suppress:
        classes = {}
        for r in range(n):
            classes.setdefault((table.protected[r],) + tuple(texts[r]), []).append(r)
        monotone = [q for q in requirements if isinstance(q, MONOTONE)]
        for members in classes.values():
            if not _class_ok(table, monotone, members):
                for r in members:
                    suppressed[r] = True
        texts = [["*"] * len(lads) if suppressed[r] else texts[r] for r in range(n)]
    if objective == "discernibility":
        sizes = {}
        for r in range(n):
            key = (table.protected[r],) + tuple(texts[r])
            sizes[key] = sizes.get(key, 0) + 1
        empty = [{t: _tells_nothing(table.instance, lad.name, t)
                  for t in {*lad.labels[j], "*"}}
                 for lad, j in zip(lads, node)]
        cost = sum(
            dm_share(s, bool(lads) and all(empty[a][t] for a, t in enumerate(key[1:])), n)
            for key, s in sizes.items()
        )
    else:
        cost = Fraction(0)
        for r in range(n):
            for a, lad in enumerate(lads):
                if suppressed[r]:
                    cost += lad.star_cost[objective]
                else:
                    cost += lad.cost[objective][node[a]][int(active[a][r])]
    return suppressed, texts, cost


def _tells_nothing(instance, name, text) -> bool:
    """'*', or a label (not a value's own) covering every value present (docs/metrics.md),
    the slow way: each value present tested against the parsed label."""
    if text == "*":
        return True
    attr = instance.schema[name]
    covers = label_covers(attr, [text])
    if attr.kind == "numeric":
        present = sorted(set(instance.codes(name).tolist()))
        own = covers.lo[0] == covers.hi[0] and not covers.lo_open[0] and not covers.hi_open[0]
        inside = [covers.contains(np.array([0]), np.array([v]))[0] for v in present]
    else:
        active = instance.active_domain(name)
        own = text in attr.domain
        inside = [covers.mask[0, j] for j in range(len(attr.domain)) if active[j]]
    return not own and all(inside)


def _class_ok(table, requirements, members) -> bool:
    for req in requirements:
        if isinstance(req, KAnonymity):
            if len(members) < req.k:
                return False
            continue
        for name in requirement_targets(table.instance.schema, req):
            codes, m, values = table.targets[name]
            glob = np.bincount(codes, minlength=m)
            counts = np.bincount(codes[members], minlength=m)
            if not table._target_ok(req, name, counts, glob, values):
                return False
    return True
