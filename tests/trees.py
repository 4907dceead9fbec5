"""Random generalization trees for property tests."""

from hypothesis import strategies as st

from fairanon.instances.hierarchy import Hierarchy


@st.composite
def random_trees(draw, max_nodes: int = 14) -> Hierarchy:
    """A tree under ``*`` whose nodes n1, n2, ... each hang below one drawn among those
    before it: leaves at uneven depths, and chains of single children."""
    parent = {"*": None}
    names = ["*"]
    for i in range(1, draw(st.integers(2, max_nodes))):
        parent[f"n{i}"] = draw(st.sampled_from(names))
        names.append(f"n{i}")
    return Hierarchy(parent)


@st.composite
def some_leaves(draw, tree: Hierarchy) -> list[str]:
    """Some of the tree's leaves (at least one), in a random order."""
    shuffled = draw(st.permutations(tree.leaves))
    return list(shuffled[: draw(st.integers(1, len(shuffled)))])


def node_height(tree: Hierarchy, node: str) -> int:
    """The edges on `node`'s longest path down to a leaf, from the children lists alone
    (0 for a leaf): Li, Li and Venkatasubramanian's height, whose value at the lowest
    common ancestor of two leaves, over the root's, is their hierarchical distance."""
    return max((node_height(tree, c) + 1 for c in tree.children[node]), default=0)
