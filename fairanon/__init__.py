"""fairanon: publish microdata that is private, non-discriminatory and diverse.

>>> import fairanon as fa
>>> inst = fa.load("diva_table1")
>>> rel = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian", seed=0)
>>> fa.verify(inst, rel, [fa.KAnonymity(2)]).passed
True
"""

from ._version import __version__

from .exceptions import (
    FairanonError,
    IncompatibleRequirementError,
    InfeasibleError,
    InvalidParameterError,
    SchemaError,
    SolverError,
)
from .instances import Attribute, Hierarchy, Instance, IntervalHierarchy, Schema
from .models.requirements import (
    AlphaProtection,
    DiversityConstraint,
    KAnonymity,
    LDiversity,
    MultiplicativeTCloseness,
    Requirement,
    StochasticTCloseness,
    TCloseness,
)
from .release import Release, Status
from .instances.datasets import load
from .models.describe import describe
from .models.verify import Report
from .api import METHODS, anonymize, verify

__all__ = [
    "METHODS",
    "Report",
    "anonymize",
    "describe",
    "load",
    "verify",
    "AlphaProtection",
    "Attribute",
    "DiversityConstraint",
    "FairanonError",
    "Hierarchy",
    "IncompatibleRequirementError",
    "InfeasibleError",
    "Instance",
    "IntervalHierarchy",
    "InvalidParameterError",
    "KAnonymity",
    "LDiversity",
    "MultiplicativeTCloseness",
    "Release",
    "Requirement",
    "Schema",
    "SchemaError",
    "SolverError",
    "Status",
    "StochasticTCloseness",
    "TCloseness",
    "__version__",
]
