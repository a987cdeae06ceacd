"""chainrule.utils.tree: pytrees of tuples, lists, dicts, OrderedDicts and namedtuples with
every other value a leaf (None included), as PyTorch's pytree; flatten and unflatten round
trips, leaf order, tree_map over several trees, any depth."""

from collections import OrderedDict, namedtuple

import pytest
from hypothesis import given
from hypothesis import strategies as st

import chainrule as cr
from chainrule.utils.tree import (
    TreeSpec,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)

Point = namedtuple("Point", "x y")

LEAVES = st.integers() | st.none() | st.text(max_size=3)
TREES = st.recursive(
    LEAVES,
    lambda children: (
        st.lists(children, max_size=3)
        | st.lists(children, max_size=3).map(tuple)
        | st.dictionaries(st.text(max_size=2), children, max_size=3)
        | st.builds(Point, children, children)
    ),
    max_leaves=12,
)


def same(a, b) -> bool:
    """Equal, with the same container types and key orders."""
    return repr(a) == repr(b) and type(a) is type(b)


@given(TREES)
def test_unflatten_of_flatten_gives_the_tree_back(tree):
    leaves, spec = tree_flatten(tree)
    assert spec.num_leaves == len(leaves)
    assert same(tree_unflatten(leaves, spec), tree)
    assert tree_leaves(tree) == leaves
    assert tree_structure(tree) == spec


@given(TREES)
def test_tree_map_replaces_the_leaves_in_order(tree):
    n = len(tree_leaves(tree))
    counter = iter(range(n))
    numbered = tree_map(lambda _: next(counter), tree)
    assert tree_leaves(numbered) == list(range(n))
    assert tree_structure(numbered) == tree_structure(tree)
    pairs = tree_map(lambda a, b: (a, b), tree, numbered)
    assert tree_leaves(pairs) == [v for pair in zip(tree_leaves(tree), range(n)) for v in pair]


def test_leaves_come_left_to_right_and_dicts_in_key_order():
    tree = {"b": [1, None, (2, 3)], "a": Point(4, {"z": 5}), "e": (), "o": OrderedDict(q=6)}
    leaves, spec = tree_flatten(tree)
    assert leaves == [1, None, 2, 3, 4, 5, 6]
    rebuilt = tree_unflatten(range(7), spec)
    assert list(rebuilt) == ["b", "a", "e", "o"]
    assert isinstance(rebuilt["a"], Point) and isinstance(rebuilt["o"], OrderedDict)
    del tree["o"]
    assert repr(tree_structure(tree)) == (
        "TreeSpec({'b': [*, *, (*, *)], 'a': Point(x=*, y={'z': *}), 'e': ()})"
    )


def test_none_and_other_values_are_leaves():
    assert tree_flatten(None)[0] == [None]
    t = cr.ones(2)
    assert tree_leaves([t, None, 3.0]) == [t, None, 3.0]
    assert tree_map(lambda v: v is None, [None, 1]) == [True, False]


def test_structures_differ_by_container_type_and_keys():
    assert tree_structure((1, 2)) != tree_structure([1, 2])
    assert tree_structure({"a": 1}) != tree_structure({"b": 1})
    assert tree_structure(Point(1, 2)) != tree_structure((1, 2))
    assert tree_structure({"a": 1, "b": 2}) != tree_structure({"b": 2, "a": 1})
    assert hash(tree_structure([1, (2,)])) == hash(tree_structure([5, (6,)]))


def test_is_leaf_stops_at_a_container():
    tree = [(1, 2), [3]]
    assert tree_leaves(tree, is_leaf=lambda x: isinstance(x, tuple)) == [(1, 2), 3]


def test_mismatched_structures_and_leaf_counts_raise():
    with pytest.raises(ValueError, match="different structures"):
        tree_map(lambda a, b: a, [1, 2], (1, 2))
    with pytest.raises(ValueError, match="holds 2 items"):
        tree_unflatten([1], tree_structure([1, 2]))
    with pytest.raises(TypeError):
        tree_unflatten([1], [1])
    assert isinstance(tree_structure(1), TreeSpec)


def test_trees_of_any_depth():
    deep = None
    for i in range(100_000):
        deep = [i, deep] if i % 2 else {"k": deep}
    leaves, spec = tree_flatten(deep)
    assert len(leaves) == 50_001
    assert tree_leaves(tree_unflatten(leaves, spec)) == leaves
