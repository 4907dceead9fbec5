"""Bundled data sets, paper examples and the Census-Income reader.

Known facts come from the papers and docs/papers.md (Ruggieri, R-1: German, Adult, Census) and
are recomputed here with exact fractions from the instances' masks.
"""

import gzip
import hashlib
import os
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fairanon.exceptions import InvalidParameterError, SchemaError
from fairanon.instances import datasets as ds
from fairanon.instances import label_covers
from fairanon.instances.datasets import load
from fairanon.models.diversity import diva_sigma
from fairanon.models.requirements import DiversityConstraint
from fairanon.release import Release

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("FAIRANON_DATA") or REPO.parent / "shared" / "datasets")
DATA = REPO / "fairanon" / "instances" / "data"


@pytest.fixture(scope="module")
def shared():
    """The folder with the original UCI files; tests that need it skip without it."""
    if not SHARED.is_dir():
        pytest.skip(f"{SHARED} is absent")
    return SHARED


@pytest.fixture(scope="module")
def adult():
    return load("adult")


@pytest.fixture(scope="module")
def adult_full():
    return load("adult_full")


@pytest.fixture(scope="module")
def german():
    return load("german")


def contingency(inst):
    """(a, b, c, d) = (protected & negative, protected & positive, unprotected & negative,
    unprotected & positive), as in Ruggieri's Fig. 1."""
    p, n = inst.protected_mask(), inst.negative_mask()
    return int((p & n).sum()), int((p & ~n).sum()), int((~p & n).sum()), int((~p & ~n).sum())


def p_minus_and_tau(a, b, c, d):
    p_minus = Fraction(a + c, a + b + c + d)
    tau = max(abs(Fraction(a, a + b) - p_minus), abs(Fraction(c, c + d) - p_minus))
    return p_minus, tau


def release_of(table, qi):
    """A Release of a released table, one group per distinct QI tuple."""
    groups = table.groupby(list(qi), sort=False).ngroup().to_numpy()
    return Release(table=table, groups=groups)


def assert_labels_cover(inst, table):
    """Every released QI cell is a label covering the record's original value."""
    for name in inst.schema.qi:
        attr = inst.schema[name]
        labels = pd.Categorical(table.loc[inst.row_ids, name].astype(str))
        covers = label_covers(attr, list(labels.categories))
        assert covers.contains(labels.codes.astype(int), inst.codes(name)).all(), name


# ---------------------------------------------------------------------------- the name table


def test_dataset_names():
    assert sorted(ds.DATASETS) == [
        "adult",
        "adult_full",
        "census",
        "dewri_t1",
        "diva_table1",
        "german",
        "ruggieri",
        "ruggieri_loan",
    ]


def test_unknown_name_lists_sorted_names():
    with pytest.raises(InvalidParameterError) as err:
        load("adults")
    message = str(err.value)
    assert "'name' parameter of load" in message and "Got 'adults' instead" in message
    assert (
        "'adult', 'adult_full', 'census', 'dewri_t1', 'diva_table1', 'german', 'ruggieri', "
        "'ruggieri_loan'" in message
    )
    with pytest.raises(InvalidParameterError, match="'name' parameter of load"):
        load(["adult"])


def test_bad_option():
    with pytest.raises(InvalidParameterError, match="load\\('german'\\) got a bad option"):
        load("german", variant="full")
    with pytest.raises(InvalidParameterError, match="'variant' parameter of adult_table"):
        load("adult", variant="partial")


def test_census_needs_a_path(monkeypatch):
    monkeypatch.delenv("FAIRANON_DATA", raising=False)
    with pytest.raises(InvalidParameterError, match="not bundled.*path=.*FAIRANON_DATA"):
        load("census")
    monkeypatch.setenv("FAIRANON_DATA", "/nonexistent")
    with pytest.raises(InvalidParameterError, match="not bundled"):
        load("census")
    with pytest.raises(InvalidParameterError, match="'rows' option"):
        load("census", rows=0)
    with pytest.raises(InvalidParameterError, match="does not exist"):
        load("census", path="/nonexistent/census-income.data.gz")


# ---------------------------------------------------------------------------- Adult


def test_adult_default(adult):
    assert adult.n_rows == 30162
    assert adult.name == "adult"
    assert adult.schema.qi == (
        "age",
        "workclass",
        "education",
        "marital-status",
        "occupation",
        "race",
        "sex",
        "native-country",
    )
    assert adult.schema.protected == "race" and adult.schema.decision == "income"
    assert adult.schema["race"].protected == (
        "Black",
        "Asian-Pac-Islander",
        "Amer-Indian-Eskimo",
        "Other",
    )
    assert adult.schema["income"].order == ("<=50K", ">50K")
    assert adult.schema["income"].negative == "<=50K"
    assert adult.schema["age"].kind == "numeric" and adult.schema["age"].intervals.widths == (
        5.0,
        10.0,
        20.0,
    )
    ignored = [
        "fnlwgt",
        "education-num",
        "relationship",
        "capital-gain",
        "capital-loss",
        "hours-per-week",
    ]
    assert sorted(adult.extra.columns) == sorted(ignored)
    assert all(adult.schema[c].role == "ignore" for c in ignored)
    # no '?' anywhere, and record ids are positions in adult.data
    for col in adult.table.columns:
        if isinstance(adult.table[col].dtype, pd.CategoricalDtype):
            assert "?" not in set(adult.table[col].astype(str))
    assert adult.row_ids[0] == 0 and adult.row_ids[-1] == 32560
    assert adult.row_ids.is_monotonic_increasing


def test_adult_education_order_is_education_num(adult):
    order = adult.schema["education"].order
    rank = pd.Series(adult.codes("education") + 1, index=adult.row_ids)
    assert (rank == adult.extra["education-num"]).all()
    assert order[0] == "Preschool" and order[-1] == "Doctorate"
    # every hierarchy node is a contiguous range of the order
    tree = adult.schema["education"].hierarchy
    assert set(tree.leaves) == set(order)
    for node in tree.nodes:
        idx = np.flatnonzero([tree.covers(node, v) for v in order])
        assert idx.tolist() == list(range(idx[0], idx[-1] + 1)), node


def test_adult_hierarchies_have_even_depth(adult, adult_full):
    for inst in (adult, adult_full):
        for name in ("workclass", "education", "marital-status", "occupation", "native-country"):
            tree = inst.schema[name].hierarchy
            assert {tree.depth[leaf] for leaf in tree.leaves} == {tree.height}, name
    assert adult.schema["native-country"].hierarchy.height == 3
    assert adult.schema["occupation"].hierarchy.lca(["Sales", "Tech-support"]) == "White-collar"


def test_adult_full(adult_full):
    inst = adult_full
    assert inst.n_rows == 48842
    assert inst.name == "adult_full"
    assert list(inst.row_ids[[0, -1]]) == [0, 48841]
    assert inst.schema["income"].domain == ("<=50K", ">50K")  # test labels lost their '.'
    for name in ("workclass", "occupation", "native-country"):
        tree = inst.schema[name].hierarchy
        assert "?" in tree.leaves, name
        assert (inst.table[name] == "?").any(), name
    counts = {
        name: int((inst.table[name] == "?").sum())
        for name in ("workclass", "occupation", "native-country")
    }
    assert counts == {"workclass": 2799, "occupation": 2809, "native-country": 857}


def test_adult_full_via_variant_equals_name(adult_full):
    other = ds.load_adult(variant="full")
    assert other.schema == adult_full.schema
    for col in adult_full.table.columns:
        assert np.array_equal(other.codes(col), adult_full.codes(col)), col


def test_adult_full_facts(adult_full):
    """Ruggieri's Table 1 for Adult: race non-white protected, <=50K negative."""
    a, b, c, d = contingency(adult_full)
    assert (a, b, c, d) == (6000, 1080, 31155, 10607)
    p_minus, tau = p_minus_and_tau(a, b, c, d)
    assert round(float(p_minus), 3) == 0.761
    assert round(float(tau), 4) == 0.0867


def test_adult_qi_and_roles_overrides():
    inst = ds.load_adult(
        qi=["age", "sex", "relationship"], roles={"race": "qi", "income": "sensitive"}
    )
    assert inst.schema.qi == ("age", "relationship", "race", "sex")
    assert inst.schema.protected is None and inst.schema.decision is None
    assert inst.schema.sensitive == ("income",)
    assert inst.schema["workclass"].role == "ignore"
    with pytest.raises(InvalidParameterError, match="unknown column"):
        ds.load_adult(qi=["age", "salary"])
    with pytest.raises(InvalidParameterError, match="list of column names"):
        ds.load_adult(qi="age")
    with pytest.raises(InvalidParameterError, match="unknown column 'salary'"):
        ds.load_adult(roles={"salary": "qi"})
    with pytest.raises(InvalidParameterError, match="Got 'secret' for 'race'"):
        ds.load_adult(roles={"race": "secret"})


def test_adult_table_variants():
    full = ds.adult_table("full")
    complete = ds.adult_table()
    assert full.shape == (48842, 15) and complete.shape == (30162, 15)
    assert list(full.columns) == list(ds.ADULT_COLUMNS)
    # the complete rows are the rows of the training part without '?', same ids
    pd.testing.assert_frame_equal(
        complete.astype(str), full.loc[complete.index].astype(str), check_dtype=False
    )
    assert set(full["income"].astype(str)) == {"<=50K", ">50K"}


# ---------------------------------------------------------------------------- German credit


def test_german_default(german):
    assert german.n_rows == 1000
    assert german.schema.qi == (
        "credit_history",
        "purpose",
        "savings",
        "employment",
        "personal_status",
        "age",
        "housing",
        "job",
    )
    assert german.schema.protected == "personal_status"
    assert german.schema["personal_status"].protected == ("female div/sep/married",)
    assert german.schema.decision == "credit" and german.schema["credit"].negative == "bad"
    assert german.schema["job"].kind == "ordered" and german.schema["employment"].kind == "ordered"
    assert german.schema["age"].kind == "numeric"


def test_german_facts(german):
    """Ruggieri Ex. 21: female non-single (A92) protected, bad negative."""
    a, b, c, d = contingency(german)
    assert (a, b, c, d) == (109, 201, 191, 499)
    p_minus, tau = p_minus_and_tau(a, b, c, d)
    assert p_minus == Fraction(3, 10)
    assert tau == abs(Fraction(109, 310) - Fraction(3, 10))
    assert round(float(tau), 4) == 0.0516


def test_german_ruggieri_qi():
    inst = load("german", qi="ruggieri")
    assert set(inst.schema.generalizable) == {
        "credit_history",
        "purpose",
        "credit_amount",
        "employment",
        "other_payment_plans",
        "housing",
        "existing_credits",
    }
    assert inst.schema["credit_amount"].kind == "numeric"
    with pytest.raises(InvalidParameterError, match="'default', 'ruggieri' or a list"):
        load("german", qi="paper")


def test_german_sex_as_in_the_diva_repository():
    inst = load("german", roles={"sex": "qi", "personal_status": "ignore"})
    assert "sex" in inst.schema.qi and inst.schema.protected is None
    assert inst.table["sex"].value_counts().to_dict() == {"male": 690, "female": 310}
    assert "sex" not in load("german").schema.qi


def test_german_table_decoding():
    decoded = ds.german_table()
    raw = ds.german_table(decode=False)
    assert decoded.shape == raw.shape == (1000, 21)
    assert list(decoded.columns) == list(ds.GERMAN_COLUMNS)
    for col, codebook in ds.GERMAN_CODEBOOK.items():
        mapped = raw[col].astype(str).map(codebook)
        assert (mapped == decoded[col].astype(str)).all(), col
    assert (raw["personal_status"] == "A92").sum() == 310
    assert (decoded["credit"] == "bad").sum() == 300
    assert decoded.loc[0, "job"] == "skilled" and decoded.loc[1, "savings"] == "< 100 DM"
    assert (decoded["personal_status"] == "female single").sum() == 0  # A95: absent from the data
    assert decoded["age"].dtype == np.int64


# ---------------------------------------------------------------------------- bundled copies


def test_bundled_files_are_small():
    assert (DATA / "adult.data.gz").stat().st_size + (
        DATA / "adult.test.gz"
    ).stat().st_size < 2_000_000
    assert (DATA / "README.md").is_file()


@pytest.mark.parametrize("filename", ["adult.data", "adult.test", "german.data"])
def test_bundled_copy_equals_original(shared, filename):
    bundled = gzip.decompress((DATA / f"{filename}.gz").read_bytes())
    original = (shared / filename).read_bytes()
    assert hashlib.md5(bundled).hexdigest() == hashlib.md5(original).hexdigest()


# ---------------------------------------------------------------------------- Census-Income (KDD)


@pytest.fixture(scope="module")
def census(shared):
    return ds.load_census(
        shared / "census_income_train.csv.gz", shared / "census_income_test.csv.gz"
    )


@pytest.mark.slow
def test_census_facts(census):
    assert census.n_rows == 199523 + 99762
    assert len(census.schema.qi) == 13  # 12 PND attributes + race
    assert census.schema["education"].kind == "ordered"
    a, b, c, d = contingency(census)
    assert (a, b, c, d) == (46660, 1647, 234057, 16921)
    p_minus, tau = p_minus_and_tau(a, b, c, d)
    assert round(float(p_minus), 3) == 0.938
    assert round(float(tau), 4) == 0.0279
    # blanks around values are gone
    assert "Handlers equip cleaners etc" in census.schema["major occupation code"].domain


def test_census_by_name(shared):
    inst = load(
        "census", path=shared / "census_income_test.csv.gz", qi=["age", "sex"], name="census_test"
    )
    assert inst.n_rows == 99762 and inst.name == "census_test"
    assert inst.schema.generalizable == ("age", "sex")


@pytest.mark.slow
def test_census_sample_from_the_data_folder(shared, census, monkeypatch):
    """FAIRANON_DATA names the folder; rows and seed draw a seeded sample, in table order."""
    monkeypatch.setenv("FAIRANON_DATA", str(shared))
    inst = load("census", rows=5000, seed=3)
    keep = np.sort(np.random.default_rng(3).permutation(census.n_rows)[:5000])
    assert inst.n_rows == 5000 and inst.name == "census[5000]"
    assert list(inst.row_ids) == list(census.row_ids[keep])


# ---------------------------------------------------------------------------- DIVA


def test_diva_table1():
    inst = load("diva_table1")
    assert list(inst.row_ids) == list(range(1, 11))
    assert inst.schema.qi == ("GEN", "ETH", "AGE", "PRV", "CTY")
    assert inst.schema.sensitive == ("DIAG",)
    assert inst.schema["AGE"].kind == "numeric"
    t = inst.table
    assert t.loc[1].tolist() == ["Female", "Caucasian", 80, "AB", "Calgary", "Hypertension"]
    assert t.loc[10].tolist() == ["Female", "Asian", 71, "BC", "Vancouver", "Migraine"]
    assert (t["ETH"] == "Asian").sum() == 3 and (t["ETH"] == "African").sum() == 2
    assert (t["CTY"] == "Vancouver").sum() == 4


def test_diva_sigma():
    sigma = diva_sigma()
    assert sigma == [
        DiversityConstraint({"ETH": "Asian"}, 2, 5),
        DiversityConstraint({"ETH": "African"}, 1, 3),
        DiversityConstraint({"CTY": "Vancouver"}, 2, 4),
    ]


@pytest.mark.parametrize(
    "make, k, stars, groups",
    [
        (ds.diva_table2, 3, 31, [{1, 2, 3}, {4, 5, 6, 7}, {8, 9, 10}]),
        (ds.diva_table3, 2, 26, [{1, 2}, {3, 4}, {5, 6}, {7, 8}, {9, 10}]),
    ],
    ids=["table2", "table3"],
)
def test_diva_releases(make, k, stars, groups):
    inst = load("diva_table1")
    table = make()
    assert list(table.columns) == list(inst.table.columns)
    assert list(table.index) == list(inst.row_ids)
    assert int((table == "*").to_numpy().sum()) == stars
    assert (table["DIAG"] == inst.table["DIAG"]).all()
    rel = release_of(table, inst.schema.qi)
    assert rel.n_rows == 10 and rel.n_groups == len(groups)
    found = [set(table.index[rel.groups == g]) for g in np.unique(rel.groups)]
    assert sorted(found, key=min) == groups
    assert min(len(g) for g in found) == k
    assert_labels_cover(inst, table)


def test_diva_table3_satisfies_sigma():
    table = ds.diva_table3()
    for sigma in diva_sigma():
        ((attr, value),) = sigma.target
        count = int((table[attr] == value).sum())
        assert count == 2
        assert sigma.lower <= count <= sigma.upper
    # Table 2 loses every African: it violates sigma2
    assert int((ds.diva_table2()["ETH"] == "African").sum()) == 0


# ---------------------------------------------------------------------------- Ruggieri's loan table


def test_ruggieri_loan():
    inst = load("ruggieri_loan")
    assert list(inst.row_ids) == list(range(1, 18))
    assert inst.schema.qi == ("purpose", "emp", "sex")
    assert inst.schema.generalizable == ("purpose", "emp")
    assert inst.table.loc[13].tolist() == ["car", "no", "female", "+"]
    a, b, c, d = contingency(inst)
    assert (a, b, c, d) == (4, 4, 4, 5)
    p_minus, tau = p_minus_and_tau(a, b, c, d)
    assert p_minus == Fraction(8, 17) and tau == Fraction(1, 34)
    assert inst.schema["purpose"].hierarchy.lca(["housing", "car"]) == "housing-car"


def test_ruggieri_fig3_release():
    inst = load("ruggieri_loan")
    table = ds.ruggieri_fig3_release_table()
    assert list(table.index) == list(range(1, 18))
    assert (table["purpose"] == "housing-car").all()
    assert int((table != inst.table.astype(str)).to_numpy().sum()) == 17  # 17 generalized cells
    for col in ("emp", "sex", "decision"):
        assert (table[col] == inst.table[col].astype(str)).all()
    rel = release_of(table, ["purpose", "emp"])
    assert rel.n_groups == 2
    classes = sorted((set(table.index[rel.groups == g]) for g in range(2)), key=min)
    assert classes == [{1, 2, 3, 4, 5, 13, 14, 15}, {6, 7, 8, 9, 10, 11, 12, 16, 17}]
    assert_labels_cover(inst, table)


# ---------------------------------------------------------------------------- Dewri et al.'s T1


def test_dewri_t1():
    inst = load("dewri_t1")
    assert list(inst.row_ids) == list(range(1, 11))
    assert inst.schema.qi == ("Zip", "Age", "Marital status")
    assert inst.schema.sensitive == ("Marital",)
    assert (inst.table["Marital"].astype(str) == inst.table["Marital status"].astype(str)).all()
    assert inst.table["Age"].tolist() == [28, 41, 39, 26, 50, 55, 49, 31, 42, 47]
    assert inst.table.loc[9, "Zip"] == "13269"
    zip_tree = inst.schema["Zip"].hierarchy
    assert zip_tree.ancestors("13053") == ["13053", "1305*", "130**", "13***", "*"]
    assert inst.schema["Marital status"].hierarchy.lca(["Separated", "Divorced"]) == "Not Married"


@pytest.mark.parametrize(
    "name, sizes",
    [
        ("T3a", (3, 3, 3, 3, 4, 4, 4, 3, 3, 4)),
        ("T3b", (3, 7, 7, 3, 7, 7, 7, 3, 7, 7)),
        ("T4", (4, 6, 4, 4, 6, 6, 6, 4, 6, 6)),
    ],
)
def test_dewri_releases(name, sizes):
    """Class sizes per tuple (PV-size of Dewri et al.) and label coverage."""
    inst = load("dewri_t1")
    table = ds.dewri_releases()[name]
    assert list(table.index) == list(range(1, 11))
    assert list(table.columns) == list(inst.table.columns)
    rel = release_of(table, inst.schema.qi)
    per_tuple = pd.Series(rel.groups).map(pd.Series(rel.groups).value_counts())
    assert tuple(per_tuple) == sizes
    assert_labels_cover(inst, table)


def test_dewri_release_labels():
    rel = ds.dewri_releases()
    assert rel["T3a"].loc[5].tolist() == ["1325*", "(45-55]", "Not Married", "Divorced"]
    assert rel["T3b"].loc[8].tolist() == ["130**", "(15-35]", "Married", "Spouse Present"]
    assert rel["T4"].loc[3].tolist() == ["13***", "(20-40]", "*", "Never Married"]
    assert set(rel["T4"]["Age"]) == {"(20-40]", "(40-60]"}


# ---------------------------------------------------------------------------- digit_hierarchy


def test_digit_hierarchy():
    h = ds.digit_hierarchy(["1234", "1299", "1300"], n_masked=3)
    assert h.ancestors("1234") == ["1234", "123*", "12**", "1***", "*"]
    assert h.lca(["1234", "1299"]) == "12**"
    assert h.lca(["1234", "1300"]) == "1***"
    assert ds.digit_hierarchy([7, 8], n_masked=0).ancestors("7") == ["7", "*"]
    with pytest.raises(InvalidParameterError, match="one length"):
        ds.digit_hierarchy(["123", "12"])
    with pytest.raises(InvalidParameterError, match="must not be empty"):
        ds.digit_hierarchy([])
    with pytest.raises(InvalidParameterError, match=r"'n_masked' parameter .* \[0, 2\]"):
        ds.digit_hierarchy(["123"], n_masked=3)


def test_schema_error_is_not_swallowed():
    """A role override that breaks the schema surfaces as the schema's own error."""
    with pytest.raises(SchemaError, match="names no negative value"):
        ds.load_adult(roles={"sex": "decision"})
