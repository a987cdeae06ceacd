"""Pytrees: nested tuples, lists, dicts (and OrderedDicts, namedtuples) whose other values,
None included, are leaves, as PyTorch's pytree sees them. `tree_flatten` gives the leaves in
order and a TreeSpec of the structure; `tree_unflatten` rebuilds it. Iterative: any depth."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

__all__ = [
    "TreeSpec",
    "tree_flatten",
    "tree_leaves",
    "tree_map",
    "tree_structure",
    "tree_unflatten",
]

# A node of the structure: (kind, context, number of children); kind is a container type,
# context what rebuilding it needs besides its children (a dict's keys, a namedtuple's
# class). A leaf is _LEAF.
_LEAF = None
_CONTAINERS = (tuple, list, dict, OrderedDict)


def _children(x: Any, is_leaf: Callable[[Any], bool] | None):
    """(node, children) of x, or None for a leaf."""
    if is_leaf is not None and is_leaf(x):
        return None
    kind = x.__class__
    if kind in _CONTAINERS:
        if kind is dict or kind is OrderedDict:
            keys = tuple(x)
            return (kind, keys, len(keys)), [x[k] for k in keys]
        return (kind, None, len(x)), list(x)
    if isinstance(x, tuple) and hasattr(kind, "_fields"):  # a namedtuple
        return (tuple, kind, len(x)), list(x)
    return None


def _build(node: tuple, children: list) -> Any:
    kind, context, _ = node
    if kind is tuple:
        return tuple(children) if context is None else context(*children)
    if kind is list:
        return children
    return kind(zip(context, children))


class TreeSpec:
    """The structure of a pytree: its containers, their keys, and where the leaves go."""

    __slots__ = ("nodes", "num_leaves")

    def __init__(self, nodes: tuple) -> None:
        self.nodes = nodes  # in pre-order: each container before its children, in order
        self.num_leaves = sum(1 for n in nodes if n is _LEAF)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """The pytree of this structure holding `leaves`."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise ValueError(
                f"treespec.unflatten(leaves): `leaves` has length {len(leaves)} but the spec "
                f"refers to a pytree that holds {self.num_leaves} items ({self})."
            )
        # Reverse pre-order: a container's children are on the stack, first on top.
        stack: list = []
        k = len(leaves)
        for node in reversed(self.nodes):
            if node is _LEAF:
                k -= 1
                stack.append(leaves[k])
            else:
                children = [stack.pop() for _ in range(node[2])]
                stack.append(_build(node, children))
        return stack[0]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TreeSpec) and self.nodes == other.nodes

    def __hash__(self) -> int:
        return hash(self.nodes)

    def __repr__(self) -> str:
        return f"TreeSpec({self.unflatten(_Star() for _ in range(self.num_leaves))!r})"


class _Star:
    def __repr__(self) -> str:
        return "*"


def tree_flatten(
    tree: Any, is_leaf: Callable[[Any], bool] | None = None
) -> tuple[list[Any], TreeSpec]:
    """The leaves of `tree`, left to right (a dict's in its keys' order), and its structure.
    `is_leaf(x)` true makes x a leaf even if it is a container."""
    leaves = []
    nodes = []
    stack = [tree]
    while stack:
        x = stack.pop()
        split = _children(x, is_leaf)
        if split is None:
            nodes.append(_LEAF)
            leaves.append(x)
            continue
        node, children = split
        nodes.append(node)
        stack.extend(reversed(children))
    return leaves, TreeSpec(tuple(nodes))


def tree_unflatten(leaves: Iterable[Any], treespec: TreeSpec) -> Any:
    """The pytree of structure `treespec` holding `leaves`."""
    if not isinstance(treespec, TreeSpec):
        raise TypeError(f"tree_unflatten(leaves, treespec): expected a TreeSpec, got {treespec!r}")
    return treespec.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of `tree`, left to right."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> TreeSpec:
    """The structure of `tree`."""
    return tree_flatten(tree, is_leaf)[1]


def tree_map(
    func: Callable[..., Any],
    tree: Any,
    *rests: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """`tree` with each leaf x replaced by func(x, *the leaves of `rests` in its place);
    `rests` are pytrees of the same structure."""
    leaves, spec = tree_flatten(tree, is_leaf)
    others = []
    for rest in rests:
        rest_leaves, rest_spec = tree_flatten(rest, is_leaf)
        if rest_spec != spec:
            raise ValueError(
                f"tree_map: the trees have different structures: {spec} and {rest_spec}"
            )
        others.append(rest_leaves)
    return spec.unflatten(func(*xs) for xs in zip(leaves, *others))
