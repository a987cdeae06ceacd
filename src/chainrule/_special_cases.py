"""The standard's special cases where backends (NumPy among them) miss them: floor division
with infinite operands, and complex expm1 and tanh at infinities, NaNs and signed zeros.
Forwards of `_rules` call these on raw arrays of namespace `xp`; finite real inputs take the
backend's result unchanged."""

from __future__ import annotations

import math

from . import _backend

__all__ = ["expm1", "floor_divide", "tanh"]


def floor_divide(xp, x, y):
    """x // y; where an operand is infinite, IEEE division x / y (inf // 2 is inf and
    -1 // inf is -0, where NumPy gives NaN and -1). x or y may be a Python scalar."""
    out = x // y
    if _backend.dtype_kind(out.dtype) != "f":
        return out
    if any(v.__class__ is float and math.isinf(v) for v in (x, y)):
        return x / y
    masks = [xp.isinf(v) for v in (x, y) if v.__class__ not in (bool, int, float)]
    infinite = masks[0] if len(masks) == 1 else xp.logical_or(*masks)
    return xp.where(infinite, x / y, out)


def _parts(xp, x):
    return xp.real(x), xp.imag(x)


def _constant(xp, out, value: complex):
    return xp.asarray(value, dtype=out.dtype)


def _set(xp, out, where, value: complex):
    return xp.where(where, _constant(xp, out, value), out)


def _with_sign_of(xp, out, where, b, real: float, imag: float):
    """out with `real + i imag` where `where`, imag taking the sign of b."""
    negative = xp.signbit(b)
    out = _set(xp, out, xp.logical_and(where, negative), complex(real, -imag))
    return _set(xp, out, xp.logical_and(where, xp.logical_not(negative)), complex(real, imag))


def expm1(xp, x):
    """exp(x) - 1; for complex x = a + ib the standard's special cases (and their conjugates):
    expm1(±0 + 0j) = 0 + 0j, expm1(+inf + 0j) = +inf + 0j, expm1(NaN + 0j) = NaN + 0j,
    expm1(+inf + i(inf or NaN)) = inf + NaN j, expm1(-inf + i(inf or NaN)) = -1 + 0j."""
    out = xp.expm1(x)
    if _backend.dtype_kind(out.dtype) != "c":
        return out
    a, b = _parts(xp, x)
    zero_b = b == 0
    out = _with_sign_of(xp, out, xp.logical_and(a == 0, zero_b), b, 0.0, 0.0)
    out = _with_sign_of(xp, out, xp.logical_and(a == math.inf, zero_b), b, math.inf, 0.0)
    out = _with_sign_of(xp, out, xp.logical_and(xp.isnan(a), zero_b), b, math.nan, 0.0)
    unbounded_b = xp.logical_not(xp.isfinite(b))
    out = _set(xp, out, xp.logical_and(a == math.inf, unbounded_b), complex(math.inf, math.nan))
    return _set(xp, out, xp.logical_and(a == -math.inf, unbounded_b), complex(-1.0, 0.0))


def tanh(xp, x):
    """tanh(x); for complex x = a + ib with a infinite and b finite, ±1 + 0j with the sign of
    a and the imaginary zero signed as b (the standard's tanh(+inf + ib) = 1 + 0j for b > 0)."""
    out = xp.tanh(x)
    if _backend.dtype_kind(out.dtype) != "c":
        return out
    a, b = _parts(xp, x)
    finite_b = xp.isfinite(b)
    out = _with_sign_of(xp, out, xp.logical_and(a == math.inf, finite_b), b, 1.0, 0.0)
    return _with_sign_of(xp, out, xp.logical_and(a == -math.inf, finite_b), b, -1.0, 0.0)
