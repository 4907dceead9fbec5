"""The exception tree of fairanon.

Callers can catch "wrong call" (:class:`InvalidParameterError`, :class:`SchemaError`)
apart from "no solution" (:class:`InfeasibleError`) and from internal failures
(:class:`SolverError`).
"""

from __future__ import annotations

__all__ = [
    "FairanonError",
    "InvalidParameterError",
    "SchemaError",
    "IncompatibleRequirementError",
    "InfeasibleError",
    "SolverError",
]


class FairanonError(Exception):
    """Base class of every error raised by fairanon."""


class InvalidParameterError(FairanonError, ValueError, TypeError):
    """A parameter has the wrong type, range or option."""


class SchemaError(FairanonError, ValueError):
    """The data do not fit their schema: unknown column, value outside a hierarchy,
    missing value in a quasi-identifier without a policy, empty table, ..."""


class IncompatibleRequirementError(FairanonError, ValueError):
    """The chosen method cannot enforce one of the requirements, or the requirements
    do not fit the instance (e.g. t-closeness without a sensitive attribute)."""


class InfeasibleError(FairanonError):
    """Raised only when code asks an INFEASIBLE release for its table."""


class SolverError(FairanonError):
    """An internal failure of a solver (a bug, not the user's fault)."""
