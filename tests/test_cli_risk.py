"""``fairanon risk``: the risk figures of a job's instance or of a release file, and the
risk in the report ``fairanon anonymize`` writes."""

import importlib.util
import json
import math

import pandas as pd
import pytest
from cli_helpers import CSV, SCHEMA, run, write_job


def test_risk_of_the_instance_and_of_a_release(tmp_path, capsys):
    job = write_job(tmp_path)
    code, out, err = run(capsys, "risk", job, "--suda-max-size", "2")
    assert code == 0, err
    assert "prosecutor risk, highest" in out and "sample uniques" in out
    assert "8 (100 %)" in out  # every one of the 8 records is unique on (age, zip, sex)
    assert run(capsys, "anonymize", job, "--out", tmp_path / "o")[0] == 0
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    risk = report["risk"]
    assert risk["released"] and risk["sample"]["prosecutor_highest"]["value"] <= 0.5
    assert risk["uniqueness"]["sample_uniques"] == 0
    code, out, err = run(capsys, "risk", job, "--release", tmp_path / "o" / "release.csv",
                         "--population-size", "80", "--out", tmp_path / "r.json")
    assert code == 0, err
    assert "Risk of a release of" in out and "population uniques, dankar" in out
    document = json.loads((tmp_path / "r.json").read_text())
    assert document["population_model"]["population_size"] == 80
    assert document["sample"] == risk["sample"]


def test_risk_json_and_bad_input(tmp_path, capsys):
    job = write_job(tmp_path)
    code, out, _ = run(capsys, "risk", job, "--json", "--sampling-fraction", "1/10", "--suda-max-size", "0")
    assert code == 0
    document = json.loads(out)
    assert document["suda"] is None and document["population_model"]["population_size"] == 80
    assert set(document["uniqueness"]["population_uniques"]) == {"pitman", "zayatz", "snb", "dankar"}
    code, _, err = run(capsys, "risk", job, "--sampling-fraction", "2")
    assert code == 2 and "sampling_fraction" in err
    code, _, err = run(capsys, "risk", job, "--weights", "nope")
    assert code == 2 and "weight column" in err
    code, _, err = run(capsys, "risk", job, "--release", tmp_path / "missing.csv")
    assert code == 2 and "missing.csv" in err


def test_a_job_with_risk_requirements(tmp_path, capsys):
    job = write_job(tmp_path, requirements="""
- average_risk: {r: 1/3}
- sample_uniqueness: {u: 0}""")
    code, out, err = run(capsys, "anonymize", job, "--out", tmp_path / "o")
    assert code == 0, err
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    checks = {c["name"]: c for c in report["report"]["checks"]}
    assert checks["average risk <= 1/3"]["passed"] and checks["sample uniques <= 0 of the records"]["passed"]
    assert report["risk"]["uniqueness"]["sample_uniques"] == 0


def test_a_job_with_a_weight_attribute(tmp_path, capsys):
    # Every record stands for 4 people: f = 1, F = 4, p = 1/4, r = (p/q) ln(1/p) = ln(4)/3.
    lines = CSV.strip().splitlines()
    csv = "\n".join([lines[0] + ",w"] + [line + ",4" for line in lines[1:]]) + "\n"
    job = write_job(tmp_path, csv=csv, schema=SCHEMA + "\nw: {role: weight}")
    code, out, err = run(capsys, "risk", job, "--json", "--suda-max-size", "0")
    assert code == 0, err
    individual = json.loads(out)["individual"]
    assert individual["source"] == "weights w"
    assert individual["highest"] == pytest.approx(math.log(4) / 3, rel=1e-12)
    assert individual["expected_reidentifications"] == pytest.approx(8 * math.log(4) / 3, rel=1e-12)
    assert run(capsys, "anonymize", job, "--out", tmp_path / "o")[0] == 0
    header = (tmp_path / "o" / "release.csv").read_text().splitlines()[0]
    assert "w" not in header.split(",")  # never released


def test_risk_on_dask_gives_the_local_figures(tmp_path, capsys, monkeypatch):
    """`fairanon risk --engine dask` prints the figures `fairanon risk` computes on one
    machine, for the job's instance and for a release file; a missing file is an error."""
    import contextlib

    pytest.importorskip("dask.dataframe")
    # Dask's own scheduler in this process instead of a cluster: the same passes, faster.
    monkeypatch.setattr("fairanon.distributed.command.client", lambda *a: contextlib.nullcontext())
    job = write_job(tmp_path)
    assert run(capsys, "anonymize", job, "--out", tmp_path / "o")[0] == 0
    for extra in ([], ["--release", tmp_path / "o" / "release.csv"]):
        options = ["--json", "--population-size", "80", "--suda-max-size", "2", *extra]
        code, local, err = run(capsys, "risk", job, *options)
        assert code == 0, err
        code, dask, err = run(capsys, "risk", job, *options, "--engine", "dask", "--out", tmp_path / "r.json")
        assert code == 0, err
        local, dask = json.loads(local), json.loads(dask)
        # Both engines read a CSV's record ids as written ('1'): the same witness records.
        assert dask["sample"]["witness"]["records"] == local["sample"]["witness"]["records"]
        assert all(isinstance(r, str) for r in local["sample"]["witness"]["records"])
        for part in ("released", "sample", "uniqueness", "population_model", "suda"):
            assert dask[part] == local[part], part
        assert json.loads((tmp_path / "r.json").read_text())["sample"]["n_records"] == 8
        (tmp_path / "r.json").unlink()
    code, _, err = run(capsys, "risk", job, "--engine", "dask", "--release", tmp_path / "missing.csv")
    assert code == 2 and "missing.csv" in err


# The job of the journalist-risk tests: zips with a leading zero, read as text.
POP_CSV = CSV.replace("13053", "02138")
RELEASE = """record_id,age,zip,sex,disease,approved
1,[26-34],02138,F,flu,no
2,[31-49],*,M,cold,yes
3,[31-49],*,M,flu,yes
4,[26-34],02138,F,cold,no
5,[50-55],13253,F,hiv,no
6,[50-55],13253,F,cold,yes
7,[31-49],*,M,hiv,no
8,[31-49],*,M,flu,yes
"""
# The 8 records of the table and 5 more people.
POPULATION = "age,zip,sex\n" + "".join(
    f"{age},{zip_},{sex}\n" for age, zip_, sex in
    [(34, "02138", "F"), (41, "13268", "M"), (39, "13268", "M"), (26, "02138", "F"), (50, "13253", "F"),
     (55, "13253", "F"), (49, "13250", "M"), (31, "13052", "M"),
     (30, "02138", "F"), (28, "02138", "M"), (45, "99999", "M"), (60, "13253", "F"), (52, "13250", "F")])


def _journalist_files(tmp_path):
    """The job, the release file and the population as CSV and as Parquet."""
    import pandas as pd

    job = write_job(tmp_path, csv=POP_CSV)
    (tmp_path / "release.csv").write_text(RELEASE, encoding="utf-8")
    (tmp_path / "population.csv").write_text(POPULATION, encoding="utf-8")
    table = pd.read_csv(tmp_path / "population.csv", dtype={"zip": str})
    table.to_parquet(tmp_path / "population.parquet", index=False)
    table.index.name = "rid"  # a named index, stored as a column beside the others
    table.to_parquet(tmp_path / "population_rid.parquet")
    return job


def test_journalist_risk_against_a_population_file(tmp_path, capsys, monkeypatch):
    """`fairanon risk --release FILE --population FILE`, by hand.

    The quasi-identifiers are age, zip and sex (the protected attribute is one). The
    release's classes, in record-id order: A = {1, 4} ([26-34], 02138, F), f = 2;
    B = {2, 3, 7, 8} ([31-49], *, M), f = 4; C = {5, 6} ([50-55], 13253, F), f = 2. The
    population (N = 13) holds the 8 records and (30, 02138, F): in A; (28, 02138, M):
    in none (28 is outside B's ages); (45, 99999, M): in B (* covers a zip outside the
    domain); (60, 13253, F), (52, 13250, F): in none (60 > 55; 13250 is not C's zip).
    F_A = 3, F_B = 5, F_C = 2: journalist risk max 1/F = 1/2 (class C, 2 records);
    marketer (1/8)(2/3 + 4/5 + 2/2) = (1/8)(10 + 12 + 15)/15 = 37/120; records above
    1/5 (1/F > 1/5, F < 5): A and C, 4. Read as numbers, the zips 02138 would be 2138,
    outside A's label: F_A would be 0 < 2 and the file refused.
    """
    import contextlib

    job = _journalist_files(tmp_path)
    expected = {"source": "population table", "population_size": 13,
                "highest": {"value": 0.5, "exact": "1/2"}, "records_at_highest": 2, "classes_at_highest": 1,
                "marketer": {"value": 37 / 120, "exact": "37/120"},
                "threshold": {"value": 0.2, "exact": "1/5"}, "records_above_threshold": 4}
    engines = [[]]
    if importlib.util.find_spec("dask") is not None:
        # Dask's own scheduler in this process instead of a cluster: the same passes, faster.
        monkeypatch.setattr("fairanon.distributed.command.client", lambda *a: contextlib.nullcontext())
        engines.append(["--engine", "dask"])
    for engine in engines:
        for population in ("population.csv", "population.parquet", "population_rid.parquet"):
            code, out, err = run(capsys, "risk", job, "--release", tmp_path / "release.csv", "--population",
                                 tmp_path / population, "--json", "--suda-max-size", "0", *engine)
            assert code == 0, err
            journalist = json.loads(out)["journalist"]
            assert {k: journalist[k] for k in expected} == expected, (engine, population)
            assert journalist["witness"]["class"] == {"age": "[50-55]", "zip": "13253", "sex": "F"}
            assert journalist["witness"]["population_size"] == 2
            assert journalist["witness"]["records"] == ["5", "6"]
    code, out, err = run(capsys, "risk", job, "--release", tmp_path / "release.csv", "--population",
                         tmp_path / "population.csv", "--suda-max-size", "0")
    assert code == 0, err
    assert "journalist risk, highest" in out and "(1/2)" in out and "(37/120)" in out


def test_the_printed_table_holds_the_risk_histogram(tmp_path, capsys):
    """The non-empty bands of the risk histogram, by hand. The job's 8 records are unique
    on (age, zip, sex): one band, risk 1 in ]50 %, 100 %]. The release's classes are
    A = {1, 4} and C = {5, 6} (f = 2, risk 1/2 in ]1/3, 1/2]) and B = {2, 3, 7, 8}
    (f = 4, risk 1/4 in ]1/5, 1/4])."""
    def bands(*options) -> list[str]:
        """The histogram lines `fairanon risk` prints, white space folded."""
        code, out, err = run(capsys, "risk", job, "--suda-max-size", "0", *options)
        assert code == 0, err
        return [" ".join(line.split()) for line in out.splitlines() if line.strip().startswith("histogram:")]

    job = _journalist_files(tmp_path)
    assert bands() == ["histogram: risk ]50 %, 100 %] (class size 1) 8 records (100 %) in 8 class(es)"]
    assert bands("--release", tmp_path / "release.csv") == [
        "histogram: risk ]20 %, 25 %] (class size 4) 4 records (50 %) in 1 class(es)",
        "histogram: risk ]33.33 %, 50 %] (class size 2) 4 records (50 %) in 2 class(es)"]


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_a_large_population_file_is_read_whole(tmp_path, capsys, monkeypatch, engine):
    """Past the first 256 kB of a CSV population (where Dask guesses a column's type), an
    age of 70.5 is read as a number and a blank age is a missing value, on both engines.
    The 30,000 rows added (70 or 70.5, 99999, M) are in no class (B's ages are 31 to 49),
    so the figures are those of the hand computation above with N = 13 + 30,000."""
    import contextlib

    if engine == "dask":
        pytest.importorskip("dask.dataframe")
        monkeypatch.setattr("fairanon.distributed.command.client", lambda *a: contextlib.nullcontext())
    job = _journalist_files(tmp_path)
    text = POPULATION + "70,99999,M\n" * 29_999
    assert len(text) > 300_000
    (tmp_path / "large.csv").write_text(text + "70.5,99999,M\n", encoding="utf-8")
    (tmp_path / "blank.csv").write_text(text + ",99999,M\n", encoding="utf-8")
    options = ["--release", tmp_path / "release.csv", "--suda-max-size", "0", "--engine", engine]
    code, out, err = run(capsys, "risk", job, *options, "--population", tmp_path / "large.csv", "--json")
    assert code == 0, err
    journalist = json.loads(out)["journalist"]
    assert journalist["population_size"] == 30_013
    assert journalist["highest"]["exact"] == "1/2" and journalist["marketer"]["exact"] == "37/120"
    code, out, err = run(capsys, "risk", job, *options, "--population", tmp_path / "blank.csv")
    assert code == 2 and "The population column 'age' has missing values" in err, err
    assert len(err.strip().splitlines()) == 1, err
    # A row of too many fields there is found as the file is counted: the error names it.
    (tmp_path / "long.csv").write_text(text + "70,99999,M,x\n", encoding="utf-8")
    code, out, err = run(capsys, "risk", job, *options, "--population", tmp_path / "long.csv")
    assert code == 2 and "long.csv" in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_a_population_file_is_read_after_the_options_and_by_its_quasi_identifiers(tmp_path, capsys):
    """On one machine a bad option is refused before the population file is read, and
    only the file's quasi-identifier columns are loaded."""
    from fairanon.api import _population_file
    from fairanon.jobs import read_job

    job = _journalist_files(tmp_path)
    (tmp_path / "binary.parquet").write_bytes(b"PAR1 not a parquet file")
    code, out, err = run(capsys, "risk", job, "--release", tmp_path / "release.csv", "--population",
                         tmp_path / "binary.parquet", "--sampling-fraction", "2")
    assert code == 2 and "sampling_fraction" in err and "binary.parquet" not in err, err
    instance = read_job(job).instance
    (tmp_path / "wide.csv").write_text(POPULATION.replace("\n", ",x\n").replace("sex,x", "sex,name"), encoding="utf-8")
    for name in ("wide.csv", "population_rid.parquet"):
        table = _population_file(str(tmp_path / name), instance, "local")
        assert sorted(table.columns) == sorted(instance.schema.qi) and len(table) == 13, name


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_bad_population_files(tmp_path, capsys, monkeypatch, engine):
    """A missing, unreadable or wrong population file, or one above --memory-limit: one
    line naming it, exit code 2."""
    import contextlib

    if engine == "dask":
        pytest.importorskip("dask.dataframe")
        monkeypatch.setattr("fairanon.distributed.command.client", lambda *a: contextlib.nullcontext())
    job = _journalist_files(tmp_path)
    (tmp_path / "nozip.csv").write_text("age,sex\n34,F\n", encoding="utf-8")
    (tmp_path / "binary.parquet").write_bytes(b"PAR1 not a parquet file")
    (tmp_path / "latin1.csv").write_bytes("age,zip,sex\n34,Z\xfcrich,F\n".encode("latin-1"))
    (tmp_path / "age.csv").write_text("age,zip,sex\nold,02138,F\n", encoding="utf-8")
    (tmp_path / "few.csv").write_text("age,zip,sex\n34,02138,F\n", encoding="utf-8")
    (tmp_path / "empty.csv").write_text("age,zip,sex\n", encoding="utf-8")
    cases = {"missing.csv": "does not exist", "nozip.csv": "lacks the quasi-identifier column 'zip'",
             "binary.parquet": "binary.parquet", "latin1.csv": "latin1.csv", "age.csv": "'age' is not numeric",
             "few.csv": "must contain the table's records", "empty.csv": "must contain the table's records"}
    for name, message in cases.items():
        code, out, err = run(capsys, "risk", job, "--release", tmp_path / "release.csv", "--population",
                             tmp_path / name, "--suda-max-size", "0", "--engine", engine)
        assert code == 2 and message in err, (name, err)
        assert len(err.strip().splitlines()) == 1, err
    # Counting the 13 rows of 3 quasi-identifiers needs 13 · 8 · (3 · 3 + 3) = 1,248 bytes; the
    # columns read before it (about 1.1 kB on one machine with pandas 3) fit under 1,200.
    # pandas 2 holds their strings as Python objects (4.92 kB), so the local read is
    # refused first; the Dask engine reads the file with Dask, not through that check.
    code, out, err = run(capsys, "risk", job, "--release", tmp_path / "release.csv", "--population",
                         tmp_path / "population.csv", "--suda-max-size", "0", "--engine", engine,
                         "--memory-limit", "1200B")
    if engine == "dask" or int(pd.__version__.split(".")[0]) >= 3:
        assert code == 2 and "population table (13 rows) would need about 1.25 kB" in err, err
    else:
        assert code == 2 and "reading the columns ['age', 'zip', 'sex'] of" in err, err
        assert "more than the memory limit of 1.2 kB" in err, err
    assert len(err.strip().splitlines()) == 1, err


def test_a_parquet_release_with_a_record_id_column_on_both_engines(tmp_path, capsys, monkeypatch):
    """A Parquet release whose ids are its record_id column (as a release CSV holds them)
    is read by those ids on Dask as on one machine: the same verdict, and the same risk
    witness, records 1 and 4 ([26-34], 13053, F: the first smallest class by hand)."""
    import contextlib

    from fairanon.jobs import read_job, read_release

    pytest.importorskip("dask.dataframe")
    monkeypatch.setattr("fairanon.distributed.command.client", lambda *a: contextlib.nullcontext())
    job = write_job(tmp_path)
    (tmp_path / "release.csv").write_text(RELEASE.replace("02138", "13053"), encoding="utf-8")
    release = read_release(str(tmp_path / "release.csv"), read_job(job).instance)
    release.table.reset_index().to_parquet(tmp_path / "release.parquet", index=False)
    witnesses = {}
    for engine in ("local", "dask"):
        code, out, err = run(capsys, "verify", job, "--release", tmp_path / "release.parquet", "--engine", engine)
        assert code == 0 and "PASSED" in out, (engine, out + err)
        code, out, err = run(capsys, "risk", job, "--release", tmp_path / "release.parquet", "--json",
                             "--suda-max-size", "0", "--engine", engine)
        assert code == 0, err
        witnesses[engine] = json.loads(out)["sample"]["witness"]
    assert witnesses["local"] == witnesses["dask"]
    assert witnesses["dask"]["records"] == ["1", "4"]
    assert witnesses["dask"]["class"] == {"age": "[26-34]", "zip": "13053", "sex": "F"}
    # fairanon.verify given the file's path reads it the same way.
    import dask

    import fairanon as fa

    parsed = read_job(job)
    with dask.config.set(scheduler="synchronous"):
        report = fa.verify(parsed.instance, str(tmp_path / "release.parquet"), parsed.requirements, engine="dask")
    assert report.passed and report["rows"].passed


@pytest.mark.slow
def test_population_errors_on_a_cluster_are_one_line(tmp_path, capfd):
    """On a LocalCluster a population error found by a worker (a non-number in a numeric
    column, the memory limit, a row of too many fields) reaches the terminal as the
    one-line error alone: no worker's log of a failed task with its traceback (the
    workers write to this process's standard error, captured at its file descriptor)."""
    from fairanon.cli import main

    pytest.importorskip("distributed")
    job = _journalist_files(tmp_path)
    (tmp_path / "age.csv").write_text("age,zip,sex\nold,02138,F\n", encoding="utf-8")
    # A row of too many fields past the first block Dask parses when the file is opened.
    text = POPULATION + "70,99999,M\n" * 29_999 + "70,99999,M,x\n"
    (tmp_path / "long.csv").write_text(text, encoding="utf-8")
    options = ["risk", job, "--release", tmp_path / "release.csv", "--suda-max-size", "0", "--engine", "dask",
               "--workers", "1"]
    cases = [(["--population", tmp_path / "age.csv"], "The population column 'age' is not numeric"),
             (["--population", tmp_path / "long.csv"], "long.csv"),
             (["--population", tmp_path / "population.csv", "--memory-limit", "1000B"],
              "population table (13 rows) would need about 1.25 kB")]
    for extra, message in cases:
        code = main([str(a) for a in options + extra])
        out, err = capfd.readouterr()
        assert code == 2 and message in err, err
        assert "Compute Failed" not in err and "Traceback" not in err, err


def test_a_release_with_neutralized_formulas_reads_back_the_same_on_both_engines(tmp_path, capsys, monkeypatch):
    """Cells a spreadsheet would run ('=flu', '-cold', '@z') are written with a leading '
    ('-5', a number, as it is); `fairanon verify` and `fairanon risk` read them back on
    Dask as on one machine: with the report that says so, without a report, and from a
    file written with --no-neutralize-formulas."""
    import contextlib
    import shutil

    pytest.importorskip("dask.dataframe")
    monkeypatch.setattr("fairanon.distributed.command.client", lambda *a: contextlib.nullcontext())
    csv = CSV.replace(",flu,", ",=flu,").replace(",cold,", ",-cold,").replace(",hiv,", ",-5,")
    job = write_job(tmp_path, csv=csv.replace("13053", "@z"))
    assert run(capsys, "anonymize", job, "--out", tmp_path / "o")[0] == 0
    written = (tmp_path / "o" / "release.csv").read_text()
    assert "'=flu" in written and "'-cold" in written and "'@z" in written and ",-5," in written
    (tmp_path / "bare").mkdir()
    shutil.copy(tmp_path / "o" / "release.csv", tmp_path / "bare" / "release.csv")  # no report beside it
    assert run(capsys, "anonymize", job, "--out", tmp_path / "plain", "--no-neutralize-formulas")[0] == 0
    assert "'" not in (tmp_path / "plain" / "release.csv").read_text()
    for folder in ("o", "bare", "plain"):
        release = tmp_path / folder / "release.csv"
        for engine in ("local", "dask"):
            code, out, err = run(capsys, "verify", job, "--release", release, "--engine", engine)
            assert code == 0 and "PASSED" in out, (folder, engine, out + err)  # values as in the original
    figures = {}
    for engine in ("local", "dask"):
        code, out, err = run(capsys, "risk", job, "--release", tmp_path / "bare" / "release.csv", "--json",
                             "--suda-max-size", "0", "--engine", engine)
        assert code == 0, err
        figures[engine] = json.loads(out)
    # The smallest class first in record order: records 1 and 4, zip '@z' read back.
    assert figures["local"]["sample"]["witness"]["class"] == {"age": "[26-34]", "zip": "@z", "sex": "F"}
    for part in ("released", "sample", "uniqueness", "disclosure"):
        assert figures["dask"][part] == figures["local"][part], part
