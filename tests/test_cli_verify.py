"""``fairanon verify`` on tampered and broken release files: extra columns fail by name,
empty and unreadable files get a message (tests/models/test_verify_fuzz.py fuzzes it
against a brute-force oracle)."""

import json
import re

import numpy as np
import pandas as pd
from cli_helpers import run, write_job

import fairanon as fa


def _anonymized(tmp_path, capsys):
    job = write_job(tmp_path)
    assert run(capsys, "anonymize", job, "--out", tmp_path / "o")[0] == 0
    return job, pd.read_csv(tmp_path / "o" / "release.csv", dtype=str, keep_default_na=False)


def test_extra_columns_fail_the_columns_check_by_name(tmp_path, capsys):
    job, release = _anonymized(tmp_path, capsys)
    data = pd.read_csv(tmp_path / "data.csv", dtype=str).set_index("id")
    release["age_exact"] = data.loc[release["record_id"], "age"].to_numpy()  # the raw ages
    release["full_name"] = data.loc[release["record_id"], "name"].to_numpy()
    release["name"] = release["full_name"]  # an identifier of the schema
    release.to_csv(tmp_path / "leak.csv", index=False)
    code, out, _ = run(capsys, "verify", job, "--release", tmp_path / "leak.csv", "--out", tmp_path / "r.json")
    assert code == 1 and "FAILED" in out
    assert re.search(r"FAIL\s+columns", out)
    assert "'age_exact' (not in the schema), 'full_name' (not in the schema), 'name' (identifier)" in out
    columns = next(c for c in json.loads((tmp_path / "r.json").read_text())["checks"] if c["name"] == "columns")
    assert columns["witness"]["not_allowed"] == ["age_exact", "full_name", "name"]


def test_release_with_a_header_and_no_rows(tmp_path, capsys):
    job, release = _anonymized(tmp_path, capsys)
    release.iloc[:0].to_csv(tmp_path / "empty.csv", index=False)
    code, out, _ = run(capsys, "verify", job, "--release", tmp_path / "empty.csv")
    assert code == 1 and "8 lost" in out
    assert re.search(r"FAIL\s+2-anonymity\s+-\s+the release holds no rows", out)


def test_zero_byte_and_binary_release_files(tmp_path, capsys):
    job = write_job(tmp_path)
    (tmp_path / "zero.csv").write_bytes(b"")
    code, _, err = run(capsys, "verify", job, "--release", tmp_path / "zero.csv")
    assert code == 2 and "Release file" in err and "is empty (0 bytes)" in err
    (tmp_path / "binary.csv").write_bytes(bytes(range(256)) * 4)
    code, _, err = run(capsys, "verify", job, "--release", tmp_path / "binary.csv")
    assert code == 2 and "is not a text CSV file (it holds binary data)" in err
    (tmp_path / "latin.csv").write_bytes("record_id,ville\n1,Zürich\n".encode("latin-1"))
    code, _, err = run(capsys, "verify", job, "--release", tmp_path / "latin.csv")
    assert code == 2 and "is not UTF-8 text" in err
    # a field more than the header names must not shift the columns (or vanish)
    (tmp_path / "long.csv").write_text("record_id,age,zip,sex,disease,approved\n1,[26-34],13053,F,flu,no,34\n")
    code, _, err = run(capsys, "verify", job, "--release", tmp_path / "long.csv")
    assert code == 2 and "has rows with more fields than its header has names (6)" in err


def test_entropy_value_is_exact_where_it_is_an_integer_and_on_the_verdict_side():
    inst = fa.load("diva_table1")
    release = fa.anonymize(inst, [fa.KAnonymity(2)], method="mondrian")
    for l, holds in [(1, True), (2, True), ("2.5", False), (3, False)]:
        check = fa.verify(inst, release, [fa.LDiversity(l, variant="entropy")], metrics=False).checks[-1]
        assert check.passed is holds and check.achieved == 2 and isinstance(check.achieved, int)
    from fairanon.models.measures import entropy_l_value

    assert entropy_l_value(np.array([3, 3, 3, 3, 3, 3, 3]), 7, True) == 7  # float: 6.999999999999999
    value = entropy_l_value(np.array([1, 2]), "1.8898815748423097", True)  # exp(H) = 3/4^(1/3)
    assert value >= fa.LDiversity("1.8898815748423097", variant="entropy").l
