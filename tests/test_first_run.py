"""What a new user meets first: the Quickstart's two commands (which say what they are
doing), the Python version check, and a report that says what its status and verdict
mean."""

import os
import re
import subprocess
import sys

import fairanon as fa

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _quickstart():
    with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as fh:
        text = fh.read()
    section = text.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return section, re.findall(r"```sh\n(.*?)\n```", section, flags=re.S)


def test_the_quickstart_has_two_commands_that_are_not_silent():
    section, commands = _quickstart()
    assert len(commands) == 2 and all("\n" not in c for c in commands)
    for command in commands:
        assert "pip install" in command and " -q" not in command and "--quiet" not in command
    assert "fairanon anonymize" in commands[0] and "pytest" in commands[1]


def test_the_readme_says_what_ci_run_does_besides_the_test_command():
    section, commands = _quickstart()
    with open(os.path.join(ROOT, ".ci", "run"), encoding="utf-8") as fh:
        script = fh.read()
    assert commands[1] in script.splitlines()  # the test command, verbatim
    assert "apt-get" in script and "runs exactly" not in section
    assert "`.ci/run`" in section and "chromium" in section and "apt-get" in section


def test_pyproject_and_import_refuse_an_old_python():
    with open(os.path.join(ROOT, "pyproject.toml"), encoding="utf-8") as fh:
        assert 'requires-python = ">=3.11"' in fh.read()
    code = "import sys; sys.version_info = (3, 10, 4, 'final', 0); import fairanon"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode != 0
    assert "fairanon needs Python 3.11 or newer; this is Python 3.10.4" in proc.stderr


def test_the_report_says_what_its_status_and_verdict_mean():
    inst = fa.load("diva_table1")
    reqs = [fa.KAnonymity(2)]
    rel = fa.anonymize(inst, reqs, method="mondrian", seed=0)
    report = fa.verify(inst, rel, reqs)
    first, legend = str(report).splitlines()[:2]
    assert first.endswith("status FEASIBLE): PASSED")
    assert legend.startswith("  (FEASIBLE: ") and "not proven to lose least" in legend
    assert "PASSED: every check below" in legend and "redone by the verifier" in legend
    failed = fa.verify(inst, rel, [fa.KAnonymity(5)])
    assert "FAILED: a check below" in str(failed).splitlines()[1]


def test_the_command_line_prints_the_legend(tmp_path, capsys):
    from cli_helpers import run, write_job

    code, out, _ = run(capsys, "anonymize", write_job(tmp_path), "--out", tmp_path / "o")
    assert code == 0
    lines = out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("Verification of"))
    assert lines[header + 1].startswith("  (FEASIBLE: ") and "PASSED: " in lines[header + 1]
