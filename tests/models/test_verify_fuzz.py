"""A fuzz test of ``fairanon verify`` against a brute-force oracle: random column sets,
cell edits, dropped, repeated and shuffled rows and columns, empty and 0-byte files,
written raw or with formulas neutralized. Never a traceback; PASSED exactly when the
oracle, reading the definitions, agrees."""

import contextlib
import io
import os
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from test_verify import CITY, DISEASES, _oracle_alpha, _oracle_k, _oracle_l

from fairanon.cli import main
from fairanon.instances.files import neutralize_formulas
from fairanon.jobs import read_job
from fairanon.release import generalize_partition

SCHEMA = """
name: {role: identifier}
age: {role: qi, type: numeric}
city: {role: qi, hierarchy: {"*": {north: [n1, n2], south: [s1, s2, s3]}}}
sex: {role: protected, protected: [F], hierarchy: {"*": [F, M]}}
disease: {role: sensitive, type: ordered, order: [cold, flu, hiv, ulcer]}
loan: {role: decision, negative: "no", hierarchy: {"*": ["no", "yes"]}}"""
RELEASED = ["age", "city", "sex", "disease", "loan"]
EXTRA = ["name", "note", "age_exact", "full_name"]
POOL = {
    "age": ["*", "[20-30]", "[25-26]", "abc", "=1+2", "", "-3"],
    "city": [*CITY.nodes, "*", "x", "@city"],
    "sex": ["F", "M", "+F"],
    "disease": [*DISEASES, "-flu"],
    "loan": ["yes", "no"],
    "record_id": ["99", "", "1"],
}

rows = st.lists(
    st.tuples(st.integers(20, 30), st.sampled_from(CITY.leaves), st.sampled_from(["F", "M"]),
              st.sampled_from(DISEASES), st.sampled_from(["yes", "no"])),
    min_size=2, max_size=10,
)


def _age_covers(label: str, age: int) -> bool:
    if label == "*" or label == str(age):
        return True
    match = re.fullmatch(r"\[(-?\d+)-(-?\d+)\]", label)
    return bool(match) and int(match[1]) <= age <= int(match[2])


def _oracle(original: pd.DataFrame, header: list, cells: list, reqs: dict) -> bool:
    """Whether the release file passes, straight from the definitions."""
    if "record_id" not in header or len(set(header)) != len(header):
        return False
    if sorted(header) != sorted(["record_id", *RELEASED]):
        return False
    table = pd.DataFrame(cells, columns=header, dtype=str)
    if not all(i.isdigit() for i in table["record_id"]):
        return False
    ids = [int(i) for i in table["record_id"]]
    if len(ids) != len(set(ids)) or set(ids) != set(original.index):
        return False
    table.index = ids
    for rid, row in table.iterrows():
        orig = original.loc[rid]
        if not _age_covers(row["age"], int(orig["age"])):
            return False
        if row["city"] not in CITY or not CITY.covers(row["city"], orig["city"]):
            return False
        if any(row[c] != orig[c] for c in ("sex", "disease", "loan")):
            return False
    qi = ["age", "city", "sex"]
    visible = int((table["city"] == "n1").sum())
    return (
        _oracle_k(table, qi, reqs["k"])
        and _oracle_l(table, qi, reqs["l"])
        and reqs["lower"] <= visible <= reqs["upper"]
        and _oracle_alpha(table, "RD", reqs["alpha"], reqs["support"])
    )


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> str:
    return str(tmp_path_factory.mktemp("verify-fuzz"))


def _verify_one(folder: str, data_rows, data) -> None:
    """Write an instance, a job and a damaged release, run ``fairanon verify`` and
    compare its verdict with the oracle's."""
    n = len(data_rows)
    original = pd.DataFrame(data_rows, columns=["age", "city", "sex", "disease", "loan"], index=range(1, n + 1))
    original.index.name = "id"
    frame = original.copy()
    frame.insert(0, "name", [f"person{i}" for i in frame.index])
    frame["note"] = "x"
    path = os.path.join(folder, "data.csv")
    frame.to_csv(path)
    reqs = {
        "k": data.draw(st.sampled_from([1, 1, 2, 3])),
        "l": data.draw(st.sampled_from([1, 1, 2])),
        "lower": data.draw(st.sampled_from([0, 0, 0, 1])),
        "upper": data.draw(st.sampled_from([n, n, 2])),
        "alpha": data.draw(st.sampled_from([Fraction(1), Fraction(1), Fraction(1, 2), Fraction(1, 5)])),
        "support": data.draw(st.integers(1, 3)),
    }
    requirements = (
        f"\n- k_anonymity: {{k: {reqs['k']}}}\n- l_diversity: {{l: {reqs['l']}}}"
        f"\n- diversity: \"city(n1) [{reqs['lower']}, {reqs['upper']}]\""
        f"\n- alpha_protection: {{measure: RD, alpha: \"{reqs['alpha']}\", min_support: {reqs['support']}}}"
    )
    job = os.path.join(folder, "job.yaml")
    Path(job).write_text(
        "instance:\n  csv: data.csv\n  id_column: id\n  schema:"
        + SCHEMA.replace("\n", "\n    ") + "\nrequirements:" + requirements.replace("\n", "\n  ") + "\n"
    )

    # A release of a random partition (so that many pass), then damage.
    inst = read_job(job).instance
    groups = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    released = generalize_partition(inst, groups).astype(str)
    header = ["record_id", *released.columns]
    cells = [[str(i), *row] for i, row in zip(released.index, released.itertuples(index=False))]
    for name in data.draw(st.lists(st.sampled_from(RELEASED), max_size=2, unique=True)):
        if data.draw(st.integers(0, 7)) == 0:  # drop a released column, now and then
            at = header.index(name)
            header.pop(at)
            cells = [row[:at] + row[at + 1:] for row in cells]
    for name in data.draw(st.lists(st.sampled_from(EXTRA + ["age"]), max_size=2, unique=True)):
        if data.draw(st.integers(0, 5)) == 0:  # add a column holding raw data
            raw = {"name": "person", "full_name": "person", "note": "x"}.get(name)
            header.append(name)
            for row in cells:
                row.append(raw + row[0] if raw == "person" else raw or str(original.loc[int(row[0]), "age"]))
    for _ in range(data.draw(st.sampled_from([0, 0, 0, 1, 2, 3]))):
        if not cells:
            break
        r = data.draw(st.integers(0, len(cells) - 1))
        c = data.draw(st.integers(0, len(header) - 1))
        cells[r][c] = data.draw(st.sampled_from(POOL.get(header[c], ["", "=cmd", "1"])))
    edit = data.draw(st.sampled_from(["none"] * 8 + ["drop", "repeat", "empty", "zero", "shuffle"]))
    if edit == "drop" and cells:
        cells.pop(data.draw(st.integers(0, len(cells) - 1)))
    elif edit == "repeat" and cells:
        cells.append(list(cells[0]))
    elif edit == "empty":
        cells = []
    elif edit == "shuffle":
        order = data.draw(st.permutations(range(len(header))))
        header = [header[i] for i in order]
        cells = [[row[i] for i in order] for row in cells]

    release_path = os.path.join(folder, "release.csv")
    if edit == "zero":
        open(release_path, "wb").close()
    else:
        table = pd.DataFrame(cells, columns=header, dtype=str)
        if data.draw(st.booleans()):
            table = neutralize_formulas(table)
        table.to_csv(release_path, index=False)

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["verify", job, "--release", release_path])
    text = out.getvalue() + err.getvalue()
    event(f"exit {code}")
    for name in re.findall(r"FAIL  (\S+)", text):
        event(f"fails {name}")
    assert "Traceback" not in text
    expected = edit != "zero" and _oracle(original, header, cells, reqs)
    assert (code == 0) == expected, text
    assert code in (0, 1, 2)
    if code == 2:
        assert err.getvalue().startswith("fairanon"), text
    else:
        assert ("PASSED" in text) == (code == 0)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows, st.data())
def test_fuzzed_release_files_never_give_a_traceback_and_pass_only_with_the_oracle(folder, data_rows, data):
    _verify_one(folder, data_rows, data)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rows, st.data())
def test_fuzzed_release_files_at_length(folder, data_rows, data):
    _verify_one(folder, data_rows, data)
