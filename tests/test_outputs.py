"""Files that parse and outputs that cannot mislead: every cell a CSV reader could
misread is quoted and checked by reading the file back; ``--out`` never follows or
replaces a link or a special file and never names nothing; temporary files a killed run
left are removed by the next; the report is the manifest of the release it comes with;
and a table of any strings survives anonymize -> file -> verify."""

import csv
import json
import os
import subprocess
import sys

import pandas as pd
import pytest
from cli_helpers import CSV, run, write_job
from hypothesis import given, settings
from hypothesis import strategies as st

import fairanon as fa
from fairanon import cli
from fairanon.exceptions import SchemaError
from fairanon.instances import files
from fairanon.instances.files import commit, formula_readings, read_csv_table, write_csv


def _files(folder):
    return sorted(os.listdir(folder))


def _rows(path):
    """The rows Python's csv module reads from a file."""
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.reader(fh))


# ------------------------------------------------------------------ carriage returns (defect 1)
CR_CSV = CSV.replace("flu", '"\r=1+1"').replace("cold", '"a\rb"')


@pytest.mark.parametrize("neutralize", [True, False])
def test_carriage_returns_in_cells_are_quoted_and_the_release_verifies(tmp_path, capsys, neutralize):
    job = write_job(tmp_path, csv=CR_CSV)
    out = tmp_path / "o"
    flag = "--neutralize-formulas" if neutralize else "--no-neutralize-formulas"
    code, _, _ = run(capsys, "anonymize", job, "--out", out, flag)
    assert code == 0
    rows = _rows(out / "release.csv")
    assert len(rows) == 9 and {len(row) for row in rows} == {len(rows[0])}
    diseases = {row[rows[0].index("disease")] for row in rows[1:]}
    assert diseases == {"'\r=1+1" if neutralize else "\r=1+1", "a\rb", "hiv"}
    code, out_text, _ = run(capsys, "verify", job, "--release", out / "release.csv")
    assert code == 0 and "PASSED" in out_text


def test_write_csv_quotes_what_a_reader_could_misread(tmp_path):
    cells = ["\r", "\n", "a\r\nb", '"', ",", " lead", "trail ", "\tx", "=1", "plain", ""]
    table = pd.DataFrame({"v": cells, "n": range(len(cells))}, index=[f"r{i}" for i in range(len(cells))])
    write_csv(table, tmp_path / "t.csv", index_label="id")
    rows = _rows(tmp_path / "t.csv")
    assert rows[0] == ["id", "v", "n"] and [row[1] for row in rows[1:]] == cells
    back = read_csv_table(str(tmp_path / "t.csv"), dtype=str, keep_default_na=False, skipinitialspace=True)
    assert back["v"].tolist() == cells  # quoted spaces survive a reader that skips initial spaces
    text = (tmp_path / "t.csv").read_bytes()
    assert b'"\r"' in text and b'" lead"' in text and b",plain," in text


def test_write_csv_refuses_what_csv_cannot_carry(tmp_path):
    with pytest.raises(SchemaError, match="NUL"):
        write_csv(pd.DataFrame({"a": ["x\x00y"]}), tmp_path / "t.csv")


def test_a_file_that_does_not_read_back_is_never_committed(tmp_path, monkeypatch):
    (tmp_path / "r.csv").write_text("old\n")
    real = files._cells

    def unquoted(column, risky):  # a writer that forgets to quote
        text, _ = real(column, risky)
        return text, text

    monkeypatch.setattr(files, "_cells", unquoted)
    table = pd.DataFrame({"a": ["x\ry", "z"]})
    with pytest.raises(SchemaError, match="does not read back"):
        commit({str(tmp_path / "r.csv"): lambda path: write_csv(table, path)})
    assert _files(tmp_path) == ["r.csv"] and (tmp_path / "r.csv").read_text() == "old\n"


# ------------------------------------------------------------------ links and special files (defect 2)
def test_verify_out_never_replaces_a_link_or_a_special_file(tmp_path, capsys):
    job = write_job(tmp_path)
    assert run(capsys, "anonymize", job, "--out", tmp_path / "o")[0] == 0
    release = tmp_path / "o" / "release.csv"
    (tmp_path / "target.json").write_text("keep")
    os.symlink(tmp_path / "target.json", tmp_path / "link.json")
    os.mkfifo(tmp_path / "pipe")
    for out, message in ((tmp_path / "link.json", "is a symbolic link"), (tmp_path / "pipe", "is a pipe")):
        code, _, err = run(capsys, "verify", job, "--release", release, "--out", out)
        assert code == 2 and message in err, err
    assert os.path.islink(tmp_path / "link.json") and (tmp_path / "target.json").read_text() == "keep"
    assert os.path.exists(tmp_path / "pipe") and not os.path.isfile(tmp_path / "pipe")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_verify_out_refuses_a_device(tmp_path, capsys):
    job = write_job(tmp_path)
    assert run(capsys, "anonymize", job, "--out", tmp_path / "o")[0] == 0
    code, _, err = run(capsys, "verify", job, "--release", tmp_path / "o" / "release.csv", "--out", "/dev/full")
    assert code == 2 and "is a device" in err
    assert not os.path.isfile("/dev/full")


def test_anonymize_out_never_follows_a_link(tmp_path, capsys):
    job = write_job(tmp_path)
    (tmp_path / "real").mkdir()
    os.symlink(tmp_path / "real", tmp_path / "linked")
    code, _, err = run(capsys, "anonymize", job, "--out", tmp_path / "linked")
    assert code == 2 and "is a symbolic link" in err and _files(tmp_path / "real") == []
    out = tmp_path / "o"
    out.mkdir()
    (tmp_path / "elsewhere.csv").write_text("keep")
    os.symlink(tmp_path / "elsewhere.csv", out / "release.csv")
    code, _, err = run(capsys, "anonymize", job, "--out", out)
    assert code == 2 and "release.csv' is a symbolic link" in err
    assert os.path.islink(out / "release.csv") and (tmp_path / "elsewhere.csv").read_text() == "keep"


@pytest.mark.parametrize("command", ["anonymize", "verify", "patterns", "bench", "risk", "utility"])
def test_empty_out_is_refused(tmp_path, capsys, monkeypatch, command):
    monkeypatch.chdir(tmp_path)
    job = write_job(tmp_path)
    (tmp_path / "suite.yaml").write_text("name: s\ninstances: [{dataset: dewri_t1}]\n"
                                         "requirements: [{k_anonymity: {k: 2}}]\nalgorithms: [{method: mondrian}]\n")
    argv = {
        "anonymize": ["anonymize", job],
        "verify": ["verify", job, "--release", tmp_path / "data.csv"],
        "patterns": ["patterns", tmp_path / "data.csv", "--protected", "sex=F", "--decision", "approved=no"],
        "bench": ["bench", tmp_path / "suite.yaml"],
        "risk": ["risk", job],
        "utility": ["utility", job, "--classifier", "none"],
    }[command]
    before = _files(tmp_path)
    code, _, err = run(capsys, *argv, "--out", "")
    assert code == 2 and "--out '' names nothing" in err
    assert _files(tmp_path) == before


# ------------------------------------------------------------------ temporaries and the pair (defect 5)
def _dead_pid():
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_temporaries_of_killed_runs_are_removed_by_the_next_run(tmp_path, capsys):
    job = write_job(tmp_path)
    out = tmp_path / "o"
    out.mkdir()
    dead = _dead_pid()
    alive = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        stale = [f".release.csv.{dead}.abcd1234.part", ".report.json.k2j4h5g6.part",  # the older naming
                 f".release.FAILED.csv.{dead}.x.part"]
        live = f".release.csv.{alive.pid}.zzzz9999.part"
        for name in [*stale, live, ".unrelated.part", "notes.txt"]:
            (out / name).write_text("partial")
        (out / f".release.parquet.{dead}.part").mkdir()  # a Dask run's staging folder
        assert run(capsys, "anonymize", job, "--out", out)[0] == 0
        assert _files(out) == sorted([live, ".unrelated.part", "notes.txt", "release.csv", "report.json"])
    finally:
        alive.kill()
        alive.wait()


def test_the_report_is_the_manifest_of_its_release_and_renamed_last(tmp_path, capsys, monkeypatch):
    job = write_job(tmp_path)
    out = tmp_path / "o"
    assert run(capsys, "anonymize", job, "--out", out)[0] == 0
    report = json.loads((out / "report.json").read_text())
    entry = report["files"]["release.csv"]
    assert entry == {"bytes": os.path.getsize(out / "release.csv"), "sha256": files.sha256_of(out / "release.csv")}
    renamed, synced = [], []
    real_replace, real_fsync = os.replace, os.fsync
    monkeypatch.setattr(os, "replace", lambda a, b: (renamed.append(os.path.basename(b)), real_replace(a, b)))
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd)))
    assert run(capsys, "anonymize", job, "--out", out, "--seed", "1")[0] == 0
    assert renamed == ["release.csv", "report.json"]
    assert len(synced) >= 3  # both files, then the folder


def test_a_run_killed_between_the_renames_leaves_a_pair_verify_tells_apart(tmp_path, capsys, monkeypatch):
    job = write_job(tmp_path)
    out = tmp_path / "o"
    assert run(capsys, "anonymize", job, "--out", out)[0] == 0
    code, out_text, _ = run(capsys, "verify", job, "--release", out / "release.csv")
    assert code == 0 and "note:" not in out_text
    real_replace = os.replace

    def killed_after_first(a, b):
        if b.endswith("report.json"):
            raise OSError("killed")  # as if the process died between the two renames
        real_replace(a, b)

    monkeypatch.setattr(os, "replace", killed_after_first)
    other = write_job(tmp_path, requirements="\n- k_anonymity: {k: 4}", name="k4.yaml")  # another release
    code, _, err = run(capsys, "anonymize", other, "--out", out)
    assert code == 2 and "killed" in err
    monkeypatch.setattr(os, "replace", real_replace)
    code, out_text, _ = run(capsys, "verify", job, "--release", out / "release.csv")
    assert "report.json does not describe this release.csv" in out_text


# ------------------------------------------------------------------ values starting with ' (defect 6)
QUOTED_CSV = CSV.replace("flu", "'=already").replace("cold", "'plain")


@pytest.mark.parametrize("engine", ["local", "dask"])
@pytest.mark.parametrize("beside_its_report", [True, False])
def test_values_starting_with_a_quote_verify_without_neutralization(tmp_path, capsys, monkeypatch, beside_its_report,
                                                                    engine):
    """A release written with --no-neutralize-formulas whose values really start with a
    quote: without its report, read restored it fails, read as written it passes, on
    both engines (Dask in this process, without a cluster)."""
    if engine == "dask":
        import contextlib

        pytest.importorskip("dask.dataframe")
        monkeypatch.setattr("fairanon.distributed.command.client", lambda *a: contextlib.nullcontext())
    job = write_job(tmp_path, csv=QUOTED_CSV)
    out = tmp_path / "o"
    assert run(capsys, "anonymize", job, "--out", out, "--no-neutralize-formulas")[0] == 0
    release = out / "release.csv"
    if not beside_its_report:
        os.replace(release, tmp_path / "moved.csv")
        release = tmp_path / "moved.csv"
    code, out_text, _ = run(capsys, "verify", job, "--release", release, "--engine", engine)
    assert code == 0 and "PASSED" in out_text
    assert ("read as they are" in out_text) != beside_its_report
    assert run(capsys, "anonymize", job, "--out", out)[0] == 0  # neutralized: ''=already
    assert "''=already" in (out / "release.csv").read_text()
    code, out_text, _ = run(capsys, "verify", job, "--release", out / "release.csv", "--engine", engine)
    assert code == 0 and "read as they are" not in out_text


def test_formula_readings():
    table = pd.DataFrame({"a": ["'=x", "y"]})
    assert [r["a"].tolist() for r in formula_readings(table)] == [["=x", "y"], ["'=x", "y"]]
    assert [r["a"].tolist() for r in formula_readings(table, neutralized=False)] == [["'=x", "y"]]
    assert [r["a"].tolist() for r in formula_readings(table, neutralized=True)] == [["=x", "y"]]
    raw = pd.DataFrame({"a": ["'=x", "=y"]})  # =y unprefixed: never neutralized
    assert [r["a"].tolist() for r in formula_readings(raw)] == [["'=x", "=y"]]


# ------------------------------------------------------------------ any table of strings
TRICKY = ["", "=", "+", "-", "@", " ", "  ", "'", "''", "\r", "\n", "\r\n", '"', ",", "\t", ";"]
_cells = st.builds(
    lambda head, body, tail: head + body + tail,
    st.sampled_from(TRICKY),
    st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=5),
    st.sampled_from(["", " ", "\r", '"', "5"]),
)


@st.composite
def _tables(draw):
    n = draw(st.integers(2, 8))
    column = st.lists(_cells, min_size=n, max_size=n)
    table = pd.DataFrame({"q1": draw(column), "q2": draw(column), "s": draw(column)},
                         index=pd.Index(range(100, 100 + n), name="id"))
    return table


SCHEMA_QQS = fa.Schema([fa.Attribute("q1"), fa.Attribute("q2"), fa.Attribute("s", role="sensitive")])


@pytest.mark.parametrize("neutralize", [True, False])
@settings(max_examples=20)
@given(table=_tables())
def test_any_table_of_strings_survives_anonymize_file_verify(tmp_path_factory, neutralize, table):
    """The release read back from its file is the release written, cell for cell (so
    verify sees the same table), by Python's csv module and by fairanon verify, beside
    its report or on its own."""
    _survives(tmp_path_factory, neutralize, table)


@pytest.mark.slow
@pytest.mark.parametrize("neutralize", [True, False])
@settings(max_examples=200, deadline=None)
@given(table=_tables())
def test_any_table_of_strings_survives_at_length(tmp_path_factory, neutralize, table):
    _survives(tmp_path_factory, neutralize, table)


def _survives(tmp_path_factory, neutralize, table):
    try:
        inst = fa.Instance(table, SCHEMA_QQS, "strings")
    except SchemaError:  # not an instance (a cell equal to the suppression label '*')
        return
    requirements = [fa.KAnonymity(2)]
    release = fa.anonymize(inst, requirements, method="mondrian", seed=0)
    expected = release.table.astype(str)
    path = tmp_path_factory.mktemp("release") / "release.csv"
    release.to_csv(path, neutralize_formulas=neutralize)
    rows = _rows(path)
    assert len(rows) == len(expected) + 1 and {len(row) for row in rows} == {4}
    back = read_csv_table(str(path), dtype=str, keep_default_na=False)
    written = files.neutralize_formulas(expected) if neutralize else expected
    assert back.drop(columns="record_id").to_numpy().tolist() == written.to_numpy().tolist()
    assert formula_readings(back, neutralize)[0].drop(columns="record_id").to_numpy().tolist() == \
        expected.to_numpy().tolist()
    report, _ = cli._verify_file(str(path), inst, requirements)  # no report beside it
    assert report.passed, report


def test_a_value_with_a_space_float_does_not_take_is_a_label():
    table = pd.DataFrame({"q1": ["\x1f5", "5", "x"], "q2": ["a", "a", "a"], "s": ["u", "v", "w"]})
    inst = fa.Instance(table, SCHEMA_QQS, "strings")  # raised ValueError while ordering the labels
    assert set(inst.schema["q1"].hierarchy.leaves) == {"\x1f5", "5", "x"}


def test_risk_reads_a_release_as_its_report_says(tmp_path, capsys, monkeypatch):
    import functools

    import fairanon.api

    job = write_job(tmp_path, csv=QUOTED_CSV)
    out = tmp_path / "o"
    assert run(capsys, "anonymize", job, "--out", out, "--no-neutralize-formulas")[0] == 0
    seen = []

    @functools.wraps(fairanon.api._risk_local)  # fa.risk reads its options from the signature
    def capture(instance, release, **options):  # the release risk is given, then stop
        seen.append(release)
        raise fa.InvalidParameterError("captured")

    monkeypatch.setattr(fairanon.api, "_risk_local", capture)  # what fa.risk calls on one machine
    assert run(capsys, "risk", job, "--release", out / "release.csv")[0] == 2
    assert "'=already" in set(seen[0].table["disease"])


# ------------------------------------------------------------------ the Dask engine
@pytest.mark.slow
def test_dask_outputs_are_committed_with_their_manifest_and_never_through_a_link(tmp_path, capsys, monkeypatch):
    pytest.importorskip("distributed")
    monkeypatch.chdir(tmp_path)
    job = write_job(tmp_path)
    out = tmp_path / "o"
    for _ in range(2):  # the second run replaces the first one's release folder
        code, _, err = run(capsys, "anonymize", job, "--engine", "dask", "--workers", "1", "--out", out)
        assert code == 0, err
    assert _files(out) == ["release.parquet", "report.json"]
    report = json.loads((out / "report.json").read_text())
    parts = report["files"]["release.parquet"]["files"]
    assert parts and all(entry["sha256"] == files.sha256_of(out / "release.parquet" / name)
                         for name, entry in parts.items())
    os.symlink(tmp_path / "target.json", tmp_path / "link.json")
    for target in (tmp_path / "link.json", ""):
        code, _, err = run(capsys, "verify", job, "--release", out / "release.parquet", "--engine", "dask",
                           "--workers", "1", "--out", target)
        assert code == 2 and ("is a symbolic link" in err or "names nothing" in err), err
    assert not os.path.exists(tmp_path / "target.json")
    assert run(capsys, "anonymize", job, "--format", "parquet", "--out", out)[0] == 0  # a file replaces it
    assert _files(out) == ["release.parquet", "report.json"] and os.path.isfile(out / "release.parquet")
