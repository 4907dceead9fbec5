"""Closed-form EMDs against the transportation LP, l-diversity tests, discrimination
measures and bounds on the papers' numbers."""

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairanon.instances.hierarchy import Hierarchy
from fairanon.models import measures as M
from tests.trees import node_height, random_trees, some_leaves

# --------------------------------------------------------------------- EMD
SALARY = np.ones(9, dtype=int)  # 3K..11K, one each


@pytest.mark.parametrize(
    "members, expected",
    [((0, 1, 2), Fraction(3, 8)), ((3, 5, 8), Fraction(1, 6)), ((0, 2, 6), Fraction(1, 6)), ((1, 4, 7), Fraction(1, 12))],
)
def test_ordered_emd_salary_vectors(members, expected):
    counts = np.zeros(9, dtype=int)
    counts[list(members)] = 1
    ground = M.EMDGround.ordered(9)
    assert M.emd_exact(counts, SALARY, ground) == expected
    assert M.emd(counts[None, :], SALARY, ground)[0] == pytest.approx(float(expected))


DISEASES = Hierarchy.from_mapping(
    {
        "*": {
            "respiratory": {
                "respiratory-infection": ["flu", "pneumonia", "bronchitis"],
                "vascular-lung": ["pulmonary-edema", "pulmonary-embolism"],
            },
            "digestive": {
                "stomach": ["gastric-ulcer", "gastritis", "stomach-cancer"],
                "colon": ["colitis", "colon-cancer"],
            },
        }
    }
)
DISEASE_ROWS = ["gastric-ulcer", "gastritis", "stomach-cancer", "gastritis", "flu", "bronchitis", "bronchitis",
                "pneumonia", "stomach-cancer"]


@pytest.mark.parametrize(
    "rows, expected",
    [((1, 2, 3), Fraction(4, 9)), ((4, 5, 6), Fraction(8, 27)), ((7, 8, 9), Fraction(8, 27)),
     ((1, 3, 8), Fraction(7, 27)), ((2, 7, 9), Fraction(5, 27))],
)
def test_hierarchical_emd_disease_vectors(rows, expected):
    values = list(DISEASES.leaves)
    ground = M.EMDGround.hierarchical(DISEASES, values)
    glob = np.array([DISEASE_ROWS.count(v) for v in values])
    members = [DISEASE_ROWS[r - 1] for r in rows]
    counts = np.array([members.count(v) for v in values])
    assert M.emd_exact(counts, glob, ground) == expected
    assert M.emd_transport(counts / counts.sum(), glob / glob.sum(), ground.matrix()) == pytest.approx(float(expected))


@st.composite
def count_pairs(draw, max_m=7):
    m = draw(st.integers(1, max_m))
    glob = np.array(draw(st.lists(st.integers(0, 6), min_size=m, max_size=m)))
    if glob.sum() == 0:
        glob[0] = 1
    counts = np.array([draw(st.integers(0, int(g))) for g in glob])
    if counts.sum() == 0:
        counts[int(np.argmax(glob))] = 1
    return counts, glob


@given(count_pairs())
def test_equal_and_ordered_emd_match_the_transportation_lp(pair):
    counts, glob = pair
    p, q = counts / counts.sum(), glob / glob.sum()
    for ground in (M.EMDGround.equal(len(glob)), M.EMDGround.ordered(len(glob))):
        exact = M.emd_exact(counts, glob, ground)
        assert float(exact) == pytest.approx(M.emd_transport(p, q, ground.matrix()), abs=1e-9)
        assert M.emd(counts[None, :], glob, ground)[0] == pytest.approx(float(exact), abs=1e-12)
        assert 0 <= exact <= 1


@given(count_pairs(), st.sampled_from([1, 2**31]))
def test_emd_within_decides_at_the_emd_itself(pair, scale):
    """At t = EMD (the exact one, checked against the LP above) a group passes and just
    below it fails; scaled by 2^31 the integers overflow int64 and floats decide."""
    counts, glob = pair
    counts, glob = counts * scale, glob * scale
    for ground in (M.EMDGround.equal(len(glob)), M.EMDGround.ordered(len(glob))):
        exact = M.emd_exact(counts, glob, ground)
        rows = np.stack([counts, np.zeros_like(counts)])
        assert M.emd_within(rows, glob, ground, exact).tolist() == [True, True]
        if exact > 0:
            below = exact - Fraction(1, 10**12)
            assert M.emd_within(rows, glob, ground, below).tolist() == [False, True]


@st.composite
def trees_and_counts(draw):
    """A random hierarchy (possibly unbalanced) and counts over its leaves."""
    n_groups = draw(st.integers(1, 3))
    mapping, leaf = {}, 0
    for g in range(n_groups):
        if draw(st.booleans()):
            sub = {}
            for s in range(draw(st.integers(1, 2))):
                k = draw(st.integers(1, 3))
                sub[f"g{g}s{s}"] = [f"v{leaf + i}" for i in range(k)]
                leaf += k
            mapping[f"g{g}"] = sub
        else:
            k = draw(st.integers(1, 3))
            mapping[f"g{g}"] = [f"v{leaf + i}" for i in range(k)]
            leaf += k
    hierarchy = Hierarchy.from_mapping({"*": mapping})
    glob = np.array(draw(st.lists(st.integers(0, 5), min_size=leaf, max_size=leaf)))
    if glob.sum() == 0:
        glob[0] = 2
    counts = np.array([draw(st.integers(0, int(g))) for g in glob])
    if counts.sum() == 0:
        counts[int(np.argmax(glob))] = 1
    return hierarchy, counts, glob


@given(trees_and_counts())
def test_hierarchical_emd_matches_the_transportation_lp(case):
    hierarchy, counts, glob = case
    ground = M.EMDGround.hierarchical(hierarchy, list(hierarchy.leaves))
    exact = M.emd_exact(counts, glob, ground)
    lp = M.emd_transport(counts / counts.sum(), glob / glob.sum(), ground.matrix())
    assert float(exact) == pytest.approx(lp, abs=1e-9)
    assert M.emd(counts[None, :], glob, ground)[0] == pytest.approx(float(exact), abs=1e-12)


def test_hierarchical_ground_distance_is_lca_height_over_tree_height():
    ground = M.EMDGround.hierarchical(DISEASES, list(DISEASES.leaves)).matrix()
    idx = {v: i for i, v in enumerate(DISEASES.leaves)}
    assert ground[idx["flu"], idx["pneumonia"]] == pytest.approx(1 / 3)
    assert ground[idx["flu"], idx["pulmonary-edema"]] == pytest.approx(2 / 3)
    assert ground[idx["flu"], idx["colitis"]] == pytest.approx(1.0)


def test_hierarchical_distance_over_arx_rows_of_uneven_depth_by_hand():
    """ARX rows 80;>=80;>=80;* and 85;>=80;>=80;* (80 and 85 top-coded on levels 1 and
    2), 23;[20-25);[20-30);* and 27;[25-30);[20-30);*: 80 and 85 share a label from level
    1 on, and >=80 has height 1 (its children are leaves), so they are 1/3 apart, not
    the 2/3 of leaves padded down to depth 3; 23 and 27 meet at [20-30), height 2: 2/3;
    23 and 80 at the root: 1."""
    tree = Hierarchy.from_levels([
        ["80", ">=80", ">=80", "*"], ["85", ">=80", ">=80", "*"],
        ["23", "[20-25)", "[20-30)", "*"], ["27", "[25-30)", "[20-30)", "*"],
    ])
    values = ["80", "85", "23", "27"]
    ground = M.EMDGround.hierarchical(tree, values).matrix()
    assert ground[0, 1] == pytest.approx(1 / 3) and ground[2, 3] == pytest.approx(2 / 3)
    assert ground[0, 2] == pytest.approx(1.0) and ground[1, 3] == pytest.approx(1.0)
    # A class of 80 alone against one record of each: 1/4 moves 1/3, 1/2 moves 1.
    alone = M.emd_exact([1, 0, 0, 0], [1, 1, 1, 1], M.EMDGround.hierarchical(tree, values))
    assert alone == Fraction(7, 12)


def _chain(height: int) -> Hierarchy:
    """Two leaves: x at the bottom of a chain of `height` levels, y one level down."""
    node = ["x"]
    for level in range(height - 1, 0, -1):
        node = {f"a{level}": node}
    return Hierarchy.from_mapping({"*": {**node, "b": ["y"]}})


@pytest.mark.parametrize(
    "ground",
    [M.EMDGround.ordered(2, positions=[0, 2**20], domain_size=2**20 + 1), M.EMDGround.hierarchical(_chain(8), ["x", "y"])],
    ids=["declared-span-2^20", "height-8"],
)
def test_emd_integers_guard_the_denominators_factor_not_the_columns(ground):
    """Two columns (m = 2) whose denominator's factor is far larger: the ordered span
    2^20 (one step between the two values), twice a height of 8. A class of 2^29 records
    all of the first value in a table of 2^30 half each: the mass 1/2 moves the whole
    ground distance 1, EMD 1/2 (by hand), though size x total x m = 2^60 fits in int64
    and the denominator size x total x factor (2^79, 2^63) does not."""
    assert (ground.scale if ground.distance == "ordered" else 2 * ground.height) > 2 * ground.m
    if ground.distance == "hierarchical":
        assert ground.matrix()[0, 1] == 1
    counts, glob = np.array([[2**29, 0]]), np.array([2**29, 2**29])
    assert M.emd_exact(counts[0], glob, ground) == Fraction(1, 2)
    assert M.emd(counts, glob, ground).tolist() == [0.5]
    half = Fraction(1, 2)
    for t, within in ((half, True), (half - Fraction(1, 10**12), False), (Fraction(1, 4), False), (1, True)):
        assert M.emd_within(counts, glob, ground, t).tolist() == [within], t


@given(st.integers(0, 20), st.integers(0, 20), st.integers(1, 20), st.integers(1, 20))
def test_binary_emds_all_equal_the_variational_distance(x, y, nx_extra, ny_extra):
    """Ruggieri: for a binary attribute every EMD collapses to |p - p*|."""
    counts = np.array([x, nx_extra])
    glob = counts + np.array([y, ny_extra])
    p, pstar = Fraction(x, int(counts.sum())), Fraction(int(glob[0]), int(glob.sum()))
    for ground in (M.EMDGround.equal(2), M.EMDGround.ordered(2), M.EMDGround.hierarchical(Hierarchy.flat(["a", "b"]), ["a", "b"])):
        assert M.emd_exact(counts, glob, ground) == abs(p - pstar)


def test_exact_compare_decides_boundaries_exactly():
    # 0.1 + 0.2 > 0.3 in floats; exactly it equals 3/10, so "<= 3/10" must hold.
    values = np.array([0.1 + 0.2, 0.30000001, 0.2])
    exact = [Fraction(3, 10), Fraction(30000001, 10**8), Fraction(1, 5)]
    assert M.exact_compare(values, lambda i: exact[i], Fraction(3, 10), "le").tolist() == [True, False, True]
    assert M.exact_compare(values, lambda i: exact[i], Fraction(3, 10), "lt").tolist() == [False, False, True]


# ------------------------------------------------------------- l-diversity
def test_entropy_l_ties_are_decided_exactly():
    counts = np.array([[1, 1, 0], [2, 1, 0], [1, 1, 1], [5, 5, 0]])
    assert M.entropy_l_ok(counts, 2).tolist() == [True, False, True, True]
    assert M.entropy_l_ok(counts, 3).tolist() == [False, False, True, False]
    assert M.entropy_l(counts)[0] == pytest.approx(2.0)


def test_recursive_cl_diversity():
    counts = np.array([[3, 1, 1], [4, 1, 1], [5, 0, 0]])
    ok, ratio = M.recursive_cl_ok(counts, Fraction(2), 2)
    assert ok.tolist() == [True, False, False]
    assert ratio[:2] == [Fraction(3, 2), Fraction(2)]


def test_distinct_l():
    assert M.distinct_l(np.array([[3, 0, 1], [0, 0, 2]])).tolist() == [2, 1]


# --------------------------------------------------- discrimination measures
def _props(*tables, neg=1, total=2):
    a, b, c, d = (np.array(x) for x in zip(*tables))
    return M.Proportions(a, b, c, d, neg, total)


def test_hajian_example_3_numbers():
    """Women vets 34 (20 denied), men vets 47 (19 denied): Hajian et al. Example 3."""
    table = (20, 14, 19, 28)
    expected = {"RR": 1.4551, "ER": 1.2217, "RD": 0.1840, "ED": 0.1068, "RC": 0.6912, "EC": 0.7941, "OR": 2.1053}
    for measure, value in expected.items():
        assert float(M.discrimination_exact(measure, *table, 39, 81)) == pytest.approx(value, abs=5e-5)
        assert M.discrimination(measure, _props(table, neg=39, total=81))[0] == pytest.approx(value, abs=5e-5)


def test_simpson_paradox_example():
    """Ruggieri Ex. 9/12: ED per department and on the whole table."""
    assert M.discrimination_exact("ED", 5, 2, 1, 2, 10, 20) == Fraction(5, 7) - Fraction(6, 10)
    assert M.discrimination_exact("ED", 1, 1, 3, 5, 10, 20) == Fraction(1, 10)
    assert M.discrimination_exact("ED", 6, 3, 4, 7, 10, 20) == Fraction(1, 6)


def test_example_12_the_converse_of_thm_10_fails():
    """Ex. 12 (the Simpson table, p- = 1/2): it is 1/6-protective w.r.t. ED (Ex. 9) but
    not bd_ED^{-1}(1/6) = max(1/12, 1/6 - 1/2) = 1/12-close: the q-blocks (dept, sex) are
    3/14, 1/6, 0 and 1/8 from p- (the paper's 0.214, 0.167, 0.0, 0.125)."""
    blocks = {("A", "f"): (5, 2, 0, 0), ("A", "m"): (0, 0, 1, 2), ("B", "f"): (1, 1, 0, 0), ("B", "m"): (0, 0, 3, 5)}
    distances = {b: M.tau_exact(*cells, 10, 20) for b, cells in blocks.items()}
    assert distances == {("A", "f"): Fraction(3, 14), ("A", "m"): Fraction(1, 6), ("B", "f"): 0, ("B", "m"): Fraction(1, 8)}
    assert M.t_alpha("ED", Fraction(1, 6), Fraction(1, 2)) == Fraction(1, 12) < max(distances.values())


def test_example_11_the_bound_is_sharp():
    """Ex. 11 (p- = 1/2, t = 1/2): (1, 0, 0, 1) has RD = 1 = bd_RD(1/2); (1, 0, 0, d) has
    ED = 1 - 1/(d + 1), as close to the bound as d makes it; both contexts are 1/2-close."""
    p, t = Fraction(1, 2), Fraction(1, 2)
    assert M.bound("RD", t, p) == M.bound("ED", t, p) == 1 == M.discrimination_exact("RD", 1, 0, 0, 1, 1, 2)
    for d in (1, 9, 999):
        assert M.discrimination_exact("ED", 1, 0, 0, d, 1, 2) == 1 - Fraction(1, d + 1)
        assert M.tau_exact(1, 0, 0, d, 1, 2) == t


def test_tokenism_extension_and_zero_denominators():
    # no protected record: p1 = p- (§3.3)
    assert M.discrimination_exact("ED", 0, 0, 1, 999, 8, 17) == Fraction(8, 17) - Fraction(1, 1000)
    assert M.discrimination_exact("RD", 0, 0, 1, 999, 8, 17) == Fraction(8, 17) - Fraction(1, 1000)
    assert M.tau_exact(0, 0, 1, 3, 1, 2) == Fraction(1, 4)
    # x/0 = inf, 0/0 = 1
    assert M.discrimination_exact("RR", 1, 0, 0, 1, 1, 2) == float("inf")
    assert M.discrimination_exact("RR", 0, 1, 0, 1, 1, 2) == 1
    values = M.discrimination("RR", _props((1, 0, 0, 1), (0, 1, 0, 1)))
    assert values.tolist() == [float("inf"), 1.0]


def test_german_credit_tau_and_bounds():
    """Ruggieri Ex. 21 and Fig. 6's bounds (p- = 3/10, t = 3/20)."""
    assert M.tau_exact(109, 201, 191, 499, 300, 1000) == Fraction(8, 155)
    p, t = Fraction(3, 10), Fraction(3, 20)
    assert M.bound("RD", t, p) == Fraction(3, 10)
    assert M.bound("RR", t, p) == 3
    assert M.bound("RC", t, p) == Fraction(11, 17)
    assert M.bound("OR", t, p) == Fraction(51, 11)


@given(
    st.integers(0, 30), st.integers(0, 30), st.integers(0, 30), st.integers(0, 30),
    st.fractions(min_value=0, max_value=1, max_denominator=50),
)
def test_measures_lie_within_their_bounds_at_their_own_tau(a, b, c, d, p_minus):
    """Spec PT4: with tau = tau(a,b,c,d; p-), every measure is within bd_f(tau)."""
    if a + b + c + d == 0 or p_minus in (0, 1):
        return
    neg, total = p_minus.numerator, p_minus.denominator
    t = M.tau_exact(a, b, c, d, neg, total)
    for measure in ("RD", "ED"):
        assert abs(M.discrimination_exact(measure, a, b, c, d, neg, total)) <= M.bound(measure, t, p_minus)
    for measure in ("RR", "ER", "OR"):
        assert M.discrimination_exact(measure, a, b, c, d, neg, total) <= M.bound(measure, t, p_minus)
    for measure in ("RC", "EC"):
        assert M.discrimination_exact(measure, a, b, c, d, neg, total) >= M.bound(measure, t, p_minus)


@given(st.lists(st.tuples(*[st.integers(0, 9)] * 4), min_size=1, max_size=8), st.integers(1, 9), st.integers(10, 20))
def test_vectorized_measures_agree_with_exact(tables, neg, total):
    props = _props(*tables, neg=neg, total=total)
    for measure in ("RD", "ED", "RR", "ER", "RC", "EC", "OR"):
        values = M.discrimination(measure, props)
        for i, table in enumerate(tables):
            if sum(table) == 0:
                continue
            exact = M.discrimination_exact(measure, *table, neg, total)
            assert values[i] == pytest.approx(float(exact), rel=1e-12)


def _edge_weight(hierarchy: Hierarchy, node: str) -> int:
    """The heights the edge above `node` climbs: height(parent) - height(node)."""
    return node_height(hierarchy, hierarchy.parent[node]) - node_height(hierarchy, node)


def _tree_emd_by_nodes(hierarchy: Hierarchy, distribution: dict, glob: dict) -> Fraction:
    """Li et al.'s hierarchical EMD written out: Σ over the nodes N below the root of
    w_N |p(N) - q(N)| / (2H), each value's share added to every node on its path to the
    root (parent pointers, no leaf ranges)."""
    size, total = int(sum(distribution.values())), int(sum(glob.values()))
    if size == 0:
        return Fraction(0)
    extra = {node: Fraction(0) for node in hierarchy.parent}
    for counts, scale, sign in ((distribution, size, 1), (glob, total, -1)):
        for value, c in counts.items():
            node = value
            while node is not None:
                extra[node] += sign * Fraction(int(c), scale)
                node = hierarchy.parent[node]
    out = sum(_edge_weight(hierarchy, n) * abs(e) for n, e in extra.items() if n != hierarchy.root)
    return out / (2 * hierarchy.height)


@st.composite
def random_trees_and_columns(draw):
    """A random tree, some of its leaves as columns in a random order, global counts and
    a few classes' counts."""
    hierarchy = draw(random_trees())
    columns = draw(some_leaves(hierarchy))
    m = len(columns)
    glob = np.array(draw(st.lists(st.integers(1, 6), min_size=m, max_size=m)))
    counts = np.array(draw(st.lists(st.lists(st.integers(0, 6), min_size=m, max_size=m), min_size=1, max_size=4)))
    return hierarchy, columns, counts, glob


@given(random_trees_and_columns())
def test_hierarchical_emd_from_ranges_equals_the_sum_over_nodes(case):
    """The ranges (columns in depth-first order, nodes merged or left out) give the
    node-by-node formula exactly, in every form: exact, floats, the exact test against
    t, and the ground distance height(LCA) / H of the LP oracle."""
    hierarchy, columns, counts, glob = case
    ground = M.EMDGround.hierarchical(hierarchy, columns)
    assert len(ground.weights) <= 2 * len(columns) - 1
    expected = [_tree_emd_by_nodes(hierarchy, dict(zip(columns, row)), dict(zip(columns, glob))) for row in counts]
    assert [M.emd_exact(row, glob, ground) for row in counts] == expected
    assert M.emd(counts, glob, ground).tolist() == pytest.approx([float(e) for e in expected], abs=1e-12)
    for e in set(expected):
        within = [x <= e for x in expected]
        assert M.emd_within(counts, glob, ground, e).tolist() == within
        if e > 0:
            below = [x < e for x in expected]
            assert M.emd_within(counts, glob, ground, e - Fraction(1, 10**9)).tolist() == below
    matrix = ground.matrix()
    for i, a in enumerate(columns):
        for j, b in enumerate(columns):
            lca = hierarchy.lca([a, b])
            hand = 0 if a == b else Fraction(node_height(hierarchy, lca), hierarchy.height)
            assert matrix[i, j] == pytest.approx(float(hand), abs=1e-12)


def _tree_emd_by_min_pos_neg(hierarchy: Hierarchy, distribution: dict, glob: dict) -> Fraction:
    """Li, Li and Venkatasubramanian's hierarchical EMD (ICDE 2007, Sec. 4.3) in their
    own form: Σ over the inner nodes N of height(N)/H · min(pos_extra(N),
    neg_extra(N)), pos_extra (neg_extra) the sum of N's children's positive (negative)
    extras, extra(leaf) = p - q, height(N) the edges on N's longest path down to a
    leaf."""
    size, total = int(sum(distribution.values())), int(sum(glob.values()))
    if size == 0:
        return Fraction(0)
    height = hierarchy.height
    cost = Fraction(0)

    def extra(node: str) -> Fraction:
        nonlocal cost
        if not hierarchy.children[node]:
            return Fraction(int(distribution.get(node, 0)), size) - Fraction(int(glob.get(node, 0)), total)
        below = [extra(child) for child in hierarchy.children[node]]
        pos = sum((e for e in below if e > 0), Fraction(0))
        neg = -sum((e for e in below if e < 0), Fraction(0))
        cost += Fraction(node_height(hierarchy, node), height) * min(pos, neg)
        return pos - neg

    extra(hierarchy.root)
    return cost


@given(random_trees_and_columns())
def test_hierarchical_emd_equals_li_et_al_min_of_positive_and_negative_extras(case):
    """The EMD over the leaf ranges (edge form, Σ w_N |extra(N)| / 2H) equals Li et
    al.'s Σ height(N)/H · min(pos, neg) over the inner nodes, exactly."""
    hierarchy, columns, counts, glob = case
    ground = M.EMDGround.hierarchical(hierarchy, columns)
    for row in counts:
        expected = _tree_emd_by_min_pos_neg(hierarchy, dict(zip(columns, row)), dict(zip(columns, glob)))
        assert M.emd_exact(row, glob, ground) == expected


def test_li_et_al_hierarchical_emd_by_hand():
    """The form above on a tree worked by hand: * -> {a -> {x, y}, z}, H = 2; p puts
    everything on x, q is uniform. Node a: extras x 2/3, y -1/3, min 1/3 at height
    1/2; root: extras a 1/3, z -1/3, min 1/3 at height 1. EMD 1/6 + 1/3 = 1/2."""
    tree = Hierarchy({"*": None, "a": "*", "z": "*", "x": "a", "y": "a"})
    assert _tree_emd_by_min_pos_neg(tree, {"x": 1}, {"x": 1, "y": 1, "z": 1}) == Fraction(1, 2)
    ground = M.EMDGround.hierarchical(tree, ["x", "y", "z"])
    assert M.emd_exact([1, 0, 0], [1, 1, 1], ground) == Fraction(1, 2)


def test_ground_matrix_is_checked_against_the_memory_limit():
    """The m x m matrix of the LP oracle is refused, not built, beyond the limit."""
    from fairanon._memory import memory_limit
    from fairanon.exceptions import MemoryLimitError

    with memory_limit("1MB"), pytest.raises(MemoryLimitError, match="1000 x 1000 ground distance matrix"):
        M.EMDGround.equal(1000).matrix()


@given(random_trees(), st.data())
def test_emd_of_each_value_equals_a_class_of_that_value_alone(tree, data):
    """The EMD of every single value at once equals, value by value, the node-by-node
    sum (hierarchical) and the exact EMD of a class holding it alone (equal, ordered
    with gaps in a declared domain)."""
    columns = data.draw(some_leaves(tree))
    m = len(columns)
    glob = np.array(data.draw(st.lists(st.integers(1, 6), min_size=m, max_size=m)))
    hierarchical = M.emd_of_each_value(glob, M.EMDGround.hierarchical(tree, columns))
    alone = [_tree_emd_by_nodes(tree, {v: 1}, dict(zip(columns, glob))) for v in columns]
    assert hierarchical.tolist() == pytest.approx([float(e) for e in alone], abs=1e-12)
    positions = sorted(data.draw(st.lists(st.integers(0, 30), min_size=m, max_size=m, unique=True)))
    for ground in (M.EMDGround.equal(m), M.EMDGround.ordered(m, positions=positions, domain_size=31)):
        exact = [M.emd_exact(np.eye(m, dtype=int)[j], glob, ground) for j in range(m)]
        assert M.emd_of_each_value(glob, ground).tolist() == pytest.approx([float(e) for e in exact], abs=1e-12)


@pytest.fixture(scope="module")
def flat_100000():
    """100,000 values d00000, d00001, ... and the flat tree over them (the two tests of
    100,000 values share it: building it takes about half of each)."""
    values = [f"d{i:05d}" for i in range(100_000)]
    return values, Hierarchy.flat(values)


def test_emd_of_each_of_100000_values_builds_no_values_by_values_table(flat_100000):
    """100,000 values, one record each, under a flat tree: every value alone is at EMD
    1 - 1/m from the table (½((1 - 1/m) + (m - 1)/m), by hand), found without the
    m x m table of single-value classes (80 GB): the traced peak, under 50 MB, is the
    assertion (the function checks no memory limit, having no large table to build)."""
    import tracemalloc

    values, tree = flat_100000
    m = len(values)
    ground = M.EMDGround.hierarchical(tree, values)
    tracemalloc.start()
    try:
        hierarchical = M.emd_of_each_value(np.ones(m, dtype=int), ground)
        equal = M.emd_of_each_value(np.ones(m, dtype=int), M.EMDGround.equal(m))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 50 * 10**6
    # Within 1e-12 of the hand value, read in one numpy pass (pytest.approx compares the
    # 100,000 entries one by one in Python).
    assert hierarchical.shape == equal.shape == (m,)
    assert np.abs(hierarchical - (1 - 1 / m)).max() <= 1e-12
    assert np.abs(equal - (1 - 1 / m)).max() <= 1e-12


def _one_record_against_uniform(ground: M.EMDGround, m: int) -> tuple[Fraction, list[bool], int]:
    """A class of one record of the first value against one record of every value,
    with the traced peak: the callers' assertion on the memory (the EMDs check no
    memory limit, having no large table to build)."""
    import tracemalloc

    counts, glob = np.zeros((1, m), dtype=np.int64), np.ones(m, dtype=np.int64)
    counts[0, 0] = 1
    tracemalloc.start()
    try:
        exact = M.emd_exact(counts[0], glob, ground)
        within = M.emd_within(counts, glob, ground, exact).tolist() + M.emd_within(
            counts, glob, ground, exact - Fraction(1, 10**12)).tolist()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert M.emd(counts, glob, ground)[0] == pytest.approx(float(exact))
    return exact, within, peak


def test_hierarchical_emd_of_100000_values_builds_no_nodes_by_values_table(flat_100000):
    """A flat sensitive attribute of 100,000 values: the nodes-by-values table of the
    ground would take 8 x 100,000 x 100,000 bytes (80 GB). One record of the first
    value against one of each: the tree's height is 1, so the EMD is ½((1 - 1/m) +
    (m - 1)/m) = 99,999/100,000 by hand, found within 50 MB."""
    from fairanon.instances.schema import Attribute

    values, tree = flat_100000
    m = len(values)
    ground = M.emd_ground("hierarchical", values, Attribute("diagnosis", role="sensitive", hierarchy=tree))
    exact, within, peak = _one_record_against_uniform(ground, m)
    assert exact == Fraction(m - 1, m) and within == [True, False]
    assert peak < 50 * 10**6


def _masked_emd_by_hand(digits: int) -> Fraction:
    """d-digit codes masked one digit per level under ``*`` (height d), one record of
    the first code against one of each of the 10^d codes: the j-digit masked node over
    the first code has |1 - 10^(j-d)|, its 10^(d-j) - 1 siblings 10^(j-d) each, so the
    EMD is Σ_{j<d} 2 (1 - 10^(j-d)) / (2d)."""
    return sum((1 - Fraction(10**j, 10**digits) for j in range(digits)), Fraction(0)) / digits


def test_hierarchical_emd_of_masked_codes_by_hand():
    """10,000 four-digit codes masked one digit per level: 38,889/40,000; the nodes by
    values table would take 8 x 11,110 x 10,000 bytes (889 MB)."""
    from fairanon.instances.builders import masking_hierarchy

    codes = [f"{i:04d}" for i in range(10_000)]
    ground = M.EMDGround.hierarchical(masking_hierarchy(codes, levels=3), codes)
    exact, within, peak = _one_record_against_uniform(ground, len(codes))
    assert exact == _masked_emd_by_hand(4) == Fraction(38_889, 40_000) and within == [True, False]
    assert peak < 20 * 10**6


@pytest.mark.slow
def test_hierarchical_emd_of_100000_masked_zip_codes_by_hand():
    """100,000 five-digit ZIP codes masked one digit per level (111,111 nodes):
    488,889/500,000 by hand; the nodes-by-values table would take 89 GB."""
    from fairanon.instances.builders import masking_hierarchy

    codes = [f"{i:05d}" for i in range(100_000)]
    ground = M.EMDGround.hierarchical(masking_hierarchy(codes, levels=4), codes)
    exact, within, peak = _one_record_against_uniform(ground, len(codes))
    assert exact == _masked_emd_by_hand(5) == Fraction(488_889, 500_000) and within == [True, False]
    assert peak < 100 * 10**6
