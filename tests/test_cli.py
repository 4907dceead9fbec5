"""The command line: the main job, describe, verify, and exit code 2 with a clear
message for every kind of bad input."""

import json
from fractions import Fraction

import pytest
from cli_helpers import CSV, REQUIREMENTS, SCHEMA, write_job

import fairanon as fa
from fairanon.cli import main

def _job(tmp_path, *, csv=CSV, schema=None, requirements=None, extra=""):
    return write_job(
        tmp_path, csv=csv, schema=schema or SCHEMA, requirements=requirements or REQUIREMENTS, extra=extra
    )


def test_main_job_on_the_bundled_default(tmp_path, capsys):
    assert main(["anonymize", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "PASSED" in out and "5-anonymity" in out
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["report"]["passed"]
    assert report["release"]["method"] == "mondrian-loss"
    assert (tmp_path / "release.csv").read_text().startswith("record_id,")


def test_anonymize_then_verify_a_csv_job(tmp_path, capsys):
    job = _job(tmp_path)
    out = tmp_path / "out"
    assert main(["anonymize", job, "--out", str(out)]) == 0
    release = (out / "release.csv").read_text()
    assert "name" not in release.splitlines()[0]  # identifiers are dropped
    assert main(["verify", job, "--release", str(out / "release.csv"), "--out", str(tmp_path / "r.json")]) == 0
    assert json.loads((tmp_path / "r.json").read_text())["passed"]


def test_verify_catches_an_edited_release(tmp_path, capsys):
    job = _job(tmp_path)
    out = tmp_path / "out"
    main(["anonymize", job, "--out", str(out)])
    lines = (out / "release.csv").read_text().splitlines()
    header = lines[0].split(",")
    first = lines[1].split(",")
    first[header.index("age")] = "34"  # un-generalize one cell
    lines[1] = ",".join(first)
    (out / "edited.csv").write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["verify", job, "--release", str(out / "edited.csv")]) == 1
    assert "FAIL  2-anonymity" in capsys.readouterr().out


def test_describe_german_json(capsys):
    assert main(["describe", "--dataset", "german", "--json"]) == 0
    desc = json.loads(capsys.readouterr().out)
    assert Fraction(desc["discrimination"]["p_minus"]) == Fraction(3, 10)
    assert float(Fraction(desc["discrimination"]["tau"])) == pytest.approx(0.052, abs=5e-4)


def test_describe_text(capsys):
    assert main(["describe", "--dataset", "ruggieri_loan"]) == 0
    out = capsys.readouterr().out
    assert "tau(R) = 0.0294" in out and "p- = 0.4706" in out


BAD_INPUTS = {
    "unknown column": dict(schema="""
        agge: {role: qi, type: numeric}
        disease: {role: sensitive}"""),
    "wrong type": dict(schema="""
        zip: {role: qi, type: numeric}
        name: {role: qi, type: numeric}
        disease: {role: sensitive}"""),
    "missing values": dict(csv=CSV.replace("13268,M,cold", ",M,cold")),
    "k larger than the table": dict(requirements="""
      - k_anonymity: {k: 50}"""),
    "empty table": dict(csv=CSV.splitlines()[0] + "\n"),
    "value outside its hierarchy": dict(schema="""
        zip: {role: qi, hierarchy: {"*": ["13053", "13268"]}}
        disease: {role: sensitive}"""),
    "unknown requirement": dict(requirements="""
      - k_anonymitee: {k: 2}"""),
    "bad threshold": dict(requirements="""
      - t_closeness: {t: 2}"""),
}
MESSAGES = {
    "unknown column": "Unknown column(s) ['agge']",
    "wrong type": "declared numeric but holds",
    "missing values": "Missing values in 'zip'",
    "k larger than the table": "k=50 exceeds the 8 rows",
    "empty table": "empty table",
    "value outside its hierarchy": "not in its hierarchy",
    "unknown requirement": "Unknown requirement 'k_anonymitee'",
    "bad threshold": "'t' parameter of TCloseness must be in [0, 1]",
}


@pytest.mark.parametrize("case", sorted(MESSAGES))
def test_bad_input_exits_2_with_a_clear_message(tmp_path, capsys, case):
    job = _job(tmp_path, **BAD_INPUTS[case])
    assert main(["anonymize", job, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert MESSAGES[case] in err
    assert "Traceback" not in err


def test_malformed_job_file(tmp_path, capsys):
    path = tmp_path / "job.yaml"
    path.write_text("instance: [unclosed\n")
    assert main(["anonymize", str(path)]) == 2
    assert "malformed" in capsys.readouterr().err


def test_unknown_method_and_dataset(tmp_path, capsys):
    assert main(["anonymize", _job(tmp_path), "--method", "magic"]) == 2
    assert "'method' parameter of anonymize must be one of" in capsys.readouterr().err
    assert main(["describe", "--dataset", "nope"]) == 2
    assert "nope" in capsys.readouterr().err


def test_usage_errors_exit_2(capsys):
    assert main(["anonymize", "--seed", "x"]) == 2
    assert main(["verify"]) == 2
    assert main([]) == 2


def test_api_raises_typed_errors():
    inst = fa.load("diva_table1")
    with pytest.raises(fa.InvalidParameterError, match="k=11 exceeds the 10 rows"):
        fa.anonymize(inst, [fa.KAnonymity(11)])
    with pytest.raises(fa.InvalidParameterError, match="'k' parameter of KAnonymity"):
        fa.KAnonymity(0)
    with pytest.raises(fa.IncompatibleRequirementError):
        fa.anonymize(inst, [fa.KAnonymity(2), fa.DiversityConstraint({"ETH": "Asian"}, 2, 5)], method="mondrian")
    with pytest.raises(fa.SchemaError, match="not a value of 'ETH'"):
        fa.anonymize(inst, [fa.DiversityConstraint({"ETH": "Martian"}, 1, 2)])
    with pytest.raises(fa.IncompatibleRequirementError, match="protected and a decision"):
        fa.anonymize(inst, [fa.AlphaProtection("RD", 0.1)])


def test_the_time_limit_is_the_commands(tmp_path, capsys, monkeypatch):
    """With start-up and loading taking 2 s of a 10 s limit (a clock read at the start
    and before the method), the method gets 10 - 10 % - 2 = 7 s; the release verifies."""
    import importlib

    import fairanon.api

    cli = importlib.import_module("fairanon.cli")
    given, real = [], fairanon.api.anonymize

    def anonymize(*args, time_limit=None, **kwargs):
        given.append(time_limit)
        return real(*args, time_limit=time_limit, **kwargs)

    import fairanon._limits

    monkeypatch.setattr(cli, "perf_counter", lambda: 100.0)  # the command's start
    monkeypatch.setattr(fairanon._limits, "perf_counter", lambda: 102.0)  # before the method
    monkeypatch.setattr(fairanon.api, "anonymize", anonymize)
    assert main(["anonymize", "--method", "mondrian", "--time-limit", "10", "--out", str(tmp_path)]) == 0
    assert given == [pytest.approx(7.0)]
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["report"]["passed"]


@pytest.mark.parametrize("start", ["ignored", "default"])
def test_ctrl_c_is_taken_only_when_the_process_takes_it(start, monkeypatch):
    """Started with SIGINT ignored (nohup, a non-interactive shell's ``&``), the command
    keeps ignoring it, as Python does; it installed its own handler, so a Ctrl-C meant
    for the shell ended a run that had asked to be left alone."""
    import importlib
    import signal

    cli = importlib.import_module("fairanon.cli")
    during = []
    monkeypatch.setattr(cli, "_run", lambda argv, started: during.append(signal.getsignal(signal.SIGINT)) or 0)
    before = signal.signal(signal.SIGINT, signal.SIG_IGN if start == "ignored" else signal.default_int_handler)
    try:
        assert main(["describe", "german"]) == 0
        after = signal.getsignal(signal.SIGINT)
    finally:
        signal.signal(signal.SIGINT, before)
    if start == "ignored":
        assert during == [signal.SIG_IGN] and after is signal.SIG_IGN
    else:
        assert during == [cli._on_interrupt] and after is signal.default_int_handler
