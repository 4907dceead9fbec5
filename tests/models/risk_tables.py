"""The hand table of the risk tests.

Classes on (age, zip): (young, a) x3 = records 100-102, (old, b) = 103, (old, c) = 104,
(mid, a) x5 = records 105-109; 4 classes over 10 records, 2 sample uniques. ``w`` (2 for
every record) is left out of the schema: the tests that read it as sampling weights
name it.
"""

import pandas as pd

import fairanon as fa

HAND = pd.DataFrame(
    {
        "age": ["young"] * 3 + ["old", "old"] + ["mid"] * 5,
        "zip": ["a", "a", "a", "b", "c", "a", "a", "a", "a", "a"],
        "disease": ["flu", "flu", "hiv", "flu", "hiv", "flu", "flu", "cold", "cold", "flu"],
        "w": [2.0] * 10,
    },
    index=pd.Index(range(100, 110), name="id"),
)
SCHEMA = fa.Schema([fa.Attribute("age"), fa.Attribute("zip"), fa.Attribute("disease", role="sensitive")])
