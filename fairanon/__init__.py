"""fairanon: publish microdata that is private, non-discriminatory and diverse.

>>> import fairanon as fa
>>> inst = fa.load("diva_table1")
>>> rel = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian", seed=0)
>>> fa.verify(inst, rel, [fa.KAnonymity(2)]).passed
True

The public names are imported on first use: ``import fairanon`` (and so the command
line, which starts by it) costs milliseconds instead of the seconds pandas, scipy and
the solvers take, and Ctrl-C during that start already reaches the command line's own
handling instead of ending Python with a traceback.
"""

from __future__ import annotations

import sys

if sys.version_info < (3, 11):  # before anything that needs a newer Python
    raise ImportError(
        "fairanon needs Python 3.11 or newer; this is Python "
        + ".".join(str(v) for v in sys.version_info[:3])
        + " (" + str(sys.executable) + "). Make the virtual environment with a newer one, "
        "e.g. python3.11 -m venv .venv."
    )

import importlib
from typing import TYPE_CHECKING

from ._version import __version__

from .exceptions import (
    FairanonError,
    IncompatibleRequirementError,
    InfeasibleError,
    InvalidParameterError,
    MemoryLimitError,
    SchemaError,
    SolverError,
)

#: The module each public name comes from.
_SOURCES = {
    **dict.fromkeys(("Attribute", "Hierarchy", "Instance", "IntervalHierarchy", "Schema"), "instances"),
    **dict.fromkeys(
        (
            "AlphaProtection",
            "AverageRisk",
            "DiversityConstraint",
            "KAnonymity",
            "LDiversity",
            "MultiplicativeTCloseness",
            "PopulationUniqueness",
            "Requirement",
            "SampleUniqueness",
            "StochasticTCloseness",
            "TCloseness",
        ),
        "models.requirements",
    ),
    **dict.fromkeys(("Release", "Status"), "release"),
    "load": "instances.datasets",
    "describe": "models.describe",
    "Report": "models.verify",
    "RiskReport": "models.risk.report",
    "utility": "models.utility",
    **dict.fromkeys(("METHODS", "anonymize", "risk", "verify"), "api"),
}

if TYPE_CHECKING:  # what the lazy names are, for readers and type checkers
    from .api import METHODS, anonymize, risk, verify
    from .instances import Attribute, Hierarchy, Instance, IntervalHierarchy, Schema
    from .instances.datasets import load
    from .models.describe import describe
    from .models.requirements import (
        AlphaProtection,
        AverageRisk,
        DiversityConstraint,
        KAnonymity,
        LDiversity,
        MultiplicativeTCloseness,
        PopulationUniqueness,
        Requirement,
        SampleUniqueness,
        StochasticTCloseness,
        TCloseness,
    )
    from .models.utility import utility
    from .models.risk.report import RiskReport
    from .models.verify import Report
    from .release import Release, Status


def __getattr__(name: str):
    """Import a public name, or a subpackage (``fairanon.api``), on first use."""
    source = _SOURCES.get(name)
    if source is None:
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f"{__name__}.{source}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SOURCES))


__all__ = [
    "METHODS",
    "Report",
    "RiskReport",
    "anonymize",
    "describe",
    "load",
    "risk",
    "utility",
    "verify",
    "AlphaProtection",
    "Attribute",
    "AverageRisk",
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
    "MemoryLimitError",
    "MultiplicativeTCloseness",
    "PopulationUniqueness",
    "Release",
    "Requirement",
    "SampleUniqueness",
    "Schema",
    "SchemaError",
    "SolverError",
    "Status",
    "StochasticTCloseness",
    "TCloseness",
    "__version__",
]
