"""Products: matmul (batched, with broadcasting of the batch axes and vector operands) and
conv2d (a cross-correlation computed by im2col); both bilinear, so each is its own JVP's
two halves."""

from __future__ import annotations

from .._backend import sum_to
from ._declare import _is_complex, binary, nary

# ----------------------------------------------------------------------------- linear algebra


def _matmul_grads(xp, g, x, y, want_x: bool):
    """matmul's VJP for x (want_x) or y. A 1-D operand's gradient is a vector-matrix product
    (or an outer product for the other operand), not a product of padded matrices."""
    if x.ndim > 1 and y.ndim > 1:
        if want_x:
            return sum_to(xp, xp.matmul(g, xp.matrix_transpose(y)), x.shape)
        return sum_to(xp, xp.matmul(xp.matrix_transpose(x), g), y.shape)
    if x.ndim == 1 and y.ndim == 1:
        return g * y if want_x else g * x
    if y.ndim == 1:  # x (..., n, k) @ y (k,) -> g (..., n)
        if want_x:
            return xp.expand_dims(g, axis=-1) * y
        if x.ndim == 2:
            return xp.matmul(g, x)
        rows = xp.matmul(xp.expand_dims(g, axis=-2), x)
        return xp.reshape(sum_to(xp, rows, (1, y.shape[0])), y.shape)
    # x (k,) @ y (..., k, m) -> g (..., m)
    if not want_x:
        return sum_to(xp, xp.expand_dims(g, axis=-2) * xp.expand_dims(x, axis=-1), y.shape)
    if y.ndim == 2:
        return xp.matmul(y, g)
    cols = xp.matmul(y, xp.expand_dims(g, axis=-1))
    return xp.reshape(sum_to(xp, cols, (x.shape[0], 1)), x.shape)


def _matmul_fwd(xp, x, y):
    """x @ y; operands whose shapes don't fit get an error naming both shapes, not the
    library's text (NumPy's speaks of gufunc core dimensions). No cost when they fit."""
    try:
        return xp.matmul(x, y)
    except Exception as error:
        problem = _matmul_misfit(tuple(x.shape), tuple(y.shape))
        if problem is None:
            raise
        raise ValueError(f"matmul: {tuple(x.shape)} @ {tuple(y.shape)}: {problem}") from error


def _matmul_misfit(a: tuple, b: tuple) -> str | None:
    """What keeps shapes a and b from a matrix product, in words; None if it's not the
    contracted axes (the library's own error stands)."""
    if not a or not b:
        return "matmul takes arrays of at least one axis, not 0-d ones"
    second = "first" if len(b) == 1 else "second-to-last"
    if a[-1] != b[-1 if len(b) == 1 else -2]:
        k = b[-1 if len(b) == 1 else -2]
        return f"the last axis of the first ({a[-1]}) must match the {second} of the second ({k})"
    return None


binary(
    "matmul", _matmul_fwd,
    (lambda xp, g, x, y, out: _matmul_grads(xp, g, x, y, True), "x y"),
    (lambda xp, g, x, y, out: _matmul_grads(xp, g, x, y, False), "x y"),
    broadcast=False,
    jvp="bilinear",
    complex="holomorphic",
)  # fmt: skip


# ----------------------------------------------------------------------------- convolution
# conv2d((x, w), p): the cross-correlation of x (N, C, H, W) with w (O, C, kh, kw), with
# p = ((stride_h, stride_w), (pad_h, pad_w), (kh, kw), (H, W), x's dtype, (dil_h, dil_w)):
# kernel offset (i, j) meets the padded input (i dil_h, j dil_w) past each window's corner.
# im2col by strided slices of the zero-padded input (a loop over the kernel's offsets, never
# over pixels) and one matrix product. The VJPs are the transposed products; x's sends w^T g
# back through the same windows: each offset's slice is getitem's adjoint, index_add, into
# the padded shape, summed and cropped. Padding is a concat, so that it records on tensors.


def _conv_pad(xp, x, ph, pw):
    n, c, h, w = x.shape
    if pw:
        side = xp.broadcast_to(xp.zeros_like(x[..., :1]), (n, c, h, pw))
        x = xp.concat([side, x, side], axis=3)
    if ph:
        edge = xp.broadcast_to(xp.zeros_like(x[:, :, :1, :]), (n, c, ph, w + 2 * pw))
        x = xp.concat([edge, x, edge], axis=2)
    return x


def _conv_output_size(p, h: int, w: int) -> tuple[int, int]:
    """(Ho, Wo) of conv2d with parameters p for an input of height h and width w."""
    (sh, sw), (ph, pw), (kh, kw) = p[:3]
    dh, dw = p[5]
    return (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1, (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1


def _conv_windows(p, h, w):
    """For each kernel offset (i, j), the key of the padded input's elements it meets."""
    (sh, sw), _, (kh, kw) = p[:3]
    dh, dw = p[5]
    ho, wo = _conv_output_size(p, h, w)
    rows = [slice(i * dh, i * dh + sh * (ho - 1) + 1, sh) for i in range(kh)]
    cols = [slice(j * dw, j * dw + sw * (wo - 1) + 1, sw) for j in range(kw)]
    return [(slice(None), slice(None), r, c) for r in rows for c in cols]


def _conv_columns(xp, x, p):
    """im2col: (N, C kh kw, Ho Wo), column l holding the input patch under output pixel l."""
    n, c, h, w = x.shape
    keys = _conv_windows(p, h, w)
    padded = _conv_pad(xp, x, *p[1])
    ho, wo = _conv_output_size(p, h, w)
    return xp.reshape(xp.stack([padded[k] for k in keys], axis=2), (n, c * len(keys), ho * wo))


def _conv2d_fwd(xp, xs, p):
    x, w = xs
    n, _, h, wd = x.shape
    o = w.shape[0]
    out = xp.matmul(xp.reshape(w, (o, -1)), _conv_columns(xp, x, p))
    return xp.reshape(out, (n, o, *_conv_output_size(p, h, wd)))


def _conv2d_vjp(xp, g, s, p, needs):
    x, w = s[0], s[1]
    n, o, ho, wo = g.shape
    g2 = xp.reshape(g, (n, o, ho * wo))
    gx = gw = None
    if needs[1]:
        cols = _conv_columns(xp, x, p)
        gw = xp.reshape(
            xp.sum(xp.matmul(g2, xp.matrix_transpose(cols)), axis=0), (o, x.shape[1], *p[2])
        )
    if needs[0]:
        c = w.shape[1]
        (ph, pw), (h, wd), dtype = p[1], p[3], p[4]
        keys = _conv_windows(p, h, wd)
        pieces = xp.matmul(xp.matrix_transpose(xp.reshape(w, (o, -1))), g2)
        pieces = xp.reshape(pieces, (n, c, len(keys), ho, wo))
        if _is_complex(pieces) and not _is_complex(x):
            # A real x under a complex weight: its gradient is the real part (as the engine
            # makes it), taken before the pieces are written into x's dtype (array-api-strict
            # refuses writing complex values into a real array).
            pieces = xp.real(pieces)
        shape = (n, c, h + 2 * ph, wd + 2 * pw)
        padded = None
        for i, key in enumerate(keys):
            part = xp.index_add(pieces[:, :, i, ...], (key, shape, dtype))
            padded = part if padded is None else padded + part
        gx = padded[:, :, ph : ph + h, pw : pw + wd]
    return (gx, gw)


# x's gradient reads w; w's reads x.
nary("conv2d", _conv2d_fwd, _conv2d_vjp, ((1,), (0,)), jvp="bilinear", complex="holomorphic")
