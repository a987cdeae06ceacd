"""einops' main API (`einops.rearrange`, `reduce`, `repeat`, `einsum`, `pack`) on chainrule
tensors. einops finds a backend among the subclasses of its AbstractBackend whose framework is
imported; chainrule defines one when einops is installed. Every operation is one of
chainrule's functions, so the results are differentiable. (`einops.array_api` needs nothing:
it calls the tensors' `__array_namespace__`.)"""

from __future__ import annotations

from . import _namespace as ops
from ._einsum import einsum
from ._tensor import Tensor

try:
    from einops._backends import AbstractBackend
except ImportError:  # einops is not installed: nothing to register
    AbstractBackend = object

__all__ = ["ChainruleBackend"]

_REDUCTIONS = frozenset(("sum", "mean", "max", "min", "prod", "any", "all"))


class ChainruleBackend(AbstractBackend):
    """einops' operations written with chainrule's functions."""

    framework_name = "chainrule"

    def is_appropriate_type(self, tensor) -> bool:
        return isinstance(tensor, Tensor)

    def from_numpy(self, x):
        return ops.asarray(x)

    def to_numpy(self, x):
        return x.detach().numpy()

    def arange(self, start, stop):
        return ops.arange(start, stop)

    def reshape(self, x, shape):
        return ops.reshape(x, tuple(shape))

    def transpose(self, x, axes):
        return ops.permute_dims(x, tuple(axes))

    def reduce(self, x, operation, axes):
        if operation not in _REDUCTIONS:
            raise NotImplementedError(f"einops reduction {operation!r} on chainrule tensors")
        return getattr(ops, operation)(x, axis=tuple(axes))

    def stack_on_zeroth_dimension(self, tensors: list):
        return ops.stack(tensors)

    def add_axis(self, x, new_position):
        return ops.expand_dims(x, axis=new_position)

    def add_axes(self, x, n_axes, pos2len):
        # New axes of size 1, broadcast to their lengths (a view; its gradient is a sum).
        shape = [1] * n_axes
        for position, length in sorted(pos2len.items()):
            x = self.add_axis(x, position)
            shape[position] = length
        full = tuple(n if i in pos2len else x.shape[i] for i, n in enumerate(shape))
        return ops.broadcast_to(x, full)

    def tile(self, x, repeats):
        return ops.tile(x, tuple(repeats))

    def concat(self, tensors, axis: int):
        return ops.concat(tensors, axis=axis)

    def is_float_type(self, x) -> bool:
        return x.dtype in (ops.float32, ops.float64)

    def einsum(self, pattern, *x):
        return einsum(pattern, *x)
