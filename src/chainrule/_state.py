"""Process-wide state, one object (`STATE`): counters that let the fast paths skip work, the
hooks by which features built above the tensor layer (forward mode, vmap) take part in every
operation, and compile's cost estimate. Thread-local modes are `_mode`'s. No numerics depend
on anything here: it only decides which (equivalent) path runs."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["STATE", "State", "OperationHook"]

# A feature's part of an operation: `hook(rule, xs, outs, p, results)`, called after the
# operation of `rule` on inputs `xs` (tensors or Python scalars), static parameters `p`, made
# raw outputs `outs` and their tensors `results` (recorded or not). It may set attributes of
# the results (a tangent, a reroute through a lift); it returns nothing.
OperationHook = Callable[[Any, tuple, tuple, Any, tuple], None]


class State:
    """Process-wide state. Counters are plain integers changed under the GIL; hooks are None
    until the module that provides them is imported (importing chainrule imports them all)."""

    __slots__ = (
        "inplace_writes",
        "live_hooks",
        "batched_nodes",
        "forward",
        "vmap",
        "forward_lean",
        "lift",
        "cast",
        "source_cost",
    )

    def __init__(self) -> None:
        # In-place writes so far: while 0, no saved value can be stale and the engine skips
        # the version checks (W1-W5 never write in place).
        self.inplace_writes = 0
        # Hooks registered and not removed, on any node or leaf, and non-leaves retaining
        # their grad: while 0 the engine never looks for hooks (W1-W6 register none).
        self.live_hooks = 0
        # Live nodes of vmap's boundary (batch, unbatch): while any lives, backward walks
        # compute with vmap's namespace.
        self.batched_nodes = 0
        # The features' parts of every operation (see OperationHook), run while the feature is
        # on (_mode.FEATURES): forward mode gives the results their tangents at the visible
        # dual levels (autograd.forward_ad); vmap routes an input of a lower vmap level than
        # its result through a lift (autograd._batched).
        self.forward: OperationHook | None = None
        self.vmap: OperationHook | None = None
        # Forward mode's lean path for the one- and two-input fast paths, while forward mode
        # at one level is the only feature on (grad_mode.dual): `(rule, x, y, xd, yd, out,
        # p, res, level)` gives `res` its tangent (y and yd None for one input). It takes the
        # fast paths' locals as they are, so that they build no tuples for it.
        self.forward_lean: Callable[..., None] | None = None
        # vmap's lift: `(tensor, xp)` gives a tensor that requires grad or carries a tangent,
        # of a library below vmap's, as a tensor of the innermost vmap level (the same value
        # for every sample, its gradient summed over the batch), or None outside vmap.
        self.lift: Callable[[Any, Any], Any] | None = None
        # The rule table's cast, an operation `([tensor], dtype)` (recorded as any, so that
        # compile's trace holds it): the factories cast integer inputs with it where their
        # result takes the default floating dtype (_factories._default_floating).
        self.cast: Callable[[Any, Any], Any] | None = None
        # compile: the expected seconds per instruction of compiling a replay to Python
        # source, averaged with each compilation's measure (when a replay turns to source).
        self.source_cost = 20e-6


STATE = State()
