"""DIVA (Milani, Huang, Chiang, EDBT 2021) as the methods ``"diva"`` and ``"diva-exact"``.

Algorithm 1 of the paper, in four steps, put together from heuristics and exact models:

1. **DiverseClustering** (Alg. 3-4): the constraint graph is colored by backtracking
   (:mod:`fairanon.heuristics.diva.coloring`), each color a candidate clustering of a
   constraint's target records (:mod:`fairanon.heuristics.diva.clusterings`). With
   ``clustering="exact"`` (and as the fallback when the search fails or gives up) the
   choice among a pool of candidate clusters (:mod:`fairanon.heuristics.diva.pool`) is
   made by CP-SAT instead (:func:`fairanon.solver.diva_model.solve_diva`).
2. **Suppress** (Alg. 2) and 3. **Anonymize**: the rest is clustered by k-member or
   Mondrian, left-over records join a cluster, and every cluster releases the values its
   records share and ``*`` elsewhere (:mod:`fairanon.heuristics.diva.rest`).
4. **Integrate**: upper bounds that the anonymized rest exceeds are restored by starring
   whole classes, fewest cells first (:func:`fairanon.solver.diva_model.integrate`).

The paper leaves Clusterings, IsConsistent and Integrate unspecified; this follows the
reconstruction of baselines spec §7.3 (see :func:`diva`, Notes).
"""

from __future__ import annotations

import time

import numpy as np

from .._validation import check_int, check_option, check_random_state
from ..heuristics.diva.coloring import VALUE_ORDERS, run_coloring
from ..heuristics.diva.graph import resolve_next_node
from ..heuristics.diva.pool import candidate_pool, complete_pool, complete_pool_size
from ..heuristics.diva.precheck import check_bool, k_of, precheck
from ..heuristics.diva.problem import Problem
from ..heuristics.diva.rest import ANONYMIZERS, release_by_suppression
from ..heuristics.kmember import protected_classes
from ..instances.instance import Instance
from ..models.diversity import encode_constraints
from ..models.requirements import validate_requirements
from ..release import Release, Status, generalize_partition, provenance
from ..solver.diva_model import ClusterPool, integrate, solve_diva

__all__ = ["CLUSTERINGS", "FALLBACK_TIME", "diva", "diva_exact"]

#: How the diverse clustering is chosen: DIVA's backtracking coloring, or CP-SAT.
CLUSTERINGS = ("coloring", "exact")
#: Seconds the exact fallback of the coloring may take when no time limit is given.
FALLBACK_TIME = 120.0


def diva(
    instance: Instance,
    requirements,
    *,
    seed=None,
    time_limit: float | None = None,
    next_node="maxfanout",
    value_order: str | None = None,
    clustering: str = "coloring",
    fallback: bool = True,
    anonymize: str = "auto",
    kmember_max_rows: int = 3000,
    max_candidates: int = 16,
    max_tries: int = 5000,
    exact_pool_cap: int = 20000,
    pool_candidates: int = 4,
    num_workers: int | None = None,
    trace: bool = False,
    lookahead: bool = True,
) -> Release:
    """DIVA [1]_: a k-anonymous release by suppression that satisfies diversity constraints.

    Parameters
    ----------
    instance : Instance
    requirements : sequence of Requirement
        DiversityConstraint (any number) and KAnonymity (k; default 1).
    seed : None, int or numpy.random.Generator
        For DIVA-Basic's random choices and the random candidate variants; the same
        seed gives the same release.
    time_limit : float, optional
        Seconds for the whole run; a search that runs out gives up (and falls back).
    next_node : {"basic", "minchoice", "maxfanout"}, callable or sequence of int, default="maxfanout"
        DIVA's node order (:data:`~fairanon.heuristics.diva.NEXT_NODES`) or a fixed order of
        the constraints.
    value_order : {"cost", "random"}, optional
        Order of a node's candidate clusterings; default "random" for "basic", else
        "cost" (fewest stars first).
    clustering : {"coloring", "exact"}, default="coloring"
        DIVA's backtracking coloring, or the exact choice by CP-SAT
        (:func:`fairanon.solver.diva_model.solve_diva`).
    fallback : bool, default=True
        When the coloring fails or gives up, make the choice with CP-SAT instead (which
        also names the conflicting constraints when there is no choice).
    anonymize : {"auto", "kmember", "mondrian"}, default="auto"
        Anonymizer of the records outside the diverse clustering; "auto" uses k-member
        (quadratic) up to `kmember_max_rows` records and Mondrian beyond.
    kmember_max_rows : int, default=3000
    max_candidates : int, default=16
        The cap of Clusterings: candidates tried per node and search state.
    max_tries : int, default=5000
        Candidate evaluations before the coloring gives up.
    exact_pool_cap : int, default=20000
        The exact choice takes every set of k..2k-1 records as a candidate cluster
        (and so is optimal over all releases) when there are at most this many;
        otherwise the clusters of each constraint's first `pool_candidates` candidates.
    pool_candidates : int, default=4
    num_workers : int, optional
        CP-SAT workers (default every core); an optimal clustering is made independent
        of thread timing as :func:`~fairanon.solver.diva_model.solve_diva` says.
    trace : bool, default=False
        Keep the coloring's search events in ``provenance["search"]["trace"]``.
    lookahead : bool, default=True
        Forward checking in the coloring (see :func:`~fairanon.heuristics.diva.diverse_clustering`).

    Returns
    -------
    Release
        Status FEASIBLE (coloring, or exact choice over capped candidates), OPTIMAL
        (exact choice over every cluster, proven optimal), INFEASIBLE with a reason
        naming the conflicting constraints, or UNKNOWN (time ran out). Objective: the
        number of suppressed cells.

    Raises
    ------
    IncompatibleRequirementError
        For requirements other than KAnonymity and DiversityConstraint.

    Notes
    -----
    Reconstruction (baselines spec §7.3) and departures from [1]_:

    - Clusterings(sigma, R) holds clusters of sigma's target records only, of k to
      2k - 1 records, not mixing protected values (the protected attribute is released
      unchanged), whose sizes sum to a total in [lower, upper] minus what the chosen
      colors already make count. They are generated lazily given the colors chosen so
      far, so condition 1 of IsConsistent (disjoint or equal) holds by construction: a
      record in a chosen cluster is used again only through that cluster, which
      already counts for sigma. Small pools are enumerated (every minimal clustering,
      fewest stars first). Larger ones are cut into blocks of k..2k-1 records after
      sorting them by protected value, then by membership in the target sets of
      sigma's uncolored neighbours (largest overlap first), then by the attributes with
      fewest values: records sharing those memberships are blocked together first, so
      a block counts for the neighbours too, and only the few left over are mixed. The
      blocks are taken, best first, while they keep every upper bound, until the lower
      bound is reached (then trimmed to it, or grown by free records when the blocks run
      out). Variants, in order: rank blocks by the neighbours' records they would hide
      from them, then by stars per record; by stars alone; without the membership
      cells and with the neighbours' attributes sorted last; then random orders. At
      most `max_candidates` per node and state: polynomial for fixed k, as the paper
      claims.
    - IsConsistent checks every constraint's upper bound (the paper checks the
      neighbours'; the others cannot change) and, looking ahead, that every uncolored
      constraint can still reach its lower bound with the target records left free.
    - MinChoice counts consistent candidates (up to the cap for pools of at most 64
      free records; as 0, 1 or more beyond, since each costs a sort), recomputed as
      nodes are colored. Ties: lowest index.
    - The backtracking jumps back to the latest colored node whose clusters hide target
      records of the failed node, or of an uncolored node left without spare records
      (conflict-directed backjumping); with no such node, to the previous one. The paper's §3.3 list swaps the descriptions of
      MinChoice and MaxFanOut; the names follow its dedicated paragraphs.
    - Constraints whose target attributes are all released unchanged (protected,
      sensitive, ...) are not nodes: their counts are fixed and checked upfront.
    - A complete coloring is accepted only if the records it leaves out can be released:
      per protected value none or at least k of them, or the few left join chosen
      clusters without breaking any bound (else the search goes on). Integrate may also
      star classes of the diverse clustering, as long as every lower bound holds.
    - The exact choice (``clustering="exact"``, or the fallback) starts from a
      coloring when one is found; if the records its clustering leaves out cannot be
      released, the release is built from that coloring instead.

    Cost: building a candidate costs O(|I| log |I| d) for |I| target records and d
    quasi-identifiers; the coloring evaluates at most `max_tries` candidates; the rest
    costs O(n² d) with k-member, O(n d log n) with Mondrian.

    References
    ----------
    .. [1] M. Milani, Y. Huang, F. Chiang. Preserving diversity in anonymized data.
       EDBT 2021. (Also: Diversifying anonymized data with diversity constraints,
       arXiv:2007.09141.)

    Examples
    --------
    >>> from fairanon.models.diversity import diva_sigma
    >>> inst = fa.load("diva_table1")
    >>> reqs = [fa.KAnonymity(2), *diva_sigma()]
    >>> rel = diva(inst, reqs, next_node="maxfanout")
    >>> rel.status, fa.verify(inst, rel, reqs).passed
    (<Status.FEASIBLE: 'FEASIBLE'>, True)
    """
    started = time.perf_counter()
    requirements = validate_requirements(instance, requirements, caller="diva")
    k = k_of(requirements)
    check_option(clustering, "clustering", "diva", CLUSTERINGS)
    check_option(anonymize, "anonymize", "diva", ANONYMIZERS)
    check_bool(fallback, "fallback")
    check_bool(lookahead, "lookahead")
    max_candidates = check_int(max_candidates, "max_candidates", "diva", low=1)
    max_tries = check_int(max_tries, "max_tries", "diva", low=1)
    kmember_max_rows = check_int(kmember_max_rows, "kmember_max_rows", "diva", low=0)
    exact_pool_cap = check_int(exact_pool_cap, "exact_pool_cap", "diva", low=0)
    pool_candidates = check_int(pool_candidates, "pool_candidates", "diva", low=1)
    rng = check_random_state(seed)
    all_encoded = encode_constraints(instance, requirements)
    encoded = [e for e in all_encoded if not e.fixed]
    chooser, node_name = resolve_next_node(next_node, len(encoded))
    order = value_order or ("random" if next_node == "basic" else "cost")
    check_option(order, "value_order", "diva", VALUE_ORDERS)
    deadline = None if time_limit is None else started + time_limit
    params = {
        "next_node": node_name, "value_order": order, "clustering": clustering, "fallback": fallback,
        "anonymize": anonymize, "kmember_max_rows": kmember_max_rows, "max_candidates": max_candidates,
        "max_tries": max_tries, "exact_pool_cap": exact_pool_cap, "pool_candidates": pool_candidates,
        "time_limit": time_limit, "k": k, "lookahead": lookahead,
    }
    method = "diva-exact" if clustering == "exact" else "diva"

    def prov(**extra):
        return provenance(method, params, requirements, seed, started, **extra)

    reason = precheck(instance, all_encoded, k)
    if reason is not None:
        return _blank_release(instance, Status.INFEASIBLE, reason, prov(stage="precheck"))
    d = Problem(instance, encoded, k)
    search_info: dict = {}
    failure: tuple[Status, str] | None = None
    if clustering == "coloring":
        found = run_coloring(d, chooser, order, rng, max_candidates, max_tries, deadline, trace, lookahead)
        search_info = {"found": found.found, "gave_up": found.gave_up, "tries": found.tries, "order": found.order}
        if trace:
            search_info["trace"] = found.trace
        if found.found:
            outcome = _finish(d, requirements, found.clusters, {}, Status.FEASIBLE, None, anonymize,
                              kmember_max_rows, rng, seed, deadline, num_workers)
            if isinstance(outcome, Release):
                return outcome.with_provenance(**prov(search=search_info, **outcome.provenance))
            failure = outcome
            search_info["finish"] = outcome[1]
        else:
            why = "gave up (budget or time limit)" if found.gave_up else "exhausted its candidate clusterings"
            names = ", ".join(d.label(i) for i in range(len(encoded)))
            failure = (Status.UNKNOWN if found.gave_up else Status.INFEASIBLE,
                       f"DIVA's coloring {why} without satisfying {names}.")
        if not fallback:
            return _blank_release(instance, failure[0], failure[1], prov(search=search_info))
        if deadline is None:
            deadline = time.perf_counter() + FALLBACK_TIME
    hint = None
    if clustering == "exact" and complete_pool_size(d, exact_pool_cap) > exact_pool_cap:
        # A coloring, when one is found quickly, is the solver's starting point.
        found = run_coloring(d, chooser, order, rng, max_candidates, max_tries, deadline, False, lookahead)
        search_info["hint"] = {"found": found.found, "tries": found.tries}
        hint = found.clusters if found.found else None
    choice = _exact_choice(d, rng, seed, deadline, num_workers, exact_pool_cap, pool_candidates, hint)
    search_info["exact"] = choice["info"]
    if "failure" in choice:
        return _blank_release(instance, *choice["failure"], prov(search=search_info))
    outcome = _finish(d, requirements, choice["clusters"], choice["starred"], choice["status"], choice["bound"],
                      anonymize, kmember_max_rows, rng, seed, deadline, num_workers)
    if not isinstance(outcome, Release) and hint is not None:
        # The exact choice leaves records that fit nowhere; the coloring that was its
        # starting point does not (the search checks that).
        search_info["exact"]["finish"] = outcome[1]
        outcome = _finish(d, requirements, hint, {}, Status.FEASIBLE, None, anonymize, kmember_max_rows, rng,
                          seed, deadline, num_workers)
    if not isinstance(outcome, Release):
        return _blank_release(instance, outcome[0], outcome[1], prov(search=search_info))
    return outcome.with_provenance(**prov(search=search_info, **outcome.provenance))


def diva_exact(instance: Instance, requirements, *, seed=None, time_limit: float | None = None, **options) -> Release:
    """DIVA with the exact diverse clustering (method ``"diva-exact"``).

    Runs :func:`diva` with ``clustering="exact"``: the coloring is replaced by
    :func:`~fairanon.solver.diva_model.solve_diva`, which returns the clustering with the
    fewest suppressed cells among the candidates or proves that none satisfies the
    constraints (naming a minimal conflicting set). On small tables the candidates are
    every class of k to 2k - 1 records, so the answer is the optimal (k, Σ)-anonymization
    by suppression (status OPTIMAL) or a proof that none exists. Options are those of
    :func:`diva`.

    Examples
    --------
    >>> from fairanon.models.diversity import diva_sigma
    >>> inst = fa.load("diva_table1")
    >>> reqs = [fa.KAnonymity(2), *diva_sigma()]
    >>> rel = diva_exact(inst, reqs, seed=0)
    >>> rel.status, rel.objective, fa.verify(inst, rel, reqs).passed
    (<Status.OPTIMAL: 'OPTIMAL'>, 22, True)
    """
    release = diva(instance, requirements, seed=seed, time_limit=time_limit, clustering="exact", **options)
    return release.with_provenance(method="diva-exact")


def _exact_choice(d: Problem, rng, seed, deadline, num_workers, exact_pool_cap: int, pool_candidates: int,
                  hint: list[np.ndarray] | None = None) -> dict:
    """The diverse clustering chosen by CP-SAT: clusters, voluntary stars, status and
    bound, or a failure (status, reason naming the conflicting constraints). `hint`
    (clusters of a coloring) joins the pool and is the solver's first solution."""
    pool = complete_pool(d, exact_pool_cap)
    complete = pool is not None
    hinted = None
    if pool is None:
        pool = candidate_pool(d, rng, pool_candidates)
        if hint:
            index = {tuple(sorted(c.tolist())): i for i, c in enumerate(pool)}
            hinted = []
            for c in hint:
                key = tuple(sorted(c.tolist()))
                if key not in index:
                    index[key] = len(pool)
                    pool.append(np.array(key, dtype=np.int64))
                hinted.append(index[key])
    data = _pool_data(d, pool, cover_all=complete)
    remaining = None if deadline is None else max(0.01, deadline - time.perf_counter())
    solution = solve_diva(data, time_limit=remaining, seed=seed, num_workers=num_workers, hint=hinted)
    info = {"pool_clusters": len(pool), "complete": complete, "status": str(solution.status), **solution.stats}
    if not solution.chosen and solution.status in (Status.INFEASIBLE, Status.UNKNOWN):
        if solution.status == Status.UNKNOWN:
            return {"info": info, "failure": (
                Status.UNKNOWN, "The time ran out before the exact diverse clustering found a solution.")}
        conflict = solution.conflict
        scope = ("No k-anonymous release by suppression satisfies" if complete else
                 "No choice among the candidate clusters satisfies")
        if conflict is None:
            names = "the constraints (the explanation ran out of time)"
        elif not conflict:
            names = "k-anonymity alone"
        else:
            names = " together with ".join(conflict)
        minimal = " (a minimal conflicting set)" if solution.minimal and conflict else ""
        return {"info": info, "failure": (Status.INFEASIBLE, f"{scope} {names}{minimal}.")}
    starred: dict[str, np.ndarray] = {}
    for c, a in solution.starred:
        starred.setdefault(a, np.zeros(d.n, dtype=bool))[pool[c]] = True
    return {
        "info": info,
        "clusters": [pool[c] for c in solution.chosen],
        "starred": starred,
        "status": Status.OPTIMAL if complete and solution.status == Status.OPTIMAL else Status.FEASIBLE,
        "bound": solution.bound if complete else None,
    }


def _pool_data(d: Problem, clusters: list[np.ndarray], cover_all: bool) -> ClusterPool:
    """The exact model's data for the candidate clusters `clusters`: per cluster its
    stars and the target records it makes count, per constraint its bounds."""
    flat, starts, sizes = d.flatten(clusters)
    stars = d.stars(flat, starts, sizes)
    contrib = d.contributions(flat, starts)
    counts = [{int(i): int(contrib[c, i]) for i in np.flatnonzero(contrib[c])} for c in range(len(clusters))]
    return ClusterPool(
        n_rows=d.n,
        clusters=clusters,
        stars=[int(s) for s in stars],
        counts=counts,
        attributes=[e.attributes for e in d.encoded],
        lower=[int(x) for x in d.lower],
        upper=[int(x) for x in d.upper],
        labels=[d.label(i) for i in range(len(d.encoded))],
        cover_all=cover_all,
    )


def _finish(d: Problem, requirements, chosen, starred, status, bound, anonymize, kmember_max_rows, rng, seed,
            deadline, num_workers):
    """Suppress, Anonymize and Integrate (Alg. 1, lines 3-6): a Release, or (status,
    reason) when the rest cannot be completed."""
    suppressed = release_by_suppression(d, chosen, starred, status, bound, anonymize, kmember_max_rows, rng,
                                        deadline)
    if not isinstance(suppressed, Release):
        return suppressed
    remaining = None if deadline is None else max(0.01, deadline - time.perf_counter())
    release = integrate(d.instance, suppressed, requirements, seed=seed, time_limit=remaining, num_workers=1)
    if release.status in (Status.INFEASIBLE, Status.UNKNOWN):
        return release.status, release.reason
    integrated = release.provenance.get("integrate")
    if integrated is not None and status == Status.OPTIMAL:
        status = Status.FEASIBLE
    stars = int((release.table[list(d.gen)].astype(str).to_numpy() == "*").sum()) if d.gen else 0
    info = {**suppressed.provenance, "integrate": integrated, "objective": "suppressed cells"}
    return Release(table=release.table, groups=suppressed.groups, status=status, objective=stars, bound=bound,
                   provenance=info)


def _blank_release(instance: Instance, status: Status, reason: str, prov: dict) -> Release:
    """The release of a failed run: every generalizable cell suppressed, one class per
    protected value (a release that is never handed out as a table)."""
    groups = np.zeros(instance.n_rows, dtype=np.int64)
    for g, (_, rows) in enumerate(protected_classes(instance)):
        groups[rows] = g
    table = generalize_partition(instance, groups, suppress=tuple(instance.schema.generalizable))
    return Release(table=table, groups=groups, status=status, reason=reason, provenance=prov)
