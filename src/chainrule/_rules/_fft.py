"""The fft extension's rule: one linear primitive for every transform, its VJP the adjoint
transform."""

from __future__ import annotations

from .. import _backend
from ._declare import _along, unary

# ----------------------------------------------------------------------------- fft extension
# p = (transform, its keyword arguments as pairs, the complex dtype a real input is cast to
# first (or None), the input's shape). Every transform is linear over the reals, so it is its
# own JVP. Its VJP is the adjoint: the inverse transform with the other norm ("backward" and
# "forward" swap) over the output's sizes, then cropped or zero-padded back to the input's.
# A half spectrum (rfft) is the adjoint of a transform of its zero-padded bins; the inverse
# of one (irfft) counts each bin that stands for two (a frequency and its conjugate) twice.


def _fft_axes(kw: dict, ndim: int) -> tuple[int, ...]:
    return tuple(a % ndim for a in kw["axes"]) if "axes" in kw else (kw["axis"] % ndim,)


def _fft_fwd(xp, x, p):
    name, kwargs, cast, _ = p
    if cast is not None:
        x = xp.astype(x, cast)
    kw = dict(kwargs)
    axes = _fft_axes(kw, x.ndim)
    if not axes and name in ("fftn", "ifftn"):
        return xp.asarray(x, copy=True)  # over no axes, the identity (JAX refuses no axes)
    return getattr(xp.fft, name)(_backend.unchunked(xp, x, axes), **kw)


_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _resized(xp, g, axis: int, size: int):
    """g cropped or zero-padded to `size` along axis."""
    have = g.shape[axis]
    if have > size:
        return g[_along(axis, slice(0, size))]
    if have < size:
        pad = list(g.shape)
        pad[axis] = size - have
        zeros = xp.broadcast_to(xp.zeros_like(g[_along(axis, slice(0, 1))]), tuple(pad))
        return xp.concat([g, zeros], axis=axis)
    return g


def _both_bins_twice(xp, g, axis: int, n: int):
    """g (bins 0 .. n // 2 of a real signal of length n along axis) with the bins that
    stand for a frequency and its conjugate (1 .. (n - 1) // 2) doubled."""
    h = (n + 1) // 2
    if h <= 1:
        return g
    parts = [g[_along(axis, slice(0, 1))], 2 * g[_along(axis, slice(1, h))]]
    if g.shape[axis] > h:
        parts.append(g[_along(axis, slice(h, None))])
    return xp.concat(parts, axis=axis)


def _fft_vjp(xp, g, x, out, p):
    name, kwargs, cast, shape = p
    kw = dict(kwargs)
    norm = kw["norm"]
    axes = _fft_axes(kw, len(shape))
    g = _backend.unchunked(xp, g, axes)
    if name in ("rfft", "ihfft", "rfftn"):
        # The sizes of the real signal transformed.
        if "s" in kw:
            sizes = tuple(kw["s"])
        else:
            sizes = (shape[axes[0]] if kw["n"] is None else kw["n"],)
        if name == "ihfft":  # conj(rfft(x, other norm))
            gx = xp.real(xp.fft.ifftn(xp.conj(g), s=sizes, axes=axes, norm=norm))
        else:
            gx = xp.real(xp.fft.ifftn(g, s=sizes, axes=axes, norm=_SWAP[norm]))
    elif name in ("irfft", "hfft", "irfftn"):
        sizes = tuple(g.shape[a] for a in axes)
        if name == "hfft":  # irfft(conj(x), other norm)
            gx = xp.conj(xp.fft.rfftn(g, s=sizes, axes=axes, norm=norm))
        else:
            gx = xp.fft.rfftn(g, s=sizes, axes=axes, norm=_SWAP[norm])
        gx = _both_bins_twice(xp, gx, axes[-1], sizes[-1])
    else:
        inverse = {"fft": "ifftn", "fftn": "ifftn", "ifft": "fftn", "ifftn": "fftn"}[name]
        sizes = tuple(g.shape[a] for a in axes)
        gx = getattr(xp.fft, inverse)(g, s=sizes, axes=axes, norm=_SWAP[norm]) if axes else g
    for a in axes:
        gx = _resized(xp, gx, a, shape[a])
    return gx if cast is None else xp.real(gx)


unary("fft", _fft_fwd, _fft_vjp, jvp="linear", complex="own")
