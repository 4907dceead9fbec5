"""Shared CP-SAT plumbing: solver parameters, the status mapping, explained infeasibility.

Every exact model in :mod:`fairanon.solver` is solved through :func:`solve`, which sets
the time limit, the worker count and a random seed derived from the caller's seed,
applies solution hints, optionally keeps the solver log or writes the model to a file,
and maps CP-SAT's status onto :class:`~fairanon.release.Status`:

============= ===================================================================
CP-SAT        fairanon
============= ===================================================================
OPTIMAL       ``Status.OPTIMAL`` with the objective (proven optimal)
FEASIBLE      ``Status.FEASIBLE`` with the objective, the proven bound and the gap
INFEASIBLE    ``Status.INFEASIBLE`` (no release exists); :func:`explain` names the
              requirements that conflict
UNKNOWN       ``Status.UNKNOWN`` (the time ran out before any solution)
MODEL_INVALID raises :class:`~fairanon.exceptions.SolverError` (a bug, not the user's)
============= ===================================================================

No relative or absolute gap limit is ever set: ``sat_parameters.proto`` warns that a
solve stopped by a gap limit still reports OPTIMAL, so OPTIMAL here always means proven.

Ctrl-C stops a solve at once and reaches the caller as :class:`KeyboardInterrupt`
(see :func:`run_interruptibly`).
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ortools.sat.python import cp_model

from .._validation import check_random_state, check_time_limit
from ..exceptions import InvalidParameterError, SolverError
from ..instances.files import interrupts_deferred
from ..release import Status

__all__ = [
    "DEFAULT_WORKERS",
    "DIRECT_GROUPS",
    "Outcome",
    "check_num_workers",
    "check_time_limit",
    "explain",
    "random_seed",
    "remaining",
    "run_interruptibly",
    "solve",
]

_STATUS = {
    cp_model.OPTIMAL: Status.OPTIMAL,
    cp_model.FEASIBLE: Status.FEASIBLE,
    cp_model.INFEASIBLE: Status.INFEASIBLE,
    cp_model.UNKNOWN: Status.UNKNOWN,
}


@dataclass
class Outcome:
    """What one CP-SAT solve ended with.

    Attributes
    ----------
    status : Status
    solver_status : str
        CP-SAT's own status name.
    objective, bound : float or None
        The objective of the best solution and the proven bound (model units).
    gap : float or None
        ``(objective - bound) / |objective|`` (0 when both are 0); None without a solution.
    stats : dict
        Wall time, conflicts, branches, workers, seed.
    log : str or None
        The solver log, when asked for.
    """

    status: Status
    solver_status: str
    objective: float | None = None
    bound: float | None = None
    gap: float | None = None
    stats: dict = field(default_factory=dict)
    log: str | None = None

    @property
    def has_solution(self) -> bool:
        return self.status in (Status.OPTIMAL, Status.FEASIBLE)


def random_seed(seed) -> int:
    """CP-SAT's ``random_seed`` for a fairanon seed (None, an int or a Generator).

    An int maps to itself (modulo 2**31), None to 0, a Generator to one draw from it,
    so the same seed always gives the same solver seed.

    >>> random_seed(7), random_seed(None)
    (7, 0)
    """
    if seed is None:
        return 0
    if isinstance(seed, int) and not isinstance(seed, bool):
        return seed % 2**31
    rng = check_random_state(seed)
    return int(rng.integers(0, 2**31 - 1))


#: Workers used when none are given. CP-SAT's portfolio only runs its strongest bound
#: workers (LP with cuts, core-based search) from about 8 workers on; they share the cores.
#: Measured on a 2-core machine: the (10, Sigma)-anonymization of German credit is proven
#: optimal in about 4 s with 8 workers and not within 60 s with 2.
DEFAULT_WORKERS = 8


#: The most CP-SAT workers its parameter (an int32) can name.
MAX_WORKERS = 2**31 - 1


def check_num_workers(num_workers, caller: str) -> int:
    """None (``max(8, cores)``, see :data:`DEFAULT_WORKERS`) or a positive int."""
    if num_workers is None:
        return max(DEFAULT_WORKERS, os.cpu_count() or 1)
    if (isinstance(num_workers, bool) or not isinstance(num_workers, int) or num_workers < 1
            or num_workers > MAX_WORKERS):
        raise InvalidParameterError(
            f"The 'num_workers' parameter of {caller} must be None (the default portfolio) "
            f"or an int in [1, {MAX_WORKERS}] (CP-SAT's parameter is a 32-bit int). "
            f"Got {num_workers!r} instead."
        )
    return num_workers


def remaining(deadline: float | None) -> float | None:
    """Seconds left before `deadline` (a ``time.perf_counter`` value), at least 0.01."""
    if deadline is None:
        return None
    return max(0.01, deadline - time.perf_counter())


def run_interruptibly(solver: cp_model.CpSolver, model: cp_model.CpModel) -> int:
    """``solver.solve(model)``, ended by Ctrl-C with a :class:`KeyboardInterrupt`.

    CP-SAT's own Ctrl-C handler (``catch_sigint_signal``) is turned off: it ends the
    solve as if its time had run out, so the run carried on and wrote its outputs, and
    it leaves SIGINT at the system's default afterwards, so the next Ctrl-C killed the
    process without a word. Python raises KeyboardInterrupt in the main thread only,
    and only between bytecodes, never while that thread waits inside the solver; so from
    the main thread the solve runs in a helper thread while this one waits where the
    interrupt can land, then stops the search (``StopSearch``), waits for the helper and
    re-raises. Elsewhere (a worker thread) the solve runs directly.

    A process that ignores SIGINT (started in the background by a non-interactive
    shell, or by nohup) keeps ignoring it here, as Python itself does: it installs no
    KeyboardInterrupt handler then, and Ctrl-C does not stop the solve.
    """
    solver.parameters.catch_sigint_signal = False
    if threading.current_thread() is not threading.main_thread():
        return solver.solve(model)
    background = _BackgroundSolve(solver, model)
    try:
        background.thread.start()
        # Event.wait, not Thread.join: an interrupted join can leave the thread marked
        # as finished while it still runs (CPython gh-90882).
        while not background.done.wait(0.1):
            pass
    except KeyboardInterrupt:
        background.cancel()
        raise
    background.thread.join()
    if background.error is not None:
        raise background.error
    return background.code


class _BackgroundSolve:
    """One solve in a helper thread, which the main thread can cancel at any moment,
    even before the thread has begun (Ctrl-C can land inside ``Thread.start``)."""

    def __init__(self, solver: cp_model.CpSolver, model: cp_model.CpModel):
        self.solver, self.model = solver, model
        self.lock = threading.Lock()
        self.cancelled = self.running = False
        self.done = threading.Event()
        self.code: int | None = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._work, name="cp-sat-solve", daemon=True)

    def _work(self) -> None:
        try:
            with self.lock:
                if self.cancelled:
                    return
                self.running = True
            self.code = self.solver.solve(self.model)
        except BaseException as exc:  # noqa: BLE001 - raised again in the waiting thread
            self.error = exc
        finally:
            self.done.set()

    def cancel(self) -> None:
        """Make sure no solve runs on: one left running when Python exits aborts it.

        Further Ctrl-C presses are held back meanwhile; the stop is asked again every
        0.1 s, as one asked before CP-SAT has begun is lost."""
        with interrupts_deferred():
            with self.lock:
                self.cancelled = True
                running = self.running
            while running and not self.done.is_set():
                self.solver.stop_search()
                self.done.wait(0.1)


def solve(
    model: cp_model.CpModel,
    *,
    time_limit: float | None = None,
    num_workers: int = 1,
    seed: int = 0,
    hint: Mapping[Any, int] | None = None,
    assumptions: Sequence[Any] = (),
    log: bool = False,
    export: str | os.PathLike | None = None,
    deterministic_limit: float | None = None,
    parameters: Mapping[str, Any] | None = None,
) -> tuple[cp_model.CpSolver, Outcome]:
    """Solve `model` once and map the result (see the module docstring).

    Parameters
    ----------
    model : CpModel
    time_limit : float, optional
        Wall-clock seconds (``max_time_in_seconds``).
    num_workers : int, default=1
    seed : int, default=0
        CP-SAT's ``random_seed``.
    hint : mapping of variable -> value, optional
        A (partial) solution, e.g. from a heuristic release; replaces earlier hints.
    assumptions : sequence of Boolean literals
        Solved under these assumptions (``sufficient_assumptions_for_infeasibility``
        is only filled with one worker).
    log : bool, default=False
        Keep CP-SAT's search log in :attr:`Outcome.log`.
    export : path, optional
        Write the model (with hints) to this file first: ``.pb.txt`` as text, else binary.
    deterministic_limit : float, optional
        ``max_deterministic_time``, a limit that does not depend on the machine's load.
    parameters : mapping, optional
        More CP-SAT parameters by name (e.g. ``linearization_level``).

    Raises
    ------
    SolverError
        If CP-SAT reports MODEL_INVALID (the validation message is included).
    """
    model.clear_hints()
    if hint:
        for var, value in hint.items():
            model.add_hint(var, int(value))
    model.clear_assumptions()
    if assumptions:
        model.add_assumptions(list(assumptions))
    if export is not None:
        try:
            path = os.fspath(export)
        except TypeError:
            raise InvalidParameterError(
                f"The 'export' parameter must be a file path. Got {export!r} instead."
            ) from None
        if not model.export_to_file(path):
            raise InvalidParameterError(
                f"The model could not be written to {path!r} (the 'export' parameter)."
            )
    solver = cp_model.CpSolver()
    params = solver.parameters
    if time_limit is not None:
        params.max_time_in_seconds = float(time_limit)
    if deterministic_limit is not None:
        params.max_deterministic_time = float(deterministic_limit)
    params.num_workers = int(num_workers)
    params.random_seed = int(seed)
    for name, value in (parameters or {}).items():
        setattr(params, name, value)
    lines: list[str] = []
    if log:
        params.log_search_progress = True
        params.log_to_stdout = False
        solver.log_callback = lines.append
    code = run_interruptibly(solver, model)
    if code == cp_model.MODEL_INVALID:
        raise SolverError(f"CP-SAT rejected a fairanon model as invalid: {model.validate()}")
    status = _STATUS.get(code)
    if status is None:  # pragma: no cover - every documented status is mapped above
        raise SolverError(f"CP-SAT returned an unexpected status {solver.status_name(code)}.")
    outcome = Outcome(
        status=status,
        solver_status=solver.status_name(code),
        stats={
            "solver": "CP-SAT",
            "solver_status": solver.status_name(code),
            "wall_time_s": solver.wall_time,
            "deterministic_time": solver.response_proto.deterministic_time,
            "conflicts": solver.num_conflicts,
            "branches": solver.num_branches,
            "num_workers": int(num_workers),
            "random_seed": int(seed),
        },
        log="\n".join(lines) if log else None,
    )
    if outcome.has_solution and model.has_objective():
        obj, bound = solver.objective_value, solver.best_objective_bound
        outcome.objective, outcome.bound = obj, bound
        if status == Status.OPTIMAL or obj == bound:
            outcome.gap = 0.0
        else:
            outcome.gap = abs(obj - bound) / abs(obj) if obj else math.inf
        outcome.stats.update(objective=obj, bound=bound, gap=outcome.gap)
    return solver, outcome


#: Groups up to which :func:`explain` shrinks the whole set directly; above, it first
#: takes the sufficient assumptions of one assumption solve.
DIRECT_GROUPS = 8


def explain(
    build: Callable[[], tuple[cp_model.CpModel, Sequence[Any]]],
    n_groups: int,
    *,
    deadline: float | None = None,
    seed: int = 0,
) -> tuple[list[int] | None, bool]:
    """The requirement groups that conflict, shrunk by deletion.

    Parameters
    ----------
    build : callable
        Returns a fresh model (no objective) and one enforcement literal per group of
        constraints (group i is enforced iff literal i is true).
    n_groups : int
    deadline : float, optional
        A ``time.perf_counter`` value after which the search stops.
    seed : int

    Returns
    -------
    conflict : list of int or None
        Indices of groups that together admit no solution: every group (at most
        :data:`DIRECT_GROUPS`), else the sufficient assumptions of one single-worker
        assumption solve; then shrunk by deletion (a group is dropped if the others
        still conflict). Empty when the model admits no solution without any group (the
        structure alone conflicts). None if the whole set was not proven infeasible in
        the time.
    minimal : bool
        Whether every group of `conflict` was shown to be necessary.

    Notes
    -----
    Each check solves a copy of the model with every literal fixed (the groups tried
    true, the others false) rather than under assumptions: presolve then removes the
    groups left out and simplifies with the others, which proves these small models
    about four times faster (0.13 against 0.5 CPU seconds a solve on DIVA's Table 1
    with four requirements). The groups still to try share the time left equally, so
    one hard check cannot take the time of the others (it then counts as undecided and
    its group stays).
    """
    model, literals = build()
    lits = list(literals)

    def status(groups: Sequence[int], share: int = 1) -> Status:
        trial = model.clone()
        for i, lit in enumerate(lits):
            trial.add(trial.get_bool_var_from_proto_index(lit.index) == int(i in groups))
        left = remaining(deadline)
        _, out = solve(trial, time_limit=None if left is None else left / share, num_workers=1, seed=seed)
        return out.status

    if n_groups <= DIRECT_GROUPS:
        core = list(range(n_groups))
        if status(core) != Status.INFEASIBLE:
            return None, False
    else:
        solver, outcome = solve(
            model, time_limit=remaining(deadline), num_workers=1, seed=seed, assumptions=lits
        )
        if outcome.status != Status.INFEASIBLE:
            return None, False
        index = {lit.index: i for i, lit in enumerate(lits)}
        core = sorted(
            {index[i] for i in solver.sufficient_assumptions_for_infeasibility() if i in index}
        )
        if not core:  # infeasible without any requirement: the structure alone conflicts
            return [], True
    minimal = True
    tried = list(core)
    for k, group in enumerate(tried):
        if len(core) == 1:
            break
        trial = [g for g in core if g != group]
        found = status(trial, share=len(tried) - k)
        if found == Status.INFEASIBLE:
            core = trial
        elif found == Status.UNKNOWN:
            minimal = False
    if len(core) == 1:
        # Deletion stops at one group without trying none: the structure alone may
        # conflict (no group is then to blame).
        found = status([])
        if found == Status.INFEASIBLE:
            return [], True
        if found == Status.UNKNOWN:
            minimal = False
    return core, minimal
