"""A small job on a CSV file for the command-line tests, and a runner of the command
line that returns its exit code, standard output and standard error."""

import textwrap

from fairanon.cli import main

CSV = """id,name,age,zip,sex,disease,approved
1,Ann,34,13053,F,flu,no
2,Bob,41,13268,M,cold,yes
3,Cid,39,13268,M,flu,yes
4,Dee,26,13053,F,cold,no
5,Eve,50,13253,F,hiv,no
6,Fay,55,13253,F,cold,yes
7,Gus,49,13250,M,hiv,no
8,Hal,31,13052,M,flu,yes
"""

SCHEMA = """
name: {role: identifier}
age: {role: qi, type: numeric}
zip: {role: qi}
sex: {role: protected, protected: [F]}
disease: {role: sensitive}
approved: {role: decision, negative: "no"}"""

REQUIREMENTS = """
- k_anonymity: {k: 2}
- l_diversity: {l: 2}"""


def write_job(folder, *, csv=CSV, schema=SCHEMA, requirements=REQUIREMENTS, method="mondrian", seed=0,
              extra="", name="job.yaml", data="data.csv"):
    """Write `data` and a job file reading it into `folder`; returns the job's path."""
    if csv is not None:
        (folder / data).write_text(csv, encoding="utf-8")
    text = (
        f"instance:\n  csv: {data}\n  id_column: id\n  schema:{textwrap.indent(textwrap.dedent(schema), '    ')}\n"
        f"requirements:{textwrap.indent(textwrap.dedent(requirements), '  ')}\n"
        f"method: {method}\nseed: {seed}\n{extra}"
    )
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return str(path)


def run(capsys, *argv):
    """Run the command line; (exit code, stdout, stderr). No traceback may reach the user."""
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, out + err
    return code, out, err
