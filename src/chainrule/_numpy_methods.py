"""Tensor methods with NumPy's names and keywords (`x.ravel()`, `x.astype(float32)`,
`x.std(axis=0, ddof=1)`, `x.max(axis=1)`, `x.fill(0.0)`, `x.flat`), as ndarray has them:
composites of chainrule's functions, so each differentiates to any order. `_methods` binds
this table."""

from __future__ import annotations

from typing import Any

from . import _backend
from . import _namespace as ops
from ._inplace import setitem
from ._tensor import Tensor, constant
from ._typing import ArrayLike, Axis, DTypeLike

__all__ = ["NUMPY_METHODS", "FlatIter"]

np = _backend.np


def _no_out(out: Any, name: str) -> None:
    if out is not None:
        raise TypeError(f"chainrule does not implement Tensor.{name} with out=; assign the result")


def _order(order: str, name: str) -> None:
    if order not in ("C", "K", "A"):
        raise NotImplementedError(f"Tensor.{name}: chainrule keeps C order only, not {order!r}")


def ravel(self: Tensor, order: str = "C") -> Tensor:
    """The elements as a 1-D tensor (NumPy's ravel)."""
    _order(order, "ravel")
    return ops.reshape(self, (-1,))


def flatten(self: Tensor, order: str = "C") -> Tensor:
    """The elements as a new 1-D tensor (NumPy's flatten)."""
    _order(order, "flatten")
    return ops.reshape(ops.asarray(self, copy=True), (-1,))


def squeeze(self: Tensor, axis: Axis = None) -> Tensor:
    """This tensor without its axes of size 1 (only those in `axis`, when given)."""
    if axis is None:
        axis = tuple(i for i, n in enumerate(self.shape) if n == 1)
    return ops.squeeze(self, axis=axis)


def astype(self: Tensor, dtype: DTypeLike, copy: bool = True) -> Tensor:
    """This tensor in `dtype` (see chainrule.astype)."""
    return ops.astype(self, dtype, copy=copy)


def conj(self: Tensor) -> Tensor:
    """The complex conjugate (see chainrule.conj)."""
    return ops.conj(self)


def _reduction(name: str, doc: str) -> Any:
    """NumPy's method `name` (all, any, max, min): chainrule's function over `axis`."""

    def method(self: Tensor, axis: Axis = None, out: Any = None, keepdims: bool = False) -> Tensor:
        _no_out(out, name)
        return getattr(ops, name)(self, axis=axis, keepdims=keepdims)

    method.__name__ = name
    method.__doc__ = doc
    return method


def _spread(name: str) -> Any:
    def method(
        self: Tensor,
        axis: Axis = None,
        dtype: DTypeLike = None,
        out: Any = None,
        ddof: float = 0,
        keepdims: bool = False,
    ) -> Tensor:
        _no_out(out, name)
        x = self if dtype is None else ops.astype(self, dtype)
        return getattr(ops, name)(x, axis=axis, correction=ddof, keepdims=keepdims)

    method.__name__ = name
    method.__doc__ = (
        f"The {'standard deviation' if name == 'std' else 'variance'} over `axis` (all axes "
        "when None), with NumPy's default `ddof=0` (the population one)."
    )
    return method


def dot(self: Tensor, b: ArrayLike) -> Tensor:
    """numpy.dot(self, b): a product with a scalar, matmul up to a 2-D `b`, else the sum
    over the last axis of self and the second-to-last of b."""
    if b.__class__ in (bool, int, float, complex):
        return ops.multiply(self, b)
    b = ops.asarray(b)
    if self.ndim == 0 or b.ndim == 0:
        return ops.multiply(self, b)
    if b.ndim <= 2:
        return ops.matmul(self, b)
    return ops.tensordot(self, b, axes=((self.ndim - 1,), (b.ndim - 2,)))


def copy(self: Tensor) -> Tensor:
    """A copy of this tensor that keeps its history (the gradient flows back to it)."""
    return ops.asarray(self, copy=True)


def fill(self: Tensor, value: ArrayLike) -> None:
    """Fill this tensor with `value`, in place (NumPy's fill; written as item assignment)."""
    setitem(self, ..., value)


def clip(self: Tensor, min: ArrayLike = None, max: ArrayLike = None) -> Tensor:  # noqa: A002
    """This tensor limited to [min, max] (see chainrule.clip)."""
    return ops.clip(self, min=min, max=max)


class FlatIter:
    """NumPy's `a.flat` of a tensor: its elements in C order as if it were 1-D. Indexing reads
    a copy (`a.flat[::4]`, `a.flat[[0, 5]]`, `a.flat[3]`: gathered, differentiable); item
    assignment writes the tensor in place (`a.flat[:: n + 1] += alpha`: item assignment of
    the tensor at the positions selected, so recorded where grad is needed), the values
    repeated in order when fewer than the positions, as NumPy's. Iterating yields the
    elements as 0-d tensors."""

    __slots__ = ("base",)

    def __init__(self, base: Tensor) -> None:
        self.base = base

    def __len__(self) -> int:
        return self.base.size

    def __iter__(self):
        return iter(ops.reshape(self.base, (-1,)))

    def _positions(self, key: Any):
        """The flat positions `key` selects, as NumPy's indexing of range(size) gives them
        (an integer, slice, ellipsis, integer or boolean array or list, tensors included)."""
        if key.__class__ is Tensor or isinstance(key, list | tuple):
            key = np.asarray(key)
        return np.arange(self.base.size)[key]

    def __getitem__(self, key: Any) -> Tensor:
        positions = self._positions(key)
        flat = ops.reshape(self.base, (-1,))
        if positions.ndim == 0:
            return flat[int(positions)]
        return ops.reshape(flat[positions.reshape(-1).tolist()], positions.shape)

    def __setitem__(self, key: Any, value: ArrayLike) -> None:
        positions = self._positions(key).reshape(-1)
        n = positions.size
        if n == 0:
            return
        base = self.base
        xp = base._xp
        value = ops.reshape(value if value.__class__ is Tensor else constant(value, xp), (-1,))
        m = value.shape[0]
        if m == 0:
            raise ValueError("flat assignment of an empty value to a non-empty selection")
        if value.dtype != base.dtype:  # NumPy casts the values to the array's dtype
            value = ops.astype(value, base.dtype)
        # Written as base[...] = where(mask, values at their positions, base): standard
        # operations that every library has (some lack integer-array item assignment). Each
        # position takes the value written there last, as NumPy's; the values repeat in order.
        source = np.zeros(base.size, dtype=np.int64)
        source[positions] = np.arange(n) % m
        mask = np.zeros(base.size, dtype=bool)
        mask[positions] = True
        placed = ops.take(value, constant(source.tolist(), xp), axis=0)
        new = ops.where(
            constant(mask.reshape(base.shape).tolist(), xp),
            ops.reshape(placed, base.shape),
            base,
        )
        setitem(base, ..., new)

    def copy(self) -> Tensor:
        """The elements as a new 1-D tensor (NumPy's flat.copy())."""
        return flatten(self.base)


def _flat(self: Tensor) -> FlatIter:
    return FlatIter(self)


def _set_flat(self: Tensor, value: ArrayLike) -> None:
    FlatIter(self)[...] = value


NUMPY_METHODS = {
    "ravel": ravel,
    "flatten": flatten,
    "squeeze": squeeze,
    "astype": astype,
    "conj": conj,
    "conjugate": conj,
    "all": _reduction("all", "Whether all elements are true over `axis` (all axes when None)."),
    "any": _reduction("any", "Whether any elements are true over `axis` (all axes when None)."),
    "std": _spread("std"),
    "var": _spread("var"),
    "max": _reduction(
        "max", "The maximum over `axis` (all axes when None); ties share the gradient."
    ),
    "min": _reduction(
        "min", "The minimum over `axis` (all axes when None); ties share the gradient."
    ),
    "dot": dot,
    "copy": copy,
    "fill": fill,
    "clip": clip,
    "flat": property(
        _flat,
        _set_flat,
        doc="NumPy's flat iterator of this tensor (see FlatIter); `t.flat = v` "
        "writes every element.",
    ),
}
