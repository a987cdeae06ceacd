"""The matrix exponential on raw arrays of any library: scaling and squaring with a diagonal
Padé approximant (Higham, "The scaling and squaring method for the matrix exponential
revisited", 2005), batched over leading axes. Its derivatives live in the rule table."""

from __future__ import annotations

import functools
import math
from importlib import import_module

import numpy as np

from ._memory import device
from ._namespaces import library

# Higham's bounds on the 1-norm up to which the Padé approximant of degree m is exact to the
# unit roundoff: degrees 3, 5, 7, 9, 13 in double precision, 3, 5, 7 in single.
_THETA_DOUBLE = ((3, 1.495585217958292e-2), (5, 2.539398330063230e-1), (7, 9.504178996162932e-1),
                 (9, 2.097847961257068), (13, 5.371920351148152))  # fmt: skip
_THETA_SINGLE = ((3, 4.258730016922831e-1), (5, 1.880152677804762), (7, 3.925724783138660))


@functools.cache
def _pade_coefficients(m: int) -> tuple[float, ...]:
    """c_j of the degree-m numerator p(x) = sum c_j x^j of exp's diagonal Padé approximant
    (the denominator is p(-x)): c_j = (2m - j)! m! / ((2m)! j! (m - j)!), c_0 = 1."""
    c = [1.0]
    for j in range(1, m + 1):
        c.append(c[-1] * (m - j + 1) / (j * (2 * m - j + 1)))
    return tuple(c)


def _polynomial(xp, powers: list, coefficients: tuple):
    """sum_k coefficients[k] B^k, powers[k] = B^k for k <= 3 (powers[0]: the identity). A
    polynomial of higher degree (at most 7 terms) is split as low + B^3 high: one product."""
    if len(coefficients) <= len(powers):
        return sum(c * b for c, b in zip(coefficients, powers))
    low = sum(c * b for c, b in zip(coefficients[:3], powers))
    high = sum(c * b for c, b in zip(coefficients[3:], powers))
    return low + xp.matmul(powers[3], high)


def _pade(xp, a, m: int):
    """The degree-m Padé approximant of exp(a): q(a)^-1 p(a), with p(a) = V + U and
    q(a) = V - U, V the even terms and U = a (odd terms / a), both polynomials in B = a^2."""
    n = a.shape[-1]
    c = _pade_coefficients(m)
    identity = xp.eye(n, dtype=a.dtype, device=device(a))
    b = xp.matmul(a, a)
    powers = [identity, b]
    while len(powers) < min((m + 1) // 2, 4):
        powers.append(xp.matmul(powers[-1], b))
    u = xp.matmul(a, _polynomial(xp, powers, c[1::2]))
    v = _polynomial(xp, powers, c[0::2])
    return xp.linalg.solve(v - u, v + u)


def _scaled_and_squared(xp, a):
    """exp(a) for square matrices a (..., n, n) of a library whose values can be read: the
    degree is chosen for the largest 1-norm in the batch; matrices past the largest degree's
    bound are scaled by 2^-s each (s their own) and squared s times back."""
    if math.prod(a.shape) == 0:
        return a + 0
    thetas = _THETA_SINGLE if a.dtype in (xp.float32, xp.complex64) else _THETA_DOUBLE
    norms = xp.max(xp.sum(xp.abs(a), axis=-2), axis=-1)
    largest = float(xp.max(norms))
    for m, theta in thetas:
        if largest <= theta:
            return _pade(xp, a, m)
    if not math.isfinite(largest):  # NaN or inf in: NaN out, with no squaring to count
        return _pade(xp, a, m)
    # s = ceil(log2(norm / theta)) at least 0, per matrix, as a floating array.
    s = xp.clip(xp.ceil(xp.log2(norms / theta)), min=0.0)
    scale = xp.expand_dims(xp.expand_dims(2.0**s, axis=-1), axis=-1)
    out = _pade(xp, a / xp.astype(scale, a.dtype), m)
    squarings = xp.expand_dims(xp.expand_dims(s, axis=-1), axis=-1)
    for k in range(int(xp.max(s))):
        out = xp.where(squarings > k, xp.matmul(out, out), out)
    return out


def _dask_block(a):
    return _scaled_and_squared(np, a)


def matrix_exp(xp, a):
    """exp(a) for a stack of square floating (real or complex) matrices of namespace xp. On
    Dask, each chunk of whole matrices is computed with NumPy when the graph runs (nothing is
    computed here); under vmap, the whole batch in one call (its batching rule)."""
    lib = library(xp)
    if lib == "vmap":
        return xp.linalg.matrix_exp(a)
    if lib == "dask":
        one_chunk = a.rechunk({a.ndim - 2: -1, a.ndim - 1: -1})
        return import_module("dask.array").map_blocks(_dask_block, one_chunk, dtype=a.dtype)
    return _scaled_and_squared(xp, a)
