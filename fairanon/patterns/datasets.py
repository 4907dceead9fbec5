"""The paper's data sets as transaction databases (Hajian et al. §7; docs/papers.md, HJ-7).

The paper does not say how it discretized the continuous attributes or treated missing
values (docs/papers.md, HJ-7); the choices here are fairanon's, documented in
:data:`ADULT_BINS` and :data:`GERMAN_BINS` and changeable by passing other bins:

- Adult: the 32,561 rows of the "train" file are mined, the 16,281 of the "test" file
  (trailing "." of its labels removed) are used for accuracy only; fnlwgt and
  education-num are dropped; ``?`` emits no item; age is binary with young = age < 30
  (29.82 % of the train rows; the paper says 29 %), female is 33.08 % (33 %).
- German credit: 1,000 rows, all 20 attributes; age is binary with old = age > 50
  (11.3 %; the paper says 11 %); foreign worker = yes is 96.3 % (96 %); bad is 30 %.

With German's binary age the counts of α-discriminatory patterns match the ones the
paper's Table 8 percentages imply exactly (51, 48, 47, 46, 36 at σ = 15 % and α =
1.2 .. 2.0; 12, 12, 12, 11, 8 at σ = 20 %); see ``tests/patterns/test_patterns_paper.py``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .._validation import check_option, check_random_state
from ..instances.datasets import adult_table, german_table
from .mining import Bins, TransactionDB, encode_table
from .patternset import Roles

__all__ = ["ADULT_BINS", "ADULT_DROPPED", "GERMAN_BINS", "PaperData", "paper_adult", "paper_german"]

#: Adult: bins of the continuous attributes (left-closed; see :class:`Bins`).
ADULT_BINS = {
    "age": Bins((30,), ("young", "not young")),
    "capital-gain": Bins((1,), ("0", ">0")),
    "capital-loss": Bins((1,), ("0", ">0")),
    "hours-per-week": Bins((40, 41), ("<40", "40", ">40")),
}
#: Adult columns left out (a sampling weight and a copy of education).
ADULT_DROPPED = ("fnlwgt", "education-num")
#: Adult's "train" part: the first rows of the full table.
ADULT_TRAIN_ROWS = 32561

#: German credit: bins of the continuous attributes; installment_rate, residence_since,
#: existing_credits and num_dependents (1-4 and 1-2) stay as values.
GERMAN_BINS = {
    "age": Bins((51,), ("not old", "old")),
    "duration": Bins((12, 24, 36), ("<12", "12-23", "24-35", ">=36")),
    "credit_amount": Bins((2000, 5000), ("<2000", "2000-4999", ">=5000")),
}


@dataclass(frozen=True)
class PaperData:
    """A data set as the paper uses it: training and test transactions and item roles."""

    name: str
    train: TransactionDB
    test: TransactionDB | None
    roles: Roles
    choices: dict = field(default_factory=dict)


def paper_adult(*, bins: dict | None = None) -> PaperData:
    """UCI Adult as in Hajian et al. §7: DI_b = {sex=Female, age=young}, C = income <=50K,
    DI_e = every item of an attribute other than sex, age and income.

    >>> data = paper_adult()
    >>> data.train.n_records, data.test.n_records, sorted(data.roles.protected)
    (32561, 16281, ['age=young', 'sex=Female'])
    """
    table = adult_table("full")
    columns = [c for c in table.columns if c not in ADULT_DROPPED]
    bins = dict(ADULT_BINS if bins is None else bins)
    db = encode_table(table[columns], bins=bins, missing=("?",))
    train = db.subset(np.arange(ADULT_TRAIN_ROWS))
    test = db.subset(np.arange(ADULT_TRAIN_ROWS, db.n_records))
    roles = Roles.paper(db.items, {"sex=Female", "age=young"}, "income=<=50K", "income=>50K")
    return PaperData("adult", train, test, roles, {"bins": {c: (b.edges, b.labels) for c, b in bins.items()},
                                                  "dropped": ADULT_DROPPED, "missing": "?"})


def paper_german(*, split: str | None = None, test_share=Fraction(1, 3), seed=0, bins: dict | None = None) -> PaperData:
    """UCI German credit as in Hajian et al. §7: DI_b = {age=old, foreign_worker=yes},
    C = credit bad, DI_e = every item of an attribute other than age, foreign_worker and
    credit.

    Parameters
    ----------
    split : {None, "stratified"}, default=None
        None: all 1,000 rows train, no test. "stratified": a split stratified by the
        class, `test_share` of each class to the test part, drawn with `seed` (the paper
        does not give its split, docs/papers.md, HJ-7).

    >>> data = paper_german()
    >>> data.train.n_records, data.train.support({"age=old"}), data.train.support({"foreign_worker=yes"})
    (1000, 113, 963)
    """
    check_option(split, "split", "paper_german", (None, "stratified"))
    table = german_table()
    bins = dict(GERMAN_BINS if bins is None else bins)
    db = encode_table(table, bins=bins)
    roles = Roles.paper(db.items, {"age=old", "foreign_worker=yes"}, "credit=bad", "credit=good")
    choices = {"bins": {c: (b.edges, b.labels) for c, b in bins.items()}, "split": split}
    if split is None:
        return PaperData("german", db, None, roles, choices)
    rng = check_random_state(seed)
    test_share = Fraction(test_share)
    is_test = np.zeros(db.n_records, dtype=bool)
    for c in roles.class_items:
        members = np.flatnonzero(db.mask({c}))
        n_test = int(round(len(members) * test_share))
        is_test[rng.choice(members, size=n_test, replace=False)] = True
    choices.update(test_share=str(test_share), seed=seed)
    return PaperData("german", db.subset(~is_test), db.subset(is_test), roles, choices)
