"""The Sabre method: t-closeness by bucketization and redistribution (Cao, Karras, Kalnis,
Tan, VLDB J. 2011; docs/papers.md, B-3).

:func:`sabre` checks the requirements, bucketizes the sensitive values
(:mod:`~fairanon.heuristics.sabre.buckets`), plans the classes of every protected value
(:mod:`~fairanon.heuristics.sabre.plan`), fills them with records
(:mod:`~fairanon.heuristics.sabre.materialization`) and releases them generalized.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..._validation import check_option, check_random_state
from ...exceptions import IncompatibleRequirementError, InvalidParameterError
from ...instances.instance import Instance
from ...models import measures as M
from ...models.requirements import KAnonymity, TCloseness, requirement_targets, validate_requirements
from ...release import Release, Status, generalize_partition, provenance
from .buckets import bucketize_stages
from .materialization import SEED_BUCKET_RULES, SEED_TUPLE_RULES, class_ids, id_order, materialize
from .neighbours import RETRIEVALS, NeighbourPool, QISpace
from .plan import _deadline, _PlanBound, plan_classes

__all__ = ["BUCKET_RULES", "sabre"]

#: Which stage of the greedy bucketization to use: the first with U <= t ("fewest"
#: buckets, docs/papers.md, B-3) or the one whose redistribution plans the most classes
#: ("most_classes", ours; among the stages with up to max(4 b0, b0 + 32) buckets).
BUCKET_RULES = ("fewest", "most_classes")


@dataclass
class _Target:
    name: str
    codes: np.ndarray  # dense value index per row
    values: list
    counts: np.ndarray


def _encode_target(instance: Instance, name: str) -> _Target:
    attr = instance.schema[name]
    present, dense = np.unique(instance.codes(name), return_inverse=True)
    dense = dense.reshape(-1).astype(np.int64)
    values = [attr.domain[int(c)] for c in present] if attr.domain is not None else [float(v) for v in present]
    return _Target(name, dense, values, np.bincount(dense, minlength=len(present)))


def _ground(instance: Instance, target: _Target, req: TCloseness) -> M.EMDGround:
    return M.emd_ground(req.distance, target.values, instance.schema[target.name], req.ordered_domain)


def _split_requirements(requirements, caller: str) -> tuple[TCloseness, int]:
    closeness = [r for r in requirements if isinstance(r, TCloseness)]
    others = [r for r in requirements if not isinstance(r, (TCloseness, KAnonymity))]
    if others:
        raise IncompatibleRequirementError(
            f"{caller} enforces TCloseness (with an optional KAnonymity); it cannot enforce "
            f"{', '.join(str(r) for r in others)}. Use method='mondrian' for l-diversity."
        )
    if len(closeness) != 1:
        raise IncompatibleRequirementError(
            f"{caller} needs exactly one TCloseness requirement; got {len(closeness)}."
        )
    k = max([r.k for r in requirements if isinstance(r, KAnonymity)], default=1)
    return closeness[0], k


def protected_parts(instance: Instance) -> tuple[np.ndarray, list]:
    """Part of every row (one per present value of the protected attribute, which is
    released unchanged so no class may mix its values) and the parts' values."""
    name = instance.schema.protected
    if name is None:
        return np.zeros(instance.n_rows, dtype=np.int64), [None]
    present, part = np.unique(instance.codes(name), return_inverse=True)
    domain = instance.schema[name].domain
    return part.reshape(-1).astype(np.int64), [domain[int(c)] for c in present]


def sabre(
    instance,
    requirements,
    *,
    retrieval: str = "knn",
    buckets: str = "most_classes",
    seed_bucket: str = "size/need",
    seed_tuple: str = "random",
    seed=None,
    time_limit=None,
) -> Release:
    """Sabre t-closeness by bucketization and redistribution [1]_ (docs/papers.md, B-3).

    Parameters
    ----------
    instance : Instance
        Only role "qi" attributes are generalized. The protected attribute is released
        unchanged, so each of its values is anonymized apart.
    requirements : sequence of Requirement
        One :class:`~fairanon.TCloseness` (equal, ordered or hierarchical EMD, on one
        sensitive or decision attribute) and optionally :class:`~fairanon.KAnonymity`.
    retrieval : {"knn", "approx"}, default="knn"
        Exact nearest neighbours on kd-trees (SABRE-KNN), or the nearest records along
        a Hilbert curve (our reading of SABRE-AK: faster, coarser).
    buckets : {"most_classes", "fewest"}, default="most_classes"
        :data:`BUCKET_RULES`: the greedy bucketing with the fewest buckets whose bound is
        <= t (docs/papers.md, B-3), or the later stage of the same greedy whose
        redistribution plans the most (so the smallest) classes.
    seed_bucket : {"size/need", "need/size", "random"}, default="size/need"
        Bucket of each class's first record (:data:`SEED_BUCKET_RULES`): the lowest
        remaining/needed ratio (Ruggieri's improvement, footnote 4) or random (Sabre).
    seed_tuple : {"random", "min_id"}, default="random"
        First record inside that bucket: random (Sabre) or the smallest record id (the
        deterministic setting of the test vectors).
    seed : None, int or numpy.random.Generator
        For the random rules; the same seed gives the same release.
    time_limit : float, optional
        Seconds for the whole method, read between the blocks of the set-up (before the
        ground distance, which the whole table, one protected value, does without, and
        after it; inside the hierarchical greedy, before and after its per-node sums),
        at each stage of the greedy bucketization, each planned split and each wave of
        the materialization. The stages after the
        first with U <= t are tried in half the time left when it is reached (the one
        planning the most classes by then is kept); planned classes not yet split stay
        whole; the classes not yet filled at the deadline make one class per protected
        value (a union of t-close planned classes is t-close, the EMD being convex);
        and when no stage with U <= t is reached the release is one class per protected
        value (t-close by the exact check of each; ``buckets`` None). The release stays
        valid and ``provenance["time_limit_reached"]`` is True. 10,000 values under
        equal 0.4-closeness, one record each, 1 s: 0.7 s CPU (6.3 s when the stages
        read no clock); 100,000 codes, hierarchical 0.4-closeness, 3 s: returned 0.06-0.1 s
        late (2.2 s when the materialization read none); 0.05 s: 0.10-0.13 s CPU once the
        hierarchy's node arrays are made, 0.16-0.21 s in the first call on a hierarchy,
        which makes them (0.07-0.10 s alone; 0.55 s in all when the set-up read no
        clock; the ground distance and the greedy's per-node sums, the longest blocks
        between two reads, take about 0.03 s each from the node arrays, 0.2 s each
        from a loop over the nodes).

    Returns
    -------
    Release
        FEASIBLE; or INFEASIBLE (with the coarsest table: one class per protected value)
        when the records of one protected value are not themselves t-close or fewer
        than k. Provenance holds the buckets, their bound U, the largest plan bound,
        the number of planned classes and ``n_released_classes``, the number released:
        fewer than planned when the classes not filled by the deadline were merged into
        one per protected value (the buckets and plan bound then describe the filled
        classes and the planned classes merged), and with no class filled (one class
        per protected value) the buckets, U and plan bound are None.

    Raises
    ------
    IncompatibleRequirementError
        Without exactly one TCloseness, or with another kind of requirement.
    InvalidParameterError
        For an unknown option.

    Notes
    -----
    Bucketization is greedy: split the bucket whose split lowers U most until U <= t,
    then (``buckets="most_classes"``) keep splitting while more classes can be planned.
    Plans halve per-bucket counts while both halves have >= k records and the sound
    bound of :class:`_PlanBound` on their EMD is <= t, so every class is t-close
    whatever records it gets; the verifier re-checks the exact EMD. Materialization
    (:func:`materialize`): for each planned class in depth-first order, a seed record,
    then its nearest live records (Euclidean over :class:`QISpace` coordinates, ties
    by smallest record id among the candidates of a search,
    :data:`~fairanon.heuristics.sabre.neighbours.TIE_WINDOW`) from
    each bucket. Classes are released with their tight summaries (ranges, lowest
    common ancestors).

    Cost: bucketization O(m^2) (ordered) for m sensitive values, each later stage
    planned in O(L m) for L classes (at most max(4 b0, b0 + 32) stages); materialization
    one kd-tree query per (class, bucket), batched across classes, with trees rebuilt
    as buckets empty: about O(n log n + L b log n) for b buckets, a scan of the bucket
    for requests of a quarter of it. ``retrieval="approx"`` replaces the queries by
    walks along the curve (O(n log n) for the curve order). Adult (30,162 rows, 8
    quasi-identifiers, occupation, k = 5, t = 0.2): 14 buckets, 2,048 classes, LM
    0.46, about 0.6 s of CPU (``benchmarks/sabre.py``).

    Departures from [1]_, whose full text was not available: everything in docs/papers.md,
    B-3 is a reconstruction (bound, split rule, class sizes); the "most_classes"
    bucketing rule is ours.

    References
    ----------
    .. [1] J. Cao, P. Karras, P. Kalnis, K.-L. Tan. SABRE: a Sensitive Attribute
       Bucketization and REdistribution framework for t-closeness. VLDB J. 20(1), 2011.

    Examples
    --------
    >>> inst = fa.load("adult", qi=["age", "education", "sex"],
    ...                roles={"occupation": "sensitive", "race": "ignore"})
    >>> reqs = [fa.KAnonymity(5), fa.TCloseness(0.2, attribute="occupation")]
    >>> rel = sabre(inst, reqs, seed=0)
    >>> rel.status, fa.verify(inst, rel, reqs, metrics=False).passed
    (<Status.FEASIBLE: 'FEASIBLE'>, True)
    """
    started = time.perf_counter()
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            f"The 'instance' parameter of sabre must be an Instance. Got {type(instance).__name__} instead."
        )
    requirements = validate_requirements(instance, requirements, caller="sabre")
    req, k = _split_requirements(requirements, "sabre")
    check_option(retrieval, "retrieval", "sabre", RETRIEVALS)
    check_option(buckets, "buckets", "sabre", BUCKET_RULES)
    check_option(seed_bucket, "seed_bucket", "sabre", SEED_BUCKET_RULES)
    check_option(seed_tuple, "seed_tuple", "sabre", SEED_TUPLE_RULES)
    deadline = _deadline(time_limit, started, "sabre")
    rng = check_random_state(seed)
    targets = requirement_targets(instance.schema, req)
    if len(targets) != 1:
        raise IncompatibleRequirementError(
            f"sabre protects one attribute; {req} applies to {list(targets)}. Name one with attribute=..."
        )
    target = _encode_target(instance, targets[0])
    hierarchy = instance.schema[target.name].hierarchy
    params = {
        "retrieval": retrieval,
        "buckets": buckets,
        "seed_bucket": seed_bucket,
        "seed_tuple": seed_tuple,
        "time_limit": time_limit,
    }
    n = instance.n_rows
    part, part_values = protected_parts(instance)

    def release(groups, status=Status.FEASIBLE, reason=None, **extra):
        return Release(
            table=generalize_partition(instance, groups),
            groups=groups,
            status=status,
            reason=reason,
            provenance=provenance("sabre", params, requirements, seed, started, **extra),
        )

    def coarsest():
        # The deadline passed before a stage with U <= t: one class per protected value,
        # t-close by the exact check of each (or the whole table, at EMD 0 from itself).
        return release(part, buckets=None, bucket_bound=None, max_plan_bound=None,
                       n_planned_classes=len(part_values), n_released_classes=len(part_values),
                       time_limit_reached=True)

    # The set-up reads the deadline between its blocks (the ground distance and the
    # hierarchical greedy's set-up took 0.5 s CPU at 100,000 codes before the first
    # read, at the first stage): the whole table needs no ground distance to be checked.
    if len(part_values) == 1 and n >= k and _past(deadline):
        return coarsest()
    ground = _ground(instance, target, req)
    part_rows = [np.flatnonzero(part == p) for p in range(len(part_values))]
    for rows, value in zip(part_rows, part_values):
        failure = None
        if len(rows) < k:
            failure = f"{KAnonymity(k)} is violated by the {len(rows)} records"
        else:
            row_counts = np.bincount(target.codes[rows], minlength=len(target.values))
            if M.emd_exact(row_counts, target.counts, ground) > req.t:
                failure = f"{req} is violated by the {len(rows)} records"
        if failure is not None:
            where = "of the whole table" if value is None else f"with {instance.schema.protected}={value!r}"
            reason = (
                f"{failure} {where}: the protected attribute is released unchanged, so every class "
                "lies inside that set, and the requirement is union-monotone; no release satisfies it."
            )
            return release(part, Status.INFEASIBLE, reason)
    if _past(deadline):
        return coarsest()

    def plan(bucketing):
        bound = _PlanBound(bucketing, ground)

        def allowed(children):
            ok = children.sum(axis=1) >= k
            ok[ok] = bound.within(children[ok], req.t)
            return ok

        value_bucket = bucketing.bucket_of[target.codes]
        plans, owners, cut = [], [], False
        for p, rows in enumerate(part_rows):
            root = np.bincount(value_bucket[rows], minlength=bucketing.n_buckets)
            leaves, late = plan_classes(root, allowed, deadline=deadline)
            cut |= late
            plans.extend(leaves)
            owners.extend([p] * len(leaves))
        return plans, owners, cut, bound

    stages = bucketize_stages(
        target.counts, req.distance, req.t, hierarchy=hierarchy, values=[str(v) for v in target.values],
        positions=ground.positions, span=ground.span, deadline=deadline,
    )
    # The stages read the deadline (the loop planned each stage past it: 10,000 values
    # under equal 0.4-closeness, one record each, took 6.3-6.8 s CPU in a time limit of
    # 1 s, now 0.7 s). Later stages are tried in half the time left at the first one,
    # and the best stage planned by then is kept, leaving the rest to materialize its
    # classes; without any stage the coarsest table, t-close by the check above, is
    # released.
    chosen, late, halfway = None, False, None
    for i, bucketing in enumerate(stages):
        if i == 0:
            most = max(4 * bucketing.n_buckets, bucketing.n_buckets + 32)
            if deadline is not None:
                now = time.perf_counter()
                halfway = now + (deadline - now) / 2
        elif buckets == "fewest" or bucketing.n_buckets > most:
            break
        elif halfway is not None and time.perf_counter() >= halfway:
            late = True
            break
        planned = plan(bucketing)
        if chosen is None or len(planned[0]) > len(chosen[1][0]):
            chosen = (bucketing, planned)
    else:  # every stage, or the stages stopped at the deadline
        late = deadline is not None and time.perf_counter() >= deadline
    if chosen is None:  # the deadline passed before a stage with U <= t
        return coarsest()
    bucketing, (plans, parts_of_plan, timed_out, bound) = chosen
    value_bucket = bucketing.bucket_of[target.codes]
    # Root plans are t-close by the exact check above even when their bound is not.
    max_bound = float(bound.values(np.vstack(plans)).max())

    whole_parts = deadline is not None and time.perf_counter() >= deadline
    if whole_parts:
        groups, late = part, True  # no class filled: one per protected value
    else:
        order = id_order(instance)  # position in `order` = rank of the record id
        coords = QISpace(instance).coords[order]
        pool_bucket = (part * bucketing.n_buckets + value_bucket)[order]
        pool = NeighbourPool(coords, pool_bucket, len(part_values) * bucketing.n_buckets, retrieval)
        ids = [p * bucketing.n_buckets + np.arange(bucketing.n_buckets) for p in parts_of_plan]
        classes = materialize(pool, plans, ids, rng, seed_bucket=seed_bucket, seed_tuple=seed_tuple,
                              deadline=deadline)
        if len(classes) < len(plans):
            # Past the deadline the classes not yet filled make one class per protected
            # value: the union of its planned classes, each t-close whatever records it
            # gets, is t-close (the EMD to the table's distribution is convex in the
            # class's distribution) and has >= k records.
            late = True
            live = np.flatnonzero(np.frombuffer(bytes(pool.alive), dtype=np.uint8))
            owner = part[order][live]
            classes.extend(live[owner == p].tolist() for p in np.unique(owner).tolist())
        groups = class_ids(classes, order, n)
    # The stage's buckets and plan bound describe the classes filled from its plan; with
    # none filled (one class per protected value) they describe nothing released.
    return release(
        groups,
        buckets=None if whole_parts else [[_text(target.values[v]) for v in b] for b in bucketing.buckets],
        bucket_bound=None if whole_parts else bucketing.upper_bound(),
        max_plan_bound=None if whole_parts else max_bound,
        n_planned_classes=len(plans),
        n_released_classes=len(np.unique(groups)),
        time_limit_reached=timed_out or late,
    )


def _past(deadline: float | None) -> bool:
    return deadline is not None and time.perf_counter() >= deadline


def _text(value) -> str:
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)
