"""What the optimizing methods minimize, measured exactly on a release.

One name per objective, shared by the exact models (:mod:`fairanon.solver`), the
large-neighbourhood search (:mod:`fairanon.methods.lns`), the lower bounds
(:mod:`fairanon.models.bounds`) and the reports. The loss objectives
(:data:`OBJECTIVES`) are totals over the cells of the generalizable quasi-identifiers
(the protected attribute is released unchanged and costs nothing); the privacy
objectives (:data:`PRIVACY_OBJECTIVES`, docs/papers.md, DW-10) read the sizes s_i of
the released class of each record i (classes as the verifier forms them, never mixing
protected values; records released all-``*`` form a class like any other):

==================== ===============================================================
``stars``            cells released as ``*`` or as a generalized label covering
                     every value present (the same information; docs/metrics.md)
``generalized``      cells whose label differs from the original value
``ncp``              Xu's NCP summed over cells (= GCP x cells)
``lm``               Iyengar's loss summed over cells (= LM_avg x cells of every
                     quasi-identifier)
``discernibility``   Bayardo and Agrawal's C_DM: n per record released as ``*`` on
                     every generalizable quasi-identifier (suppressed), |E| per record
                     of any other class E: sum_E |E|^2 + n x suppressed records
                     (:func:`fairanon.models.metrics.discernibility`; docs/metrics.md)
``privacy_log``      sum_i log(n / s_i) = n log n - sum_E |E| log |E| in nats (n times
                     the entropy of the partition into classes): minimizing it
                     maximizes sum_i log s_i, i.e. the geometric mean class size, the
                     hypervolume relation (docs/papers.md, DW-6). 0 when every
                     record is in one class. Exact values are :class:`LogLoss`.
``privacy_stretch``  records in classes of fewer than k' records (option
                     ``stretch_k`` = k'): minimizing it maximizes the records in
                     classes of at least a stretch target k' > k.
==================== ===============================================================

A *lexicographic* objective is a pair of one privacy objective and one loss
objective, most important first: ``("privacy_log", "ncp")`` finds the most private
releases and, among them, the one of least NCP; ``("ncp", "privacy_stretch")`` the
least NCP and, among those releases, the most records in classes of at least k'. Its
value is a :class:`Lexicographic` pair, compared term by term.

Used alone, a privacy objective is usually met by releasing everything as ``*`` (one
class per protected value); it matters under requirements that limit generalization
(diversity constraints, alpha-protection) and as the tie-break of a loss objective.

:func:`objective_spec` checks an objective as a user gives it; :func:`objective_value`
reads a release with :mod:`fairanon.models.metrics`, as the verifier does, and returns
an int, an exact :class:`~fractions.Fraction`, a :class:`LogLoss` or a
:class:`Lexicographic` pair of them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._validation import check_option
from ..exceptions import InvalidParameterError
from ..instances.instance import Instance
from ..release import Release

__all__ = [
    "MONOTONE_OBJECTIVES",
    "OBJECTIVES",
    "PRIVACY_OBJECTIVES",
    "Lexicographic",
    "LogLoss",
    "Objective",
    "objective_spec",
    "objective_value",
    "privacy_value",
    "relative_gap",
    "value_for_display",
]

#: The loss objectives the optimizing methods minimize (see the module docstring).
OBJECTIVES = ("stars", "generalized", "discernibility", "ncp", "lm")
#: The objectives that are sums of per-cell costs, so that they can only grow when a
#: label is coarsened and do not depend on how records are grouped.
MONOTONE_OBJECTIVES = ("stars", "generalized", "ncp", "lm")
#: The privacy objectives: functions of the class sizes that merging classes can only
#: lower (see the module docstring).
PRIVACY_OBJECTIVES = ("privacy_log", "privacy_stretch")


def _f(size: int) -> float:
    return size * math.log(size) if size > 1 else 0.0


class LogLoss(float):
    """The exact value of ``privacy_log``: sum_i log(n / s_i) over the records, in nats.

    It is irrational, so it is kept as the multiset of class sizes and compared
    exactly: sum_E |E| log |E| is larger exactly when prod_E |E|^|E| is
    (docs/papers.md, DW-6), an integer comparison. Comparisons between two LogLoss values first
    weigh the terms that differ in floating point with a safe error margin, and fall
    back to the integer products when the margin does not decide. As a float (its
    base class) it is the value for display and JSON; comparisons with other numbers
    use that float.

    >>> LogLoss([2, 2]) < LogLoss([3, 1]), LogLoss([4]) == 0
    (False, True)
    >>> round(float(LogLoss([2, 2])), 6)  # 4 log 4 - 2 (2 log 2) = 4 log 2
    2.772589
    """

    __slots__ = ("n", "sizes")

    def __new__(cls, sizes: Iterable[int]):
        counts = Counter(int(s) for s in sizes)
        if any(s < 0 for s in counts):
            raise InvalidParameterError(f"Class sizes must be positive. Got {sorted(counts)}.")
        n = sum(s * c for s, c in counts.items())
        kept = tuple(sorted((s, c) for s, c in counts.items() if s > 1))
        value = math.fsum([_f(n)] + [-c * _f(s) for s, c in kept])
        obj = super().__new__(cls, max(value, 0.0))
        obj.n = n
        obj.sizes = kept
        return obj

    @property
    def sum_log_size(self) -> float:
        """sum_i log s_i (nats), the quantity minimizing this loss maximizes."""
        return math.fsum(c * _f(s) for s, c in self.sizes)

    def _sign(self, other: LogLoss) -> int:
        """sign(self - other), exactly."""
        coef: Counter = Counter()
        coef[self.n] += 1
        coef[other.n] -= 1
        for s, c in self.sizes:
            coef[s] -= c
        for s, c in other.sizes:
            coef[s] += c
        terms = [(s, c) for s, c in coef.items() if c and s > 1]
        if not terms:
            return 0
        parts = [c * _f(s) for s, c in terms]
        approx = math.fsum(parts)
        # log and the products are within a few ulps; 1e-12 of the magnitudes is far
        # above their error and far below any difference it lets through.
        if abs(approx) > 1e-12 * (1.0 + math.fsum(abs(p) for p in parts)):
            return 1 if approx > 0 else -1
        plus = math.prod(s ** (s * c) for s, c in terms if c > 0)
        minus = math.prod(s ** (-s * c) for s, c in terms if c < 0)
        return (plus > minus) - (plus < minus)

    def _cmp(self, other) -> int | None:
        if isinstance(other, LogLoss):
            return self._sign(other)
        if isinstance(other, (int, float, Fraction, np.integer, np.floating)):
            a, b = float(self), float(other)
            return (a > b) - (a < b)
        return None

    def __eq__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c == 0

    def __ne__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c != 0

    def __lt__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c < 0

    def __le__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c <= 0

    def __gt__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c > 0

    def __ge__(self, other):
        c = self._cmp(other)
        return NotImplemented if c is None else c >= 0

    def __hash__(self):
        return hash((self.n, self.sizes))

    def __repr__(self) -> str:
        return f"LogLoss({float(self):.6g}, n={self.n}, sizes={dict(self.sizes)})"

    def __reduce__(self):
        return (_log_loss, (self.n, self.sizes))


def _log_loss(n: int, sizes: tuple) -> LogLoss:
    listed = [s for s, c in sizes for _ in range(c)]
    return LogLoss(listed + [1] * (n - sum(listed)))


class Lexicographic(tuple):
    """The value of a lexicographic objective: (most important term, the other),
    compared term by term (a tuple). Not a number: it has no float value and no gap."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Lexicographic({', '.join(map(str, self))})"


@dataclass(frozen=True)
class Objective:
    """A privacy or lexicographic objective, checked (:func:`objective_spec`).

    Attributes
    ----------
    terms : tuple of str
        One privacy objective, or a privacy and a loss objective, most important first.
    stretch_k : int, optional
        k' of ``privacy_stretch``.
    """

    terms: tuple[str, ...]
    stretch_k: int | None = None

    @property
    def primary(self) -> str:
        return self.terms[0]

    @property
    def secondary(self) -> str | None:
        return self.terms[1] if len(self.terms) > 1 else None

    @property
    def privacy(self) -> str:
        """The privacy term."""
        return next(t for t in self.terms if t in PRIVACY_OBJECTIVES)

    @property
    def loss(self) -> str | None:
        """The loss term of a lexicographic objective."""
        return next((t for t in self.terms if t in OBJECTIVES), None)

    def __str__(self) -> str:
        names = [
            f"privacy_stretch(k'={self.stretch_k})" if t == "privacy_stretch" else t
            for t in self.terms
        ]
        return " then ".join(names)


def objective_spec(objective, caller: str, *, stretch_k=None, default: str = "ncp"):
    """Check an objective as a user gives it: a loss objective's name is returned as
    is, a privacy objective or a lexicographic pair as an :class:`Objective`.

    Parameters
    ----------
    objective : str, pair of str, Objective or None
        None gives `default`.
    caller : str
        Named in the error messages.
    stretch_k : int, optional
        k' of ``privacy_stretch`` (an int of at least 2); refused with any other
        objective.

    >>> objective_spec(("privacy_log", "ncp"), "cpsat")
    Objective(terms=('privacy_log', 'ncp'), stretch_k=None)
    """
    if isinstance(objective, Objective):
        return objective
    names = OBJECTIVES + PRIVACY_OBJECTIVES
    if objective is None:
        objective = default
    if isinstance(objective, str):
        terms = (objective,)
    elif isinstance(objective, (tuple, list)) and all(isinstance(t, str) for t in objective):
        terms = tuple(objective)
        if len(terms) != 2:
            raise InvalidParameterError(
                f"A lexicographic 'objective' of {caller} is a pair (most important first), "
                f"e.g. ('privacy_log', 'ncp'). Got {objective!r} instead."
            )
    else:
        raise InvalidParameterError(
            f"The 'objective' parameter of {caller} must be one of "
            f"{', '.join(map(repr, names))}, or a pair of a privacy objective and a loss "
            f"objective. Got {objective!r} instead."
        )
    for term in terms:
        check_option(term, "objective", caller, names)
    privacy = [t for t in terms if t in PRIVACY_OBJECTIVES]
    if len(terms) == 2 and len(privacy) != 1:
        raise InvalidParameterError(
            f"A lexicographic 'objective' of {caller} pairs one privacy objective "
            f"({', '.join(map(repr, PRIVACY_OBJECTIVES))}) with one loss objective "
            f"({', '.join(map(repr, OBJECTIVES))}). Got {objective!r} instead."
        )
    if "privacy_stretch" in privacy:
        if stretch_k is None:
            raise InvalidParameterError(
                f"The 'privacy_stretch' objective of {caller} needs the stretch target: "
                "stretch_k=k' (an int of at least 2, above the k of the requirements)."
            )
        if isinstance(stretch_k, bool) or not isinstance(stretch_k, (int, np.integer)) or (
            stretch_k < 2
        ):
            raise InvalidParameterError(
                f"The 'stretch_k' parameter of {caller} must be an int in [2, inf). "
                f"Got {stretch_k!r} instead."
            )
        stretch_k = int(stretch_k)
    elif stretch_k is not None:
        raise InvalidParameterError(
            f"The 'stretch_k' parameter of {caller} applies only to the 'privacy_stretch' "
            f"objective. Got stretch_k={stretch_k!r} with objective {objective!r}."
        )
    if not privacy:
        return terms[0]
    return Objective(terms, stretch_k)


def privacy_value(sizes: Iterable[int], name: str, stretch_k: int | None = None):
    """The exact value of a privacy objective for these class sizes.

    >>> privacy_value([1, 2, 3], "privacy_stretch", 3)
    3
    """
    if name == "privacy_log":
        return LogLoss(sizes)
    return int(sum(int(s) for s in sizes if s < stretch_k))


def objective_value(
    instance: Instance, release: Release, objective, *, stretch_k=None
) -> int | Fraction | LogLoss | Lexicographic:
    """The exact value of `objective` on `release`, read from its released table.

    `objective` and `stretch_k` are as in :func:`objective_spec`.

    >>> import fairanon as fa
    >>> inst = fa.load("diva_table1")
    >>> rel = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian", seed=0)
    >>> objective_value(inst, rel, "stars") == fa.verify(inst, rel).metrics["suppressed_cells"]
    True
    """
    from . import metrics

    objective = objective_spec(objective, "objective_value", stretch_k=stretch_k)
    if isinstance(objective, Objective):
        sizes = None
        values = []
        for term in objective.terms:
            if term in PRIVACY_OBJECTIVES:
                if sizes is None:
                    groups = metrics.equivalence_classes(instance, release)
                    sizes = np.bincount(groups).tolist()
                values.append(privacy_value(sizes, term, objective.stretch_k))
            else:
                values.append(objective_value(instance, release, term))
        return values[0] if len(values) == 1 else Lexicographic(values)
    if objective == "stars":
        return metrics.suppressed_cells(instance, release)
    if objective == "generalized":
        return metrics.generalized_cells(instance, release)
    if objective == "discernibility":
        return metrics.discernibility(instance, release)
    if objective == "ncp":
        value = metrics.ncp(instance, release, exact=True)["NCP"]
    else:
        value = metrics.loss_metric(instance, release, exact=True)["LM_sum"] * instance.n_rows
    return int(value) if value.denominator == 1 else value


def value_for_display(value):
    """A float, or a list of floats for a lexicographic pair (None stays None).

    >>> value_for_display(Lexicographic([LogLoss([2, 2]), Fraction(1, 2)]))
    [2.772588722239781, 0.5]
    """
    if value is None:
        return None
    if isinstance(value, tuple):
        return [float(v) for v in value]
    return float(value)


def relative_gap(value, bound) -> float | None:
    """``(value - bound) / value``: 0 when both are 0, None when either is unknown or
    the value is lexicographic (a pair has no relative gap).

    >>> relative_gap(Fraction(5, 4), 1)
    0.2
    """
    if value is None or bound is None or isinstance(value, tuple) or isinstance(bound, tuple):
        return None
    if isinstance(value, LogLoss) or isinstance(bound, LogLoss):
        # Irrational values: the comparison is exact, the ratio is for display.
        if value <= bound:
            return 0.0 if bound == value else None
        return (float(value) - float(bound)) / float(value)
    value, bound = Fraction(value), Fraction(bound)
    if value == 0:
        return 0.0 if bound <= 0 else None
    return float(max(value - bound, Fraction(0)) / abs(value))
