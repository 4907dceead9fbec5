"""DIVA (Milani, Huang, Chiang, EDBT 2021) as the methods ``"diva"`` and ``"diva-exact"``.

Algorithm 1 of the paper, in four steps, put together from heuristics and exact models:

1. **DiverseClustering** (Alg. 3-4): the constraint graph is colored by backtracking
   (:mod:`fairanon.heuristics.diva.coloring`), each color a candidate clustering of a
   constraint's target records (:mod:`fairanon.heuristics.diva.clusterings`). With
   ``clustering="exact"`` the choice among a pool of candidate clusters
   (:mod:`fairanon.heuristics.diva.pool`) is made by CP-SAT instead
   (:func:`fairanon.solver.diva_model.solve_diva`).
2. **Suppress** (Alg. 2) and 3. **Anonymize**: the rest is clustered by k-member (or
   sorted blocks, or Mondrian), left-over records join a cluster, and every cluster
   releases the values its records share and ``*`` elsewhere
   (:mod:`fairanon.heuristics.diva.rest`).
4. **Integrate**: upper bounds that the anonymized rest exceeds are restored by starring
   whole classes, fewest cells first (:func:`fairanon.solver.diva_model.integrate`).

When the coloring fails or gives up, the run does not: the records are read as types
and visible signatures (:mod:`fairanon.heuristics.diva.signatures`), a greedy solution
or the exact existence model (:func:`fairanon.solver.diva_signatures.solve_signatures`)
gives a release, or the proof that none exists with a minimal conflicting set, k
included; only when the time runs out first is the best release found returned,
UNKNOWN, with what it misses (:func:`diva`, Notes).

The paper leaves Clusterings, IsConsistent and Integrate unspecified; this follows the
reconstruction of docs/papers.md, DV-1 to DV-6 (see :func:`diva`, Notes).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
import pandas as pd

from .._memory import Limit, check_memory, current_limit
from .._validation import check_int, check_option, check_random_state
from ..heuristics.diva.coloring import VALUE_ORDERS, DiverseClustering, run_coloring
from ..heuristics.diva.graph import resolve_next_node
from ..heuristics.diva.pool import candidate_pool, complete_pool, complete_pool_size
from ..heuristics.diva.precheck import check_bool, k_of, precheck
from ..heuristics.diva.problem import Problem
from ..heuristics.diva.rest import ANONYMIZERS, cluster_parts, release_by_suppression
from ..heuristics.diva.signatures import Signatures, descend, signature_parts
from ..heuristics.kmember import protected_classes
from ..instances.hierarchy import SUPPRESSED
from ..instances.instance import Instance
from ..models.diversity import encode_constraints
from ..models.requirements import KAnonymity, validate_requirements
from ..release import Release, Status, generalize_partition, provenance
from ..solver._cpsat import check_num_workers, check_time_limit
from ..solver.diva_model import ClusterPool, integrate, solve_diva, visible_in_table
from ..solver.diva_signatures import SignatureModel, SignatureSolution, solve_signatures

__all__ = [
    "CLUSTERINGS",
    "FALLBACK_TIME",
    "FINISH_SECONDS",
    "FINISH_SECONDS_PER_ROW",
    "diva",
    "diva_exact",
    "time_margin",
]

#: How the diverse clustering is chosen: DIVA's backtracking coloring, or CP-SAT.
CLUSTERINGS = ("coloring", "exact")
#: Seconds a CP-SAT stage (the exact choice, the existence model) may take when no time
#: limit is given.
FALLBACK_TIME = 120.0
#: Seconds kept, under a time limit, for building the release after the search ends
#: (clustering the rest, Suppress, Integrate), plus this many per record. A run ends
#: within its limit plus what these steps take beyond their share; measured in
#: benchmarks/diva.py.
FINISH_SECONDS = 0.2
FINISH_SECONDS_PER_ROW = 4e-6
FINISH_FACTOR = 3.0
#: Shares of the search time (before the reserve) for the coloring, for the coloring
#: that starts the exact choice and for the exact choice; the repair takes what is left.
COLORING_SHARE = 0.5
HINT_SHARE = 0.3
EXACT_SHARE = 0.6
#: Share of the search time for deciding, before the search, whether a release exists
#: when the greedy signatures do not show one.
EXISTENCE_SHARE = 0.25
#: The exact existence model is built when the signatures have at most this many options
#: and, under a time limit, when building them (this many seconds each) takes at most
#: half the time of its stage.
SIGNATURE_OPTIONS_CAP = 200_000
SIGNATURE_SECONDS_PER_OPTION = 4e-5
#: Bytes an option of the existence model takes, built and solved (measured on
#: synthetic models of 50,000 and 150,000 options with 1 and 8 workers: 1.5-1.6 kB,
#: peak resident memory), with the signatures' own lists of it.
SIGNATURE_OPTION_BYTES = 2000
#: Seconds to build the exact choice's model, per (cluster, record) of its pool: under a
#: time limit the model is not built when that would take the time its solve has.
POOL_SECONDS_PER_ENTRY = 5e-6

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
    memory_limit=None,
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
        Seconds for the whole run: the coloring (or the exact choice) takes a share of
        it, the repair the rest, and some is kept to build the release; no step of
        building a release (clustering, Suppress and Anonymize) starts once the limit
        has passed, so the run ends within the limit plus the step under way (at most
        :func:`time_margin`: Suppress builds its table after clustering the rest when
        that ends within it). UCI Adult under three race constraints, k = 5 and 10
        (``fa.anonymize``, 2 shared cores at a load of 1-2, 24 runs a limit, twice): at
        limits of 0.02, 0.03, 0.04 and 0.05 s FEASIBLE in 13-23, 14-24, 21-24 and 23-24
        of 24 runs, after at most 0.060 s CPU; when Suppress stopped once the clustering
        of the rest ended past the limit, in 0, 0, 0-22 and 23-24 (at most 0.057 s CPU).
        Without a limit the coloring stops after
        `max_tries` candidates and each CP-SAT stage after :data:`FALLBACK_TIME`.
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
        When the coloring fails or gives up, repair (Notes); False reports the
        coloring's failure, UNKNOWN (a capped search proves nothing), with every
        generalizable cell ``*`` as the release: FEASIBLE instead when that meets every
        requirement (its counts are checked; no search), the failure then in
        ``provenance["repaired"]``.
    anonymize : {"auto", "kmember", "mondrian", "blocks"}, default="auto"
        Anonymizer of the records outside the diverse clustering; "auto" uses k-member
        (quadratic) up to `kmember_max_rows` records when it fits the time left, and
        sorted blocks beyond (:data:`~fairanon.heuristics.diva.rest.ANONYMIZERS`).
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
    memory_limit : None, int, float or str, optional
        Memory the exact choice's pool and model, and the exact existence model over
        signatures, may take: bytes (``"2GB"``), a share of the available memory (0.5)
        or ``"none"``; default: that of :func:`fairanon.anonymize`, else half the
        available memory. A pool that would need more
        (:func:`~fairanon.heuristics.diva.pool.pool_memory`) is refused with
        MemoryLimitError naming `exact_pool_cap` or `pool_candidates`; an existence
        model of more options than the limit holds (:data:`SIGNATURE_OPTION_BYTES`
        each), naming `fallback`.

    Returns
    -------
    Release
        Status FEASIBLE (coloring, repair, or exact choice over capped candidates),
        OPTIMAL (exact choice over every cluster, proven optimal), INFEASIBLE with a
        reason naming every member of a conflicting set (k-anonymity included when it
        takes part) when no release exists, or UNKNOWN only when the time ran out first
        (or the existence model had more options than :data:`SIGNATURE_OPTIONS_CAP`):
        then the best release found, whose ``reason`` lists the constraints it misses,
        or, when the limit passed before any release was built, every generalizable
        cell ``*`` (its records listed in ``suppressed``) with the ``reason`` saying
        before which step and which constraints it misses -- FEASIBLE when it misses
        none (``provenance["repaired"]`` then says so). With ``fallback=False`` a
        coloring that fails or is not finished gives that release too (FEASIBLE when it
        meets every requirement, the coloring's failure in ``provenance["repaired"]``),
        not a repair.
        Objective: the number of suppressed cells. ``provenance["diversity_counts"]``
        gives, per constraint, the count the release shows, its bounds and whether it
        holds; ``provenance["repaired"]`` says how a failed coloring was completed.

    Raises
    ------
    IncompatibleRequirementError
        For requirements other than KAnonymity and DiversityConstraint.

    Notes
    -----
    Reconstruction (docs/papers.md, DV-1 to DV-6) and departures from [1]_:

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
    - A node out of candidates sends the search back to the latest colored node that
      owns a target or matching record of it, or of a node some of its target records
      could count for or hide from (conflict-directed backjumping): only those choices
      change its candidates, the upper bounds they meet and the lookahead's verdict;
      with no such node, to the previous one. The paper's §3.3 list swaps the
      descriptions of MinChoice and MaxFanOut; the names follow its dedicated paragraphs.
    - Constraints whose target attributes are all released unchanged (protected,
      sensitive, ...) are not nodes: their counts are fixed and checked upfront.
    - A complete coloring is accepted only if the records it leaves out can be released:
      per protected value none or at least k of them, or the few left join chosen
      clusters without breaking any bound (else the search goes on). Integrate may also
      star classes of the diverse clustering, as long as every lower bound holds.
    - The exact choice (``clustering="exact"``) starts from a coloring when one is
      found; if it finds nothing better in time, or the records its clustering leaves
      out cannot be released, the release is built from that coloring.
    - The rest is clustered by k-member, as in the paper, up to `kmember_max_rows`
      records; beyond, by sorted blocks of k..2k-1 records (on Census-Income samples
      they leave about half the stars of Mondrian's classes).
    - Repair, when the coloring gives up or fails. A release by suppression exists iff
      every record can be given a signature (the constraint attributes it shows) such
      that each signature is shown by none or at least k records and every count is in
      its bounds (:mod:`fairanon.heuristics.diva.signatures`). In order: the deepest
      partial coloring, completed by a greedy solution over the records it leaves; the
      greedy solution for the whole table; the exact existence model over record types
      (:func:`~fairanon.solver.diva_signatures.solve_signatures`), which gives a
      solution or proves that none exists and names a minimal conflicting set of the
      constraints and k. The records of each signature are then clustered among
      themselves (sorted blocks, or k-member when small), and Integrate's fallback
      stars what a class shows beyond its signature, so the release keeps the
      signature solution's counts. When the time runs out first, or the existence
      model has more options than :data:`SIGNATURE_OPTIONS_CAP` (without a time limit
      too), the greedy solution is released as the best found, UNKNOWN, with the
      constraints it misses and ``provenance["time_limit_reached"]`` saying whether the
      time limit was the cause (every generalizable cell ``*`` when Integrate cannot
      complete it, its reason quoted). When the
      greedy solution misses a bound, the existence model runs before the coloring
      (:data:`EXISTENCE_SHARE` of the time), so that a proof that no release exists
      ends the run at once.
    - Time: the checks, the signatures and building the release are linear or
      n log n passes; the coloring takes :data:`COLORING_SHARE` of the time left
      before the reserve (:data:`FINISH_SECONDS`, plus :data:`FINISH_FACTOR` times the
      measured first passes), the exact choice :data:`EXACT_SHARE`, the existence model
      the rest; every search checks its deadline between candidates, and no step of
      building a release starts past the limit (:meth:`_Run.out_of_time`).

    Cost: building a candidate costs O(|I| log |I| d) for |I| target records and d
    quasi-identifiers; the coloring evaluates at most `max_tries` candidates; the rest
    costs O(n² d) with k-member, O(n d log n) with sorted blocks or Mondrian; the
    signatures O(n |Σ|) plus the greedy over types (at most n, usually hundreds).

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
    check_bool(trace, "trace")
    if num_workers is not None:
        num_workers = check_num_workers(num_workers, "diva")
    max_candidates = check_int(max_candidates, "max_candidates", "diva", low=1)
    max_tries = check_int(max_tries, "max_tries", "diva", low=1)
    kmember_max_rows = check_int(kmember_max_rows, "kmember_max_rows", "diva", low=0)
    exact_pool_cap = check_int(exact_pool_cap, "exact_pool_cap", "diva", low=0)
    pool_candidates = check_int(pool_candidates, "pool_candidates", "diva", low=1)
    time_limit = check_time_limit(time_limit, "diva")
    memory_limit = current_limit(memory_limit, "diva")
    rng = check_random_state(seed)
    all_encoded = encode_constraints(instance, requirements)
    encoded = [e for e in all_encoded if not e.fixed]
    chooser, node_name = resolve_next_node(next_node, len(encoded))
    order = value_order or ("random" if next_node == "basic" else "cost")
    check_option(order, "value_order", "diva", VALUE_ORDERS)
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
    run = _Run(d, requirements, _Clock(started, time_limit, d.n), anonymize, kmember_max_rows, rng, seed,
               num_workers, memory_limit)
    info: dict = {"seconds": {"precheck": time.perf_counter() - started}}
    stopped = run.out_of_time("the record types were found")
    if stopped is not None:
        # Past the limit after the problem's arrays (0.004-0.01 s on UCI Adult): the
        # types and their signatures (0.01 s more) would give no release in time.
        why = stopped[1]
        head = f"{why[:1].upper()}{why[1:]} (not a proof that no release exists)"
        blank = _blank_or_feasible(d, head, why, True)
        return blank.with_provenance(**prov(search=info, **blank.provenance))
    stage = time.perf_counter()
    sigs = Signatures(d)
    greedy = descend(sigs)
    info["signatures"] = {"types": sigs.n_types, "greedy_holds": not _misses(sigs, greedy)}
    info["seconds"]["signatures"] = time.perf_counter() - stage
    run.clock.calibrate(time.perf_counter() - started)
    existence = None
    if fallback and _misses(sigs, greedy):
        # Whether any release exists is settled first when the greedy cannot show it:
        # a proof of infeasibility ends the run at once.
        stage = time.perf_counter()
        existence = _solve_signatures(run, sigs, greedy, EXISTENCE_SHARE)
        info["existence"] = existence.stats | {"status": str(existence.status)}
        info["seconds"]["existence"] = time.perf_counter() - stage
        if existence.status == Status.INFEASIBLE:
            return _blank_release(instance, Status.INFEASIBLE, _conflict_text(existence), prov(search=info))
    partial: list[np.ndarray] = []
    if clustering == "coloring":
        stage = time.perf_counter()
        started_coloring = run.clock.searching()
        if started_coloring:
            found = run_coloring(d, chooser, order, rng, max_candidates, max_tries,
                                 run.clock.share(COLORING_SHARE), trace, lookahead)
        else:
            # No search time left: building the constraint graph alone took 0.015-0.02 s
            # on UCI Adult past a deadline already gone.
            found = DiverseClustering(clusters=[], found=False, gave_up=True, order=[], trace=[], tries=0,
                                      partial=[], partial_nodes=[])
        info["seconds"]["coloring"] = time.perf_counter() - stage
        info["coloring"] = {"found": found.found, "gave_up": found.gave_up, "tries": found.tries,
                            "order": found.order}
        if trace:
            info["coloring"]["trace"] = found.trace
        if found.found:
            outcome = run.finish(found.clusters, {}, Status.FEASIBLE, None)
            if isinstance(outcome, Release):
                return outcome.with_provenance(**prov(search=info, **outcome.provenance))
            info["coloring"]["finish"] = outcome[1]
            partial = found.clusters
        else:
            partial = found.partial
            info["coloring"]["partial_nodes"] = found.partial_nodes
        if not fallback:
            if found.found:
                why = f"DIVA's coloring could not be completed: {info['coloring']['finish'].rstrip('.')}"
            elif not started_coloring:
                # It did not give up: it was not started (nothing to color is no failure).
                why = (f"the method's time limit ({run.clock.time_limit} s) ran out before the coloring"
                       if run.timed_out() else
                       f"no search time of the method's time limit ({run.clock.time_limit} s) was left for "
                       "the coloring, the rest being kept to build a release")
            else:
                gave_up = "gave up (budget or time limit)" if found.gave_up else "exhausted its candidate clusterings"
                names = ", ".join(d.label(i) for i in range(len(encoded))) or f"{k}-anonymity"
                why = f"DIVA's coloring {gave_up} without satisfying {names}"
            # Past the time limit the repair would have had no time either: no advice.
            advice = "" if run.timed_out() else "; fallback=True repairs or decides"
            # The coloring gave up on its deadline (not after max_tries), or was not
            # started, or its release was not built in time.
            timed = run.clock.deadline is not None and (
                not started_coloring or (found.gave_up and found.tries <= max_tries) or run.timed_out())
            # Every generalizable cell * is no repair: it is FEASIBLE when its counts show
            # that it meets every requirement, as when the repair is on.
            head = f"{why[:1].upper()}{why[1:]} (not a proof that no release exists{advice})"
            blank = _blank_or_feasible(d, head, why, timed)
            return blank.with_provenance(**prov(search=info, **blank.provenance))
    else:
        hint = None
        if complete_pool_size(d, exact_pool_cap) > exact_pool_cap:
            # A coloring, when one is found quickly, is the solver's starting point.
            found = run_coloring(d, chooser, order, rng, max_candidates, max_tries,
                                 run.clock.share(HINT_SHARE), False, lookahead)
            info["hint"] = {"found": found.found, "tries": found.tries}
            hint = found.clusters if found.found else None
            partial = found.clusters if found.found else found.partial
        stage = time.perf_counter()
        choice = _exact_choice(d, rng, seed, run.clock, num_workers, exact_pool_cap, pool_candidates, hint,
                               memory_limit)
        info["exact"] = choice["info"]
        info["seconds"]["exact"] = time.perf_counter() - stage
        if "clusters" in choice:
            outcome = run.finish(choice["clusters"], choice["starred"], choice["status"], choice["bound"])
            if isinstance(outcome, Release):
                return outcome.with_provenance(**prov(search=info, **outcome.provenance))
            info["exact"]["finish"] = outcome[1]
        if hint is not None:
            # The coloring that started the solver is a release of its own.
            outcome = run.finish(hint, {}, Status.FEASIBLE, None)
            if isinstance(outcome, Release):
                return outcome.with_provenance(**prov(search=info, **outcome.provenance))
    stage = time.perf_counter()
    release = _repair(run, sigs, greedy, partial, info, existence)
    info["seconds"]["repair"] = time.perf_counter() - stage
    return release.with_provenance(**prov(search=info, **release.provenance))


def time_margin(n_rows: int) -> float:
    """Seconds a run of :func:`diva` may end after its time limit: 1 s plus 10 µs per
    record.

    Every searching stage stops at its share of the limit, and no step of building a
    release (clustering, Suppress and Anonymize) starts past the limit, but a step
    started before it runs to its end (Suppress's clustering of the rest stops at the
    limit, and the table and Integrate after it are built when the time kept for
    building a release, :data:`FINISH_SECONDS` and more, ends within this margin;
    Integrate runs to its end), and the time kept for them is an estimate. The margin
    covers the overruns measured on Census-Income and synthetic tables of 50,000 to
    300,000 records on 2 busy cores (``benchmarks/diva.py``: at most about 0.6 s, before
    the steps read the limit).
    """
    return 1.0 + 1e-5 * n_rows


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


def _exact_choice(d: Problem, rng, seed, clock: _Clock, num_workers, exact_pool_cap: int, pool_candidates: int,
                  hint: list[np.ndarray] | None = None, memory_limit=None) -> dict:
    """The diverse clustering chosen by CP-SAT among a pool of candidate clusters:
    clusters, voluntary stars, status and bound, or only ``info`` when the pool holds
    no solution (or none was found in time; the repair then decides). `hint` (clusters
    of a coloring) joins the pool and is the solver's first solution."""
    pool = complete_pool(d, exact_pool_cap, memory_limit)
    complete = pool is not None
    hinted = None
    if pool is None:
        pool = candidate_pool(d, rng, pool_candidates, clock.share(EXACT_SHARE), memory_limit)
        if hint:
            index = {tuple(sorted(c.tolist())): i for i, c in enumerate(pool)}
            hinted = []
            for c in hint:
                key = tuple(sorted(c.tolist()))
                if key not in index:
                    index[key] = len(pool)
                    pool.append(np.array(key, dtype=np.int64))
                hinted.append(index[key])
    entries = sum(len(c) for c in pool)
    end = clock.share(EXACT_SHARE)
    if end is not None and POOL_SECONDS_PER_ENTRY * entries > end - time.perf_counter():
        return {"info": {"pool_clusters": len(pool), "complete": complete, "status": "skipped: no time to build"}}
    data = _pool_data(d, pool, cover_all=complete)
    solution = solve_diva(data, time_limit=clock.solver_seconds(EXACT_SHARE), seed=seed, num_workers=num_workers,
                          hint=hinted, explain=False)
    info = {"pool_clusters": len(pool), "complete": complete, "status": str(solution.status), **solution.stats}
    if not solution.chosen:
        return {"info": info}
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


class _Clock:
    """The time limit shared out between the stages.

    ``reserve`` seconds before the deadline are kept for building the release once the
    search has ended: :data:`FINISH_SECONDS`, plus :data:`FINISH_SECONDS_PER_ROW` per
    record or, once :meth:`calibrate` has seen how long the first linear passes over the
    table took on this machine now, :data:`FINISH_FACTOR` times that (at most half the
    limit). A searching stage may use a share of what is left before the reserve.
    """

    def __init__(self, started: float, time_limit: float | None, n_rows: int):
        self.time_limit = time_limit
        self.deadline = None if time_limit is None else started + time_limit
        self.reserve = 0.0
        self.finish_seconds = 0.0
        self.calibrate(FINISH_SECONDS_PER_ROW * n_rows)

    def calibrate(self, linear_seconds: float) -> None:
        """Size the reserve from the measured time of the linear passes so far;
        ``finish_seconds`` is the estimate before the cap at half the limit."""
        if self.time_limit is not None:
            self.finish_seconds = FINISH_SECONDS + max(FINISH_FACTOR * linear_seconds,
                                                       self.finish_seconds - FINISH_SECONDS)
            self.reserve = min(self.time_limit / 2, self.finish_seconds)

    def searching(self) -> bool:
        """Whether search time is left before the reserve."""
        return self.deadline is None or time.perf_counter() < self.deadline - self.reserve

    def share(self, fraction: float) -> float | None:
        """The deadline of a stage that may use `fraction` of the search time left."""
        if self.deadline is None:
            return None
        now = time.perf_counter()
        return now + fraction * max(0.0, self.deadline - self.reserve - now)

    def solver_seconds(self, fraction: float) -> float:
        """Seconds for a CP-SAT stage (:data:`FALLBACK_TIME` without a time limit)."""
        end = self.share(fraction)
        return FALLBACK_TIME if end is None else max(0.01, end - time.perf_counter())


class _Run:
    """What every way of building the release shares: the problem, the clock and the
    options of the rest."""

    def __init__(self, d: Problem, requirements, clock: _Clock, anonymize: str, kmember_max_rows: int, rng, seed,
                 num_workers, memory_limit: Limit | None = None):
        self.d, self.requirements, self.clock = d, requirements, clock
        self.anonymize, self.kmember_max_rows = anonymize, kmember_max_rows
        self.rng, self.seed, self.num_workers = rng, seed, num_workers
        self.memory_limit = memory_limit

    def out_of_time(self, step: str) -> tuple[Status, str] | None:
        """(UNKNOWN, reason) once the deadline has passed, before `step` (the reason
        quotes diva's own limit: :func:`fairanon.anonymize` gives it less than its own,
        the first call's import deducted): the release
        is not built past the time limit (:data:`FINISH_SECONDS` is an estimate; on UCI
        Adult the steps took 0.05-0.09 s whatever the limit, and in lns's share of
        0.017 s DIVA ran 0.09 s past it, lns 0.014-0.038 s past its own 0.1 s)."""
        if self.timed_out():
            return Status.UNKNOWN, f"the method's time limit ({self.clock.time_limit} s) ran out before {step}"
        return None

    def timed_out(self) -> bool:
        """Whether the time limit has passed."""
        return self.clock.deadline is not None and time.perf_counter() >= self.clock.deadline

    def finish(self, chosen, starred, status, bound, planned=None):
        """Suppress, Anonymize and Integrate (Alg. 1, lines 3-6): a Release, or (status,
        reason) when the rest cannot be completed, the deadline has passed before
        Suppress (:meth:`out_of_time`) or the clustering of the rest ended too late for
        the rest of the step to end within :func:`time_margin`."""
        d = self.d
        stopped = self.out_of_time("Suppress and Anonymize")
        if stopped is not None:
            return stopped
        started = time.perf_counter()
        # The clustering of the rest stops at the deadline; the table, the fallback pairs
        # (0.015-0.02 s on UCI Adult) and Integrate (a few ms) are built after it when the
        # time kept for building a release, from there, ends within the margin: on Adult
        # at 0.05 s that clustering often ended past the limit, and stopping there left
        # UNKNOWN what was FEASIBLE 0.01-0.02 s later.
        finish_by = None
        if self.clock.deadline is not None:
            finish_by = self.clock.deadline + time_margin(d.n) - self.clock.finish_seconds
        built = release_by_suppression(d, chosen, starred, Status.FEASIBLE, bound, self.anonymize,
                                       self.kmember_max_rows, self.rng, self.clock.deadline, planned,
                                       finish_by)
        if built[0] == Status.UNKNOWN:  # the deadline passed during the step
            limit = self.clock.time_limit
            return Status.UNKNOWN, f"the method's time limit ({limit} s) ran out during {built[1]}"
        if not isinstance(built[0], Release):
            return built
        suppressed, unplanned = built
        seconds = {"suppress": time.perf_counter() - started}
        remaining = None if self.clock.deadline is None else max(0.01, self.clock.deadline - time.perf_counter())
        release = integrate(d.instance, suppressed, self.requirements, seed=self.seed, time_limit=remaining,
                            num_workers=1, fallback=unplanned)
        seconds["integrate"] = time.perf_counter() - started - seconds["suppress"]
        if release.status in (Status.INFEASIBLE, Status.UNKNOWN):
            return release.status, release.reason
        integrated = release.provenance.get("integrate")
        if integrated is not None and status == Status.OPTIMAL:
            status = Status.FEASIBLE
        stars = _stars(release.table, d.gen)
        info = {**suppressed.provenance, "integrate": integrated, "objective": "suppressed cells",
                "diversity_counts": _counts_table(d, release.table), "finish_seconds": seconds}
        return Release(table=release.table, groups=suppressed.groups, status=status, objective=stars, bound=bound,
                       provenance=info)

    def finish_signatures(self, sg: Signatures, y: dict, fixed: list[np.ndarray], status: Status):
        """The release of a signature solution: the records of each signature are
        clustered among themselves (k-member or Mondrian), the fixed clusters kept, the
        empty signature is the rest; Integrate's fallback stars what a class shows
        beyond its signature."""
        d = self.d
        stopped = self.out_of_time("the signatures' records were clustered")
        if stopped is not None:
            return stopped
        shown, _, attrs = signature_parts(sg, y)
        clusters, _ = cluster_parts(d, shown, self.anonymize, self.kmember_max_rows, self.rng, self.clock.deadline)
        part_of = np.full(d.n, -1, dtype=np.int64)
        for i, part in enumerate(shown):
            part_of[part] = i
        planned = [None] * len(fixed) + [attrs[part_of[c[0]]] for c in clusters]
        return self.finish(list(fixed) + clusters, {}, status, None, planned)


def _misses(sg: Signatures, y: dict) -> dict:
    """What a signature solution fails: constraints out of bounds (index -> count,
    lower, upper), and -1 -> (signatures with 1..k-1 records, 0, 0) if there are any."""
    out = sg.violations(y)
    sizes = sg.sig_sizes(y)
    small = int(((sizes > 0) & (sizes < sg.k)).sum())
    if small:
        out[-1] = (small, 0, 0)
    return out


def _repair(run: _Run, sigs: Signatures, greedy: dict, partial: list[np.ndarray], info: dict,
            existence: SignatureSolution | None) -> Release:
    """A release when the coloring (or the exact choice) did not give one.

    In order: the deepest partial coloring completed over the signatures of the records
    it leaves; the greedy signature solution of the whole table; the solution of the
    exact existence model run before the search (`existence`), or the model run now (a
    solution, or a proof that none exists naming a minimal conflicting set, k
    included); and when time runs out, the greedy solution as the best release found,
    UNKNOWN, with what it still misses."""
    d = run.d
    repair = info["repair"] = {}
    if partial and (run.clock.searching() or _misses(sigs, greedy)):
        fixed = Signatures(d, fixed=partial)
        y = descend(fixed)
        repair["partial"] = {"clusters": len(partial), "holds": not _misses(fixed, y)}
        if not _misses(fixed, y):
            outcome = run.finish_signatures(fixed, y, partial, Status.FEASIBLE)
            if isinstance(outcome, Release):
                return outcome.with_provenance(repaired="partial coloring completed over signatures")
            repair["partial"]["finish"] = outcome[1]
    if not _misses(sigs, greedy):
        outcome = run.finish_signatures(sigs, greedy, [], Status.FEASIBLE)
        if isinstance(outcome, Release):
            return outcome.with_provenance(repaired="signatures (greedy)")
        repair["greedy_finish"] = outcome[1]
    if existence is not None and existence.status == Status.FEASIBLE:
        exact = existence
    elif run.clock.searching():
        exact = _solve_signatures(run, sigs, greedy, 1.0)
    else:
        exact = SignatureSolution(status=Status.UNKNOWN, stats={"skipped": "no time left"})
    repair["exact"] = exact.stats | {"status": str(exact.status)}
    if exact.status == Status.FEASIBLE:
        outcome = run.finish_signatures(sigs, exact.y, [], Status.FEASIBLE)
        if isinstance(outcome, Release):
            return outcome.with_provenance(repaired="signatures (exact model)")
        repair["exact_finish"] = outcome[1]
    elif exact.status == Status.INFEASIBLE:
        return _blank_release(d.instance, Status.INFEASIBLE, _conflict_text(exact), {})
    # The exact model decided nothing (the time ran out, or its options exceed the cap):
    # the greedy solution is the best release found.
    undecided, timed = _undecided(run, exact)
    best = run.finish_signatures(sigs, greedy, [], Status.UNKNOWN)
    if not isinstance(best, Release):
        if best[0] == Status.UNKNOWN:  # the time ran out before a step, or in Integrate
            why, timed = f"{best[1]}: no other release was built", run.clock.deadline is not None
        else:  # Integrate's proof that the greedy release cannot be completed
            why = f"the greedy signatures' release could not be completed: {best[1][:1].lower()}{best[1][1:]}"
            why = why.rstrip(".")
        timed = timed or run.timed_out()
        why = "; ".join(part for part in (undecided, why) if part)
        return _blank_or_feasible(d, f"{_undecided_head(timed)} ({why})", why, timed)
    timed = timed or run.timed_out()
    missed = [row for row in best.provenance["diversity_counts"] if not row["holds"]]
    if not missed:  # the classes show more than the signatures planned, and that is enough
        return dataclasses.replace(best, status=Status.FEASIBLE).with_provenance(repaired="signatures (greedy)",
                                                                                  time_limit_reached=timed)
    text = "; ".join(f"{row['constraint']}: {row['count']} visible, bounds [{row['lower']}, {row['upper']}]"
                     for row in missed)
    why = f" ({undecided})" if undecided else ""
    reason = f"{_undecided_head(timed)}{why}; the best release found misses {text}."
    return dataclasses.replace(best, reason=reason).with_provenance(time_limit_reached=timed)


def _undecided(run: _Run, exact: SignatureSolution) -> tuple[str, bool]:
    """Why the exact existence model left the repair undecided ('' when the method's
    time limit did), and whether the method's time limit did: its options exceeded
    :data:`SIGNATURE_OPTIONS_CAP` (with or without a limit), it found nothing in
    :data:`FALLBACK_TIME` (without a limit), or, under a limit, it had no time to be
    built or solved."""
    if exact.stats.get("options") == "over the cap":
        return (f"the exact existence model was not built, the signatures having more than "
                f"SIGNATURE_OPTIONS_CAP ({SIGNATURE_OPTIONS_CAP:,}) options"), False
    if run.clock.deadline is None:
        return f"the exact existence model decided nothing in FALLBACK_TIME ({FALLBACK_TIME} s)", False
    return "", True


def _undecided_head(timed: bool) -> str:
    """The start of the reason of an UNKNOWN repair: the time ran out, or the repair
    found no release satisfying every constraint (which proves nothing)."""
    if timed:
        return "The time ran out before a release satisfying every constraint was found"
    return "No release satisfying every constraint was found, and none was proven not to exist"


def _solve_signatures(run: _Run, sigs: Signatures, greedy: dict, share: float) -> SignatureSolution:
    """The exact existence model over every option of the signatures, in `share` of the
    search time left (UNKNOWN if there are more than :data:`SIGNATURE_OPTIONS_CAP`).

    Raises MemoryLimitError when the memory limit allows fewer options
    (:data:`SIGNATURE_OPTION_BYTES` each) than the cap and the signatures have more:
    the options are counted before any is created."""
    end = run.clock.share(share)
    cap = SIGNATURE_OPTIONS_CAP
    if end is not None:  # building the model may take at most half the stage's time
        cap = min(cap, int(0.5 * (end - time.perf_counter()) / SIGNATURE_SECONDS_PER_OPTION))
    limit = run.memory_limit
    memory_cap = None if limit is None or limit.bytes is None else limit.bytes // SIGNATURE_OPTION_BYTES
    if memory_cap is not None and memory_cap < cap:
        # the memory binds first: the options are counted up to its cap, and more is a refusal
        if not sigs.enumerate_all(memory_cap):
            check_memory(
                (memory_cap + 1) * SIGNATURE_OPTION_BYTES,
                f"DIVA's exact existence model of {run.d.instance.name!r} ({sigs.n_types:,} record types, more "
                f"than {memory_cap:,} options of a type and a signature, one integer variable each)",
                "use fallback=False (DIVA's coloring alone, which may end UNKNOWN) or fewer diversity "
                "constraints",
                limit,
                caller="diva",
                at_least=True,
            )
    elif not sigs.enumerate_all(cap):
        why = "over the cap" if cap == SIGNATURE_OPTIONS_CAP else "no time to build"
        return SignatureSolution(status=Status.UNKNOWN, stats={"options": why})
    data = SignatureModel(
        k=sigs.k,
        type_size=[int(v) for v in sigs.size],
        opt_type=list(sigs.opt_type),
        opt_sig=list(sigs.opt_sig),
        opt_covers=[[int(i) for i in c] for c in sigs.opt_covers],
        base=[int(v) for v in sigs.base],
        lower=[int(v) for v in sigs.lower],
        upper=[int(v) for v in sigs.upper],
        labels=list(sigs.labels),
        k_label=str(KAnonymity(sigs.k)),
    )
    solution = solve_signatures(data, time_limit=run.clock.solver_seconds(share), seed=run.seed,
                                num_workers=run.num_workers, hint=greedy)
    solution.stats["options"] = sigs.n_options
    return solution


def _conflict_text(solution: SignatureSolution) -> str:
    """The reason of a proven INFEASIBLE: every member of the conflicting set, k-anonymity
    included when it takes part."""
    if solution.conflict is None:
        return ("No release by suppression satisfies the requirements (proven; the time ran out before the "
                "conflicting ones were named).")
    members = sorted(solution.conflict, key=lambda label: not label.endswith("-anonymity"))
    minimal = " (a minimal conflicting set)" if solution.minimal else ""
    joined = members[0] if len(members) == 1 else ", ".join(members[:-1]) + " and " + members[-1]
    if any(m.endswith("-anonymity") for m in members):
        return f"No release by suppression satisfies {joined} together{minimal}."
    return f"No release by suppression satisfies {joined} together, whatever k{minimal}."


def _stars(table, columns) -> int:
    """Suppressed cells of `columns` in a released table (categorical columns are
    counted per category)."""
    total = 0
    for name in columns:
        col = table[name]
        if isinstance(col.dtype, pd.CategoricalDtype):
            star = np.append(np.asarray(col.cat.categories.astype(str)) == SUPPRESSED, False)
            total += int(star[col.cat.codes.to_numpy()].sum())
        else:
            total += int((col.astype(str).to_numpy() == SUPPRESSED).sum())
    return total


def _counts_table(d: Problem, table) -> list[dict]:
    """Per diversity constraint: its label, the count the released table shows, its
    bounds and whether it holds."""
    out = []
    for i, e in enumerate(d.encoded):
        count = int(visible_in_table(table, d.instance, e).sum())
        out.append({"constraint": d.label(i), "count": count, "lower": int(e.lower), "upper": int(e.upper),
                    "holds": bool(e.lower <= count <= e.upper)})
    return out


def _blank_release(instance: Instance, status: Status, reason: str, prov: dict) -> Release:
    """The release of a failed run: every generalizable cell suppressed, one class per
    protected value (a release that is never handed out as a table); its records are
    listed as suppressed (``Release.suppressed``, as fulldomain lists its block of
    ``*``)."""
    groups = np.zeros(instance.n_rows, dtype=np.int64)
    for g, (_, rows) in enumerate(protected_classes(instance)):
        groups[rows] = g
    gen = tuple(instance.schema.generalizable)
    table = generalize_partition(instance, groups, suppress=gen)
    suppressed = tuple(instance.row_ids.tolist()) if gen else ()
    return Release(table=table, groups=groups, status=status, reason=reason, suppressed=suppressed,
                   provenance=prov)


def _blank_or_feasible(d: Problem, reason: str, why: str, timed: bool) -> Release:
    """Every generalizable cell ``*`` when no other release was built: FEASIBLE when that
    meets every requirement (``provenance["repaired"]`` giving `why` no other release
    was built), else UNKNOWN, its reason `reason` followed by the constraints it
    misses; either way with its objective (the suppressed cells),
    ``provenance["diversity_counts"]`` and ``provenance["time_limit_reached"]``
    (`timed`: whether the method's time limit kept another release from being built).

    Its classes are the protected values, each of at least k records (:func:`precheck`
    refused the run otherwise), and the constraints on attributes released unchanged
    hold (the same precheck), so it meets every requirement exactly when each other
    constraint's visible count is within its bounds, which is counted on the table as
    the verifier reads it (:func:`_counts_table`), at no more cost than a release's
    counts. UCI Adult, k = 5, race Black in [2,000, 3,000] (race is released
    unchanged) at a limit of 0.005 s: it passes the verifier, and was UNKNOWN saying
    that no release satisfying every constraint was built."""
    blank = _blank_release(d.instance, Status.UNKNOWN, reason, {})
    counts = _counts_table(d, blank.table)
    info = {"objective": "suppressed cells", "diversity_counts": counts, "time_limit_reached": timed}
    stars = _stars(blank.table, d.gen)
    missed = [row for row in counts if not row["holds"]]
    if not missed:
        return dataclasses.replace(blank, status=Status.FEASIBLE, reason=None, objective=stars,
                                   provenance={**info, "repaired": "every generalizable cell *, which meets every "
                                               f"requirement ({why})"})
    text = "; ".join(f"{row['constraint']}: {row['count']} visible, bounds [{row['lower']}, {row['upper']}]"
                     for row in missed)
    return dataclasses.replace(blank, objective=stars, provenance=info,
                               reason=f"{reason}; every generalizable cell * misses {text}.")
