"""Greedy k-member clustering (Byun, Kamra, Bertino, Li, DASFAA 2007).

Clusters of exactly k records are grown one at a time: the seed of a cluster is the
record furthest from the last record chosen, and each cluster takes the record that
raises its information loss least until it holds k records; the fewer than k records
left at the end join the cluster whose loss grows least. The reading of the
paper and its departures: docs/papers.md, B-4.

:class:`RecordSpace` (the coded quasi-identifiers, Byun's distance and cluster
distortion) is shared with OKA (:mod:`fairanon.heuristics.oka`) and DIVA's Anonymize
step (:mod:`fairanon.heuristics.diva`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from fractions import Fraction

import numpy as np

from .._memory import check_memory
from .._validation import check_option, check_random_state
from ..exceptions import IncompatibleRequirementError, InvalidParameterError
from ..instances.instance import Instance
from ..models.requirements import KAnonymity, Requirement, validate_requirements
from ..release import Release, Status, generalize_partition, provenance

__all__ = [
    "CAT_LOSSES",
    "FIRST_RULES",
    "RECODINGS",
    "SEED_RULES",
    "RecordSpace",
    "information_loss",
    "kmember",
    "kmember_clusters",
    "kmember_memory",
    "protected_classes",
]

#: Categorical term of the distance: "height" of the lowest common ancestor over the
#: hierarchy's height (Byun et al.), or "leaves" under it over all leaves (NCP, as in
#: Gong's code; a leaf costs 0).
CAT_LOSSES = ("height", "leaves")
#: Seed of the next cluster: furthest from the record added last ("last_added", the
#: paper's pseudo-code) or from the previous cluster's seed ("previous_seed", Gong's code).
SEED_RULES = ("last_added", "previous_seed")
#: The first record and the order of the leftovers: table order ("min_id") or random.
FIRST_RULES = ("min_id", "random")
#: How clusters are released: tight ranges / lowest common ancestors, or DIVA's stars.
RECODINGS = ("tight", "suppress")


class RecordSpace:
    """The generalizable quasi-identifiers of an instance, coded for Byun's distance.

    Numeric attributes are scaled by their range in the whole table (a constant
    attribute contributes 0); ordered attributes are their ranks in the attribute's
    order, scaled by the range of the ranks present; categorical attributes are
    hierarchy leaves, and the cost of a set of values is the height of their lowest
    common ancestor over the hierarchy's height (``cat_loss="height"``) or the share of
    leaves under it (``"leaves"``, 0 for a leaf).

    Parameters
    ----------
    instance : Instance
    cat_loss : {"height", "leaves"}, default="height"

    Notes
    -----
    A lowest common ancestor is found from an ancestor table ``anc[depth, node]`` (a
    node below `depth` is its own ancestor there): two nodes' ancestors agree exactly
    at the depths down to their LCA, so its depth is the number of agreeing depths.
    """

    def __init__(self, instance: Instance, *, cat_loss: str = "height"):
        check_option(cat_loss, "cat_loss", "RecordSpace", CAT_LOSSES)
        self.cat_loss = cat_loss
        self.n = instance.n_rows
        self.names = list(instance.schema.generalizable)
        num_cols, spans, self.num_names = [], [], []
        self.cat_names: list[str] = []
        cat_cols = []
        self.anc: list[np.ndarray] = []
        self.weight: list[np.ndarray] = []
        self.weight_exact: list[list[Fraction]] = []
        for name in self.names:
            attr = instance.schema[name]
            codes = instance.codes(name)
            if attr.kind in ("numeric", "ordered"):
                values = codes.astype(float)
                span = float(values.max() - values.min()) if len(values) else 0.0
                num_cols.append(values)
                spans.append(span)
                self.num_names.append(name)
                continue
            h = attr.hierarchy
            nodes = h.nodes
            node_id = {v: i for i, v in enumerate(nodes)}
            anc = np.zeros((h.height + 1, len(nodes)), dtype=np.int64)
            for node in nodes:
                chain = list(reversed(h.ancestors(node)))  # root .. node
                for d in range(h.height + 1):
                    anc[d, node_id[node]] = node_id[chain[min(d, len(chain) - 1)]]
            leaf_node = np.array([node_id[v] for v in h.leaves], dtype=np.int64)
            # The depth of the deepest leaf under each node, children before parents
            # (`nodes` is depth-first): one pass, not one over the leaves per node.
            deepest = dict(h.depth)
            for node in reversed(nodes):
                if h.parent[node] is not None:
                    deepest[h.parent[node]] = max(deepest[h.parent[node]], deepest[node])
            exact = []
            for node in nodes:
                if cat_loss == "height":
                    height = deepest[node] - h.depth[node]
                    exact.append(Fraction(height, h.height) if h.height else Fraction(0))
                else:
                    n_leaves = h.leaf_count(node)
                    exact.append(Fraction(0) if not h.children[node] else Fraction(n_leaves, len(h.leaves)))
            self.anc.append(anc)
            self.weight.append(np.array([float(w) for w in exact]))
            self.weight_exact.append(exact)
            cat_cols.append(leaf_node[codes])
            self.cat_names.append(name)
        self.raw = np.column_stack(num_cols) if num_cols else np.zeros((self.n, 0))
        self.spans = np.array(spans, dtype=float)
        safe = np.where(self.spans > 0, self.spans, 1.0)
        self.num = self.raw / safe
        self.nodes = np.column_stack(cat_cols).astype(np.int64) if cat_cols else np.zeros((self.n, 0), dtype=np.int64)

    # ------------------------------------------------------------------ LCAs
    def lca(self, a: int, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Node ids of LCA(u, v) in categorical attribute `a` (arrays broadcast)."""
        anc = self.anc[a]
        depth = np.zeros(np.broadcast(u, v).shape, dtype=np.int64)
        for d in range(1, anc.shape[0]):
            depth += anc[d][u] == anc[d][v]
        return anc[depth, np.broadcast_to(u, depth.shape)]

    # ------------------------------------------------------------------ distances
    def distance(self, r: int, rows: np.ndarray) -> np.ndarray:
        """Byun's record distance Δ(r, s) for every s in `rows`."""
        out = np.abs(self.num[rows] - self.num[r]).sum(axis=1)
        for a in range(len(self.cat_names)):
            out += self.weight[a][self.lca(a, self.nodes[r, a], self.nodes[rows, a])]
        return out

    def common_ancestor(self, a: int, nodes: np.ndarray) -> int:
        """Node id of the lowest common ancestor of all `nodes` in categorical attribute `a`.

        The nodes' ancestors agree at every depth down to their common ancestor's and
        at none below, so one comparison per depth over all nodes finds it: O(n h)
        array work instead of n pairwise LCAs (a cluster cut short by the deadline
        can hold most of the table).
        """
        anc = self.anc[a]
        first = nodes[0]
        depth = 0
        for d in range(1, anc.shape[0]):
            if not (anc[d][nodes] == anc[d][first]).all():
                break
            depth = d
        return int(anc[depth, first])

    def state(self, rows: np.ndarray) -> ClusterState:
        """The summary (numeric min/max, categorical LCA) of one cluster."""
        rows = np.asarray(rows)
        lo = self.num[rows].min(axis=0)
        hi = self.num[rows].max(axis=0)
        lca = np.array([self.common_ancestor(a, self.nodes[rows, a]) for a in range(len(self.cat_names))],
                       dtype=np.int64)
        return ClusterState(lo, hi, lca, len(rows))

    def distortion_with(self, st: ClusterState, rows: np.ndarray) -> np.ndarray:
        """D(c ∪ {s}) for every s in `rows` (Byun's cluster distortion)."""
        x = self.num[rows]
        out = (np.maximum(st.hi, x) - np.minimum(st.lo, x)).sum(axis=1)
        for a in range(len(self.cat_names)):
            out += self.weight[a][self.lca(a, st.lca[a], self.nodes[rows, a])]
        return out

    def distortion(self, st: ClusterState) -> float:
        out = float((st.hi - st.lo).sum())
        for a in range(len(self.cat_names)):
            out += float(self.weight[a][st.lca[a]])
        return out

    def add(self, st: ClusterState, r: int) -> None:
        """Add record r to the summary `st` in place."""
        np.minimum(st.lo, self.num[r], out=st.lo)
        np.maximum(st.hi, self.num[r], out=st.hi)
        for a in range(len(self.cat_names)):
            st.lca[a] = int(self.lca(a, np.int64(st.lca[a]), np.int64(self.nodes[r, a])))
        st.size += 1


class ClusterState:
    """Running summary of a cluster: numeric min and max, categorical LCA, size."""

    __slots__ = ("hi", "lca", "lo", "size")

    def __init__(self, lo, hi, lca, size):
        self.lo, self.hi, self.lca, self.size = lo, hi, lca, size


def information_loss(space: RecordSpace, clusters: Sequence[np.ndarray]) -> Fraction:
    """Byun's Total-IL = Σ_e |e| · D(e), exactly (docs/papers.md, B-4).

    D(e) = Σ_numeric (max − min) / range + Σ_categorical cost(LCA of e's values), with
    the ranges of the whole table. Ordered attributes count their rank range.
    """
    total = Fraction(0)
    spans = [Fraction(float(s)) for s in space.spans]
    for rows in clusters:
        rows = np.asarray(rows)
        size = len(rows)
        if not size:
            continue
        st = space.state(rows)
        d = Fraction(0)
        for j, span in enumerate(spans):
            if span:
                d += (Fraction(float(space.raw[rows, j].max())) - Fraction(float(space.raw[rows, j].min()))) / span
        for a in range(len(space.cat_names)):
            d += space.weight_exact[a][st.lca[a]]
        total += size * d
    return total


def kmember_clusters(
    space: RecordSpace,
    rows: np.ndarray,
    k: int,
    *,
    seed_rule: str = "last_added",
    first: str = "min_id",
    rng: np.random.Generator | None = None,
    deadline: float | None = None,
) -> tuple[list[np.ndarray], bool]:
    """Greedy k-member clustering of `rows` (positions in the instance), |rows| >= k.

    Returns the clusters in creation order (leftovers appended to theirs) and whether
    the deadline cut the search short (the records still free then form one last
    cluster, so the result stays valid).

    Notes
    -----
    O(n² d) for n rows and d attributes (times the hierarchy height for categorical
    ones): each of the n records chosen scans the free records once. Ties go to the
    record first in `rows`, then to the lowest cluster index (docs/papers.md, B-4).
    """
    rows = np.asarray(rows, dtype=np.int64)
    rng = rng if rng is not None else np.random.default_rng(0)
    if len(rows) < k:
        raise InvalidParameterError(f"k-member needs at least k={k} records; got {len(rows)}.")
    free = rows.copy()
    clusters: list[list[int]] = []
    states: list[ClusterState] = []
    r = int(free[rng.integers(len(free))]) if first == "random" else int(free[0])
    timed_out = False
    # The deadline is checked before every scan of the free records (each costs O(n d)),
    # so a large k or a large table overruns it by one scan at most.
    while len(free) >= k and not (timed_out := _past(deadline)):
        seed = int(free[int(np.argmax(space.distance(r, free)))])
        free = free[free != seed]
        cluster = [seed]
        st = space.state(np.array([seed]))
        while len(cluster) < k and not (timed_out := _past(deadline)):
            best = int(np.argmin(space.distortion_with(st, free)))
            r_new = int(free[best])
            free = np.delete(free, best)
            cluster.append(r_new)
            space.add(st, r_new)
        if timed_out:
            # the unfinished cluster and the free records (k or more together) form
            # one last cluster, so the clustering stays valid
            free = np.concatenate([np.array(cluster, dtype=np.int64), free])
            break
        clusters.append(cluster)
        states.append(st)
        r = cluster[-1] if seed_rule == "last_added" else seed
    if timed_out:
        clusters.append(free.tolist())
        return [np.array(c, dtype=np.int64) for c in clusters], True
    leftovers = free if first == "min_id" else rng.permutation(free)
    for i, r in enumerate(leftovers):
        if _past(deadline):
            # the leftovers not placed yet join the last cluster (still valid)
            clusters[-1].extend(int(x) for x in leftovers[i:])
            timed_out = True
            break
        r = int(r)
        best = _cheapest_cluster(space, states, r)
        clusters[best].append(r)
        space.add(states[best], r)
    return [np.array(c, dtype=np.int64) for c in clusters], timed_out


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() > deadline


def _cheapest_cluster(space: RecordSpace, states: Sequence[ClusterState], r: int) -> int:
    """The cluster whose Total-IL grows least when record r joins it:
    argmin over clusters c of (|c| + 1) D(c ∪ {r}) − |c| D(c), the first on ties;
    over all clusters at once."""
    lo = np.array([st.lo for st in states]).reshape(len(states), -1)
    hi = np.array([st.hi for st in states]).reshape(len(states), -1)
    lca = np.array([st.lca for st in states], dtype=np.int64).reshape(len(states), -1)
    size = np.array([st.size for st in states], dtype=float)
    x = space.num[r]
    joined = (np.maximum(hi, x) - np.minimum(lo, x)).sum(axis=1)
    alone = (hi - lo).sum(axis=1)
    for a in range(len(space.cat_names)):
        joined += space.weight[a][space.lca(a, lca[:, a], space.nodes[r, a])]
        alone += space.weight[a][lca[:, a]]
    return int(np.argmin((size + 1) * joined - size * alone))


def protected_classes(instance: Instance) -> list[tuple[str | None, np.ndarray]]:
    """The positions of the records of each protected value (one class without a
    protected attribute). The protected attribute is released unchanged, so no released
    class mixes its values."""
    protected = instance.schema.protected
    all_rows = np.arange(instance.n_rows, dtype=np.int64)
    if protected is None:
        return [(None, all_rows)]
    codes = instance.codes(protected)
    domain = instance.schema[protected].domain
    return [(domain[int(c)], all_rows[codes == c]) for c in np.unique(codes)]


def single_k(requirements: Sequence[Requirement], method: str) -> int:
    """The k of the only kind of requirement a clustering baseline enforces."""
    others = [r for r in requirements if not isinstance(r, KAnonymity)]
    if others:
        raise IncompatibleRequirementError(
            f"{method} enforces only KAnonymity; it cannot enforce {', '.join(str(r) for r in others)}. "
            "Use method='mondrian' for l-diversity and t-closeness, method='diva' for diversity constraints."
        )
    ks = [r.k for r in requirements if isinstance(r, KAnonymity)]
    if not ks:
        raise InvalidParameterError(f"{method} needs a KAnonymity requirement (e.g. fa.KAnonymity(5)).")
    return max(ks)


def clustered_release(
    instance: Instance,
    clusters: Sequence[np.ndarray],
    method: str,
    params: dict,
    requirements,
    seed,
    started: float,
    *,
    recoding: str,
    space: RecordSpace,
    **extra,
) -> Release:
    """The release of a clustering (every record in one cluster), objective Total-IL."""
    groups = np.empty(instance.n_rows, dtype=np.int64)
    for g, rows in enumerate(clusters):
        groups[rows] = g
    return Release(
        table=generalize_partition(instance, groups, recoding=recoding),
        groups=groups,
        status=Status.FEASIBLE,
        objective=information_loss(space, clusters),
        provenance=provenance(method, params, requirements, seed, started, objective="Total-IL", **extra),
    )


def infeasible_small_class(instance: Instance, method: str, params, requirements, seed, started, k: int):
    """An INFEASIBLE release if some protected value has fewer than k records, else None."""
    for value, rows in protected_classes(instance):
        if len(rows) < k:
            groups = np.zeros(instance.n_rows, dtype=np.int64)
            for g, (_, part) in enumerate(protected_classes(instance)):
                groups[part] = g
            reason = (
                f"{k}-anonymity is violated by the {len(rows)} records with "
                f"{instance.schema.protected}={value!r}: the protected attribute is released "
                "unchanged, so these records only form classes among themselves."
            )
            return Release(
                table=generalize_partition(instance, groups),
                groups=groups,
                status=Status.INFEASIBLE,
                reason=reason,
                provenance=provenance(method, params, requirements, seed, started),
            )
    return None


def kmember_memory(instance: Instance) -> int:
    """Bytes k-member needs on `instance`, its input aside: linear in the records, as
    no distance matrix is kept (each step scans the free records).

    Per record: the coded quasi-identifiers of :class:`RecordSpace` (two floats per
    numeric or ordered one, an int per categorical one), the arrays of one scan (three
    floats per numeric one, one int per categorical one, four more), the clusters and
    the groups (64 bytes), and the release's cells (8 bytes a column). Measured with
    tracemalloc: 233 bytes a record on Adult, 279 on German credit; this gives 328 and
    352.

    >>> kmember_memory(fa.load("adult")) // fa.load("adult").n_rows
    328
    """
    schema = instance.schema
    names = list(schema.generalizable)
    numeric = sum(1 for a in names if schema[a].kind in ("numeric", "ordered"))
    categorical = len(names) - numeric
    per_record = 8 * (2 * numeric + categorical) + 8 * (3 * numeric + categorical + 4) + 64
    per_record += 8 * len(instance.table.columns)
    return per_record * instance.n_rows


def kmember(
    instance: Instance,
    requirements,
    *,
    seed=None,
    time_limit: float | None = None,
    seed_rule: str = "last_added",
    cat_loss: str = "height",
    first: str = "min_id",
    recoding: str = "tight",
    memory_limit=None,
) -> Release:
    """Greedy k-member clustering [1]_ (docs/papers.md, B-4).

    Parameters
    ----------
    instance : Instance
    requirements : sequence of Requirement
        One or more KAnonymity (the largest k is used); nothing else.
    seed : None, int or numpy.random.Generator
        Used only with ``first="random"``.
    time_limit : float, optional
        Seconds, checked before every scan of the free records; when exceeded, the
        unfinished cluster and the records still free form one last cluster (leftovers
        not yet placed join the last cluster), so the release stays valid and
        ``provenance["time_limit_reached"]`` is True.
    seed_rule : {"last_added", "previous_seed"}, default="last_added"
        The next seed is the record furthest from the record added last (the paper's
        pseudo-code) or from the previous seed (Gong's implementation).
    cat_loss : {"height", "leaves"}, default="height"
        See :class:`RecordSpace`.
    first : {"min_id", "random"}, default="min_id"
        The first reference record and the order in which leftovers are placed: table
        order (deterministic, as in the test vectors of docs/papers.md, B-4) or random (the paper).
    recoding : {"tight", "suppress"}, default="tight"
        Release each cluster as its tight ranges / lowest common ancestors, or with
        DIVA's stars (common value or ``*``).
    memory_limit : None, int, float or str, optional
        Bytes (``"2GB"``), a share of the available memory (0.5) or ``"none"``; default:
        that of :func:`fairanon.anonymize`, else half the available memory. The need
        (:func:`kmember_memory`) is estimated before the work.

    Returns
    -------
    Release
        FEASIBLE with objective Byun's Total-IL (exact); INFEASIBLE when a protected
        value has fewer than k records.

    Raises
    ------
    IncompatibleRequirementError
        For any requirement but KAnonymity.
    MemoryLimitError
        When :func:`kmember_memory` is above `memory_limit`.

    Notes
    -----
    O(n² d): quadratic in the number of records (use Mondrian for large tables). The
    protected attribute is released unchanged, so each protected value is clustered on
    its own. Departures from [1]_: ties are broken by table order; ordered attributes
    are measured by rank like numeric ones; Gong's leftover bug (every leftover goes to
    the last cluster) is not reproduced.

    References
    ----------
    .. [1] J.-W. Byun, A. Kamra, E. Bertino, N. Li. Efficient k-anonymization using
       clustering techniques. DASFAA 2007.

    Examples
    --------
    >>> inst = fa.load("diva_table1")
    >>> rel = kmember(inst, [fa.KAnonymity(2)])
    >>> rel.n_groups, fa.verify(inst, rel, [fa.KAnonymity(2)]).passed
    (5, True)
    """
    started = time.perf_counter()
    requirements = validate_requirements(instance, requirements, caller="kmember")
    k = single_k(requirements, "kmember")
    check_option(seed_rule, "seed_rule", "kmember", SEED_RULES)
    check_option(first, "first", "kmember", FIRST_RULES)
    check_option(recoding, "recoding", "kmember", RECODINGS)
    rng = check_random_state(seed)
    params = {"seed_rule": seed_rule, "cat_loss": cat_loss, "first": first, "recoding": recoding,
              "time_limit": time_limit}
    bad = infeasible_small_class(instance, "kmember", params, requirements, seed, started, k)
    if bad is not None:
        return bad
    check_memory(
        kmember_memory(instance),
        f"k-member on the {instance.n_rows:,} records of {instance.name!r}",
        "anonymize fewer records at a time, or use Mondrian (method='mondrian')",
        memory_limit,
        caller="kmember",
    )
    space = RecordSpace(instance, cat_loss=cat_loss)
    deadline = None if time_limit is None else started + time_limit
    clusters, timed_out = [], False
    for _, rows in protected_classes(instance):
        part, cut = kmember_clusters(space, rows, k, seed_rule=seed_rule, first=first, rng=rng, deadline=deadline)
        clusters.extend(part)
        timed_out |= cut
    return clustered_release(instance, clusters, "kmember", params, requirements, seed, started,
                             recoding=recoding, space=space, time_limit_reached=timed_out)
