"""vmap's levels inside autograd: entering and leaving a level, lifting a tensor of a lower
level (or of the library below) into one, and vmap's part of every operation, which routes
such tensors' gradients through a lift (summed over the batch). chainrule.func.vmap and
`grad(..., is_grads_batched=True)` are built on these."""

from __future__ import annotations

import itertools
from typing import Any

from .. import _rules
from .._batching import level_of
from .._mode import set_feature
from .._node import node_of
from .._state import STATE
from .._tensor import Tensor, grad_mode

__all__ = ["enter", "leave", "lift", "unbatched"]

_LEVELS = itertools.count(1)


def enter(n: int, randomness: str = "error") -> tuple[int, tuple]:
    """Open a vmap level of batch size n inside the active ones: (the level, what `leave`
    restores)."""
    level = next(_LEVELS)
    prev = grad_mode.vmap
    set_feature("vmap", prev + ((level, n, randomness),))
    return level, prev


def leave(prev: tuple) -> None:
    set_feature("vmap", prev)


def lift(t: Tensor, level: int | None = None) -> Tensor:
    """t, a tensor of a library (or vmap level) below the innermost level (or `level`), as a
    tensor of that level: the same value for every sample, recorded (its gradient is the sum
    over the batch)."""
    for lv, n, _ in reversed(grad_mode.vmap):
        if level is None or lv == level:
            return _rules.OPS["batch"](t, (lv, n, None))
    raise RuntimeError(f"vmap level {level} is not active")


def unbatched(t: Tensor, level: int, n: int, axis: int) -> Tensor:
    """t, a result at vmap level `level`, out of it with the batch at `axis`: a value the same
    for every sample is expanded (and its tangents and gradients, which may differ per
    sample, are still taken out of the level)."""
    if level_of(t._data) != level:
        t = _rules.OPS["batch"](t, (level, n, None))
    return _rules.OPS["unbatch"](t, (level, n, axis))


def _lift_constant(obj: Tensor, xp: Any) -> Tensor | None:
    """STATE.lift: a tensor that requires grad or carries a tangent joining an operation on
    Batched arrays."""
    if not grad_mode.vmap:
        return None
    return lift(obj)


def _reroute(rule, xs, outs, p, results) -> None:
    """vmap's part of every operation (STATE.vmap): an input that requires grad and is of a
    level below the result's reaches the node through a lift, so that its gradient is summed
    over the result's batch instead of arriving batched."""
    r = results[0]
    e = r._edge
    top = level_of(r._data)
    if e is None or not top or rule is _BATCH:
        return
    node = node_of(e)
    edges = None
    for i, x in enumerate(xs):
        if x.__class__ is Tensor and x._edge is not None and level_of(x._data) < top:
            if edges is None:
                edges = list(node.edges)
            edges[i] = _rules.OPS["batch"](x, (top, r._data.n, None))._edge
    if edges is not None:
        node.edges = tuple(edges)


_BATCH = _rules.RULES["batch"]
STATE.lift = _lift_constant
STATE.vmap = _reroute
