"""The exact alternative for pattern sets: the least support added by virtual
transactions so that every PD pattern is α-protective and no inference channel opens
(docs/papers.md, HJ-12; not in Hajian et al.).

Variables ``x[t] >= 0`` count the virtual transactions equal to a candidate target t;
every support is linear in them: ``s'(X) = s(X) + Σ_{t ⊇ X} x[t]``. The candidates are
one family per run (docs/papers.md, HJ-12): {A, B} of every PD pattern plus, per context B, the union
of the protected groups seen with it (the targets that settle V9) for the slift family;
{B, C} for the elift family; and every target the greedy method used, so its solution
is always feasible here and the optimum never adds more support than the greedy method.
With these families slift, clift, olift and the elift family give linear constraints
(cross-multiplied, α = u/v); slift_d and slift_c need the product n1·n2, which CP-SAT
models exactly with a multiplication equality.

With k, the privacy step (Atzori et al.'s additive blocking) runs first, as in Alg. 5;
channels that have support 0 after it must stay 0 or reach k: ``c'(I, J) = Σ_{t: t ∩ J = I}
x[t]`` with a Boolean z, ``c' <= M z`` and ``c' >= k z``. Channel rows, and rows of PD
patterns whose measure was undefined before, are added lazily: solve, check the
solution, add what it violates, solve again.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterable
from dataclasses import dataclass, field

from ortools.sat.python import cp_model

from .._validation import check_option
from ..exceptions import IncompatibleRequirementError, SolverError
from ..release import Status, provenance
from ..solver._cpsat import check_num_workers, check_time_limit, random_seed, remaining, solve
from .detect import detect_discriminatory, domain_of
from .measures import ELIFT_FAMILY, contingency, measure_value
from .mining import canonical
from .patternset import PatternSet, Workspace, split_pattern
from .privacy import ChannelTable, k_anonymize
from .release import PatternRelease, PatternRequirements
from .sanitize import sanitize

__all__ = ["OBJECTIVES", "PatternsModel", "build_patterns_model", "candidate_targets", "exact_patterns"]

#: "support": Σ over the set's itemsets of the support added (HJ-12's objective);
#: "records": the number of virtual transactions.
OBJECTIVES = ("support", "records")


class _Lin:
    """A linear expression const + Σ coef·x[t] over candidate targets (exact ints)."""

    __slots__ = ("coefs", "const")

    def __init__(self, const: int = 0, coefs: dict | None = None):
        self.const = int(const)
        self.coefs = dict(coefs or {})

    def __add__(self, other: _Lin) -> _Lin:
        coefs = dict(self.coefs)
        for t, c in other.coefs.items():
            coefs[t] = coefs.get(t, 0) + c
        return _Lin(self.const + other.const, {t: c for t, c in coefs.items() if c})

    def __sub__(self, other: _Lin) -> _Lin:
        return self + other.scale(-1)

    def scale(self, factor: int) -> _Lin:
        return _Lin(self.const * factor, {t: c * factor for t, c in self.coefs.items()})

    @property
    def constant(self) -> bool:
        return not self.coefs


@dataclass
class PatternsModel:
    """A built model: the CP-SAT model, the x variables by target, the rows it holds."""

    model: cp_model.CpModel
    x: dict
    targets: list
    objective: object
    pattern_rows: list = field(default_factory=list)
    channel_rows: list = field(default_factory=list)
    upper: int = 0


def candidate_targets(ws: Workspace, measure: str, extra: Iterable[frozenset] = ()) -> list:
    """The candidate virtual transactions of one family (see the module docstring)."""
    roles = ws.patterns.roles
    out = {frozenset(t) for t in extra}
    unions: dict = {}
    for p in ws.patterns.pd_patterns():
        a, b = split_pattern(p, roles)
        if measure in ELIFT_FAMILY:
            out.add(b | {roles.decision})
        else:
            out.add(a | b)
            unions.setdefault(b, set()).update(a)
    if measure not in ELIFT_FAMILY and measure != "clift":  # clift compares values of one attribute
        for b, a_all in unions.items():
            out.add(frozenset(a_all) | b)
    return sorted(out, key=canonical)


class _Builder:
    def __init__(self, ws: Workspace, requirements: PatternRequirements, targets: list, upper: int, objective: str):
        self.ws = ws
        self.req = requirements
        self.targets = targets
        self.upper = upper
        self.m = cp_model.CpModel()
        self.x = {t: self.m.new_int_var(0, upper, f"x[{'&'.join(sorted(t))}]") for t in targets}
        self.total_upper = upper * max(len(targets), 1)
        self.cache: dict = {}
        self.domain = domain_of(ws.patterns) if requirements.measure == "clift" else ()
        # Objective: support added over the set's itemsets, or the number of records.
        coef = {t: (self._n_subsets(t) if objective == "support" else 1) for t in targets}
        self.coef = coef
        self.objective = sum(coef[t] * self.x[t] for t in targets)
        self.m.minimize(self.objective)

    def _n_subsets(self, t: frozenset) -> int:
        current = self.ws.current
        items = sorted(t)
        if len(items) <= 16:
            return max(1, sum(1 for r in range(1, len(items) + 1) for s in itertools.combinations(items, r) if frozenset(s) in current))
        return max(1, sum(1 for x in current if x <= t))

    def s(self, itemset: frozenset) -> _Lin:
        """s'(X) as a linear expression."""
        x = frozenset(itemset)
        found = self.cache.get(x)
        if found is None:
            found = _Lin(self.ws.supp(x), {t: 1 for t in self.targets if x <= t})
            self.cache[x] = found
        return found

    def _expr(self, e: _Lin):
        return e.const + sum(c * self.x[t] for t, c in e.coefs.items())

    def _var(self, e: _Lin, name: str):
        lo = e.const + sum(min(0, c) * self.upper for c in e.coefs.values())
        hi = e.const + sum(max(0, c) * self.upper for c in e.coefs.values())
        v = self.m.new_int_var(lo, hi, name)
        self.m.add(v == self._expr(e))
        return v, lo, hi

    def prod(self, e1: _Lin, e2: _Lin, name: str):
        """e1·e2: linear when one factor is constant, else an exact product variable."""
        if e1.constant:
            return self._expr(e2.scale(e1.const))
        if e2.constant:
            return self._expr(e1.scale(e2.const))
        v1, lo1, hi1 = self._var(e1, f"{name}.f1")
        v2, lo2, hi2 = self._var(e2, f"{name}.f2")
        corners = [lo1 * lo2, lo1 * hi2, hi1 * lo2, hi1 * hi2]
        p = self.m.new_int_var(min(corners), max(corners), name)
        self.m.add_multiplication_equality(p, [v1, v2])
        return p

    def add_pattern(self, p: frozenset) -> None:
        """α-protection of PD pattern p, cross-multiplied (α = u/v), strict: slack >= 1."""
        roles = self.ws.patterns.roles
        req = self.req
        u, v = req.alpha.numerator, req.alpha.denominator
        slack = 1 if req.reading == "strict" else 0
        a, b = split_pattern(p, roles)
        c = roles.decision
        a1, n1, s_b, s_bc = self.s(p), self.s(a | b), self.s(b), self.s(b | {c})
        a2, n2 = s_bc - a1, s_b - n1
        name = "&".join(sorted(p))
        f = req.measure
        m = self.m
        if f == "slift":
            m.add(u * self.prod(a2, n1, f"{name}.a2n1") - v * self.prod(a1, n2, f"{name}.a1n2") >= slack)
        elif f == "olift":
            m.add(u * self.prod(a2, n1 - a1, f"{name}.o1") - v * self.prod(a1, n2 - a2, f"{name}.o2") >= slack)
        elif f == "slift_d":
            m.add(u * self.prod(n1, n2, f"{name}.n1n2") - v * self.prod(a1, n2, f"{name}.a1n2")
                  + v * self.prod(a2, n1, f"{name}.a2n1") >= slack)
        elif f == "slift_c":
            m.add(v * self.prod(n1 - a1, n2, f"{name}.c1") - u * self.prod(n1, n2 - a2, f"{name}.c2") >= slack)
        elif f == "elift":
            m.add(u * self.prod(n1, s_bc, f"{name}.e1") - v * self.prod(a1, s_b, f"{name}.e2") >= slack)
        elif f == "elift_d":
            m.add(u * self.prod(n1, s_b, f"{name}.d1") + v * self.prod(n1, s_bc, f"{name}.d2")
                  - v * self.prod(a1, s_b, f"{name}.d3") >= slack)
        elif f == "elift_c":
            m.add(v * self.prod(n1 - a1, s_b, f"{name}.c1") - u * self.prod(n1, s_b - s_bc, f"{name}.c2") >= slack)
        elif f == "clift":
            # clift < α iff conf(v1) < α·conf(w) for every value w with conf(w) > 0.
            (item,) = a
            attr = item.split("=", 1)[0]
            for w in sorted(self.domain):
                if w == item or w.split("=", 1)[0] != attr:
                    continue
                n_w, a_w = self.s(b | {w}), self.s(b | {w, c})
                if a_w.const == 0 and a_w.constant:
                    continue
                m.add(u * self.prod(a_w, n1, f"{name}.{w}.1") - v * self.prod(a1, n_w, f"{name}.{w}.2") >= slack)
        else:  # pragma: no cover - measures are validated upstream
            raise SolverError(f"no exact model for measure {f!r}")

    def add_channel(self, lower: frozenset, upper: frozenset, k: int) -> None:
        """A channel of support 0: stays 0 or reaches k."""
        raisers = [t for t in self.targets if t & upper == lower]
        if not raisers:
            return
        name = f"z[{'&'.join(sorted(lower))}|{'&'.join(sorted(upper))}]"
        z = self.m.new_bool_var(name)
        total = sum(self.x[t] for t in raisers)
        self.m.add(total <= self.total_upper * z)
        self.m.add(total >= k * z)


def build_patterns_model(ws: Workspace, requirements: PatternRequirements, targets: list, *, upper: int,
                         objective: str = "support", patterns: Iterable = (), channels: Iterable = ()) -> PatternsModel:
    """The CP-SAT model over `targets` with α-protection rows for `patterns` and channel
    rows for `channels` ((I, J) pairs of support 0)."""
    builder = _Builder(ws, requirements, targets, upper, objective)
    patterns, channels = list(patterns), list(channels)
    for p in patterns:
        builder.add_pattern(p)
    for lower, upper_end in channels:
        builder.add_channel(lower, upper_end, requirements.k)
    return PatternsModel(builder.m, builder.x, targets, builder.objective, patterns, channels, upper)


def _apply(base: PatternSet, solution: dict) -> PatternSet:
    extra = tuple((t, n) for t, n in sorted(solution.items(), key=lambda kv: canonical(kv[0])) if n > 0)
    return base.with_ledger(base.ledger + extra)


def _opened(table: ChannelTable | None, solution: dict, k: int) -> list:
    """Channels of support 0 before that the solution raises to a value in (0, k)."""
    if table is None:
        return []
    raised: dict = {}
    for t, n in solution.items():
        if n <= 0:
            continue
        for ch in table.opened_by(t):
            key = (ch.lower, ch.upper)
            raised[key] = raised.get(key, 0) + n
    return sorted((key for key, n in raised.items() if 0 < n < k), key=lambda kv: (canonical(kv[0]), canonical(kv[1])))


def _support_added(ps: PatternSet, base: PatternSet) -> int:
    return sum(ps.support(x) - base.support(x) for x in ps.supports)


def exact_patterns(
    patterns: PatternSet,
    requirements: PatternRequirements,
    *,
    seed=None,
    time_limit: float | None = None,
    objective: str = "support",
    num_workers: int | None = None,
    use_hint: bool = True,
    max_iterations: int = 50,
) -> PatternRelease:
    """Exact publication: the least support added (or fewest virtual records) so that
    every PD pattern is α-protective and, with k, the set is k-anonymous and no channel
    the fairness step touches opens.

    Parameters
    ----------
    patterns : PatternSet
    requirements : PatternRequirements
        d-explainability is not modelled.
    seed : None, int or Generator
        CP-SAT's random seed.
    time_limit : float, optional
        Seconds for the whole method (all lazy rounds).
    objective : {"support", "records"}, default="support"
    num_workers : int, optional
        CP-SAT workers (default: every core).
    use_hint : bool, default=True
        Start from the greedy solution (and fall back to it if the solver ends worse).
    max_iterations : int, default=50
        Lazy row-generation rounds.

    Returns
    -------
    PatternRelease
        OPTIMAL (proven), FEASIBLE (time ran out with a solution, or the greedy solution
        kept), INFEASIBLE (no solution within the candidate family and the bound on
        each x[t]), UNKNOWN.

    Raises
    ------
    IncompatibleRequirementError
        For d-explainability.

    Examples
    --------
    >>> from fairanon.patterns import PatternSet, Roles, TransactionDB, PatternRequirements
    >>> db = TransactionDB.from_counts({("f",): 5, ("y",): 30, ("C",): 1, ("f", "y"): 5, ("f", "C"): 30, ("f", "y", "C"): 10})
    >>> ps = PatternSet.from_db(db, 1, Roles({"f", "y"}, "C"), backend="apriori")
    >>> rel = exact_patterns(ps, PatternRequirements("slift", 1.25), seed=0, num_workers=1)
    >>> rel.status, rel.objective
    (<Status.OPTIMAL: 'OPTIMAL'>, 1335)
    """
    started = time.perf_counter()
    caller = "exact_patterns"
    if requirements.d is not None:
        raise IncompatibleRequirementError("The exact method does not model d-explainability; use method='greedy' for d.")
    check_option(objective, "objective", caller, OBJECTIVES)
    time_limit = check_time_limit(time_limit, caller)
    workers = check_num_workers(num_workers, caller)
    deadline = None if time_limit is None else started + time_limit
    solver_seed = random_seed(seed)
    k = requirements.k

    ws = Workspace(patterns)
    table = None
    if k is not None:
        privacy = k_anonymize(ws, k)
        table = privacy.channels
    base = ws.result()
    greedy = sanitize(patterns, requirements.measure, requirements.alpha, k=k, reading=requirements.reading) if use_hint else None
    hint: dict = {}
    if greedy is not None and greedy.converged:
        for t, n in greedy.patterns.ledger[len(base.ledger):]:
            hint[t] = hint.get(t, 0) + n
    targets = candidate_targets(ws, requirements.measure, hint)
    if not targets:
        release_ps = base
        return PatternRelease(release_ps, patterns, requirements, Status.OPTIMAL, None, 0, 0,
                              provenance(caller, {"objective": objective}, [str(requirements)], seed, started))
    hint_obj = None
    if hint:
        ps_hint = _apply(base, hint)
        hint_obj = _support_added(ps_hint, base) if objective == "support" else sum(hint.values())
    upper = max(hint_obj or 0, 1000 * max(base.empty_support, 1))

    roles = base.roles
    domain = domain_of(base) if requirements.measure == "clift" else ()
    rows = [p for p in base.pd_patterns()
            if measure_value(requirements.measure, contingency(ws.supp, p, roles, measure=requirements.measure, domain=domain)) is not None]
    channel_rows: list = []
    outcome = None
    solution: dict = {}
    iterations = 0
    while True:
        iterations += 1
        pm = build_patterns_model(ws, requirements, targets, upper=upper, objective=objective,
                                  patterns=rows, channels=channel_rows)
        solver, outcome = solve(pm.model, time_limit=remaining(deadline), num_workers=workers, seed=solver_seed,
                                hint={pm.x[t]: hint.get(t, 0) for t in targets} if hint else None)
        if not outcome.has_solution:
            break
        solution = {t: int(solver.value(pm.x[t])) for t in targets}
        candidate = _apply(base, solution)
        new_rows = [p for p in detect_discriminatory(candidate, requirements.measure, requirements.alpha,
                                                     reading=requirements.reading).patterns() if p not in rows]
        new_channels = [ch for ch in _opened(table, solution, k) if ch not in channel_rows] if k else []
        if not new_rows and not new_channels:
            break
        if iterations >= max_iterations:
            raise SolverError(f"{caller}: lazy rows did not settle in {max_iterations} rounds")
        rows.extend(new_rows)
        channel_rows.extend(new_channels)

    status, reason = outcome.status, None
    if outcome.has_solution:
        released = _apply(base, solution)
        value = int(round(outcome.objective))
        if hint_obj is not None and value > hint_obj:  # a time-limited solve can end worse than its hint
            released, value, status = _apply(base, hint), hint_obj, Status.FEASIBLE
            reason = "the solver ended above the greedy solution; the greedy solution is kept"
    else:
        released, value = base, None
        if status == Status.INFEASIBLE:
            reason = (f"no set of virtual transactions of the candidate family ({len(targets)} targets, at most "
                      f"{upper} each) makes every PD pattern α-protective")
        else:
            reason = "the time limit ran out before a solution was found"
    privacy_support = _support_added(base, patterns.original())
    bound = None
    if objective == "support" and outcome.bound is not None and outcome.has_solution:
        bound = int(round(outcome.bound)) + privacy_support
    return PatternRelease(
        patterns=released,
        original=patterns,
        requirements=requirements,
        status=status,
        reason=reason,
        objective=_support_added(released, patterns.original()) if outcome.has_solution else None,
        bound=bound,
        provenance=provenance(
            caller, {"objective": objective, "use_hint": use_hint}, [str(requirements)], seed, started,
            solver=outcome.stats, iterations=iterations, targets=len(targets), pattern_rows=len(rows),
            channel_rows=len(channel_rows), model_objective=value, greedy_objective=hint_obj,
            privacy_support=privacy_support,
        ),
    )
