"""The exception tree of fairanon.

Callers can catch "wrong call" (:class:`InvalidParameterError`, :class:`SchemaError`)
apart from "no solution" (:class:`InfeasibleError`), from internal failures (:class:`SolverError`) and from
work refused because it would need more memory than allowed (:class:`MemoryLimitError`).
"""

from __future__ import annotations

__all__ = [
    "FairanonError",
    "InvalidParameterError",
    "SchemaError",
    "IncompatibleRequirementError",
    "InfeasibleError",
    "SolverError",
    "MemoryLimitError",
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


class MemoryLimitError(FairanonError, MemoryError):
    """The work asked for would need more memory than the memory limit allows; raised
    before the work, from an estimate. The message says what would need the memory,
    the limit, and which option lowers the need or raises the limit (``memory_limit``).
    ``need`` and ``limit`` are the bytes estimated and allowed."""

    def __init__(self, message: str, *, need: int | None = None, limit: int | None = None):
        super().__init__(message)
        self.need = need
        self.limit = limit

    def __reduce__(self):
        # Pickled as the message with `need` and `limit` as state, so that the error
        # raised in a Dask worker reaches the client as itself: without a __reduce__ of
        # its own, distributed's pickler (tblib) rebuilds it by MemoryError.__new__,
        # which refuses a subclass, and the client gets a plain Exception.
        return type(self), self.args, self.__dict__
