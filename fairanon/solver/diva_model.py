"""CP-SAT models for DIVA (Milani, Huang, Chiang, EDBT 2021): the exact diverse
clustering and the Integrate step.

**Diverse clustering** (:func:`build_diva_model`, :func:`solve_diva`). DIVA's coloring
chooses one candidate clustering per diversity constraint such that the chosen
clusters are pairwise disjoint or equal and no upper bound is exceeded, and prefers
few suppressed cells. The model makes that choice exactly. Its data are a pool of
candidate clusters; the clustering of a constraint sigma is the set of chosen clusters
that make its target records count (every record of the cluster shows sigma's target
values), so every combination of the candidate clusterings DIVA's Clusterings builds is
a choice of pool clusters:

- ``use[c]``: cluster c is released; each record lies in at most one used cluster
  (disjoint or equal), in exactly one when the pool covers the whole table;
- ``vstar[c, A]``: the whole cluster c releases A as ``*`` although its records agree on
  A (voluntary suppression, which only lowers counts; created only for attributes of
  constraints whose upper bound the pool could exceed);
- ``vis[c, sigma]``: c is used and none of sigma's suppressible attributes is starred, so
  c adds its target records to sigma's count;
- lower <= Σ_c count(c, sigma) · vis[c, sigma] <= upper for every sigma, enforced by
  one literal per constraint (and one for "every record is released" when the pool
  covers the table), so that an infeasible model names the constraints that conflict
  through CP-SAT's assumptions;
- objective: the suppressed cells, Σ_c stars(c) · use[c] + Σ |c| · vstar[c, A].

**Integrate** (:func:`integrate`): given a release by suppression whose classes break
some upper bounds, star whole (class, attribute) pairs so that every bound holds, with
the fewest extra cells (docs/papers.md, DV-4).

The methods ``"diva"`` and ``"diva-exact"`` that use them are in
:mod:`fairanon.methods.diva`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from ortools.sat.python import cp_model

from ..instances.hierarchy import SUPPRESSED
from ..instances.instance import Instance
from ..models.diversity import encode_constraints
from ..release import Release, Status
from . import _cpsat

#: Deterministic-time budget of the one-worker re-solve that makes an OPTIMAL clustering
#: independent of thread timing (a deterministic limit, so whether it succeeds is
#: reproducible too).
CANONICAL_BUDGET = 2.0

__all__ = [
    "CANONICAL_BUDGET",
    "ClusterPool",
    "DivaModel",
    "DivaSolution",
    "build_diva_model",
    "integrate",
    "solve_diva",
    "visible_in_table",
]


# ------------------------------------------------------------------ data
@dataclass(frozen=True)
class ClusterPool:
    """The data of the diverse-clustering model.

    Attributes
    ----------
    n_rows : int
    clusters : list of numpy.ndarray
        Candidate clusters (row positions), each protected-pure with at least k rows.
    stars : list of int
        Cells each cluster must suppress (its records disagree there).
    counts : list of dict
        Per cluster, constraint index -> number of its target records it makes count.
    attributes : list of tuple of str
        Per constraint, its suppressible target attributes.
    lower, upper : list of int
        Per constraint.
    labels : list of str
        Per constraint, how reasons name it.
    cover_all : bool
        The pool covers the whole table: every record must be in a used cluster.
    """

    n_rows: int
    clusters: list
    stars: list
    counts: list
    attributes: list
    lower: list
    upper: list
    labels: list
    cover_all: bool = False


@dataclass
class DivaModel:
    """A built model with its variables and its objective expression, the suppressed
    cells (see the module docstring)."""

    model: cp_model.CpModel
    use: list
    vstar: dict
    literals: list
    group_labels: list
    cost: object = None


@dataclass
class DivaSolution:
    """What :func:`solve_diva` found.

    Attributes
    ----------
    status : Status
    chosen : list of int
        Indices of the used clusters (empty unless a solution was found).
    starred : list of (int, str)
        Voluntary stars: (cluster index, attribute).
    objective, bound : int or None
        Suppressed cells of the solution and the proven lower bound.
    conflict : list of str or None
        When INFEASIBLE: the groups of constraints that conflict (labels).
    minimal : bool
        Whether every member of `conflict` was shown necessary.
    stats : dict
    """

    status: Status
    chosen: list = field(default_factory=list)
    starred: list = field(default_factory=list)
    objective: int | None = None
    bound: int | None = None
    conflict: list | None = None
    minimal: bool = False
    stats: dict = field(default_factory=dict)


# ------------------------------------------------------------------ the model
def build_diva_model(pool: ClusterPool, *, objective: bool = True) -> DivaModel:
    """The CP-SAT model of the diverse clustering (module docstring), one enforcement
    literal per constraint and, with ``pool.cover_all``, one for "every record released"."""
    m = cp_model.CpModel()
    n_constraints = len(pool.lower)
    use = [m.new_bool_var(f"use[{c}]") for c in range(len(pool.clusters))]
    literals = [m.new_bool_var(f"enforce[{i}]") for i in range(n_constraints)]
    labels = list(pool.labels)
    # Voluntary stars only where some upper bound could be exceeded by the pool.
    potential = np.zeros(n_constraints, dtype=np.int64)
    for counts in pool.counts:
        for i, w in counts.items():
            potential[i] += w
    binding = {i for i in range(n_constraints) if pool.upper[i] < potential[i]}
    vstar: dict[tuple[int, str], cp_model.IntVar] = {}
    terms: list[list[tuple[int, object]]] = [[] for _ in range(n_constraints)]
    star_cost = []
    for c, counts in enumerate(pool.counts):
        size = len(pool.clusters[c])
        attrs = sorted({a for i in counts if i in binding for a in pool.attributes[i]})
        for a in attrs:
            var = m.new_bool_var(f"vstar[{c},{a}]")
            m.add_implication(var, use[c])
            vstar[c, a] = var
            star_cost.append((size, var))
        for i, w in counts.items():
            hiding = [vstar[c, a] for a in pool.attributes[i] if (c, a) in vstar]
            if not hiding:
                terms[i].append((w, use[c]))
                continue
            vis = m.new_bool_var(f"vis[{c},{i}]")
            m.add_implication(vis, use[c])
            for h in hiding:
                m.add_implication(vis, h.Not())
            # Used and not starred: visible.
            m.add_bool_or([use[c].Not(), vis, *hiding])
            terms[i].append((w, vis))
    # Each record in at most one used cluster (disjoint or equal); in exactly one when
    # the pool covers the table.
    by_row: list[list[int]] = [[] for _ in range(pool.n_rows)]
    for c, rows in enumerate(pool.clusters):
        for r in rows:
            by_row[int(r)].append(c)
    cover = None
    if pool.cover_all:
        cover = m.new_bool_var("enforce[cover]")
        literals.append(cover)
        labels.append("every record released in a class of at least k")
    for r, cs in enumerate(by_row):
        if len(cs) > 1:
            m.add_at_most_one(use[c] for c in cs)
        if cover is not None:
            m.add_bool_or([use[c] for c in cs]).only_enforce_if(cover)
    # The diversity constraints, each guarded by its literal.
    for i in range(n_constraints):
        expr = sum(w * v for w, v in terms[i]) if terms[i] else 0
        m.add(expr >= pool.lower[i]).only_enforce_if(literals[i])
        m.add(expr <= pool.upper[i]).only_enforce_if(literals[i])
    cost = sum(int(s) * u for s, u in zip(pool.stars, use)) + sum(size * v for size, v in star_cost)
    if objective:
        m.minimize(cost)
    return DivaModel(m, use, vstar, literals, labels, cost)


def solve_diva(
    pool: ClusterPool,
    *,
    time_limit: float | None = None,
    seed=None,
    num_workers: int | None = None,
    hint: Sequence[int] | None = None,
    explain: bool = True,
) -> DivaSolution:
    """Solve the diverse-clustering model of `pool`.

    Parameters
    ----------
    pool : ClusterPool
    time_limit : float, optional
        Seconds for the optimization and, when infeasible, the explanation together.
    seed : None, int or numpy.random.Generator
        CP-SAT's random seed derives from it.
    num_workers : int, optional
        Default: every core. With several workers and an OPTIMAL answer, the solution is
        recomputed by one worker with the objective fixed (within a deterministic-time
        budget), so that the same seed gives the same clusters; ``stats["canonical"]``
        says whether that succeeded. The explanation always uses one worker
        (:func:`fairanon.solver._cpsat.explain`).
    hint : sequence of int, optional
        Indices of clusters that form a known solution (e.g. DIVA's coloring): CP-SAT
        starts from it.
    explain : bool, default=True
        When infeasible, name a minimal conflicting set of constraints.

    Returns
    -------
    DivaSolution
    """
    started = time.perf_counter()
    deadline = None if time_limit is None else started + time_limit
    workers = _cpsat.check_num_workers(num_workers, "solve_diva")
    solver_seed = _cpsat.random_seed(seed)
    dm = build_diva_model(pool)
    for lit in dm.literals:
        dm.model.add(lit == 1)
    hint_map = None
    if hint is not None:
        chosen = {int(c) for c in hint}
        hint_map = {u: int(c in chosen) for c, u in enumerate(dm.use)}
        hint_map.update({v: 0 for v in dm.vstar.values()})
    solver, outcome = _cpsat.solve(dm.model, time_limit=_cpsat.remaining(deadline), num_workers=workers,
                                   seed=solver_seed, hint=hint_map)
    out = DivaSolution(status=outcome.status, stats=dict(outcome.stats))
    if outcome.has_solution:
        out.objective = round(outcome.objective)
        out.bound = int(np.ceil(outcome.bound - 1e-6))
        if outcome.status == Status.OPTIMAL and workers > 1:
            # Which of several optimal clusterings the parallel search returns depends
            # on thread timing; one worker with the optimum fixed picks the same one.
            fixed = build_diva_model(pool, objective=False)
            for lit in fixed.literals:
                fixed.model.add(lit == 1)
            fixed.model.add(fixed.cost == out.objective)
            canon, again = _cpsat.solve(fixed.model, num_workers=1, seed=solver_seed,
                                        deterministic_limit=CANONICAL_BUDGET)
            out.stats["canonical"] = again.has_solution
            if again.has_solution:
                solver, dm = canon, fixed
        out.chosen = [c for c, u in enumerate(dm.use) if solver.value(u)]
        out.starred = [key for key, v in dm.vstar.items() if solver.value(v)]
    elif outcome.status == Status.INFEASIBLE and explain:
        def build():
            fresh = build_diva_model(pool, objective=False)
            return fresh.model, fresh.literals

        core, minimal = _cpsat.explain(build, len(dm.literals), deadline=deadline, seed=solver_seed)
        out.conflict = None if core is None else [dm.group_labels[g] for g in core]
        out.minimal = minimal
    out.stats["elapsed_s"] = time.perf_counter() - started
    return out


# ------------------------------------------------------------------ Integrate
def visible_in_table(table: pd.DataFrame, instance: Instance, encoded) -> np.ndarray:
    """Per row of a released table: whether its released cells equal every target value
    of the (encoded) diversity constraint, the verifier's reading. Categorical columns
    are compared once per category."""
    match = np.ones(len(table), dtype=bool)
    for name, value in encoded.requirement.target:
        col = table[name]
        numeric = instance.schema[name].kind == "numeric"

        def equal(values) -> np.ndarray:
            text = pd.Series(values).astype(str)
            if numeric:
                return pd.to_numeric(text, errors="coerce").to_numpy(dtype=float) == float(value)
            return text.to_numpy() == value

        if isinstance(col.dtype, pd.CategoricalDtype):
            hit = np.append(equal(col.cat.categories), False)  # code -1 (missing) never matches
            match &= hit[col.cat.codes.to_numpy()]
        else:
            match &= equal(col.to_numpy())
    return match


def integrate(
    instance: Instance,
    release: Release,
    requirements,
    *,
    seed=None,
    time_limit: float | None = None,
    num_workers: int | None = 1,
    fallback=None,
) -> Release:
    """DIVA's Integrate: restore the upper bounds of the diversity constraints of a
    release by suppression, starring whole (group, attribute) pairs, fewest cells first.

    Parameters
    ----------
    instance : Instance
    release : Release
        A release whose groups (``release.groups``) each hold at least k records and
        release, per quasi-identifier, one value or ``*`` (as DIVA's Suppress does); a
        starred group stays a class of its own, so k-anonymity is kept.
    requirements : sequence of Requirement
        The diversity constraints among them are enforced (others are ignored).
    seed, time_limit, num_workers
        As in :func:`solve_diva`.
    fallback : collection of (group, attribute), optional
        Stars known to restore every bound (e.g. every attribute a class shares beyond
        what the clustering it comes from relies on): those among the candidate pairs
        are the solver's starting point and the answer when CP-SAT finds nothing in
        time, so that a repair is found within any time limit.

    Returns
    -------
    Release
        The same release if no upper bound is exceeded; else a copy with the extra
        stars (``provenance["integrate"]`` says how many cells), or, when no choice of
        whole-group stars keeps every lower bound (only possible if the input already
        relied on those records), an INFEASIBLE copy naming the constraints.

    Notes
    -----
    The model has one Boolean per (group, attribute) pair that can hide a record of a
    violated constraint, and one count constraint (lower and upper) per constraint
    those stars touch; minimized: Σ |group| · y. A greedy solution (largest groups of
    the violated constraints first) is the hint, and the answer if CP-SAT finds
    nothing in time (after `fallback`, which comes first).

    Examples
    --------
    >>> from fairanon.release import generalize_partition
    >>> inst = fa.load("diva_table1")
    >>> groups = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 4])
    >>> rel = fa.Release(generalize_partition(inst, groups, recoding="suppress"), groups)
    >>> cap = [fa.DiversityConstraint({"GEN": "Female"}, 0, 2)]  # Table 3 shows 4 females
    >>> fixed = integrate(inst, rel, cap, seed=0)
    >>> fixed.provenance["integrate"]["extra_stars"], fa.verify(inst, fixed, cap).passed
    (2, True)
    """
    started = time.perf_counter()
    encoded = [e for e in encode_constraints(instance, requirements) if not e.fixed]
    table = release.table
    groups = np.unique(np.asarray(release.groups), return_inverse=True)[1].reshape(-1)
    n_groups = int(groups.max()) + 1 if len(groups) else 0
    visible = [visible_in_table(table, instance, e) for e in encoded]
    counts = [int(v.sum()) for v in visible]
    violated = [i for i, e in enumerate(encoded) if counts[i] > e.upper]
    if not violated:
        return release
    per_group = [np.bincount(groups, weights=v, minlength=n_groups).astype(np.int64) for v in visible]
    sizes = np.bincount(groups, minlength=n_groups)
    # Candidate stars: (group, attribute) pairs hiding records of a violated constraint.
    candidates = sorted({(g, a) for i in violated for g in np.flatnonzero(per_group[i]) for a in encoded[i].attributes})
    touched = sorted({i for i, e in enumerate(encoded) for g, a in candidates if a in e.attributes and per_group[i][g]})

    # Greedy: hide the largest groups of each violated constraint while lower bounds allow.
    greedy: set | None = set()
    hidden = [set() for _ in encoded]
    lost = [0] * len(encoded)
    for i in violated:
        attr = encoded[i].attributes[0]
        order = sorted(np.flatnonzero(per_group[i]), key=lambda g: (-int(per_group[i][g]), g))
        for g in order:
            if counts[i] - lost[i] <= encoded[i].upper:
                break
            g = int(g)
            newly = [j for j, e in enumerate(encoded) if attr in e.attributes and per_group[j][g] and g not in hidden[j]]
            if all(counts[j] - lost[j] - int(per_group[j][g]) >= encoded[j].lower for j in newly):
                greedy.add((g, attr))
                for j in newly:
                    hidden[j].add(g)
                    lost[j] += int(per_group[j][g])
        if counts[i] - lost[i] > encoded[i].upper:
            greedy = None
            break

    m = cp_model.CpModel()
    y = {(g, a): m.new_bool_var(f"star[{g},{a}]") for g, a in candidates}
    for i in touched:
        hides = []
        for g in np.flatnonzero(per_group[i]):
            lits = [y[g, a] for a in encoded[i].attributes if (g, a) in y]
            if not lits:
                continue
            h = m.new_bool_var(f"hide[{g},{i}]")
            m.add_max_equality(h, lits)
            hides.append((int(per_group[i][g]), h))
        expr = sum(w * h for w, h in hides)
        m.add(counts[i] - expr >= encoded[i].lower)
        m.add(counts[i] - expr <= encoded[i].upper)
    m.minimize(sum(int(sizes[g]) * v for (g, _), v in y.items()))
    known = None if fallback is None else {key for key in fallback if key in y}
    start = known if known is not None else greedy
    hint = None if start is None else {v: int(key in start) for key, v in y.items()}
    solver, outcome = _cpsat.solve(m, time_limit=time_limit, num_workers=_cpsat.check_num_workers(num_workers, "integrate"),
                                   seed=_cpsat.random_seed(seed), hint=hint)
    if outcome.has_solution:
        chosen = {key for key, v in y.items() if solver.value(v)}
        how = "CP-SAT " + str(outcome.status)
    elif known is not None and outcome.status != Status.INFEASIBLE:
        chosen, how = known, "fallback (CP-SAT found nothing in time)"
    elif greedy is not None:
        chosen, how = greedy, "greedy (CP-SAT found nothing in time)"
    else:
        names = ", ".join(repr(encoded[i].requirement) for i in violated)
        reason = (
            f"The classes exceed the upper bound of {names}, and no suppression of whole classes "
            "brings the counts down without breaking a lower bound."
            if outcome.status == Status.INFEASIBLE else
            f"The classes exceed the upper bound of {names}; no repair was found within the time limit."
        )
        status = Status.INFEASIBLE if outcome.status == Status.INFEASIBLE else Status.UNKNOWN
        return dataclasses.replace(release, status=status, reason=reason).with_provenance(
            integrate={"violated": [str(encoded[i].requirement) for i in violated], **outcome.stats})
    new = table.copy()
    extra = 0
    for g, a in sorted(chosen):
        rows = groups == g
        col = new[a]
        if isinstance(col.dtype, pd.CategoricalDtype) and SUPPRESSED not in col.cat.categories:
            new[a] = col.cat.add_categories([SUPPRESSED])
        extra += int((new[a].astype(str).to_numpy()[rows] != SUPPRESSED).sum())
        new.loc[rows, a] = SUPPRESSED
    info = {
        "violated": [str(encoded[i].requirement) for i in violated],
        "extra_stars": extra,
        "pairs": len(chosen),
        "solved_by": how,
        "elapsed_s": time.perf_counter() - started,
    }
    return dataclasses.replace(release, table=new).with_provenance(integrate=info)
