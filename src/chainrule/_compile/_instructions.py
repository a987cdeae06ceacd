"""The instruction set of a recording: an opcode and a record type with named fields per
instruction. The tracer (_trace) makes them; the loop replay and the source builder
(_program) read them. Slots are numbered values; `xp` is the namespace a kernel runs in."""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = [
    "ACC", "ADD", "FWD1", "FWD2", "FWDN", "HOST", "KERNELS", "NORM", "SETGRAD", "STORED", "VJP",
    "WRITE", "Acc", "Add", "Fwd1", "Fwd2", "FwdN", "Host", "Norm", "SetGrad", "Stored", "Vjp",
    "Write",
]  # fmt: skip

# Opcodes: the first field of every instruction.
FWD1, FWD2, FWDN, VJP, ADD, NORM, STORED, ACC, SETGRAD, WRITE, HOST = range(11)


class Fwd1(NamedTuple):
    """out = fn(xp, x, p): a one-input rule's forward (p: static parameters, a Template when
    they hold slots); norm: normalize a 0-d result."""

    op: int
    fn: Any
    x: int
    p: Any
    out: int
    norm: bool
    xp: Any


class Fwd2(NamedTuple):
    """out = fn(xp, x, y): a two-input elementwise rule's forward."""

    op: int
    fn: Any
    x: int
    y: int
    out: int
    norm: bool
    xp: Any


class FwdN(NamedTuple):
    """outs = fn(xp, (xs...), p): any other rule's forward (multi: it returns a tuple)."""

    op: int
    fn: Any
    xs: tuple
    p: Any
    outs: tuple
    norms: tuple
    multi: bool
    xp: Any


class Vjp(NamedTuple):
    """A node's backward: form 0 calls the rule's VJP fn(xp, g, saved, p, needs) once and
    takes one result per input; form 1 or 2 calls fn[k], the formula of input k. outs: per
    input, the slot its gradient is made into (None: none is); fits: None, or per input None
    or (shape to sum its gradient to or None, dtype to cast it to or None)."""

    op: int
    fn: Any
    form: int
    g: Any  # a slot, or a tuple of slots (None where an output got no gradient)
    saved: tuple | None  # slots (None for None)
    p: Any
    needs: tuple
    outs: tuple
    fits: tuple | None
    xp: Any


class Add(NamedTuple):
    """out = a + b: gradients meeting at a node."""

    op: int
    a: int
    b: int
    out: int


class Norm(NamedTuple):
    """out = asarray(x): a NumPy scalar made a 0-d array."""

    op: int
    x: int
    out: int


class Stored(NamedTuple):
    """out = the ids of the root gradients' arrays (what accumulation must copy)."""

    op: int
    roots: tuple
    out: int


class Acc(NamedTuple):
    """backward's accumulation of gradient g into leaf's .grad; out: .grad's array."""

    op: int
    leaf: tuple  # ("arg", position) or ("ext", index)
    g: int
    stored: int
    out: int


class SetGrad(NamedTuple):
    """leaf.grad = a tensor of slot value (None: None)."""

    op: int
    leaf: tuple
    value: int | None


class Write(NamedTuple):
    """An in-place write: kind "op" (out = how(before, value)), "setitem" or "setitem_copy"
    (out = before with before[how] = value, in a copy for the latter); target: the tensor
    that gets out as its array (("arg", i), ("ext", i), ("grad", leaf ref))."""

    op: int
    kind: str
    before: int
    how_value: tuple  # (the operator or the key, the slot of the value)
    out: int
    xp: Any
    target: tuple


class Host(NamedTuple):
    """outs = the Python numbers fn(*args) returns, as 0-d arrays of dtype (an optimizer's
    hyperparameters and step count, computed at each replay)."""

    op: int
    fn: Any
    args: tuple
    outs: tuple
    dtype: Any
    xp: Any


# The instructions that run kernels in a namespace (a replay may run them in another).
KERNELS = frozenset((FWD1, FWD2, FWDN, VJP, WRITE))
