"""Memory limits: methods that can grow beyond their input estimate their need before
the work and refuse, naming the option to change, when it is above ``memory_limit``."""

import pytest

import fairanon as fa
from fairanon._memory import (
    DEFAULT_SHARE,
    available_memory,
    current_limit,
    memory_limit,
    resolve_memory_limit,
)
from fairanon.cli import main
from cli_helpers import write_job
from fairanon.exceptions import InvalidParameterError, MemoryLimitError
from fairanon.heuristics.kmember import kmember, kmember_memory
from fairanon.methods.diva import diva_exact
from fairanon.models.diversity import diva_sigma, proportional


def _passes(instance, release, requirements):
    report = fa.verify(instance, release, requirements)
    assert report.passed, str(report)


# ------------------------------------------------------------------ the limit itself
@pytest.mark.parametrize(
    ("given", "expected"),
    [("512MB", 512 * 10**6), ("2GiB", 2 * 2**30), ("1.5 GB", 1_500_000_000), (10**7, 10**7), ("3e6", 3_000_000)],
)
def test_bytes(given, expected):
    assert resolve_memory_limit(given).bytes == expected


def test_shares_and_no_limit():
    available = available_memory()
    assert available and available > 0
    assert abs(resolve_memory_limit(0.25).bytes - available / 4) < 0.05 * available
    assert abs(resolve_memory_limit("50%").bytes - available / 2) < 0.05 * available
    assert resolve_memory_limit("none").bytes is None and resolve_memory_limit(float("inf")).bytes is None
    default = resolve_memory_limit(None)
    assert abs(default.bytes - DEFAULT_SHARE * available) < 0.05 * available and "default" in default.source


@pytest.mark.parametrize("bad", [0, -1, "lots", "12XB", True, "0%", float("nan"), [1]])
def test_bad_limits_are_named(bad):
    with pytest.raises(InvalidParameterError, match="memory_limit"):
        resolve_memory_limit(bad)
    with pytest.raises(InvalidParameterError, match="memory_limit"):
        fa.anonymize(fa.load("diva_table1"), [fa.KAnonymity(2)], "mondrian", memory_limit=bad)


def test_the_front_door_opens_a_context():
    with memory_limit("1GB"):
        assert current_limit().bytes == 10**9
        assert current_limit("2GB").bytes == 2 * 10**9
    assert current_limit().source.startswith("the default")


# ------------------------------------------------------------------ k-member
def test_kmember_above_the_limit_is_refused_before_the_work():
    inst = fa.load("adult")
    need = kmember_memory(inst)
    with pytest.raises(MemoryLimitError) as info:
        fa.anonymize(inst, [fa.KAnonymity(5)], "kmember", memory_limit=need // 2)
    message = str(info.value)
    assert "k-member" in message and "memory_limit" in message and "mondrian" in message
    assert info.value.need == need and info.value.limit == need // 2
    with pytest.raises(MemoryLimitError):
        kmember(inst, [fa.KAnonymity(5)], memory_limit=need // 2)


def test_kmember_within_the_limit():
    inst = fa.load("diva_table1")
    reqs = [fa.KAnonymity(2)]
    release = fa.anonymize(inst, reqs, "kmember", memory_limit=kmember_memory(inst) + 1)
    _passes(inst, release, reqs)
    _passes(inst, kmember(inst, reqs, memory_limit="1GB"), reqs)


def test_oka_above_the_limit_is_refused_before_the_work():
    """OKA's need is k-member's plus 8 bytes per centroid field (q quasi-identifiers
    and a count) for each of the n // k clusters."""
    from fairanon.heuristics.oka import oka, oka_memory

    inst = fa.load("diva_table1")
    q = len(inst.schema.generalizable)
    need = oka_memory(inst, 3)
    assert need == kmember_memory(inst) + 8 * (q + 1) * (inst.n_rows // 3)
    with pytest.raises(MemoryLimitError) as info:
        fa.anonymize(inst, [fa.KAnonymity(3)], "oka", seed=0, memory_limit=need - 1)
    assert "OKA" in str(info.value) and "memory_limit" in str(info.value) and info.value.need == need
    _passes(inst, oka(inst, [fa.KAnonymity(3)], seed=0, memory_limit=need), [fa.KAnonymity(3)])


# ------------------------------------------------------------------ fulldomain
def test_fulldomain_above_the_limit_is_refused_before_the_lattice():
    """German credit: 1,000 records and 7 quasi-identifiers whose 22 levels give 2,430
    nodes, held in arrays: 1,000 × 2,000 + 2,430 × (7 × 16 + 22 × 2 + 32) bytes."""
    from fairanon.solver.fulldomain import lattice_size

    inst = fa.load("german")
    assert lattice_size(inst) == 2430 and len(inst.schema.generalizable) == 7
    need = 1000 * 2000 + 2430 * (7 * 16 + 22 * 2 + 32)
    reqs = [fa.KAnonymity(5)]
    with pytest.raises(MemoryLimitError) as info:
        fa.anonymize(inst, reqs, "fulldomain", seed=0, memory_limit=need - 1)
    assert "fulldomain" in str(info.value) and "search='master'" in str(info.value)
    assert info.value.need == need
    # the CP-SAT master holds no arrays over the lattice
    with pytest.raises(MemoryLimitError) as info:
        fa.anonymize(inst, reqs, "fulldomain", seed=0, search="master", memory_limit=1000 * 2000 - 1)
    assert info.value.need == 1000 * 2000
    _passes(inst, fa.anonymize(inst, reqs, "fulldomain", seed=0, memory_limit=need), reqs)


def test_fulldomain_node_estimate_bounds_the_frontiers_peak():
    """The lattice's term of fulldomain's estimate (16 bytes an attribute, 2 a level, 32
    a node) against the peak tracemalloc measures while the search's arrays are built,
    every mask of the nodes below a level is cached and a suppression bound is read
    over the whole lattice (its widest gather), then a pop: above it, by less than 1.5
    times. Eight attributes of four levels (a chain of three binary splits over eight
    values): 4^8 = 65,536 nodes, 65,536 × (8 × 16 + 32 × 2 + 32) bytes."""
    import numpy as np
    import pandas as pd

    from fairanon.solver.fulldomain.memory import fulldomain_memory
    from fairanon.solver.fulldomain.method import lattice_space
    from fairanon.solver.fulldomain.search import LatticeFrontier, lattice_levels, separable_costs

    values = [f"v{i}" for i in range(8)]
    tree = fa.Hierarchy.from_mapping(
        {"*": {f"g{g}": {f"s{g}{s}": values[4 * g + 2 * s : 4 * g + 2 * s + 2] for s in range(2)} for g in range(2)}}
    )
    rng = np.random.default_rng(0)
    names = [f"q{a}" for a in range(8)]
    inst = fa.Instance(
        pd.DataFrame({name: rng.choice(values, size=50) for name in names}),
        fa.Schema([fa.Attribute(name, hierarchy=tree) for name in names]),
        name="chains",
    )
    space, _ = lattice_space(inst, "lm")
    need = fulldomain_memory(inst, 2**20, "lattice") - 50 * 2000
    assert space.size == 4**8 and need == 4**8 * (8 * 16 + 32 * 2 + 32)

    def search_arrays():
        # As fulldomain's search holds them (method._run, then the frontier).
        levels = lattice_levels(space)
        closed = np.zeros(levels.shape[1], dtype=bool)
        separable = separable_costs(space, levels)
        frontier = LatticeFrontier(space, separable.copy(), separable, closed)
        top = tuple(space.heights)
        nothing = [np.zeros(h + 1, dtype=np.int64) for h in space.heights]
        for a, height in enumerate(space.heights):
            for j in range(height + 1):
                # Caches the mask of the nodes below level j of attribute a.
                frontier.bound_down(top[:a] + (j,) + top[a + 1 :], nothing)
        frontier.bound_down(top, [np.arange(h + 1) for h in space.heights])
        return frontier.pop(None), levels, closed

    peak, (popped, _, _) = _traced_peak(search_arrays)
    assert popped == (0,) * 8
    assert peak <= need <= 1.5 * peak, (peak, need)


# ------------------------------------------------------------------ DIVA
def test_diva_complete_pool_above_the_limit_names_exact_pool_cap():
    inst = fa.load("diva_table1")
    reqs = [fa.KAnonymity(2), *diva_sigma()]
    with pytest.raises(MemoryLimitError) as info:
        diva_exact(inst, reqs, seed=0, memory_limit=10_000)
    assert "exact_pool_cap" in str(info.value) and "memory_limit" in str(info.value)
    release = fa.anonymize(inst, reqs, "diva-exact", seed=0, memory_limit="1GB")
    assert release.status == fa.Status.OPTIMAL
    _passes(inst, release, reqs)


def test_diva_candidate_pool_above_the_limit_names_pool_candidates():
    inst = fa.load("german", roles={"sex": "qi", "personal_status": "ignore"}, name="german+sex")
    reqs = [fa.KAnonymity(20), *proportional(inst, "job", 0.96, rounding="round"),
            *proportional(inst, "sex", 0.96, rounding="round")]
    with pytest.raises(MemoryLimitError) as info:
        fa.anonymize(inst, reqs, "diva-exact", seed=0, pool_candidates=2, memory_limit=100_000)
    assert "pool_candidates" in str(info.value)


def test_diva_existence_model_above_the_limit_names_fallback():
    """The conflict of tests/heuristics/test_diva.py (only the search finds it): its
    existence model fits exactly its options' bytes and is refused one byte below."""
    from fairanon.methods.diva import SIGNATURE_OPTION_BYTES, diva

    inst = fa.load("diva_table1")
    reqs = [fa.KAnonymity(2), fa.DiversityConstraint({"ETH": "Asian"}, 2, 5),
            fa.DiversityConstraint({"GEN": "Female"}, 5, 5), fa.DiversityConstraint({"PRV": "AB"}, 3, 3)]
    release = diva(inst, reqs, seed=0, memory_limit="none")
    options = release.provenance["search"]["existence"]["options"]
    assert release.status == fa.Status.INFEASIBLE and options > 1
    fits = diva(inst, reqs, seed=0, memory_limit=options * SIGNATURE_OPTION_BYTES)
    assert fits.status == fa.Status.INFEASIBLE and fits.reason == release.reason
    with pytest.raises(MemoryLimitError) as info:
        fa.anonymize(inst, reqs, "diva", seed=0, memory_limit=options * SIGNATURE_OPTION_BYTES - 1)
    assert "existence model" in str(info.value) and "fallback=False" in str(info.value)
    assert info.value.need == options * SIGNATURE_OPTION_BYTES


# ------------------------------------------------------------------ CP-SAT
def test_cpsat_model_above_the_limit_is_refused_before_it_is_built():
    inst = fa.load("german")
    with pytest.raises(MemoryLimitError) as info:
        fa.anonymize(inst, [fa.KAnonymity(5)], "cpsat", recoding="suppression", hint=None,
                     memory_limit="50MB")
    message = str(info.value)
    assert "exact model" in message and "48,555 assignment variables" in message
    assert "recoding='suppression'" in message and "memory_limit" in message


def test_cpsat_model_is_refused_before_the_heuristic_start(monkeypatch):
    from fairanon.methods import cpsat as module

    started = []
    monkeypatch.setattr(module, "best_heuristic", lambda *a, **k: started.append(1) or (None, []))
    with pytest.raises(MemoryLimitError, match="48,555 assignment variables"):
        fa.anonymize(fa.load("german"), [fa.KAnonymity(5)], "cpsat", recoding="suppression", memory_limit="50MB")
    assert started == []


def test_cpsat_model_not_counted_in_time_is_refused_by_the_build(monkeypatch):
    """When the first check cannot count the join closure in its time, the build counts
    the pairs itself and refuses before creating a variable: the need is exactly the
    variables of the model built without a limit (270 on Table 1, k = 2) at 4,000 bytes
    plus 64 per worker."""
    from fairanon.solver.local_recoding import memory
    from fairanon.solver.local_recoding.encoding import BuildStopped

    inst = fa.load("diva_table1")
    reqs = [fa.KAnonymity(2)]
    built = fa.anonymize(inst, reqs, "cpsat", hint=None, num_workers=1, seed=0, memory_limit="none")
    variables = built.provenance["model"]["variables"]
    assert built.provenance["model"]["candidates"] == "closure" and variables > 0

    def no_time(*args, **kwargs):
        raise BuildStopped("joining the candidate classes")

    monkeypatch.setattr(memory, "_candidates", no_time)
    need = variables * (4000 + 64)
    with pytest.raises(MemoryLimitError) as info:
        fa.anonymize(inst, reqs, "cpsat", hint=None, num_workers=1, seed=0, memory_limit=need - 1)
    assert info.value.need == need and f"{variables:,} assignment variables" in str(info.value)
    fits = fa.anonymize(inst, reqs, "cpsat", hint=None, num_workers=1, seed=0, memory_limit=need)
    assert fits.status == built.status and fits.objective == built.objective
    _passes(inst, fits, reqs)


def test_cpsat_within_the_limit():
    inst = fa.load("diva_table1")
    reqs = [fa.KAnonymity(2), *diva_sigma()]
    release = fa.anonymize(inst, reqs, "cpsat", recoding="suppression", seed=0, memory_limit="200MB",
                           num_workers=1)
    assert release.status == fa.Status.OPTIMAL
    _passes(inst, release, reqs)


def test_lns_neighbourhood_models_above_the_limit_are_refused_before_the_work():
    """A neighbourhood model has at most 30,000 assignment variables of 4,000 bytes plus
    64 per worker; one per search process, and a table this small is searched in one
    (fewer than 2 x 200 classes), whatever `searches`."""
    from fairanon.solver.lns import NEIGHBOURHOOD_MAX_VARS

    inst = fa.load("diva_table1")
    reqs = [fa.KAnonymity(2)]
    one = 30_000 * (4000 + 64 * 1)
    assert NEIGHBOURHOOD_MAX_VARS == 30_000
    with pytest.raises(MemoryLimitError) as info:
        fa.anonymize(inst, reqs, "lns", seed=0, searches=2, num_workers=1, memory_limit=one - 1)
    message = str(info.value)
    assert "neighbourhood" in message and "num_workers" in message and "memory_limit" in message
    assert info.value.need == one
    release = fa.anonymize(inst, reqs, "lns", seed=0, searches=2, num_workers=1, time_limit=5, max_rounds=3,
                           memory_limit=one)
    assert release.provenance["search"]["parts"] == 1
    _passes(inst, release, reqs)


# ------------------------------------------------------------------ command line
def test_cli_memory_limit(tmp_path, capsys):
    job = write_job(tmp_path, requirements="\n- k_anonymity: {k: 2}", method="kmember")
    out = tmp_path / "out"
    assert main(["anonymize", str(job), "--memory-limit", "1000", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "k-member" in err and "--memory-limit" in err
    assert not (out / "report.json").exists()
    assert main(["anonymize", str(job), "--memory-limit", "plenty", "--out", str(out)]) == 2
    assert "--memory-limit" in capsys.readouterr().err
    assert main(["anonymize", str(job), "--memory-limit", "0.5", "--out", str(out)]) == 0
    assert main(["verify", str(job), "--release", str(out / "release.csv")]) == 0


def test_job_file_memory_limit(tmp_path, capsys):
    """The job's memory_limit reaches the method; --memory-limit overrides it."""
    from fairanon.jobs import read_job

    job = write_job(tmp_path, requirements="\n- k_anonymity: {k: 2}", method="kmember", extra="memory_limit: 1000\n")
    assert read_job(str(job)).memory_limit == 1000
    out = tmp_path / "out"
    assert main(["anonymize", str(job), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "k-member" in err and "memory limit of 1 kB (memory_limit=1000)" in err
    assert not (out / "report.json").exists()
    assert main(["anonymize", str(job), "--memory-limit", "1GB", "--out", str(out)]) == 0
    assert main(["verify", str(job), "--release", str(out / "release.csv")]) == 0


@pytest.mark.parametrize("bad", ["plenty", 0, -5, "true"])
def test_job_file_bad_memory_limit_is_named(tmp_path, capsys, bad):
    job = write_job(tmp_path, method="kmember", extra=f"memory_limit: {bad}\n")
    assert main(["anonymize", str(job), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "'memory_limit' parameter of job file" in err and "Traceback" not in err


def test_the_default_keeps_within_an_address_space_limit():
    """A process limited by RLIMIT_AS (as fairanon bench's runs are) gets a default
    within what the limit leaves, however much the machine has."""
    import subprocess
    import sys

    code = (
        "import resource\n"
        "resource.setrlimit(resource.RLIMIT_AS, (2**31, 2**31))\n"
        "from fairanon._memory import resolve_memory_limit\n"
        "print(resolve_memory_limit(None).bytes)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert 0 < int(out.stdout) <= 2**30


# ------------------------------------------------------------------ measured peaks
def _traced_peak(run):
    """The peak of memory tracemalloc sees (numpy reports its arrays to it) while
    `run()` runs, and what it returns."""
    import tracemalloc

    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        out = run()
        return tracemalloc.get_traced_memory()[1] - start, out
    finally:
        tracemalloc.stop()


_RESIDENT = '''
import gc


def resident(key):
    with open("/proc/self/status") as fh:
        return next(int(line.split()[1]) * 1024 for line in fh if line.startswith(key + ":"))


def start_peak():
    """Reset the process's peak resident memory to what it holds now (Linux)."""
    gc.collect()
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")
    return resident("VmRSS")
'''


def _fresh_peak(code: str) -> list[str]:
    """Run `code` in a fresh process (solvers' C++ memory is not seen by tracemalloc,
    and a solver's first use in a process costs more than later ones); it calls
    ``start_peak()`` and prints the growth of peak resident memory (``VmHWM``) and what
    the test compares it with."""
    import subprocess
    import sys

    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pytest.skip("the peak resident memory cannot be reset on this system")
    out = subprocess.run([sys.executable, "-c", _RESIDENT + code], capture_output=True, text=True, check=True)
    return out.stdout.split()


# ------------------------------------------------------------------ lattice-local
def test_lattice_local_estimate_bounds_its_peak():
    """The estimate checked before lattice-local (4 MB and fulldomain's 2 kB a record
    and 16 bytes an attribute, 2 a level and 32 a node of the 2,430-node lattice) against the peak
    tracemalloc measures over the whole method: above it, by less than 2 times."""
    from fairanon.solver.fulldomain import lattice_local
    from fairanon.solver.fulldomain.method import LATTICE_NODES
    from fairanon.solver.fulldomain.memory import lattice_local_memory

    inst = fa.load("german")
    reqs = [fa.KAnonymity(20)]
    need = lattice_local_memory(inst, LATTICE_NODES)
    assert need == 4_000_000 + 1000 * 2000 + 2430 * (7 * 16 + 22 * 2 + 32)
    peak, release = _traced_peak(lambda: lattice_local(inst, reqs, seed=0))
    assert peak <= need <= 2 * peak, (peak, need)
    _passes(inst, release, reqs)


def test_lattice_local_above_the_limit_is_refused_before_the_lattice(monkeypatch):
    from fairanon.solver.fulldomain import local

    built = []
    monkeypatch.setattr(local, "lattice_space", lambda *a, **k: built.append(1))
    inst = fa.load("german")
    need = 4_000_000 + 1000 * 2000 + 2430 * (7 * 16 + 22 * 2 + 32)
    with pytest.raises(MemoryLimitError) as info:
        fa.anonymize(inst, [fa.KAnonymity(5)], "lattice-local", seed=0, memory_limit=need - 1)
    assert "lattice-local" in str(info.value) and "memory_limit" in str(info.value) and "mondrian" in str(info.value)
    assert info.value.need == need and built == []


# ------------------------------------------------------------------ fulldomain's CP-SAT master
def _master_literals(model) -> tuple[int, int]:
    """The constraints (and the objective) of a CP-SAT model and the literals they hold,
    read from its proto."""
    proto = model.Proto()
    literals = len(proto.objective.vars)
    for c in proto.constraints:
        literals += len(c.enforcement_literal)
        literals += len(c.bool_or.literals) if c.has_bool_or() else 0
        literals += len(c.exactly_one.literals) if c.has_exactly_one() else 0
        literals += len(c.linear.vars) if c.has_linear() else 0
    return len(proto.constraints) + 1, literals


def _master_sizes(monkeypatch, reqs=(fa.KAnonymity(5),), method="fulldomain", **options):
    """A search with the master on German credit (by default fulldomain, k = 5, 2 %
    suppression) under `options`; the master's size (constraints, literals) at each
    memory check."""
    from fairanon.solver.fulldomain import master

    sizes, frontiers = [], []
    real = master.MasterFrontier._check_memory

    def check(self):
        sizes.append((self.constraints, self.literals))
        frontiers.append(self)
        return real(self)

    monkeypatch.setattr(master.MasterFrontier, "_check_memory", check)
    if method == "fulldomain":
        options = {"search": "master", "max_suppressed": 0.02, **options}
    release = fa.anonymize(fa.load("german"), list(reqs), method, seed=0, **options)
    return release, sizes, frontiers[-1]


def _master_need(size, held=1000 * 2000) -> int:
    """The bytes a master of `size` (constraints, literals) is checked against: German
    credit's records (1,000 x 2,000 bytes), the master's 12 MB, 500 bytes a constraint
    and 160 a literal."""
    return held + 12_000_000 + 500 * size[0] + 160 * size[1]


def test_master_counts_its_model(monkeypatch):
    """The size the master's memory is estimated from is its model's, as the proto
    reads it: every cut's literals counted."""
    release, sizes, frontier = _master_sizes(monkeypatch, memory_limit="none")
    assert release.status == fa.Status.OPTIMAL and len(sizes) > 10
    assert (frontier.constraints, frontier.literals) == _master_literals(frontier.model)
    _passes(fa.load("german"), release, [fa.KAnonymity(5)])


def _count_solves(monkeypatch) -> list:
    from fairanon.solver import _cpsat

    solves = []
    real = _cpsat.solve
    monkeypatch.setattr(_cpsat, "solve", lambda *a, **k: solves.append(1) or real(*a, **k))
    return solves


def test_master_refuses_before_its_first_solve(monkeypatch):
    """A limit below the master as first built (checked when it is built and before its
    first solve) refuses before any solve."""
    _, sizes, _ = _master_sizes(monkeypatch, memory_limit="none")
    solves = _count_solves(monkeypatch)
    need = _master_need(sizes[0])
    with pytest.raises(MemoryLimitError) as info:
        _master_sizes(monkeypatch, memory_limit=need - 1)
    assert info.value.need == need and solves == []
    assert "fulldomain's CP-SAT master" in str(info.value) and "search='lattice'" in str(info.value)


def test_master_stops_the_search_at_a_later_limit_with_the_best_node_so_far(monkeypatch):
    """A limit just below the master at its twentieth check (before its twentieth
    solve): the search ends there, as at a deadline, and the best node found so far is
    released, FEASIBLE with the master's last bound, its provenance naming the stop."""
    optimum, sizes, _ = _master_sizes(monkeypatch, memory_limit="none")
    assert optimum.status == fa.Status.OPTIMAL and len(sizes) > 21
    later = sizes[20]
    solves = _count_solves(monkeypatch)
    release, _, _ = _master_sizes(monkeypatch, memory_limit=_master_need(later) - 1)
    assert release.status == fa.Status.FEASIBLE and len(solves) == 19
    _passes(fa.load("german"), release, [fa.KAnonymity(5)])
    stopped = release.provenance["search"]["stopped"]
    assert stopped.startswith("memory limit: fulldomain's CP-SAT master")
    assert f"{later[0]:,} constraints of {later[1]:,} literals" in stopped
    assert release.bound <= optimum.objective <= release.objective


def test_master_stopped_before_any_node_passes_is_unknown(monkeypatch):
    """The decision attribute (credit) has two values, so no class is 3-diverse: stopped
    at its second solve, the search has no node, UNKNOWN with the stop as the reason,
    the lattice's top node, judged by the verifier, failing 3-diversity."""
    reqs = [fa.LDiversity(3)]
    proven, sizes, _ = _master_sizes(monkeypatch, reqs, memory_limit="none")
    assert proven.status == fa.Status.INFEASIBLE and len(sizes) > 2
    solves = _count_solves(monkeypatch)
    release, _, _ = _master_sizes(monkeypatch, reqs, memory_limit=_master_need(sizes[2]) - 1)
    assert release.status == fa.Status.UNKNOWN and len(solves) == 1
    assert release.reason.startswith("the search stopped before any lattice node passed: memory limit:")
    assert release.reason.endswith(f"; the lattice's top node fails {reqs[0]}")
    assert release.objective is None and release.provenance["top_node"]


def test_lattice_local_master_counts_what_lattice_local_holds(monkeypatch):
    """lattice-local's search for the best full-domain node, on the master (forced here
    for German credit's small lattice): its checks count lattice-local's 4 MB besides
    the records and name it. A limit that lets the master grow to 11 constraints of 47
    literals ends that search with its best node so far, and the rounds still give a
    release that passes; a limit below the master as first built refuses before any
    solve."""
    from fairanon.solver.fulldomain import local, method

    monkeypatch.setattr(method, "LATTICE_NODES", 1)
    monkeypatch.setattr(local, "LATTICE_NODES", 1)
    held = 4_000_000 + 1000 * 2000
    reqs = [fa.KAnonymity(5)]
    solves = _count_solves(monkeypatch)
    limit = _master_need((11, 47), held)
    release, sizes, _ = _master_sizes(monkeypatch, reqs, "lattice-local", memory_limit=limit)
    assert _master_need(sizes[-2], held) <= limit < _master_need(sizes[-1], held)
    assert release.status == fa.Status.FEASIBLE and len(solves) == len(sizes) - 2 > 0
    stopped = release.provenance["fulldomain_stopped"]
    assert stopped.startswith("memory limit: lattice_local's CP-SAT master")
    assert f"{sizes[-1][0]:,} constraints of {sizes[-1][1]:,} literals" in stopped
    _passes(fa.load("german"), release, reqs)
    solves.clear()
    need = _master_need(sizes[0], held)
    with pytest.raises(MemoryLimitError) as info:
        _master_sizes(monkeypatch, reqs, "lattice-local", memory_limit=need - 1)
    assert info.value.need == need and solves == []
    assert "lattice_local's CP-SAT master" in str(info.value) and "search=" not in str(info.value)


def test_master_estimate_bounds_a_solve_peak():
    """A master of 500 random suppression bounds and 167 closed nodes over German
    credit's lattice, solved once in a fresh process: the estimate is above the growth
    of peak resident memory over its build and solve, by less than 1.5 times."""
    out = _fresh_peak('''
import numpy as np
import fairanon as fa
from fairanon._memory import Limit
from fairanon.solver.fulldomain.master import MasterFrontier
from fairanon.solver.fulldomain.memory import master_memory
from fairanon.solver.fulldomain.method import lattice_space

inst = fa.load("german")
space, _ = lattice_space(inst, "lm")
rng = np.random.default_rng(0)
start = start_peak()
frontier = MasterFrontier(space, k=2, n=inst.n_rows, limit=10, deadline=None, seed=0)
frontier.memory_limit = Limit(None, "none")
for i in range(500):
    levels = tuple(int(rng.integers(0, h + 1)) for h in space.heights)
    frontier.bound_down(levels, [rng.integers(0, 1000, size=h + 1) for h in space.heights])
    if i % 3 == 0:
        frontier.close(levels)
assert frontier.pop(None) is not None
print(resident("VmHWM") - start, master_memory(frontier.constraints, frontier.literals))
''')
    peak, need = int(out[0]), int(out[1])
    assert peak <= need <= 1.5 * peak, (peak, need)


# ------------------------------------------------------------------ lns's LP bound
def _german3():
    return fa.load("german", qi=["personal_status", "job", "savings"], roles={"personal_status": "qi"})


def test_lp_bound_estimate_bounds_its_peak():
    """German credit on 5 quasi-identifiers (k = 5): the estimate of the LP bound at
    its end (8 MB, 500 bytes a closure vector, 2 a cell pairing vectors with types, 80
    a pair, 150 a nonzero of the LP) against the growth of peak resident memory over
    lp_bound in a fresh process: above it, by less than 1.5 times."""
    out = _fresh_peak('''
import fairanon as fa
from fairanon.solver.bounds import lp_bound

inst = fa.load("german", qi=["personal_status", "job", "savings", "housing", "employment"],
               roles={"personal_status": "qi"})
start = start_peak()
found = lp_bound(inst, [fa.KAnonymity(5)], "ncp", memory_limit="none")
d = found.details
print(resident("VmHWM") - start, d["closure"], d["pairs"], d["nonzeros"], found.complete)
''')
    peak, vectors, pairs, nonzeros = map(int, out[:4])
    assert out[4] == "True"
    types = 293  # one protected group: every vector is paired with every type
    need = 8_000_000 + 500 * vectors + 2 * vectors * types + 80 * pairs + 150 * nonzeros
    assert peak <= need <= 1.5 * peak, (peak, need)


def test_lp_bound_above_the_limit_is_refused_before_the_closure(monkeypatch):
    """German credit on 3 quasi-identifiers has 60 record types (no protected
    attribute): the closure holds at least their 60 vectors, paired with the 60 types."""
    from fairanon.solver import bounds

    listed = []
    monkeypatch.setattr(bounds, "_candidates", lambda *a, **k: listed.append(1))
    need = 8_000_000 + 500 * 60 + 2 * 60 * 60
    with pytest.raises(MemoryLimitError) as info:
        bounds.lp_bound(_german3(), [fa.KAnonymity(5)], "ncp", memory_limit=need - 1)
    assert info.value.need == need and listed == []
    assert "LP bound" in str(info.value) and "memory_limit" in str(info.value)


@pytest.mark.parametrize("room", [60, 322])
def test_lp_bound_refuses_a_closure_or_pairs_beyond_the_limit(monkeypatch, room):
    """Room for 60 vectors of 500 bytes paired with 60 types at 2 bytes a cell: the
    closure of the 60 types (it has more vectors) stops at 61 and is refused. Room for
    322: the closure is built and its pairs are refused before they are listed; no
    pricing starts either way."""
    from fairanon.solver import bounds

    priced = []
    monkeypatch.setattr(bounds, "_Pricer", lambda *a, **k: priced.append(1))
    limit = 8_000_000 + room * (500 + 2 * 60)
    with pytest.raises(MemoryLimitError) as info:
        bounds.lp_bound(_german3(), [fa.KAnonymity(5)], "ncp", memory_limit=limit)
    assert info.value.limit == limit and info.value.need > limit and priced == []
    if room == 60:
        assert info.value.need == 8_000_000 + 61 * (500 + 2 * 60)
        assert "more than 60 vectors" in str(info.value)
    else:
        assert "(type, vector) pairs" in str(info.value)


def test_lp_bound_stops_adding_columns_at_the_limit():
    """German credit on 4 quasi-identifiers (k = 10), whose LP's nonzeros outweigh the
    pairing of its closure: under a limit the whole LP passes the columns stop before
    it, and the bound is still one (between the per-record bound and a verified
    release's objective)."""
    from fairanon.models.bounds import lower_bound
    from fairanon.models.objectives import objective_value
    from fairanon.solver.bounds import lp_bound

    inst = fa.load("german", qi=["personal_status", "job", "savings", "housing"], roles={"personal_status": "qi"})
    reqs = [fa.KAnonymity(10)]
    whole = lp_bound(inst, reqs, "ncp", memory_limit="none")
    d = whole.details
    assert whole.complete and d["rounds"] > 2
    held = 8_000_000 + 500 * d["closure"] + 80 * d["pairs"]
    cut = lp_bound(inst, reqs, "ncp", memory_limit=held + 150 * (d["nonzeros"] - 1))
    assert not cut.complete and cut.details["nonzeros"] < d["nonzeros"]
    assert cut.details["stopped"].startswith("memory limit") and cut.details["rounds"] <= d["rounds"]
    release = fa.anonymize(inst, reqs, "mondrian")
    _passes(inst, release, reqs)
    assert lower_bound(inst, reqs, "ncp").value <= cut.value <= objective_value(inst, release, "ncp")


def test_lns_bound_falls_back_to_the_per_record_bound():
    """best_bound (lns's bound) under a limit the LP bound's closure passes: the
    per-record bound, with the LP bound's refusal as the reason."""
    from fairanon._memory import memory_limit
    from fairanon.methods.lns import best_bound
    from fairanon.models.bounds import lower_bound

    inst, reqs = _german3(), [fa.KAnonymity(5)]
    with memory_limit("1MB"):
        found = best_bound(inst, reqs, "ncp")
    assert found.value == lower_bound(inst, reqs, "ncp").value and found.method == "per-record"
    assert found.details["lp_bound"].startswith("not computed: The LP bound's join closure")
    assert "memory_limit" in found.details["lp_bound"]


def test_lns_run_reports_the_refused_lp_bound(monkeypatch):
    """An lns run whose LP bound is refused finishes with the per-record bound and the
    reason in its provenance."""
    from fairanon.methods import lns

    def refused(*args, **kwargs):
        raise MemoryLimitError("The LP bound's join closure would need more", need=2, limit=1)

    monkeypatch.setattr(lns, "lp_bound", refused)
    inst, reqs = fa.load("german"), [fa.KAnonymity(5)]
    # The bound gets 15 % of the limit: of 2 s, too little on a loaded machine (no bound).
    release = fa.anonymize(inst, reqs, "lns", seed=0, num_workers=1, time_limit=10, max_rounds=1)
    bound = release.provenance["lower_bound"]
    assert bound["method"] == "per-record" and bound["lp_bound"].startswith("not computed")
    assert release.bound is not None and release.bound <= release.objective
    _passes(inst, release, reqs)


def test_the_ranges_of_an_ordered_attribute_are_refused_before_they_are_built():
    """An ordered attribute of 400 values with max_range_values=400 has 79,800 ranges
    as candidate labels (about 32 MB with their texts and losses, quadratic in the
    values): refused under 5 MB before any is built."""
    import tracemalloc

    import pandas as pd

    from fairanon._memory import memory_limit
    from fairanon.solver.local_recoding.labels import _label_space

    values = [f"v{i:03d}" for i in range(400)]
    inst = fa.Instance(pd.DataFrame({"o": values}), fa.Schema([fa.Attribute("o", kind="ordered", order=values)]))
    tracemalloc.start()
    try:
        with memory_limit("5MB"), pytest.raises(MemoryLimitError, match="79,800 candidate labels"):
            _label_space(inst, "o", "generalization", 400)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5 * 2**20


def _ages_and_codes(n: int = 2_000) -> fa.Instance:
    """n records: an age (every one of 18..89 present) and a sensitive code of n
    distinct values in order."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    codes = [f"{i:04d}" for i in range(n)]
    return fa.Instance(
        pd.DataFrame({"age": np.arange(n) % 72 + 18, "dx": rng.permutation(codes)}),
        fa.Schema([fa.Attribute("age", kind="numeric"),
                   fa.Attribute("dx", role="sensitive", kind="ordered", order=codes)]),
    )


def test_mondrian_refuses_the_counts_of_its_cuts_beyond_the_limit():
    """Mondrian's first cut of the age reads the counts of the 72 ages' runs over the
    2,000 codes, three arrays of 8 bytes a cell (72 x 2,000 x 24 = 3,456,000 bytes):
    refused under 1 MB by name, and met under the default limit (verified)."""
    from fairanon._memory import memory_limit

    inst = _ages_and_codes()
    reqs = [fa.KAnonymity(4), fa.TCloseness("0.9", attribute="dx")]
    with memory_limit("1MB"), pytest.raises(MemoryLimitError, match="72 candidate cuts over 2,000 values") as err:
        fa.anonymize(inst, reqs, method="mondrian", seed=0)
    assert err.value.need == 72 * 2_000 * 24
    release = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    assert fa.verify(inst, release, reqs, metrics=False).passed


def test_the_verifier_refuses_its_counts_of_classes_over_values_beyond_the_limit():
    """The verifier's counts of each class over the 2,000 codes (with the working
    arrays of the EMD: 24 bytes a cell) are refused under 100 kB by name rather than
    taken; under the default limit the same release passes."""
    from fairanon._memory import memory_limit

    inst = _ages_and_codes()
    reqs = [fa.KAnonymity(4), fa.TCloseness("0.9", attribute="dx")]
    release = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    classes = release.table.groupby("age").ngroups
    assert classes > 1 and fa.verify(inst, release, reqs, metrics=False).passed
    with memory_limit("100kB"), pytest.raises(MemoryLimitError,
                                              match=f"{classes} classes over 2,000 values") as err:
        fa.verify(inst, release, reqs, metrics=False)
    assert err.value.need == classes * 2_000 * 24
