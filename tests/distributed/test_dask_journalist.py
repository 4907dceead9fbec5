"""Journalist risk against a population table on Dask (``fa.risk(..., engine="dask",
population=...)``): the figures of a hand-computed example, and on random tables those
of a brute-force count (each class's labels read against every population record) and
of the local engine. Dask's synchronous scheduler: the tests stay fast."""

from collections import Counter
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

dask = pytest.importorskip("dask")
dd = pytest.importorskip("dask.dataframe")

import fairanon as fa  # noqa: E402
from fairanon.heuristics.mondrian import mondrian  # noqa: E402
from fairanon.instances.generalization import label_covers  # noqa: E402
from fairanon.instances.synthetic import population  # noqa: E402


pytestmark = pytest.mark.usefixtures("synchronous")


def _populations(table: pd.DataFrame, tmp_path) -> dict:
    """The same population as a pandas DataFrame, a Dask DataFrame of three partitions and
    a Parquet path."""
    path = tmp_path / "population.parquet"
    table.to_parquet(path, index=False)
    return {"pandas": table, "dask": dd.from_pandas(table, npartitions=3), "parquet": str(path)}


def test_journalist_risk_on_dask_of_a_hand_computed_example(hand_release, tmp_path):
    inst, release = hand_release  # classes (north, [20-29]) 3, (south, [20-29]) 2, (s3, 35) 1, (*, *) 2
    extra = pd.DataFrame({"city": ["n1", "n2", "s2", "s3", "n1", "s1"], "age": [25, 28, 20, 35, 40, 50]})
    table = pd.concat([inst.table[["city", "age"]].astype({"city": str}), extra], ignore_index=True)
    # F_j by hand: north = {n1, n2} and 20 ≤ age ≤ 29: 21, 22, 23, 29 and 25, 28 → 6;
    # south in [20-29]: s1 24, s2 27, s2 20 → 3; (s3, 35): 2; the suppressed block: all 14.
    sizes, big = [3, 2, 1, 2], [6, 3, 2, 14]
    marketer = sum(Fraction(f, F) for f, F in zip(sizes, big)) / 8
    assert marketer == Fraction(19, 84)
    for kind, pop in _populations(table, tmp_path).items():
        for engine in ("local", "dask") if kind == "pandas" else ("dask",):
            rep = fa.risk(inst, release, engine=engine, population=pop, threshold="1/5", suda_max_size=None)
            j = rep.journalist
            assert ("population" in rep.seconds) is (engine == "dask")  # the count's own time on Dask
            assert (j.population_size, j.highest, j.marketer) == (14, Fraction(1, 2), marketer), (kind, engine)
            assert (j.records_at_highest, j.classes_at_highest) == (1, 1)
            assert j.records_above == 3  # 1/F > 1/5: F = 3 (2 records) and F = 2 (1 record)
            assert j.witness["class"] == {"city": "s3", "age": "35"} and j.witness["records"] == [5]
            assert j.witness["population_size"] == 2


def _brute_force(classes_table: pd.DataFrame, schema, qi, pop: pd.DataFrame) -> dict:
    """Class labels -> F, each population record read against each class's labels."""
    out = {}
    for labels in classes_table[list(qi)].drop_duplicates().itertuples(index=False):
        covered = np.ones(len(pop), dtype=bool)
        for name, label in zip(qi, labels):
            attr = schema[name]
            covers = label_covers(attr, np.array([str(label)], dtype=object))
            if attr.kind == "numeric":
                values = pop[name].to_numpy(dtype=float)
                lo, hi = covers.lo[0], covers.hi[0]
                covered &= (values > lo) if covers.lo_open[0] else (values >= lo)
                covered &= (values < hi) if covers.hi_open[0] else (values <= hi)
            else:
                domain = {v: i for i, v in enumerate(attr.domain)}
                covered &= np.array([covers.mask[0, domain[str(v)]] for v in pop[name]])
        out[tuple(str(v) for v in labels)] = int(covered.sum())
    return out


@pytest.mark.parametrize("released", [False, True], ids=["instance", "release"])
def test_journalist_risk_on_dask_equals_a_brute_force_count_and_the_local_engine(released, tmp_path):
    pop_inst = population(300, n_qi=3, seed=11)
    pop = pop_inst.table.copy()
    for c in pop.columns:
        if isinstance(pop[c].dtype, pd.CategoricalDtype):
            pop[c] = pop[c].astype(str)
    sample = fa.Instance(pop.iloc[::3], pop_inst.schema, name="sample")  # a third of the population
    release = mondrian(sample, [fa.KAnonymity(3)]) if released else None
    if released:
        assert fa.verify(sample, release, [fa.KAnonymity(3)]).passed
    table = sample.table if release is None else release.table
    qi = tuple(sample.schema.qi)
    expected = _brute_force(table, sample.schema, qi, pop)
    sizes = Counter(tuple(str(v) for v in row) for row in table[list(qi)].itertuples(index=False))
    smallest = min(expected.values())
    marketer = sum(Fraction(sizes[key], big) for key, big in expected.items()) / len(table)
    above = sum(sizes[key] for key, big in expected.items() if Fraction(1, big) > Fraction(1, 10))
    local = fa.risk(sample, release, population=pop, threshold="1/10", suda_max_size=None).journalist
    assert (local.highest, local.marketer, local.records_above) == (Fraction(1, smallest), marketer, above)
    assert local.population_size == 300
    for kind, p in _populations(pop, tmp_path).items():
        dist = fa.risk(sample, release, engine="dask", population=p, threshold="1/10", suda_max_size=None)
        assert dist.journalist == local, kind
    # Generalized labels go through the bit sets, the instance's own values through the join.
    assert released == any("*" in key or "[" in "".join(key) for key in expected)


def test_a_population_on_dask_is_checked_before_the_passes(tmp_path, monkeypatch):
    import fairanon.distributed.verify as distributed_verify

    def no_pass(*args, **kwargs):
        raise AssertionError("the Dask passes ran before the population was checked")

    monkeypatch.setattr(distributed_verify, "_verify_dask", no_pass)
    inst = population(60, n_qi=3, seed=1)
    with pytest.raises(fa.InvalidParameterError, match="'population' parameter of risk must be an Instance, a "
                                                      "pandas or Dask DataFrame, or a Parquet path. Got int"):
        fa.risk(inst, engine="dask", population=5)
    with pytest.raises(fa.InvalidParameterError, match="does not exist"):
        fa.risk(inst, engine="dask", population=str(tmp_path / "missing.parquet"))
    frame = dd.from_pandas(inst.table.drop(columns=["zip"]).astype(str), npartitions=2)
    with pytest.raises(fa.SchemaError, match="population table lacks the quasi-identifier column 'zip'"):
        fa.risk(inst, engine="dask", population=frame)


def test_a_population_on_dask_that_does_not_hold_the_table_is_refused():
    inst = population(60, n_qi=3, seed=1)
    table = inst.table.astype({c: str for c in ("zip", "sex", "race")})
    fewer = dd.from_pandas(table.iloc[1:], npartitions=2)  # lacks the first record
    with pytest.raises(fa.InvalidParameterError, match="the population must contain the table's records"):
        fa.risk(inst, engine="dask", population=fewer, suda_max_size=None)
    holes = dd.from_pandas(table.assign(age=[np.nan] + list(table["age"][1:])), npartitions=2)
    with pytest.raises(fa.SchemaError, match="population column 'age' has missing values"):
        fa.risk(inst, engine="dask", population=holes, suda_max_size=None)


def test_a_population_on_dask_is_counted_within_the_memory_limit(hand_release, client):
    """The tasks that count a population's combinations keep to the client's memory
    limit, on a cluster's workers, where the limit the client set is not in force."""
    from fairanon._memory import memory_limit

    inst, release = hand_release
    table = pd.concat([inst.table[["city", "age"]].astype({"city": str})] * 2, ignore_index=True)
    # 16 rows in 2 partitions of 8: counting one, 8 rows of 2 quasi-identifiers at
    # 8 · (3 · 2 + 3) = 72 bytes a row, needs 576 bytes.
    pop = dd.from_pandas(table, npartitions=2)
    with dask.config.set(scheduler=client), memory_limit("575B", "risk"):
        with pytest.raises(fa.MemoryLimitError, match=r"combinations of a population table \(8 rows\)"):
            fa.risk(inst, release, engine="dask", population=pop, suda_max_size=None)


def test_a_large_population_csv_file_s_other_columns_are_read_whole(hand_release, tmp_path):
    """Past the first 256 kB of a population CSV file, a 33.5 in a column that is not a
    quasi-identifier: Dask reads it as text (it would guess int64 from the first rows and
    fail), and counts the population as one machine counts the same table."""
    inst, release = hand_release
    n = 40_000
    # The hand example's 8 records, then n records (n1, 60) that fall only in the suppressed block.
    rows = [(str(c), int(a)) for c, a in zip(inst.table["city"], inst.table["age"])] + [("n1", 60)] * n
    notes = [str(i % 9) for i in range(len(rows) - 1)] + ["33.5"]
    path = tmp_path / "population.csv"
    path.write_text("city,age,note\n" + "".join(f"{c},{a},{x}\n" for (c, a), x in zip(rows, notes)))
    assert path.stat().st_size > 300_000
    table = pd.DataFrame(rows, columns=["city", "age"])
    local = fa.risk(inst, release, population=table, threshold="1/5", suda_max_size=None).journalist
    dist = fa.risk(inst, release, engine="dask", population=str(path), threshold="1/5", suda_max_size=None).journalist
    # By hand: (north, [20-29]) of 3 records matches n1 21, n2 22, n1 23, n2 29: F = 4; the
    # south class of 2, F = 2; (s3, 35) F = 1; the suppressed block of 2, every record.
    assert dist.population_size == local.population_size == 8 + n
    assert (dist.highest, dist.marketer) == (local.highest, local.marketer) == (
        Fraction(1, 1), (Fraction(3, 4) + Fraction(2, 2) + Fraction(1, 1) + Fraction(2, 8 + n)) / 8)


def test_a_fault_while_counting_the_population_is_not_reported_as_an_unreadable_file(hand_release, monkeypatch):
    """Only a reader's error on a bad file becomes "Cannot read the population table": a
    fault in the counting code (here a KeyError) is raised as it is, with its traceback."""
    import fairanon.distributed.risk as dask_risk

    inst, release = hand_release

    def broken(*args, **kwargs):
        raise KeyError("a fault")

    monkeypatch.setattr(dask_risk, "population_counts", broken)
    table = inst.table[["city", "age"]].astype({"city": str})
    with pytest.raises(KeyError, match="a fault"):
        fa.risk(inst, release, engine="dask", population=dd.from_pandas(table, npartitions=2), threshold="1/5",
                suda_max_size=None)


def test_a_worker_s_log_of_a_failed_task_is_dropped_only_for_a_bad_file():
    """The log of a task that raised: dropped for fairanon's errors and the readers' (the
    client raises them as one line), kept for any other exception (a fault, whose
    traceback the log alone shows)."""
    import logging

    from fairanon.distributed.cluster import _FAILED_TASK

    def kept(exception_text: str) -> bool:
        record = logging.LogRecord("distributed.worker", logging.ERROR, __file__, 1,
                                   "Compute Failed\nKey:       %s\nState:     %s\nTask:  %s\nException: %r\n"
                                   "Traceback: %r\n", ("k", "executing", "task", exception_text, "tb"), None)
        return _FAILED_TASK.filter(record)

    for dropped in ("SchemaError('Cannot read x')", "MemoryLimitError('too large')",
                    "ParserError('Error tokenizing data')", "UnicodeDecodeError('utf-8', b'', 0, 1, 'bad')",
                    "ArrowInvalid('not parquet')", "ValueError('Mismatched dtypes found in `pd.read_csv`')",
                    "InvalidParameterError(\"The record_id values of 'r.csv' are not the instance's record ids\")",
                    "FileNotFoundError(2, 'No such file or directory')", "PermissionError(13, 'Permission denied')",
                    "BadGzipFile('Not a gzipped file')"):
        assert not kept(dropped), dropped
    # A connection's errors are OSErrors too, but faults of the cluster, not of a file
    # (a plain OSError is a reader's in a reading task only: test_dask_worker_logs);
    # shutil's Error (an OSError) shares its name with other libraries' errors.
    for fault in ("OSError('Could not open Parquet input source')", "KeyError('age')", "ValueError('operands could not be broadcast')", "TypeError('x')",
                  "ConnectionResetError(104, 'Connection reset by peer')", "CommClosedError()", "Error('x')",
                  "KeyError('FileNotFoundError(')"):
        assert kept(fault), fault
    other = logging.LogRecord("distributed.worker", logging.ERROR, __file__, 1, "Something else", (), None)
    assert _FAILED_TASK.filter(other)
