"""Strict multidimensional Mondrian (LeFevre, DeWitt, Ramakrishnan, ICDE 2006).

Top-down partitioning of the quasi-identifier space: a partition is cut on its widest
allowed attribute (numeric/ordered: at a value; categorical: into the children of its
hierarchy node) as long as every child satisfies every requirement. The requirements
must be union-monotone (k-anonymity, l-diversity, t-closeness), so the leaves form a
valid release. Executable spec: baselines spec §2.2-§2.6.

Cut rules are plain functions kept in :data:`CUT_RULES`; a callable with the same
signature works too.
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .._validation import check_random_state
from ..exceptions import IncompatibleRequirementError, InvalidParameterError
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
from ..release import Release, Status, generalize_partition, provenance

__all__ = ["CUT_RULES", "cut_balanced", "cut_median", "mondrian"]


# ------------------------------------------------------------------ cut rules
def cut_median(counts: np.ndarray) -> np.ndarray:
    """The median cut of a frequency set [1]_ (baselines spec §2.2).

    Parameters
    ----------
    counts : array of int
        Counts c_1..c_u of the distinct values v_1 < ... < v_u of one attribute in a
        partition.

    Returns
    -------
    array of int
        At most one cut index j (0-based): the left child holds the values v_1..v_{j+1}.
        With half = floor(n / 2), j + 1 is the smallest s with c_1 + ... + c_s >= half;
        no cut when that value is the largest (the right child would be empty).

    References
    ----------
    .. [1] K. LeFevre, D. J. DeWitt, R. Ramakrishnan. Mondrian multidimensional
       k-anonymity. ICDE 2006. https://doi.org/10.1109/ICDE.2006.101

    Examples
    --------
    >>> cut_median(np.array([3, 8, 1])).tolist()  # baselines spec §2.6 V3: 11 | 1
    [1]
    >>> cut_median(np.array([1, 4, 1])).tolist()  # half = 3: left holds 5 rows, right 1
    [1]
    >>> cut_median(np.array([5, 1])).tolist()
    [0]
    >>> cut_median(np.array([1, 5])).tolist()  # half = 3 is reached at the last value
    []
    """
    counts = np.asarray(counts)
    if len(counts) < 2:
        return np.zeros(0, dtype=np.int64)
    half = int(counts.sum()) // 2
    s = int(np.searchsorted(np.cumsum(counts), half, side="left"))
    if s >= len(counts) - 1:
        return np.zeros(0, dtype=np.int64)
    return np.array([s], dtype=np.int64)


def cut_balanced(counts: np.ndarray) -> np.ndarray:
    """Every non-trivial cut of a frequency set, most balanced first (baselines spec §2.2).

    Cut j leaves c_1 + ... + c_{j+1} rows on the left; cuts are ordered by
    | left - right |, ties toward the smaller j. Mondrian takes the first allowable one,
    so it also finds cuts the median rule misses when values repeat.

    >>> cut_balanced(np.array([3, 8, 1])).tolist()  # V3: 3 | 9 before 11 | 1
    [0, 1]
    >>> cut_balanced(np.array([1, 1, 1, 1])).tolist()
    [1, 0, 2]
    """
    counts = np.asarray(counts)
    if len(counts) < 2:
        return np.zeros(0, dtype=np.int64)
    left = np.cumsum(counts)[:-1]
    imbalance = np.abs(2 * left - int(counts.sum()))
    return np.argsort(imbalance, kind="stable").astype(np.int64)


#: Cut rules for numeric and ordered attributes, by name. A rule maps the frequency set
#: of a partition (counts of its distinct values, in order) to the cut indices to try,
#: in order; Mondrian takes the first allowable one.
CUT_RULES: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "median": cut_median,
    "balanced": cut_balanced,
}


# ------------------------------------------------------------------ requirements
@dataclass(frozen=True)
class _Check:
    """One requirement on one target attribute, as a test of count rows.

    ``test(sizes, counts)`` gets the sizes of some candidate classes and, for a
    target-reading requirement, their counts over the target's values (one row per
    class); it returns one bool per class.
    """

    requirement: Requirement
    target: str | None
    test: Callable[[np.ndarray, np.ndarray | None], np.ndarray]


@dataclass(frozen=True)
class _Target:
    """A sensitive/decision attribute: dense codes (values present, in the attribute's
    order) and the whole table's counts."""

    name: str
    codes: np.ndarray
    m: int
    global_counts: np.ndarray
    values: tuple


def _encode_target(instance: Instance, name: str) -> _Target:
    attr = instance.schema[name]
    present, dense = np.unique(instance.codes(name), return_inverse=True)
    dense = dense.reshape(-1).astype(np.int64)
    if attr.domain is not None:
        values = tuple(attr.domain[int(c)] for c in present)
    else:
        values = tuple(float(v) for v in present)
    return _Target(name, dense, len(present), np.bincount(dense, minlength=len(present)), values)


def _make_check(instance: Instance, req: Requirement, target: _Target | None) -> _Check:
    if isinstance(req, KAnonymity):
        k = req.k
        return _Check(req, None, lambda sizes, counts: sizes >= k)
    if isinstance(req, LDiversity):
        if req.variant == "distinct":
            l_int = int(req.l)
            return _Check(req, target.name, lambda sizes, counts: M.distinct_l(counts) >= l_int)
        if req.variant == "entropy":
            l_val = req.l
            return _Check(req, target.name, lambda sizes, counts: M.entropy_l_ok(counts, l_val))
        c, l_int = req.c, int(req.l)
        return _Check(
            req, target.name, lambda sizes, counts: M.recursive_cl_ok(counts, c, l_int)[0]
        )
    if isinstance(req, TCloseness):
        if req.distance == "equal":
            ground = M.EMDGround.equal(target.m)
        elif req.distance == "ordered":
            ground = M.EMDGround.ordered(target.m)
        else:
            hierarchy = instance.schema[target.name].hierarchy
            ground = M.EMDGround.hierarchical(hierarchy, [str(v) for v in target.values])
        glob, t = target.global_counts, req.t

        def test(sizes, counts):
            distances = M.emd(counts, glob, ground)
            return M.exact_compare(
                distances, lambda i: M.emd_exact(counts[i], glob, ground), t, "le"
            )

        return _Check(req, target.name, test)
    raise IncompatibleRequirementError(  # pragma: no cover - rejected earlier
        f"mondrian cannot enforce {req}."
    )


_SUGGEST = {
    DiversityConstraint: "method='diva' or method='cpsat'",
    AlphaProtection: "method='cpsat', or t-closeness of the decision attribute (Ruggieri Thm 10)",
}


def _reject_non_monotone(requirements: Sequence[Requirement]) -> None:
    for req in requirements:
        hint = _SUGGEST.get(type(req), "method='cpsat'")
        if not req.union_monotone:
            raise IncompatibleRequirementError(
                f"mondrian cannot enforce {req}: it is not union-monotone, so checking the "
                f"children of each cut does not make the release satisfy it. Use {hint}."
            )
        if not isinstance(req, (KAnonymity, LDiversity, TCloseness)):
            raise IncompatibleRequirementError(
                f"mondrian cannot enforce {req}: it checks only KAnonymity, LDiversity and "
                f"TCloseness. Use {hint}."
            )


class _Checks:
    """Every requirement as count tests; evaluates candidate children."""

    def __init__(self, instance: Instance, requirements: Sequence[Requirement]):
        self.targets: dict[str, _Target] = {}
        self.checks: list[_Check] = []
        min_size = 1
        for req in requirements:
            if isinstance(req, KAnonymity):
                self.checks.append(_make_check(instance, req, None))
                min_size = max(min_size, req.k)
                continue
            if isinstance(req, LDiversity):
                # A class with fewer than ceil(l) records cannot hold l (distinct, or
                # entropy-equivalent) values.
                min_size = max(min_size, math.ceil(req.l))
            for name in requirement_targets(instance.schema, req):
                if name not in self.targets:
                    self.targets[name] = _encode_target(instance, name)
                self.checks.append(_make_check(instance, req, self.targets[name]))
        self.min_size = min_size
        self.reads_targets = any(c.target is not None for c in self.checks)

    def counts(
        self, rows: np.ndarray, labels: np.ndarray, n_children: int
    ) -> dict[str, np.ndarray]:
        """Counts[child, value] of every target over the rows of a candidate split."""
        out = {}
        for name, target in self.targets.items():
            flat = np.bincount(
                labels * target.m + target.codes[rows], minlength=n_children * target.m
            )
            out[name] = flat.reshape(n_children, target.m)
        return out

    def passing(self, sizes: np.ndarray, counts: dict[str, np.ndarray]) -> np.ndarray:
        """Per candidate class: does it pass every requirement?"""
        ok = np.ones(len(sizes), dtype=bool)
        for check in self.checks:
            ok &= check.test(sizes, counts.get(check.target) if check.target else None)
            if not ok.any():
                break
        return ok

    def first_failure(self, rows: np.ndarray) -> str | None:
        """The first requirement the set `rows` (one class) violates, as text, if any."""
        sizes = np.array([len(rows)])
        counts = self.counts(rows, np.zeros(len(rows), dtype=np.int64), 1)
        for check in self.checks:
            if not check.test(sizes, counts.get(check.target) if check.target else None)[0]:
                text = str(check.requirement)
                if check.target is not None and check.requirement.attribute is None:
                    text += f" of {check.target}"
                return text
        return None


# ------------------------------------------------------------------ attributes
class _Space:
    """The generalizable quasi-identifiers, integer-coded.

    Numeric and ordered attributes are ranks (columns of one matrix, so a partition's
    tight box is one gather and two reductions); categorical attributes keep their
    leaf codes and an ancestor table ``anc[depth, leaf]`` (node ids in the hierarchy's
    depth-first order) so that a hierarchy split is one bincount.
    """

    def __init__(self, instance: Instance):
        self.names = list(instance.schema.generalizable)
        ranks, self.rank_col, self.rank_values, self.rank_range = [], {}, {}, {}
        self.cat_codes, self.anc, self.node_depth, self.node_leaves, self.node_is_leaf = (
            {},
            {},
            {},
            {},
            {},
        )
        self.n_leaves = {}
        for a, name in enumerate(self.names):
            attr = instance.schema[name]
            codes = instance.codes(name)
            if attr.kind == "numeric":
                values, rank = np.unique(codes, return_inverse=True)
                self.rank_col[a] = len(ranks)
                ranks.append(rank.reshape(-1).astype(np.int64))
                self.rank_values[a] = values.astype(float)
                self.rank_range[a] = float(values[-1] - values[0])
            elif attr.kind == "ordered":
                self.rank_col[a] = len(ranks)
                ranks.append(codes.astype(np.int64))
                m = len(attr.domain)
                self.rank_values[a] = np.arange(m, dtype=float)
                self.rank_range[a] = float(m - 1)
            else:
                h = attr.hierarchy
                nodes = h.nodes
                node_id = {n: i for i, n in enumerate(nodes)}
                anc = np.zeros((h.height + 1, len(h.leaves)), dtype=np.int64)
                for j, leaf in enumerate(h.leaves):
                    chain = list(reversed(h.ancestors(leaf)))  # root .. leaf
                    for d in range(h.height + 1):
                        anc[d, j] = node_id[chain[min(d, len(chain) - 1)]]
                self.cat_codes[a] = codes.astype(np.int64)
                self.anc[a] = anc
                self.node_depth[a] = np.array([h.depth[n] for n in nodes], dtype=np.int64)
                self.node_leaves[a] = np.array(
                    [int(h.leaf_mask(n).sum()) for n in nodes], dtype=np.int64
                )
                self.node_is_leaf[a] = np.array([not h.children[n] for n in nodes], dtype=bool)
                self.n_leaves[a] = len(h.leaves)
        self.ranks = (
            np.column_stack(ranks) if ranks else np.zeros((instance.n_rows, 0), dtype=np.int64)
        )
        self.ranked = [a for a in range(len(self.names)) if a in self.rank_col]
        self.categorical = [a for a in range(len(self.names)) if a in self.cat_codes]
        # Every categorical attribute starts at its hierarchy's root (node id 0).
        self.root_nodes = tuple(0 for _ in self.categorical)


# ------------------------------------------------------------------ the algorithm
def _check_time_limit(time_limit) -> float | None:
    if time_limit is None:
        return None
    if (
        isinstance(time_limit, bool)
        or not isinstance(time_limit, numbers.Real)
        or not time_limit >= 0
    ):
        raise InvalidParameterError(
            "The 'time_limit' parameter of mondrian must be None or a number of seconds in "
            f"[0, inf]. Got {time_limit!r} instead."
        )
    return float(time_limit)


def _resolve_cut_rule(cut_rule) -> tuple[Callable[[np.ndarray], np.ndarray], str]:
    if isinstance(cut_rule, str) and cut_rule in CUT_RULES:
        return CUT_RULES[cut_rule], cut_rule
    if callable(cut_rule):
        return cut_rule, getattr(cut_rule, "__name__", repr(cut_rule))
    names = ", ".join(repr(k) for k in sorted(CUT_RULES))
    raise InvalidParameterError(
        f"The 'cut_rule' parameter of mondrian must be one of {names} or a callable. "
        f"Got {cut_rule!r} instead."
    )


def mondrian(instance, requirements, *, cut_rule="median", seed=None, time_limit=None) -> Release:
    """Strict multidimensional Mondrian partitioning [1]_ with k, l and t split checks.

    Parameters
    ----------
    instance : Instance
        The table; only role "qi" attributes are generalized. The protected attribute
        is a quasi-identifier released unchanged, so no class mixes its values.
    requirements : sequence of Requirement
        KAnonymity, LDiversity (distinct, entropy, recursive) and TCloseness (equal,
        ordered, hierarchical EMD against the whole table), checked on every child of
        every cut; each must be union-monotone.
    cut_rule : {"median", "balanced"} or callable, default="median"
        "median" reproduces [1]_; "balanced" tries every cut of a numeric or ordered
        attribute, most balanced first, and takes the first allowable one (see Notes).
        A callable maps a frequency set (counts of the distinct values, in order) to
        cut indices to try, as :func:`cut_median` and :func:`cut_balanced` do.
    seed : None, int or numpy.random.Generator, default=None
        Accepted for the common method signature and recorded; the algorithm uses no
        randomness, so the output is the same for every seed.
    time_limit : float, optional
        Seconds. When exceeded, partitions not yet split become classes as they are
        (the release stays valid) and ``provenance["time_limit_reached"]`` is True.

    Returns
    -------
    Release
        Status FEASIBLE; or INFEASIBLE, with a ``reason`` naming the requirement, when
        the whole table or the records of one protected value already violate a
        requirement (splitting cannot repair that). An INFEASIBLE release still holds
        the table of the coarsest partition (one class per protected value).
        Group ids number the classes in depth-first order, left child first.

    Raises
    ------
    IncompatibleRequirementError
        If a requirement is not union-monotone (DiversityConstraint, AlphaProtection),
        or refers to an attribute the instance cannot use.
    InvalidParameterError
        For an unknown cut rule, a bad time limit or seed, or k larger than the table.

    See Also
    --------
    fairanon.models.verify.verify : re-checks every guarantee of the release.

    Notes
    -----
    Per partition, the allowed attribute with the widest normalized width is tried
    first (numeric: value range / table range; ordered: rank span / (m - 1) over the
    attribute's order; categorical: leaves under the partition's current hierarchy
    node / all leaves; ties to the lowest attribute index). Numeric and ordered
    attributes are cut at a value (left: <= v, right: > v); categorical ones split
    into the non-empty children of the current node, all of which must pass (a single
    non-empty child just moves the node down). An attribute whose cut is not allowable
    is dropped for that partition; a partition with no allowable cut is a class,
    released with its tight summary (range or lowest common ancestor).

    Cost: a partition of size p costs O(p d) for its tight box plus O(p + u) to count
    the frequency set of a cut attribute (u distinct values; a sort, O(p log p), when
    u is much larger than p); median cuts give O(log n) levels, so O(n d log n) in
    all (O(n d log^2 n) with sorts), as [1]_'s O(n log n) with a linear-time median.
    Each candidate child costs O(m) per l/t requirement (m target values; a
    hierarchical EMD O(m * tree size)). With ``cut_rule="balanced"`` and l/t
    requirements, all cuts of an attribute are tested at once from prefix sums of
    the target counts, O(u m). Memory O(n d) plus an O(leaves * height) ancestor
    table per hierarchy. A partition is examined once per attribute at most, so
    the worst case is d failed attempts per partition.

    Departures from [1]_: (a) categorical attributes split top-down along their
    hierarchy (as in Basic Mondrian, baselines spec §2.2), not on an order of their
    values; (b) besides k, l-diversity and t-closeness are split predicates (as in
    tMondrian); (c) the "balanced" cut rule is ours: with repeated values the median
    cut can be unallowable while another cut is allowable (baselines spec §2.6 V3),
    and with l/t predicates "median not allowable" no longer implies "no cut
    allowable"; (d) the protected attribute is never generalized, so the root is
    first split by its values; (e) a partition with fewer than 2 * max(k, ceil(l))
    rows is not examined (no cut can leave that many rows on both sides).
    Released classes are regrouped by released values, so two leaves with identical
    summaries merge; union-monotone requirements still hold for the union.

    References
    ----------
    .. [1] K. LeFevre, D. J. DeWitt, R. Ramakrishnan. Mondrian multidimensional
       k-anonymity. ICDE 2006. https://doi.org/10.1109/ICDE.2006.101

    Examples
    --------
    >>> inst = fa.load("diva_table1")
    >>> rel = mondrian(inst, [fa.KAnonymity(2), fa.LDiversity(2)], seed=0)
    >>> rel.status, rel.n_groups
    (<Status.FEASIBLE: 'FEASIBLE'>, 4)
    >>> fa.verify(inst, rel, [fa.KAnonymity(2), fa.LDiversity(2)]).passed
    True
    >>> mondrian(inst, [fa.KAnonymity(4)], cut_rule="balanced").provenance["params"]
    {'cut_rule': 'balanced', 'time_limit': None}
    """
    started = time.perf_counter()
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            "The 'instance' parameter of mondrian must be an Instance. "
            f"Got {type(instance).__name__} instead."
        )
    requirements = validate_requirements(instance, requirements, caller="mondrian")
    _reject_non_monotone(requirements)
    rule, rule_name = _resolve_cut_rule(cut_rule)
    limit = _check_time_limit(time_limit)
    check_random_state(seed)  # validated only: nothing here is random
    deadline = None if limit is None else started + limit

    checks = _Checks(instance, requirements)
    space = _Space(instance)
    n = instance.n_rows
    params = {"cut_rule": rule_name, "time_limit": limit}

    def release(leaves, status=Status.FEASIBLE, reason=None, timed_out=False):
        groups = np.empty(n, dtype=np.int64)
        for g, rows in enumerate(leaves):
            groups[rows] = g
        return Release(
            table=generalize_partition(instance, groups),
            groups=groups,
            status=status,
            reason=reason,
            provenance=provenance(
                "mondrian", params, requirements, seed, started, time_limit_reached=timed_out
            ),
        )

    # Root parts: one per protected value (the protected attribute is never generalized).
    all_rows = np.arange(n, dtype=np.int64)
    protected = instance.schema.protected
    if protected is not None:
        present, part = np.unique(instance.codes(protected), return_inverse=True)
        part = part.reshape(-1)
        order = np.argsort(part, kind="stable")
        roots = np.split(all_rows[order], np.cumsum(np.bincount(part, minlength=len(present)))[:-1])
        domain = instance.schema[protected].domain
        labels = [domain[int(c)] if domain is not None else c for c in present]
    else:
        roots, labels = [all_rows], [None]

    failed = checks.first_failure(all_rows)
    if failed is not None:
        reason = (
            f"{failed} is violated by the whole table ({n} records); every release is a "
            "partition of it and the requirement is union-monotone, so no release satisfies it."
        )
        return release(roots, Status.INFEASIBLE, reason)
    for rows, value in zip(roots, labels):
        failed = checks.first_failure(rows)
        if failed is not None:
            reason = (
                f"{failed} is violated by the {len(rows)} records with {protected}={value!r}: the "
                "protected attribute is released unchanged, so these records only form classes "
                "among themselves and no release satisfies the requirement."
            )
            return release(roots, Status.INFEASIBLE, reason)

    leaves, timed_out = _partition(space, checks, rule, roots, deadline)
    return release(leaves, timed_out=timed_out)


def _partition(space: _Space, checks: _Checks, rule, roots, deadline):
    """Depth-first Mondrian over an explicit stack; returns the leaves in DFS order."""
    min_split = 2 * checks.min_size
    leaves: list[np.ndarray] = []
    stack = [(rows, space.root_nodes) for rows in reversed(roots)]
    timed_out = False
    n_attrs = len(space.names)
    cat_pos = {a: i for i, a in enumerate(space.categorical)}
    while stack:
        rows, nodes = stack.pop()
        if deadline is not None and not timed_out and time.perf_counter() > deadline:
            timed_out = True
        n_p = len(rows)
        if timed_out or n_p < min_split or n_attrs == 0:
            leaves.append(rows)
            continue
        # Normalized widths of the candidate attributes (tight box on ranked attributes).
        candidates = []
        if space.ranked:
            sub = space.ranks[rows]
            lo, hi = sub.min(axis=0), sub.max(axis=0)
            for a in space.ranked:
                col = space.rank_col[a]
                if lo[col] == hi[col]:
                    continue  # a single value: no cut
                values = space.rank_values[a]
                width = (values[hi[col]] - values[lo[col]]) / space.rank_range[a]
                candidates.append((-width, a))
        for a in space.categorical:
            node = nodes[cat_pos[a]]
            if space.node_is_leaf[a][node]:
                continue
            candidates.append((-space.node_leaves[a][node] / space.n_leaves[a], a))
        candidates.sort()

        children = None
        for _, a in candidates:
            if a in space.cat_codes:
                children = _split_categorical(space, checks, a, rows, nodes, cat_pos[a])
            else:
                col = space.rank_col[a]
                children = _split_ranked(
                    checks, rule, rows, sub[:, col], int(lo[col]), int(hi[col])
                )
            if children is not None:
                break
        if children is None:
            leaves.append(rows)
            continue
        for child in reversed(children):
            stack.append(child if isinstance(child, tuple) else (child, nodes))
    return leaves, timed_out


def _split_ranked(checks: _Checks, rule, rows, x, lo: int, hi: int):
    """Children (left, right) of the first allowable cut of a numeric/ordered attribute."""
    n_p = len(rows)
    span = hi - lo + 1
    if span <= 2 * n_p + 64:
        cnt = np.bincount(x - lo, minlength=span)
        present = np.flatnonzero(cnt)
        counts = cnt[present]
        values = present + lo
        position = None
    else:
        values, position, counts = np.unique(x, return_inverse=True, return_counts=True)
        present, cnt = None, None
    cuts = np.asarray(rule(counts), dtype=np.int64).reshape(-1)
    cuts = cuts[(cuts >= 0) & (cuts < len(counts) - 1)]
    if not len(cuts):
        return None
    cum = np.cumsum(counts)
    left = cum[cuts]
    keep = (left >= checks.min_size) & (n_p - left >= checks.min_size)
    cuts, left = cuts[keep], left[keep]
    if not len(cuts):
        return None
    if checks.reads_targets:
        chosen = _first_allowable_cut(checks, rows, x, values, cuts, left, n_p, cnt, lo, position)
        if chosen is None:
            return None
    else:  # k only: the size filter above is the whole test
        chosen = int(cuts[0])
    mask = x <= values[chosen]
    return [rows[mask], rows[~mask]]


def _first_allowable_cut(checks, rows, x, values, cuts, left, n_p, cnt, lo, position):
    # The first candidate alone (usually allowable), then all the others at once from
    # prefix sums of the per-value target counts.
    first = int(cuts[0])
    labels = (x > values[first]).astype(np.int64)
    sizes = np.array([left[0], n_p - left[0]])
    if checks.passing(sizes, checks.counts(rows, labels, 2)).all():
        return first
    if len(cuts) == 1:
        return None
    rest, rest_left = cuts[1:], left[1:]
    if position is None:
        position = (np.cumsum(cnt > 0) - 1)[x - lo]
    u = len(values)
    per_value = checks.counts(rows, position.reshape(-1).astype(np.int64), u)
    counts = {}
    for name, mat in per_value.items():
        prefix = np.cumsum(mat, axis=0)[rest]
        counts[name] = np.vstack([prefix, mat.sum(axis=0) - prefix])
    sizes = np.concatenate([rest_left, n_p - rest_left])
    ok = checks.passing(sizes, counts)
    ok = ok[: len(rest)] & ok[len(rest) :]
    hit = np.flatnonzero(ok)
    return int(rest[hit[0]]) if len(hit) else None


def _split_categorical(space: _Space, checks: _Checks, a: int, rows, nodes, pos: int):
    """Children of a hierarchy split: one per non-empty child node, each with the node
    moved down; a single non-empty child just specializes the node."""
    node = nodes[pos]
    depth = int(space.node_depth[a][node])
    child_node = space.anc[a][depth + 1][space.cat_codes[a][rows]]
    cnt = np.bincount(child_node)
    present = np.flatnonzero(cnt)
    if len(present) == 1:
        return [(rows, nodes[:pos] + (int(present[0]),) + nodes[pos + 1 :])]
    sizes = cnt[present]
    if sizes.min() < checks.min_size:
        return None
    labels = np.searchsorted(present, child_node)
    # Sizes are already >= k; the l/t requirements read the children's target counts.
    if (
        checks.reads_targets
        and not checks.passing(sizes, checks.counts(rows, labels, len(present))).all()
    ):
        return None
    order = np.argsort(labels, kind="stable")
    parts = np.split(rows[order], np.cumsum(sizes)[:-1])
    return [(part, nodes[:pos] + (int(c),) + nodes[pos + 1 :]) for part, c in zip(parts, present)]
