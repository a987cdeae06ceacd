"""chainrule.fft: the Array API fft extension. The transforms run through the backend's fft
and are differentiable to any order (complex gradients with PyTorch's convention; each
transform's VJP is its adjoint, see `_rules`); fftshift and ifftshift are rolls."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from . import _backend
from ._backend import DEFAULT_FLOAT
from ._namespace import _default, _dtype, _new, _on, _one_axis, complex64, complex128, float32, roll
from ._rules import OPS
from ._tensor import Tensor, as_tensor
from ._typing import ArrayLike, Device, DTypeLike

_Norm = Literal["backward", "ortho", "forward"] | None

__all__ = [
    "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]  # fmt: skip


def __dir__() -> list[str]:
    """The API only (dir() and editors' completion), not the names this module imports."""
    return sorted(__all__)


_NORMS = ("backward", "ortho", "forward")


def _transform(name: str, x: ArrayLike, complex_input: bool, **kwargs: Any) -> Tensor:
    """Backend transform `name` of x. A complex_input transform takes a real x as complex of
    its precision (float32 as complex64), as NumPy does, on every backend; integers as the
    default complex dtype."""
    x = as_tensor(x)
    if kwargs.get("norm", 0) is None:  # NumPy's and PyTorch's spelling of the default
        kwargs["norm"] = "backward"
    if kwargs.get("norm") not in _NORMS:
        # Checked here: not every backend says ValueError for it.
        raise ValueError(
            f"chainrule.fft.{name}: norm must be one of {', '.join(_NORMS)}, "
            f"not {kwargs.get('norm')!r}"
        )
    cast = None
    kind = x.dtype.kind
    if complex_input and kind != "c":
        # Integers and bools: the default complex dtype (complex128 unless set_default_dtype).
        complex_of = DEFAULT_FLOAT.complex if kind in "biu" else complex128
        cast = _dtype(x._xp, complex64 if x.dtype == float32 else complex_of)
    return OPS["fft"](x, (name, tuple(kwargs.items()), cast, x.shape))


def _transform_n(
    name: str,
    x: ArrayLike,
    s: Sequence[int] | None,
    axes: Sequence[int] | None,
    norm: _Norm,
    complex_input: bool,
    halved: bool = False,
) -> Tensor:
    """An n-dimensional transform, with s and axes made explicit for the backend. axes default
    to all axes, or to the last len(s) axes when only s is given; a size of -1 (or no s) means the
    whole input along that axis. `halved`: the last axis holds a half spectrum (irfftn), and
    a whole input of length m makes an output of length 2 * (m - 1)."""
    x = as_tensor(x)
    ndim = x.ndim
    if axes is None:
        axes = range(ndim) if s is None else range(ndim - len(s), ndim)
    axes = tuple(axes)
    s = (-1,) * len(axes) if s is None else tuple(s)
    if len(s) != len(axes):
        raise ValueError(f"chainrule.fft.{name}: s {s} and axes {axes} differ in length")
    whole = [x.shape[_one_axis(a, ndim)] for a in axes]
    if halved and whole:
        whole[-1] = 2 * (whole[-1] - 1)
    s = tuple(m if n == -1 else n for n, m in zip(s, whole))
    return _transform(name, x, complex_input, s=s, axes=axes, norm=norm)


def fft(
    x: ArrayLike, /, *, n: int | None = None, axis: int = -1, norm: _Norm = "backward"
) -> Tensor:
    """The discrete Fourier transform along `axis`, over n elements (x trimmed or zero-padded)."""
    return _transform("fft", x, True, n=n, axis=axis, norm=norm)


def ifft(
    x: ArrayLike, /, *, n: int | None = None, axis: int = -1, norm: _Norm = "backward"
) -> Tensor:
    """The inverse discrete Fourier transform along `axis`, over n elements."""
    return _transform("ifft", x, True, n=n, axis=axis, norm=norm)


def fftn(
    x: ArrayLike,
    /,
    *,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: _Norm = "backward",
) -> Tensor:
    """The n-dimensional discrete Fourier transform over `axes`, of sizes s."""
    return _transform_n("fftn", x, s, axes, norm, True)


def ifftn(
    x: ArrayLike,
    /,
    *,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: _Norm = "backward",
) -> Tensor:
    """The n-dimensional inverse discrete Fourier transform over `axes`, of sizes s."""
    return _transform_n("ifftn", x, s, axes, norm, True)


def rfft(
    x: ArrayLike, /, *, n: int | None = None, axis: int = -1, norm: _Norm = "backward"
) -> Tensor:
    """The Fourier transform of a real x along `axis`: the n // 2 + 1 non-negative frequencies."""
    return _transform("rfft", x, False, n=n, axis=axis, norm=norm)


def irfft(
    x: ArrayLike, /, *, n: int | None = None, axis: int = -1, norm: _Norm = "backward"
) -> Tensor:
    """The inverse of rfft: a real result of n elements (by default 2 * (m - 1) for m inputs)
    along `axis`."""
    return _transform("irfft", x, True, n=n, axis=axis, norm=norm)


def rfftn(
    x: ArrayLike,
    /,
    *,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: _Norm = "backward",
) -> Tensor:
    """The n-dimensional Fourier transform of a real x; the last of `axes` keeps the
    s[-1] // 2 + 1 non-negative frequencies."""
    return _transform_n("rfftn", x, s, axes, norm, False)


def irfftn(
    x: ArrayLike,
    /,
    *,
    s: Sequence[int] | None = None,
    axes: Sequence[int] | None = None,
    norm: _Norm = "backward",
) -> Tensor:
    """The inverse of rfftn: a real result of sizes s over `axes` (along the last one, by
    default or for -1, 2 * (m - 1) for m inputs)."""
    return _transform_n("irfftn", x, s, axes, norm, True, True)


def hfft(
    x: ArrayLike, /, *, n: int | None = None, axis: int = -1, norm: _Norm = "backward"
) -> Tensor:
    """The real Fourier transform of a signal with Hermitian symmetry, given by its first half
    along `axis`; n elements (by default 2 * (m - 1) for m inputs)."""
    return _transform("hfft", x, True, n=n, axis=axis, norm=norm)


def ihfft(
    x: ArrayLike, /, *, n: int | None = None, axis: int = -1, norm: _Norm = "backward"
) -> Tensor:
    """The inverse of hfft: the n // 2 + 1 first elements of the inverse transform of a real x."""
    return _transform("ihfft", x, False, n=n, axis=axis, norm=norm)


def _frequencies(name: str, n: int, d: float, dtype: DTypeLike, device: Device) -> Tensor:
    if dtype is not None and _backend.dtype_kind(dtype) != "f":
        raise ValueError(f"chainrule.fft.{name}: dtype must be a real floating dtype, not {dtype}")
    xp, dt = _default(dtype, True, device)
    out = getattr(xp.fft, name)(n, d=d, **_on(device))
    return _new(out if dt is None or out.dtype == dt else xp.astype(out, dt), xp)


def fftfreq(n: int, /, *, d: float = 1.0, dtype: DTypeLike = None, device: Device = None) -> Tensor:
    """The sample frequencies of a Fourier transform of length n with sample spacing d, in the
    default backend or the library that owns `device`, on that device (the default real
    floating dtype unless `dtype`); no gradient."""
    return _frequencies("fftfreq", n, d, dtype, device)


def rfftfreq(
    n: int, /, *, d: float = 1.0, dtype: DTypeLike = None, device: Device = None
) -> Tensor:
    """The n // 2 + 1 non-negative sample frequencies of rfft; as fftfreq otherwise."""
    return _frequencies("rfftfreq", n, d, dtype, device)


def _shift(x: ArrayLike, axes: int | Sequence[int] | None, sign: int) -> Tensor:
    x = as_tensor(x)
    if axes is None:
        axes = range(x.ndim)
    axes = (axes,) if isinstance(axes, int) else tuple(axes)
    if not axes:
        # Nothing to shift (a 0-d x): a flat roll by zero, a new tensor as for any axes.
        return roll(x, 0)
    shifts = tuple(sign * (x.shape[_one_axis(a, x.ndim)] // 2) for a in axes)
    return roll(x, shifts, axis=axes)


def fftshift(x: ArrayLike, /, *, axes: int | Sequence[int] | None = None) -> Tensor:
    """x with the zero frequency moved to the centre of `axes` (all by default): a roll by
    half of each axis, differentiable."""
    return _shift(x, axes, 1)


def ifftshift(x: ArrayLike, /, *, axes: int | Sequence[int] | None = None) -> Tensor:
    """The inverse of fftshift (the two differ by one place along axes of odd length)."""
    return _shift(x, axes, -1)
