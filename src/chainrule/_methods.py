"""Tensor's operators and array methods that come from the layers above the graph: the one
table that `Tensor` is completed from, bound once when chainrule is imported (PyTorch's named
methods come from `_torch_methods`). Everything else of Tensor is in its class body
(`_tensor.py`)."""

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
from ._torch_methods import TORCH_METHODS
from ._torch_sorting import SORTING_METHODS
from .autograd._backward import backward, get_grad_dtype, set_grad_dtype

__all__ = ["METHODS"]


def _reflect(op):
    def reflected(self, other):
        return op(other, self)

    reflected.__name__ = f"reflected_{op.__name__}"
    return reflected


def _backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradient of this tensor into the leaves' `.grad` (see
    chainrule.autograd.backward)."""
    backward(self, None if gradient is None else (gradient,), retain_graph, create_graph, inputs)


# Methods both PyTorch and NumPy have, with different meanings: x.std() is the sample standard
# deviation in PyTorch (correction=1) and the population one in NumPy (ddof=0); x.max(1) is a
# (values, indices) pair in PyTorch, x.max(axis=1) the values in NumPy. A call with one of
# NumPy's keywords (axis=, ddof=, keepdims=, out=) and none of PyTorch's takes NumPy's meaning;
# every other call (positional, dim=, keepdim=, correction=, unbiased=) takes PyTorch's.
_BOTH = ("std", "var", "max", "min", "all", "any", "squeeze")
_NUMPY_KEYWORDS = frozenset(("axis", "ddof", "keepdims", "out"))
_TORCH_KEYWORDS = frozenset(("dim", "keepdim", "correction", "unbiased"))


def _either(name):
    torch_method, numpy_method = TORCH_METHODS[name], NUMPY_METHODS[name]

    def method(self, *args, **kwargs):
        if not _NUMPY_KEYWORDS.isdisjoint(kwargs) and _TORCH_KEYWORDS.isdisjoint(kwargs):
            return numpy_method(self, *args, **kwargs)
        return torch_method(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = (
        f"{torch_method.__doc__} With NumPy's keywords (axis=, ddof=, keepdims=, out=) and "
        "none of PyTorch's, NumPy's method."
    )
    return method


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
    "grad_dtype": property(get_grad_dtype, set_grad_dtype, doc=get_grad_dtype.__doc__),
    "abs": abs,
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
    # PyTorch's names and keywords (x.sum(dim=1), x.view(-1), x.add_(y)): composites.
    **TORCH_METHODS,
    **SORTING_METHODS,
    # NumPy's ndarray methods (x.ravel(), x.astype(...), x.fill(0)); where both libraries
    # have the name, the keywords choose (below).
    **{name: m for name, m in NUMPY_METHODS.items() if name not in TORCH_METHODS},
    **{name: _either(name) for name in _BOTH},
    # NumPy's dot: the same as PyTorch's on two 1-D tensors, and defined beyond them.
    "dot": NUMPY_METHODS["dot"],
}

for _name, _method in METHODS.items():
    setattr(Tensor, _name, _method)
