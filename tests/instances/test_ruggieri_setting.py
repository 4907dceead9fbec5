"""The setting of Ruggieri's experiments (§6, Table 1): the PND attributes, the binary PD
attribute and the numbers of Table 1 recomputed from the data."""

import os
from fractions import Fraction

import pytest

import fairanon as fa
from fairanon.exceptions import InvalidParameterError
from fairanon.instances.datasets import RUGGIERI_PND, RUGGIERI_TABLE1
from fairanon.models.describe import describe

CENSUS = os.path.join(os.environ.get("FAIRANON_DATA", os.path.join(os.path.dirname(__file__), "..", "..", "..", "shared", "datasets")))


def _table1_row(inst):
    d = describe(inst)["discrimination"]
    p_minus, tau = Fraction(d["p_minus"]), Fraction(d["tau"])
    return inst.n_rows, round(float(p_minus), 3), round(float(tau), 3), round(float(max(p_minus, 1 - p_minus)), 3)


@pytest.mark.parametrize("data", ["german", "adult"])
def test_table1_rows_are_reproduced(data):
    inst = fa.load("ruggieri", data=data)
    paper = RUGGIERI_TABLE1[data]
    assert _table1_row(inst) == (paper["tuples"], paper["p_minus"], paper["tau"], paper["t_max"])
    assert inst.schema.generalizable == RUGGIERI_PND[data]
    pd_attr = inst.schema[inst.schema.protected]
    assert len(pd_attr.domain) == 2 and len(pd_attr.protected) == 1  # binary PD (§2)


def test_german_example_21_counts():
    """Ex. 21: 109 of the 310 not-single women and 191 of the 690 others have bad credit."""
    d = describe(fa.load("ruggieri", data="german"))["discrimination"]
    assert d["a,b,c,d"] == [109, 201, 191, 499]
    assert Fraction(d["tau"]) == Fraction(109, 310) - Fraction(3, 10) == Fraction(8, 155)


@pytest.mark.slow
@pytest.mark.skipif(
    not os.path.exists(os.path.join(CENSUS, "census_income_train.csv.gz")), reason="Census-Income not present"
)
def test_census_table1_row():
    inst = fa.load(
        "ruggieri",
        data="census",
        path=os.path.join(CENSUS, "census_income_train.csv.gz"),
        path_test=os.path.join(CENSUS, "census_income_test.csv.gz"),
    )
    paper = RUGGIERI_TABLE1["census"]
    assert _table1_row(inst) == (paper["tuples"], paper["p_minus"], paper["tau"], paper["t_max"])


def test_drop_and_bad_options():
    inst = fa.load("ruggieri", data="german", drop=["credit_amount"])
    assert "credit_amount" not in inst.schema.qi and len(inst.schema.generalizable) == 6
    with pytest.raises(InvalidParameterError, match="not PND attributes"):
        fa.load("ruggieri", data="german", drop=["age"])
    with pytest.raises(InvalidParameterError, match="'data' parameter of load_ruggieri"):
        fa.load("ruggieri", data="compas")
    with pytest.raises(InvalidParameterError, match="takes no path"):
        fa.load("ruggieri", data="adult", path="x.csv")
