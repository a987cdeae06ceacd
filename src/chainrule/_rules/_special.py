"""chainrule.special's rules (erf, gamma functions, Bessel functions, zeta, beta, ...): real
values only, forwards from the library's kernels, derivatives written with other primitives
so that they differentiate again."""

from __future__ import annotations

import math

from .. import _backend
from ._declare import binary, unary

# ----------------------------------------------------------------------------- special functions
# chainrule.special's primitives, real values only: forwards from the library's kernels
# (_backend.special_function: SciPy's for NumPy), derivatives written with other primitives of
# this block (through xp.primitive), so they differentiate again, to any order. A parameter p
# is an order held fixed (polygamma's n, jv's v). Derivatives in an order or a shape
# parameter that SciPy has no function for raise NotImplementedError (as PyTorch's).

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)


def _kernel(name):
    def fwd(xp, x, p):
        return _backend.special_function(xp, name)(x)

    return fwd


def _ordered_kernel(name):
    """A kernel taking its fixed order first: f(p, x)."""

    def fwd(xp, x, p):
        return _backend.special_function(xp, name)(p, x)

    return fwd


def _binary_kernel(name):
    def fwd(xp, x, y):
        return _backend.special_function(xp, name)(x, y)

    return fwd


def _special(name, fwd, vjp, saves):
    """A real elementwise special function: its VJP formula is its JVP."""
    return unary(name, fwd, vjp, saves, jvp="symmetric", complex=None)


def _not_in(name, argument):
    def refuse(xp, g, x, y, out):
        raise NotImplementedError(
            f"the derivative of {name} in its argument {argument} is not implemented"
        )

    return refuse


_special(
    "erf",
    _kernel("erf"),
    lambda xp, g, x, out, p: g * ((2 / _SQRT_PI) * xp.exp(-x * x)),
    "x",
)

# erf_series: erf computed from elementwise operations alone, on any library and without
# SciPy (nn.functional.gelu's exact form calls it). For |x| <= 2 the series erf(x) =
# 2/sqrt(pi) exp(-x^2) sum_k (2x^2)^k x / (1 3 5 ... (2k+1)) (positive terms, no
# cancellation), beyond it 1 - erfc(x) with erfc's continued fraction exp(-x^2)/sqrt(pi) /
# (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))). 32 terms and 42 levels give float64 erf within
# 2e-15 (relative) everywhere. Its derivative is erf's.
_SERIES_TERMS = 32
_FRACTION_LEVELS = 42
_SERIES_LIMIT = 2.0


def _erf_series(xp, v, p):
    a = xp.abs(v)
    s = xp.minimum(a, _SERIES_LIMIT)
    twice_square = 2.0 * s * s
    term = s
    total = s
    for k in range(1, _SERIES_TERMS):
        term = term * twice_square / (2 * k + 1)
        total = total + term
    series = (2 / _SQRT_PI) * xp.exp(-s * s) * total
    c = xp.maximum(a, _SERIES_LIMIT)
    fraction = c
    for k in range(_FRACTION_LEVELS, 0, -1):
        fraction = c + (k / 2) / fraction
    tail = 1.0 - xp.exp(-c * c) / (_SQRT_PI * fraction)
    return xp.sign(v) * xp.where(a <= _SERIES_LIMIT, series, tail)


_special(
    "erf_series",
    _erf_series,
    lambda xp, g, x, out, p: g * ((2 / _SQRT_PI) * xp.exp(-x * x)),
    "x",
)
_special(
    "erfc",
    _kernel("erfc"),
    lambda xp, g, x, out, p: g * ((-2 / _SQRT_PI) * xp.exp(-x * x)),
    "x",
)
_special(
    "erfinv",
    _kernel("erfinv"),
    lambda xp, g, x, out, p: g * ((_SQRT_PI / 2) * xp.exp(out * out)),
    "out",
)
_special(
    "erfcinv",
    _kernel("erfcinv"),
    lambda xp, g, x, out, p: g * ((-_SQRT_PI / 2) * xp.exp(out * out)),
    "out",
)
_special(
    "ndtr", _kernel("ndtr"), lambda xp, g, x, out, p: g * (xp.exp(-x * x / 2) / _SQRT_2PI), "x"
)
_special(
    "ndtri",
    _kernel("ndtri"),
    lambda xp, g, x, out, p: g * (_SQRT_2PI * xp.exp(out * out / 2)),
    "out",
)
# log ndtr(x)' = ndtr'(x) / ndtr(x), written with the output: finite far into the lower tail.
_special(
    "log_ndtr",
    _kernel("log_ndtr"),
    lambda xp, g, x, out, p: g * (xp.exp(-x * x / 2 - out) / _SQRT_2PI),
    "x out",
)
_special(
    "gammaln", _kernel("gammaln"), lambda xp, g, x, out, p: g * xp.primitive("digamma", x), "x"
)
_special(
    "digamma", _kernel("digamma"), lambda xp, g, x, out, p: g * xp.primitive("polygamma", x, 1), "x"
)
_special(
    "polygamma",
    _ordered_kernel("polygamma"),
    lambda xp, g, x, out, p: g * xp.primitive("polygamma", x, p + 1),
    "x",
)
_special("i0", _kernel("i0"), lambda xp, g, x, out, p: g * xp.primitive("i1", x), "x")
# i1' = (i0 + I_2) / 2 and J_1' = (J_0 - J_2) / 2 (no division by x: exact at 0 to every order);
# i0e = exp(-|x|) i0 and i1e = exp(-|x|) i1 likewise.
_special(
    "i1",
    _kernel("i1"),
    lambda xp, g, x, out, p: g * ((xp.primitive("i0", x) + xp.primitive("iv", x, 2.0)) / 2),
    "x",
)
_special(
    "i0e",
    _kernel("i0e"),
    lambda xp, g, x, out, p: g * (xp.primitive("i1e", x) - xp.sign(x) * out),
    "x out",
)
_special(
    "i1e",
    _kernel("i1e"),
    lambda xp, g, x, out, p: (
        g * ((xp.primitive("i0e", x) + xp.primitive("ive", x, 2.0)) / 2 - xp.sign(x) * out)
    ),
    "x out",
)
_special("j0", _kernel("j0"), lambda xp, g, x, out, p: -g * xp.primitive("j1", x), "x")
_special(
    "j1",
    _kernel("j1"),
    lambda xp, g, x, out, p: g * ((xp.primitive("j0", x) - xp.primitive("jv", x, 2.0)) / 2),
    "x",
)
# Bessel functions of a fixed real order v = p, in x: J_v' = (J_{v-1} - J_{v+1}) / 2,
# I_v' = (I_{v-1} + I_{v+1}) / 2, and ive = exp(-|x|) iv.
_special(
    "jv",
    _ordered_kernel("jv"),
    lambda xp, g, x, out, p: (
        g * ((xp.primitive("jv", x, p - 1) - xp.primitive("jv", x, p + 1)) / 2)
    ),
    "x",
)
_special(
    "iv",
    _ordered_kernel("iv"),
    lambda xp, g, x, out, p: (
        g * ((xp.primitive("iv", x, p - 1) + xp.primitive("iv", x, p + 1)) / 2)
    ),
    "x",
)
_special(
    "ive",
    _ordered_kernel("ive"),
    lambda xp, g, x, out, p: (
        g * ((xp.primitive("ive", x, p - 1) + xp.primitive("ive", x, p + 1)) / 2 - xp.sign(x) * out)
    ),
    "x out",
)
# Riemann's zeta(s) (special.zeta without q): SciPy's, continued below s = 1, where Hurwitz's
# zeta(s, 1) is NaN; no derivative in s, as zeta's.
_refuse_riemann = _not_in("zeta", "x")
_special(
    "riemann_zeta",
    _kernel("riemann_zeta"),
    lambda xp, g, x, out, p: _refuse_riemann(xp, g, x, None, out),
    "",
)
# Two inputs. zeta(s, q): d/dq = -s zeta(s + 1, q); none in s (as PyTorch). The regularised
# incomplete gammas P(a, x), Q(a, x): d/dx = +-exp(-x) x^(a-1) / Gamma(a); none in a.
binary(
    "zeta",
    _binary_kernel("zeta"),
    (_not_in("zeta", "x"), ""),
    (lambda xp, g, x, y, out: g * (-x * xp.primitive("zeta", x + 1, y)), "x y"),
    complex=None,
)


def _gammainc_density(xp, a, x):
    return xp.exp((a - 1) * xp.log(x) - x - xp.primitive("gammaln", a))


binary(
    "gammainc",
    _binary_kernel("gammainc"),
    (_not_in("gammainc", "a"), ""),
    (lambda xp, g, x, y, out: g * _gammainc_density(xp, x, y), "x y"),
    complex=None,
)
binary(
    "gammaincc",
    _binary_kernel("gammaincc"),
    (_not_in("gammaincc", "a"), ""),
    (lambda xp, g, x, y, out: -g * _gammainc_density(xp, x, y), "x y"),
    complex=None,
)


# B(a, b) and log B(a, b): d/da log B = digamma(a) - digamma(a + b), and symmetrically.
def _betaln_da(xp, a, b):
    return xp.primitive("digamma", a) - xp.primitive("digamma", a + b)


binary(
    "betaln",
    _binary_kernel("betaln"),
    (lambda xp, g, x, y, out: g * _betaln_da(xp, x, y), "x y"),
    (lambda xp, g, x, y, out: g * _betaln_da(xp, y, x), "x y"),
    complex=None,
)
binary(
    "beta",
    _binary_kernel("beta"),
    (lambda xp, g, x, y, out: g * out * _betaln_da(xp, x, y), "x y out"),
    (lambda xp, g, x, y, out: g * out * _betaln_da(xp, y, x), "x y out"),
    complex=None,
)


# xlogy(x, y) = x log(y) and xlog1py(x, y) = x log1p(y), 0 where x is 0 and y (1 + y) is not
# positive or is infinite (SciPy's and PyTorch's values; NaN where y is NaN). Derivatives as
# PyTorch's formulas, log(y) and x / y, with two conventions where x is 0: the x-derivative is 0
# where y <= 0 (PyTorch's too; log(inf) = inf at y = inf, the difference quotient there), and
# the y-derivative is 0 at y = 0, where PyTorch's 0 / 0 is NaN (the function is 0 all along
# x = 0). Masked values never reach a log or a division, so that no NaN comes back through the
# where at the next order. `edge`: where log's argument is 0 (0 for log, -1 for log1p).


def _xlog(log_name: str, edge: float):
    one = 1.0 + edge  # an argument whose log is 0

    def fwd(xp, x, y):
        unused = xp.logical_and(x == 0, xp.logical_or(y <= edge, xp.isinf(y)))
        return x * getattr(xp, log_name)(xp.where(unused, one, y))

    def dx(xp, g, x, y, out):
        masked = xp.logical_and(x == 0, y <= edge)
        return g * xp.primitive(log_name, xp.where(masked, one, y))

    def dy(xp, g, x, y, out):
        masked = xp.logical_and(x == 0, y == edge)
        return xp.where(masked, 0.0, g * x / (xp.where(masked, one, y) - edge))

    return fwd, (dx, "x y"), (dy, "x y")


binary("xlogy", *_xlog("log", 0.0), complex=None)
binary("xlog1py", *_xlog("log1p", -1.0), complex=None)
