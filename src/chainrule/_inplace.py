"""In-place operators and item assignment on tensors.

A write to a tensor that needs no grad happens in place, as the standard says (views see it),
and bumps its version, so that a node that saved it refuses to run. A write that involves a
tensor needing grad is recorded as an operation: the tensor gets a new value and grad_fn, and
the gradient flows to both its old value and the written one. A leaf that requires grad can't
be written while grad mode is on; under no_grad (an optimizer step) it gets a new array. So
does a tensor whose memory a graph holds (an alias): copy-on-write. In forward mode a write
gives the tensor the tangent of the value written (a view keeps its own tangent). Inside
vmap, a value of a higher level the same for every sample (jacfwd's primals) lifts the tensor
written into that level; one that differs per sample can't be written (RuntimeError)."""

from __future__ import annotations

import operator

from . import _backend, _special_cases
from ._batching import NAMESPACE, Batched, level_of
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
from ._node import AccumulateGrad, VersionCounter, inplace_writes
from ._rules import OPS
from ._tensor import _SCALARS, Tensor, constant, dual, grad_mode, mixed_error, no_grad

__all__ = ["INPLACE_OPERATORS", "setitem"]

_LEAF = "a leaf Variable that requires grad is being used in an in-place operation."


_INFERENCE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed. You can make a "
    "clone to get a normal tensor before doing inplace update."
)


def _records(t: Tensor, value) -> bool:
    """Whether writing `value` into `t` must be recorded; raises for a leaf needing grad and
    for an inference tensor outside inference mode."""
    vc = getattr(t, "_vc", None)
    if vc is not None and vc.inference and not grad_mode.inference:
        raise RuntimeError(_INFERENCE)
    if not grad_mode.enabled:
        return False
    e = t._edge
    if e is not None and e.__class__ is AccumulateGrad:
        raise RuntimeError(_LEAF)
    return e is not None or (value.__class__ is Tensor and value._edge is not None)


def _in_place_ok(t: Tensor) -> bool:
    """Whether t's array may be written in place: t needs no grad and aliases no graph."""
    if t._edge is not None:
        return False
    vc = getattr(t, "_vc", None)
    return vc is None or not vc.alias


def _bump(t: Tensor) -> None:
    """Count a write to t's memory (shared with its views)."""
    vc = getattr(t, "_vc", None)
    if vc is None:
        vc = t._vc = VersionCounter()
    vc.value += 1
    inplace_writes[0] += 1


def _same_library(t: Tensor, value, name: str) -> None:
    if value.__class__ is Tensor and value._xp is not t._xp and t._xp is not NAMESPACE:
        mixed_error(f"in-place {name}", t._xp, value._xp)


def _lifts(t: Tensor, value, name: str) -> bool:
    """Whether writing `value` makes t a tensor of a vmap level above its own: value is of
    such a level but the same for every sample there (a primal lifted only to carry tangents
    per sample, as jacfwd's are). A value that differs per sample can't be written (t would
    need more elements): PyTorch's RuntimeError."""
    if value.__class__ is not Tensor or value._xp is not NAMESPACE:
        return False
    low = level_of(t._data)
    d = value._data
    if level_of(d) <= low:
        return False
    while d.__class__ is Batched and d.level > low:
        if d.value.shape[0] != 1:
            raise RuntimeError(
                f"vmap: in-place {name} is not possible: the value written is vmapped over but "
                "the tensor written is not (it would need more elements). Please use "
                "out-of-place operations instead."
            )
        d = d.value
    return True


def _take_value(t: Tensor, new: Tensor, name: str, recorded: bool = True) -> None:
    """Give t the value of `new` (and its history when recorded), which must keep t's shape
    and dtype kind. t's memory is new: it gets a counter of its own, one version on."""
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
    t._xp = new._xp  # another only where t is lifted into a vmap level (_lifts)
    if recorded:
        t._edge = new._edge
    if grad_mode.forward:
        t._fw = getattr(new, "_fw", None)
    t._vc = VersionCounter(t._version + 1)
    inplace_writes[0] += 1


_KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}
_SCALAR_KIND = {bool: "b", int: "i", float: "f", complex: "c"}


def _check_kind(t: Tensor, value, name: str) -> None:
    """An in-place operator can't write floats into integers, nor complex into reals (checked
    here: not every library says TypeError)."""
    kind = _SCALAR_KIND.get(value.__class__) or _backend.dtype_kind(value.dtype)
    if _KIND_RANK[kind] > _KIND_RANK[t.dtype.kind]:
        what = value.__class__.__name__ if value.__class__ in _SCALARS else value.dtype
        raise TypeError(f"in-place {name}: can't write a {what} value into a tensor of {t.dtype}")


def _inplace_operator(op, raw_op, name: str):
    def method(self: Tensor, other):
        records = _records(self, other)
        lifted = _lifts(self, other, name)
        if records:
            _take_value(self, op(self, other), name)
            return self
        if lifted or not _in_place_ok(self):
            with no_grad():
                _take_value(self, op(self, other), name, recorded=False)
            return self
        _same_library(self, other, name)
        tangents = op(self, other) if dual(self) or dual(other) else None
        value = other if other.__class__ in _SCALARS else constant(other, self._xp)._data
        _check_kind(self, value, name)
        tracer = grad_mode.tracer if grad_mode.extended else None
        if tracer is not None:
            tracer.writing(self)
        out = raw_op(self._data, value)
        if out.shape != self._data.shape:
            # Libraries whose arrays are immutable (JAX) compute `a op b`, which broadcasts.
            raise ValueError(
                f"in-place {name}: the result has shape {tuple(out.shape)}, "
                f"but the tensor written has shape {self.shape}"
            )
        self._data = out
        _bump(self)
        if tracer is not None:
            tracer.wrote(self, "op", raw_op, value)
        if tangents is not None:
            self._fw = getattr(tangents, "_fw", None)
        return self

    method.__name__ = f"__i{name}__"
    return method


def setitem(self: Tensor, key, value) -> None:
    """`t[key] = value`: in place, recorded, or copy-on-write (see the module docstring)."""
    key = _index_key(key, self._xp)
    records = _records(self, value)
    lifted = _lifts(self, value, "setitem")
    if records or lifted:
        v = value if value.__class__ is Tensor else constant(value, self._xp)
        covered = _backend.covers_all(self._data.shape, key)
        new = OPS["setitem"]((self, v), (key, v.shape, covered))
        _take_value(self, new, "setitem", recorded=records)
        return
    _same_library(self, value, "setitem")
    if dual(self) or dual(value):
        v = value if value.__class__ is Tensor else constant(value, self._xp)
        covered = _backend.covers_all(self._data.shape, key)
        self._fw = getattr(OPS["setitem"]((self, v), (key, v.shape, covered)), "_fw", None)
    v = value._data if value.__class__ is Tensor else value
    tracer = grad_mode.tracer if grad_mode.extended else None
    if tracer is not None:
        tracer.writing(self)
    if not _in_place_ok(self):
        self._data = _backend.assign(self._xp, self._xp.asarray(self._data, copy=True), key, v)
        self._vc = VersionCounter(self._version + 1)
        inplace_writes[0] += 1
        if tracer is not None:
            tracer.wrote(self, "setitem_copy", key, v)
        return
    self._data = _backend.assign(self._xp, self._data, key, v)
    _bump(self)
    if tracer is not None:
        tracer.wrote(self, "setitem", key, v)


def _ifloordiv(a, b):
    """a //= b on raw arrays with floor_divide's special cases (infinite operands)."""
    out = _special_cases.floor_divide(_backend.namespace(a), a, b)
    if out.dtype != a.dtype:
        return operator.ifloordiv(a, b)  # the library's own casting error
    try:
        a[...] = out
    except TypeError:  # immutable arrays (JAX): the tensor takes the new one
        return out
    return a


INPLACE_OPERATORS = {
    f"__i{name}__": _inplace_operator(op, raw_op, name)
    for name, op, raw_op in (
        ("add", add, operator.iadd),
        ("sub", subtract, operator.isub),
        ("mul", multiply, operator.imul),
        ("truediv", divide, operator.itruediv),
        ("floordiv", floor_divide, _ifloordiv),
        ("mod", remainder, operator.imod),
        ("pow", pow, operator.ipow),
        ("matmul", matmul, operator.imatmul),
        ("and", bitwise_and, operator.iand),
        ("or", bitwise_or, operator.ior),
        ("xor", bitwise_xor, operator.ixor),
        ("lshift", bitwise_left_shift, operator.ilshift),
        ("rshift", bitwise_right_shift, operator.irshift),
    )
}
