"""Activation checkpointing: run a block without keeping what its operations save for
backward, and recompute it when backward needs those values. Built on saved-tensor hooks:
the block's graph is recorded as usual, but each saved value is packed as its index in the
block; the first unpack in a backward runs the block again and collects them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import random
from .._mode import enable_grad
from .._tensor import Tensor
from ..autograd import _engine
from ..autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential"]


class _Frame:
    """One checkpointed call: its function and inputs, and while a backward runs, the
    values that the recomputation saved, in the order the first run saved them."""

    def __init__(
        self, function: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any], rng: Any
    ) -> None:
        self.function = function
        self.args = args
        self.kwargs = kwargs
        self.rng = rng
        self.count = 0
        self.values: list[Tensor | None] = []
        self.run: object | None = None

    def pack(self, t: Tensor) -> int:
        index = self.count
        self.count += 1
        return index

    def unpack(self, index: int) -> Tensor:
        run = _engine.current_run()
        if self.run is not run or self.values[index] is None:
            self.run = run
            self.values = self._recompute()
        value = self.values[index]
        self.values[index] = None  # each value is unpacked once per backward
        return value

    def _recompute(self) -> list[Tensor | None]:
        values: list[Tensor | None] = []

        def collect(t: Tensor) -> int:
            values.append(t.detach())
            return len(values) - 1

        args = tuple(
            a.detach().requires_grad_(a.requires_grad) if a.__class__ is Tensor else a
            for a in self.args
        )
        state = None
        if self.rng is not None:
            state = random.get_rng_state()
            random.set_rng_state(self.rng)
        try:
            with enable_grad(), saved_tensors_hooks(collect, lambda i: values[i]):
                self.function(*args, **self.kwargs)
        finally:
            if state is not None:
                random.set_rng_state(state)
        if len(values) != self.count:
            raise RuntimeError(
                "checkpoint: the recomputation saved "
                f"{len(values)} values where the first run saved {self.count}: the "
                "checkpointed function must compute the same operations each time"
            )
        return values


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    preserve_rng_state: bool = True,
    **kwargs: Any,
) -> Any:
    """`function(*args, **kwargs)`, keeping none of the values its operations save for
    backward: backward runs it once more to get them. Gradients are the same (to any order:
    double backward works), memory holds only the inputs. With preserve_rng_state the
    recomputation draws the same random numbers (chainrule.random's default generator)."""
    if use_reentrant:
        raise NotImplementedError(
            "checkpoint(use_reentrant=True) is not implemented: chainrule recomputes through "
            "saved-tensor hooks (use_reentrant=False), which also supports double backward"
        )
    frame = _Frame(function, args, kwargs, random.get_rng_state() if preserve_rng_state else None)
    with saved_tensors_hooks(frame.pack, frame.unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(
    functions: Sequence[Callable[..., Any]] | Any,
    segments: int,
    input: Any,
    use_reentrant: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Run `functions` (a sequence, or a module whose children run in order) one after the
    other on `input`, in `segments` checkpointed chunks; the last chunk runs normally (its
    values are needed at once by backward)."""
    if not isinstance(functions, Sequence):
        functions = list(functions.children())
    functions = list(functions)
    if segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be positive, got {segments}")
    size = -(-len(functions) // segments)

    def run(chunk: list[Callable[..., Any]]) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for f in chunk:
                x = f(x)
            return x

        return forward

    chunks = [functions[i : i + size] for i in range(0, len(functions), size)]
    for chunk in chunks[:-1]:
        input = checkpoint(run(chunk), input, use_reentrant=use_reentrant, **kwargs)
    return run(chunks[-1])(input) if chunks else input
