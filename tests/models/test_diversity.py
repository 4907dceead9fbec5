"""Diversity constraints on an instance: target records, visibility, conflict rates, the
DIVA authors' list format and the three generator families (docs/papers.md, DV-7 and DV-9)."""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fairanon as fa
from fairanon.exceptions import IncompatibleRequirementError, InvalidParameterError, SchemaError
from fairanon.instances.datasets import diva_table3
from fairanon.models.diversity import (
    average,
    conflict_rate,
    diva_sigma,
    encode_constraints,
    minimum_frequency,
    pair_conflict_rate,
    parse_constraints,
    proportional,
    target_mask,
    visible_rows,
)
from fairanon.release import Release

PROPERTY = settings(deadline=None, max_examples=40)


@pytest.fixture(scope="module")
def table1():
    return fa.load("diva_table1")


# ------------------------------------------------------------------ reading
def test_target_records_of_example_3_3(table1):
    """I_sigma1 = {t8, t9, t10}, I_sigma2 = {t5, t6}, I_sigma3 = {t6, t7, t8, t10}."""
    encoded = encode_constraints(table1, diva_sigma())
    assert [table1.row_ids[e.target].tolist() for e in encoded] == [[8, 9, 10], [5, 6], [6, 7, 8, 10]]
    assert [e.attributes for e in encoded] == [("ETH",), ("ETH",), ("CTY",)]
    assert not any(e.fixed for e in encoded)


def test_attributes_released_unchanged_only_filter(table1):
    """DIAG is sensitive: it is never suppressed, so it filters I but not G."""
    sigma = fa.DiversityConstraint({"GEN": "Female", "DIAG": "Seizure"}, 1, 2)
    (e,) = encode_constraints(table1, [sigma])
    assert e.attributes == ("GEN",)
    assert table1.row_ids[e.target].tolist() == [8]
    assert table1.row_ids[e.match].tolist() == [1, 2, 8, 9, 10]
    (fixed,) = encode_constraints(table1, [fa.DiversityConstraint({"DIAG": "Seizure"}, 0, 5)])
    assert fixed.fixed and fixed.n_targets == 2


def test_visible_rows_match_the_verifier_on_table_3(table1):
    groups = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 4])
    release = Release(diva_table3(), groups)
    report = fa.verify(table1, release, diva_sigma())
    for e in encode_constraints(table1, diva_sigma()):
        assert int(visible_rows(table1, e, groups).sum()) == report[str(e.requirement)].achieved == 2


def test_visible_rows_with_extra_stars(table1):
    (asian,) = encode_constraints(table1, diva_sigma()[:1])
    groups = np.array([0, 0, 1, 1, 2, 2, 3, 3, 4, 4])
    starred = {"ETH": np.r_[np.zeros(8, bool), np.ones(2, bool)]}
    assert int(visible_rows(table1, asian, groups, starred).sum()) == 0


def test_numeric_targets(table1):
    sigma = fa.DiversityConstraint({"AGE": "32"}, 1, 2)
    assert table1.row_ids[target_mask(table1, sigma)].tolist() == [2, 5]
    with pytest.raises(SchemaError, match="not a number"):
        target_mask(table1, fa.DiversityConstraint({"AGE": "old"}, 1, 2))


def test_unreleased_target_is_refused():
    inst = fa.load("german")  # personal_status is protected, 'telephone' ignored
    with pytest.raises(IncompatibleRequirementError, match="telephone"):
        encode_constraints(inst, [fa.DiversityConstraint({"telephone": "yes"}, 1, 2)])


# ------------------------------------------------------------------ conflicts
def test_pair_conflict_rate_is_jaccard(table1):
    s1, s2, s3 = diva_sigma()
    assert pair_conflict_rate(table1, s1, s3) == Fraction(2, 5)  # {t8, t10} / {t6..t10}
    assert pair_conflict_rate(table1, s2, s3) == Fraction(1, 5)  # {t6} / {t5..t8, t10}
    assert pair_conflict_rate(table1, s1, s2) == 0


def test_set_conflict_rate(table1):
    assert conflict_rate(table1, diva_sigma()) == Fraction(3, 6)  # t6, t8, t10 of t5..t10
    assert conflict_rate(table1, diva_sigma()[:2]) == 0
    assert conflict_rate(table1, []) == 0
    # All values of two attributes: every record is targeted twice.
    both = minimum_frequency(table1, "GEN") + minimum_frequency(table1, "PRV")
    assert conflict_rate(table1, both) == 1


@PROPERTY
@given(st.lists(st.sampled_from(["GEN", "ETH", "PRV", "CTY"]), min_size=1, max_size=4, unique=True),
       st.integers(0, 30))
def test_conflict_rates_lie_in_the_unit_interval(attributes, pick):
    inst = fa.load("diva_table1")
    sigma = [s for a in attributes for s in minimum_frequency(inst, a)]
    rate = conflict_rate(inst, sigma)
    assert 0 <= rate <= 1
    a, b = sigma[pick % len(sigma)], sigma[(pick * 7) % len(sigma)]
    assert pair_conflict_rate(inst, a, b) == pair_conflict_rate(inst, b, a)
    assert 0 <= pair_conflict_rate(inst, a, b) <= 1


# ------------------------------------------------------------------ the published format
README_CREDIT = """
### Diversity Constraints Defined on Credit

```
Proportion

Sex(Male) [662, 690]
Sex(Female) [298, 298]

Job(2)[605, 605]
Job(1)[192, 192]
```
"""


def test_parse_the_repository_readme_block():
    sigma = parse_constraints(README_CREDIT)
    assert [(s.target, s.lower, s.upper) for s in sigma] == [
        ((("Sex", "Male"),), 662, 690),
        ((("Sex", "Female"),), 298, 298),
        ((("Job", "2"),), 605, 605),
        ((("Job", "1"),), 192, 192),
    ]


@pytest.mark.parametrize(
    "line, target",
    [
        ("race(White)[1, 286882]", (("race", "White"),)),
        ("industry (Government) [1000, 2500]", (("industry", "Government"),)),
        ("  city( New York )  [ 100 ,400 ]  ", (("city", "New York"),)),
        ("sex(Male)race(White)[186331, 286882]", (("sex", "Male"), ("race", "White"))),
        ("sex(Male) race(White) [186331, 286882]", (("sex", "Male"), ("race", "White"))),
        ("education(Bachelors degree(BA AB BS)) [1, 2]", (("education", "Bachelors degree(BA AB BS)"),)),
    ],
)
def test_parse_is_tolerant_of_whitespace(line, target):
    (sigma,) = parse_constraints([line])
    assert sigma.target == target


def test_parse_skips_comments_and_blank_lines():
    assert parse_constraints("# a comment\n\nETH(Asian) [2, 5]  # trailing\n") == [
        fa.DiversityConstraint({"ETH": "Asian"}, 2, 5)
    ]


@pytest.mark.parametrize("bad", ["ETH(Asian) [2, five]", "ETH(Asian [2, 5]", "(Asian) [2, 5]", "ETH(Asian) [2 5]"])
def test_parse_errors_name_the_line(bad):
    with pytest.raises(InvalidParameterError, match=r"line 2.*attribute\(value\) \[lower, upper\]"):
        parse_constraints(["ETH(Asian) [2, 5]", bad])


def test_parse_refuses_a_lower_bound_above_the_upper():
    with pytest.raises(InvalidParameterError, match="lower=5 > upper=2"):
        parse_constraints("ETH(Asian) [5, 2]")


# ------------------------------------------------------------------ generators
GERMAN_JOB = [
    "unemployed / unskilled non-resident",
    "unskilled resident",
    "skilled",
    "highly qualified / management / self-employed",
]


def test_proportional_reproduces_the_published_credit_job_set():
    """README: Job(0)[21, 21], Job(1)[192, 192], Job(2)[605, 605], Job(3)[142, 142]."""
    german = fa.load("german")
    sigma = proportional(german, "job", 0.96, rounding="round", upper="lower")
    assert [(s.target[0][1], s.lower, s.upper) for s in sigma] == list(
        zip(GERMAN_JOB, [21, 192, 605, 142], [21, 192, 605, 142])
    )


def test_proportional_project_default_and_majority_rule():
    german = fa.load("german")
    default = proportional(german, "job")  # rho = 24/25, floor, upper = count
    assert [(s.lower, s.upper) for s in default] == [(21, 22), (192, 200), (604, 630), (142, 148)]
    majority = proportional(german, "job", "0.96", rounding="round", upper="majority")
    assert [(s.lower, s.upper) for s in majority] == [(21, 21), (192, 192), (605, 630), (142, 142)]


def test_proportional_sex_as_published():
    """Sex(Male) [662, 690], Sex(Female) [298, 298] on German credit's sex."""
    german = fa.load("german", roles={"personal_status": "qi"})
    table = german.table.copy()
    sex = np.where(table["personal_status"].astype(str).str.startswith("female"), "Female", "Male")
    inst = fa.Instance(pd.DataFrame({"sex": sex}), fa.Schema([fa.Attribute("sex")]))
    sigma = proportional(inst, "sex", 0.96, rounding="round", upper="majority")
    assert [(s.target[0][1], s.lower, s.upper) for s in sigma] == [("Female", 298, 298), ("Male", 662, 690)]


def test_multi_attribute_generators(table1):
    sigma = proportional(table1, ["GEN", "ETH"], 1, values=[("Female", "Asian"), ("Male", "African")])
    assert [(s.target, s.lower, s.upper) for s in sigma] == [
        ((("GEN", "Female"), ("ETH", "Asian")), 3, 3),
        ((("GEN", "Male"), ("ETH", "African")), 2, 2),
    ]


def test_average_and_minimum_families(table1):
    # Calgary 3, Vancouver 4, Winnipeg 3 records; floor(10 / 3) = 3.
    assert [(s.lower, s.upper) for s in average(table1, "CTY")] == [(3, 3), (3, 4), (3, 3)]
    assert [(s.lower, s.upper) for s in minimum_frequency(table1, "PRV", f=2)] == [(2, 3), (2, 4), (2, 3)]


def test_generator_bad_input(table1):
    with pytest.raises(InvalidParameterError, match="'rho' parameter of proportional"):
        proportional(table1, "ETH", 0)
    with pytest.raises(InvalidParameterError, match="'upper' parameter of proportional"):
        proportional(table1, "ETH", 0.5, upper="max")
    with pytest.raises(InvalidParameterError, match="'attribute' parameter of average names 'zip'"):
        average(table1, "zip")
    with pytest.raises(InvalidParameterError, match="one value per attribute"):
        proportional(table1, ["GEN", "ETH"], 1, values=["Female"])


def test_a_constraint_on_the_suppression_label_is_refused():
    """A hierarchy may name a leaf '*' (no cell of the data may hold it): a released '*'
    is a suppressed cell, which the count took for that value shown, so that a release
    of suppressed cells met a constraint no record can (the verifier passed it where
    no release exists)."""
    tree = fa.Hierarchy.from_mapping({"ANY": ["*", "a", "b"]})
    table = pd.DataFrame({"x": list("ababab"), "y": list("pqpqpq")})
    inst = fa.Instance(table, fa.Schema([fa.Attribute("x", hierarchy=tree), fa.Attribute("y")]))
    starred = fa.DiversityConstraint({"x": "*"}, 2, 10)
    with pytest.raises(SchemaError, match="labels a suppressed cell"):
        fa.verify(inst, Release(table.copy(), np.arange(6)), [starred])
    with pytest.raises(SchemaError, match="labels a suppressed cell"):
        fa.anonymize(inst, [fa.KAnonymity(2), starred], method="diva", seed=0)
