"""What the optimizing methods minimize, measured exactly on a release.

One name per objective, shared by the exact models (:mod:`fairanon.solver`), the
large-neighbourhood search (:mod:`fairanon.methods.lns`), the lower bounds
(:mod:`fairanon.models.bounds`) and the reports. Totals are over the cells of the
generalizable quasi-identifiers (the protected attribute is released unchanged and
costs nothing):

================= ==================================================================
``stars``         cells released as ``*``
``generalized``   cells whose label differs from the original value
``ncp``           Xu's NCP summed over cells (= GCP x cells)
``lm``            Iyengar's loss summed over cells (= LM_avg x cells of every
                  quasi-identifier)
``discernibility`` the sum of squared class sizes (Bayardo and Agrawal's C_DM)
================= ==================================================================

:func:`objective_value` reads a release with :mod:`fairanon.models.metrics`, as the
verifier does, and returns an int or an exact :class:`~fractions.Fraction`.
"""

from __future__ import annotations

from fractions import Fraction

from .._validation import check_option
from ..instances.instance import Instance
from ..release import Release

__all__ = ["MONOTONE_OBJECTIVES", "OBJECTIVES", "objective_value", "relative_gap"]

#: What the optimizing methods minimize (see the module docstring).
OBJECTIVES = ("stars", "generalized", "discernibility", "ncp", "lm")
#: The objectives that are sums of per-cell costs, so that they can only grow when a
#: label is coarsened and do not depend on how records are grouped.
MONOTONE_OBJECTIVES = ("stars", "generalized", "ncp", "lm")


def objective_value(instance: Instance, release: Release, objective: str) -> int | Fraction:
    """The exact value of `objective` on `release`, read from its released table.

    >>> import fairanon as fa
    >>> inst = fa.load("diva_table1")
    >>> rel = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian", seed=0)
    >>> objective_value(inst, rel, "stars") == fa.verify(inst, rel).metrics["suppressed_cells"]
    True
    """
    from . import metrics

    check_option(objective, "objective", "objective_value", OBJECTIVES)
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


def relative_gap(value, bound) -> float | None:
    """``(value - bound) / value``: 0 when both are 0, None when either is unknown.

    >>> relative_gap(Fraction(5, 4), 1)
    0.2
    """
    if value is None or bound is None:
        return None
    value, bound = Fraction(value), Fraction(bound)
    if value == 0:
        return 0.0 if bound <= 0 else None
    return float(max(value - bound, Fraction(0)) / abs(value))
