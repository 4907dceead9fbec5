"""A Dask cluster on this machine, set up for fairanon's shuffles.

:func:`local_client` starts a :class:`distributed.LocalCluster` whose workers run one
task at a time and whose shuffle buffers fit their memory limit; ``fairanon ...
--engine dask`` without ``--scheduler`` and the large-data benchmark use it. On a
cluster of your own, give the workers the settings of :func:`worker_settings` (in
their Dask configuration) for the same behaviour.
"""

from __future__ import annotations

import contextlib
import logging
import re
import signal
from collections.abc import Iterator

from .._validation import check_int
from ..exceptions import FairanonError, InvalidParameterError

__all__ = ["local_client", "peak_rss_mb", "quiet_dask_logs", "trim_workers", "worker_settings"]


class _Drop(logging.Filter):
    """Drops the records whose message matches a pattern."""

    def __init__(self, *patterns: str):
        super().__init__()
        self.pattern = re.compile("|".join(patterns))

    def filter(self, record: logging.LogRecord) -> bool:
        return not self.pattern.search(record.getMessage())


#: Distributed's scheduler logs the start and the end of every peer-to-peer shuffle as
#: a WARNING ("Shuffle ... initialized by task ...", "Shuffle ... deactivated due to
#: stimulus ..."), although nothing is wrong: Mondrian and the verifier shuffle on every
#: run, so these lines would reach every user of the engine. Other shuffle warnings
#: still pass.
_SHUFFLE_NOISE = _Drop(r"^Shuffle \S+ initialized by task ", r"^Shuffle \S+ deactivated due to stimulus ")
#: A LocalCluster's nannies log "Worker process still alive after ... seconds, killing"
#: when the cluster closes with a worker still freeing its memory: the end of the run,
#: not a fault.
_CLOSING_NOISE = _Drop(r"^Worker process still alive after .* seconds, killing")
class _ReadingFailed(logging.Filter):
    """Drops a worker's log of a task that raised ("Compute Failed", with its traceback,
    on the terminal a LocalCluster shares with its client) when the exception is one the
    client turns into a one-line error: fairanon's own (a record id that is not the
    instance's among them), or a reader's on a bad file
    (:func:`~fairanon.distributed.instance.reading_failed`: a file it cannot open, a CSV
    row of too many fields met in a later block, text that is not UTF-8, a Parquet file
    Arrow cannot read, a column whose type Dask guessed from the first blocks).
    Any other exception is a fault: its log, with the task's traceback, is kept."""

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith("Compute Failed"):
            return True
        args = record.args if isinstance(record.args, tuple) else ()
        if len(args) < 4:
            return True
        # Distributed logs the task's key and the exception as its repr:
        # "ParserError('Error tokenizing ...')". A plain OSError is a reader's in a reading
        # task only: elsewhere it is a fault of the cluster ("Timed out trying to connect",
        # a full disk, too many open files), and its repr does not give the file name.
        exception = str(args[3])
        return not (_reading_error().match(exception) or exception.startswith("OSError(") and _reading_task(args[0]))


def _reading_task(key) -> bool:
    """Whether a task's key (a name, or a tuple of a name and a partition) is of a task
    that reads a file (:data:`~fairanon.distributed.instance.READING_TASKS`)."""
    from .instance import READING_TASKS

    name = key[0] if isinstance(key, tuple) and key else key
    return str(name).startswith(READING_TASKS)


def _subclasses(cls: type) -> list[str]:
    return [cls.__name__] + [name for sub in cls.__subclasses__() for name in _subclasses(sub)]


def _reading_error() -> re.Pattern:
    """The repr of an exception :class:`_ReadingFailed` drops the log of, from its
    start: fairanon's errors and the readers'
    (:func:`~fairanon.distributed.instance.reader_errors`), each with its subclasses,
    named when a task fails (all of them are defined by then), and a reader's OSErrors
    (:data:`~fairanon.distributed.instance.FILE_ERRORS`) but the plain OSError, which
    :class:`_ReadingFailed` drops in a reading task only."""
    from .instance import FILE_ERRORS, MISMATCHED_DTYPES, reader_errors

    names = sorted({name for cls in (FairanonError, *reader_errors()) for name in _subclasses(cls)}
                   | {cls.__name__ for cls in FILE_ERRORS if cls is not OSError})
    return re.compile(rf"({'|'.join(map(re.escape, names))})\(|ValueError\(['\"]{MISMATCHED_DTYPES}")


_FAILED_TASK = _ReadingFailed()


class _Cancelled(logging.Filter):
    """Drops asyncio's "Task exception was never retrieved" of a gather the client
    cancelled (Distributed's AllExit): a Ctrl-C's, not a fault."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        return type(error).__name__ != "AllExit"


_GATHER_CANCELLED = _Cancelled()
#: A worker's log of its tasks cancelled as its cluster closes (after a Ctrl-C).
_CANCELLED_TASKS = _Drop(r"^Async instruction for <Task cancelled .* ended with CancelledError")
#: A worker's log of its heartbeat failing when the scheduler, in the client's process,
#: has closed first (after a Ctrl-C, the worker ignoring it): the end of the command.
_SCHEDULER_GONE = _Drop(r"^Failed to communicate with scheduler during heartbeat")


def quiet_dask_logs() -> None:
    """Keep the scheduler's routine shuffle messages (logged as warnings) from the
    user's terminal; called when :mod:`fairanon.distributed` is imported."""
    logger = logging.getLogger("distributed.shuffle._scheduler_plugin")
    if _SHUFFLE_NOISE not in logger.filters:
        logger.addFilter(_SHUFFLE_NOISE)


def peak_rss_mb() -> float | None:
    """This process's peak resident memory in MB: its own high-water mark (Linux's
    ``VmHWM``), else ``ru_maxrss``.

    ``ru_maxrss`` is not the process's own: on Linux it keeps the peak of the process
    that started it (the high-water mark is carried over ``exec``), so a Dask worker
    spawned by a client that had used 1.7 GB reports at least 1.7 GB however little it
    used itself."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        import resource
        import sys

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak / 2**20 if sys.platform == "darwin" else peak / 1024
    except (ImportError, OSError):  # pragma: no cover - not a Unix
        return None

#: Share of a worker's memory limit that the peer-to-peer shuffle may hold in shards
#: waiting to be sent. Dask's default (1 GiB whatever the limit) lets a worker with
#: 1 GB of memory fill it with buffered shards and be restarted by its nanny, which
#: fails the shuffle and starts it again (seen shuffling 50 M records).
COMM_BUFFER_SHARE = 1 / 8


def worker_settings(memory_limit: int | None) -> dict:
    """Dask configuration for workers of `memory_limit` bytes (None: no limit).

    - ``distributed.worker.memory.pause: False``: a paused worker stops serving its
      shuffle outputs, and one whose memory the allocator keeps after a shuffle stays
      paused, so the others wait for ever (the nanny still restarts a worker beyond
      95 % of its limit);
    - ``distributed.p2p.comm.buffer``: :data:`COMM_BUFFER_SHARE` of the limit;
    - Arrow's buffers from the system allocator (``ARROW_DEFAULT_MEMORY_POOL=system``
      in the workers' environment), which returns the memory of a shuffle's shards
      to the system as the nanny's ``MALLOC_TRIM_THRESHOLD_`` asks, where Arrow's
      own pool kept 100-150 MB more a worker shuffling 50 M records.

    >>> worker_settings(2**30)["distributed.p2p.comm.buffer"]
    134217728
    """
    settings: dict = {"distributed.worker.memory.pause": False,
                      "distributed.nanny.pre-spawn-environ.ARROW_DEFAULT_MEMORY_POOL": "system"}
    if memory_limit:
        settings["distributed.p2p.comm.buffer"] = max(int(memory_limit * COMM_BUFFER_SHARE), 16 * 2**20)
    return settings


@contextlib.contextmanager
def local_client(workers: int | None = None, memory_limit: str | int = "auto") -> Iterator:
    """A :class:`distributed.Client` on a LocalCluster of `workers` single-threaded
    worker processes (default: one per core), each limited to `memory_limit` (bytes, a
    string such as ``"1GB"``, or ``"auto"``: the machine's memory shared among them)."""
    try:
        import dask
        from dask.system import CPU_COUNT
        from distributed import Client, LocalCluster
        from distributed.system import MEMORY_LIMIT
    except ImportError:  # pragma: no cover - the extra is installed in the test environment
        raise InvalidParameterError(
            "engine='dask' needs Dask: pip install 'fairanon[dask]' (dask[dataframe] and distributed)."
        ) from None
    if workers is not None:
        check_int(workers, "workers", "local_client", low=1)
    n = workers or CPU_COUNT
    if memory_limit == "auto":
        limit = MEMORY_LIMIT // n
    else:
        limit = dask.utils.parse_bytes(memory_limit) if isinstance(memory_limit, str) else int(memory_limit)
    quiet_dask_logs()
    nanny = logging.getLogger("distributed.nanny")
    nanny.addFilter(_CLOSING_NOISE)
    logging.getLogger("asyncio").addFilter(_GATHER_CANCELLED)
    from distributed.deploy.spec import SpecCluster

    before = set(SpecCluster._instances)
    try:
        # Workers read the configuration their nanny is started with.
        with dask.config.set(worker_settings(limit)), \
                LocalCluster(n_workers=n, threads_per_worker=1, memory_limit=limit,
                             dashboard_address=None) as cluster, \
                Client(cluster) as c:
            c.run(_quiet_failed_tasks)
            c.run(_ignore_interrupts)
            try:
                yield c
            except KeyboardInterrupt:
                # The cluster closes as the process ends: its closing logs (a task's
                # AllExit never retrieved, say) are not for the user.
                _silence_distributed()
                raise
    except KeyboardInterrupt:
        from distributed.core import Status

        started = [cl for cl in set(SpecCluster._instances) - before if getattr(cl, "status", None) != Status.closed]
        if started:
            _abandon(started)
        raise
    finally:
        nanny.removeFilter(_CLOSING_NOISE)
        logging.getLogger("asyncio").removeFilter(_GATHER_CANCELLED)


def _ignore_interrupts() -> None:
    """In a worker of :func:`local_client` (its main thread, where its event loop runs):
    ignore Ctrl-C. The terminal sends it to every process of the command; this one closes
    the cluster, where each worker printed its own KeyboardInterrupt (a worker its nanny
    restarts takes it again); nor log the tasks the closing cancels, nor the heartbeat
    that fails when the scheduler has closed first."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name, noise in (("distributed.worker.state_machine", _CANCELLED_TASKS),
                        ("distributed.worker", _SCHEDULER_GONE)):
        logger = logging.getLogger(name)
        if noise not in logger.filters:
            logger.addFilter(noise)


def _quiet_failed_tasks() -> None:
    """In a worker of :func:`local_client`: keep its log of tasks failed on a bad file off
    the terminal (:class:`_ReadingFailed`; a worker its nanny restarts logs them again)."""
    logger = logging.getLogger("distributed.worker")
    if _FAILED_TASK not in logger.filters:
        logger.addFilter(_FAILED_TASK)


def _silence_distributed() -> None:
    """Silence Distributed's logs (and asyncio's, tornado's) for the rest of the process."""
    for name in ("distributed", "asyncio", "tornado"):
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)


def _abandon(clusters: list) -> None:
    """Close quietly the clusters a Ctrl-C caught while they started (the process is
    ending: Distributed's logs are silenced for the rest of it).

    A LocalCluster interrupted in its constructor is never entered, so nothing closes
    it but Distributed's exit handler, which then fails on its workers still starting
    ("Exception ignored in atexit callback ... AssertionError: Status.init") and logs
    their nannies' failures. The interrupt is what the user sees: the cluster is closed
    here with those failures silenced, and left out of the exit handler."""
    _silence_distributed()
    for cluster in clusters:
        with contextlib.suppress(Exception):
            cluster.close(timeout=2)
        cluster.shutdown_on_close = False


def trim_workers(client) -> dict:
    """Hand the memory the workers have freed back to the system, between passes: a
    garbage collection, then glibc's ``malloc_trim`` (elsewhere nothing more). A
    shuffle leaves freed pages in the allocator's heap that count against the next
    pass's memory limit. Returns each worker's resident memory afterwards (MB)."""
    return client.run(_trim)


def _trim() -> float:
    import ctypes
    import gc

    import psutil  # a requirement of distributed

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass
    return psutil.Process().memory_info().rss / 2**20

