"""benchmarks/suites/paper.yaml runs Ruggieri's experiments in the paper's setting: the
PND attributes as the quasi-identifiers, a binary PD attribute, α-protection w.r.t. RD at
bd_RD(t) for dMondrian and dSabre; the low end of Table 1's t ranges is feasible."""

import os
from fractions import Fraction
from pathlib import Path

import pytest
import yaml

import fairanon as fa
from fairanon.heuristics.dmondrian import dmondrian
from fairanon.heuristics.dsabre import dsabre
from fairanon.instances.datasets import RUGGIERI_PND, RUGGIERI_TABLE1
from fairanon.models import measures as M
from fairanon.models.requirements import requirement_from_spec
from fairanon.release import Status

SUITE = Path(__file__).resolve().parents[2] / "benchmarks" / "suites" / "paper.yaml"


def _ruggieri_experiments():
    doc = yaml.safe_load(SUITE.read_text(encoding="utf-8"))
    return [e for e in doc["experiments"] if any(i.get("dataset") == "ruggieri" for i in e["instances"])]


def _census_present() -> bool:
    folder = os.environ.get("FAIRANON_DATA")
    return bool(folder) and all(
        os.path.exists(os.path.join(folder, f"census_income_{part}.csv.gz")) for part in ("train", "test")
    )


def test_every_data_set_of_table1_is_in_the_suite():
    data = {e["instances"][0]["options"]["data"] for e in _ruggieri_experiments()}
    assert data == set(RUGGIERI_TABLE1) == {"german", "adult", "census"}


@pytest.mark.parametrize(
    "data",
    [
        "german",
        "adult",
        pytest.param(
            "census",
            marks=[
                pytest.mark.slow,  # reads 299,285 rows
                pytest.mark.skipif(not _census_present(), reason="Census-Income not in $FAIRANON_DATA"),
            ],
        ),
    ],
)
def test_the_suite_runs_ruggieri_in_the_papers_setting(data):
    experiments = [e for e in _ruggieri_experiments() if e["instances"][0]["options"]["data"] == data]
    assert {frozenset(a["method"] for a in e["algorithms"]) for e in experiments} == {
        frozenset({"dmondrian", "dsabre"}),
        frozenset({"sabre"}),
    }
    inst = fa.load("ruggieri", **experiments[0]["instances"][0]["options"])
    assert inst.schema.generalizable == RUGGIERI_PND[data]
    assert len(inst.schema[inst.schema.protected].domain) == 2  # binary PD groups
    p_minus = Fraction(int(inst.negative_mask().sum()), inst.n_rows)
    ts = {"alpha": [], "sabre": []}
    for exp in experiments:
        ((spec,),) = [exp["instances"]]
        assert spec == experiments[0]["instances"][0]
        methods = {a["method"] for a in exp["algorithms"]}
        for reqset in exp["requirements"]:
            if methods == {"dmondrian", "dsabre"}:
                ((alpha,),) = [[requirement_from_spec(r) for r in reqset["set"]]]
                t = Fraction(str(reqset["columns"]["sweep_x"]))
                assert isinstance(alpha, fa.AlphaProtection) and alpha.measure == "RD"
                assert alpha.alpha == M.bound("RD", t, p_minus)  # bd_RD(t), exactly
                assert M.t_alpha("RD", alpha.alpha, p_minus) == min(t, M.t_max(p_minus))
                ts["alpha"].append(t)
            else:  # Sabre: t-closeness of the decision = Ruggieri's τ <= t with a binary PD
                (req,) = reqset["set"]
                assert req["t_closeness"]["attribute"] == inst.schema.decision
                ts["sabre"] += [Fraction(str(t)) for t in req["t_closeness"]["t"]]
    assert ts["alpha"] == ts["sabre"] == sorted(ts["sabre"])  # the same grid for the three methods
    assert ts["alpha"][0] == Fraction(str(RUGGIERI_TABLE1[data]["tau"]))  # Table 1's t min
    assert ts["alpha"][-1] == Fraction(str(RUGGIERI_TABLE1[data]["t_max"]))  # and t max


@pytest.mark.parametrize("data", ["german", "adult"])
def test_the_low_end_of_the_t_range_is_feasible(data):
    """With one PD group per value of German credit's personal status, the τ floor was
    1/10 and t = 0.06 INFEASIBLE; with the binary PD attribute it is τ(R) = 8/155."""
    (exp,) = [e for e in _ruggieri_experiments() if e["instances"][0]["options"]["data"] == data
              and {a["method"] for a in e["algorithms"]} == {"dmondrian", "dsabre"}]
    inst = fa.load("ruggieri", **exp["instances"][0]["options"])
    first = exp["requirements"][0]
    reqs = [requirement_from_spec(r) for r in first["set"]]
    for release in (dmondrian(inst, reqs), dsabre(inst, reqs, seed=0)):
        assert release.status == Status.FEASIBLE
        assert release.provenance["t"] == Fraction(str(first["columns"]["sweep_x"]))
        report = fa.verify(inst, release, reqs, metrics=False)
        assert report.passed, str(report)
