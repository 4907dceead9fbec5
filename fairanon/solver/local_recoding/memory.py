"""The memory the exact model would take, estimated before it is built, and the
refusal when that is above the memory limit (:mod:`fairanon._memory`).

The model's size is its assignment variables, one per (type, candidate vector) pair.
Two checks, both before the model takes memory:

- :func:`check_model_memory`, before the heuristic start and the build: without the
  join closure the pairs are known from the types alone (:func:`~.encoding._pairs_count`,
  bounded by ``max_vars``). With it, that count bounds them from above; only when the
  bound does not fit the limit are the candidates listed (as the build would list
  them) to count the pairs exactly -- under a time limit within :data:`COUNT_SHARE` of
  the time the build has.
- :func:`check_pairs_memory`, inside the build once its candidates are listed and
  before any variable is created: the exact count, so a model the first check could
  not count in its time is refused there rather than built beyond the limit.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..._memory import check_memory, current_limit
from ...exceptions import FairanonError
from ...models.requirements import KAnonymity, Requirement
from .encoding import BuildStopped, Encoding, _candidates, _pairs_count, _use_closure

__all__ = ["COUNT_SHARE", "PAIR_BYTES", "PAIR_BYTES_PER_WORKER", "check_model_memory", "check_pairs_memory",
           "model_memory"]

#: Bytes per assignment variable of the model built in Python and loaded into CP-SAT,
#: plus per CP-SAT worker. Measured on German credit (k = 5, local suppression,
#: 48,555 variables, peak resident memory over the run): 4.3 kB a variable with 8
#: workers and with 1 (the model built in Python dominates).
PAIR_BYTES = 4000
PAIR_BYTES_PER_WORKER = 64
#: Under a time limit, the share of the build's time the exact count of the pairs may
#: take when their bound is above the memory limit.
COUNT_SHARE = 0.2


def model_memory(pairs: int, workers: int) -> int:
    """Bytes a model of `pairs` assignment variables takes, solved by `workers` workers.

    >>> model_memory(48_555, 8) // 10**6
    219
    """
    return pairs * (PAIR_BYTES + PAIR_BYTES_PER_WORKER * workers)


def check_model_memory(
    enc: Encoding,
    requirements: Sequence[Requirement],
    objective,
    *,
    max_vars: int,
    workers: int,
    deadline: float | None = None,
    memory_limit=None,
) -> int | None:
    """Raise MemoryLimitError when the model of `enc` would need more memory than the
    limit allows; returns the pairs counted (None when the bound sufficed)."""
    limit = current_limit(memory_limit, "cpsat")
    if limit.bytes is None:
        return None
    per_pair = PAIR_BYTES + PAIR_BYTES_PER_WORKER * workers
    closure = _use_closure(requirements, objective)
    bound = _pairs_count(enc)
    if not closure:
        bound = min(bound, max_vars)
    exact = None
    if bound * per_pair > limit.bytes:
        if closure:
            k = max([r.k for r in requirements if isinstance(r, KAnonymity)] + [1])
            now = time.perf_counter()
            count_deadline = None if deadline is None else now + COUNT_SHARE * max(deadline - now, 0.0)
            try:
                exact = len(_candidates(enc, True, k, max_vars, deadline=count_deadline).pair_t)
            except (BuildStopped, FairanonError):
                # no time to count (the build's deadline bounds what it builds), or a
                # model the build refuses itself, with its own message
                return None
        check_pairs_memory(enc, bound if exact is None else exact, workers, limit)
    return exact


def check_pairs_memory(enc: Encoding, pairs: int, workers: int, memory_limit=None) -> None:
    """Raise MemoryLimitError when a model of `pairs` assignment variables over `enc`,
    solved by `workers` workers, would need more memory than the limit allows."""
    check_memory(
        model_memory(pairs, workers),
        f"The exact model of {enc.instance.name!r} ({pairs:,} assignment variables, one per "
        f"candidate class of each of its {enc.n_types:,} record types, solved by {workers} "
        "workers)",
        "use recoding='suppression' or fewer quasi-identifiers, or a heuristic (method='lns' "
        "re-solves small parts exactly, method='mondrian')",
        memory_limit,
        caller="cpsat",
    )
