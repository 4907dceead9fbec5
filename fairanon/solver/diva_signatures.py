"""The exact existence model of DIVA's (k, Σ)-anonymization (Milani, Huang, Chiang,
EDBT 2021) over record types and visible signatures.

A release by suppression exists iff every record can be given a signature (its
protected value and the constraint attributes it shows) so that every signature is
shown by none or at least k records and every diversity constraint's count lies in its
bounds; records of one type are interchangeable (the argument is in
:mod:`fairanon.heuristics.diva.signatures`). The model therefore decides existence
exactly, whatever the number of records, with one integer per (type, signature):

- ``y[o]``: records of option o's type showing its signature; per type they sum to its
  size;
- per signature, ``0`` or at least k records (a Boolean ``used`` per signature), enforced
  by the literal of k-anonymity;
- per constraint, ``base + Σ_{o counts sigma} y[o]`` in [lower, upper], enforced by the
  constraint's literal.

An infeasible model names a minimal conflicting set of the constraints and of
k-anonymity by deletion: each member in turn is dropped (its literal fixed false, the
others true) and stays out if the rest still admits no solution. Fixed literals let
presolve and every worker use the constraints (a search under assumptions, one worker,
proves the same sets much more slowly on these models). k-anonymity is named when the
constraints alone could hold with classes of fewer records.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from ..release import Status
from . import _cpsat

__all__ = ["SignatureModel", "SignatureSolution", "build_signature_model", "solve_signatures"]


@dataclass(frozen=True)
class SignatureModel:
    """The data of the existence model.

    Attributes
    ----------
    k : int
    type_size : list of int
        Records per type.
    opt_type, opt_sig : list of int
        Per option: its type and its signature.
    opt_covers : list of list of int
        Per option: the constraints its records count for.
    base : list of int
        Per constraint: records counted by fixed classes outside the model.
    lower, upper : list of int
    labels : list of str
        Per constraint, how explanations name it.
    k_label : str
        How explanations name k-anonymity.
    """

    k: int
    type_size: list
    opt_type: list
    opt_sig: list
    opt_covers: list
    base: list
    lower: list
    upper: list
    labels: list
    k_label: str


@dataclass
class SignatureSolution:
    """What :func:`solve_signatures` found.

    Attributes
    ----------
    status : Status
        FEASIBLE (a solution), INFEASIBLE (proven: no release exists) or UNKNOWN.
    y : dict
        Option -> records, when FEASIBLE.
    conflict : list of str or None
        When INFEASIBLE and explained: the labels of a conflicting set.
    minimal : bool
        Whether every member of `conflict` was shown necessary.
    stats : dict
    """

    status: Status
    y: dict = field(default_factory=dict)
    conflict: list | None = None
    minimal: bool = False
    stats: dict = field(default_factory=dict)


def _shrink(data: SignatureModel, deadline: float | None, workers: int, seed: int) -> tuple[list[int], bool]:
    """A conflicting set of members (constraints, then k-anonymity) shrunk by deletion,
    and whether every member left was shown necessary (no solve ran out of time)."""
    members = list(range(len(data.lower) + 1))
    minimal = True
    for member in list(members):
        if len(members) == 1:
            break
        trial = [m for m in members if m != member]
        model, _, literals = build_signature_model(data)
        for i, lit in enumerate(literals):
            model.add(lit == int(i in trial))
        _, outcome = _cpsat.solve(model, time_limit=_cpsat.remaining(deadline), num_workers=workers, seed=seed)
        if outcome.status == Status.INFEASIBLE:
            members = trial
        elif outcome.status == Status.UNKNOWN:
            minimal = False
    return members, minimal


def build_signature_model(data: SignatureModel) -> tuple[cp_model.CpModel, list, list]:
    """The model (module docstring), its ``y`` variables and its literals (one per
    constraint, then k-anonymity's)."""
    m = cp_model.CpModel()
    n_constraints = len(data.lower)
    literals = [m.new_bool_var(f"enforce[{i}]") for i in range(n_constraints)]
    k_literal = m.new_bool_var("enforce[k]")
    y = [m.new_int_var(0, int(data.type_size[t]), f"y[{o}]") for o, t in enumerate(data.opt_type)]
    by_type: list[list] = [[] for _ in data.type_size]
    by_sig: dict[int, list[int]] = {}
    terms: list[list] = [[] for _ in range(n_constraints)]
    for o, (t, s, covers) in enumerate(zip(data.opt_type, data.opt_sig, data.opt_covers)):
        by_type[t].append(y[o])
        by_sig.setdefault(s, []).append(o)
        for i in covers:
            terms[int(i)].append(y[o])
    for t, members in enumerate(by_type):
        m.add(sum(members) == int(data.type_size[t]))
    for s, options in by_sig.items():
        size = sum(y[o] for o in options)
        cap = sum(int(data.type_size[data.opt_type[o]]) for o in options)
        used = m.new_bool_var(f"used[{s}]")
        m.add(size <= cap * used)
        if data.k > 1:
            m.add(size >= data.k * used).only_enforce_if(k_literal)
    for i in range(n_constraints):
        count = int(data.base[i]) + sum(terms[i])
        m.add(count >= int(data.lower[i])).only_enforce_if(literals[i])
        m.add(count <= int(data.upper[i])).only_enforce_if(literals[i])
    return m, y, literals + [k_literal]


def solve_signatures(
    data: SignatureModel,
    *,
    time_limit: float | None = None,
    seed=None,
    num_workers: int | None = None,
    hint: Mapping[int, int] | None = None,
    explain: bool = True,
) -> SignatureSolution:
    """Decide whether a release exists (module docstring).

    Parameters
    ----------
    data : SignatureModel
    time_limit : float, optional
        Seconds for the solve and, when infeasible, the explanation together.
    seed : None, int or numpy.random.Generator
    num_workers : int, optional
        Default: every core (see :func:`fairanon.solver._cpsat.check_num_workers`).
    hint : mapping of option -> records, optional
        A (possibly infeasible) solution to start from, e.g.
        :func:`~fairanon.heuristics.diva.signatures.descend`'s.
    explain : bool, default=True
        When infeasible, name a minimal conflicting set.

    Returns
    -------
    SignatureSolution

    Examples
    --------
    Two records of one type; a constraint wants exactly one of them visible, which needs
    a class of one record:

    >>> data = SignatureModel(k=2, type_size=[2], opt_type=[0, 0], opt_sig=[0, 1],
    ...                       opt_covers=[[0], []], base=[0], lower=[1], upper=[1],
    ...                       labels=["sigma"], k_label="2-anonymity")
    >>> out = solve_signatures(data, seed=0, num_workers=1)
    >>> out.status, out.conflict, out.minimal
    (<Status.INFEASIBLE: 'INFEASIBLE'>, ['sigma', '2-anonymity'], True)
    """
    started = time.perf_counter()
    deadline = None if time_limit is None else started + time_limit
    workers = _cpsat.check_num_workers(num_workers, "solve_signatures")
    solver_seed = _cpsat.random_seed(seed)
    model, y, literals = build_signature_model(data)
    for lit in literals:
        model.add(lit == 1)
    hint_map = None if hint is None else {y[o]: int(hint.get(o, 0)) for o in range(len(y))}
    solver, outcome = _cpsat.solve(model, time_limit=_cpsat.remaining(deadline), num_workers=workers,
                                   seed=solver_seed, hint=hint_map)
    out = SignatureSolution(status=outcome.status, stats=dict(outcome.stats))
    if outcome.has_solution:
        out.status = Status.FEASIBLE
        out.y = {o: int(solver.value(v)) for o, v in enumerate(y) if solver.value(v)}
    elif outcome.status == Status.INFEASIBLE and explain:
        labels = list(data.labels) + [data.k_label]
        core, minimal = _shrink(data, deadline, workers, solver_seed)
        out.conflict = [labels[g] for g in core]
        out.minimal = minimal
    out.stats["elapsed_s"] = time.perf_counter() - started
    return out

