"""The paper's data sets as transaction databases (Hajian et al. §7; docs/papers.md, HJ-7).

The paper does not say how it discretized the continuous attributes or treated missing
values (docs/papers.md, HJ-7); the choices here are fairanon's, documented in
:data:`ADULT_BINS` and :data:`GERMAN_BINS` and changeable by passing other bins:

- Adult: the 32,561 rows of the "train" file are mined, the 16,281 of the "test" file
  (trailing "." of its labels removed) are used for accuracy only; fnlwgt and
  education-num are dropped; ``?`` emits no item; age is binary with young = age < 30
  (29.82 % of the train rows; the paper says 29 %), female is 33.08 % (33 %). The
  encoding "no-capital" (:data:`ADULT_ENCODINGS`) also drops capital-gain and
  capital-loss: its numbers of α-discriminatory patterns are those the paper's Tables
  8 and 9 imply at σ = 15 % and 10 % (docs/papers.md, HJ-7).
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

__all__ = ["ADULT_BINS", "ADULT_DROPPED", "ADULT_ENCODINGS", "GERMAN_BINS", "PaperData", "paper_adult", "paper_german"]

#: Adult: bins of the continuous attributes (left-closed; see :class:`Bins`).
ADULT_BINS = {
    "age": Bins((30,), ("young", "not young")),
    "capital-gain": Bins((1,), ("0", ">0")),
    "capital-loss": Bins((1,), ("0", ">0")),
    "hours-per-week": Bins((40, 41), ("<40", "40", ">40")),
}
#: Adult columns left out (a sampling weight and a copy of education).
ADULT_DROPPED = ("fnlwgt", "education-num")
#: Adult's encodings by name: the bins and the dropped columns. "fairanon" is the default;
#: "no-capital" leaves out capital-gain and capital-loss, whose "0" items are in 92-95 % of
#: the records and so enter most frequent patterns: without them the numbers of
#: α-discriminatory patterns (slift) are 40 at σ = 10 %, α = 1.2 (Table 9's percentages
#: need a multiple of 20) and 12 and 7 at σ = 15 %, α = 1.3 and 1.4 (Table 8's imply 12
#: and 7), against 144, 41 and 12 with them (docs/papers.md, HJ-7).
ADULT_ENCODINGS = {
    "fairanon": (ADULT_BINS, ADULT_DROPPED),
    "no-capital": (
        {c: b for c, b in ADULT_BINS.items() if not c.startswith("capital-")},
        ADULT_DROPPED + ("capital-gain", "capital-loss"),
    ),
}
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


def paper_adult(*, encoding: str = "fairanon", bins: dict | None = None) -> PaperData:
    """UCI Adult as in Hajian et al. §7: DI_b = {sex=Female, age=young}, C = income <=50K,
    DI_e = every item of an attribute other than sex, age and income.

    Parameters
    ----------
    encoding : {"fairanon", "no-capital"}, default="fairanon"
        Which columns are dropped and how the numeric ones are binned
        (:data:`ADULT_ENCODINGS`; the paper does not say, docs/papers.md, HJ-7).
    bins : dict, optional
        Bins replacing the encoding's (for the columns it keeps).

    >>> data = paper_adult()
    >>> data.train.n_records, data.test.n_records, sorted(data.roles.protected)
    (32561, 16281, ['age=young', 'sex=Female'])
    >>> "capital-gain=0" in paper_adult(encoding="no-capital").train.items
    False
    """
    check_option(encoding, "encoding", "paper_adult", tuple(ADULT_ENCODINGS))
    default_bins, dropped = ADULT_ENCODINGS[encoding]
    table = adult_table("full")
    columns = [c for c in table.columns if c not in dropped]
    bins = dict(default_bins if bins is None else bins)
    db = encode_table(table[columns], bins=bins, missing=("?",))
    train = db.subset(np.arange(ADULT_TRAIN_ROWS))
    test = db.subset(np.arange(ADULT_TRAIN_ROWS, db.n_records))
    roles = Roles.paper(db.items, {"sex=Female", "age=young"}, "income=<=50K", "income=>50K")
    return PaperData("adult", train, test, roles, {"encoding": encoding,
                                                  "bins": {c: (b.edges, b.labels) for c, b in bins.items()},
                                                  "dropped": dropped, "missing": "?"})


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
