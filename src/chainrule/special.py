"""chainrule.special: special functions with PyTorch's `torch.special` names and SciPy's, each
differentiable to any order in both modes. Values come from the array library's kernels:
SciPy's for NumPy arrays (SciPy is optional; without it the functions marked "kernel" below
raise ImportError when called), torch.special's and jax.scipy.special's. The others are
written with chainrule's functions and need nothing more.

Kernels: erf, erfc, erfinv, erfcinv, ndtr, ndtri, log_ndtr, gammaln, digamma, polygamma, i0,
i0e, i1, i1e, bessel_j0, bessel_j1, jv, iv, ive, zeta, gammainc, gammaincc, beta, betaln.
Composites: expit, log_expit, logit, multigammaln, xlogy, xlog1py, entr, kl_div, sinc,
softmax, log_softmax, logsumexp."""

from __future__ import annotations

import builtins
import math
import numbers

from ._namespace import (
    abs,
    astype,
    clip,
    float64,
    isnan,
    log,
    logaddexp,
    logical_and,
    logical_or,
    reshape,
    sin,
    stack,
    sum,
    weak_number,
    where,
)
from ._namespace import log_softmax as _log_softmax
from ._namespace import logsumexp as _logsumexp
from ._namespace import softmax as _softmax
from ._rules import OPS
from ._tensor import Tensor, as_tensor, as_tensors, constant
from ._typing import ArrayLike, Axis

__all__ = [
    "erf", "erfc", "erfinv", "erfcinv", "expit", "logit", "gammaln", "digamma", "psi",
    "polygamma", "multigammaln", "xlogy", "xlog1py", "entr", "ndtr", "ndtri", "log_ndtr", "i0",
    "i0e", "i1", "i1e", "sinc", "softmax", "log_softmax", "logsumexp", "zeta", "bessel_j0",
    "bessel_j1", "j0", "j1", "gammainc", "gammaincc", "beta", "betaln", "jv", "iv", "ive",
    "log_expit", "kl_div",
]  # fmt: skip


def __dir__() -> list[str]:
    """The API only (dir() and editors' completion), not the names this module imports."""
    return sorted(__all__)


def _real(x: ArrayLike, name: str) -> Tensor:
    """x as a tensor of real floating values (integers as float64)."""
    x = as_tensor(x)
    if x.dtype.kind == "c":
        raise TypeError(f"chainrule.special.{name} takes real values, not {x.dtype}")
    return x if x.dtype.kind == "f" else astype(x, float64)


def _pair(x1: ArrayLike, x2: ArrayLike, name: str) -> tuple[Tensor, Tensor]:
    """Two tensors of one array library (a Python number converted by the other's, in its
    floating dtype: float32 values stay float32, as NumPy's and SciPy's weak scalars)."""
    (x1, x2), xp = as_tensors((x1, x2), name)
    x1, x2 = weak_number(x1, x2), weak_number(x2, x1)
    return _real(constant(x1, xp), name), _real(constant(x2, xp), name)


def _order(v, name: str) -> float:
    """An order held fixed: a Python number (derivatives are taken in x only)."""
    if isinstance(v, Tensor) or not isinstance(v, numbers.Real):
        raise TypeError(
            f"chainrule.special.{name}: the order must be a Python number (it is held fixed; "
            "derivatives are taken in x)"
        )
    return float(v)


def _kernel_function(name: str, doc: str):
    def fn(x: ArrayLike, /) -> Tensor:
        return OPS[name](_real(x, fn.__name__))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def _binary_kernel_function(name: str, doc: str):
    def fn(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
        return OPS[name](*_pair(x1, x2, name))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


erf = _kernel_function("erf", "The error function 2/sqrt(pi) int_0^x exp(-t^2) dt.")
erfc = _kernel_function("erfc", "The complementary error function 1 - erf(x).")
erfinv = _kernel_function("erfinv", "The inverse of erf on (-1, 1).")
erfcinv = _kernel_function("erfcinv", "The inverse of erfc on (0, 2).")
ndtr = _kernel_function("ndtr", "The standard normal distribution function.")
ndtri = _kernel_function("ndtri", "The inverse of ndtr (the standard normal quantile).")
log_ndtr = _kernel_function("log_ndtr", "log(ndtr(x)), accurate far into the lower tail.")
gammaln = _kernel_function("gammaln", "log|Gamma(x)|.")
digamma = _kernel_function("digamma", "The digamma function, the derivative of gammaln.")
psi = digamma
i0 = _kernel_function("i0", "The modified Bessel function of the first kind of order 0.")
i0e = _kernel_function("i0e", "exp(-|x|) i0(x).")
i1 = _kernel_function("i1", "The modified Bessel function of the first kind of order 1.")
i1e = _kernel_function("i1e", "exp(-|x|) i1(x).")
j0 = _kernel_function("j0", "The Bessel function of the first kind of order 0.")
j1 = _kernel_function("j1", "The Bessel function of the first kind of order 1.")
bessel_j0 = j0
bessel_j1 = j1
gammainc = _binary_kernel_function(
    "gammainc",
    "The regularised lower incomplete gamma function P(a, x); differentiable in x (in a: "
    "NotImplementedError, as PyTorch).",
)
gammaincc = _binary_kernel_function(
    "gammaincc", "The regularised upper incomplete gamma function Q(a, x) = 1 - P(a, x)."
)
beta = _binary_kernel_function(
    "beta", "The beta function B(a, b) = Gamma(a) Gamma(b) / Gamma(a + b)."
)
betaln = _binary_kernel_function("betaln", "log|B(a, b)|.")


def polygamma(n: int, x: ArrayLike, /) -> Tensor:
    """The n-th derivative of digamma (order n held fixed)."""
    n = _order(n, "polygamma")
    if n != int(n) or n < 0:
        raise ValueError(f"polygamma: the order n must be a non-negative integer, got {n}")
    return OPS["polygamma"](_real(x, "polygamma"), int(n))


def _bessel(name: str, doc: str):
    def fn(v: float, x: ArrayLike, /) -> Tensor:
        return OPS[name](_real(x, name), _order(v, name))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


jv = _bessel("jv", "The Bessel function of the first kind of real order v (fixed), in x.")
iv = _bessel("iv", "The modified Bessel function of the first kind of real order v (fixed).")
ive = _bessel("ive", "exp(-|x|) iv(v, x), of real order v (fixed).")


def zeta(x: ArrayLike, q: ArrayLike | None = None, /) -> Tensor:
    """The Hurwitz zeta function sum_k (k + q)^-x; for q None Riemann's, continued below
    x = 1 as SciPy's (Hurwitz's zeta(x, 1) is NaN there). Differentiable in q (in x:
    NotImplementedError, as PyTorch)."""
    if q is None:
        return OPS["riemann_zeta"](_real(x, "zeta"))
    return OPS["zeta"](*_pair(x, q, "zeta"))


def expit(x: ArrayLike, /) -> Tensor:
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    return OPS["sigmoid"](_real(x, "expit"))


def log_expit(x: ArrayLike, /) -> Tensor:
    """log(expit(x)) = -log(1 + exp(-x)), without overflow for either sign of x; the
    gradient is 1 - expit(x)."""
    return -logaddexp(0.0, -_real(x, "log_expit"))


def logit(x: ArrayLike, /, eps: float | None = None) -> Tensor:
    """log(x / (1 - x)), the inverse of expit; `eps` clamps x to [eps, 1 - eps] (PyTorch's)."""
    x = _real(x, "logit")
    if eps is not None:
        x = clip(x, eps, 1 - eps)
    return log(x / (1 - x))


def multigammaln(a: ArrayLike, d: int, /) -> Tensor:
    """The log of the multivariate gamma function of dimension d:
    d (d - 1) / 4 log(pi) + sum_j gammaln(a + (1 - j) / 2)."""
    a = _real(a, "multigammaln")
    d = builtins.int(d)
    if d < 1:
        raise ValueError(f"multigammaln: d must be a positive integer, got {d}")
    terms = stack([gammaln(a + (1 - j) / 2) for j in range(1, d + 1)])
    return sum(terms, axis=0) + d * (d - 1) / 4 * math.log(math.pi)


def xlogy(x: ArrayLike, y: ArrayLike, /) -> Tensor:
    """x log(y), 0 where x is 0 (unless y is NaN), as SciPy's and PyTorch's. Gradients log(y)
    and x / y, as PyTorch's; where x is 0, the x-gradient is 0 where y <= 0 (PyTorch's too)
    and the y-gradient is 0 at y = 0 (PyTorch's is 0 / 0, NaN): the function is 0 all along
    x = 0."""
    return OPS["xlogy"](*_pair(x, y, "xlogy"))


def xlog1py(x: ArrayLike, y: ArrayLike, /) -> Tensor:
    """x log1p(y), 0 where x is 0 (unless y is NaN); gradients log1p(y) and x / (1 + y), with
    xlogy's conventions at x = 0 (y <= -1, y = -1)."""
    return OPS["xlog1py"](*_pair(x, y, "xlog1py"))


def entr(x: ArrayLike, /) -> Tensor:
    """-x log(x) for x > 0, 0 at 0, -inf below."""
    x = _real(x, "entr")
    inside = -x * log(where(x > 0, x, 1.0))  # 0 at 0, NaN at NaN
    return where(x < 0, -math.inf, inside)


def kl_div(x: ArrayLike, y: ArrayLike, /) -> Tensor:
    """SciPy's elementwise Kullback-Leibler term x log(x / y) - x + y for x > 0 and y > 0; y
    where x is 0 and y >= 0; inf elsewhere, NaN where either is NaN. Gradients log(x / y)
    and 1 - x / y inside, 0 and 1 where x is 0."""
    x, y = _pair(x, y, "kl_div")
    inside = logical_and(x > 0, y > 0)
    xs, ys = where(inside, x, 1.0), where(inside, y, 1.0)
    edge = where(logical_and(x == 0, y >= 0), y, math.inf)
    out = where(inside, xs * log(xs / ys) - xs + ys, edge)
    return where(logical_or(isnan(x), isnan(y)), math.nan, out)


def sinc(x: ArrayLike, /) -> Tensor:
    """sin(pi x) / (pi x), 1 at 0; its derivatives of any order are right at 0 too (the
    second is -pi**2 / 3 there, where PyTorch's is 0)."""
    x = _real(x, "sinc")
    # Below |x| = 0.05 the Taylor polynomial in y = pi x, to y**10 (the first term left out is
    # below 1e-18 there): sin(y) / y's derivatives cancel near 0 and are 0 at 0. Each branch
    # sees a safe input (the polynomial overflows for huge x: 0 * inf = NaN gradients).
    small = abs(x) < 0.05
    y = math.pi * where(small, 1.0, x)
    y2 = (math.pi * where(small, x, 0.0)) ** 2
    near = 1 - y2 / 6 * (1 - y2 / 20 * (1 - y2 / 42 * (1 - y2 / 72 * (1 - y2 / 110))))
    return where(small, near, sin(y) / y)


def _over(fn, x: ArrayLike, axis: Axis):
    """fn along `axis`, or over all elements when None (SciPy's default)."""
    x = as_tensor(x)
    if axis is None:
        return reshape(fn(reshape(x, (-1,)), axis=0), x.shape)
    return fn(x, axis=axis)


def softmax(x: ArrayLike, /, axis: int | None = None) -> Tensor:
    """exp(x) normalised to sum to 1 along `axis` (PyTorch's dim), over all elements when
    None (SciPy's)."""
    return _over(_softmax, x, axis)


def log_softmax(x: ArrayLike, /, axis: int | None = None) -> Tensor:
    """log(softmax(x)) along `axis`, over all elements when None."""
    return _over(_log_softmax, x, axis)


def logsumexp(x: ArrayLike, /, axis: Axis = None, keepdims: bool = False) -> Tensor:
    """log(sum(exp(x))) over `axis` (all axes when None), without overflow."""
    return _logsumexp(x, axis=axis, keepdims=keepdims)
