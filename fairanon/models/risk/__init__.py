"""Re-identification and attribute-disclosure risk of a table, before or after anonymization.

One module per topic, every one reading the same regrouping (:mod:`.classes`: records
with equal released quasi-identifier values, the suppressed block one class):

- :mod:`.sample`: prosecutor, marketer and journalist risk, records above a threshold,
  the risk histogram (exact);
- :mod:`.uniqueness`: sample uniques, population uniques by Pitman, Zayatz and SNB, and
  Dankar et al.'s rule;
- :mod:`.individual`: Benedetti & Franconi's individual risk, expected
  re-identifications, global risk;
- :mod:`.suda`: minimal sample uniques up to a maximum size, SUDA scores, each
  attribute's contribution and DIS-SUDA scores;
- :mod:`.disclosure`: δ-disclosure and β-likeness;
- :mod:`.report`: :func:`risk`, all of them in one :class:`RiskReport`.

Definitions, the rule for suppressed records and the papers: ``docs/risk.md``.
"""

from .classes import RiskClasses, risk_classes
from .disclosure import Disclosure, attribute_disclosure
from .individual import IndividualRisk, benedetti_franconi, individual_risk
from .population import PopulationModel, population_model
from .report import RiskReport, risk
from .sample import JournalistRisk, SampleRisk, journalist_risk, records_above, risk_histogram, sample_risk
from .suda import DisSuda, Suda, dis_suda, minimal_sample_uniques, suda
from .uniqueness import ESTIMATORS, Estimate, Uniqueness, dankar, pitman, snb, uniqueness, zayatz

__all__ = [
    "ESTIMATORS",
    "DisSuda",
    "Disclosure",
    "Estimate",
    "IndividualRisk",
    "JournalistRisk",
    "PopulationModel",
    "RiskClasses",
    "RiskReport",
    "SampleRisk",
    "Suda",
    "Uniqueness",
    "attribute_disclosure",
    "benedetti_franconi",
    "dankar",
    "dis_suda",
    "individual_risk",
    "journalist_risk",
    "minimal_sample_uniques",
    "pitman",
    "population_model",
    "records_above",
    "risk",
    "risk_classes",
    "risk_histogram",
    "sample_risk",
    "snb",
    "suda",
    "uniqueness",
    "zayatz",
]
