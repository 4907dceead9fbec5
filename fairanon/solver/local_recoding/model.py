"""The built CP-SAT model of local recoding, and its objectives.

:class:`LocalRecodingModel` holds the model and what is needed to read its solutions back:
one assignment variable ``x[t,v]`` per (type, candidate vector) pair, the used-vector
literals ``z[v]`` and the class sizes ``y[v]``. The objectives other than
discernibility are sums of exact per-record pair costs, scaled to integers by the
common denominator of the label losses; discernibility is Bayardo and Agrawal's C_DM
as the verifier's report computes it (:func:`fairanon.models.metrics.discernibility`):
the records of a vector that is ``*`` on every generalizable quasi-identifier are
suppressed and cost n (the table's records) each, linearly; any other class costs its
squared size, a CP-SAT integer product.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from ortools.sat.python import cp_model

from ...exceptions import InvalidParameterError
from .encoding import Encoding, check_deadline

__all__ = ["CHECK_EVERY", "LocalRecodingModel", "Rest"]

#: Steps of a build loop between two looks at the deadline (each step adds a few
#: variables or constraints: microseconds).
CHECK_EVERY = 1024


@dataclass
class Rest:
    """The rest of the table, fixed while the records of a neighbourhood are re-solved.

    Classes are released vectors, so a record of the neighbourhood released as the
    vector of an outside class joins that class: per-class requirements (k, l, t) are
    then checked on the merged class. Global requirements see the outside records as
    constants: a diversity constraint counts the outside records showing its target,
    alpha-protection adds the outside records of every context.

    Attributes
    ----------
    n_rows : int
        Records of the whole table.
    held : callable, optional
        ``held(vector)`` for a vector (protected code, then the model's label id per
        attribute): the number of outside records released as it and, per target of
        l-diversity or t-closeness, their counts per value (whole-table value codes).
    shown : dict of int -> int
        Per requirement index (diversity constraints): outside records showing the
        target values.
    alpha_cells : tuple of int, optional
        The whole table's 4-fold counts (protected and negative, protected and
        positive, unprotected and negative, unprotected and positive).
    alpha_context : callable, optional
        ``alpha_context(attribute positions, label ids)``: the 4-fold counts of the
        outside records in that context (itemset of released labels).
    classes : int
        Classes of the outside records (for average risk).
    uniques : int
        Those of them holding one record (for sample uniques).
    """

    n_rows: int
    held: Callable | None = None
    shown: dict = field(default_factory=dict)
    alpha_cells: tuple | None = None
    alpha_context: Callable | None = None
    classes: int = 0
    uniques: int = 0


@dataclass
class LocalRecodingModel:
    """A built CP-SAT model and what is needed to read its solutions back.

    Attributes
    ----------
    model : CpModel
    encoding : Encoding
    vectors : list of tuple
        Candidate released vectors (protected code, label id per attribute).
    pair_t, pair_v : numpy.ndarray
        Type and vector of each assignment variable ``x[i]``.
    x : list of IntVar
    z : list of BoolVar
    literals : list of BoolVar
        One enforcement literal per requirement (explanation models only).
    objective : str or Objective
        A loss objective's name, or a privacy or lexicographic
        :class:`~fairanon.models.objectives.Objective` (:mod:`.class_sizes`).
    scale : int
        Model objective = true objective x scale (of the loss term).
    objective_expr : LinearExpr or None
    entropy : list of (vector, counts vars, requirement, target)
        Classes to check exactly after a solve.
    n_contexts : int
        alpha-protection contexts modelled.
    mode : str
        "closure" or "all" (candidate vectors).
    rest : Rest or None
        The fixed rest of the table when the model re-solves a neighbourhood.
    held : numpy.ndarray of int
        Per vector, the outside records already released as it (zeros without `rest`).
    deadline : float or None
        A ``time.perf_counter`` value: the build stops there
        (:class:`~fairanon.solver.local_recoding.encoding.BuildStopped`).
    """

    model: cp_model.CpModel
    encoding: Encoding
    vectors: list[tuple]
    pair_t: np.ndarray
    pair_v: np.ndarray
    x: list
    z: list
    y: list
    literals: list
    objective: str
    scale: int
    objective_expr: object
    pair_cost: np.ndarray
    entropy: list
    n_contexts: int
    mode: str
    by_vector: list[np.ndarray] = field(default_factory=list)
    rest: Rest | None = None
    held: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # Objectives of the class sizes (:mod:`.class_sizes`): the terms, most important
    # first, the size variable and reach of each vector, the privacy_log scale and the
    # prime exponents of its certification.
    terms: list = field(default_factory=list)
    sizes: list = field(default_factory=list)
    reach: list = field(default_factory=list)
    log_scale: int = 0
    exponents: dict | None = None
    deadline: float | None = None

    def check(self, i: int, stage: str) -> None:
        """Stop the build (:class:`~fairanon.solver.local_recoding.encoding.BuildStopped`)
        when the deadline has passed; looked at every :data:`CHECK_EVERY` steps `i` of a
        loop."""
        if i % CHECK_EVERY == 0:
            check_deadline(self.deadline, stage)

    def held_counts(self, target: str, v: int, m: int) -> list[int]:
        """Outside records released as vector v, per value of `target` (zeros without
        a rest)."""
        if self.rest is None or not self.held[v]:
            return [0] * m
        counts = self.rest.held(self.vectors[v])[1].get(target)
        return [0] * m if counts is None else [int(c) for c in counts]


def _lcm(values) -> int:
    out = 1
    for v in values:
        out = out * v // math.gcd(out, v)
    return out


def _pair_costs(
    enc: Encoding, vectors: list[tuple], pair_t, pair_v, objective: str,
    deadline: float | None = None,
) -> tuple[np.ndarray, int]:
    """Integer cost of every (type, vector) pair and the scale: cost / scale is the exact
    objective contribution of one record. Past `deadline` (``time.perf_counter``),
    :class:`BuildStopped` between attributes."""
    n_pairs = len(pair_t)
    if objective == "discernibility":
        return np.zeros(n_pairs, dtype=np.int64), 1
    arr = np.array(vectors, dtype=np.int64).reshape(len(vectors), enc.d + 1)
    per_attr = []
    for a, space in enumerate(enc.spaces):
        check_deadline(deadline, "costing the candidate classes")
        labels = arr[pair_v, a + 1]
        if objective == "stars":
            per_attr.append(([Fraction(int(x)) for x in space.star], labels))
        elif objective == "generalized":
            own = space.own[enc.qi[pair_t, a]]
            per_attr.append(([Fraction(0), Fraction(1)], (labels != own).astype(np.int64)))
        else:
            per_attr.append((space.ncp if objective == "ncp" else space.lm, labels))
    scale = _lcm({c.denominator for table, _ in per_attr for c in table})
    if scale * max(enc.d, 1) * int(enc.weight.sum()) >= 2**60:
        raise InvalidParameterError(
            f"The {objective!r} objective of instance {enc.instance.name!r} needs a common "
            f"denominator of {scale}, too large for exact integer costs; round numeric values "
            "or bin them first."
        )
    costs = np.zeros(n_pairs, dtype=np.int64)
    for table, index in per_attr:
        check_deadline(deadline, "costing the candidate classes")
        scaled = np.array([int(c * scale) for c in table], dtype=np.int64)
        costs += scaled[index]
    return costs, scale


def suppressed_vectors(enc: Encoding, vectors: list[tuple]) -> np.ndarray:
    """Per vector: is it ``*`` on every generalizable quasi-identifier (none is when
    there is no such attribute)?"""
    out = np.full(len(vectors), enc.d > 0, dtype=bool)
    for a, space in enumerate(enc.spaces):
        out &= np.array([bool(space.star[vec[a + 1]]) for vec in vectors], dtype=bool)
    return out


def class_discernibility(size: int, suppressed: bool, n: int) -> int:
    """A class's share of C_DM: n per record if suppressed, else its squared size."""
    return n * size if suppressed else size * size


def _set_objective(pm: LocalRecodingModel, reach: list[int]) -> None:
    model = pm.model
    if pm.objective == "discernibility":
        n = pm.encoding.instance.n_rows
        squares = []
        for v, (expr, suppressed) in enumerate(
            zip(pm.y, suppressed_vectors(pm.encoding, pm.vectors))
        ):
            pm.check(v, "setting the objective")
            if suppressed:
                squares.append(n * expr)
                continue
            size = model.new_int_var(0, reach[v], f"size[{v}]")
            model.add(size == expr)
            sq = model.new_int_var(0, reach[v] ** 2, f"sq[{v}]")
            model.add_multiplication_equality(sq, [size, size])
            squares.append(sq)
        pm.objective_expr = cp_model.LinearExpr.sum(squares)
        pm.scale = 1
    else:
        costs, scale = _pair_costs(pm.encoding, pm.vectors, pm.pair_t, pm.pair_v, pm.objective)
        pm.pair_cost = costs
        pm.scale = scale
        pm.objective_expr = cp_model.LinearExpr.weighted_sum(pm.x, costs.tolist())
        _minimize_sum(pm, costs)
        return
    model.minimize(pm.objective_expr)


def _minimize_sum(pm: LocalRecodingModel, costs: np.ndarray) -> None:
    """Minimize ``sum_i costs[i] x[i]``, written into the model's objective a block at a
    time (the same objective as ``model.minimize(pm.objective_expr)``, which on a model
    of a million pairs takes seconds in one uninterruptible call), looking at the
    deadline between blocks."""
    model = pm.model
    model.clear_objective()
    objective = model.proto.objective
    nonzero = np.flatnonzero(costs)
    step = 64 * CHECK_EVERY
    for start in range(0, len(nonzero), step):
        check_deadline(pm.deadline, "setting the objective")
        block = nonzero[start : start + step].tolist()
        objective.vars.extend([pm.x[i].index for i in block])
        objective.coeffs.extend(costs[block].tolist())
    objective.offset = 0
    objective.scaling_factor = 1.0
