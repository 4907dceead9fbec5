"""Exact local recoding and local suppression with CP-SAT.

The slot model of docs/papers.md, B-8, reformulated so that it scales: a release is
determined by the *released vector* of each record (its quasi-identifier labels), and
the released equivalence classes are exactly the records sharing a vector. So instead
of assigning records to anonymous group slots (one Boolean per record and slot, with
heavy symmetry), the model assigns *types* -- records with identical values on every
attribute the requirements read, weighted by their count -- to candidate vectors:

- ``x[t,v]`` in 0..w_t: how many records of type t are released as vector v (v must
  cover t: each label generalizes t's value);
- ``z[v]``: vector v is used; ``x[t,v] <= w_t * z[v]`` and ``y[v] = sum_t x[t,v]``.

Classes have no identity beyond their vector, so the model has no slot symmetry, and
the disaggregated links give a useful LP bound (a type with fewer than k records
cannot stay alone on its own vector). Candidate vectors are pruned to those covering at
least k records; when every requirement is union-monotone (k, l, t) and the objective
can only grow when a label is coarsened, an optimal release uses the tight summary
(lowest common ancestor, min-max range) of each class, so the candidates are the join
closure of the types' own vectors.

Requirement families, each a set of named linear constraints (docs/papers.md, B-8):

============================ ==================================================================
k-anonymity                  ``y[v] >= k z[v]``
distinct l-diversity         ``has[v,s] <= cnt[v,s]``, ``sum_s has[v,s] >= l z[v]``
recursive (c,l)-diversity    ``c_d R + c_n ((l-1) lam + sum_s mu_s) <= c_n y - 1`` with
                             ``R >= cnt_s``, ``mu_s >= cnt_s - lam`` (exact LP form of the
                             top-(l-1) sum)
entropy l-diversity          ``sum_s F(cnt_s) <= G(y)`` with integer tables rounded so the
                             constraint relaxes the true one; every class is then checked
                             exactly and a violating count vector is cut off (lazy), so the
                             result is exact
t-closeness (EMD)            cross-multiplied integers, |.| by auxiliary variables:
                             equal ``t_d sum_s |N cnt_s - N_s y| <= 2 t_n N y``, ordered
                             (prefix sums, factor m-1), hierarchical (edge form, factor 2H)
diversity constraints        ``lower <= sum of x over target types on vectors that show the
                             target values exactly <= upper``
alpha-protection             every context (itemset of released labels of the non-protected
                             quasi-identifiers) that a candidate vector can reach: 4-fold
                             counts a, b, c, d are linear; each measure is cross-multiplied,
                             with Ruggieri's tokenism cases as enforced alternatives and the
                             products of two counts as CP-SAT integer products (exact; see
                             :mod:`.alpha`)
average risk (El Emam and    ``sum_v z[v] <= floor(r n)``: a used vector is one released
Dankar 2008)                 class, the all-``*`` vector of a protected value its
                             suppressed block (docs/risk.md)
sample uniques               ``y[v] >= 2 z[v] - one[v]``, ``sum_v one[v] <= floor(u n)``
============================ ==================================================================

The protected attribute is part of every vector and never generalized, as in the
verifier, so classes never mix protected values.

Modules, bottom up: :mod:`.labels` (the candidate labels of each attribute),
:mod:`.encoding` (weighted types, candidate vectors, model size), :mod:`.model` (the
built model and its objectives), :mod:`.privacy`, :mod:`.diversity` and :mod:`.alpha`
(one per requirement family), :mod:`.build` (assembling the model) and :mod:`.solve`
(solving, warm starts, canonical solutions, verification, explained infeasibility and
:func:`local_recoding`, the method behind ``cpsat``).

The same model re-solves a *neighbourhood* -- the records of some classes, everything
else fixed -- for the large-neighbourhood search of :mod:`fairanon.solver.lns`:
:func:`type_table` types only those records, :func:`build_model` takes extra candidate
vectors (the current classes and those around them) and a :class:`Rest` (the outside
records each vector already holds, the outside records showing a diversity constraint's
target, the outside 4-fold counts of every alpha-protection context), so that every
requirement holds on the whole release.
"""

from .build import build_model
from .encoding import Encoding, encode, model_size, type_table
from .labels import OBJECTIVES, RECODINGS, LabelSpace
from .model import LocalRecodingModel, Rest
from .solve import check_hint, local_recoding, solve_model

__all__ = [
    "OBJECTIVES",
    "RECODINGS",
    "Encoding",
    "LabelSpace",
    "LocalRecodingModel",
    "Rest",
    "build_model",
    "check_hint",
    "encode",
    "local_recoding",
    "model_size",
    "solve_model",
    "type_table",
]
