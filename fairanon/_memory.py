"""Memory limits: how much memory a method may ask for, and the refusal when the
estimate of what it would ask for is larger.

Methods whose memory can grow well beyond their input (frequent-pattern mining, the
k-member clustering's working arrays, CP-SAT models, DIVA's pools of candidate
clusters) estimate what they need before the work and raise :class:`MemoryLimitError`,
naming the option to change, when the estimate exceeds the limit -- instead of being
killed by the system later.

The limit is, in order: the `memory_limit` given to the function, the one of the
enclosing :func:`memory_limit` context (:func:`fairanon.anonymize` opens one), else
:data:`DEFAULT_SHARE` of the memory available when the check runs.
"""

from __future__ import annotations

import contextlib
import math
import numbers
import os
import re
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass

from .exceptions import InvalidParameterError, MemoryLimitError

__all__ = [
    "DEFAULT_SHARE",
    "Limit",
    "available_memory",
    "check_memory",
    "current_limit",
    "format_bytes",
    "memory_limit",
    "memory_limit_context",
    "memory_limit_type",
    "resolve_memory_limit",
]

#: The default limit: this share of the memory available (:func:`available_memory`)
#: when a method checks its estimate.
DEFAULT_SHARE = 0.5

#: How the limit is given, for messages.
KNOB = ("memory_limit= (in Python) or --memory-limit (on the command line): bytes such as "
        "8GB, or a share of the available memory such as 0.8")

_UNITS = {"": 1, "b": 1, "k": 10**3, "kb": 10**3, "m": 10**6, "mb": 10**6, "g": 10**9, "gb": 10**9,
          "t": 10**12, "tb": 10**12, "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}


@dataclass(frozen=True)
class Limit:
    """A resolved memory limit: `bytes` (None: no limit) and where it came from."""

    bytes: int | None
    source: str


_CURRENT: ContextVar[Limit | None] = ContextVar("fairanon_memory_limit", default=None)


def available_memory() -> int | None:
    """Bytes of memory this process can still take without swapping: the machine's
    available memory (psutil when it is installed, else Linux's ``MemAvailable``, else
    the free pages), less than that when a control group (a container's memory limit)
    or the process's address-space limit (``RLIMIT_AS``, as ``fairanon bench`` sets
    for each run) leaves less; None when the system does not say."""
    found = [v for v in (_machine_available(), _cgroup_headroom(), _address_space_headroom()) if v is not None]
    return max(min(found), 0) if found else None


def _machine_available() -> int | None:
    try:
        import psutil

        return int(psutil.virtual_memory().available)
    except (ImportError, OSError, AttributeError):
        pass
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):
        return None


def _read_int(path: str) -> int | None:
    try:
        with open(path, encoding="ascii") as fh:
            text = fh.read().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def _cgroup_headroom() -> int | None:
    """The memory limit of this process's control group less its usage (cgroup v2,
    else v1), or None without a limit."""
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        limit, usage = _read_int(limit_file), _read_int(usage_file)
        if limit is not None and limit < 2**60 and usage is not None:
            return limit - usage
    return None


def _address_space_headroom() -> int | None:
    """``RLIMIT_AS`` less the address space in use, or None without that limit."""
    try:
        import resource

        soft = resource.getrlimit(resource.RLIMIT_AS)[0]
    except (ImportError, OSError, ValueError, AttributeError):
        return None
    if soft == resource.RLIM_INFINITY or soft < 0:
        return None
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            used = int(fh.read().split()[0]) * int(os.sysconf("SC_PAGE_SIZE"))
    except (OSError, ValueError, IndexError):
        used = 0
    return soft - used


def format_bytes(n: float) -> str:
    """``1.5 GB``, ``320 MB``, ``12 kB`` (decimal units).

    >>> format_bytes(1_500_000_000), format_bytes(3.2e8), format_bytes(12_000), format_bytes(5)
    ('1.5 GB', '320 MB', '12 kB', '5 B')
    """
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= size:
            value = n / size
            return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{int(n)} B"


def resolve_memory_limit(value, caller: str = "anonymize") -> Limit:
    """The limit `value` asks for.

    Parameters
    ----------
    value : None, int, float or str
        None: the default (:data:`DEFAULT_SHARE` of the available memory); a number in
        (0, 1]: that share of the available memory; a larger number: bytes; a string:
        the same, or bytes with a unit (``"512MB"``, ``"8GB"``, ``"2GiB"``), a share
        as a percentage (``"50%"``), or ``"none"`` for no limit (as ``math.inf``).

    Examples
    --------
    >>> resolve_memory_limit("2GB").bytes, resolve_memory_limit(10**6).bytes
    (2000000000, 1000000)
    >>> resolve_memory_limit("none").bytes is None
    True
    """
    if isinstance(value, Limit):
        return value
    if value is None:
        available = available_memory()
        if available is None:
            return Limit(None, "no default: the system does not report its available memory")
        return Limit(int(DEFAULT_SHARE * available),
                     f"the default, {DEFAULT_SHARE:g} of the {format_bytes(available)} available")
    given = value
    if isinstance(value, str):
        text = value.strip().lower().replace(" ", "")
        if text in ("none", "inf", "unlimited"):
            return Limit(None, f"memory_limit={given!r}")
        match = re.fullmatch(r"([0-9]*\.?[0-9]+(?:e[+-]?[0-9]+)?)([a-z%]*)", text)
        if match is None or (match.group(2) not in _UNITS and match.group(2) != "%"):
            _bad(given, caller)
        number, unit = float(match.group(1)), match.group(2)
        if unit == "%":
            if not 0 < number <= 100:
                _bad(given, caller)
            value = number / 100
        elif unit:
            return _bytes(number * _UNITS[unit], given, caller)
        else:
            value = number
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or math.isnan(value) or value <= 0:
        _bad(given, caller)
    if math.isinf(value):
        return Limit(None, f"memory_limit={given!r}")
    if value <= 1:
        available = available_memory()
        if available is None:
            raise InvalidParameterError(
                f"The 'memory_limit' parameter of {caller} is a share ({given!r}) of the available "
                "memory, which this system does not report: give bytes instead (e.g. '8GB')."
            )
        return Limit(int(value * available), f"memory_limit={given!r}: {float(value):g} of the "
                     f"{format_bytes(available)} available")
    return _bytes(value, given, caller)


def memory_limit_type(text: str) -> Limit:
    """argparse type of ``--memory-limit``: bytes (``8GB``), a share (``0.5``) or ``none``."""
    import argparse

    try:
        return resolve_memory_limit(text, "--memory-limit")
    except InvalidParameterError:
        raise argparse.ArgumentTypeError(
            f"must be bytes (e.g. 512MB, 8GB), a share of the available memory in (0, 1] (e.g. 0.5) "
            f"or none; got {text!r}"
        ) from None


def _bytes(number: float, given, caller: str) -> Limit:
    if number < 1:
        _bad(given, caller)
    return Limit(int(number), f"memory_limit={given!r}")


def _bad(given, caller: str):
    raise InvalidParameterError(
        f"The 'memory_limit' parameter of {caller} must be bytes (a number above 1, or a string "
        f"such as '512MB' or '8GB'), a share of the available memory in (0, 1] (e.g. 0.5 or "
        f"'50%'), 'none' or None (the default, {DEFAULT_SHARE:g} of the available memory). "
        f"Got {given!r} instead."
    )


@contextlib.contextmanager
def memory_limit(value, caller: str = "anonymize") -> Iterator[Limit]:
    """Within the block, methods called without their own `memory_limit` keep to
    `value` (as :func:`resolve_memory_limit` reads it).

    >>> with memory_limit("1GB"):
    ...     current_limit().bytes
    1000000000
    """
    limit = value if isinstance(value, Limit) else resolve_memory_limit(value, caller)
    token = _CURRENT.set(limit)
    try:
        yield limit
    finally:
        _CURRENT.reset(token)


def memory_limit_context(value, caller: str = "anonymize"):
    """:func:`memory_limit` for `value`, checked now; a context that changes nothing
    for None (the default then applies where each method checks)."""
    if value is None:
        return contextlib.nullcontext()
    return memory_limit(resolve_memory_limit(value, caller), caller)


def current_limit(value=None, caller: str = "anonymize") -> Limit:
    """The limit in force: `value` when given, else the enclosing
    :func:`memory_limit`'s, else the default."""
    if value is not None:
        return value if isinstance(value, Limit) else resolve_memory_limit(value, caller)
    limit = _CURRENT.get()
    return limit if limit is not None else resolve_memory_limit(None, caller)


def check_memory(need: float, what: str, advice: str, limit=None, *, caller: str = "anonymize",
                 at_least: bool = False) -> Limit:
    """Raise :class:`MemoryLimitError` when `need` bytes exceed the limit in force.

    `what` says what would need the memory ("mining the frequent itemsets of 'german'
    at support 2"), `advice` which option of the method lowers the need; `at_least`
    when `need` is a lower bound (the estimate stopped once above the limit). Returns
    the limit checked against.

    >>> check_memory(10**6, "a model", "use a smaller one", "1GB").bytes
    1000000000
    >>> check_memory(2 * 10**9, "a model", "use a smaller one", "1GB")
    Traceback (most recent call last):
    ...
    fairanon.exceptions.MemoryLimitError: a model would need about 2 GB of memory, more than the memory limit of 1 GB (memory_limit='1GB'). Use a smaller one, or raise the limit: memory_limit= (in Python) or --memory-limit (on the command line): bytes such as 8GB, or a share of the available memory such as 0.8.
    """
    limit = current_limit(limit, caller)
    if limit.bytes is not None and need > limit.bytes:
        advice = advice[:1].upper() + advice[1:] if advice else ""
        raise MemoryLimitError(
            f"{what} would need {'at least' if at_least else 'about'} {format_bytes(need)} of memory, more than the memory limit of "
            f"{format_bytes(limit.bytes)} ({limit.source}). {advice}{', or r' if advice else 'R'}aise the "
            f"limit: {KNOB}.",
            need=int(need),
            limit=limit.bytes,
        )
    return limit
