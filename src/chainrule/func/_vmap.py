"""vmap with torch.func's semantics: f runs once on every sample of a batch at once. Inside,
tensors hold Batched arrays (chainrule._batching), on which each primitive runs once for the
whole batch; the rule table's batch and unbatch rules take tensors in and out of a level, so
gradients flow through vmap, and transforms inside it (grad, jvp) batch too."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .. import _namespace as ops
from .. import _rules
from .. import random as _random
from .._batching import level_of
from .._tensor import Tensor
from ..autograd._batched import enter, leave, unbatched
from ..utils.tree import _children, tree_flatten, tree_leaves, tree_structure, tree_unflatten

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")


def _name(f: Callable) -> str:
    return getattr(f, "__name__", None) or repr(f)


def _dims(dims: Any, tree: Any, what: str, call: str) -> list:
    """One entry of `dims` per leaf of `tree`: `dims` is an int or None, or a tree whose
    structure is a prefix of tree's (an int or None stands for a whole subtree)."""
    kind = "inputs" if what == "in_dims" else "outputs"
    out = []
    stack = [(dims, tree)]
    while stack:
        d, t = stack.pop()
        if d is None or isinstance(d, int):
            out.extend([d] * len(tree_leaves(t)))
            continue
        split = _children(t, None)
        d_split = _children(d, None)
        if d_split is None:
            raise ValueError(
                f"{call}: expected `{what}` to be int or a (potentially nested) tuple matching "
                f"the structure of {kind}, got: {type(d)}."
            )
        if split is None or split[0] != d_split[0]:
            raise ValueError(
                f"{call}: {what} is not compatible with the structure of `{kind}`. {what} has "
                f"structure {tree_structure(dims)} but {kind} has structure "
                f"{tree_structure(tree)}."
            )
        stack.extend(reversed(list(zip(d_split[1], split[1]))))
    return out


def vmap(
    func: Callable,
    in_dims: Any = 0,
    out_dims: Any = 0,
    randomness: str = "error",
    *,
    chunk_size: int | None = None,
) -> Callable:
    """A function that maps `func` over axis `in_dims` of its arguments (per argument: an int,
    None for an argument the same for every sample, or a tree of them) and stacks the results
    along `out_dims`, computing every sample at once. `randomness`: random numbers inside
    raise ('error'), differ per sample ('different') or are shared ('same'). `chunk_size`:
    at most that many samples at a time."""
    if randomness not in _RANDOMNESS:
        raise RuntimeError(
            f"Only allowed values for randomness are 'error', 'different', or 'same'. "
            f"Got {randomness}"
        )
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        name = _name(func)
        call = f"vmap({name}, in_dims={in_dims}, ...)(<inputs>)"
        if not args:
            raise ValueError(
                f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
                "are trying to vmap over a function with no inputs. The latter is unsupported."
            )
        if not isinstance(in_dims, (int, tuple)):
            raise ValueError(
                f"{call}: expected `in_dims` to be int or a (potentially nested) tuple "
                f"matching the structure of inputs, got: {type(in_dims)}."
            )
        leaves, spec = tree_flatten(args)
        dims = _dims(in_dims, args, "in_dims", call)
        sizes = []
        for x, d in zip(leaves, dims):
            if d is None:
                continue
            if x.__class__ is not Tensor:
                raise ValueError(
                    f"{call}: Got in_dim={d} for an input but the input is of type {type(x)}. We "
                    "cannot vmap over non-Tensor arguments, please use None as the respective "
                    "in_dim"
                )
            if not -x.ndim <= d < max(x.ndim, 0) or x.ndim == 0:
                raise ValueError(
                    f"{call}: Got in_dim={d} for some input, but that input is a Tensor of "
                    f"dimensionality {x.ndim} so expected in_dim to satisfy "
                    f"-{x.ndim} <= in_dim < {x.ndim}."
                )
            sizes.append(x.shape[d % x.ndim])
        if not sizes:
            raise ValueError(
                f"{call}: at least one input must be a Tensor mapped over an axis (in_dims "
                "is None for every input)"
            )
        if len(set(sizes)) != 1:
            raise ValueError(
                "vmap: Expected all tensors to have the same size in the mapped dimension, got "
                f"sizes {sizes} for the mapped dimension"
            )
        n = sizes[0]
        dims = [None if d is None else d % x.ndim for x, d in zip(leaves, dims)]
        if chunk_size is None or chunk_size >= n:
            return _run(func, name, leaves, spec, dims, n, kwargs, out_dims, randomness)
        chunks = []
        # 'same': every chunk draws what the first did (one draw for the whole batch)
        state = _random.get_rng_state() if randomness == "same" else None
        for start in range(0, n, chunk_size):
            if state is not None:
                _random.set_rng_state(state)
            stop = min(start + chunk_size, n)
            part = [
                x if d is None else ops.take(x, ops.arange(start, stop), axis=d)
                for x, d in zip(leaves, dims)
            ]
            chunks.append(
                _run(func, name, part, spec, dims, stop - start, kwargs, out_dims, randomness)
            )
            for x, p, d in zip(leaves, part, dims):
                if d is not None and p._version:  # written: its chunk of x takes its values
                    x[(slice(None),) * d + (slice(start, stop),)] = p
        outs = [tree_flatten(c)[0] for c in chunks]
        first, out_spec = tree_flatten(chunks[0])
        o_dims = _dims(out_dims, chunks[0], "out_dims", call)
        joined = [
            o if d is None else ops.concat([c[i] for c in outs], axis=d)
            for i, (o, d) in enumerate(zip(first, o_dims))
        ]
        return tree_unflatten(joined, out_spec)

    return wrapped


def _run(func, name, leaves, spec, dims, n, kwargs, out_dims, randomness) -> Any:
    """func on one batch of n samples: leaves mapped along dims, outputs along out_dims."""
    level, prev = enter(n, randomness)
    try:
        inputs = [
            x if d is None else _rules.OPS["batch"](x, (level, n, d)) for x, d in zip(leaves, dims)
        ]
        versions = [x._version if d is not None else None for x, d in zip(inputs, dims)]
        out = func(*tree_unflatten(inputs, spec), **kwargs)
        for x, inner, d, v in zip(leaves, inputs, dims, versions):
            # A sample written in place is a write into the mapped tensor (as a loop over its
            # samples, x[i], would write it; PyTorch's batched tensors share its memory).
            if d is not None and inner._version != v:
                x[...] = unbatched(inner, level, n, d)
        outputs, out_spec = tree_flatten(out)
        call = f"vmap({name}, ..., out_dims={out_dims})(<inputs>)"
        o_dims = _dims(out_dims, out, "out_dims", call)
        results = []
        for o, d in zip(outputs, o_dims):
            batched = o.__class__ is Tensor and level_of(o._data) == level
            if d is None:
                if batched:
                    raise ValueError(
                        f"vmap({name}, ...): `{name}` can not return a BatchedTensor when "
                        "out_dim is None"
                    )
                results.append(o)
                continue
            if o.__class__ is not Tensor:
                raise ValueError(
                    f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(o)}. "
                    "Did you mean to set out_dims= to None for output?"
                )
            if not -(o.ndim + 1) <= d < o.ndim + 1:
                raise IndexError(
                    f"Dimension out of range (expected to be in range of [{-(o.ndim + 1)}, "
                    f"{o.ndim}], but got {d})"
                )
            results.append(unbatched(o, level, n, d % (o.ndim + 1)))
        return tree_unflatten(results, out_spec)
    finally:
        leave(prev)
