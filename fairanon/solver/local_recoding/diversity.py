"""The constraints of diversity constraints on the local-recoding model.

A diversity constraint bounds how many records show its target values in the release
(Milani, Huang and Chiang, EDBT 2021): ``lower <= sum of x over target types on vectors
that show the target values exactly <= upper``, plus, when a neighbourhood is re-solved,
the outside records that show them (:class:`~fairanon.solver.local_recoding.model.Rest`).
"""

from __future__ import annotations

from ortools.sat.python import cp_model

from ...models.requirements import DiversityConstraint
from .encoding import Encoding
from .model import LocalRecodingModel


def _shows(pm: LocalRecodingModel, v: int, names: list[str]) -> bool:
    """Whether vector v releases the named generalizable attributes as own values."""
    enc = pm.encoding
    vec = pm.vectors[v]
    for name in names:
        a = [s.name for s in enc.spaces].index(name)
        if int(vec[a + 1]) >= enc.spaces[a].m:  # own labels are numbered first
            return False
    return True


def _type_matches(enc: Encoding, t: int, req: DiversityConstraint) -> bool:
    names = enc.names
    for name, value in req.target:
        attr = enc.instance.schema[name]
        if name in names:
            own = enc.values[names.index(name)][int(enc.qi[t, names.index(name)])]
            if attr.kind == "numeric":
                try:
                    if float(own) != float(value):
                        return False
                except ValueError:
                    return False
            elif own != value:
                return False
        else:
            text = enc.extra[name][t]
            if attr.kind == "numeric":
                try:
                    if float(text) != float(value):
                        return False
                except ValueError:
                    return False
            elif text != value:
                return False
    return True


def _add_diversity(pm, req: DiversityConstraint, index, guard) -> None:
    enc = pm.encoding
    names = [s.name for s in enc.spaces]
    gen = [name for name, _ in req.target if name in names]
    matching = {t for t in range(enc.n_types) if _type_matches(enc, t, req)}
    shown = []
    stage = f"adding {req}"
    for v in range(len(pm.vectors)):
        pm.check(v, stage)
        if _shows(pm, v, gen):
            shown.append(v)
    terms = [pm.x[i] for v in shown for i in pm.by_vector[v] if int(pm.pair_t[i]) in matching]
    outside = pm.rest.shown.get(index, 0) if pm.rest is not None else 0
    count = cp_model.LinearExpr.sum(terms) + outside
    # The count is at most the records: bounds beyond them (10**20 is past CP-SAT's
    # int64) are the same constraint at n and n + 1.
    n = enc.instance.n_rows
    lower, upper = min(req.lower, n + 1), min(req.upper, n)
    pm.model.add(count >= lower).with_name(f"diversity_lower[{index}]").only_enforce_if(guard)
    pm.model.add(count <= upper).with_name(f"diversity_upper[{index}]").only_enforce_if(guard)
