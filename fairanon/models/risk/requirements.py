"""Whether released class sizes meet a risk requirement, exactly: one function for the
verifier and for the methods that enforce the requirements.

- :class:`~fairanon.models.requirements.AverageRisk` (r): J/n ≤ r, in integers.
- :class:`~fairanon.models.requirements.SampleUniqueness` (u): c_1/n ≤ u, in integers.
- :class:`~fairanon.models.requirements.PopulationUniqueness` (u, model): Û/N ≤ u, the
  estimate Û of the named model (:mod:`.uniqueness`) read as the exact rational of its
  floating-point value; a model that cannot be fitted fails the requirement (nothing is
  certified), and says why.

The classes are the released classes, the suppressed block one of them (docs/risk.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ...exceptions import IncompatibleRequirementError, InvalidParameterError
from ..requirements import RISK_REQUIREMENTS, AverageRisk, PopulationUniqueness, SampleUniqueness
from .population import population_model
from .uniqueness import dankar, pitman, snb, zayatz

__all__ = ["LINEAR_RISK", "RISK_METHODS", "RiskResult", "refuse_risk", "risk_requirement"]

#: The methods that enforce the risk requirements (named in the refusals of the others).
RISK_METHODS = ("mondrian", "mondrian-relaxed", "mondrian-loss", "fulldomain")
#: The risk requirements linear in the used-class indicators of an exact model (cpsat
#: enforces them): J <= floor(r n) and c_1 <= floor(u n).
LINEAR_RISK = (AverageRisk, SampleUniqueness)

_ESTIMATORS = {"pitman": pitman, "zayatz": zayatz, "snb": snb, "dankar": dankar}


@dataclass(frozen=True)
class RiskResult:
    """The verdict on one risk requirement.

    Attributes
    ----------
    passed : bool
    achieved : Fraction or None
        J/n, c_1/n or Û/N (None when the model could not be fitted).
    detail : str
    witness : str
        Which class a witness shows: "smallest", "unique" or "" (none).
    parameters : dict
        The population model's fitted parameters.
    """

    passed: bool
    achieved: Fraction | None
    detail: str = ""
    witness: str = ""
    parameters: dict = field(default_factory=dict)


def risk_requirement(req, sizes: np.ndarray) -> RiskResult:
    """Check a risk requirement against released class sizes.

    >>> from fairanon.models.requirements import AverageRisk, SampleUniqueness
    >>> risk_requirement(AverageRisk("1/2"), np.array([1, 2, 1])).passed  # 3 classes / 4 records
    False
    >>> risk_requirement(SampleUniqueness("1/2"), np.array([1, 2, 1])).achieved
    Fraction(1, 2)
    """
    if not isinstance(req, RISK_REQUIREMENTS):
        raise InvalidParameterError(f"risk_requirement checks {RISK_REQUIREMENTS}; got {req!r}.")
    sizes = np.asarray(sizes, dtype=np.int64)
    n = int(sizes.sum())
    if n == 0:
        return RiskResult(False, None, "the release holds no records")
    if isinstance(req, AverageRisk):
        achieved = Fraction(len(sizes), n)
        return RiskResult(achieved <= req.r, achieved, f"{len(sizes)} classes over {n} records", "smallest")
    uniques = int((sizes == 1).sum())
    if isinstance(req, SampleUniqueness):
        achieved = Fraction(uniques, n)
        return RiskResult(achieved <= req.u, achieved, f"{uniques} sample unique(s) of {n} records",
                          "unique" if uniques else "")
    assert isinstance(req, PopulationUniqueness)
    model = population_model(n, sampling_fraction=req.sampling_fraction, population_size=req.population_size,
                             caller=str(req))
    values, counts = np.unique(sizes, return_counts=True)
    est = _ESTIMATORS[req.model](values, counts, model)
    if not est.fitted:
        return RiskResult(False, None, f"{req.model} cannot be fitted to the release: {est.detail}",
                          "unique" if uniques else "")
    achieved = Fraction(est.uniques) / model.population_size
    detail = f"{est.uniques:.6g} estimated population uniques of {model.population_size}"
    if est.detail:
        detail += f" ({est.detail})"
    return RiskResult(achieved <= req.u, achieved, detail, "unique" if uniques else "", dict(est.parameters))


def refuse_risk(requirements, caller: str, enforced: tuple = ()) -> None:
    """Refuse, before any work, the risk requirements a method does not enforce.

    Parameters
    ----------
    requirements : sequence of Requirement
    caller : str
        The method's name, for the message.
    enforced : tuple of type
        The risk requirements the method does enforce (cpsat: average risk and sample
        uniques, linear in its class indicators).

    Raises
    ------
    IncompatibleRequirementError
        Naming the first risk requirement of `requirements` outside `enforced` and the
        methods that enforce it.

    >>> from fairanon.models.requirements import AverageRisk, KAnonymity
    >>> refuse_risk([KAnonymity(2)], "sabre")  # nothing to refuse
    >>> refuse_risk([AverageRisk("1/5")], "sabre")
    Traceback (most recent call last):
    ...
    fairanon.exceptions.IncompatibleRequirementError: sabre cannot enforce average risk <= 0.2: ...
    """
    for req in requirements:
        if isinstance(req, RISK_REQUIREMENTS) and not isinstance(req, enforced):
            if isinstance(req, PopulationUniqueness):
                why = (
                    "an estimate of population uniques is a non-linear function of the whole "
                    f"release's class sizes, which {caller}'s model does not express"
                )
                methods = RISK_METHODS
            else:
                why = (
                    "average risk and sample uniques count the classes of the whole release, "
                    f"which {caller}'s model does not express"
                )
                methods = RISK_METHODS + ("cpsat",)
            raise IncompatibleRequirementError(
                f"{caller} cannot enforce {req}: {why}. "
                f"{', '.join(methods)} enforce it (method='auto' chooses among them)."
            )
