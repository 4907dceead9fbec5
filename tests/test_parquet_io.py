"""Job files read CSV or Parquet, a file or a directory; the release is written as Parquet."""

import json

import pandas as pd

from fairanon.cli import main
from fairanon.jobs import read_job

JOB = """
instance:
  {source}
  id_column: id
  schema:
    age: {{role: qi, type: numeric}}
    zip: {{role: qi}}
    disease: {{role: sensitive}}
requirements:
  - k_anonymity: {{k: 2}}
method: mondrian
"""

ROWS = pd.DataFrame({
    "id": range(8),
    "age": [21, 22, 23, 24, 31, 32, 33, 34],
    "zip": ["01234", "01234", "01235", "01235", "09000", "09000", "09001", "09001"],
    "disease": ["flu", "cold", "flu", "hiv", "flu", "cold", "hiv", "flu"],
})


def _write(tmp_path, source):
    path = tmp_path / "job.yaml"
    path.write_text(JOB.format(source=source))
    return str(path)


def test_a_csv_directory_is_read_whole_and_text_columns_are_not_guessed(tmp_path):
    (tmp_path / "data").mkdir()
    ROWS.iloc[:4].to_csv(tmp_path / "data" / "a.csv", index=False)
    ROWS.iloc[4:].to_csv(tmp_path / "data" / "b.csv", index=False)
    job = read_job(_write(tmp_path, "csv: data"))
    assert job.instance.n_rows == 8
    assert "01234" in job.instance.schema["zip"].domain  # not read as the number 1234


def test_parquet_file_and_directory_read_with_their_types(tmp_path):
    ROWS.to_parquet(tmp_path / "one.parquet", index=False)
    (tmp_path / "many").mkdir()
    ROWS.iloc[:5].to_parquet(tmp_path / "many" / "p0.parquet", index=False)
    ROWS.iloc[5:].to_parquet(tmp_path / "many" / "p1.parquet", index=False)
    one = read_job(_write(tmp_path, "parquet: one.parquet")).instance
    many = read_job(_write(tmp_path, "parquet: many")).instance
    assert one.n_rows == many.n_rows == 8
    assert one.table.astype(str).equals(many.table.sort_index().astype(str))
    assert "01234" in one.schema["zip"].domain


def test_release_written_as_parquet_and_verified(tmp_path, monkeypatch, capsys):
    ROWS.to_parquet(tmp_path / "data.parquet", index=False)
    job = _write(tmp_path, "parquet: data.parquet")
    monkeypatch.chdir(tmp_path)
    assert main(["anonymize", job, "--out", "out", "--format", "parquet"]) == 0
    release = pd.read_parquet(tmp_path / "out" / "release.parquet")
    assert release.index.name == "record_id" and len(release) == 8
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["resources"]["process_peak_rss_mb"] > 0
    assert main(["verify", job, "--release", "out/release.parquet"]) == 0
    capsys.readouterr()
