"""In-place operators and item assignment on tensors.

A write to a tensor that needs no grad happens in place, as the standard says (views see it),
and bumps its version, so that a node that saved it refuses to run. A write that involves a
tensor needing grad is recorded as an operation: the tensor gets a new value and grad_fn, and
the gradient flows to both its old value and the written one. A leaf that requires grad can't
be written while grad mode is on; under no_grad (an optimizer step) it gets a new array."""

from __future__ import annotations

import operator

from . import _backend
from ._namespace import (
    _index_key,
    add,
    astype,
    bitwise_and,
    bitwise_left_shift,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    divide,
    floor_divide,
    matmul,
    multiply,
    pow,
    remainder,
    subtract,
)
from ._rules import OPS
from ._tensor import (
    _SCALARS,
    ALIAS,
    AccumulateGrad,
    Tensor,
    constant,
    grad_mode,
    inplace_writes,
    mixed_error,
    no_grad,
)

_LEAF = "a leaf Variable that requires grad is being used in an in-place operation."


def _records(t: Tensor, value) -> bool:
    """Whether writing `value` into `t` must be recorded; raises for a leaf needing grad."""
    if not grad_mode.enabled:
        return False
    e = t._edge
    if e is not None and e.__class__ is AccumulateGrad:
        raise RuntimeError(_LEAF)
    return e is not None or (value.__class__ is Tensor and value._edge is not None)


def _in_place_ok(t: Tensor) -> bool:
    """Whether t's array may be written in place: t needs no grad and aliases no graph."""
    return t._edge is None and getattr(t, "_version", None) is not ALIAS


def _bump(t: Tensor) -> None:
    cell = getattr(t, "_version", None)
    if cell is not None:
        cell[0] += 1
    inplace_writes[0] += 1


def _same_library(t: Tensor, value, name: str) -> None:
    if value.__class__ is Tensor and value._xp is not t._xp:
        mixed_error(f"in-place {name}", t._xp, value._xp)


def _take_value(t: Tensor, new: Tensor, name: str, recorded: bool = True) -> None:
    """Give t the value of `new` (and its history when recorded), which must keep t's shape
    and dtype kind."""
    if new.shape != t.shape:
        raise ValueError(
            f"in-place {name}: the result has shape {new.shape}, "
            f"but the tensor written has shape {t.shape}"
        )
    if new._data.dtype != t._data.dtype:
        if not _backend.np.can_cast(new.dtype, t.dtype, casting="same_kind"):
            raise TypeError(
                f"in-place {name}: the result dtype {new.dtype} can't be cast to {t.dtype}"
            )
        new = astype(new, t.dtype)
    t._data = new._data
    if recorded:
        t._edge = new._edge
        t._version = None


def _inplace_operator(op, raw_op, name: str):
    def method(self: Tensor, other):
        if _records(self, other):
            _take_value(self, op(self, other), name)
            return self
        if not _in_place_ok(self):
            with no_grad():
                _take_value(self, op(self, other), name, recorded=False)
            return self
        _same_library(self, other, name)
        value = other if other.__class__ in _SCALARS else constant(other, self._xp)._data
        self._data = raw_op(self._data, value)
        _bump(self)
        return self

    method.__name__ = f"__i{name}__"
    return method


def _setitem(self: Tensor, key, value) -> None:
    key = _index_key(key, self._xp)
    if _records(self, value):
        v = value if value.__class__ is Tensor else constant(value, self._xp)
        _take_value(self, OPS["setitem"]((self, v), (key, v.shape)), "setitem")
        return
    _same_library(self, value, "setitem")
    v = value._data if value.__class__ is Tensor else value
    if not _in_place_ok(self):
        data = self._xp.asarray(self._data, copy=True)
        data[key] = v
        self._data = data
        return
    self._data[key] = v
    _bump(self)


def bind() -> None:
    for name, op, raw_op in (
        ("add", add, operator.iadd),
        ("sub", subtract, operator.isub),
        ("mul", multiply, operator.imul),
        ("truediv", divide, operator.itruediv),
        ("floordiv", floor_divide, operator.ifloordiv),
        ("mod", remainder, operator.imod),
        ("pow", pow, operator.ipow),
        ("matmul", matmul, operator.imatmul),
        ("and", bitwise_and, operator.iand),
        ("or", bitwise_or, operator.ior),
        ("xor", bitwise_xor, operator.ixor),
        ("lshift", bitwise_left_shift, operator.ilshift),
        ("rshift", bitwise_right_shift, operator.irshift),
    ):
        setattr(Tensor, f"__i{name}__", _inplace_operator(op, raw_op, name))
    Tensor.__setitem__ = _setitem


bind()
