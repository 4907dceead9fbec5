"""Optimal bucketization for t-closeness with the multiplicative distance
(Domingo-Ferrer and Soria-Comas, Knowledge-Based Systems 2015, §6).

With the distance of their Def. 4 a class that lacks a value present in the table is
infinitely far from it, so the confidential attribute is first coarsened into b
buckets of consecutive values: b = t + 1 buckets of N / (t + 1) records is optimal
(§6.1), since each class can then "emphasize" one bucket up to the factor t while all
others sit at 1/t. The records are split into e = b l classes, l emphasizing each
bucket, and each class takes between ceil(e_i p_j / t) and floor(e_i p_j t) records of
bucket j (§6.2), which makes it t-close. fairanon adds (docs/papers.md, DS-3 and DS-4):
tie-aware bucket boundaries, and a bounded transportation problem that makes the
per-class counts add up to the bucket sizes.
"""

from __future__ import annotations

import itertools
import math
import time
from fractions import Fraction

import networkx as nx
import numpy as np
import pandas as pd

from .._validation import check_int, check_option, check_random_state
from ..exceptions import IncompatibleRequirementError, InvalidParameterError
from ..instances.generalization import format_number
from ..instances.instance import Instance
from ..models import closeness as C
from ..models.requirements import (
    KAnonymity,
    MultiplicativeTCloseness,
    requirement_targets,
    validate_requirements,
)
from ..release import Release, Status, generalize_partition, provenance
from .sabre.materialization import SEED_BUCKET_RULES, SEED_TUPLE_RULES, class_ids, id_order, materialize
from .sabre.neighbours import RETRIEVALS, NeighbourPool, QISpace
from .sabre.plan import _deadline

__all__ = ["bucket_boundaries", "bucketization", "class_counts", "class_sizes"]


def _round_half_up(x: Fraction) -> int:
    return math.floor(x + Fraction(1, 2))


def bucket_boundaries(sorted_values: np.ndarray, n_buckets: int, tie_aware: bool = True) -> list[int]:
    """End positions u_1 < ... < u_b = N of the buckets of values sorted ascending.

    u_m = round_half_up(m N / b) (DS §6.2). With `tie_aware`, each boundary moves to the
    nearest position where the value changes (the lower one on a tie), so equal values
    never straddle two buckets; boundaries that collapse leave fewer buckets
    (docs/papers.md, DS-3).

    >>> bucket_boundaries(np.arange(12), 3)
    [4, 8, 12]
    >>> bucket_boundaries(np.array([1, 1, 1, 2, 2, 2, 2, 2, 3, 3]), 3)
    [3, 8, 10]
    """
    values = np.asarray(sorted_values)
    n = len(values)
    ideal = [_round_half_up(Fraction(m * n, n_buckets)) for m in range(1, n_buckets)]
    if not tie_aware:
        return sorted({u for u in ideal if 0 < u < n}) + [n]
    changes = np.flatnonzero(values[1:] != values[:-1]) + 1  # valid cut positions
    out = []
    for u in ideal:
        if not len(changes):
            break
        i = int(np.searchsorted(changes, u))
        below = changes[i - 1] if i > 0 else None
        above = changes[i] if i < len(changes) else None
        if below is None or (above is not None and above - u < u - below):
            cut = int(above)
        else:
            cut = int(below)
        if not out or cut > out[-1]:
            out.append(cut)
    return out + [n]


def class_sizes(n_records: int, n_classes: int) -> list[int]:
    """e_i = round(i N / e) - round((i - 1) N / e) (DS §6.2; sizes telescope to N).

    >>> class_sizes(12, 3), class_sizes(10, 4)
    ([4, 4, 4], [3, 2, 3, 2])
    """
    cuts = [_round_half_up(Fraction(i * n_records, n_classes)) for i in range(n_classes + 1)]
    return [b - a for a, b in itertools.pairwise(cuts)]


def _limits(size: int, supply: int, n: int, t: Fraction) -> tuple[int, int]:
    """[ceil(e p / t), floor(e p t)] with p = supply / N, in integers."""
    a, c = t.numerator, t.denominator
    return -((-size * supply * c) // (a * n)), (size * supply * a) // (c * n)


def class_counts(sizes, emphasis, supplies, t) -> np.ndarray | None:
    """Records of each bucket in each class: within [ceil(e_i p_j / t), floor(e_i p_j t)]
    for every bucket, the emphasized one included, summing to e_i per class and to
    the bucket size per bucket, as close as possible to DS's greedy targets (others at
    their lower limit, the rest to the emphasized bucket).

    Classes of equal size and emphasis are interchangeable, so the bounded
    transportation problem is solved between those types and the buckets (a min-cost
    flow with lower bounds, docs/papers.md, DS-4), then each type's totals are
    dealt to its classes as evenly as possible. Returns None when no counts exist.

    >>> class_counts([4, 4, 4], [0, 1, 2], [4, 4, 4], 2).tolist()
    [[2, 1, 1], [1, 2, 1], [1, 1, 2]]
    """
    t = Fraction(t)
    sizes, emphasis, supplies = list(map(int, sizes)), list(map(int, emphasis)), list(map(int, supplies))
    n, b = sum(supplies), len(supplies)
    types: dict[tuple[int, int], list[int]] = {}
    for i, key in enumerate(zip(sizes, emphasis)):
        types.setdefault(key, []).append(i)
    graph = nx.MultiDiGraph()
    demand = {("bucket", j): supplies[j] for j in range(b)}
    for (size, emph), members in types.items():
        r = len(members)
        low = [0] * b
        high = [0] * b
        target = [0] * b
        for j in range(b):
            low[j], high[j] = _limits(size, supplies[j], n, t)
            if low[j] > high[j]:
                return None
            target[j] = low[j]
        target[emph] = min(max(size - sum(low) + low[emph], low[emph]), high[emph])
        node = ("type", size, emph)
        demand[node] = -r * size + r * sum(low)
        for j in range(b):
            demand[("bucket", j)] -= r * low[j]
            below = r * (target[j] - low[j])
            above = r * (high[j] - target[j])
            # Moving away from the target costs one per record, on either side.
            graph.add_edge(node, ("bucket", j), capacity=below, weight=-1)
            graph.add_edge(node, ("bucket", j), capacity=above, weight=1)
    for node, d in demand.items():
        graph.add_node(node, demand=d)
    try:
        flow = nx.min_cost_flow(graph)
    except nx.NetworkXUnfeasible:
        return None
    counts = np.zeros((len(sizes), b), dtype=np.int64)
    for (size, emph), members in types.items():
        r = len(members)
        node = ("type", size, emph)
        totals = [r * _limits(size, supplies[j], n, t)[0] + sum(flow[node][("bucket", j)].values()) for j in range(b)]
        base = [v // r for v in totals]
        counts[members] = base
        # Deal the remainders round-robin: each bucket's extra records go to distinct
        # classes and every class gets the same number of extras.
        slot = 0
        for j in range(b):
            for _ in range(totals[j] - r * base[j]):
                counts[members[slot % r], j] += 1
                slot += 1
    return counts


def _bucket_label(attr, lo, hi) -> str:
    if attr.kind == "numeric":
        return format_number(lo) if lo == hi else f"[{format_number(lo)}-{format_number(hi)}]"
    dom = attr.domain
    return dom[int(lo)] if lo == hi else f"[{dom[int(lo)]}-{dom[int(hi)]}]"


def bucketization(
    instance,
    requirements,
    *,
    n_buckets: int | None = None,
    l: int | None = None,
    tie_aware: bool = True,
    retrieval: str = "knn",
    seed_bucket: str = "size/need",
    seed_tuple: str = "random",
    seed=None,
    time_limit=None,
) -> Release:
    """t-closeness with the multiplicative distance by optimal bucketization [1]_ (§6).

    Parameters
    ----------
    instance : Instance
        The confidential attribute (numeric or ordered) is released as bucket labels
        (``[lo-hi]`` of the values in the bucket); quasi-identifiers are generalized
        per class (ranges, lowest common ancestors). No protected attribute: the
        classes span the whole table.
    requirements : sequence of Requirement
        One :class:`~fairanon.MultiplicativeTCloseness` (t >= 1) and optionally
        :class:`~fairanon.KAnonymity`.
    n_buckets : int, optional
        b; default t + 1 for an integer t, floor(t) + 1 otherwise (P10).
    l : int, optional
        Classes emphasizing each bucket (e = b l classes of about N / e records).
        Default: from k, floor(N / (b k)); without k, the largest l (smallest classes)
        whose counts exist, at most floor(N / b^2).
    tie_aware : bool, default=True
        Move bucket boundaries so that equal values share a bucket (needed for
        disjoint released labels).
    retrieval, seed_bucket, seed_tuple
        How records are assigned to classes with the counts found: as in
        :func:`~fairanon.heuristics.sabre.sabre` (a seed record, then its nearest
        neighbours in quasi-identifier space from every bucket).
    seed : None, int or numpy.random.Generator
    time_limit : float, optional
        Accepted for the common signature; the construction is not iterative.

    Returns
    -------
    Release
        FEASIBLE; INFEASIBLE (one class, the coarsest table) when no counts exist for
        the l asked for, or k cannot be met. Provenance: ``buckets`` (label and size),
        ``n_buckets``, ``l``, ``n_classes``, ``class_sizes`` range, ``distance``
        (the largest Def.-4 distance of a class's planned counts, a float).

    Raises
    ------
    IncompatibleRequirementError
        Without a MultiplicativeTCloseness, with other requirements, a categorical
        confidential attribute (buckets need an order), or a protected attribute.
    InvalidParameterError
        Bad options (l out of [1, floor(N / b^2)], n_buckets < 2, ...).

    Notes
    -----
    Steps (§6.3, with docs/papers.md, DS-3 to DS-5): sort by the confidential value, cut at
    round_half_up(m N / b); class sizes e_i; class i emphasizes bucket (i - 1) mod b;
    counts within [ceil(e_i p_j / t), floor(e_i p_j t)] for every bucket, so the
    class's share of bucket j lies within [p_j / t, t p_j]: distance <= t (Prop. 2).
    The counts solve a min-cost flow between the (size, emphasis) types of classes and
    the buckets, O(b^2) arcs. Assignment: :func:`~fairanon.heuristics.sabre.materialization.materialize`.

    Departures from [1]_: tie-aware boundaries and the transportation step (the
    paper's greedy counts need not add up to the bucket sizes); the paper does not say
    how records are assigned to classes; it writes the remainder as
    e_i - t ceil(e_i p_j / t), which equals ours for equal buckets.

    References
    ----------
    .. [1] J. Domingo-Ferrer, J. Soria-Comas. From t-closeness to differential privacy
       and vice versa in data anonymization. Knowledge-Based Systems 74, 2015.

    Examples
    --------
    DS Fig. 2: twelve values, t = 2: three buckets of four, three classes of four,
    each 1.5-close.

    >>> df = pd.DataFrame({"zip": range(12), "salary": range(1, 13)})
    >>> inst = fa.Instance(df, fa.Schema([fa.Attribute("zip", kind="numeric"),
    ...                                   fa.Attribute("salary", role="sensitive", kind="numeric")]))
    >>> req = fa.MultiplicativeTCloseness(2)
    >>> rel = bucketization(inst, [req], seed=0)
    >>> sorted(set(rel.table["salary"])), rel.n_groups
    (['[1-4]', '[5-8]', '[9-12]'], 3)
    >>> report = fa.verify(inst, rel, [req])
    >>> report.passed, report[str(req)].achieved
    (True, Fraction(3, 2))
    """
    started = time.perf_counter()
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            f"The 'instance' parameter of bucketization must be an Instance. Got {type(instance).__name__} instead."
        )
    requirements = validate_requirements(instance, requirements, caller="bucketization")
    _deadline(time_limit, started, "bucketization")
    check_option(retrieval, "retrieval", "bucketization", RETRIEVALS)
    check_option(seed_bucket, "seed_bucket", "bucketization", SEED_BUCKET_RULES)
    check_option(seed_tuple, "seed_tuple", "bucketization", SEED_TUPLE_RULES)
    if not isinstance(tie_aware, bool):
        raise InvalidParameterError(f"The 'tie_aware' parameter of bucketization must be a bool. Got {tie_aware!r} instead.")
    rng = check_random_state(seed)
    closeness = [r for r in requirements if isinstance(r, MultiplicativeTCloseness)]
    others = [r for r in requirements if not isinstance(r, (MultiplicativeTCloseness, KAnonymity))]
    if others or len(closeness) != 1:
        raise IncompatibleRequirementError(
            "bucketization enforces one MultiplicativeTCloseness with an optional KAnonymity; got "
            f"{[str(r) for r in requirements]}."
        )
    req = closeness[0]
    k = max([r.k for r in requirements if isinstance(r, KAnonymity)], default=1)
    schema = instance.schema
    if schema.protected is not None:
        raise IncompatibleRequirementError(
            f"bucketization forms classes across the whole table, but {schema.protected!r} is a "
            "protected attribute, released unchanged, which would split them. Give it role 'qi'."
        )
    targets = requirement_targets(schema, req)
    if len(targets) != 1:
        raise IncompatibleRequirementError(
            f"bucketization protects one attribute; {req} applies to {list(targets)}. Name one with attribute=..."
        )
    name = targets[0]
    attr = schema[name]
    if attr.kind == "categorical":
        raise IncompatibleRequirementError(
            f"bucketization cuts {name!r} into runs of consecutive values, so it needs an order: "
            "declare it numeric or ordered."
        )
    n = instance.n_rows
    t = req.t
    b = check_int(n_buckets, "n_buckets", "bucketization", low=2) if n_buckets is not None else math.floor(t) + 1

    order = id_order(instance)  # internal position = rank of the record id
    values = instance.codes(name)[order]
    by_value = np.argsort(values, kind="stable")  # ties by record id
    ends = bucket_boundaries(values[by_value], b, tie_aware)
    starts = [0] + ends[:-1]
    bucket_of = np.empty(n, dtype=np.int64)
    for j, (a, z) in enumerate(zip(starts, ends)):
        bucket_of[by_value[a:z]] = j
    b = len(ends)
    supplies = [z - a for a, z in zip(starts, ends, strict=True)]
    labels = [_bucket_label(attr, values[by_value[a]], values[by_value[z - 1]]) for a, z in zip(starts, ends, strict=True)]
    params = {
        "n_buckets": n_buckets,
        "l": l,
        "tie_aware": tie_aware,
        "retrieval": retrieval,
        "seed_bucket": seed_bucket,
        "seed_tuple": seed_tuple,
        "time_limit": time_limit,
    }
    l_max = n // (b * b)
    if l is not None:
        l = check_int(l, "l", "bucketization", low=1)
        if l > max(l_max, 1):
            raise InvalidParameterError(
                f"The 'l' parameter of bucketization must be in [1, floor(N / b^2) = {l_max}] "
                f"(N = {n}, b = {b}). Got {l} instead."
            )
        candidates = [l]
    elif k > 1:
        candidates = list(range(min(n // (b * k), l_max), 0, -1))
    else:
        candidates = list(range(l_max, 0, -1))

    def release(groups, table, status=Status.FEASIBLE, reason=None, **extra):
        return Release(
            table=table,
            groups=groups,
            status=status,
            reason=reason,
            provenance=provenance(
                "bucketization", params, requirements, seed, started,
                buckets=[{"label": lab, "size": s} for lab, s in zip(labels, supplies)],
                n_buckets=b, **extra,
            ),
        )

    def table_of(groups):
        table = generalize_partition(instance, groups)
        released = np.empty(n, dtype=np.int64)
        released[order] = bucket_of
        table[name] = pd.Categorical.from_codes(released, labels)
        return table

    chosen = None
    for l_try in candidates:
        e = b * l_try
        sizes = class_sizes(n, e)
        if min(sizes) < k or min(supplies) < e:
            continue
        counts = class_counts(sizes, [i % b for i in range(e)], supplies, t)
        if counts is not None:
            chosen = (l_try, counts)
            break
    if chosen is None:
        reason = (
            f"no split into b * l classes of >= {k} records meets {req} with the {b} buckets "
            f"(sizes {supplies}) for l in {candidates[:1] + candidates[-1:] if candidates else '[]'}: "
            "each class needs a record of every bucket, and the count limits have no solution"
        )
        groups = np.zeros(n, dtype=np.int64)
        return release(groups, table_of(groups), Status.INFEASIBLE, reason)
    l_used, counts = chosen
    coords = QISpace(instance).coords[order]
    pool = NeighbourPool(coords, bucket_of, b, retrieval)
    ids = np.broadcast_to(np.arange(b), counts.shape)
    classes = materialize(pool, counts, ids, rng, seed_bucket=seed_bucket, seed_tuple=seed_tuple)
    groups = class_ids(classes, order, n)
    distance = float(C.multiplicative_distance(counts, np.asarray(supplies)).max())
    return release(
        groups,
        table_of(groups),
        l=l_used,
        n_classes=len(counts),
        class_sizes=[int(counts.sum(axis=1).min()), int(counts.sum(axis=1).max())],
        distance=distance,
    )
