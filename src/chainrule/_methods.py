"""Tensor's operators and array methods that come from the layers above the graph: the one
table that `Tensor` is completed from, bound once when chainrule is imported. Everything
else of Tensor is in its class body (`_tensor.py`)."""

from __future__ import annotations

from . import _interop, _lazy, _namespace
from ._inplace import INPLACE_OPERATORS, setitem
from ._namespace import (
    abs,
    add,
    bitwise_and,
    bitwise_invert,
    bitwise_left_shift,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    divide,
    equal,
    floor_divide,
    greater,
    greater_equal,
    less,
    less_equal,
    matmul,
    matrix_transpose,
    multiply,
    negative,
    not_equal,
    permute_dims,
    positive,
    pow,
    remainder,
    subtract,
)
from ._numpy_methods import NUMPY_METHODS
from ._tensor import Tensor
from .autograd import backward

__all__ = ["METHODS"]


def _reflect(op):
    def reflected(self, other):
        return op(other, self)

    reflected.__name__ = f"reflected_{op.__name__}"
    return reflected


def _sum(self, axis=None, keepdims=False, dtype=None):
    """The sum over `axis` (see chainrule.sum)."""
    return _namespace.sum(self, axis=axis, keepdims=keepdims, dtype=dtype)


def _mean(self, axis=None, keepdims=False):
    """The mean over `axis` (see chainrule.mean)."""
    return _namespace.mean(self, axis=axis, keepdims=keepdims)


def _reshape(self, *shape):
    """This tensor in a new shape (`t.reshape(2, 3)` or `t.reshape((2, 3))`)."""
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = shape[0]
    return _namespace.reshape(self, shape)


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradient of this tensor into the leaves' `.grad` (see
    chainrule.autograd.backward)."""
    backward(self, None if gradient is None else (gradient,), retain_graph, create_graph, inputs)


_BINARY = {
    "add": add, "sub": subtract, "mul": multiply, "truediv": divide, "floordiv": floor_divide,
    "mod": remainder, "pow": pow, "matmul": matmul, "and": bitwise_and, "or": bitwise_or,
    "xor": bitwise_xor, "lshift": bitwise_left_shift, "rshift": bitwise_right_shift,
}  # fmt: skip

METHODS = {
    # Operators are the primitives themselves: no wrapper on the hot path.
    **{f"__{name}__": op for name, op in _BINARY.items()},
    **{f"__r{name}__": _reflect(op) for name, op in _BINARY.items()},
    **INPLACE_OPERATORS,
    "__neg__": negative,
    "__pos__": positive,
    "__abs__": abs,
    "__invert__": bitwise_invert,
    "__eq__": equal,
    "__ne__": not_equal,
    "__lt__": less,
    "__le__": less_equal,
    "__gt__": greater,
    "__ge__": greater_equal,
    "__getitem__": _namespace.getitem,
    "__setitem__": setitem,
    # NumPy's ufuncs and functions dispatch to chainrule (so `ndarray * t` is a Tensor too).
    "__array_ufunc__": _interop.array_ufunc,
    "__array_function__": _interop.array_function,
    "__array_namespace__": _interop.array_namespace,
    "__dlpack__": _interop.dlpack,
    "__dlpack_device__": _interop.dlpack_device,
    "to_device": _interop.to_device,
    "backward": _backward,
    "sum": _sum,
    "mean": _mean,
    "reshape": _reshape,
    "abs": abs,
    # NumPy's ndarray methods (x.ravel(), x.std(axis=0, ddof=1), x.max(axis=1), x.fill(0)).
    **NUMPY_METHODS,
    "T": property(
        lambda self: permute_dims(self, tuple(range(self.ndim))[::-1]),
        doc="This tensor with its axes reversed (the transpose of a matrix).",
    ),
    "mT": property(
        matrix_transpose, doc="This tensor with its last two axes swapped (stacked transposes)."
    ),
    # Lazy libraries (Dask): a tensor on Dask is a Dask collection.
    "compute": _lazy.compute,
    "persist": _lazy.persist,
    **_lazy.DASK_PROTOCOL,
}

for _name, _method in METHODS.items():
    setattr(Tensor, _name, _method)
