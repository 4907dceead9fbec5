"""The synthetic population generator: sizes, schema, determinism, distributions."""

import numpy as np
import pandas as pd
import pytest

from fairanon.exceptions import InvalidParameterError
from fairanon.instances import label_covers
from fairanon.instances.synthetic import DISTRIBUTIONS, QI_POOL, population


@pytest.mark.parametrize("n_rows", [1, 10, 1000])
def test_sizes(n_rows):
    inst = population(n_rows, seed=0)
    assert inst.n_rows == n_rows
    assert list(inst.row_ids) == list(range(n_rows))


@pytest.mark.parametrize("n_qi", range(1, len(QI_POOL) + 1))
def test_columns_and_roles(n_qi):
    inst = population(50, n_qi=n_qi, seed=1)
    assert inst.schema.generalizable == QI_POOL[:n_qi]
    assert inst.schema.qi == QI_POOL[:n_qi] + ("race",)
    assert inst.schema.protected == "race" and inst.schema["race"].protected == (
        "Black",
        "Asian",
        "Native",
        "Other",
    )
    assert inst.schema.sensitive == ("disease",)
    assert inst.schema.decision == "decision" and inst.schema["decision"].negative == "denied"
    assert list(inst.table.columns) == list(QI_POOL[:n_qi]) + ["race", "disease", "decision"]


def test_types_and_hierarchies():
    inst = population(2000, n_qi=7, seed=2)
    schema, table = inst.schema, inst.table
    assert schema["age"].kind == "numeric" and schema["hours"].kind == "numeric"
    assert table["age"].between(17, 90).all() and table["hours"].between(1, 99).all()
    assert schema["education"].kind == "ordered" and len(schema["education"].order) == 8
    zips = schema["zip"].hierarchy
    assert len(zips.leaves) == 1000 and zips.leaves[0] == "10000"
    assert zips.ancestors("10123") == ["10123", "1012*", "101**", "10***", "*"]
    assert schema["disease"].hierarchy.lca(["flu", "pneumonia"]) == "respiratory"
    for name in inst.schema.qi + ("disease", "decision"):
        if schema[name].kind != "numeric":
            assert isinstance(table[name].dtype, pd.CategoricalDtype)
            assert table[name].cat.codes.dtype.itemsize <= 2
    # every value is its own label: the schema and the data agree
    for name in ("zip", "education", "marital", "occupation"):
        labels = list(schema[name].domain)
        assert label_covers(schema[name], labels).mask.diagonal().all()


def test_same_seed_same_table():
    a = population(3000, n_qi=7, distribution="gaussian", seed=42)
    b = population(3000, n_qi=7, distribution="gaussian", seed=42)
    pd.testing.assert_frame_equal(a.table, b.table)
    assert a.name == b.name
    c = population(3000, n_qi=7, distribution="gaussian", seed=43)
    assert not a.table.equals(c.table)


def test_generator_seed():
    a = population(500, seed=np.random.default_rng(7))
    b = population(500, seed=np.random.default_rng(7))
    pd.testing.assert_frame_equal(a.table, b.table)
    assert "Generator" in a.name


def test_columns_do_not_depend_on_n_qi_and_tables_are_prefixes():
    small = population(400, n_qi=2, seed=5)
    large = population(1000, n_qi=6, seed=5)
    for col in ("age", "zip", "race", "disease"):
        assert small.table[col].tolist() == large.table[col].iloc[:400].tolist(), col


def share_of_top_value(inst, col):
    return inst.table[col].value_counts(normalize=True).iloc[0]


def test_distributions_differ():
    n = 20000
    tables = {d: population(n, n_qi=6, distribution=d, seed=3) for d in DISTRIBUTIONS}
    for col in ("zip", "education", "occupation", "disease"):
        shares = {d: share_of_top_value(t, col) for d, t in tables.items()}
        assert shares["zipf"] > shares["gaussian"] > shares["uniform"], col
    # uniform: every zip code about equally likely; zipf: rank 1 takes 1/H(1000) ~ 13%
    uniform_zip = tables["uniform"].table["zip"].value_counts()
    assert len(uniform_zip) == 1000 and uniform_zip.max() < 60
    assert 0.11 < share_of_top_value(tables["zipf"], "zip") < 0.15
    # gaussian education peaks in the middle of the order
    edu = tables["gaussian"].codes("education")
    assert abs(edu.mean() - 3.5) < 0.1
    assert np.bincount(edu)[[3, 4]].sum() > np.bincount(edu)[[0, 7]].sum() * 5
    # zipf puts the first value of an ordered domain first
    assert tables["zipf"].table["education"].value_counts().index[0] == "none"
    ages = {d: t.table["age"] for d, t in tables.items()}
    assert ages["zipf"].median() < ages["gaussian"].median()
    assert abs(ages["uniform"].mean() - 53.5) < 1


def test_zipf_exponent_steepens():
    flat = population(20000, n_qi=4, seed=9, zipf_exponent=0.5)
    steep = population(20000, n_qi=4, seed=9, zipf_exponent=2)
    assert share_of_top_value(steep, "education") > share_of_top_value(flat, "education")


def test_protected_share_and_bias():
    inst = population(
        200000,
        n_qi=3,
        distribution="uniform",
        seed=11,
        protected_share=0.4,
        negative_rate=0.3,
        bias=0.2,
    )
    protected, negative = inst.protected_mask(), inst.negative_mask()
    assert abs(protected.mean() - 0.4) < 0.01
    assert abs(negative[protected].mean() - negative[~protected].mean() - 0.2) < 0.01
    assert abs(negative.mean() - 0.3) < 0.01
    unbiased = population(200000, n_qi=3, seed=11, bias=0)
    p, n = unbiased.protected_mask(), unbiased.negative_mask()
    assert abs(n[p].mean() - n[~p].mean()) < 0.01
    nobody = population(1000, seed=0, protected_share=0)
    assert not nobody.protected_mask().any()


def test_education_lowers_denials():
    inst = population(100000, n_qi=4, distribution="uniform", seed=12, bias=0)
    edu, negative = inst.codes("education"), inst.negative_mask()
    assert negative[edu == 0].mean() > negative[edu == 7].mean() + 0.15


def test_small_zip_domain():
    inst = population(100, n_qi=2, seed=0, n_zip=3)
    assert inst.schema["zip"].hierarchy.leaves == ("10000", "10001", "10002")
    assert set(inst.table["zip"]) <= {"10000", "10001", "10002"}


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"n_rows": 0}, "'n_rows' parameter of population"),
        ({"n_rows": 2.5}, "'n_rows' parameter"),
        ({"n_qi": 0}, "'n_qi' parameter"),
        ({"n_qi": 8}, r"'n_qi' parameter of population must be an int in \[1, 7\]"),
        ({"distribution": "poisson"}, "'distribution' parameter .* 'gaussian', 'uniform', 'zipf'"),
        ({"zipf_exponent": 0}, "'zipf_exponent' parameter"),
        ({"n_zip": 0}, "'n_zip' parameter"),
        ({"n_zip": 90001}, "'n_zip' parameter"),
        ({"protected_share": 1.5}, "'protected_share' parameter"),
        ({"negative_rate": -0.1}, "'negative_rate' parameter"),
        ({"bias": "much"}, "'bias' parameter"),
        ({"seed": "zero"}, "'seed' parameter"),
    ],
)
def test_bad_input(kwargs, match):
    kwargs = {"n_rows": 10, **kwargs}
    with pytest.raises(InvalidParameterError, match=match):
        population(**kwargs)


@pytest.mark.slow
def test_one_million_rows():
    inst = population(1_000_000, n_qi=7, seed=0)
    assert inst.n_rows == 1_000_000
    assert inst.table.memory_usage(deep=True).sum() < 40_000_000
    assert abs(inst.protected_mask().mean() - 0.3) < 0.005
