"""dSabre: Sabre for discrimination protection (Ruggieri, Trans. Data Privacy 2014,
Alg. 2-3, §5.2).

The buckets are the cells of the whole table's contingency table: (protected,
negative), (protected, positive), (unprotected, negative), (unprotected, positive).
A search tree halves the cell counts (floor for protected cells, ceil for unprotected
ones) while both halves keep their maximum variational distance τ <= t, so the tree
depends only on the four counts. Each leaf becomes an equivalence class: a first record
from the bucket with the lowest ratio of remaining to needed records, then its nearest
neighbours (normalized ranks of the PND attributes) from every bucket. By Thm 23 the
release is bd_f(max(t, τ(R)))-protective. Where it departs from the paper (docs/papers.md):
R-8 (split test on the children's sizes), R-9 (optional "alternate" halving), R-10
(first bucket, neighbours of the first record over global normalized ranks, ties).
"""

from __future__ import annotations

import time
from fractions import Fraction

import numpy as np

from .._validation import check_option, check_random_state
from ..exceptions import IncompatibleRequirementError, InvalidParameterError
from ..instances.instance import Instance
from ..models import measures as M
from ..models.requirements import (
    AlphaProtection,
    KAnonymity,
    TCloseness,
    requirement_targets,
    validate_requirements,
)
from ..release import Release, Status, generalize_partition, provenance
from .dmondrian import K_MODES, PD_GROUPS, _threshold, guarantee_notes, settled
from .sabre.materialization import SEED_BUCKET_RULES, SEED_TUPLE_RULES, class_ids, id_order, materialize
from .sabre.neighbours import RETRIEVALS, NeighbourPool, QISpace
from .sabre.plan import _deadline, halve, plan_classes

__all__ = ["SPLIT_RULES", "dsabre", "halve_paper"]

#: How a node's counts are halved: "paper" (Alg. 3 l. 5-8: floor for protected cells,
#: ceil for unprotected ones), or "alternate": the paper's halves unless one is empty,
#: then odd counts alternate between the halves (docs/papers.md, R-9; a deviation from
#: [R] that lets (0,0,1,1) and (1,1,0,0) split).
SPLIT_RULES = ("paper", "alternate")


def halve_paper(nodes: np.ndarray, protected: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Ruggieri's halving (Alg. 3 l. 5-8): floor(x/2) of each protected cell and
    ceil(x/2) of each unprotected cell go left, the rest right.

    >>> left, right = halve_paper(np.array([[4, 4, 4, 5], [1, 1, 1, 2]]), np.array([True, True, False, False]))
    >>> left.tolist(), right.tolist()
    ([[2, 2, 2, 3], [0, 0, 1, 1]], [[2, 2, 2, 2], [1, 1, 0, 1]])
    """
    nodes = np.asarray(nodes, dtype=np.int64)
    left = np.where(protected, nodes // 2, nodes - nodes // 2)
    return left, nodes - left


class _Cells:
    """The buckets: one per (PD group, decision) pair, protected groups first, the
    negative cell before the positive one (A, B, C, D for a binary PD attribute)."""

    def __init__(self, block: np.ndarray, negative: np.ndarray, protected_block: np.ndarray, pd_groups: str):
        self.mode = pd_groups
        n_blocks = len(protected_block)
        if pd_groups == "binary":
            group_of_block = np.where(protected_block, 0, 1)
            n_groups = 2
            group_protected = np.array([True, False])
        else:  # one group per PD value, protected values first (stable)
            order = np.argsort(~protected_block, kind="stable")
            group_of_block = np.empty(n_blocks, dtype=np.int64)
            group_of_block[order] = np.arange(n_blocks)
            n_groups = n_blocks
            group_protected = protected_block[order]
        self.group_of_block = group_of_block
        self.n_groups = n_groups
        # cell 2g: group g negative; 2g + 1: group g positive.
        self.cell_of_row = 2 * group_of_block[block] + (1 - negative)
        self.protected = np.repeat(group_protected, 2)
        self.negative = np.tile([True, False], n_groups)
        self.group = np.repeat(np.arange(n_groups), 2)
        self.root = np.bincount(self.cell_of_row, minlength=2 * n_groups)
        self._order = np.argsort(group_of_block, kind="stable")  # blocks by group

    def labels(self, pd_attr, present, dec_attr) -> list[tuple[str, str]]:
        """(PD group, decision) of every cell: "protected"/"unprotected" or a PD value."""
        if self.mode == "binary":
            groups = ["protected", "unprotected"]
        else:
            groups = [pd_attr.domain[int(present[b])] for b in self._order]
        others = [v for v in dec_attr.domain if v != dec_attr.negative]
        positive = others[0] if len(others) == 1 else f"not {dec_attr.negative}"
        return [(g, v) for g in groups for v in (dec_attr.negative, positive)]


class _TauCheck:
    """τ <= t (Def. 17) of many count vectors at once, decided exactly: in every group
    with records, |negatives / size - p-| <= t."""

    def __init__(self, cells: _Cells, neg: int, total: int, t: Fraction):
        self.cells, self.neg, self.total, self.t = cells, neg, total, Fraction(t)

    def group_counts(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        negatives = nodes[:, self.cells.negative]  # one column per group, in order
        sizes = negatives + nodes[:, ~self.cells.negative]
        return negatives, sizes

    def within(self, nodes: np.ndarray) -> np.ndarray:
        negatives, sizes = self.group_counts(nodes)
        pm = self.neg / self.total
        with np.errstate(invalid="ignore", divide="ignore"):
            vd = np.where(sizes > 0, np.abs(negatives / np.maximum(sizes, 1) - pm), 0.0).ravel()
        neg_flat, size_flat = negatives.ravel(), sizes.ravel()
        p_minus = Fraction(self.neg, self.total)

        def exact(i: int) -> Fraction:
            return abs(Fraction(int(neg_flat[i]), int(size_flat[i])) - p_minus) if size_flat[i] else Fraction(0)

        return M.exact_compare(vd, exact, self.t, "le").reshape(negatives.shape).all(axis=1)

    def exact(self, node: np.ndarray) -> Fraction:
        negatives, sizes = self.group_counts(np.asarray(node).reshape(1, -1))
        p_minus = Fraction(self.neg, self.total)
        return max(
            (abs(Fraction(int(a), int(s)) - p_minus) for a, s in zip(negatives[0], sizes[0]) if s),
            default=Fraction(0),
        )


def dsabre(
    instance,
    requirements,
    *,
    k_mode: str = "strict",
    pd_groups: str | None = None,
    seed_bucket: str = "size/need",
    seed_tuple: str = "random",
    split_rule: str = "paper",
    retrieval: str = "knn",
    seed=None,
    time_limit=None,
) -> Release:
    """dSabre [1]_ (Alg. 2-3): bucketize by PD group and decision, halve the counts
    while τ <= t, and fill each class with nearest neighbours.

    Parameters
    ----------
    instance : Instance
        Needs a protected (PD) attribute, never generalized, and a binary decision
        attribute; every role "qi" attribute is a PND attribute. Classes release the
        range ``[lo-hi]`` of numeric and ordered attributes and the lowest common
        ancestor of categorical ones (``housing-car``).
    requirements : sequence of Requirement
        As for :func:`~fairanon.heuristics.dmondrian.dmondrian`: t from a TCloseness
        of the decision attribute and/or AlphaProtection requirements (each turned
        into t_alpha = bd_f^{-1}(alpha); the smallest t is used), and optionally
        KAnonymity.
    k_mode : {"strict", "ec"}, default="strict"
        "strict": every released class (which fixes the PD value) has 0 or >= k
        records, as the verifier checks; "ec": each class has >= k records (Ruggieri
        §5.2), k-anonymity w.r.t. the PND attributes only (docs/papers.md, R-6).
    pd_groups : {"binary", "values"}, optional
        The groups τ looks at, and so the buckets: protected and unprotected records
        ("binary", Ruggieri's four buckets) or each PD value apart ("values", two
        buckets per value, what t-closeness of the decision in every released class
        needs). Default: "values" when a TCloseness of the decision is given, else
        "binary"; with a binary PD attribute both are Ruggieri's algorithm.
    seed_bucket : {"size/need", "need/size", "random"}, default="size/need"
        The bucket of a class's first record (docs/papers.md, R-10): lowest remaining /
        needed ratio (Ruggieri's text, footnote 4), its inverse, or random.
    seed_tuple : {"random", "min_id"}, default="random"
        The first record in that bucket: random (Ruggieri) or the smallest record id.
    split_rule : {"paper", "alternate"}, default="paper"
        :data:`SPLIT_RULES`.
    retrieval : {"knn", "approx"}, default="knn"
        Exact nearest neighbours (kd-trees, as in [1]_ §6) or the approximate Hilbert
        walk of :class:`~fairanon.heuristics.sabre.neighbours.NeighbourPool`.
    seed : None, int or numpy.random.Generator
        For the random rules; the same seed gives the same release.
    time_limit : float, optional
        Seconds for the search tree; nodes not yet split become classes (the release
        keeps every guarantee) and ``provenance["time_limit_reached"]`` is True.

    Returns
    -------
    Release
        FEASIBLE, or INFEASIBLE with a ``reason`` when t is below the floor τ(R) (the
        release is then made with t = the floor, guaranteeing bd_f(τ(R))), an
        AlphaProtection needs t < 0, or the records of one PD value are fewer than k.
        Provenance: ``t``, ``t_source``, ``t_alpha``, ``p_minus``, ``tau_R``,
        ``tau_floor``, ``guaranteed_t`` = max(t, τ(R)) (Thm 23), ``bounds`` (for each
        of the seven measures bd_f(guaranteed_t) and its opposite side) and
        ``leaves``, the contingency tables of the classes in depth-first order, as
        (table, repeat) runs; ``cells`` names the columns of those tables.

    Raises
    ------
    IncompatibleRequirementError
        No PD or decision attribute, a non-binary decision, no threshold, a
        requirement dSabre cannot enforce (l-diversity, t-closeness of another
        attribute, diversity constraints), or groups dSabre cannot control: a
        TCloseness of the decision or a strict k > 1 with pd_groups="binary" and a PD
        attribute with more than two values.
    InvalidParameterError
        A bad option, time limit or seed, or k larger than the table.

    Notes
    -----
    The search tree has at most log2 |R| levels, all of its nodes of a level are
    tested in one vectorized step, and it depends only on the bucket sizes, t and k.
    Materialization runs one kd-tree query per (class, bucket) (batched, see
    :func:`~fairanon.heuristics.sabre.materialization.materialize`), ties by smallest record id; its
    cost is what makes the running time bell-shaped in t [1]_: few leaves at low t,
    many cheap ones at high t. Coordinates are normalized ranks (r - 1)/(|dom| - 1)
    over the values present in the whole input (footnote 5), PND attributes only.

    Departures from [1]_: the split test also asks both children to be non-empty
    (with k: to have >= k records) because Alg. 3 as printed never terminates on
    (0, 0, 1, 1) (docs/papers.md, R-8); with pd_groups="values" and a PD attribute of more than two
    values, the buckets are per value, protected values halved with floor.

    References
    ----------
    .. [1] S. Ruggieri. Using t-closeness anonymity to control for non-discrimination.
       Transactions on Data Privacy 7(2):99-129, 2014.

    Examples
    --------
    >>> inst = fa.load("ruggieri_loan")
    >>> req = fa.TCloseness("1/4", attribute="decision")
    >>> rel = dsabre(inst, [req], seed_tuple="min_id")
    >>> rel.provenance["leaves"][:3]
    [((1, 1, 1, 2), 1), ((0, 0, 1, 1), 1), ((1, 1, 0, 0), 1)]
    >>> from fairanon.models.metrics import generalized_cells
    >>> generalized_cells(inst, rel), fa.verify(inst, rel, [req]).passed
    (11, True)
    """
    started = time.perf_counter()
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            f"The 'instance' parameter of dsabre must be an Instance. Got {type(instance).__name__} instead."
        )
    requirements = validate_requirements(instance, requirements, caller="dsabre")
    check_option(k_mode, "k_mode", "dsabre", K_MODES)
    if pd_groups is not None:
        check_option(pd_groups, "pd_groups", "dsabre", PD_GROUPS)
    check_option(seed_bucket, "seed_bucket", "dsabre", SEED_BUCKET_RULES)
    check_option(seed_tuple, "seed_tuple", "dsabre", SEED_TUPLE_RULES)
    check_option(split_rule, "split_rule", "dsabre", SPLIT_RULES)
    check_option(retrieval, "retrieval", "dsabre", RETRIEVALS)
    deadline = _deadline(time_limit, started, "dsabre")
    rng = check_random_state(seed)
    schema = instance.schema
    pd_name, dec_name = schema.protected, schema.decision
    missing = [role for role, name in (("protected", pd_name), ("decision", dec_name)) if name is None]
    if missing:
        raise IncompatibleRequirementError(
            f"dsabre needs a {' and a '.join(missing)} attribute; instance {instance.name!r} has none."
        )
    if len(np.unique(instance.codes(dec_name))) > 2:
        raise IncompatibleRequirementError(
            f"dsabre needs a binary decision attribute (Ruggieri §2); {dec_name!r} has more than "
            "two values. Binarize it first (negative vs the rest)."
        )
    k, t_close, alphas = 1, [], []
    for req in requirements:
        if isinstance(req, KAnonymity):
            k = max(k, req.k)
        elif isinstance(req, AlphaProtection):
            alphas.append(req)
        elif isinstance(req, TCloseness) and requirement_targets(schema, req) == (dec_name,):
            t_close.append(req)
        else:
            raise IncompatibleRequirementError(
                f"dsabre cannot enforce {req}: it enforces TCloseness of the decision attribute "
                f"({dec_name!r}), AlphaProtection and KAnonymity. Use method='dmondrian' for "
                "other l-diversity or t-closeness requirements."
            )
    if not t_close and not alphas:
        raise IncompatibleRequirementError(
            f"dsabre needs its threshold from a TCloseness of the decision attribute ({dec_name!r}) "
            f"or from an AlphaProtection requirement; got {[str(r) for r in requirements]}."
        )

    n = instance.n_rows
    pd_attr = schema[pd_name]
    present, block = np.unique(instance.codes(pd_name), return_inverse=True)
    block = block.reshape(-1).astype(np.int64)
    protected_block = np.isin(present, [pd_attr.domain.index(v) for v in pd_attr.protected])
    if pd_groups is None:
        pd_groups = "values" if t_close else "binary"
    if pd_groups == "binary" and len(present) > 2 and (t_close or (k > 1 and k_mode == "strict")):
        what = t_close[0] if t_close else f"{k}-anonymity (k_mode='strict')"
        raise IncompatibleRequirementError(
            f"pd_groups='binary' keeps only protected and unprotected records apart, but {what} "
            f"is checked in every released class, one per value of {pd_name!r} ({len(present)} "
            "values). Use pd_groups='values', or binarize the PD attribute."
        )
    negative = instance.negative_mask().astype(np.int64)
    neg = int(negative.sum())
    p_minus = Fraction(neg, n)
    cells = _Cells(block, negative, protected_block, pd_groups)
    binary = _Cells(block, negative, protected_block, "binary")
    tau_r = _TauCheck(binary, neg, n, 0).exact(binary.root)
    floor = _TauCheck(cells, neg, n, 0).exact(cells.root)
    table = tuple(int(v) for v in binary.root)
    t_used, source, t_alphas, reasons = _threshold(t_close, alphas, floor, tau_r, table, neg, n, pd_groups, pd_name)
    params = {
        "k_mode": k_mode,
        "pd_groups": pd_groups,
        "seed_bucket": seed_bucket,
        "seed_tuple": seed_tuple,
        "split_rule": split_rule,
        "retrieval": retrieval,
        "time_limit": time_limit,
    }
    notes = {
        "cells": cells.labels(pd_attr, present, schema[dec_name]),
        **guarantee_notes(t_used, source, t_alphas, p_minus, tau_r, floor, k, k_mode, pd_name),
    }

    def release(groups, status=Status.FEASIBLE, reason=None, **extra):
        return Release(
            table=generalize_partition(instance, groups),
            groups=groups,
            status=status,
            reason=reason,
            provenance=provenance("dsabre", params, requirements, seed, started, **notes, **extra),
        )

    group_sizes = cells.root[0::2] + cells.root[1::2]
    if k_mode == "strict" and k > 1 and ((group_sizes > 0) & (group_sizes < k)).any():
        g = int(np.flatnonzero((group_sizes > 0) & (group_sizes < k))[0])
        who = "protected" if cells.protected[2 * g] else "unprotected"
        if pd_groups == "values":
            who = f"{pd_name}={pd_attr.domain[int(present[np.flatnonzero(cells.group_of_block == g)[0]])]!r}"
        reason = (
            f"{k}-anonymity is violated by the {int(group_sizes[g])} records with {who}: the PD "
            "attribute is released unchanged, so these records only form classes among "
            "themselves and no release satisfies the requirement."
        )
        return release(np.zeros(n, dtype=np.int64), Status.INFEASIBLE, reason, leaves=_runs([cells.root]))

    tau = _TauCheck(cells, neg, n, t_used)

    def allowed(children: np.ndarray) -> np.ndarray:
        sizes = children.sum(axis=1)
        if k_mode == "strict":
            per_group = children[:, 0::2] + children[:, 1::2]
            ok = (sizes >= 1) & ((per_group == 0) | (per_group >= k)).all(axis=1)
        else:
            ok = sizes >= max(1, k)
        ok[ok] = tau.within(children[ok])
        return ok

    def split(nodes: np.ndarray):
        left, right = halve_paper(nodes, cells.protected)
        if split_rule == "alternate":
            empty = (left.sum(axis=1) == 0) | (right.sum(axis=1) == 0)
            alt_left, alt_right = halve(nodes)
            left = np.where(empty[:, None], alt_left, left)
            right = np.where(empty[:, None], alt_right, right)
        return left, right

    leaves, timed_out = plan_classes(cells.root, allowed, split=split, deadline=deadline)
    order = id_order(instance)  # position in `order` = rank of the record id
    coords = QISpace(instance, scale="ranks").coords[order]
    pool = NeighbourPool(coords, cells.cell_of_row[order], len(cells.root), retrieval)
    ids = np.broadcast_to(np.arange(len(cells.root)), (len(leaves), len(cells.root)))
    classes = materialize(pool, leaves, ids, rng, seed_bucket=seed_bucket, seed_tuple=seed_tuple)
    offered = release(
        class_ids(classes, order, n),
        leaves=_runs(leaves),
        n_leaves=len(leaves),
        time_limit_reached=timed_out,
    )
    return settled(instance, offered, reasons)


def _runs(leaves) -> list[tuple[tuple[int, ...], int]]:
    """Leaves in depth-first order as (table, repeat) runs: at high t there are hundreds
    of thousands, mostly repeating.

    >>> _runs([np.array([1, 1, 0, 0]), np.array([1, 1, 0, 0]), np.array([0, 0, 1, 1])])
    [((1, 1, 0, 0), 2), ((0, 0, 1, 1), 1)]
    """
    leaves = np.asarray(leaves, dtype=np.int64).reshape(len(leaves), -1)
    starts = np.flatnonzero(np.r_[True, (np.diff(leaves, axis=0) != 0).any(axis=1)])
    repeats = np.diff(np.r_[starts, len(leaves)])
    return [(tuple(table), int(r)) for table, r in zip(leaves[starts].tolist(), repeats)]
