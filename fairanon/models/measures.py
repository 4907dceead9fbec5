"""The measures requirements are made of: Earth Mover's Distances, l-diversity tests,
discrimination measures on 4-fold tables, and exact threshold comparison.

Every function has a vectorized float form (one value per group) and an exact form
(one group, :class:`fractions.Fraction`). Thresholds are decided exactly by
:func:`exact_compare`: floats decide wherever they are far from the threshold, and
the exact form decides the rest.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._memory import check_memory
from ..exceptions import IncompatibleRequirementError, SchemaError
from ..instances.hierarchy import Hierarchy

__all__ = [
    "exact_compare",
    "group_counts",
    "EMDGround",
    "ORDERED_DOMAINS",
    "emd_ground",
    "emd",
    "emd_exact",
    "emd_of_each_value",
    "emd_transport",
    "emd_within",
    "distinct_l",
    "entropy_l",
    "entropy_l_ok",
    "entropy_l_value",
    "recursive_cl_ok",
    "Proportions",
    "discrimination",
    "discrimination_exact",
    "tau",
    "tau_exact",
    "bound",
    "bound_opposite",
    "t_max",
    "t_alpha",
    "t_alpha_bisect",
]

#: Relative distance from a threshold below which floats are not trusted.
TOLERANCE = 1e-9

_OPS = {
    "le": lambda x, t: x <= t,
    "lt": lambda x, t: x < t,
    "ge": lambda x, t: x >= t,
    "gt": lambda x, t: x > t,
}


def exact_compare(values: np.ndarray, exact: Callable[[int], Fraction | float], threshold: Fraction, op: str) -> np.ndarray:
    """Decide ``values[i] <op> threshold`` exactly for every i.

    Float values farther than ``1e-9 * max(1, |threshold|)`` from the threshold decide by
    themselves (their rounding error is many orders smaller); the others are decided by
    ``exact(i)``, which returns the exact value of entry i.

    >>> v = np.array([0.1 + 0.2, 0.5])
    >>> exact_compare(v, lambda i: [Fraction(3, 10), Fraction(1, 2)][i], Fraction(3, 10), "le").tolist()
    [True, False]
    """
    compare = _OPS[op]
    values = np.asarray(values, dtype=float)
    t = float(threshold)
    out = compare(values, t)
    tol = TOLERANCE * max(1.0, abs(t))
    with np.errstate(invalid="ignore"):
        near = np.flatnonzero(np.abs(values - t) <= tol)
    for i in near:
        out[i] = compare(exact(int(i)), threshold)
    return out


#: Copies of the classes x values counts a check of l-diversity or t-closeness holds
#: at once (the counts, and the EMD's or the entropy's working arrays of the same shape).
COUNT_COPIES = 3


def group_counts(groups: np.ndarray, codes: np.ndarray, n_groups: int, n_values: int) -> np.ndarray:
    """Counts[g, v] of value index v in group g (dense int64 matrix).

    The matrix and the working arrays of its readers (:data:`COUNT_COPIES` of them,
    8 bytes a cell) are checked against the memory limit first: 20,000 classes over
    100,000 values would take 48 GB, refused with :class:`MemoryLimitError` rather
    than killed by the system."""
    check_memory(COUNT_COPIES * 8 * n_groups * n_values,
                 f"The counts of {n_groups:,} classes over {n_values:,} values",
                 "", caller="verify")
    flat = np.bincount(groups.astype(np.int64) * n_values + codes.astype(np.int64), minlength=n_groups * n_values)
    return flat.reshape(n_groups, n_values)


# ---------------------------------------------------------------------------- EMD
#: Readings of the ordered ground distance: over the values present in the table, or over
#: the attribute's declared domain (its ``order``), as Li, Li and Venkatasubramanian define it.
ORDERED_DOMAINS = ("present", "declared")


#: Elements per working array of :meth:`EMDGround.tree_sum` (rows x (m + nodes)).
_TREE_BLOCK = 1 << 20


@dataclass(frozen=True)
class EMDGround:
    """The ground distance of an EMD over m values (columns of a counts matrix).

    distance "equal": d_ij = 1 for i != j; "ordered": |pos_i - pos_j| / span, where the
    columns sit at increasing positions of an ordered domain of span + 1 values (by
    default the m columns themselves: positions 0..m-1, span m - 1); "hierarchical":
    height(LCA)/H in a tree whose leaves are the m values (Li et al.'s ``level``: the
    height of the lowest common ancestor, a node's height being its longest path down
    to a leaf, so leaves of an unbalanced tree are not padded down to depth H). A tree
    is stored as ranges, not as a nodes-by-values table: with the columns taken in the
    depth-first order of their leaves (``order``), each node covers the columns
    ``order[node_lo[i]:node_hi[i]]`` and weighs ``weights[i]``, the heights its edge
    climbs (height(parent) - height(node)).
    """

    distance: str
    m: int
    weights: np.ndarray | None = None  # hierarchical: per node, the heights its edge climbs
    height: int = 1
    positions: tuple[int, ...] | None = None  # ordered: each column's rank in the domain
    span: int | None = None  # ordered: the domain's size less one
    order: np.ndarray | None = None  # hierarchical: the columns in depth-first order of their leaves
    node_lo: np.ndarray | None = None  # hierarchical: per node, its first column in `order`
    node_hi: np.ndarray | None = None  # hierarchical: per node, one past its last column in `order`

    @classmethod
    def equal(cls, m: int) -> "EMDGround":
        return cls("equal", m)

    @classmethod
    def ordered(cls, m: int, positions: Sequence[int] | None = None, domain_size: int | None = None) -> "EMDGround":
        """Ordered ground distance over m columns; with `positions`, the columns are the
        values at those ranks (increasing) of a domain of `domain_size` values.

        >>> g = EMDGround.ordered(3, positions=[0, 1, 4], domain_size=5)
        >>> g.steps.tolist(), g.scale
        ([1, 3], 4)
        """
        if positions is None:
            return cls("ordered", m)
        positions = tuple(int(p) for p in positions)
        if len(positions) != m or any(b <= a for a, b in zip(positions, positions[1:])):
            raise ValueError(f"positions must be {m} increasing ranks; got {positions}.")
        size = int(domain_size) if domain_size is not None else positions[-1] + 1 if positions else 1
        if positions and (positions[0] < 0 or positions[-1] >= size):
            raise ValueError(f"positions {positions} fall outside a domain of {size} values.")
        return cls("ordered", m, positions=positions, span=size - 1)

    @property
    def steps(self) -> np.ndarray:
        """Ordered: the domain steps between consecutive columns (m - 1 of them)."""
        if self.positions is None:
            return np.ones(max(self.m - 1, 0), dtype=np.int64)
        return np.diff(np.asarray(self.positions, dtype=np.int64))

    @property
    def scale(self) -> int:
        """Ordered: the normalizer of the ground distance (the domain's span, at least 1)."""
        return max(self.m - 1 if self.span is None else self.span, 1)

    @classmethod
    def hierarchical(cls, hierarchy: Hierarchy, values: Sequence[str]) -> "EMDGround":
        """Tree ground distance over `values` (leaves of `hierarchy`, column order).

        O(nodes + m log m) time and memory, from the hierarchy's leaf ranges (a
        nodes-by-values table would take 8 x nodes x m bytes). Nodes below the root that cover
        none of the columns are left out (their mass difference is always 0), and nodes
        that cover the same columns (a chain of single children) become one node
        weighing their edges together: at most 2m - 1 nodes remain.
        """
        values = [str(v) for v in values]
        height = hierarchy.height
        # Depth-first position of each column's value: a node covers a range of them.
        where = hierarchy.leaf_positions[[hierarchy.leaf_index[v] for v in values]]
        order = np.argsort(where, kind="stable")
        ranked = where[order]
        # Every node but the root, in depth-first order, from the hierarchy's node arrays
        # (a loop over the nodes took 0.2 s CPU at 111,111 nodes).
        nodes = hierarchy.node_arrays()
        below = nodes.parent >= 0
        first, end = nodes.first[below], nodes.end[below]
        # The edge above a node is as long as the heights it climbs: leaves meet at the
        # height of their lowest common ancestor (a leaf's height is 0).
        weight = (nodes.height[nodes.parent[below]] - nodes.height[below]).astype(np.int64)
        lo, hi = np.searchsorted(ranked, first), np.searchsorted(ranked, end)
        keep = hi > lo
        key, where_key = np.unique(lo[keep] * (len(values) + 1) + hi[keep], return_inverse=True)
        weights = np.bincount(where_key.reshape(-1), weights=weight[keep], minlength=len(key)).astype(np.int64)
        return cls("hierarchical", len(values), weights=weights, height=max(height, 1), order=order,
                   node_lo=key // (len(values) + 1), node_hi=key % (len(values) + 1))

    def node_columns(self) -> list[tuple[int, np.ndarray]]:
        """Hierarchical: each node's weight and the columns it covers."""
        return [(int(w), self.order[a:b]) for w, a, b in zip(self.weights, self.node_lo, self.node_hi)]

    def matrix(self) -> np.ndarray:
        """The m x m ground distance matrix: the test oracle's input (the
        transportation LP, :func:`emd_transport`), never used by the methods. It takes
        8 m^2 bytes, and a tree's nodes-by-values table nodes x m more, checked
        against the memory limit first."""
        m = self.m
        nodes = 0 if self.weights is None else len(self.weights)
        check_memory(8 * m * m + nodes * m, f"the {m} x {m} ground distance matrix of an EMD",
                     "use the closed forms (emd, emd_exact) instead of the matrix")
        if self.distance == "equal":
            return 1.0 - np.eye(m)
        if self.distance == "ordered":
            idx = np.arange(m) if self.positions is None else np.asarray(self.positions)
            return np.abs(idx[:, None] - idx[None, :]) / self.scale
        # tree: path length in edges (weights) between leaves / (2H)
        rank = np.empty(m, dtype=np.int64)
        rank[self.order] = np.arange(m)
        inside = (self.node_lo[:, None] <= rank[None, :]) & (rank[None, :] < self.node_hi[:, None])
        d = np.zeros((m, m))
        for i in range(m):
            for j in range(m):
                d[i, j] = float(self.weights[inside[:, i] != inside[:, j]].sum()) / (2 * self.height)
        return d

    def tree_sum(self, r: np.ndarray) -> np.ndarray:
        """Hierarchical: Σ_N w_N |Σ_{j under N} r_j| per row of `r` (int, float or
        object), before dividing by 2H: each node's sum is a difference of the row's
        prefix sums in depth-first order, O(m + nodes) per row.

        Rows are taken in blocks of rows x (m + nodes) <= :data:`_TREE_BLOCK`
        elements: the working arrays (a block's columns in depth-first order and their
        prefix sums, m per row; the prefix sums at the nodes' two ends, nodes per row,
        subtracted in place) hold about 2 x 2^20 elements (16 MB of int64 or floats,
        plus the integers of an object `r`) however many rows `r` has; a row wider
        than the block is taken alone, in 2 (m + nodes) elements."""
        r = np.atleast_2d(r)
        exact = r.dtype == object
        weights = self.weights.astype(object) if exact else self.weights
        out = np.empty(r.shape[0], dtype=object if exact else np.result_type(r.dtype, weights.dtype))
        block = max(1, _TREE_BLOCK // max(self.m + len(weights), 1))
        for a in range(0, r.shape[0], block):
            part = r[a : a + block]
            cum = np.zeros((part.shape[0], self.m + 1), dtype=r.dtype)
            np.cumsum(np.take(part, self.order, axis=1), axis=1, out=cum[:, 1:])
            high = np.take(cum, self.node_hi, axis=1)
            low = np.take(cum, self.node_lo, axis=1)
            np.subtract(high, low, out=high)
            np.abs(high, out=high)
            out[a : a + block] = high @ weights
        return out

    def ordered_sum(self, r: np.ndarray) -> np.ndarray:
        """Ordered: Σ_i |Σ_{j<=i} r_j| · step_i per row of `r`, before dividing by the
        scale (the closed form of the EMD with gaps between the columns)."""
        cum = np.abs(np.cumsum(r, axis=1))[:, : max(self.m - 1, 0)]
        if self.positions is None:
            return cum.sum(axis=1)
        return (cum * self.steps).sum(axis=1)


def emd_ground(distance: str, values: Sequence, attribute=None, ordered_domain: str = "present") -> EMDGround:
    """The ground distance of a t-closeness requirement over the `values` present (in the
    attribute's order: domain order, or by value for numbers).

    ``ordered_domain="present"`` spaces the values present evenly (m values, steps of
    1/(m-1)); ``"declared"`` places them at their ranks in the attribute's declared
    domain (steps of 1/(|domain|-1), absent values leaving gaps), Li et al.'s reading.
    Only the ordered distance depends on the choice: absent values carry no mass, so
    they change neither the equal nor the hierarchical EMD (whose height is the
    hierarchy's). See docs/papers.md, "Ordered EMD: the values present or the domain".

    >>> from fairanon.instances.schema import Attribute
    >>> grade = Attribute("grade", role="sensitive", kind="ordered", order=list("abcde"))
    >>> emd_ground("ordered", ["a", "b", "e"], grade, "declared").positions
    (0, 1, 4)
    """
    values = list(values)
    if distance == "equal":
        return EMDGround.equal(len(values))
    if distance == "ordered":
        if ordered_domain == "present":
            return EMDGround.ordered(len(values))
        if ordered_domain != "declared":
            raise ValueError(f"ordered_domain must be one of {ORDERED_DOMAINS}; got {ordered_domain!r}.")
        domain = None if attribute is None else attribute.domain
        if domain is None:
            name = getattr(attribute, "name", "?")
            raise IncompatibleRequirementError(
                f"{name!r} declares no domain (a numeric attribute has none); the declared reading "
                "of the ordered EMD needs an ordered attribute, or use ordered_domain='present'.")
        rank = {v: i for i, v in enumerate(domain)}
        missing = [v for v in values if str(v) not in rank]
        if missing:
            raise SchemaError(f"Values {missing[:5]} of {attribute.name!r} are not in its declared order.")
        return EMDGround.ordered(len(values), [rank[str(v)] for v in values], len(domain))
    return EMDGround.hierarchical(attribute.hierarchy, [str(v) for v in values])


def _denominator_factor(ground: EMDGround) -> int:
    """The factor of ``size * total`` in an EMD's integer denominator
    (:func:`_emd_numerators`): 2 (equal), the ordered scale (the declared domain's span,
    which can exceed m) or 2H (H the hierarchy's height, which can too). Every integer
    formed on the way is at most the denominator: a partial sum of ``diff`` is at most
    ``size * total`` and the numerator at most the denominator (an EMD is at most 1).

    >>> _denominator_factor(EMDGround.ordered(2, positions=[0, 9], domain_size=10))
    9
    """
    if ground.distance == "equal":
        return 2
    if ground.distance == "ordered":
        return ground.scale
    return 2 * ground.height


def _emd_numerators(counts: np.ndarray, global_counts: np.ndarray, ground: EMDGround) -> tuple[np.ndarray, np.ndarray]:
    """Integer numerators and denominators: EMD[g] = num[g] / den[g]."""
    counts = np.atleast_2d(np.asarray(counts, dtype=object if counts.dtype == object else np.int64))
    total = int(np.sum(global_counts))
    sizes = counts.sum(axis=1)
    diff = counts * total - sizes[:, None] * global_counts  # r_i scaled by size * total
    if ground.distance == "equal":
        num = np.abs(diff).sum(axis=1)
        den = 2 * sizes * total
    elif ground.distance == "ordered":
        num = ground.ordered_sum(diff)
        den = ground.scale * sizes * total
    else:
        num = ground.tree_sum(diff)
        den = 2 * ground.height * sizes * total
    return num, den


def emd(counts: np.ndarray, global_counts: np.ndarray, ground: EMDGround) -> np.ndarray:
    """EMD between each row's distribution and the global one (floats, one per row).

    Closed forms of Li, Li and Venkatasubramanian (t-Closeness, ICDE 2007, Sec. 4.3),
    r = p - q: equal = ½Σ|r_i|; ordered = Σ_i |Σ_{j<=i} r_j| / (m-1) (with gaps
    between the columns, each term weighted by its step in the domain and the sum
    divided by the domain's span); hierarchical = Σ_{N != root} w_N |extra(N)| / (2H),
    extra(N) = Σ_{leaves j under N} r_j, H the tree's height and w_N = height(parent
    of N) - height(N) (summed where a chain of single children is merged,
    :meth:`EMDGround.hierarchical`; :meth:`EMDGround.tree_sum`).

    Li et al. write the hierarchical EMD as Σ_N height(N)/H · min(pos(N), neg(N))
    over the inner nodes, pos and neg the positive and negative extras of N's
    children. The two agree: the leaves' distance height(LCA)/H is a tree metric,
    the edge above N w_N/(2H) long, along which the optimal flow carries exactly the
    imbalance |extra| of the subtree below the edge; and since extra(N) = pos - neg,
    2 min(pos, neg) = Σ_{C child of N} |extra(C)| - |extra(N)|, so Σ_N height(N)
    · 2 min(pos, neg) telescopes to Σ_{C != root} |extra(C)| (height(parent) -
    height(C)) = Σ_C w_C |extra(C)| (extra(root) = 0).
    Empty rows get 0.

    >>> emd(np.array([[1, 1, 1, 0, 0, 0, 0, 0, 0]]), np.ones(9, dtype=int), EMDGround.ordered(9))
    array([0.375])
    """
    counts = np.asarray(counts, dtype=np.int64)
    global_counts = np.asarray(global_counts, dtype=np.int64)
    # int64 numerators stay exact while the denominators size * total * factor fit;
    # beyond, go through floats.
    size = float(counts.sum(axis=1).max(initial=0))
    if size * float(global_counts.sum()) * _denominator_factor(ground) < 2.0**62:
        num, den = _emd_numerators(counts, global_counts, ground)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = np.where(den > 0, num / np.where(den > 0, den, 1), 0.0)
        return out.astype(float)
    sizes = counts.sum(axis=1, keepdims=True).astype(float)
    p = np.divide(counts, sizes, out=np.zeros(counts.shape), where=sizes > 0)
    q = global_counts / global_counts.sum()
    r = p - q
    if ground.distance == "equal":
        out = 0.5 * np.abs(r).sum(axis=1)
    elif ground.distance == "ordered":
        out = ground.ordered_sum(r) / ground.scale
    else:
        out = ground.tree_sum(r) / (2 * ground.height)
    return np.where(sizes[:, 0] > 0, out, 0.0)


def emd_of_each_value(global_counts: np.ndarray, ground: EMDGround) -> np.ndarray:
    """Per value j, the EMD of a class holding only j (floats): ``emd(np.eye(m), ...)``
    without the m x m table, in O(m + nodes).

    With q the global distribution: equal, ½((1 - q_j) + (1 - q_j)); ordered, the
    cumulative difference is -Q_i before j and 1 - Q_i from j on (Q the prefix sums of
    q), so Σ_{i<j} Q_i step_i + Σ_{i>=j} (1 - Q_i) step_i over the scale; hierarchical,
    a node N weighs q(N) unless it holds j, then 1 - q(N), so Σ_N w_N q(N) plus
    Σ_{N holds j} w_N (1 - 2 q(N)) -- a range of the columns in depth-first order per
    node -- over 2H.

    Nine values, one record each, ordered: the first alone is at 36/72 (Σ_i (8 - i)/9
    over 8), the middle one at 20/72.

    >>> (emd_of_each_value(np.ones(9, dtype=int), EMDGround.ordered(9))[[0, 4]] * 72).round(9).tolist()
    [36.0, 20.0]
    """
    q = np.asarray(global_counts, dtype=float)
    q = q / q.sum()
    m = len(q)
    if ground.distance == "equal":
        return 1.0 - q
    if ground.distance == "ordered":
        cum = np.cumsum(q)[: max(m - 1, 0)] * ground.steps  # Q_i step_i, i < m - 1
        rest = (1.0 - np.cumsum(q)[: max(m - 1, 0)]) * ground.steps
        before = np.concatenate([[0.0], np.cumsum(cum)])  # Σ_{i<j} Q_i step_i, j = 0..m-1
        after = np.concatenate([np.cumsum(rest[::-1])[::-1], [0.0]])  # Σ_{j<=i<m-1} (1 - Q_i) step_i
        return (before + after) / ground.scale
    prefix = np.concatenate([[0.0], np.cumsum(q[ground.order])])
    node_q = prefix[ground.node_hi] - prefix[ground.node_lo]
    add = np.zeros(m + 1)
    np.add.at(add, ground.node_lo, ground.weights * (1.0 - 2.0 * node_q))
    np.add.at(add, ground.node_hi, -ground.weights * (1.0 - 2.0 * node_q))
    out = np.empty(m)
    out[ground.order] = float(ground.weights @ node_q) + np.cumsum(add[:-1])
    return out / (2 * ground.height)


def emd_within(counts: np.ndarray, global_counts: np.ndarray, ground: EMDGround, t: Fraction) -> np.ndarray:
    """Per row of `counts`: is its EMD to the global distribution at most `t`? Exact.

    Each EMD is ``num / den`` in integers (:func:`emd`'s closed forms), so with
    ``t = a / b`` the test is ``b num <= a den``, in int64 while the products fit (an
    EMD is at most 1, so ``num <= den``); beyond, the floats of :func:`emd` decide
    through :func:`exact_compare`. Empty rows pass (their EMD is 0).

    >>> emd_within(np.array([[3, 1], [1, 1]]), np.array([2, 2]), EMDGround.equal(2), Fraction(1, 4)).tolist()
    [True, True]
    >>> emd_within(np.array([[3, 0]]), np.array([2, 2]), EMDGround.equal(2), Fraction(1, 4)).tolist()
    [False]
    """
    counts = np.asarray(counts, dtype=np.int64)
    global_counts = np.asarray(global_counts, dtype=np.int64)
    t = Fraction(t)
    size = int(counts.sum(axis=1).max(initial=0))
    total = int(global_counts.sum())
    if size * total * _denominator_factor(ground) < 2**62:
        num, den = _emd_numerators(counts, global_counts, ground)
        if max(t.numerator, t.denominator, 1) * int(den.max(initial=0)) < 2**62:
            return t.denominator * num <= t.numerator * den
    distances = emd(counts, global_counts, ground)
    return exact_compare(distances, lambda i: emd_exact(counts[i], global_counts, ground), t, "le")


def emd_exact(counts: Sequence[int], global_counts: Sequence[int], ground: EMDGround) -> Fraction:
    """The exact EMD of one group (see :func:`emd`).

    >>> emd_exact([1, 1, 1, 0, 0, 0, 0, 0, 0], [1] * 9, EMDGround.ordered(9))
    Fraction(3, 8)
    """
    row = np.array([int(c) for c in counts], dtype=object).reshape(1, -1)
    glob = np.array([int(c) for c in global_counts], dtype=object)
    num, den = _emd_numerators(row, glob, ground)
    return Fraction(int(num[0]), int(den[0])) if den[0] else Fraction(0)


def emd_transport(p: Sequence[float], q: Sequence[float], ground: np.ndarray) -> float:
    """EMD as a transportation LP (scipy/HiGHS): the reference oracle for the closed forms."""
    from scipy.optimize import linprog

    p, q = np.asarray(p, dtype=float), np.asarray(q, dtype=float)
    m = len(p)
    a_eq = np.zeros((2 * m, m * m))
    for i in range(m):
        a_eq[i, i * m : (i + 1) * m] = 1.0
        a_eq[m + i, i::m] = 1.0
    res = linprog(np.asarray(ground, dtype=float).ravel(), A_eq=a_eq, b_eq=np.r_[p, q], bounds=(0, None), method="highs")
    return float(res.fun)


# ----------------------------------------------------------------- l-diversity
def distinct_l(counts: np.ndarray) -> np.ndarray:
    """Number of distinct values per row of a counts matrix."""
    return (np.asarray(counts) > 0).sum(axis=1)


def entropy_l(counts: np.ndarray) -> np.ndarray:
    """exp(entropy) of each row's distribution: the largest l for which the row is
    entropy l-diverse (Machanavajjhala et al., Def. 4.1)."""
    counts = np.asarray(counts, dtype=float)
    sizes = counts.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        clogc = np.where(counts > 0, counts * np.log(np.where(counts > 0, counts, 1)), 0.0).sum(axis=1)
        h = np.where(sizes > 0, np.log(np.where(sizes > 0, sizes, 1)) - clogc / np.where(sizes > 0, sizes, 1), 0.0)
    return np.exp(h)


def entropy_l_ok(counts: np.ndarray, l: Fraction | int) -> np.ndarray:
    """Entropy l-diversity per row, decided exactly.

    H >= log l  <=>  n^n q^n >= p^n Π c_i^{c_i} for l = p/q (big integers, used only
    near ties).
    """
    counts = np.asarray(counts, dtype=np.int64)
    l = Fraction(l)
    counts_float = counts.astype(float)
    sizes = counts_float.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        clogc = np.where(counts > 0, counts_float * np.log(np.where(counts > 0, counts_float, 1)), 0.0).sum(axis=1)
        slack = sizes * np.log(np.where(sizes > 0, sizes, 1)) - clogc - sizes * math.log(l)
    scale = np.maximum(1.0, sizes * np.log(np.maximum(sizes, 2)))

    def exact(i: int) -> bool:
        n = int(counts[i].sum())
        lhs = n**n * l.denominator**n
        rhs = l.numerator**n
        for c in counts[i]:
            rhs *= int(c) ** int(c)
        return lhs >= rhs

    out = slack >= 0
    for i in np.flatnonzero(np.abs(slack) <= TOLERANCE * scale):
        out[i] = exact(int(i))
    return out


#: Largest class for which a rational exp(H) is confirmed with big integers.
_EXACT_ENTROPY_ROWS = 20_000


def entropy_l_value(counts: np.ndarray, l: Fraction | int, holds: bool) -> int | Fraction | float:
    """exp(H) of one distribution, for reports: exact where it is rational, else a float
    on the side of `l` the exact test put it (`holds`: exp(H) >= l).

    exp(H) = n / G with G^n = Π c_i^{c_i} (Machanavajjhala et al., Def. 4.1), so it is
    rational exactly when G is an integer: l equal counts give exactly l.

    >>> entropy_l_value(np.array([5, 5, 5]), 3, True), entropy_l_value(np.array([4]), 1, True)
    (3, 1)
    >>> entropy_l_value(np.array([1, 2]), 2, False) < 2
    True
    """
    row = [int(c) for c in np.asarray(counts).ravel() if c > 0]
    n = sum(row)
    if not row:
        return 0
    if len(set(row)) == 1:
        return len(row)
    approx = float(entropy_l(np.asarray([row]))[0])
    g = round(n / approx)
    if abs(n / approx - g) <= TOLERANCE * g and n <= _EXACT_ENTROPY_ROWS:
        power = 1
        for c in row:
            power *= c**c
        if g**n == power:
            value = Fraction(n, g)
            return int(value) if value.denominator == 1 else value
    l = Fraction(l)
    # Irrational, so never equal to l: only the float's rounding can cross it.
    if holds and Fraction(approx) < l:
        approx = float(l) if Fraction(float(l)) >= l else math.nextafter(float(l), math.inf)
    elif not holds and Fraction(approx) >= l:
        approx = float(l) if Fraction(float(l)) < l else math.nextafter(float(l), -math.inf)
    return approx


def recursive_cl_ok(counts: np.ndarray, c: Fraction, l: int) -> tuple[np.ndarray, list[Fraction | float]]:
    """Recursive (c, l)-diversity per row: r_1 < c (r_l + ... + r_m) for the counts sorted
    in decreasing order (exact integers); also each row's ratio r_1 / (r_l + ...)
    (infinite when the row has fewer than l values).
    """
    counts = np.asarray(counts, dtype=np.int64)
    ordered = -np.sort(-counts, axis=1)
    top = ordered[:, 0]
    tail = ordered[:, l - 1 :].sum(axis=1) if ordered.shape[1] >= l else np.zeros(len(counts), dtype=np.int64)
    c = Fraction(c)
    ok = np.array([c.denominator * int(a) < c.numerator * int(b) for a, b in zip(top, tail)], dtype=bool)
    ratio = [Fraction(int(a), int(b)) if b else math.inf for a, b in zip(top, tail)]
    return ok, ratio


# ------------------------------------------------------- discrimination measures
@dataclass(frozen=True)
class Proportions:
    """The 4-fold tables (a, b, c, d) of many contexts and the global negative rate.

    a = protected & negative, b = protected & positive, c = unprotected & negative,
    d = unprotected & positive (Ruggieri Fig. 1); ``neg``/``total`` give p- = neg/total.
    """

    a: np.ndarray
    b: np.ndarray
    c: np.ndarray
    d: np.ndarray
    neg: int
    total: int

    def p1(self) -> tuple[np.ndarray, np.ndarray]:
        n1 = self.a + self.b
        return np.where(n1 > 0, self.a, self.neg), np.where(n1 > 0, n1, self.total)

    def p2(self) -> tuple[np.ndarray, np.ndarray]:
        n2 = self.c + self.d
        return np.where(n2 > 0, self.c, self.neg), np.where(n2 > 0, n2, self.total)

    def p(self) -> tuple[np.ndarray, np.ndarray]:
        return self.a + self.c, self.a + self.b + self.c + self.d

    def row(self, i: int) -> tuple[int, int, int, int]:
        return int(self.a[i]), int(self.b[i]), int(self.c[i]), int(self.d[i])


def _ratio(xn, xd, yn, yd):
    """(xn/xd) / (yn/yd) with x/0 = inf and 0/0 = 1 (floats)."""
    xn, xd, yn, yd = (np.asarray(v, dtype=float) for v in (xn, xd, yn, yd))
    num, den = xn * yd, xd * yn
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(den > 0, num / np.where(den > 0, den, 1), np.where(num > 0, np.inf, 1.0))
    return out


def discrimination(measure: str, props: Proportions) -> np.ndarray:
    """The measure of every context (floats), with Ruggieri's tokenism extension.

    RD = p1 - p2, ED = p1 - p, RR = p1/p2, ER = p1/p, RC = (1-p1)/(1-p2),
    EC = (1-p1)/(1-p), OR = p1(1-p2) / ((1-p1) p2)   (Ruggieri Fig. 1, §4.3).
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        return _discrimination(measure, props)


def _discrimination(measure: str, props: Proportions) -> np.ndarray:
    (an, ad), (cn, cd), (pn, pd_) = props.p1(), props.p2(), props.p()
    if measure == "RD":
        return an / ad - cn / cd
    if measure == "ED":
        return an / ad - pn / pd_
    if measure == "RR":
        return _ratio(an, ad, cn, cd)
    if measure == "ER":
        return _ratio(an, ad, pn, pd_)
    if measure == "RC":
        return _ratio(ad - an, ad, cd - cn, cd)
    if measure == "EC":
        return _ratio(ad - an, ad, pd_ - pn, pd_)
    if measure == "OR":
        return _ratio(an * (cd - cn), ad * cd, (ad - an) * cn, ad * cd)
    raise ValueError(measure)


def _fraction_ratio(x: Fraction, y: Fraction) -> Fraction | float:
    if y == 0:
        return math.inf if x > 0 else Fraction(1)
    return x / y


def discrimination_exact(measure: str, a: int, b: int, c: int, d: int, neg: int, total: int) -> Fraction | float:
    """One context's measure as an exact Fraction (``math.inf`` when unbounded).

    >>> discrimination_exact("RR", 20, 14, 19, 28, 39, 81)  # Hajian et al. Example 3: 1.4551
    Fraction(470, 323)
    """
    pm = Fraction(neg, total)
    p1 = Fraction(a, a + b) if a + b else pm
    p2 = Fraction(c, c + d) if c + d else pm
    p = Fraction(a + c, a + b + c + d)
    if measure == "RD":
        return p1 - p2
    if measure == "ED":
        return p1 - p
    if measure == "RR":
        return _fraction_ratio(p1, p2)
    if measure == "ER":
        return _fraction_ratio(p1, p)
    if measure == "RC":
        return _fraction_ratio(1 - p1, 1 - p2)
    if measure == "EC":
        return _fraction_ratio(1 - p1, 1 - p)
    if measure == "OR":
        return _fraction_ratio(p1 * (1 - p2), (1 - p1) * p2)
    raise ValueError(measure)


def tau(props: Proportions) -> np.ndarray:
    """Ruggieri's maximum variational distance (Def. 17) of every context:
    max(|p1 - p-|, |p2 - p-|), an empty side counting 0."""
    pm = props.neg / props.total
    (an, ad), (cn, cd) = props.p1(), props.p2()
    return np.maximum(np.abs(an / ad - pm), np.abs(cn / cd - pm))


def tau_exact(a: int, b: int, c: int, d: int, neg: int, total: int) -> Fraction:
    """Exact τ(a, b, c, d) for the global negative rate neg/total.

    >>> tau_exact(109, 201, 191, 499, 300, 1000)
    Fraction(8, 155)
    """
    pm = Fraction(neg, total)
    p1 = Fraction(a, a + b) if a + b else pm
    p2 = Fraction(c, c + d) if c + d else pm
    return max(abs(p1 - pm), abs(p2 - pm))


def bound(measure: str, t: Fraction, p_minus: Fraction) -> Fraction | float:
    """bd_f(t): the guarantee t-closeness gives on measure f (Ruggieri Thm 10 and 15;
    p^ = min(p-, 1 - p-), docs/papers.md, R-2). An upper bound for RD/ED (on |f|), RR/ER and OR; a lower bound for RC/EC.

    >>> bound("RD", Fraction(3, 20), Fraction(3, 10)), bound("RR", Fraction(3, 20), Fraction(3, 10))
    (Fraction(3, 10), Fraction(3, 1))
    """
    t, p = Fraction(t), Fraction(p_minus)
    p_hat = min(p, 1 - p)
    if measure in ("RD", "ED"):
        return min(2 * t, t + p_hat, Fraction(1))
    if measure in ("RR", "ER"):
        den = max(p - t, Fraction(0))
        return min(p + t, Fraction(1)) / den if den else math.inf
    if measure in ("RC", "EC"):
        return max(1 - p - t, Fraction(0)) / min(1 - p + t, Fraction(1))
    if measure == "OR":
        den = max(p - t, Fraction(0)) * max(1 - p - t, Fraction(0))
        return min(p + t, Fraction(1)) * min(1 - p + t, Fraction(1)) / den if den else math.inf
    raise ValueError(measure)


def bound_opposite(measure: str, t: Fraction, p_minus: Fraction) -> Fraction | float:
    """The other side of :func:`bound`: a lower bound for RD, ED, RR, ER and OR, an upper
    bound for RC and EC, on every context of a t-close table (symmetric bounds, derived
    from the proof of Ruggieri Thm 10/15; docs/papers.md, R-2).

    RD, ED >= -bd(t); RR, ER >= max(p - t, 0) / min(p + t, 1);
    OR >= 1 / bd_OR(t); RC, EC <= min(1 - p + t, 1) / max(1 - p - t, 0) (inf if 0).

    >>> bound_opposite("RD", Fraction(3, 20), Fraction(3, 10))
    Fraction(-3, 10)
    >>> bound_opposite("RR", Fraction(3, 20), Fraction(3, 10))
    Fraction(1, 3)
    """
    t, p = Fraction(t), Fraction(p_minus)
    if measure in ("RD", "ED"):
        return -bound(measure, t, p)
    if measure in ("RR", "ER"):
        return max(p - t, Fraction(0)) / min(p + t, Fraction(1))
    if measure in ("RC", "EC"):
        den = max(1 - p - t, Fraction(0))
        return min(1 - p + t, Fraction(1)) / den if den else math.inf
    if measure == "OR":
        upper = bound(measure, t, p)
        return Fraction(0) if upper == math.inf else 1 / upper
    raise ValueError(measure)


def t_max(p_minus: Fraction) -> Fraction:
    """The largest meaningful t for a binary decision: max(p-, 1 - p-) (Ruggieri Table 1)."""
    p = Fraction(p_minus)
    return max(p, 1 - p)


def _alpha_met(measure: str, value, alpha: Fraction, strict: bool) -> bool:
    if measure in ("RC", "EC"):
        return value > alpha if strict else value >= alpha
    return value < alpha if strict else value <= alpha


def _degenerate_t_alpha(measure: str, alpha: Fraction, p: Fraction, strict: bool) -> Fraction | None:
    # With p- in {0, 1} every decision is the same: every measure takes its neutral value.
    neutral = Fraction(0) if measure in ("RD", "ED") else Fraction(1)
    return t_max(p) if _alpha_met(measure, neutral, alpha, strict) else None


def t_alpha(measure: str, alpha, p_minus, *, strict: bool = False) -> Fraction | None:
    """The inverse bound t_alpha = bd_f^{-1}(alpha): the largest t in [0, max(p-, 1 - p-)]
    with bd_f(t) <= alpha (>= alpha for RC, EC), so that a t_alpha-close table is
    alpha-protective for f (Ruggieri §5, Thm 10 and 15).

    Closed forms (exact rationals), with p = p- and p^ = min(p, 1 - p):

    - RD, ED: alpha >= 1: t_max; 0 <= alpha < 1: max(alpha / 2, alpha - p^);
    - RR, ER: alpha >= 1: t_A = p (alpha - 1) / (alpha + 1) if p + t_A <= 1, else
      p - 1 / alpha;
    - RC, EC: alpha <= 0: t_max; 0 < alpha <= 1: the RR form for 1 / alpha and 1 - p;
    - OR: alpha >= 1: :func:`t_alpha_bisect` (the root of a quadratic is irrational).

    Parameters
    ----------
    measure : {"RD", "ED", "RR", "ER", "RC", "EC", "OR"}
    alpha, p_minus : rational
    strict : bool, default=False
        Ask for bd_f(t) < alpha (> alpha for RC, EC) instead: the largest such t is
        not attained, so the answer is a rational within 2**-40 below the supremum
        (found by :func:`t_alpha_bisect`).

    Returns
    -------
    Fraction or None
        None when no t >= 0 works (alpha below what a 0-close table guarantees:
        alpha < 0 for RD/ED, alpha < 1 for RR/ER/OR, alpha > 1 for RC/EC). With p- in
        {0, 1} every measure is neutral (0 or 1): t_max if that meets alpha, else None.

    Examples
    --------
    >>> t_alpha("ED", Fraction(167, 1000), Fraction(1, 2))  # Ruggieri Ex. 12: 0.0835
    Fraction(167, 2000)
    >>> t_alpha("RR", Fraction(3, 2), Fraction(3, 10))  # German credit (p- = 0.3): 0.06
    Fraction(3, 50)
    >>> t_alpha("RD", -1, Fraction(3, 10)) is None
    True
    """
    alpha, p = Fraction(alpha), Fraction(p_minus)
    if p in (0, 1):
        return _degenerate_t_alpha(measure, alpha, p, strict)
    if strict or measure == "OR":
        return t_alpha_bisect(measure, alpha, p, strict=strict)
    if measure in ("RD", "ED"):
        if alpha < 0:
            return None
        if alpha >= 1:
            return t_max(p)
        return max(alpha / 2, alpha - min(p, 1 - p))
    if measure in ("RR", "ER"):
        return _t_alpha_ratio(alpha, p)
    if measure in ("RC", "EC"):
        if alpha > 1:
            return None
        if alpha <= 0:
            return t_max(p)
        return _t_alpha_ratio(1 / alpha, 1 - p)
    raise ValueError(measure)


def _t_alpha_ratio(alpha: Fraction, p: Fraction) -> Fraction | None:
    """Largest t with min(p + t, 1) / max(p - t, 0) <= alpha."""
    if alpha < 1:
        return None
    t = p * (alpha - 1) / (alpha + 1)
    return t if p + t <= 1 else p - 1 / alpha


def t_alpha_bisect(
    measure: str, alpha, p_minus, *, strict: bool = False, tol: Fraction = Fraction(1, 2**40)
) -> Fraction | None:
    """t_alpha by exact bisection on the monotone bd_f (a check of the closed forms of
    :func:`t_alpha`, and its method for OR and for strict alpha).

    Returns the lower end of the final bracket, a rational t with bd_f(t) <= alpha
    (< alpha if `strict`; >=, > for RC, EC) within `tol` of the true t_alpha; t_max when
    it already qualifies; None when t = 0 does not.

    >>> t = t_alpha_bisect("OR", Fraction(51, 11), Fraction(3, 10))  # bd_OR(0.15) = 51/11
    >>> abs(t - Fraction(3, 20)) <= Fraction(1, 2**40)
    True
    """
    alpha, p = Fraction(alpha), Fraction(p_minus)
    if p in (0, 1):
        return _degenerate_t_alpha(measure, alpha, p, strict)

    def ok(t: Fraction) -> bool:
        return _alpha_met(measure, bound(measure, t, p), alpha, strict)

    lo, hi = Fraction(0), t_max(p)
    if not ok(lo):
        return None
    if ok(hi):
        return hi
    while hi - lo > tol:
        mid = (lo + hi) / 2
        if ok(mid):
            lo = mid
        else:
            hi = mid
    return lo
