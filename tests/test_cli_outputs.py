"""What the command line writes: whole files or none (a temporary name in the target
folder, then a rename), a table that does not hold under a name that says so, an
unusable --out refused before any work, and cells that a spreadsheet would run as
formulas neutralized."""

import json
import os
import stat

import pandas as pd
import pytest
from cli_helpers import CSV, REQUIREMENTS, run, write_job

import fairanon as fa
import fairanon.api
from fairanon.instances import files
from fairanon.instances.files import neutralize_formulas, restore_formulas
from fairanon.release import Release, Status


def _files(folder):
    return sorted(os.listdir(folder))


@pytest.fixture
def no_work(monkeypatch):
    """Fail the test if the anonymization starts."""

    def forbidden(*args, **kwargs):
        raise AssertionError("the anonymization ran although its output was refused")

    monkeypatch.setattr(fairanon.api, "anonymize", forbidden)


def test_out_naming_an_existing_file_is_refused_before_any_work(tmp_path, capsys, no_work):
    (tmp_path / "taken").write_text("x")
    code, _, err = run(capsys, "anonymize", write_job(tmp_path), "--out", tmp_path / "taken")
    assert code == 2 and "is an existing file; give a folder" in err
    assert (tmp_path / "taken").read_text() == "x"
    code, _, err = run(capsys, "verify", write_job(tmp_path), "--release", tmp_path / "data.csv", "--out", tmp_path)
    assert code == 2 and "is a folder; give a file name" in err
    code, _, err = run(capsys, "patterns", tmp_path / "data.csv", "--protected", "sex=F", "--decision", "approved=no",
                       "--out", tmp_path / "taken")
    assert code == 2 and "is an existing file" in err


def test_read_only_report_is_refused_before_any_work(tmp_path, capsys):
    job = write_job(tmp_path)
    out = tmp_path / "o"
    assert run(capsys, "anonymize", job, "--out", out)[0] == 0
    before = {name: (out / name).read_bytes() for name in _files(out)}
    os.chmod(out / "report.json", stat.S_IRUSR | stat.S_IRGRP)
    try:
        code, _, err = run(capsys, "anonymize", job, "--out", out, "--method", "mondrian-relaxed")
    finally:
        os.chmod(out / "report.json", stat.S_IRUSR | stat.S_IWUSR)
    assert code == 2 and "report.json' is read-only" in err
    assert {name: (out / name).read_bytes() for name in _files(out)} == before


def test_interrupted_write_leaves_no_partial_file(tmp_path, capsys, monkeypatch):
    job = write_job(tmp_path)
    out = tmp_path / "o"
    assert run(capsys, "anonymize", job, "--out", out)[0] == 0
    before = {name: (out / name).read_bytes() for name in _files(out)}
    real = files.write_csv

    def torn(table, path, **kwargs):  # half the table, then Ctrl-C
        real(table.iloc[: len(table) // 2], path, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(files, "write_csv", torn)
    code, _, err = run(capsys, "anonymize", job, "--out", out, "--method", "mondrian-relaxed")
    assert code == 130 and "interrupted" in err
    assert {name: (out / name).read_bytes() for name in _files(out)} == before  # no temporary file left


def test_infeasible_release_goes_to_a_name_that_says_so(tmp_path, capsys):
    out = tmp_path / "o"
    assert run(capsys, "anonymize", write_job(tmp_path), "--out", out)[0] == 0
    assert _files(out) == ["release.csv", "report.json"]
    requirements = REQUIREMENTS.replace("- l_diversity: {l: 2}", '- diversity: "zip(13053) [3, 4]"')
    job = write_job(tmp_path, requirements=requirements, method="cpsat")
    code, out_text, _ = run(capsys, "anonymize", job, "--out", out)
    assert code == 1 and "INFEASIBLE" in out_text and "release.INFEASIBLE.csv" in out_text
    # the earlier good release is gone: nothing in the folder claims to hold
    assert _files(out) == ["release.INFEASIBLE.csv", "report.json"]
    report = json.loads((out / "report.json").read_text())
    assert report["release_file"] == "release.INFEASIBLE.csv" and report["release"]["status"] == "INFEASIBLE"


def test_release_failing_verification_goes_to_a_name_that_says_so(tmp_path, capsys, monkeypatch):
    def liar(instance, requirements, *, seed=None, time_limit=None):
        table = instance.table.copy()  # claims FEASIBLE, releases the original values
        return Release(table, groups=range(len(table)), status=Status.FEASIBLE, provenance={"method": "liar"})

    monkeypatch.setitem(fairanon.api.METHODS, "liar", liar)
    out = tmp_path / "o"
    code, out_text, _ = run(capsys, "anonymize", write_job(tmp_path, method="liar"), "--out", out)
    assert code == 1 and "FAIL  2-anonymity" in out_text
    assert _files(out) == ["release.FAILED.csv", "report.json"]
    assert json.loads((out / "report.json").read_text())["release_file"] == "release.FAILED.csv"


FORMULAS = CSV.replace("flu", "=HYPERLINK(\"http://x\")").replace("cold", "@SUM(A1)").replace("hiv", "-2+3")


@pytest.mark.parametrize("neutralize", [True, False])
def test_formula_cells_are_neutralized_and_verify_reads_both_forms(tmp_path, capsys, neutralize):
    job = write_job(tmp_path, csv=FORMULAS.replace("Bob,41", "Bob,-41"))
    out = tmp_path / "o"
    flag = "--neutralize-formulas" if neutralize else "--no-neutralize-formulas"
    assert run(capsys, "anonymize", job, "--out", out, flag)[0] == 0
    cells = (out / "release.csv").read_text()
    if neutralize:
        assert "'=HYPERLINK" in cells and "'@SUM(A1)" in cells and "'-2+3" in cells
        assert ",=" not in cells and '"=' not in cells and ",@" not in cells
    else:
        assert '"=HYPERLINK' in cells and ",@SUM" in cells and "'" not in cells
    code, out_text, _ = run(capsys, "verify", job, "--release", out / "release.csv")
    assert code == 0 and "PASSED" in out_text


def test_negative_numbers_are_not_neutralized():
    table = pd.DataFrame({"a": ["-41", "+3.5", "-1e-05", "-", "=1", "'=1", "'x"], "n": [-1, 2, 3, 4, 5, 6, 7]})
    out = neutralize_formulas(table)
    assert out["a"].tolist() == ["-41", "+3.5", "-1e-05", "'-", "'=1", "''=1", "'x"]
    assert out["n"].tolist() == table["n"].tolist()
    assert restore_formulas(out).equals(table)


def test_release_to_csv_neutralizes_by_default(tmp_path):
    inst = fa.load("dewri_t1")
    release = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian")
    table = release.table.copy()
    table[table.columns[-1]] = "=1+1"
    release = Release(table, groups=release.groups)
    release.to_csv(tmp_path / "r.csv")
    assert "'=1+1" in (tmp_path / "r.csv").read_text()
    release.to_csv(tmp_path / "raw.csv", neutralize_formulas=False)
    assert "'=1+1" not in (tmp_path / "raw.csv").read_text()


def test_an_output_never_replaces_an_input_of_the_command(tmp_path, capsys):
    """The release a verify reads, the data and the population a risk reads, the job file
    a utility reads: each refused as --out, the file left as it was (they were
    overwritten by JSON)."""
    job = write_job(tmp_path)
    out = tmp_path / "o"
    assert run(capsys, "anonymize", job, "--out", out)[0] == 0
    release = out / "release.csv"
    population = tmp_path / "population.csv"
    population.write_text(CSV, encoding="utf-8")
    read = (release, tmp_path / "data.csv", tmp_path / "job.yaml", population)
    inputs = {p: p.read_bytes() for p in read}
    for command, target, extra in (("verify", release, ["--release", release]),
                                   ("risk", tmp_path / "data.csv", []),
                                   ("risk", population, ["--population", population]),
                                   ("utility", tmp_path / "job.yaml", ["--classifier", "none"])):
        code, _, err = run(capsys, command, job, *extra, "--out", target)
        assert code == 2 and "is an input of this command" in err, (command, err)
    assert {p: p.read_bytes() for p in inputs} == inputs


def test_an_input_named_as_an_output_is_refused_at_the_commit_too(tmp_path, monkeypatch):
    """Where the checks up front could not know an input (read later), the commit
    refuses to replace it and leaves it, and no temporary file, behind."""
    data = tmp_path / "data.csv"
    data.write_text("a\n1\n")
    with files.inputs_protected():
        files.note_input(data)
        with pytest.raises(fa.FairanonError, match="is an input of this command"):
            files.commit({str(data): lambda path: open(path, "w").write("{}")})
    assert data.read_text() == "a\n1\n" and sorted(os.listdir(tmp_path)) == ["data.csv"]
    files.commit({str(data): lambda path: open(path, "w").write("{}")})  # outside a command
    assert data.read_text() == "{}"


def test_patterns_never_replace_their_source(tmp_path, capsys):
    """A source named patterns.csv in the --out folder would be replaced by the patterns."""
    source = tmp_path / "patterns.csv"
    source.write_text(CSV, encoding="utf-8")
    code, _, err = run(capsys, "patterns", source, "--protected", "sex=F",
                       "--decision", "approved=no", "--out", tmp_path)
    assert code == 2 and "is an input of this command" in err
    assert source.read_text(encoding="utf-8") == CSV


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_data_named_as_a_stale_output_of_the_folder_is_refused(tmp_path, capsys, engine):
    """The job's data in --out under a release file's name: the run would replace or
    delete it as a stale output (the Dask engine deleted it, the job being read after
    its checks); both engines refuse it by name and leave it."""
    out = tmp_path / "o"
    out.mkdir()
    job = write_job(tmp_path, data="o/release.csv")
    before = (out / "release.csv").read_bytes()
    code, _, err = run(capsys, "anonymize", job, "--engine", engine, "--workers", "1", "--out", out)
    assert code == 2 and "is an input of this command" in err
    assert (out / "release.csv").read_bytes() == before


def test_the_report_read_beside_a_release_and_a_release_folders_files_are_inputs(tmp_path, capsys):
    """verify reads the report.json beside the release it checks (how its CSV was
    written): refused as --out, as is a file inside a release folder given as
    --release (both were replaced by the JSON report)."""
    job = write_job(tmp_path)
    out = tmp_path / "o"
    assert run(capsys, "anonymize", job, "--out", out)[0] == 0
    before = (out / "report.json").read_bytes()
    code, _, err = run(capsys, "verify", job, "--release", out / "release.csv",
                       "--out", out / "report.json")
    assert code == 2 and "is an input of this command" in err
    assert (out / "report.json").read_bytes() == before
    folder = tmp_path / "r.parquet"
    folder.mkdir()
    (folder / "part.0.parquet").write_bytes(b"PAR1")
    code, _, err = run(capsys, "verify", job, "--release", folder,
                       "--out", folder / "part.0.parquet")
    assert code == 2 and "is an input of this command" in err
    assert (folder / "part.0.parquet").read_bytes() == b"PAR1"


def test_a_file_a_data_set_option_names_is_an_input(tmp_path):
    """Census-Income's 'path' option names the job's data: read, it is an input that no
    output replaces (a risk report overwrote it)."""
    from fairanon.instances.datasets.census import CENSUS_COLUMNS
    from fairanon.jobs import read_job

    pairs = {"education": ("High school graduate", "Children"),
             "marital stat": ("Never married", "Divorced"), "race": ("White", "Black"),
             "income class": ("- 50000.", "50000+."), "sex": ("Male", "Female")}
    numeric = {"age", "wage per hour", "capital gains", "capital losses", "dividends from stocks",
               "instance weight", "num persons worked for employer", "weeks worked in year"}
    data = tmp_path / "census.csv"
    def cell(column, i):
        if column in pairs:
            return pairs[column][i % 2]
        return str(20 + i) if column in numeric else "x"

    data.write_text("".join(", ".join(cell(c, i) for c in CENSUS_COLUMNS) + "\n" for i in range(8)))
    job = tmp_path / "job.yaml"
    job.write_text("instance: {dataset: census, options: {path: census.csv, qi: [age, sex]}}\n"
                   "requirements: [{k_anonymity: {k: 2}}]\n")
    with files.inputs_protected():
        read_job(str(job))
        with pytest.raises(fa.FairanonError, match="is an input of this command"):
            files.check_output_file(str(data))
