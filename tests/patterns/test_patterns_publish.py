"""The front door (publish, requirements, releases) and the ``fairanon patterns`` command."""

import json
from fractions import Fraction as F

import pytest

from fairanon import patterns as fp
from fairanon.cli import main
from fairanon.exceptions import InvalidParameterError
from fairanon.release import Status

CELLS = {("f", "v", "C"): 20, ("f", "v"): 14, ("v", "C"): 19, ("v",): 28}


def _ps(**kw):
    return fp.PatternSet.from_db(fp.TransactionDB.from_counts(CELLS), 1, fp.Roles({"f"}, "C"), backend="apriori", **kw)


def test_publish_release_fields():
    rel = fp.publish(_ps(), fp.PatternRequirements("slift", 1.25, k=3))
    assert rel.status == Status.FEASIBLE and rel.passed
    assert rel.report["alpha_protection"].passed and rel.report["k_anonymity"].passed
    frame = rel.to_frame()
    assert list(frame.columns) == ["itemset", "size", "support", "original_support"]
    row = frame.set_index("itemset").loc["f & v"]
    assert (row["support"], row["original_support"]) == (40, 34)
    summary = rel.summary()
    json.dumps(summary)
    assert summary["virtual_records"] == 6 and summary["status"] == "FEASIBLE"
    assert rel.changes()["support_altered"] == F(3, 7)


def test_requirements_validation():
    assert str(fp.PatternRequirements()) == "1.2-protection (slift < 1.2)"
    with pytest.raises(InvalidParameterError, match="'measure' parameter"):
        fp.PatternRequirements("lift")
    with pytest.raises(InvalidParameterError, match="'d' parameter"):
        fp.PatternRequirements(d=2)
    with pytest.raises(InvalidParameterError, match="'k' parameter"):
        fp.PatternRequirements(k=0)
    with pytest.raises(InvalidParameterError, match="'method' parameter"):
        fp.publish(_ps(), method="magic")
    with pytest.raises(InvalidParameterError, match="PatternSet"):
        fp.publish({frozenset("a"): 1})
    with pytest.raises(InvalidParameterError, match="time_limit"):
        fp.publish(_ps(), time_limit=-1)


def test_single_pass_release_is_infeasible_with_reason():
    cells = {("f",): 5, ("y",): 30, ("C",): 1, ("f", "y"): 5, ("f", "C"): 30, ("f", "y", "C"): 10}
    ps = fp.PatternSet.from_db(fp.TransactionDB.from_counts(cells), 1, fp.Roles({"f", "y"}, "C"), backend="apriori")
    rel = fp.publish(ps, fp.PatternRequirements("slift", 1.25), recheck=False)
    assert rel.status == Status.INFEASIBLE and not rel.passed
    assert "2 pattern(s) still α-discriminatory" in rel.reason
    assert not rel.report.passed


def test_nonstrict_reading_and_publish_is_deterministic():
    a = fp.publish(_ps(), fp.PatternRequirements("slift", 1.25, reading="nonstrict"))
    b = fp.publish(_ps(), fp.PatternRequirements("slift", 1.25, reading="nonstrict"))
    assert a.patterns.ledger == b.patterns.ledger and a.passed


# ------------------------------------------------------------------ CLI
def test_cli_csv(tmp_path, capsys):
    rows = ["sex,job,credit"] + ["female,vet,no"] * 20 + ["female,vet,yes"] * 14 + ["male,vet,no"] * 19 + ["male,vet,yes"] * 28
    path = tmp_path / "loans.csv"
    path.write_text("\n".join(rows) + "\n")
    out = tmp_path / "out"
    code = main(["patterns", str(path), "--support", "1", "--alpha", "1.25", "--protected", "sex=female",
                 "--decision", "credit=no", "--positive", "credit=yes", "--k", "3", "--out", str(out)])
    assert code == 0, capsys.readouterr()
    report = json.loads((out / "report.json").read_text())
    assert report["status"] == "FEASIBLE" and report["report"]["passed"]
    assert (out / "patterns.csv").read_text().startswith("itemset,size,support,original_support")


def test_cli_exit_codes(tmp_path, capsys):
    assert main(["patterns", "nosuch-data"]) == 2
    assert "neither a data set" in capsys.readouterr().err
    path = tmp_path / "t.csv"
    path.write_text("a,b\nx,y\n")
    assert main(["patterns", str(path)]) == 2
    assert "--protected and --decision" in capsys.readouterr().err
    assert main(["patterns", str(path), "--protected", "a=z", "--decision", "b=y"]) == 2
    assert "do not occur" in capsys.readouterr().err
    assert main(["patterns", "german", "--measure", "lift"]) == 2
    cells = ["f,y,c"] + ["1,0,0"] * 5 + ["0,1,0"] * 30 + ["0,0,1"] + ["1,1,0"] * 5 + ["1,0,1"] * 30 + ["1,1,1"] * 10
    path.write_text("\n".join(cells) + "\n")
    args = ["patterns", str(path), "--support", "1", "--alpha", "1.25", "--protected", "f=1", "y=1",
            "--decision", "c=1", "--out", str(tmp_path / "o")]
    assert main(args) == 0
    assert main(args + ["--exact"]) == 0
    assert "OPTIMAL" in capsys.readouterr().out


def test_cli_paper_dataset(tmp_path, capsys):
    code = main(["patterns", "german", "--support", "0.25", "--alpha", "1.2", "--out", str(tmp_path)])
    assert code == 0
    assert "german:" in capsys.readouterr().out


# ------------------------------------------------------------------ targets="union" (HJ-2)
V7 = {("f", "y", "C"): 2, ("f", "C"): 22, ("y", "C"): 11, ("C",): 5, ("f", "y"): 8, ("f",): 8, ("y",): 9, (): 35}


def test_publish_names_union_targets_when_the_paper_pass_leaves_discrimination():
    """V7 (docs/papers.md, HJ-2): the paper's single pass leaves y discriminatory, and the
    reason points at targets="union", whose single pass leaves nothing (33 records {f, y})."""
    ps = fp.PatternSet.from_db(fp.TransactionDB.from_counts(V7), 1, fp.Roles({"f", "y"}, "C"), backend="apriori")
    reqs = fp.PatternRequirements("slift", F(5, 4))
    paper = fp.publish(ps, reqs, recheck=False)
    assert paper.status == Status.INFEASIBLE and not paper.passed
    assert "try targets='union'" in paper.reason
    union = fp.publish(ps, reqs, recheck=False, targets="union")
    assert union.status == Status.FEASIBLE and union.passed and union.reason is None
    assert union.patterns.ledger == ((frozenset({"f", "y"}), 33),)
    assert union.provenance["params"]["targets"] == "union"
    with pytest.raises(InvalidParameterError, match="'targets' parameter of sanitize"):
        fp.publish(ps, reqs, targets="both")
    with pytest.raises(InvalidParameterError, match=r"publish\(method='exact'\) takes the options .*Got \['targets'\]"):
        fp.publish(ps, reqs, method="exact", targets="union")
    with pytest.raises(InvalidParameterError, match=r"publish\(method='greedy'\) takes .*'targets'\]. Got \['target'\]"):
        fp.publish(ps, reqs, target="union")
    with pytest.raises(InvalidParameterError, match="publish_dp takes the options"):
        fp.publish_dp(fp.TransactionDB.from_counts(V7), 5, 1, ps.roles, reqs, seed=0, objective="records")


def test_union_targets_are_suggested_only_where_they_change_the_target():
    """elift_c's target ignores targets= (measures.target): its reason names method='exact' only."""
    cells = {("f", "y", "C"): 25, ("f", "C"): 29, ("y", "C"): 17, ("C",): 29, ("f", "y"): 0, ("f",): 2, ("y",): 23,
             (): 26}
    ps = fp.PatternSet.from_db(fp.TransactionDB.from_counts(cells), 1, fp.Roles({"f", "y"}, "C"), backend="apriori")
    rel = fp.publish(ps, fp.PatternRequirements("elift_c", F(11, 10)), recheck=False)
    assert rel.status == Status.INFEASIBLE and "still α-discriminatory" in rel.reason
    assert "targets='union'" not in rel.reason and rel.reason.endswith("try method='exact'")
    union = fp.publish(ps, fp.PatternRequirements("elift_c", F(11, 10)), recheck=False, targets="union")
    assert union.patterns.ledger == rel.patterns.ledger  # the advice would change nothing


def test_cli_targets(tmp_path, capsys):
    rows = ["f,y,c"] + [f"{f},{y},{c}" for (f, y, c), n in {(1, 1, 1): 2, (1, 0, 1): 22, (0, 1, 1): 11, (0, 0, 1): 5,
                                                           (1, 1, 0): 8, (1, 0, 0): 8, (0, 1, 0): 9, (0, 0, 0): 35}.items()
                            for _ in range(n)]
    path = tmp_path / "v7.csv"
    path.write_text("\n".join(rows) + "\n")
    args = ["patterns", str(path), "--support", "1", "--alpha", "1.25", "--protected", "f=1", "y=1",
            "--decision", "c=1", "--targets", "union"]
    assert main(args + ["--out", str(tmp_path / "o")]) == 0, capsys.readouterr()
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["status"] == "FEASIBLE" and report["report"]["passed"]
    assert report["provenance"]["params"]["targets"] == "union"
    assert main(args + ["--exact", "--out", str(tmp_path / "e")]) == 2
    assert "--targets chooses the greedy method's" in capsys.readouterr().err
