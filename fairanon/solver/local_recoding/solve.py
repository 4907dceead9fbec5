"""Solving the exact local-recoding model, and the solver-level method behind cpsat.

:func:`local_recoding` validates the options, encodes the instance, builds the model,
maps a warm-start release onto it, solves it (entropy l-diversity by lazy cuts), makes
an OPTIMAL release independent of thread timing, reads the release back and has the
verifier check it, or, when no release exists, names the requirements that conflict.
Its messages and provenance name the method it implements, ``cpsat``
(:mod:`fairanon.methods.cpsat` adds the default warm start).
"""

from __future__ import annotations

import math
import numbers
import time
from collections.abc import Callable, Sequence
from fractions import Fraction

import numpy as np
import pandas as pd
from ortools.sat.python import cp_model

from ..._arrays import unique_rows
from ..._memory import current_limit
from ..._validation import check_bool
from ...exceptions import IncompatibleRequirementError, InvalidParameterError, SolverError
from ...instances.instance import Instance
from ...models.objectives import (
    LogLoss,
    Objective,
    objective_spec,
    objective_value,
    relative_gap,
)
from ...models.requirements import KAnonymity, Requirement, validate_requirements
from ...models.risk.requirements import LINEAR_RISK, refuse_risk
from ...release import Release, Status, provenance
from .. import _cpsat
from .build import build_model
from .class_sizes import solve_terms
from .encoding import BuildStopped, Encoding, ModelTooLarge, check_deadline, encode
from .labels import RECODINGS
from .memory import check_model_memory, check_pairs_memory
from .model import LocalRecodingModel, class_discernibility, suppressed_vectors
from .privacy import _entropy_violations, _forbid_counts

__all__ = ["LOAD_FACTOR", "local_recoding", "solve_model"]

#: CP-SAT's time outside its own limit (loading the model into its workers, stopping
#: them) and the freeing of the model afterwards, as a multiple of the model's build
#: time: both grow with the model. Measured on a 2-core machine with 8 workers (German
#: credit, 7 quasi-identifiers, 0.3 to 1.5 million pairs): 0.1 to 1 times the build.
#: The search gets the time limit less this; the build stops when it could no longer
#: leave it (at a share 1 / (1 + LOAD_FACTOR) of the time left when it starts).
LOAD_FACTOR = 1.0

#: Deterministic-time budget of the one-worker re-solve that makes an OPTIMAL release
#: independent of thread timing; a deterministic limit, so whether it succeeds is
#: reproducible too.
_CANONICAL_BUDGET = 1.0


def _hint_from_release(
    pm: LocalRecodingModel, release: Release, deadline: float | None = None
) -> dict:
    """Map a heuristic release to a (partial) solution: each released label becomes the
    most specific candidate label covering what it covers, then the records released
    alike take their tight summary (:func:`_tightened`), a vector of the model when the
    mapped one is not. Past `deadline`,
    :class:`~fairanon.solver.local_recoding.encoding.BuildStopped`."""
    from ...instances.generalization import label_covers

    enc = pm.encoding
    table = release.table
    if not table.index.equals(enc.instance.row_ids):
        try:
            table = table.loc[enc.instance.row_ids]
        except KeyError:
            return {}
    per_attr = []
    for a, space in enumerate(enc.spaces):
        check_deadline(deadline, "mapping the start onto the model")
        col = table[space.name].astype(str).to_numpy()
        uniq, inv = np.unique(col, return_inverse=True)
        covers = label_covers(space.attr, list(uniq))
        if space.attr.kind != "numeric":
            index = {v: i for i, v in enumerate(space.attr.domain)}
            codes = np.array([index[v] for v in space.values], dtype=np.int64)
        own_id = {}
        for i, text in enumerate(space.texts[: space.m]):
            own_id.setdefault(text, i)
        points = np.array(space.values) if space.attr.kind == "numeric" else codes
        mapped = []
        for u in range(len(uniq)):
            if u % 256 == 0:  # a label costs a pass over the m values
                check_deadline(deadline, "mapping the start onto the model")
            mask = covers.contains(np.full(space.m, u), points)
            held = np.flatnonzero(mask)
            if len(held) == 1 and uniq[u] in own_id:
                mapped.append(own_id[uniq[u]])
            elif len(held) and space.rank is not None:
                # the most specific label holding the run of the values covered
                r = space.rank[held]
                mapped.append(int(space._join_runs(r.min(keepdims=True), r.max(keepdims=True) + 1)[0]))
            else:
                ok = space.containing(held)
                if len(held) > 1:
                    ok[space.own] = False
                cand = np.flatnonzero(ok)
                mapped.append(int(cand[np.lexsort((cand, space.sizes[cand]))[0]]) if len(cand) else -1)
        per_attr.append(np.array(mapped, dtype=np.int64)[inv.reshape(-1)])
    check_deadline(deadline, "mapping the start onto the model")
    per_attr = _tightened(enc, per_attr)
    index = {vec: v for v, vec in enumerate(pm.vectors)}
    n_vec = len(pm.vectors)
    # Pairs are sorted by (type, vector), so their keys t * n_vec + v are ascending.
    pair_keys = pm.pair_t.astype(np.int64) * n_vec + pm.pair_v.astype(np.int64)
    counts: dict[tuple, int] = {}
    for row in range(enc.instance.n_rows):
        vec = (int(enc.protected[enc.row_type[row]]),) + tuple(int(p[row]) for p in per_attr)
        v = index.get(vec)
        if v is None:
            continue
        key = (int(enc.row_type[row]), v)
        counts[key] = counts.get(key, 0) + 1
    hint = {}
    for (t, v), value in counts.items():
        i = int(np.searchsorted(pair_keys, t * n_vec + v))
        if i < len(pair_keys) and pair_keys[i] == t * n_vec + v:
            hint[pm.x[i]] = value
    used = {v for _, v in counts}
    hint.update({pm.z[v]: int(v in used) for v in range(n_vec)})
    return hint


def _tightened(enc: Encoding, per_attr: list[np.ndarray]) -> list[np.ndarray]:
    """The records released alike (the same protected value and mapped labels) each
    given their tight summary: per attribute, the most specific label holding their
    values, a label no coarser than the mapped one. The groups keep their records, so
    whatever held for them holds still (k, and l and t, which merging classes keeps),
    and the summary is a vector of the join closure (the join of a set of types), where
    the mapped labels need not be one (CP-SAT then had no whole solution to start
    from). Spaces of masks keep the mapped labels."""
    if not per_attr or any(s.rank is None for s in enc.spaces):
        return per_attr
    mapped = np.column_stack([enc.protected[enc.row_type], *per_attr])
    if (mapped < 0).any():
        return per_attr
    _, group = unique_rows(mapped)
    group = np.asarray(group).reshape(-1)
    n_groups = int(group.max()) + 1 if len(group) else 0
    out = []
    for a, space in enumerate(enc.spaces):
        rank = space.rank[enc.qi[enc.row_type, a]]
        lo = np.full(n_groups, space.m, dtype=np.int64)
        hi = np.full(n_groups, -1, dtype=np.int64)
        np.minimum.at(lo, group, rank)
        np.maximum.at(hi, group, rank)
        out.append(space._join_runs(lo, hi + 1)[group])
    return out


def solve_model(
    pm: LocalRecodingModel,
    *,
    time_limit: float | None = None,
    seed: int = 0,
    num_workers: int = 1,
    hint: dict | None = None,
    log: bool = False,
    export=None,
    deterministic_limit: float | None = None,
    parameters: dict | None = None,
) -> tuple[cp_model.CpSolver | None, _cpsat.Outcome, dict]:
    """Solve a built model; entropy classes are checked exactly and cut off until none
    violates. Returns the solver holding the solution, the outcome and statistics.
    `deterministic_limit` bounds each solve in CP-SAT's deterministic time, so that a
    one-worker solve it stops gives the same result on any machine load; `parameters`
    are more CP-SAT parameters by name."""
    deadline = None if time_limit is None else time.perf_counter() + time_limit
    lazy = {"rounds": 0, "lazy_cuts": 0}
    logs: list[str] = []

    def run(model, start, first=False, extra=None):
        solver, outcome = _cpsat.solve(
            model,
            time_limit=_cpsat.remaining(deadline),
            num_workers=num_workers,
            seed=seed,
            hint=start,
            log=log,
            export=export if first else None,
            deterministic_limit=deterministic_limit,
            parameters={**(parameters or {}), **(extra or {})},
        )
        if outcome.log:
            logs.append(outcome.log)
        return solver, outcome

    def lazily(model, start, first=False, extra=None):
        """Solve `model`, cutting off the entropy classes that violate l-diversity
        until none does (cuts go to pm's model; a clone's violating solution is not
        a release, so such a solve ends UNKNOWN)."""
        while True:
            lazy["rounds"] += 1
            solver, outcome = run(model, start, first and lazy["rounds"] == 1, extra)
            if not outcome.has_solution or not pm.entropy:
                return solver, outcome
            bad = _entropy_violations(pm, solver)
            if not bad:
                return solver, outcome
            if model is not pm.model:
                return solver, _cpsat.Outcome(Status.UNKNOWN, "UNKNOWN", stats=outcome.stats)
            for _, cvars, counts, guard in bad:
                _forbid_counts(pm.model, cvars, counts, guard)
                lazy["lazy_cuts"] += 1
            if deadline is not None and time.perf_counter() >= deadline:
                return solver, _cpsat.Outcome(Status.UNKNOWN, "UNKNOWN", stats=outcome.stats)

    if pm.terms:
        first = [True]

        def solve(model, start, extra=None):
            out = lazily(model, start, first[0], extra)
            first[0] = False
            return out

        solver, outcome = solve_terms(pm, solve, hint)
    else:
        solver, outcome = lazily(pm.model, hint, True)
    outcome.log = "\n".join(logs) if log else None
    return solver, outcome, lazy


def _assignment(pm: LocalRecodingModel, solver: cp_model.CpSolver) -> np.ndarray:
    """Vector id of every instance row (records of a type are split in row order)."""
    enc = pm.encoding
    out = np.full(enc.instance.n_rows, -1, dtype=np.int64)
    filled = np.zeros(enc.n_types, dtype=np.int64)
    for i, var in enumerate(pm.x):
        count = int(solver.value(var))
        if count:
            t = int(pm.pair_t[i])
            rows = enc.rows[t][filled[t] : filled[t] + count]
            out[rows] = int(pm.pair_v[i])
            filled[t] += count
    if (out < 0).any():  # pragma: no cover - the model releases every record once
        raise SolverError("The CP-SAT solution leaves some records unassigned.")
    return out


def _table(enc: Encoding, vectors: list[tuple], assignment: np.ndarray) -> pd.DataFrame:
    instance = enc.instance
    arr = np.array(vectors, dtype=np.int64).reshape(len(vectors), enc.d + 1)
    names = [s.name for s in enc.spaces]
    out = {}
    for name in instance.table.columns:
        attr = instance.schema[name]
        if not attr.released:
            continue
        if name in names:
            a = names.index(name)
            space = enc.spaces[a]
            labels = arr[assignment, a + 1]
            used, inv = np.unique(labels, return_inverse=True)
            out[name] = pd.Categorical.from_codes(inv.reshape(-1), [space.texts[j] for j in used])
        else:
            out[name] = instance.table[name]
    return pd.DataFrame(out, index=instance.table.index)


def _exact_objective(pm: LocalRecodingModel, solver) -> int | Fraction:
    if pm.objective == "discernibility":
        n = pm.encoding.instance.n_rows
        suppressed = suppressed_vectors(pm.encoding, pm.vectors)
        return sum(
            class_discernibility(int(solver.value(e)), bool(s), n)
            for e, s in zip(pm.y, suppressed)
        )
    total = Fraction(
        sum(int(c) * int(solver.value(x)) for c, x in zip(pm.pair_cost, pm.x) if c), pm.scale
    )
    return int(total) if total.denominator == 1 else total


def _exact_bound(pm: LocalRecodingModel, bound: float | None) -> int | Fraction | None:
    if bound is None:
        return None
    scaled = math.ceil(bound - 1e-6)
    value = Fraction(scaled, pm.scale)
    return int(value) if value.denominator == 1 else value


def _fully_generalized(enc: Encoding) -> tuple[pd.DataFrame, np.ndarray]:
    """The table with every generalizable quasi-identifier ``*`` (for INFEASIBLE and
    UNKNOWN releases, which hand out no table)."""
    vectors = []
    index = {}
    assignment = np.empty(enc.instance.n_rows, dtype=np.int64)
    star = tuple(int(np.argmax(s.sizes)) for s in enc.spaces)
    for t in range(enc.n_types):
        vec = (int(enc.protected[t]),) + star
        if vec not in index:
            index[vec] = len(vectors)
            vectors.append(vec)
        assignment[enc.rows[t]] = index[vec]
    return _table(enc, vectors, assignment), assignment


class _TooLarge(Exception):
    """The candidates listed give more assignment variables than the time limit allows
    (``max_pairs_per_second``)."""

    def __init__(self, pairs: int):
        super().__init__(pairs)
        self.pairs = pairs


def _check_options(recoding, max_vars, max_contexts, max_range_values, hint, max_pairs_per_second):
    if recoding not in RECODINGS:
        raise InvalidParameterError(
            f"The 'recoding' parameter of cpsat must be one of {', '.join(map(repr, RECODINGS))}. "
            f"Got {recoding!r} instead."
        )
    for name, value in (
        ("max_vars", max_vars),
        ("max_contexts", max_contexts),
        ("max_range_values", max_range_values),
    ):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidParameterError(
                f"The {name!r} parameter of cpsat must be an int in [1, inf). "
                f"Got {value!r} instead."
            )
    if max_pairs_per_second is not None and (
        isinstance(max_pairs_per_second, (bool, np.bool_))
        or not isinstance(max_pairs_per_second, numbers.Real)
        or not max_pairs_per_second > 0
    ):
        raise InvalidParameterError(
            "The 'max_pairs_per_second' parameter of cpsat must be a number in (0, inf] or "
            f"None. Got {max_pairs_per_second!r} instead."
        )
    auto = isinstance(hint, str) and hint == "auto"
    if not (hint is None or auto or isinstance(hint, Release)):
        raise InvalidParameterError(
            "The 'hint' parameter of cpsat must be 'auto', None or a Release. "
            f"Got {hint!r} instead."
        )


def check_hint(instance: Instance, release: Release, name: str = "hint",
               caller: str = "cpsat") -> None:
    """Refuse a hint (or another release given as parameter `name` of `caller`) that is
    no release of `instance`: one without a quasi-identifier's column or without some
    of its records (a release of another table)."""
    missing = [a for a in instance.schema.qi if a not in release.table.columns]
    lost = instance.row_ids.difference(release.table.index)
    if missing or len(lost):
        what = (f"it has no column {', '.join(map(repr, missing))}" if missing
                else f"{len(lost):,} of the instance's records are not in it")
        raise InvalidParameterError(
            f"The {name!r} parameter of {caller} must be a release of the instance. Got one of "
            f"another table instead: {what}."
        )


def local_recoding(
    instance: Instance,
    requirements: Sequence[Requirement],
    *,
    seed=None,
    time_limit: float | None = None,
    recoding: str = "generalization",
    objective=None,
    stretch_k: int | None = None,
    num_workers: int | None = None,
    hint="auto",
    auto_hint: Callable[[Instance, tuple[Requirement, ...], object], Release | None] | None = None,
    explain: bool = True,
    log: bool = False,
    export=None,
    max_vars: int = 200_000,
    max_contexts: int = 5_000,
    max_range_values: int = 16,
    max_pairs_per_second: float | None = None,
    deterministic_limit: float | None = None,
) -> Release:
    """Optimal local recoding (or local suppression) under every requirement type, with a
    certificate: the exact CP-SAT model of :mod:`fairanon.solver.local_recoding` [1]_ [2]_ [3]_.

    Parameters
    ----------
    instance, seed
        As in :func:`fairanon.anonymize`; CP-SAT's ``random_seed`` derives from `seed`.
    requirements : sequence of Requirement
        Any mix of KAnonymity, LDiversity (distinct, entropy, recursive), TCloseness
        (equal, ordered, hierarchical), DiversityConstraint and AlphaProtection (every
        measure, strict or not, with or without minimum support).
    time_limit : float, optional
        Seconds for the whole run, the warm start's heuristics included: the model is
        built (its time is ``provenance["model"]["build_s"]``) and the search gets what
        remains less the time CP-SAT takes outside its own limit to load the model and
        stop, about as long as the build (:data:`LOAD_FACTOR`). The build looks at the
        time as it goes and stops where that would no longer be left; then, or when
        too little is left to load the model, CP-SAT is not run and the release is
        UNKNOWN, with ``reason`` and ``provenance["model"]`` saying so. When the search
        runs out, the best release found is returned as FEASIBLE with its bound and
        gap, or UNKNOWN.
    recoding : {"generalization", "suppression"}, default="generalization"
        "generalization": each class releases, per attribute, any label covering its
        values -- a hierarchy node (categorical), a range of values in order
        (ordered, numeric), or ``*``; a range, node or interval covering every value
        present in the data is released as ``*`` and counts as a star (one rule for
        every kind of label, :mod:`~fairanon.solver.local_recoding.labels`).
        "suppression": the class's common value or ``*`` (DIVA's semantics; a
        homogeneous attribute may still be starred).
    objective : str or pair of str, optional
        A loss objective ("stars", "generalized", "discernibility", "ncp", "lm"), a
        privacy objective ("privacy_log", "privacy_stretch") or a lexicographic pair
        of one of each, most important first, e.g. ``("privacy_log", "ncp")``
        (:mod:`fairanon.models.objectives`). Default: "stars" for suppression, "ncp"
        for generalization. The release's ``objective`` is the exact value (an int, a
        Fraction, a :class:`~fairanon.models.objectives.LogLoss` or a
        :class:`~fairanon.models.objectives.Lexicographic` pair) and ``bound`` the
        proven lower bound; with a privacy objective ``provenance["privacy"]`` shows
        the sum of log class sizes, the geometric mean class size and the records in
        classes of at least k'. ``privacy_log`` is solved through an integer surrogate
        and certified exactly (:mod:`.class_sizes`).
    stretch_k : int, optional
        k' of ``privacy_stretch``: at least 2 and above the k of the requirements.
    num_workers : int, optional
        CP-SAT workers; default ``max(8, cores)``
        (:data:`fairanon.solver._cpsat.DEFAULT_WORKERS`: CP-SAT's strongest bound
        workers only run from about 8 on).
    hint : "auto", None or Release, default="auto"
        A warm start. "auto" takes the release `auto_hint` gives (none without it;
        method cpsat uses Mondrian's release when every requirement is k, l or t).
    auto_hint : callable, optional
        What ``hint="auto"`` means: called as ``auto_hint(instance, requirements, seed)``
        with the validated requirements before the model is built (its time counts in
        `time_limit`, not in the build time), it returns a release or None.
    explain : bool, default=True
        When the requirements admit no release, find which of them conflict: each is
        guarded by a literal, and deletion (solves with the literals fixed; with more
        than :data:`~fairanon.solver._cpsat.DIRECT_GROUPS` requirements, from the
        sufficient assumptions of one assumption solve) shrinks them to a minimal set,
        named in ``reason`` and ``provenance["conflict"]``.
    log : bool, default=False
        Keep the CP-SAT log in ``provenance["solver_log"]``.
    export : path, optional
        Write the model to this file (``.pb.txt``: text format).
    max_vars : int, default=200000
        Refuse models with more assignment variables (InvalidParameterError).
    max_contexts : int, default=5000
        Refuse alpha-protection with more contexts (IncompatibleRequirementError).
    max_range_values : int, default=16
        Numeric and ordered attributes with at most this many distinct values may be
        released as any range; above it, ordered attributes use their hierarchy and
        numeric ones their nested intervals.
    max_pairs_per_second : float, optional
        Under a time limit, do not build a model with more assignment variables than
        this many per second of the limit: CP-SAT would spend the limit loading and
        presolving it (:data:`fairanon.methods.cpsat.SEARCH_PAIRS_PER_SECOND` gives the
        measurements). The count is taken once the candidates are listed, before any
        variable is created; above it the release is UNKNOWN, CP-SAT not run, with
        ``reason`` and ``provenance["model"]`` (``pairs``, ``too_large``) saying so. So
        is a model whose candidate classes exceed `max_vars` under it (``pairs`` None),
        which is otherwise refused.
    deterministic_limit : float, optional
        Stop each CP-SAT solve at this many units of its deterministic time: a limit
        that ends the same way under any load (with one worker, the same release).

    Returns
    -------
    Release
        OPTIMAL (proven), FEASIBLE (``bound`` and ``provenance["gap"]``), INFEASIBLE
        (``reason`` names the conflicting requirements) or UNKNOWN. A release with a
        table has been checked by :func:`fairanon.verify`; the report is in
        ``provenance["verification"]``.

    Raises
    ------
    InvalidParameterError
        Bad options, or a model larger than `max_vars`.
    IncompatibleRequirementError
        alpha-protection with more than `max_contexts` contexts.
    MemoryLimitError
        The model's memory is above the memory limit of :func:`fairanon.anonymize`
        (default: half the available memory): estimated before the heuristic start
        and the build (:func:`~fairanon.solver.local_recoding.memory.check_model_memory`),
        and counted exactly once the candidates are listed, before any variable is
        created (:func:`~fairanon.solver.local_recoding.memory.check_pairs_memory`).
    SolverError
        CP-SAT found the model invalid, or the verifier rejected a solver release
        (both bugs).

    Notes
    -----
    Exactness: the optimum is over every partition of the records into classes and
    every label choice per class and attribute, within the candidate labels (all
    hierarchy nodes; all ranges of up to `max_range_values` values, else hierarchy
    nodes or nested intervals). Labels covering the same data values are identified
    (the most specific is released), except that a value's own label is kept apart.
    With only k, l and t and a monotone objective, candidates are restricted to tight
    class summaries (join closure), which loses no optimum. Every record is released:
    whole-record suppression is a ``*`` on each generalizable attribute.

    Size: one variable per (type, candidate vector) pair; types are the distinct
    records on the attributes the requirements read, so duplicates cost nothing.
    alpha-protection adds, per reachable context, four counts, three tokenism cases
    and up to three integer products. Entropy l-diversity is solved through a relaxed
    table constraint and exact lazy checks. With ``num_workers > 1`` and an OPTIMAL
    status, the release is recomputed by one worker with the objective fixed (within a
    deterministic-time budget), so the same seed gives the same release;
    ``provenance["canonical"]`` says whether that succeeded (on large models it may
    not, and ties between equally good releases then depend on thread timing). Privacy
    and lexicographic objectives skip that re-solve (``canonical`` False): use
    ``num_workers=1`` for a release that depends only on the seed.

    References
    ----------
    .. [1] R. Bredereck, A. Nichterlein, R. Niedermeier, G. Philip. The effect of
       homogeneity on the computational complexity of combinatorial data anonymization.
       Data Min. Knowl. Disc. 28(1), 2014 (the ILP over row types).
    .. [2] M. Milani, Y. Huang, F. Chiang. Preserving diversity in anonymized data.
       EDBT 2021 ((k, Sigma)-anonymization by suppression).
    .. [3] S. Ruggieri. Using t-closeness anonymity to control for non-discrimination.
       Transactions on Data Privacy 7(2), 2014.

    Examples
    --------
    >>> from fairanon.models.diversity import diva_sigma
    >>> inst = fa.load("diva_table1")
    >>> reqs = [fa.KAnonymity(2), *diva_sigma()]
    >>> rel = local_recoding(inst, reqs, recoding="suppression", seed=0, num_workers=1)
    >>> rel.status, rel.objective
    (<Status.OPTIMAL: 'OPTIMAL'>, 22)
    >>> fa.verify(inst, rel, reqs).passed
    True
    """
    started = time.perf_counter()
    if not isinstance(instance, Instance):
        raise InvalidParameterError(
            "The 'instance' parameter of cpsat must be an Instance. "
            f"Got {type(instance).__name__} instead."
        )
    requirements = validate_requirements(instance, requirements, caller="cpsat")
    refuse_risk(requirements, "cpsat", LINEAR_RISK)
    _check_options(recoding, max_vars, max_contexts, max_range_values, hint, max_pairs_per_second)
    check_bool(explain, "explain", "cpsat")
    check_bool(log, "log", "cpsat")
    if isinstance(hint, Release):
        check_hint(instance, hint)
    if max_pairs_per_second is not None:
        max_pairs_per_second = float(max_pairs_per_second)  # a Fraction or NumPy number too
    objective = objective_spec(
        objective,
        "cpsat",
        stretch_k=stretch_k,
        default="stars" if recoding == "suppression" else "ncp",
    )
    check_stretch(objective, requirements, "cpsat")
    limit = _cpsat.check_time_limit(time_limit, "cpsat")
    workers = _cpsat.check_num_workers(num_workers, "cpsat")
    if deterministic_limit is not None and (
        isinstance(deterministic_limit, bool)
        or not isinstance(deterministic_limit, (int, float))
        or not 0 < deterministic_limit < math.inf
    ):
        raise InvalidParameterError(
            "The 'deterministic_limit' parameter of cpsat must be a positive number (units "
            f"of CP-SAT's deterministic time) or None. Got {deterministic_limit!r} instead."
        )
    solver_seed = _cpsat.random_seed(seed)
    deadline = None if limit is None else started + limit
    params = {
        "recoding": recoding,
        "objective": str(objective),
        "time_limit": limit,
        "deterministic_limit": deterministic_limit,
        "num_workers": workers,
        "explain": explain,
        "max_vars": max_vars,
        "max_contexts": max_contexts,
        "max_range_values": max_range_values,
        "max_pairs_per_second": max_pairs_per_second,
    }

    # The model's memory is checked before the heuristic start and the build, and
    # exactly inside the build before any variable is created.
    enc = encode(instance, requirements, recoding=recoding, max_range_values=max_range_values)
    model_info = {
        "types": enc.n_types,
        "records": instance.n_rows,
        "distinct_qi": len(np.unique(np.column_stack([enc.qi, enc.protected]), axis=0)),
    }
    memory = current_limit(None, "cpsat")
    check_model_memory(enc, requirements, objective, max_vars=max_vars, workers=workers,
                       deadline=None if deadline is None else started + (deadline - started) / (1 + LOAD_FACTOR),
                       memory_limit=memory)

    if hint == "auto":
        hint_release = auto_hint(instance, requirements, seed) if auto_hint is not None else None
    else:
        hint_release = hint
    params["hint"] = hint_release.method if hint_release is not None else None

    build_started = time.perf_counter()
    # The build stops where the time left would no longer cover CP-SAT's loading of
    # the model built so far (about LOAD_FACTOR times the build time).
    build_deadline = (
        None
        if deadline is None
        else build_started + (deadline - build_started) / (1 + LOAD_FACTOR)
    )
    most = None if limit is None or max_pairs_per_second is None else max_pairs_per_second * limit

    def check_pairs(pairs: int) -> None:
        check_pairs_memory(enc, pairs, workers, memory)
        if most is not None and pairs > most:
            raise _TooLarge(pairs)

    try:
        pm = build_model(
            enc,
            requirements,
            objective=objective,
            max_vars=max_vars,
            max_contexts=max_contexts,
            deadline=build_deadline,
            check_pairs=check_pairs,
        )
        hint_values = (
            _hint_from_release(pm, hint_release, build_deadline)
            if hint_release is not None
            else None
        )
    except BuildStopped as stop:
        build_s = time.perf_counter() - build_started
        model_info.update(built=False, build_s=build_s, build_stopped=stop.stage)
        reason = (
            f"the model build stopped at its deadline after {build_s:.1f} s, while "
            f"{stop.stage} (the time limit of {limit:g} s must also cover CP-SAT's loading of "
            "the model, which takes about as long as its build)"
        )
        return _no_release(enc, reason, params, requirements, seed, started, model_info)
    except _TooLarge as large:
        model_info.update(
            built=False, build_s=time.perf_counter() - build_started, pairs=large.pairs, too_large=True
        )
        reason = (
            f"the model would have {large.pairs:,} assignment variables, more than "
            f"max_pairs_per_second ({max_pairs_per_second:g}) times the time limit ({limit:g} s), "
            "so it was not built: CP-SAT would spend the limit loading and presolving it"
        )
        return _no_release(enc, reason, params, requirements, seed, started, model_info)
    except ModelTooLarge as large:
        if most is None:
            raise
        # Under the cap a model above max_vars is too large to search as well.
        model_info.update(
            built=False, build_s=time.perf_counter() - build_started, pairs=None, too_large=True
        )
        reason = (
            f"the model has more candidate classes than max_vars ({max_vars:,}) allows, so it "
            f"was not built ({large})"
        )
        return _no_release(enc, reason, params, requirements, seed, started, model_info)
    build_s = time.perf_counter() - build_started
    model_info.update(
        vectors=len(pm.vectors),
        variables=len(pm.x),
        candidates=pm.mode,
        contexts=pm.n_contexts,
        build_s=build_s,
    )
    budget = None
    if deadline is not None:
        # CP-SAT loads the model and stops its workers outside its own time limit, and
        # the model is freed after it: keep that time out of the search's share.
        budget = deadline - time.perf_counter() - LOAD_FACTOR * build_s
        if budget <= 0:
            reason = (
                f"the model ({len(pm.x)} variables) was built in {build_s:.1f} s and the "
                f"{max(deadline - time.perf_counter(), 0.0):.1f} s left of the time limit "
                f"({limit:g} s) would not cover CP-SAT's loading of it (about "
                f"{LOAD_FACTOR * build_s:.1f} s), so CP-SAT was not run"
            )
            return _no_release(enc, reason, params, requirements, seed, started, model_info)

    solver, outcome, lazy = solve_model(
        pm,
        time_limit=budget,
        seed=solver_seed,
        num_workers=workers,
        hint=hint_values,
        log=log,
        export=export,
        deterministic_limit=deterministic_limit,
    )
    extra = {"model": model_info, "solver": {**outcome.stats, **lazy}}
    if log:
        extra["solver_log"] = outcome.log
    # The search's own deadline: later steps (the canonical re-solve) keep the margin.
    search_deadline = None if deadline is None else deadline - LOAD_FACTOR * build_s

    if outcome.has_solution:
        canonical = False
        sized = isinstance(objective, Objective)
        if workers > 1 and outcome.status == Status.OPTIMAL and not sized:
            solver, canonical = _canonical(pm, solver, outcome, search_deadline, solver_seed)
        extra["canonical"] = canonical
        assignment = _assignment(pm, solver)
        table = _table(enc, pm.vectors, assignment)
        if sized:
            value = objective_value(instance, Release(table, assignment), objective)
            extra["privacy"] = privacy_summary(assignment, objective)
            if outcome.status == Status.OPTIMAL:
                bound, gap = value, 0.0
            else:
                bound = None if objective.secondary else size_bound(instance, objective)
                gap = relative_gap(value, bound)
        else:
            value = _exact_objective(pm, solver)
            bound = value if outcome.status == Status.OPTIMAL else _exact_bound(pm, outcome.bound)
            gap = 0.0 if outcome.status == Status.OPTIMAL else outcome.gap
        release = Release(
            table=table,
            groups=assignment,
            status=outcome.status,
            objective=value,
            bound=bound,
            provenance=provenance(
                "cpsat",
                params,
                requirements,
                seed,
                started,
                objective_name=str(objective),
                gap=gap,
                **extra,
            ),
        )
        return _verified(instance, release, requirements)

    table, groups = _fully_generalized(enc)
    if outcome.status == Status.INFEASIBLE:
        conflict, reason = _explain(
            enc, requirements, explain, deadline, solver_seed, max_vars, max_contexts
        )
        extra["conflict"] = conflict
        return Release(
            table=table,
            groups=groups,
            status=Status.INFEASIBLE,
            reason=reason,
            provenance=provenance("cpsat", params, requirements, seed, started, **extra),
        )
    limits = [f"the time limit ({limit} s)"] if limit is not None else []
    if deterministic_limit is not None:
        limits.append(f"the deterministic limit ({deterministic_limit:g} units of CP-SAT's "
                      "deterministic time)")
    reason = f"{' or '.join(limits) or 'the search'} ran out before CP-SAT found any release"
    if budget is not None:
        reason += (
            f" (its search had {budget:.1f} s of it, after the {build_s:.1f} s build and "
            "with as much kept for CP-SAT's loading of the model)"
        )
    return Release(
        table=table,
        groups=groups,
        status=Status.UNKNOWN,
        reason=reason,
        provenance=provenance("cpsat", params, requirements, seed, started, **extra),
    )


def _no_release(enc, reason, params, requirements, seed, started, model_info) -> Release:
    """The UNKNOWN release (every quasi-identifier ``*``) when CP-SAT could not be run
    within the time limit; `reason` says why."""
    table, groups = _fully_generalized(enc)
    solver = {"solver": "CP-SAT", "solver_status": "NOT_RUN"}
    return Release(
        table=table,
        groups=groups,
        status=Status.UNKNOWN,
        reason=reason,
        provenance=provenance(
            "cpsat", params, requirements, seed, started, model=model_info, solver=solver
        ),
    )


def check_stretch(objective, requirements, caller: str) -> None:
    """Refuse a stretch target k' that every release meeting `requirements` reaches."""
    if not isinstance(objective, Objective) or objective.stretch_k is None:
        return
    k = max([r.k for r in requirements if isinstance(r, KAnonymity)] + [1])
    if objective.stretch_k <= k:
        raise InvalidParameterError(
            f"The 'stretch_k' parameter of {caller} must exceed the k of the requirements "
            f"({k}): every release meeting them has all its records in classes of at least "
            f"{objective.stretch_k}. Got stretch_k={objective.stretch_k}."
        )


def privacy_summary(groups: np.ndarray, objective: Objective) -> dict:
    """What a privacy objective's report shows: the sum of log class sizes over the
    records, its mean as the geometric mean class size and, with a stretch target,
    the records in classes of at least k' (floats for display)."""
    sizes = np.bincount(np.unique(groups, return_inverse=True)[1].reshape(-1))
    loss = LogLoss(sizes.tolist())
    n = int(sizes.sum())
    out = {
        "sum_log_class_size": loss.sum_log_size,
        "geometric_mean_class_size": math.exp(loss.sum_log_size / n) if n else None,
    }
    if objective.stretch_k is not None:
        out["stretch_k"] = objective.stretch_k
        out["records_at_least_stretch_k"] = int(sizes[sizes >= objective.stretch_k].sum())
    return out


def size_bound(instance: Instance, objective: Objective):
    """The lower bound of a (single) privacy objective that holds for every release:
    classes never mix protected values, and merging classes never lowers privacy, so
    one class per protected value is the most private partition."""
    from ...models.bounds import lower_bound

    return lower_bound(instance, [], objective).value


def _canonical(pm: LocalRecodingModel, solver, outcome, deadline, seed):
    """Re-solve with one worker and the objective fixed at the optimum: the solution
    then depends only on the model and the seed, not on thread timing."""
    if deadline is not None and time.perf_counter() >= deadline:
        return solver, False
    best = round(outcome.objective)
    fixed = pm.model.clone()
    fixed.clear_objective()
    fixed.add(_clone_expr(pm, fixed) == best)
    clone_solver, out = _cpsat.solve(
        fixed,
        time_limit=_cpsat.remaining(deadline),
        num_workers=1,
        seed=seed,
        deterministic_limit=_CANONICAL_BUDGET,
    )
    if not out.has_solution:
        return solver, False
    # The clone shares variable indices with the original model.
    if pm.entropy and _entropy_violations(pm, clone_solver):
        return solver, False
    return clone_solver, True


def _clone_expr(pm: LocalRecodingModel, fixed: cp_model.CpModel):
    """The objective of `pm` over the variables of its clone `fixed`."""
    proto = pm.model.proto.objective
    variables = [fixed.get_int_var_from_proto_index(i) for i in proto.vars]
    return cp_model.LinearExpr.weighted_sum(variables, list(proto.coeffs)) + int(proto.offset)


def _verified(instance: Instance, release: Release, requirements) -> Release:
    from ...models.verify import verify

    report = verify(instance, release, requirements)
    if not report.passed:
        failed = "; ".join(f"{c.name}: {c.detail or c.achieved}" for c in report.failures)
        raise SolverError(
            f"The verifier rejected a {release.method} release ({failed}); this is a bug in the "
            "exact model, please report it."
        )
    return release.with_provenance(verification=report.to_dict())


def _explain(enc, requirements, explain, deadline, seed, max_vars, max_contexts):
    names = [str(r) for r in requirements]
    if not explain:
        reason = (
            "no release satisfies the requirements together "
            "(CP-SAT proved infeasibility; explain=False)"
        )
        return None, reason
    try:

        def build():
            pm = build_model(
                enc, requirements, explain=True, max_vars=max_vars, max_contexts=max_contexts
            )
            return pm.model, pm.literals

        core, minimal = _cpsat.explain(build, len(requirements), deadline=deadline, seed=seed)
    except (InvalidParameterError, IncompatibleRequirementError):
        core, minimal = None, False
    if core is None:
        return None, (
            "no release satisfies the requirements together (CP-SAT proved infeasibility); "
            f"the conflicting subset could not be isolated in time among: {'; '.join(names)}"
        )
    conflict = [names[i] for i in core]
    if not conflict:
        return [], "no release exists even without requirements (this should not happen)"
    if len(conflict) == 1:
        why = f"{conflict[0]} cannot be met by any release on its own"
    else:
        why = f"these requirements conflict: {'; '.join(conflict)}"
    qualifier = (
        "a minimal conflicting set" if minimal else "a conflicting set (not shown minimal in time)"
    )
    return (
        conflict,
        f"no release satisfies the requirements: {why} ({qualifier}, by deletion with CP-SAT)",
    )
