"""Bad input reaches the command line as a message naming the problem and exit code 2,
never as a traceback, and input that used to give wrong or unclear results now gives
the right ones: one test per case."""

import json
import os

import pandas as pd
import pytest
from cli_helpers import CSV, SCHEMA, run, write_job

import fairanon as fa

# ------------------------------------------------------------------ no tracebacks


@pytest.mark.parametrize("command", ["anonymize", "patterns"])
def test_negative_seed_on_the_command_line(tmp_path, capsys, command):
    job = write_job(tmp_path)
    args = [job] if command == "anonymize" else [tmp_path / "data.csv", "--protected", "sex=F", "--decision", "approved=no"]
    code, _, err = run(capsys, command, *args, "--seed", "-1", "--out", tmp_path / "o")
    assert code == 2 and "--seed: must be an integer >= 0, got '-1'" in err
    assert not (tmp_path / "o").exists()


def test_negative_seed_in_a_job_file(tmp_path, capsys):
    job = write_job(tmp_path, seed=-1)
    code, _, err = run(capsys, "anonymize", job, "--out", tmp_path / "o")
    assert code == 2 and "'seed' of job file" in err and "non-negative int; got -1" in err
    with pytest.raises(fa.InvalidParameterError, match="non-negative int"):
        fa.anonymize(fa.load("dewri_t1"), [fa.KAnonymity(2)], seed=-1)


def test_unknown_method_option_in_a_job_file(tmp_path, capsys):
    job = write_job(tmp_path, extra="options: {cut_rul: balanced}\n")
    code, _, err = run(capsys, "anonymize", job, "--out", tmp_path / "o")
    assert code == 2
    assert "Method 'mondrian' has no option(s) ['cut_rul']" in err and "'cut_rule'" in err
    # under "auto" the option is checked against the method auto picks
    job = write_job(tmp_path, method="auto", extra="options: {cut_rul: balanced}\n")
    code, _, err = run(capsys, "anonymize", job, "--out", tmp_path / "o")
    assert code == 2 and "has no option(s) ['cut_rul']" in err


def test_a_data_set_file_option_that_is_not_text(tmp_path, capsys):
    job = tmp_path / "job.yaml"
    job.write_text("instance: {dataset: census, options: {path: [x.csv]}}\nrequirements: [k_anonymity: {k: 2}]\n")
    code, _, err = run(capsys, "anonymize", job, "--out", tmp_path / "o")
    assert code == 2 and "Traceback" not in err
    assert "The option 'path' of data set 'census' names a file: it must be a path as text; got ['x.csv']" in err


@pytest.mark.parametrize("command", ["anonymize", "describe", "verify", "patterns"])
def test_zero_byte_data_file(tmp_path, capsys, command):
    job = write_job(tmp_path, csv="")
    if command == "verify":
        (tmp_path / "release.csv").write_text("record_id,age\n1,34\n")
        args = ["verify", job, "--release", tmp_path / "release.csv"]
    elif command == "patterns":
        args = ["patterns", tmp_path / "data.csv", "--protected", "sex=F", "--decision", "approved=no",
                "--out", tmp_path / "o"]
    else:
        args = [command, job] + (["--out", tmp_path / "o"] if command == "anonymize" else [])
    code, _, err = run(capsys, *args)
    assert code == 2 and "data.csv' is empty (0 bytes)" in err


def test_scalar_schema_entry(tmp_path, capsys):
    job = write_job(tmp_path, schema=SCHEMA.replace("age: {role: qi, type: numeric}", "age: qi"))
    code, _, err = run(capsys, "anonymize", job, "--out", tmp_path / "o")
    assert code == 2 and "Attribute 'age': its entry must be a mapping" in err and "`age: {role: qi}`" in err


@pytest.mark.parametrize(
    ("intervals", "message"),
    [("{origin: 0}", "intervals has no 'widths'"), ("5", "intervals must be numbers; got 5"),
     ("[five]", "intervals must be numbers"), ("{widths: [5], step: 2}", "unknown keys ['step']"),
     ("[10, 5]", "positive and non-decreasing")],
)
def test_intervals_without_widths(tmp_path, capsys, intervals, message):
    schema = SCHEMA.replace("{role: qi, type: numeric}", f"{{role: qi, type: numeric, intervals: {intervals}}}")
    code, _, err = run(capsys, "anonymize", write_job(tmp_path, schema=schema), "--out", tmp_path / "o")
    assert code == 2 and "'age'" in err and message in err


def test_interrupted_command_exits_130_without_a_traceback(tmp_path, capsys, monkeypatch):
    import fairanon.api

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(fairanon.api, "anonymize", interrupted)
    code, _, err = run(capsys, "anonymize", write_job(tmp_path), "--out", tmp_path / "o")
    assert code == 130 and "interrupted" in err and not (tmp_path / "o").exists()


# --------------------------------------------------------- wrong or unclear results


def test_empty_id_cell(tmp_path, capsys):
    job = write_job(tmp_path, csv=CSV.replace("\n3,Cid", "\n,Cid"))
    code, _, err = run(capsys, "anonymize", job, "--out", tmp_path / "o")
    assert code == 2 and "id_column 'id'" in err and "1 empty cell(s) (line(s) [4])" in err
    assert not (tmp_path / "o").exists()


def test_infinite_number_in_a_numeric_column(tmp_path, capsys):
    job = write_job(tmp_path, csv=CSV.replace("2,Bob,41", "2,Bob,inf"))
    code, _, err = run(capsys, "anonymize", job, "--out", tmp_path / "o")
    assert code == 2 and "Column 'age' is declared numeric but holds inf" in err and "record '2'" in err


@pytest.mark.parametrize("separator", [",", ", "])
def test_ids_round_trip_exactly(tmp_path, capsys, separator):
    """The release's record ids are the data file's ids as written: leading spaces and
    leading zeros kept, numbers not parsed, in the first column or after others."""
    ids = [" 1", "  2", "003", "4", " x5", "06", "7 ", '" 8"']
    lines = CSV.splitlines()
    rows = [lines[0].split(",")] + [[i] + line.split(",")[1:] for i, line in zip(ids, lines[1:])]
    rows = [[r[1], r[0], *r[2:]] for r in rows]  # the id second, after a separator
    (tmp_path / "data.csv").write_text("\n".join(separator.join(r) for r in rows) + "\n")
    job = write_job(tmp_path, csv=None)
    code, _, err = run(capsys, "anonymize", job, "--out", tmp_path / "o")
    assert code == 0, err
    import csv

    with open(tmp_path / "o" / "release.csv", newline="") as fh:
        released = [row[0] for row in list(csv.reader(fh))[1:]]
    written = [i if separator == "," else " " + i for i in ids[:-1]] + [" 8"]
    assert sorted(released) == sorted(written)
    assert run(capsys, "verify", job, "--release", tmp_path / "o" / "release.csv")[0] == 0
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["report"]["passed"]


ZIP_LEVELS = "13053;130**;*\n13268;132**;*\n13253;132**;*\n13250;132**;*\n13052;130**;*\n"


def test_hierarchy_csv_with_a_byte_order_mark(tmp_path, capsys):
    (tmp_path / "zip.csv").write_bytes(b"\xef\xbb\xbf" + ZIP_LEVELS.encode())
    schema = SCHEMA.replace("zip: {role: qi}", "zip: {role: qi, hierarchy: zip.csv}")
    code, out, _ = run(capsys, "anonymize", write_job(tmp_path, schema=schema), "--out", tmp_path / "o")
    assert code == 0 and "PASSED" in out
    assert fa.Hierarchy.from_arx_csv(str(tmp_path / "zip.csv")).leaves[0] == "13053"


def test_comma_separated_arx_hierarchy_gets_a_hint(tmp_path, capsys):
    (tmp_path / "zip.csv").write_text(ZIP_LEVELS.replace(";", ","))
    schema = SCHEMA.replace("zip: {role: qi}", "zip: {role: qi, hierarchy: zip.csv}")
    code, _, err = run(capsys, "anonymize", write_job(tmp_path, schema=schema), "--out", tmp_path / "o")
    assert code == 2 and "looks ','-separated" in err and "hierarchy_sep: ','" in err
    schema = SCHEMA.replace("zip: {role: qi}", 'zip: {role: qi, hierarchy: zip.csv, hierarchy_sep: ","}')
    code, out, _ = run(capsys, "anonymize", write_job(tmp_path, schema=schema), "--out", tmp_path / "o")
    assert code == 0 and "PASSED" in out


def test_ragged_hierarchy_file_is_named_ragged(tmp_path, capsys):
    (tmp_path / "zip.csv").write_text(ZIP_LEVELS.replace("13268;132**;*", "13268;132**"))
    schema = SCHEMA.replace("zip: {role: qi}", "zip: {role: qi, hierarchy: zip.csv}")
    code, _, err = run(capsys, "anonymize", write_job(tmp_path, schema=schema), "--out", tmp_path / "o")
    assert code == 2 and "is ragged (rows of different lengths): row 2 " in err and "zip.csv" in err
    assert "two parents" not in err


def test_duplicate_column_names(tmp_path, capsys):
    job = write_job(tmp_path, csv=CSV.replace("id,name,age,zip", "id,name,age,age"))
    code, _, err = run(capsys, "anonymize", job, "--out", tmp_path / "o")
    assert code == 2 and "names column(s) ['age'] more than once" in err
    # a release naming a column twice could hide a second, raw copy of it
    job = write_job(tmp_path)
    (tmp_path / "release.csv").write_text("record_id,age,age,zip\n1,[26-34],34,13053\n")
    code, _, err = run(capsys, "verify", job, "--release", tmp_path / "release.csv")
    assert code == 2 and "Release file" in err and "['age'] more than once" in err


@pytest.mark.parametrize("suffix", [".yaml", ".json"])
def test_duplicate_keys_in_a_job_file(tmp_path, capsys, suffix):
    write_job(tmp_path)
    if suffix == ".yaml":
        text = (tmp_path / "job.yaml").read_text() + "method: kmember\n"
        message = "the key 'method' is given twice (first on line"
    else:
        text = '{"instance": {"dataset": "dewri_t1"}, "requirements": [{"k": 2}], "seed": 0, "seed": 1}'
        message = "the key 'seed' is given twice"
    path = tmp_path / f"dup{suffix}"
    path.write_text(text)
    code, _, err = run(capsys, "anonymize", path, "--out", tmp_path / "o")
    assert code == 2 and "is malformed" in err and message in err


def test_duplicate_keys_in_a_schema_and_in_a_suite(tmp_path, capsys):
    schema = SCHEMA + "\nage: {role: insensitive}"
    code, _, err = run(capsys, "anonymize", write_job(tmp_path, schema=schema), "--out", tmp_path / "o")
    assert code == 2 and "the key 'age' is given twice" in err
    suite = tmp_path / "suite.yaml"
    suite.write_text("instances: [{dataset: dewri_t1}]\nrequirements: [{k: 2}]\n"
                     "algorithms: [{method: mondrian}]\nseeds: [0]\nseeds: [1]\n")
    code, _, err = run(capsys, "bench", suite, "--out", tmp_path / "b")
    assert code == 2 and "Suite file" in err and "the key 'seeds' is given twice" in err


def test_entropy_l_diversity_reports_exp_h_exactly(tmp_path, capsys):
    requirements = "\n- k_anonymity: {k: 2}\n- l_diversity: {l: 1, variant: entropy}"
    job = write_job(tmp_path, requirements=requirements)
    code, out, _ = run(capsys, "anonymize", job, "--out", tmp_path / "o")
    assert code == 0
    check = next(c for c in json.loads((tmp_path / "o" / "report.json").read_text())["report"]["checks"]
                 if c["name"] == "entropy 1-diversity")
    assert check["passed"] and isinstance(check["achieved"], int) and check["achieved"] >= 1
    assert "0.99999" not in out


@pytest.mark.parametrize("out", ["/proc/fairanon_out", "/sys/fairanon_out", "/proc/fairanon_out/deeper"])
def test_out_in_a_folder_nobody_can_write_is_refused_before_any_work(tmp_path, capsys, monkeypatch, out):
    """Permissions do not tell (a superuser passes every access test): the folder is
    written once up front, and the run refused with a message before any work."""
    import fairanon.api

    def forbidden(*args, **kwargs):
        raise AssertionError("the anonymization ran although its output was refused")

    monkeypatch.setattr(fairanon.api, "anonymize", forbidden)
    code, _, err = run(capsys, "anonymize", write_job(tmp_path), "--out", out)
    assert code == 2 and f"--out {out!r}: the folder" in err and "is not writable" in err
    code, _, err = run(capsys, "verify", write_job(tmp_path), "--release", tmp_path / "data.csv",
                       "--out", out + "/report.json")
    assert code == 2 and "is not writable" in err


def test_the_up_front_write_leaves_nothing_behind(tmp_path, capsys):
    job = write_job(tmp_path)
    assert run(capsys, "anonymize", job, "--out", tmp_path / "new" / "o")[0] == 0
    assert sorted(os.listdir(tmp_path)) == ["data.csv", "job.yaml", "new"]
    assert sorted(os.listdir(tmp_path / "new" / "o")) == ["release.csv", "report.json"]
    assert run(capsys, "anonymize", job, "--out", tmp_path / "new" / "o")[0] == 0
    assert sorted(os.listdir(tmp_path / "new" / "o")) == ["release.csv", "report.json"]


@pytest.mark.parametrize("given", [["--time-limit", "-5"], ["--time-limit", "0"],
                                   ["--time-limit", "nan"]])
def test_a_time_limit_that_is_no_positive_number_is_refused(tmp_path, capsys, given):
    """It was clamped to 0.01 s and the run went on (exit 0)."""
    job = write_job(tmp_path)
    code, _, err = run(capsys, "anonymize", job, *given, "--out", tmp_path / "o")
    assert code == 2 and "'time_limit' parameter of fairanon anonymize --time-limit" in err
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("value, ok", [("1e1", True), ("-1", False), ("abc", False), ("[1]", False),
                                       ("true", False)])
def test_a_job_files_time_limit_is_checked_and_read_as_yaml_spells_it(tmp_path, capsys, value, ok):
    """YAML 1.1 reads 1e1 as text: it is the number it spells. Others were clamped or
    crashed (TypeError)."""
    job = write_job(tmp_path, extra=f"time_limit: {value}\n")
    code, _, err = run(capsys, "anonymize", job, "--out", tmp_path / "o")
    if ok:
        assert code == 0
        report = json.loads((tmp_path / "o" / "report.json").read_text())
        assert report["release"]["provenance"]["time_limit_given"] <= 10
    else:
        assert code == 2 and f"'time_limit' parameter of job file {str(job)!r}" in err


def test_a_job_options_key_must_be_a_name(tmp_path, capsys):
    job = write_job(tmp_path, extra="options: {1: 2}\n")
    code, _, err = run(capsys, "anonymize", job, "--out", tmp_path / "o")
    assert code == 2 and "mapping of option names to values" in err


@pytest.mark.parametrize("argv", [["--workers", "-1"], ["--workers", "0"], ["--max-rows", "0"]])
def test_counts_of_the_dask_engine_below_one_are_refused(tmp_path, capsys, argv):
    """A LocalCluster of -1 workers waited for ever; 0 workers was read as the default."""
    code, _, err = run(capsys, "anonymize", "--engine", "dask", *argv, "--out", tmp_path / "o")
    assert code == 2 and "must be at least 1" in err


def test_a_fraction_dividing_by_zero_is_a_clear_error(tmp_path, capsys):
    """'1/0' raised a ZeroDivisionError with a traceback."""
    code, _, err = run(capsys, "risk", write_job(tmp_path), "--threshold", "1/0")
    assert code == 2 and "'threshold' parameter of risk must be a number" in err


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_a_data_column_named_record_id_is_refused_by_name(tmp_path, capsys, engine):
    """Release files name their ids' column record_id: a data column of that name made
    a release with the name twice, which verify then refused (anonymize said PASSED; the
    Dask engine failed with a traceback)."""
    csv = CSV.replace("id,name,age,zip", "id,name,age,record_id")
    schema = SCHEMA.replace("zip: {role: qi}", "record_id: {role: qi}")
    job = write_job(tmp_path, csv=csv, schema=schema)
    code, _, err = run(capsys, "anonymize", job, "--engine", engine, "--workers", "1",
                       "--out", tmp_path / "o")
    assert code == 2 and "The column 'record_id'" in err and not (tmp_path / "o").exists()


def test_ids_that_pandas_reads_as_missing_are_ids(tmp_path, capsys):
    """Ids written NA and None are the ids written (they were refused as empty cells),
    and the release verifies read back."""
    csv = CSV.replace("\n4,Dee", "\nNA,Dee").replace("\n5,Eve", "\nNone,Eve")
    job = write_job(tmp_path, csv=csv)
    code, _, _ = run(capsys, "anonymize", job, "--out", tmp_path / "o")
    assert code == 0
    ids = pd.read_csv(tmp_path / "o" / "release.csv", dtype=str, keep_default_na=False)["record_id"]
    assert sorted(ids) == sorted(["1", "2", "3", "NA", "None", "6", "7", "8"])
    assert run(capsys, "verify", job, "--release", tmp_path / "o" / "release.csv")[0] == 0
