"""Mining and encoding, PrivBasis (Alg. 7), the CMAR-style classifier and the utility
measures."""

from fractions import Fraction as F

import numpy as np
import pandas as pd
import pytest

from fairanon import patterns as fp
from fairanon.exceptions import InvalidParameterError, SchemaError
from fairanon.release import Status


# ------------------------------------------------------------------ mining
def test_encode_table_bins_and_missing():
    df = pd.DataFrame({"age": [17, 29, 30, 64, None], "sex": ["F", "M", "?", "F", "M"]})
    db = fp.encode_table(df, bins={"age": fp.Bins((30,), ("young", "not young"))})
    assert db.items == ("age=not young", "age=young", "sex=F", "sex=M")
    assert [db.support({i}) for i in db.items] == [2, 2, 2, 2]
    assert db.transactions()[2] == frozenset({"age=not young"})


def test_min_count_is_exact():
    assert fp.min_count(0.15, 1000) == 150 and fp.min_count("0.15", 999) == 150 and fp.min_count(7, 10) == 7
    for bad in (0, -1, 1.5, "x", None):
        with pytest.raises(InvalidParameterError, match="min_support"):
            fp.min_count(bad, 10)


def test_mining_bad_inputs():
    db = fp.TransactionDB.from_transactions([{"a"}])
    with pytest.raises(InvalidParameterError, match="backend"):
        fp.mine(db, 1, backend="spmf")
    with pytest.raises(InvalidParameterError, match="TransactionDB"):
        fp.mine([{"a"}], 1)
    with pytest.raises(SchemaError, match="unknown column"):
        fp.encode_table(pd.DataFrame({"a": [1]}), columns=["b"])
    with pytest.raises(InvalidParameterError, match="Bins"):
        fp.Bins((3, 1), ("a", "b", "c"))


def test_roles_validation():
    with pytest.raises(InvalidParameterError, match="protected"):
        fp.Roles("sex=F", "C")
    with pytest.raises(InvalidParameterError, match="decision"):
        fp.Roles({"C"}, "C")
    roles = fp.Roles.paper(["sex=F", "sex=M", "job=a", "cls=no", "cls=yes"], {"sex=F"}, "cls=no", "cls=yes")
    assert roles.admissible == {"job=a"} and roles.class_items == ("cls=no", "cls=yes")


# ------------------------------------------------------------------ PrivBasis
def _db(seed=0, n=400):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        f = rng.random() < 0.4
        v = rng.random() < 0.7
        c = rng.random() < (0.6 if f else 0.3)
        rows.append({i for i, on in (("f", f), ("m", not f), ("v", v), ("C", c), ("P", not c)) if on})
    return fp.TransactionDB.from_transactions(rows)


class _Sealed(fp.TransactionDB):
    """A database that refuses to be read once sealed (Q17)."""

    sealed = False

    def support(self, itemset):
        assert not self.sealed, "the database was read after PrivBasis"
        return super().support(itemset)

    def dense(self):
        assert not self.sealed, "the database was read after PrivBasis"
        return super().dense()


def test_privbasis_properties():
    """Q16: noisy supports are non-negative integers, anti-monotone within each basis;
    Q15: the same seed gives the same release; Q17: sanitization never reads D."""
    base = _db()
    db = _Sealed(base.items, base.dense())
    roles = fp.Roles({"f"}, "C", "P")
    priv = fp.privbasis(db, 12, 1.0, roles, min_support=0.1, seed=3)
    db.sealed = True
    for basis in priv.bins.bases:
        for r in range(1, len(basis) + 1):
            for sub in __import__("itertools").combinations(basis, r):
                s = priv.bins.support(frozenset(sub))
                assert isinstance(s, int) and s >= 0
                for extra in set(basis) - set(sub):
                    assert priv.bins.support(frozenset(sub) | {extra}) <= s
    assert len(priv.patterns) == 12
    result = fp.sanitize(priv.patterns, "slift", 1.2)
    report = fp.verify_patterns(result.patterns.published(), roles=roles, empty_support=result.patterns.empty_support,
                                measure="slift", alpha=1.2, support_of=result.patterns.support)
    assert report.passed == (result.converged and not result.unsanitizable)
    db.sealed = False
    again = fp.privbasis(db, 12, 1.0, roles, min_support=0.1, seed=3)
    assert again.patterns.supports == priv.patterns.supports


def test_publish_dp_is_alpha_protective_and_post_processes_the_noisy_bins():
    """Alg. 7 (Def. 20): the release is α-protective — the slift of every PD pattern,
    recomputed by hand from the published supports, is below 1.2 — and ε-DP by
    construction: sanitizing PrivBasis's output with the database sealed gives the same
    release (Theorem 6: everything after PrivBasis is post-processing), and the budget
    recorded is ε in four shares summing to 1 (the noise and the shares themselves are
    tested in test_patterns_dp.py). The utility measures match a hand computation."""
    base = _db(1, 1000)
    db = _Sealed(base.items, base.dense())
    roles = fp.Roles({"f"}, "C", "P")
    fp_set = fp.PatternSet.from_db(base, 0.1, roles, backend="apriori")
    req = fp.PatternRequirements("slift", 1.2)
    rel = fp.publish_dp(db, len(fp_set), 2, roles, req, seed=0, privbasis_options={"min_support": 0.1})
    assert rel.status == Status.FEASIBLE and rel.report["alpha_protection"].passed
    assert any("differential privacy" in n for n in rel.report.notes)
    supp = rel.patterns.support
    pd = [p for p in rel.published() if {"f", "C"} <= p]
    assert pd
    for p in pd:
        b = p - {"f", "C"}
        a1, n1, s_bc, s_b = supp(p), supp(b | {"f"}), supp(b | {"C"}), supp(b)
        assert F(a1, n1) / F(s_bc - a1, s_b - n1) < F(6, 5)
    params = rel.provenance["params"]
    assert F(params["epsilon"]) == 2 and sum(F(x) for x in params["split"]) == 1
    priv = fp.privbasis(db, len(fp_set), 2, roles, min_support=0.1, seed=0)
    db.sealed = True
    assert fp.sanitize(priv.patterns, "slift", 1.2).patterns.published() == rel.published()
    db.sealed = False
    original, published = fp_set.published(), rel.published()
    kept = [x for x in original if x in published]
    assert fp.absolute_distortion(fp_set, rel.patterns) == sum(F(abs(published[x] - original[x]), original[x]) for x in kept) / len(original)
    assert fp.misses_cost(fp_set, rel.patterns) == F(len(original) - len(kept), len(original))
    with pytest.raises(InvalidParameterError, match="split"):
        fp.privbasis(db, 5, 1.0, roles, split=(1, 1, 1, 1))
    with pytest.raises(InvalidParameterError, match="epsilon"):
        fp.privbasis(db, 5, 0, roles)


# ------------------------------------------------------------------ classifier
def test_cmar_classifier():
    train = _db(2, 600)
    ps = fp.PatternSet.from_db(train, 0.05, fp.Roles({"f"}, "C", "P"), backend="apriori")
    clf = fp.CMARClassifier(ps, ("C", "P"), train.n_records)
    acc = clf.accuracy(_db(3, 300))
    assert 0.5 <= acc <= 1
    assert all(r.premise for r in clf.rules)
    assert clf.predict([set()]) == [clf.default]
    with pytest.raises(InvalidParameterError, match="two class items"):
        fp.CMARClassifier(ps, ("C",), 10)


# ------------------------------------------------------------------ utility
def test_utility_measures():
    fp_ = {frozenset("a"): 10, frozenset("b"): 5, frozenset("ab"): 4}
    tp = {frozenset("a"): 12, frozenset("b"): 5, frozenset("c"): 3}
    assert fp.support_altered(fp_, tp) == F(2, 3)
    assert fp.distortion(fp_, tp) == F(1, 15)
    assert fp.misses_cost(fp_, tp) == F(1, 3) and fp.ghost_cost(fp_, tp) == F(1, 3)
    assert fp.dpd(set(), {1}) is None and fp.ndd({1}, set()) is None
    report = fp.utility_report(fp_, tp)
    assert set(report) == {"support_altered", "distortion", "absolute_distortion", "misses_cost", "ghost_cost"}
