"""The constraints of alpha-protection on the local-recoding model.

Every context -- an itemset of released labels of the non-protected
quasi-identifiers -- that a candidate vector can reach gets its 4-fold counts a, b, c,
d as linear expressions; each measure is cross-multiplied, with Ruggieri's tokenism
cases as enforced alternatives and the products of two counts as CP-SAT integer
products.

Exactness of alpha-protection. The verifier checks every itemset of released values of
the non-protected quasi-identifiers (labels read as symbols, the empty itemset
included). The model enumerates every such itemset that some candidate vector can
produce, and enforces the measure on it whenever its cover is non-empty (and, with
``min_support``, at least that large). When a neighbourhood is re-solved, the outside
records of each context are constants added to its counts
(:class:`~fairanon.solver.local_recoding.model.Rest`); contexts no candidate vector
reaches keep their counts. All seven measures (RD, ED, RR, ER, RC, EC, OR),
strict or not, are exact: differences and ratios of proportions are cross-multiplied
in integers, each tokenism case (no protected or no unprotected record in the
context: p1 or p2 is then p-) is a separate enforced alternative, and a ratio's zero
denominator follows ``measures.py`` (x/0 = inf, 0/0 = 1). Products of two counts are
CP-SAT integer products, exact but weaker in the LP relaxation than linear terms; the
linear cases are the tokenism ones and t-closeness of the decision (Ruggieri's VD per
q-block, docs/papers.md, B-8), which implies bd_f(t)-protection (Thm 10). Only size is
refused: more than ``max_contexts`` contexts raise IncompatibleRequirementError.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
from ortools.sat.python import cp_model

from ...exceptions import IncompatibleRequirementError
from ...models import measures as M
from ...models.requirements import AlphaProtection
from .encoding import check_deadline
from .model import LocalRecodingModel


def _contexts(pm: LocalRecodingModel) -> dict[tuple, list[int]]:
    """Every non-empty itemset of released labels some candidate vector reaches, with
    the vectors in its cover. Keys are (attribute positions, labels)."""
    d = pm.encoding.d
    arr = np.array(pm.vectors, dtype=np.int64).reshape(len(pm.vectors), d + 1)[:, 1:]
    out: dict[tuple, list[int]] = {}
    for size in range(1, d + 1):
        for attrs in itertools.combinations(range(d), size):
            check_deadline(pm.deadline, "listing the alpha-protection contexts")
            proj = arr[:, list(attrs)]
            for v, row in enumerate(proj.tolist()):
                out.setdefault((attrs, tuple(row)), []).append(v)
    return out


def _add_alpha(pm, req: AlphaProtection, index, guard, max_contexts) -> None:
    enc = pm.encoding
    model = pm.model
    cells = [
        enc.prot_flag & enc.neg_flag,
        enc.prot_flag & ~enc.neg_flag,
        ~enc.prot_flag & enc.neg_flag,
        ~enc.prot_flag & ~enc.neg_flag,
    ]
    rest = pm.rest
    # The empty itemset (the whole table) does not depend on the release.
    if rest is not None and rest.alpha_cells is not None:
        whole = [int(c) for c in rest.alpha_cells]
    else:
        whole = [int(enc.weight[c].sum()) for c in cells]
    total, neg = sum(whole), whole[0] + whole[2]
    if not _alpha_holds_exact(req, whole, neg, total):
        model.add_bool_or([]).with_name(f"alpha[{index},whole table]").only_enforce_if(guard)
    contexts = _contexts(pm) if enc.d else {}
    if len(contexts) > max_contexts:
        raise IncompatibleRequirementError(
            f"cpsat cannot enforce {req} on instance {enc.instance.name!r}: it needs "
            f"{len(contexts)} contexts, more than max_contexts={max_contexts}. Raise "
            "max_contexts, use fewer quasi-identifiers, or use recoding='suppression'."
        )
    cell_of = np.select(cells, [0, 1, 2, 3])
    pm.n_contexts += len(contexts) + 1
    for c_id, ((attrs, labels), vecs) in enumerate(contexts.items()):
        check_deadline(pm.deadline, "adding alpha-protection")
        parts: list[list] = [[], [], [], []]
        bounds = [0, 0, 0, 0]
        for v in vecs:
            for i in pm.by_vector[v]:
                t = int(pm.pair_t[i])
                parts[int(cell_of[t])].append(pm.x[i])
        for q in range(4):
            # a record of a type counts once in a context even if several vectors reach it
            types = {
                int(pm.pair_t[i])
                for v in vecs
                for i in pm.by_vector[v]
                if cell_of[pm.pair_t[i]] == q
            }
            bounds[q] = int(sum(enc.weight[t] for t in types))
        outside = (0, 0, 0, 0)
        if rest is not None and rest.alpha_context is not None:
            outside = rest.alpha_context(attrs, labels)
        bounds = [b + int(o) for b, o in zip(bounds, outside)]
        name = f"{index},{c_id}"
        a, b, c, d = (model.new_int_var(0, bounds[q], f"{'abcd'[q]}[{name}]") for q in range(4))
        for var, part, o in zip((a, b, c, d), parts, outside):
            model.add(var == cp_model.LinearExpr.sum(part) + int(o))
        _alpha_context(model, req, name, (a, b, c, d), bounds, neg, total, guard)


def _alpha_holds_exact(req: AlphaProtection, counts, neg: int, total: int) -> bool:
    a, b, c, d = counts
    if req.min_support and a + b + c + d < req.min_support:
        return True
    value = M.discrimination_exact(req.measure, a, b, c, d, neg, total)
    if req.larger_is_worse:
        return value < req.alpha if req.strict else value <= req.alpha
    return value > req.alpha if req.strict else value >= req.alpha


class _Affine:
    """c0 + sum(coef * var): a tiny affine form over the context counts."""

    def __init__(self, const=0, terms=()):
        self.const = const
        self.terms = tuple(terms)

    def is_const(self) -> bool:
        return not self.terms

    def expr(self):
        if not self.terms:
            return self.const
        return (
            cp_model.LinearExpr.weighted_sum([v for v, _ in self.terms], [c for _, c in self.terms])
            + self.const
        )

    def upper(self, bounds) -> int:
        return self.const + sum(c * bounds[v] for v, c in self.terms)

    def scaled(self, k: int) -> _Affine:
        return _Affine(self.const * k, [(v, c * k) for v, c in self.terms])

    def __add__(self, other: _Affine) -> _Affine:
        return _Affine(self.const + other.const, self.terms + other.terms)


def _alpha_context(model, req: AlphaProtection, name, abcd, bounds, neg, total, guard) -> None:
    """f(context) <= alpha (>= for RC, EC) in every tokenism case, by cross-multiplying."""
    a, b, c, d = abcd
    ub = dict(zip(abcd, bounds))
    n1 = model.new_int_var(0, bounds[0] + bounds[1], f"n1[{name}]")
    n2 = model.new_int_var(0, bounds[2] + bounds[3], f"n2[{name}]")
    model.add(n1 == a + b)
    model.add(n2 == c + d)
    ub[n1] = bounds[0] + bounds[1]
    ub[n2] = bounds[2] + bounds[3]
    size = model.new_int_var(0, ub[n1] + ub[n2], f"n[{name}]")
    model.add(size == n1 + n2)
    ub[size] = ub[n1] + ub[n2]
    # The context is checked when it has records (and at least min_support of them).
    check = model.new_bool_var(f"checked[{name}]")
    threshold = max(1, req.min_support or 1)
    model.add(size >= threshold).only_enforce_if(check)
    model.add(size <= threshold - 1).only_enforce_if(~check)
    e1 = model.new_bool_var(f"has_protected[{name}]")
    model.add(n1 >= 1).only_enforce_if(e1)
    model.add(n1 == 0).only_enforce_if(~e1)
    e2 = model.new_bool_var(f"has_unprotected[{name}]")
    model.add(n2 >= 1).only_enforce_if(e2)
    model.add(n2 == 0).only_enforce_if(~e2)
    products: dict = {}

    def product(f: _Affine, g: _Affine):
        if f.is_const():
            return g.scaled(f.const)
        if g.is_const():
            return f.scaled(g.const)
        key = (
            tuple(sorted((v.index, c) for v, c in f.terms)),
            f.const,
            tuple(sorted((v.index, c) for v, c in g.terms)),
            g.const,
        )
        if key not in products:
            hi = max(f.upper(ub), 0) * max(g.upper(ub), 0)
            prod = model.new_int_var(0, hi, f"prod{len(products)}[{name}]")
            model.add_multiplication_equality(prod, [f.expr(), g.expr()])
            ub[prod] = hi
            products[key] = prod
        return _Affine(0, [(products[key], 1)])

    one = lambda var: _Affine(0, [(var, 1)])
    al_n, al_d = req.alpha.numerator, req.alpha.denominator
    for has1, has2 in ((True, True), (True, False), (False, True)):
        lits = guard + [check, e1 if has1 else ~e1, e2 if has2 else ~e2]
        # p1 = A1/D1 and p2 = A2/D2 with Ruggieri's tokenism extension; p = A/D.
        A1, D1 = (one(a), one(n1)) if has1 else (_Affine(neg), _Affine(total))
        A2, D2 = (one(c), one(n2)) if has2 else (_Affine(neg), _Affine(total))
        A, D = one(a) + one(c), one(size)
        measure = req.measure
        if measure in ("RD", "ED"):
            Aq, Dq = (A2, D2) if measure == "RD" else (A, D)
            lhs = product(A1, Dq) + product(Aq, D1).scaled(-1)
            rhs = product(D1, Dq)
            _add_if(model, al_d * lhs.expr() <= al_n * rhs.expr() - (1 if req.strict else 0), lits)
            continue
        if measure == "RR":
            X, Y = product(A1, D2), product(D1, A2)
        elif measure == "ER":
            X, Y = product(A1, D), product(D1, A)
        elif measure == "RC":
            X, Y = product(D1 + A1.scaled(-1), D2), product(D1, D2 + A2.scaled(-1))
        elif measure == "EC":
            X, Y = product(D1 + A1.scaled(-1), D), product(D1, D + A.scaled(-1))
        else:  # OR
            X, Y = product(A1, D2 + A2.scaled(-1)), product(D1 + A1.scaled(-1), A2)
        _ratio_condition(model, req, name, X, Y, lits, al_n, al_d)


def _ratio_condition(model, req, name, X: _Affine, Y: _Affine, lits, al_n, al_d) -> None:
    """X/Y <= alpha (>= for RC, EC) with x/0 = inf and 0/0 = 1 (measures.py)."""
    alpha = req.alpha
    xe, ye = X.expr(), Y.expr()
    if isinstance(xe, int) and isinstance(ye, int):
        value = Fraction(xe, ye) if ye else (math.inf if xe > 0 else Fraction(1))
        if req.larger_is_worse:
            ok = value < alpha if req.strict else value <= alpha
        else:
            ok = value > alpha if req.strict else value >= alpha
        if not ok:
            model.add_bool_or([]).only_enforce_if(lits)
        return
    yzero = model.new_bool_var(f"ratio_den_zero[{name}]")
    _add_if(model, ye == 0, [yzero])
    _add_if(model, ye >= 1, [~yzero])
    if req.larger_is_worse:
        _add_if(model, al_d * xe <= al_n * ye - (1 if req.strict else 0), lits + [~yzero])
        # denominator 0: the value is inf (x > 0) or 1 (x = 0)
        _add_if(model, xe == 0, lits + [yzero])
        if (alpha <= 1) if req.strict else (alpha < 1):
            model.add_bool_or([]).only_enforce_if(lits + [yzero])
    else:
        _add_if(model, al_d * xe >= al_n * ye + (1 if req.strict else 0), lits + [~yzero])
        if (alpha >= 1) if req.strict else (alpha > 1):
            _add_if(model, xe >= 1, lits + [yzero])


def _add_if(model: cp_model.CpModel, constraint, literals) -> None:
    """Add `constraint` under `literals`; a constant constraint is dropped if true and
    forbids the literals if false."""
    if isinstance(constraint, (bool, np.bool_)):
        if not constraint:
            model.add_bool_or([]).only_enforce_if(literals)
        return
    model.add(constraint).only_enforce_if(literals)
