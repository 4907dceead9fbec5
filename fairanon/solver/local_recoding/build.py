"""Building the exact local-recoding model: variables, links, one call per requirement.

- ``x[t,v]`` in 0..w_t: how many records of type t are released as vector v (v must
  cover t: each label generalizes t's value);
- ``z[v]``: vector v is used; ``x[t,v] <= w_t * z[v]`` and ``y[v] = sum_t x[t,v]``.

Classes have no identity beyond their vector, so the model has no slot symmetry, and
the disaggregated links give a useful LP bound (a type with fewer than k records
cannot stay alone on its own vector). Each requirement then adds its family's
constraints (:mod:`.privacy`, :mod:`.diversity`, :mod:`.alpha`), guarded by an
enforcement literal when the model is built to explain an infeasibility.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from ortools.sat.python import cp_model

from ...exceptions import IncompatibleRequirementError
from ...models.objectives import Objective
from ...models.requirements import (
    AlphaProtection,
    AverageRisk,
    DiversityConstraint,
    KAnonymity,
    LDiversity,
    Requirement,
    SampleUniqueness,
    TCloseness,
    requirement_targets,
)
from .alpha import _add_alpha
from .diversity import _add_diversity
from .encoding import Encoding, _candidates, _use_closure, check_deadline
from .class_sizes import set_size_objective
from .model import CHECK_EVERY, LocalRecodingModel, Rest, _set_objective
from .privacy import _add_kanonymity, _add_risk, _add_target_requirement

__all__ = ["build_model"]


def build_model(
    enc: Encoding,
    requirements: Sequence[Requirement],
    *,
    objective: str = "ncp",
    closure: bool | None = None,
    prune: bool = True,
    explain: bool = False,
    max_vars: int = 200_000,
    max_contexts: int = 5_000,
    extra_vectors: Sequence[tuple] = (),
    rest: Rest | None = None,
    max_cost: float | None = None,
    type_cap: np.ndarray | None = None,
    chains: int | None = None,
    deadline: float | None = None,
    check_pairs: Callable[[int], None] | None = None,
) -> LocalRecodingModel:
    """The weighted-type model of :mod:`fairanon.solver.local_recoding`.

    Parameters
    ----------
    enc : Encoding
        From :func:`encode`.
    requirements : sequence of Requirement
    objective : {"stars", "generalized", "discernibility", "ncp", "lm"} or Objective
        A privacy or lexicographic objective (:mod:`.class_sizes`) as
        :func:`~fairanon.models.objectives.objective_spec` returns it.
    closure : bool, optional
        Candidate vectors = the join closure of the types (default: when every
        requirement is union-monotone and the objective is not "discernibility").
    prune : bool, default=True
        Drop vectors that cover fewer than k records.
    explain : bool, default=False
        Guard each requirement by an enforcement literal, with no objective and no
        requirement-dependent pruning (for :func:`fairanon.solver._cpsat.explain`).
    max_vars, max_contexts : int
        Size limits (see :func:`~fairanon.solver.local_recoding.local_recoding`).
    extra_vectors : sequence of tuple
        More candidate vectors (protected code, label id per attribute), e.g. the
        current classes of a neighbourhood and of the classes around it.
    rest : Rest, optional
        The fixed rest of the table when `enc` types only a neighbourhood's records
        (:func:`~fairanon.solver.local_recoding.type_table` with positions).
    max_cost : float, optional
        Leave out the join-closure vectors whose NCP per record exceeds this (a
        restriction: the model is then exact over the cheaper vectors only).
    type_cap : numpy.ndarray, optional
        Per type, the largest NCP per record of a vector it may take, `extra_vectors`
        aside (a restriction too).
    chains : int, optional
        Instead of the join closure, the joins of each type with its nearest 1 to
        ``chains - 1`` neighbours (a restriction, for neighbourhoods whose closure is too
        large).
    deadline : float, optional
        A ``time.perf_counter`` value: the build looks at it as it goes and, once it has
        passed, stops with
        :class:`~fairanon.solver.local_recoding.encoding.BuildStopped` (caught by
        :func:`~fairanon.solver.local_recoding.local_recoding`, which then reports the
        time ran out).
    check_pairs : callable, optional
        Called with the number of assignment variables once the candidates are listed,
        before any variable is created (the memory check of
        :func:`~fairanon.solver.local_recoding.memory.check_pairs_memory`).
    """
    if closure is None:
        closure = _use_closure(requirements, objective) and not explain
    k = max([r.k for r in requirements if isinstance(r, KAnonymity)] + [1])
    held_of = None
    if rest is not None and rest.held is not None:
        held_of = lambda vec: rest.held(vec)[0]  # noqa: E731
    cands = _candidates(
        enc, closure, k if (prune and not explain) else 1, max_vars, extra_vectors, held_of,
        max_cost, type_cap, chains, deadline,
    )
    vectors, pair_t, pair_v = cands.vectors, cands.pair_t, cands.pair_v
    if check_pairs is not None:
        check_pairs(len(pair_t))
    held = np.array([held_of(vec) if held_of else 0 for vec in vectors], dtype=np.int64)
    model = cp_model.CpModel()
    w = enc.weight
    x = []
    for i, (t, v) in enumerate(zip(pair_t.tolist(), pair_v.tolist())):
        if i % CHECK_EVERY == 0:
            check_deadline(deadline, "creating the assignment variables")
        if w[t] == 1:
            x.append(model.new_bool_var(f"x[{t},{v}]"))
        else:
            x.append(model.new_int_var(0, int(w[t]), f"x[{t},{v}]"))
    n_vec = len(vectors)
    order = np.argsort(pair_v, kind="stable")
    by_vector = (
        np.split(order, np.searchsorted(pair_v[order], np.arange(1, n_vec))) if n_vec else []
    )
    by_type = np.split(np.arange(len(pair_t)), np.searchsorted(pair_t, np.arange(1, enc.n_types)))
    z = [model.new_bool_var(f"z[{v}]") for v in range(n_vec)]
    inside = []
    for v in range(n_vec):
        if v % CHECK_EVERY == 0:
            check_deadline(deadline, "summing the classes")
        inside.append(cp_model.LinearExpr.sum([x[i] for i in by_vector[v]]))
    # A class is every record released as its vector, outside ones included.
    y = [inside[v] + int(held[v]) if held[v] else inside[v] for v in range(n_vec)]
    reach = [int(w[pair_t[by_vector[v]]].sum()) + int(held[v]) for v in range(n_vec)]

    # Every record is released exactly once.
    for t in range(enc.n_types):
        if t % CHECK_EVERY == 0:
            check_deadline(deadline, "releasing every record once")
        members = by_type[t] if t < len(by_type) else []
        model.add(cp_model.LinearExpr.sum([x[i] for i in members]) == int(w[t])).with_name(
            f"release[{t}]"
        )
    # A vector holds records only if used, and a used vector holds at least one.
    weights = w[pair_t].tolist()
    for v in range(n_vec):
        if v % 64 == 0:  # a vector links up to a type per record
            check_deadline(deadline, "linking the classes to their records")
        zv = z[v]
        for i in by_vector[v].tolist():
            if weights[i] == 1:
                model.add_implication(x[i], zv)
            else:
                model.add(x[i] <= weights[i] * zv)
        model.add(inside[v] >= zv).with_name(f"used[{v}]")

    pm = LocalRecodingModel(
        model,
        enc,
        vectors,
        pair_t,
        pair_v,
        x,
        z,
        y,
        [],
        objective,
        1,
        None,
        np.zeros(0, dtype=np.int64),
        [],
        0,
        cands.mode,
        by_vector,
        rest,
        held,
        deadline=deadline,
    )
    for index, req in enumerate(requirements):
        lit = model.new_bool_var(f"enforce[{index}]") if explain else None
        if explain:
            pm.literals.append(lit)
        guard = [lit] if lit is not None else []
        if isinstance(req, KAnonymity):
            _add_kanonymity(pm, req, index, guard)
        elif isinstance(req, (LDiversity, TCloseness)):
            for name in requirement_targets(enc.instance.schema, req):
                _add_target_requirement(pm, req, index, enc.targets[name], guard, reach)
        elif isinstance(req, DiversityConstraint):
            _add_diversity(pm, req, index, guard)
        elif isinstance(req, AlphaProtection):
            _add_alpha(pm, req, index, guard, max_contexts)
        elif isinstance(req, (AverageRisk, SampleUniqueness)):
            _add_risk(pm, req, index, guard)
        else:  # pragma: no cover - validate_requirements accepts no other kind
            raise IncompatibleRequirementError(f"cpsat cannot enforce {req}.")

    if not explain:
        if isinstance(objective, Objective):
            set_size_objective(pm, reach)
        else:
            _set_objective(pm, reach)
    return pm
