"""One move of the large-neighbourhood search: the records of some classes re-solved
exactly with the weighted-type model, everything else fixed.

The records of the freed classes are typed (:func:`~fairanon.solver.local_recoding.type_table`
with their positions) over the labels of :func:`~.labels.neighbourhood_space`; the
candidate vectors are the join closure of their types (every candidate vector when the
requirements are not all union-monotone and the model stays small), their current
vectors and the vectors of the classes around them, which they may join. The rest of the
table enters as constants (:class:`~fairanon.solver.local_recoding.Rest`): the records
of a class joined, the outside records showing a diversity constraint's target, the
outside records of every alpha-protection context, the outside classes and uniques of
the risk requirements. The current release is the solution hint, every assignment
variable hinted (those it does not use at 0), so a solve cut by its limit returns it or
something better, or nothing.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ...exceptions import IncompatibleRequirementError, InvalidParameterError
from ...models.requirements import AlphaProtection, Requirement
from ...release import Status
from ..local_recoding.build import build_model
from ..local_recoding.encoding import BuildStopped, type_table
from ..local_recoding.model import Rest
from ..local_recoding.solve import LOAD_FACTOR, solve_model
from .labels import neighbourhood_space
from .state import Incumbent

__all__ = ["Move", "Neighbourhood", "solve_neighbourhood"]

#: CP-SAT parameters of a re-solve. With one worker, the LP with every cut
#: (linearization level 2) proves these small models 10 to 40 times faster than the
#: default (German credit, 7 quasi-identifiers, neighbourhoods of 20 to 40 records).
SOLVER_PARAMETERS = {"linearization_level": 2}
#: Candidate vectors up to which a neighbourhood takes the join closure of its types;
#: above, the joins of each type with its nearest neighbours.
CLOSURE_MAX_VECTORS = 2_000
#: Assignment variables up to which a neighbourhood under requirements that are not
#: union-monotone gets every covering label combination as a candidate (exact); above,
#: the join closure and the current vectors.
ALL_CANDIDATES_MAX_VARS = 20_000


@dataclass
class Neighbourhood:
    """Classes to re-solve (`vectors`, whose records are `rows`) and classes around them
    that the records may join (`around`)."""

    vectors: list[tuple]
    rows: np.ndarray
    around: list[tuple] = field(default_factory=list)
    strategy: str = ""


@dataclass
class Move:
    """What re-solving a neighbourhood gave."""

    status: Status
    labels: np.ndarray | None  # new label ids of the neighbourhood's rows, or None
    proven: bool  # the neighbourhood's optimum (given the rest) was proven
    stats: dict


def _alpha_counter(inc: Incumbent, rows: np.ndarray, cell: np.ndarray, ids: list[np.ndarray]):
    """The 4-fold counts of the outside records of a context (attribute positions, label
    ids of the model), one grouping of the outside records per attribute set."""
    outside = np.ones(len(inc.labels), dtype=bool)
    outside[rows] = False
    out_labels, out_cell = inc.labels[outside], cell[outside]
    tables: dict[tuple, dict] = {}

    def count(attrs: tuple, labels: tuple) -> tuple:
        if attrs not in tables:
            keys = np.column_stack([out_labels[:, list(attrs)], out_cell])
            uniq, counts = np.unique(keys, axis=0, return_counts=True)
            table: dict[tuple, list[int]] = {}
            for row, c in zip(uniq.tolist(), counts.tolist()):
                table.setdefault(tuple(row[:-1]), [0, 0, 0, 0])[row[-1]] += c
            tables[attrs] = table
        key = tuple(int(ids[a][j]) for a, j in zip(attrs, labels))
        return tuple(tables[attrs].get(key, (0, 0, 0, 0)))

    return count


def solve_neighbourhood(
    inc: Incumbent,
    requirements: Sequence[Requirement],
    nb: Neighbourhood,
    *,
    recoding: str,
    max_range_values: int,
    time_limit: float | None,
    deterministic_limit: float | None,
    seed: int,
    num_workers: int,
    max_vars: int,
    max_contexts: int,
    alpha_cells: np.ndarray | None,
    cost_cap: float | None = None,
    exact: bool = False,
    deadline: float | None = None,
) -> Move:
    """Re-solve the records of `nb` exactly (see the module docstring). With
    `cost_cap`, the candidates are only vectors whose NCP per record is at most
    `cost_cap` times the largest of the neighbourhood's classes (and, per type, times
    what its records or the neighbourhood's average pay now). With `exact`, only the
    exact candidates are used (the optimum of the neighbourhood is then the true one);
    otherwise, when they are too many, the join closure if it has at most
    :data:`CLOSURE_MAX_VECTORS` vectors, else the joins of each type with its 2k
    nearest neighbours. The model's build stops at `deadline` (a
    ``time.perf_counter`` value); CP-SAT then gets at most the time left less
    :data:`~fairanon.solver.local_recoding.solve.LOAD_FACTOR` times what the set-up
    took (it loads and stops the model outside its own limit), and is not run when none
    is left: the move is then UNKNOWN, with nothing changed. The caller's `time_limit`
    is set before the set-up, which the last re-solve of a search used to run past its
    deadline by (UCI Adult, k = 5, lns at 4-5 s in one process: up to 0.34 s)."""
    began = time.perf_counter()
    instance = inc.instance
    rows = nb.rows
    spaces, ids = [], []
    for a, reg in enumerate(inc.registries):
        keep = [vec[a + 1] for vec in nb.vectors + nb.around]
        space, glob = neighbourhood_space(
            reg,
            rows,
            keep,
            objective=inc.objective,
            recoding=recoding,
            max_range_values=max_range_values,
        )
        spaces.append(space)
        ids.append(glob)
    local = [{int(g): i for i, g in enumerate(glob.tolist())} for glob in ids]

    def to_model(vec: tuple) -> tuple:
        return (vec[0],) + tuple(local[a][j] for a, j in enumerate(vec[1:]))

    def to_global(vec: tuple) -> tuple:
        return (int(vec[0]),) + tuple(int(ids[a][j]) for a, j in enumerate(vec[1:]))

    enc = type_table(
        instance,
        requirements,
        recoding,
        spaces,
        [s.row_value for s in spaces],
        [s.values for s in spaces],
        positions=rows,
    )
    freed = set(nb.vectors)
    target_m = {name: t.m for name, t in enc.targets.items()}

    found: dict[tuple, tuple[int, dict]] = {}

    def held(vec: tuple) -> tuple[int, dict]:
        if vec not in found:
            g = to_global(vec)
            part = None if g in freed else inc.classes.get(g)
            if part is None:
                found[vec] = (0, {})
            else:
                counts = {
                    name: np.bincount(inc.targets[name][part], minlength=m)
                    for name, m in target_m.items()
                }
                found[vec] = (len(part), counts)
        return found[vec]

    rest = Rest(
        n_rows=instance.n_rows,
        held=held,
        shown={i: inc.shown[i] - int(inc.showing(i, rows).sum()) for i in inc.diversity},
        classes=len(inc.classes) - len(freed),
        uniques=inc.uniques - sum(len(inc.classes[vec]) == 1 for vec in freed),
    )
    if any(isinstance(r, AlphaProtection) for r in requirements):
        rest.alpha_cells = tuple(int(c) for c in np.bincount(alpha_cells, minlength=4))
        rest.alpha_context = _alpha_counter(inc, rows, alpha_cells, ids)
    extra = [to_model(vec) for vec in nb.vectors + nb.around]
    max_cost = type_cap = None
    if cost_cap is not None:
        ncp = np.zeros(len(rows))
        for a, reg in enumerate(inc.registries):
            ncp += np.array([float(c) for c in reg.ncp])[inc.labels[rows, a]]
        max_cost = float(ncp.max()) * cost_cap
        # A type may take what its costliest record pays now, or the neighbourhood's
        # mean, with the same slack.
        per_type = np.zeros(enc.n_types)
        np.maximum.at(per_type, enc.row_type, ncp)
        type_cap = np.maximum(per_type, ncp.mean()) * cost_cap
    # (closure, cap, chain length): the exact candidates (the join closure, or every
    # label combination when a requirement is not union-monotone); for a move, when they
    # are too many, the join closure if it stays small, else the chains of neighbours.
    monotone = all(r.union_monotone for r in requirements)
    k = max([getattr(r, "k", 1) for r in requirements] + [1])
    exact_candidates = (
        (None, max_vars, None) if monotone else (False, ALL_CANDIDATES_MAX_VARS, None)
    )
    if exact:
        attempts = [exact_candidates]
    else:
        attempts = ([] if monotone else [exact_candidates]) + [
            (True, CLOSURE_MAX_VECTORS, None),
            (True, max_vars, 2 * k + 1),
        ]
    pm, why = None, ""
    for closure, cap, chains in attempts:
        try:
            pm = build_model(
                enc,
                requirements,
                objective=inc.objective,
                closure=closure,
                max_vars=cap,
                max_contexts=max_contexts,
                extra_vectors=extra,
                rest=rest,
                max_cost=max_cost,
                type_cap=type_cap,
                chains=chains,
                deadline=deadline,
            )
            break
        except (InvalidParameterError, IncompatibleRequirementError) as exc:
            why = str(exc)
        except BuildStopped as exc:
            return Move(Status.UNKNOWN, None, False, {"stopped": exc.stage})
    stats = {
        "records": len(rows),
        "classes": len(nb.vectors),
        "around": len(nb.around),
        "types": enc.n_types,
    }
    if pm is None:
        return Move(Status.UNKNOWN, None, False, {**stats, "refused": why[:200]})
    stats.update(vectors=len(pm.vectors), variables=len(pm.x), candidates=pm.mode)

    index = {vec: v for v, vec in enumerate(pm.vectors)}
    pair_index = {(int(t), int(v)): i for i, (t, v) in enumerate(zip(pm.pair_t, pm.pair_v))}
    current = inc.labels[rows]
    counts: dict[int, int] = {}
    for r, t in enumerate(enc.row_type.tolist()):
        vec = (int(inc.protected[rows[r]]),) + tuple(
            local[a][int(j)] for a, j in enumerate(current[r])
        )
        i = pair_index.get((t, index.get(vec, -1)))
        if i is not None:
            counts[i] = counts.get(i, 0) + 1
    # A complete hint: every assignment variable the current release does not use is 0.
    # With only the used ones hinted, CP-SAT had to complete the rest itself and, within
    # a move's deterministic time, often returned a worse solution than the current one,
    # or none (German credit, 7 quasi-identifiers, k = 5, seed 0: 16 of the first 60
    # moves, all unproven ones of 240 to 600 records; none with the complete hint, which
    # also proves 3 more of them in less deterministic time).
    hint = {x: counts.get(i, 0) for i, x in enumerate(pm.x)}
    used = {int(pm.pair_v[i]) for i in counts}
    hint.update({pm.z[v]: int(v in used) for v in range(len(pm.vectors))})
    if deadline is not None:
        now = time.perf_counter()
        left = deadline - now - LOAD_FACTOR * (now - began)
        if left <= 0:
            return Move(Status.UNKNOWN, None, False, {**stats, "stopped": "before CP-SAT"})
        time_limit = left if time_limit is None else min(time_limit, left)

    solver, outcome, lazy = solve_model(
        pm,
        time_limit=time_limit,
        seed=seed,
        num_workers=num_workers,
        hint=hint,
        deterministic_limit=deterministic_limit,
        parameters={**SOLVER_PARAMETERS, "interleave_search": num_workers > 1},
    )
    stats.update(
        status=str(outcome.status),
        wall_s=outcome.stats.get("wall_time_s"),
        deterministic_time=outcome.stats.get("deterministic_time", 0.0),
        **lazy,
    )
    if not outcome.has_solution:
        return Move(outcome.status, None, False, stats)
    labels = np.empty((len(rows), len(spaces)), dtype=np.int64)
    position = {int(r): k for k, r in enumerate(rows.tolist())}
    filled = np.zeros(enc.n_types, dtype=np.int64)
    for i, var in enumerate(pm.x):
        c = int(solver.value(var))
        if c:
            t = int(pm.pair_t[i])
            vec = to_global(pm.vectors[int(pm.pair_v[i])])
            for r in enc.rows[t][filled[t] : filled[t] + c].tolist():
                labels[position[r]] = vec[1:]
            filled[t] += c
    return Move(outcome.status, labels, outcome.status == Status.OPTIMAL, stats)
