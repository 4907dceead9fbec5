"""Pareto sets and Copeland tournaments, with the coverage cycles of docs/papers.md, DW-6."""

import pytest

from fairanon.bench import quality as Q
from fairanon.bench.quality import Verdict
from fairanon.bench.ranking import pareto_set, tournament
from fairanon.exceptions import InvalidParameterError

# Spec F8: valid class-size vectors with A ▶cov B ▶cov C ▶cov A, each 2 wins to 1.
CYCLE6 = {"A": [1, 2, 2, 3, 3, 3], "B": [3, 1, 2, 2, 3, 3], "C": [2, 3, 2, 1, 3, 3]}
CYCLE9 = {
    "P": [2, 2, 3, 3, 3, 4, 4, 4, 4],
    "Q": [2, 4, 2, 3, 3, 3, 4, 4, 4],
    "R": [2, 3, 4, 3, 3, 2, 4, 4, 4],
}


def _cov(vectors):
    return lambda a, b: Q.compare(vectors[a], vectors[b], "cov")


@pytest.mark.parametrize("vectors", [CYCLE6, CYCLE9], ids=["N=6", "N=9 (2-anonymous)"])
def test_coverage_cycle_is_reported(vectors):
    names = list(vectors)
    a, b, c = names
    assert Q.compare(vectors[a], vectors[b], "cov") is Verdict.FIRST_BETTER
    assert Q.compare(vectors[b], vectors[c], "cov") is Verdict.FIRST_BETTER
    assert Q.compare(vectors[c], vectors[a], "cov") is Verdict.FIRST_BETTER
    ranking = tournament(names, _cov(vectors), comparator="size:cov")
    assert ranking.cycles == ((a, b, c),)
    assert ranking.cyclic_groups == ((a, b, c),)
    assert not ranking.transitive
    assert ranking.describe_cycles() == [f"{a} ▶ {b} ▶ {c} ▶ {a}"]
    assert set(ranking.scores.values()) == {0}  # a cycle: no Copeland winner
    # The transitive comparators still order them (or tie) without cycles.
    for index in ("min", "mean", "spr", "hv"):
        r = tournament(names, lambda x, y, i=index: Q.compare(vectors[x], vectors[y], i))
        assert r.transitive


def test_n2_class_size_vectors_have_no_cov_cycle():
    """No cycle exists for N ≤ 5 (docs/papers.md, DW-6); check every triple of partitions of 4
    records."""
    import itertools

    def sizes(labels):
        return [labels.count(lab) for lab in labels]

    vectors = {str(lab): sizes(list(lab)) for lab in itertools.product(range(4), repeat=4)}
    unique = {tuple(v): k for k, v in vectors.items()}
    names = list(unique.values())
    ranking = tournament(names, _cov(vectors))
    assert ranking.transitive


def test_copeland_scores_and_order():
    vectors = {
        "T3a": [3, 3, 3, 3, 4, 4, 4, 3, 3, 4],
        "T3b": [3, 7, 7, 3, 7, 7, 7, 3, 7, 7],
        "T4": [4, 6, 4, 4, 6, 6, 6, 4, 6, 6],
    }
    r = tournament(list(vectors), _cov(vectors), comparator="cov")
    assert r.order == ("T3b", "T4", "T3a")
    assert r.scores == {"T3a": -2, "T3b": 2, "T4": 0}
    assert r.wins == {"T3a": 0, "T3b": 2, "T4": 1} and r.ties == {"T3a": 0, "T3b": 0, "T4": 0}
    assert r.transitive and r.cycles == ()
    r = tournament(list(vectors), lambda a, b: Q.compare(vectors[a], vectors[b], "min"))
    assert r.ties == {"T3a": 1, "T3b": 1, "T4": 0} and r.order[0] == "T4"


def test_longer_cycles_are_reported_as_groups():
    beats = {("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")}

    def verdict(x, y):
        if (x, y) in beats:
            return Verdict.FIRST_BETTER
        if (y, x) in beats:
            return Verdict.SECOND_BETTER
        return Verdict.TIE

    r = tournament(["a", "b", "c", "d"], verdict)
    assert r.cycles == () and r.cyclic_groups == (("a", "b", "c", "d"),)
    assert r.describe_cycles() == ["cycle among a, b, c, d"]


def test_pareto_sets():
    assert pareto_set({"T3a": [3, 3, 4], "T3b": [3, 7, 7], "T4": [4, 6, 4]}) == ["T3b", "T4"]
    joint = {
        "x": {"p": [2, 2], "u": [1, 1]},
        "y": {"p": [1, 1], "u": [2, 2]},
        "z": {"p": [1, 1], "u": [1, 1]},
    }
    assert pareto_set(joint) == ["x", "y"]
    assert pareto_set({"a": [1, 2], "b": [1, 2]}) == ["a", "b"]  # equal vectors both stay


def test_tournament_rejects_duplicates_and_non_verdicts():
    with pytest.raises(InvalidParameterError, match="distinct"):
        tournament(["a", "a"], lambda x, y: Verdict.TIE)
    with pytest.raises(InvalidParameterError, match="not a Verdict"):
        tournament(["a", "b"], lambda x, y: 1)
