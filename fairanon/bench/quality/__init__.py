"""Quality indices and comparators of per-tuple property vectors (Dewri et al. [1]_).

A property vector D = (d_1, …, d_N) holds one property (class size, risk, loss, …)
of every record, indexed by record id (:func:`fairanon.models.metrics.property_vectors`
computes them). Releases of the same data are compared through their vectors:

- **dominance** (paper Table 4; :mod:`~fairanon.bench.quality.dominance`):
  :func:`dominance` returns one of four outcomes, :func:`set_dominance` pairs several
  properties by name;
- **unary indices** (§3, §5.1; :mod:`~fairanon.bench.quality.unary`): :func:`p_min`,
  :func:`p_mean` (P_s-avg), :func:`p_rank`, and the bias descriptors of
  :func:`descriptors` (variance, Gini, floor share: no better/worse direction,
  docs/papers.md, DW-10);
- **binary indices** (§5.2–5.4; :mod:`~fairanon.bench.quality.binary`):
  :func:`p_binary`, :func:`p_cov`, :func:`p_spr`, :func:`p_hv` (and :func:`log_p_hv`,
  its log-space form);
- **comparators** ▶ (:mod:`~fairanon.bench.quality.comparators`): :func:`compare` gives
  FIRST_BETTER, SECOND_BETTER or TIE under one index;
- **several properties** (§5.5–5.7; :mod:`~fairanon.bench.quality.multi`): :func:`wtd`,
  :func:`lex`, :func:`goal` and :func:`goal_unary`.

Every function assumes *higher is better*; :func:`orient` turns a lower-is-better
property around first (``negate``, ``flip`` against an upper bound, or ``reciprocal``;
only ``flip`` keeps the values non-negative, as P_hv needs). :data:`PROPERTIES` records
the direction, transform and ideal vector D_max of each column of
:func:`~fairanon.models.metrics.property_vectors`
(:mod:`~fairanon.bench.quality.properties`).

Exactness (docs/papers.md, DW-4): integer vectors and object vectors of
:class:`fractions.Fraction` are compared exactly; float vectors with an absolute
tolerance (default :data:`TOLERANCE`) applied the same way in ≥, > and ties
(:mod:`~fairanon.bench.quality.vectors`). Counts come back as ints and ratios of counts
as Fractions.

Two facts worth knowing when reading results (docs/papers.md, DW-6): ▶spr decides exactly as
the mean does, and ▶hv as the product (the geometric mean); only dominance and ▶cov
depend on *which* record gets which value (F9), and ▶cov is not transitive (F8).

References
----------
.. [1] R. Dewri, I. Ray, I. Ray, D. Whitley. On the comparison of microdata disclosure
   control algorithms. EDBT 2009.

Examples
--------
>>> a, b = [3, 3, 3, 3, 4, 4, 4, 3, 3, 4], [3, 7, 7, 3, 7, 7, 7, 3, 7, 7]  # T3a, T3b
>>> dominance(b, a), p_binary(b, a), p_cov(a, b), p_spr(b, a)
(<Dominance.BETTER: 'BETTER'>, 7, Fraction(3, 10), 24)
>>> compare(a, b, "min"), compare(a, b, "cov")
(<Verdict.TIE: 'TIE'>, <Verdict.SECOND_BETTER: 'SECOND_BETTER'>)
"""

from .binary import BINARY_INDICES, log_p_hv, p_binary, p_cov, p_hv, p_spr
from .comparators import COMPARATORS, Verdict, compare
from .dominance import Dominance, dominance, set_dominance, tuple_counts
from .multi import (
    NORMALIZATIONS,
    MultiResult,
    goal,
    goal_unary,
    index_pair,
    lex,
    unary_value,
    wtd,
)
from .properties import PROPERTIES, PropertyContext, PropertySpec, orient
from .unary import UNARY_INDICES, descriptors, p_max, p_mean, p_min, p_rank, p_sum
from .vectors import TOLERANCE

__all__ = [
    "BINARY_INDICES",
    "COMPARATORS",
    "NORMALIZATIONS",
    "PROPERTIES",
    "TOLERANCE",
    "UNARY_INDICES",
    "Dominance",
    "MultiResult",
    "PropertyContext",
    "PropertySpec",
    "Verdict",
    "compare",
    "descriptors",
    "dominance",
    "goal",
    "goal_unary",
    "index_pair",
    "lex",
    "log_p_hv",
    "orient",
    "p_binary",
    "p_cov",
    "p_hv",
    "p_max",
    "p_mean",
    "p_min",
    "p_rank",
    "p_spr",
    "p_sum",
    "set_dominance",
    "tuple_counts",
    "unary_value",
    "wtd",
]
