"""The linalg extension's rules: diagonal, inv, det, slogdet, solve, solve_triangular, cholesky,
qr, eigh, eig, svd, pinv, matrix_exp; their VJPs and JVPs written out (the decompositions' from
their defining identities)."""

from __future__ import annotations

from .. import _backend
from .._backend import sum_to
from .._node import OUT
from ._declare import _is_complex, linear_pair, nary, unary

# ----------------------------------------------------------------------------- linalg extension
# The primitives of chainrule.linalg. Forwards call the backend's `xp.linalg`; VJPs use
# standard functions and `xp.linalg` (chainrule.linalg under create_graph), so they
# differentiate again. mT(a) is the matrix transpose, mH(a) the conjugate transpose (mT for
# real values). inv, det, solve and matrix_exp are holomorphic; the decompositions of
# Hermitian matrices (cholesky, eigh), qr, svd and pinv have formulas written with mH, for real
# and complex values. cholesky and eigh read only one triangle of a matrix taken as symmetric
# (Hermitian): their gradient is the symmetric (Hermitian) one, as in PyTorch.


def _mT(xp, a):
    return xp.matrix_transpose(a)


def _mH(xp, a):
    return xp.matrix_transpose(xp.conj(a) if _is_complex(a) else a)


def _gap_inverse(xp, d, offdiagonal):
    """F[..., i, j] = 1 / (d_j - d_i) off the diagonal, 1 on it (where it only meets zeros).
    Equal values off the diagonal give inf: degenerate spectra have no unique gradient."""
    gaps = xp.expand_dims(d, axis=-2) - xp.expand_dims(d, axis=-1)
    return 1 / xp.where(offdiagonal, gaps, 1.0)


# diagonal and diagonal_embed are each other's VJP (both linear). p = (offset, input shape,
# `on`: bool (M, N), True on the diagonal, `index`: for each row, its element of the diagonal
# (clipped), length of the diagonal).


def _diagonal_embed_fwd(xp, g, p):
    offset, shape, on, index, length = p
    if length == 0:
        return xp.zeros(shape, dtype=g.dtype)
    rows = xp.expand_dims(xp.take(g, index, axis=-1), axis=-1)
    return xp.where(on, rows, 0.0)


linear_pair(
    "linalg_diagonal",
    lambda xp, x, p: _backend.diagonal(xp, x, p[0]),
    "linalg_diagonal_embed",
    _diagonal_embed_fwd,
    view=True,
)

# inv: d(A^-1) = -A^-1 dA A^-1, so gA = -out^T g out^T.
unary(
    "linalg_inv",
    lambda xp, x, p: _backend.inv(xp, x),
    lambda xp, g, x, out, p: -xp.matmul(xp.matmul(_mT(xp, out), g), _mT(xp, out)),
    "out",
    jvp=lambda xp, t, x, out, p: -xp.matmul(xp.matmul(out, t), out),
    complex="holomorphic",
)


def _adjugate(xp, a, det, g):
    """g adj(A), g one number per matrix: adj(A) = det(A) A^-1, the transposed gradient of
    det, a polynomial in A's entries. At a singular matrix (inverting it raised: an exact zero
    pivot) it comes from the SVD A = U S Vh: adj(A) = det(U) det(Vh) Vh^H adj(S) U^H, adj(S)
    diagonal, entry i the product of the singular values other than s_i (one nonzero entry at
    rank n - 1, none below). Written against xp, so it differentiates again: det A^-1 at any
    order where A is invertible, the SVD's derivative (defined while the singular values
    differ, as at rank n - 1 but not below) at a singular A."""
    scale = xp.expand_dims(xp.expand_dims(g * det, axis=-1), axis=-1)
    try:
        inverse = _backend.inv(xp, a)
    except _backend.SINGULAR_ERRORS:
        inverse = None
    if inverse is not None and not _backend.zero_read_on_host(xp, det):
        return scale * inverse
    u, s, vh = xp.linalg.svd(a)
    # Row i: the singular values, s_i replaced by 1 (the identity from tril and triu: the
    # namespace of vmap's arrays has those, not eye).
    rows = xp.broadcast_to(xp.expand_dims(s, axis=-2), s.shape + s.shape[-1:])
    identity = xp.triu(xp.tril(xp.ones_like(rows)))
    others = xp.prod(rows + identity * (1 - rows), axis=-1)
    c = g * xp.linalg.det(u) * xp.linalg.det(vh)
    scale = xp.expand_dims(xp.expand_dims(c, axis=-1), axis=-1)
    return scale * xp.matmul(_mH(xp, vh) * xp.expand_dims(others, axis=-2), _mH(xp, u))


def _det_vjp(xp, g, x, out, p):
    # d det(A) = tr(adj(A) dA): gA = g adj(A)^T.
    return _mT(xp, _adjugate(xp, x, out, g))


def _det_jvp(xp, t, x, out, p):
    return xp.sum(_mT(xp, _adjugate(xp, x, out, 1.0)) * t, axis=(-2, -1))


def _logdet_jvp(xp, t, x):
    """d log|det A| = tr(A^-1 dA), summed as the product of A^-T and dA."""
    return xp.sum(_mT(xp, _backend.inv(xp, x)) * t, axis=(-2, -1))


unary(
    "linalg_det",
    lambda xp, x, p: xp.linalg.det(x),
    _det_vjp,
    "x out",
    jvp=_det_jvp,
    complex="holomorphic",
)


def _slogdet_vjp(xp, g, s, p, needs):
    # With tau = tr(A^-1 dA): d log|det A| = Re(tau); a real sign is piecewise constant (no
    # gradient), a complex one (det / |det|) moves by sign i Im(tau). So gA = c A^-H with
    # c = g_logabsdet - i Im(conj(g_sign) sign).
    gs, gl = g
    a, sign = s[0], s[1]
    c = None
    if gs is not None and _is_complex(sign):
        c = -1j * xp.imag(xp.conj(gs) * sign)
    if gl is not None:
        c = gl if c is None else c + gl
    if c is None:
        return (None,)
    scale = xp.expand_dims(xp.expand_dims(c, axis=-1), axis=-1)
    return (scale * _mH(xp, _backend.inv(xp, a)),)


def _slogdet_jvp(xp, ts, xs, outs, p):
    tau = _logdet_jvp(xp, ts[0], xs[0])
    if not _is_complex(tau):
        return (None, tau)
    return (outs[0] * (1j * xp.imag(tau)), xp.real(tau))


nary(
    "linalg_slogdet",
    lambda xp, xs, p: tuple(xp.linalg.slogdet(xs[0])),
    _slogdet_vjp,
    ((0, OUT),),
    jvp=_slogdet_jvp,
    multi=True,
    complex="own",
)


def _solve_vjp(xp, g, s, p, needs):
    # A X = B: gB = solve(A^T, g), gA = -gB X^T, each summed over the batch axes it was
    # broadcast along. A 1-D B is one vector for every matrix of A.
    a, b, out = s
    at = _mT(xp, a)
    if b.ndim == 1:
        gb = xp.linalg.solve(at, xp.expand_dims(g, axis=-1))[..., 0]
        ga = -(xp.expand_dims(gb, axis=-1) * xp.expand_dims(out, axis=-2)) if needs[0] else None
    else:
        gb = xp.linalg.solve(at, g)
        ga = -xp.matmul(gb, _mT(xp, out)) if needs[0] else None
    return (
        None if ga is None else sum_to(xp, ga, a.shape),
        sum_to(xp, gb, b.shape) if needs[1] else None,
    )


def _solve_jvp(xp, ts, xs, outs, p):
    # A X = B: dX = A^-1 (dB - dA X). A 1-D B is one vector for every matrix of A.
    (ta, tb), (a, b), x = ts, xs, outs[0]
    vector = b.ndim == 1
    if vector:
        x = xp.expand_dims(x, axis=-1)
        tb = None if tb is None else xp.expand_dims(tb, axis=-1)
    rhs = tb
    if ta is not None:
        rhs = -xp.matmul(ta, x) if rhs is None else rhs - xp.matmul(ta, x)
    dx = xp.linalg.solve(a, rhs)
    return dx[..., 0] if vector else dx


nary(
    "linalg_solve",
    lambda xp, xs, p: _backend.solve(xp, *xs),
    _solve_vjp,
    ((0, 1, OUT),) * 2,
    jvp=_solve_jvp,
    complex="holomorphic",
)


# solve_triangular: T X = B, T the triangle of A that p = (upper, unit) names (its diagonal
# ones when unit): only that part of A is read, and only it gets a gradient. gB = T^-T g (a
# solve by the transposed triangle, the other kind), gA = the triangle of -gB X^T; each summed
# over the batch axes it was broadcast along. dX = T^-1 (dB - tri(dA) X).


def _triangle(xp, a, p):
    """The part of `a` that solve_triangular reads: its triangle, without the diagonal when
    unit."""
    upper, unit = p
    k = 1 if unit else 0
    return xp.triu(a, k=k) if upper else xp.tril(a, k=-k)


def _solve_triangular_vjp(xp, g, s, p, needs):
    a, b, out = s
    gb = xp.primitive("linalg_solve_triangular", [_mT(xp, a), g], (not p[0], p[1]))
    ga = _triangle(xp, -xp.matmul(gb, _mT(xp, out)), p) if needs[0] else None
    return (
        None if ga is None else sum_to(xp, ga, a.shape),
        sum_to(xp, gb, b.shape) if needs[1] else None,
    )


def _solve_triangular_jvp(xp, ts, xs, outs, p):
    (ta, tb), a, x = ts, xs[0], outs[0]
    rhs = tb
    if ta is not None:
        da_x = xp.matmul(_triangle(xp, ta, p), x)
        rhs = -da_x if rhs is None else rhs - da_x
    return xp.primitive("linalg_solve_triangular", [a, rhs], p)


nary(
    "linalg_solve_triangular",
    lambda xp, xs, p: _backend.solve_triangular(xp, xs[0], xs[1], *p),
    _solve_triangular_vjp,
    ((0, 1, OUT),) * 2,
    jvp=_solve_triangular_jvp,
    complex="holomorphic",
)


def _cholesky_vjp(xp, g, x, out, p):
    # A = L L^H: gA = L^-H S L^-1 with S = (tril(L^H g) + tril(L^H g, -1)^H) / 2 (its
    # diagonal's real part, for complex values), by two solves with L^H (the standard has no
    # triangular solve). S is Hermitian, so solving L^H Y = S and then L^H Z = Y^H gives Z = gA.
    lh = _mH(xp, out)
    w = xp.tril(xp.matmul(lh, g))
    s = (w + _mH(xp, xp.tril(w, k=-1))) / 2
    if _is_complex(s):
        s = (s + _mH(xp, s)) / 2
    return xp.linalg.solve(lh, _mH(xp, xp.linalg.solve(lh, s)))


def _cholesky_jvp(xp, t, x, out, p):
    # A = L L^H: dL = L Phi(L^-1 dA L^-H), Phi: the lower triangle with half the diagonal. dA
    # is taken Hermitian (as the VJP's gradient is). L^-1 dA L^-H = L^-1 (L^-1 dA)^H for a
    # Hermitian dA: two solves.
    da = (t + _mH(xp, t)) / 2
    m = xp.linalg.solve(out, _mH(xp, xp.linalg.solve(out, da)))
    lower = xp.tril(m)
    return xp.matmul(out, lower - xp.triu(lower) / 2)


unary(
    "linalg_cholesky",
    lambda xp, x, p: _backend.cholesky(xp, x),
    _cholesky_vjp,
    "out",
    jvp=_cholesky_jvp,
    complex="own",
)


def _qr_square_or_tall(xp, gq, gr, q, r):
    """gA for A = QR with R square and invertible (its diagonal real):
    gA = (gQ + Q copyltu(gR R^H - Q^H gQ)) R^-H, copyltu(M) = triu(M) + triu(M, 1)^H with
    the real part of M's diagonal."""
    c = None if gr is None else xp.matmul(gr, _mH(xp, r))
    if gq is not None:
        qtg = xp.matmul(_mH(xp, q), gq)
        c = -qtg if c is None else c - qtg
    n = xp.triu(c) + _mH(xp, xp.triu(c, k=1))
    if _is_complex(n):
        n = (n + _mH(xp, n)) / 2
    b = xp.matmul(q, n)
    if gq is not None:
        b = b + gq
    return _mH(xp, xp.linalg.solve(r, _mH(xp, b)))


def _qr_vjp(xp, g, s, p, needs):
    gq, gr = g
    _, q, r = s
    m, n = q.shape[-2], r.shape[-1]
    if m > n and p == "complete":
        raise NotImplementedError(
            "linalg.qr: the gradient for mode='complete' of a matrix with more rows than "
            "columns is not implemented (Q's extra columns are not unique); use mode='reduced'"
        )
    if m >= n:
        return (_qr_square_or_tall(xp, gq, gr, q, r),)
    # Wide (m < n): A = [X | Y] with X = QU square and Y = QV. Then gY = Q gV, and X is
    # a square QR whose gQ gains Y gV^T.
    u, v = r[..., :m], r[..., m:]
    gu, gv = (None, xp.zeros_like(v)) if gr is None else (gr[..., :m], gr[..., m:])
    y_gv = xp.matmul(xp.matmul(q, v), _mH(xp, gv))
    gq = y_gv if gq is None else gq + y_gv
    return (xp.concat([_qr_square_or_tall(xp, gq, gu, q, u), xp.matmul(q, gv)], axis=-1),)


def _qr_square_or_tall_jvp(xp, da, q, r):
    """(dQ, dR) for A = QR with R square and invertible (its diagonal real). With
    X = Q^H dA R^-1 = Q^H dQ + dR R^-1, Q^H dQ skew-Hermitian and dR R^-1 upper triangular
    with a real diagonal: Q^H dQ = W - W^H + i Im(diag X) with W the strict lower triangle
    of X, dR = (X - Q^H dQ) R, dQ = dA R^-1 - Q (X - Q^H dQ)."""
    da_rinv = _mT(xp, xp.linalg.solve(_mT(xp, r), _mT(xp, da)))
    x = xp.matmul(_mH(xp, q), da_rinv)
    w = xp.tril(x, k=-1)
    upper = x - (w - _mH(xp, w))
    if _is_complex(upper):
        upper = upper - (xp.triu(xp.tril(upper)) - _mH(xp, xp.triu(xp.tril(upper)))) / 2
    return da_rinv - xp.matmul(q, upper), xp.matmul(upper, r)


def _qr_jvp(xp, ts, xs, outs, p):
    t, (q, r) = ts[0], outs
    m, n = q.shape[-2], r.shape[-1]
    if m > n and p == "complete":
        # Q's extra columns are not unique: their tangent is taken as 0 (as PyTorch); R's
        # extra rows are zeros.
        k = n
        dq, dr = _qr_square_or_tall_jvp(xp, t, q[..., :k], r[..., :k, :])
        return (
            xp.concat([dq, xp.zeros_like(q[..., k:])], axis=-1),
            xp.concat([dr, xp.zeros_like(r[..., k:, :])], axis=-2),
        )
    if m >= n:
        return _qr_square_or_tall_jvp(xp, t, q, r)
    # Wide (m < n): A = [X | Y] with X = QU square and Y = QV: dV = Q^T (dY - dQ V).
    u, v = r[..., :m], r[..., m:]
    dq, du = _qr_square_or_tall_jvp(xp, t[..., :m], q, u)
    dv = xp.matmul(_mH(xp, q), t[..., m:] - xp.matmul(dq, v))
    return dq, xp.concat([du, dv], axis=-1)


def _qr_fwd(xp, xs, p):
    # With no more rows than columns the complete factors are the reduced ones (which are all
    # that some libraries give).
    x = xs[0]
    return tuple(xp.linalg.qr(x, mode="reduced" if x.shape[-2] <= x.shape[-1] else p))


nary(
    "linalg_qr",
    _qr_fwd,
    _qr_vjp,
    ((OUT,),),
    jvp=_qr_jvp,
    multi=True,
    complex="own",
)


def _eigh_vjp(xp, g, s, p, needs):
    # A = V diag(w) V^H: gA = V (diag(gw) + F o (X - X^H) / 2) V^H, X = V^H gV,
    # F_ij = 1 / (w_j - w_i): inf/NaN for repeated eigenvalues, as in PyTorch. (Complex
    # eigenvectors are defined up to a phase each: a loss that depends on it has no gradient.)
    gw, gv = g
    _, w, v = s
    vt = _mH(xp, v)
    if gv is None:
        return (xp.matmul(xp.expand_dims(gw, axis=-2) * v, vt),)
    x = xp.matmul(vt, gv)
    inner = (x - _mH(xp, x)) / 2 * _gap_inverse(xp, w, p)
    if gw is not None:
        inner = xp.where(p, inner, xp.expand_dims(gw, axis=-2))
    return (xp.matmul(xp.matmul(v, inner), vt),)


def _eigh_jvp(xp, ts, xs, outs, p):
    # A = V diag(w) V^H, P = V^H dA V (dA taken Hermitian): dw = diag(P) (real), dV = V (F o P)
    # with F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it.
    t, (w, v) = ts[0], outs
    da = (t + _mH(xp, t)) / 2
    da_v = xp.matmul(da, v)
    if _is_complex(v):
        dw = xp.real(xp.sum(xp.conj(v) * da_v, axis=-2))
    else:
        dw = xp.sum(v * da_v, axis=-2)
    inner = xp.where(p, xp.matmul(_mH(xp, v), da_v) * _gap_inverse(xp, w, p), 0.0)
    return dw, xp.matmul(v, inner)


nary(
    "linalg_eigh",
    lambda xp, xs, p: tuple(xp.linalg.eigh(xs[0])),
    _eigh_vjp,
    ((OUT,),),
    jvp=_eigh_jvp,
    multi=True,
    complex="own",
)


def _eig_parts(xp, w, v, offdiagonal):
    """E_ij = 1 / (w_j - w_i) off the diagonal, 0 on it; and V^H V."""
    e = xp.where(offdiagonal, _gap_inverse(xp, w, offdiagonal), 0.0)
    return e, xp.matmul(_mH(xp, v), v)


def _eig_vjp(xp, g, s, p, needs):
    # A = V diag(w) V^-1, columns of V of unit norm (each with a free phase). With
    # P = V^-1 dA V: dw = diag(P), dV = V (E o P + diag(d)), d_i = -Re((V^H V (E o P))_ii)
    # (the norm stays 1; the phase is taken fixed). The adjoint: W = V^H gV,
    # gA = V^-H (diag(gw) + conj(E) o (W - V^H V diag(Re diag(W)))) V^H; a real A gets its
    # real part.
    gw, gv = g
    _, w, v = s
    vh = _mH(xp, v)
    if gv is None:
        inner = xp.where(p[1], 0.0, xp.expand_dims(gw, axis=-2))
    else:
        e, vhv = _eig_parts(xp, w, v, p[1])
        wm = xp.matmul(vh, gv)
        re_diag = xp.real(xp.linalg.diagonal(wm))
        inner = (wm - xp.expand_dims(re_diag, axis=-2) * vhv) * xp.conj(e)
        if gw is not None:
            inner = xp.where(p[1], inner, xp.expand_dims(gw, axis=-2))
    return (xp.linalg.solve(vh, xp.matmul(inner, vh)),)


def _eig_jvp(xp, ts, xs, outs, p):
    t, (w, v) = ts[0], outs
    pm = xp.linalg.solve(
        v, xp.matmul(xp.astype(t, v.dtype), v)
    )  # a real tangent: PyTorch won't promote
    e, vhv = _eig_parts(xp, w, v, p[1])
    c = e * pm
    d = -xp.real(xp.linalg.diagonal(xp.matmul(vhv, c)))
    return xp.linalg.diagonal(pm), xp.matmul(v, c + xp.where(p[1], 0.0, xp.expand_dims(d, axis=-2)))


# eig: eigenvalues and eigenvectors as complex dtype p[0]; p[1]: True off the diagonal.
nary(
    "linalg_eig",
    lambda xp, xs, p: tuple(xp.astype(r, p[0]) for r in xp.linalg.eig(xs[0])),
    _eig_vjp,
    ((OUT,),),
    jvp=_eig_jvp,
    multi=True,
    complex="own",
)


def _svd_vjp(xp, g, saved, p, needs):
    # A = U diag(s) Vh, k = min(m, n), V = Vh^H, X = U^H gU, Y = V^H gV, F_ij = 1/(s_j^2 - s_i^2):
    # gA = U (diag(gS) + (F o (X - X^H)) diag(s) + diag(s) (F o (Y - Y^H))) Vh
    #      + (I - U U^H) gU diag(1/s) Vh + U diag(1/s) gV^H (I - V V^H).
    # Complex values add i Im(X_ii - Y_ii) / (2 s_i) on the diagonal (the phases of the
    # singular vectors: a loss that depends on them has no gradient). Repeated singular
    # values give inf/NaN (when gU or gVh is used), as in PyTorch.
    full, offdiagonal = p
    gu, gs, gvh = g
    _, u, s, vh = saved
    m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    if full and m != n:
        if gu is not None or gvh is not None:
            raise NotImplementedError(
                "linalg.svd: the gradient through U or Vh for full_matrices=True of a "
                "non-square matrix is not implemented (their extra columns are not unique); "
                "use full_matrices=False"
            )
        u, vh = u[..., :k], vh[..., :k, :]
    if gu is None and gvh is None:
        return (xp.matmul(xp.expand_dims(gs, axis=-2) * u, vh),)
    s_col, s_row = xp.expand_dims(s, axis=-1), xp.expand_dims(s, axis=-2)
    f = _gap_inverse(xp, s * s, offdiagonal)
    inner = None
    phase = None  # Im(X_ii - Y_ii), complex values only
    complex_values = _is_complex(u)
    if gu is not None:
        x = xp.matmul(_mH(xp, u), gu)
        inner = (x - _mH(xp, x)) * f * s_row
        if complex_values:
            phase = xp.imag(xp.linalg.diagonal(x))
    if gvh is not None:
        y = xp.matmul(vh, _mH(xp, gvh))
        term = (y - _mH(xp, y)) * f * s_col
        inner = term if inner is None else inner + term
        if complex_values:
            im_y = xp.imag(xp.linalg.diagonal(y))
            phase = -im_y if phase is None else phase - im_y
    diagonal = gs
    if phase is not None:
        phase = phase * 1j / (2 * s)
        diagonal = phase if gs is None else gs + phase
    if diagonal is not None:
        inner = xp.where(offdiagonal, inner, xp.expand_dims(diagonal, axis=-2))
    elif complex_values:
        inner = xp.where(offdiagonal, inner, 0.0)
    ga = xp.matmul(xp.matmul(u, inner), vh)
    if gu is not None and m > k:
        ga = ga + xp.matmul((gu - xp.matmul(u, x)) / s_row, vh)
    if gvh is not None and n > k:
        ga = ga + xp.matmul(u, (gvh - xp.matmul(_mH(xp, y), vh)) / s_col)
    return (ga,)


def _svd_jvp(xp, ts, xs, outs, p):
    # A = U diag(s) V^H, k = min(m, n), P = U^H dA V, F_ij = 1 / (s_j^2 - s_i^2) off the
    # diagonal, 0 on it: ds = Re diag(P),
    # dU = U (F o (P S + S P^H)) + (I - U U^H) dA V S^-1,
    # dV = V (F o (S P + P^H S)) + (I - V V^H) dA^H U S^-1,
    # and for complex values the phases: U gains i Im(P_ii) / (2 s_i) on the diagonal of its
    # first term, V loses it (only their difference is defined).
    # With full_matrices=True, the extra columns of U (rows of Vh) of a non-square matrix are
    # not unique: their tangent is taken as 0, as PyTorch.
    full, offdiagonal = p
    t, (u, s, vh) = ts[0], outs
    m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    extra = full and m != n
    if extra:
        u_all, vh_all = u, vh
        u, vh = u[..., :k], vh[..., :k, :]
    v = _mH(xp, vh)
    dav = xp.matmul(t, v)
    datu = xp.matmul(_mH(xp, t), u)
    pm = xp.matmul(_mH(xp, u), dav)
    s_col, s_row = xp.expand_dims(s, axis=-1), xp.expand_dims(s, axis=-2)
    f = xp.where(offdiagonal, _gap_inverse(xp, s * s, offdiagonal), 0.0)
    complex_values = _is_complex(u)
    if complex_values:
        ds = xp.real(xp.sum(xp.conj(u) * dav, axis=-2))
    else:
        ds = xp.sum(u * dav, axis=-2)
    du_inner = f * (pm * s_row + s_col * _mH(xp, pm))
    dv_inner = f * (s_col * pm + _mH(xp, pm) * s_row)
    if complex_values:
        pd = xp.imag(xp.linalg.diagonal(pm))
        phase = xp.where(offdiagonal, 0.0, xp.expand_dims(pd * 0.5j / s, axis=-2))
        du_inner = du_inner + phase
        dv_inner = dv_inner - phase
    du = xp.matmul(u, du_inner)
    dv = xp.matmul(v, dv_inner)
    if m > k:
        du = du + (dav - xp.matmul(u, pm)) / s_row
    if n > k:
        dv = dv + (datu - xp.matmul(v, _mH(xp, pm))) / s_row
    dvh = _mH(xp, dv)
    if extra:
        du = xp.concat([du, xp.zeros_like(u_all[..., k:])], axis=-1)
        dvh = xp.concat([dvh, xp.zeros_like(vh_all[..., k:, :])], axis=-2)
    return du, ds, dvh


nary(
    "linalg_svd",
    lambda xp, xs, p: tuple(xp.linalg.svd(xs[0], full_matrices=p[0])),
    _svd_vjp,
    ((OUT,),),
    jvp=_svd_jvp,
    multi=True,
    complex="own",
)


def _pinv_vjp(xp, g, x, out, p):
    # P = pinv(A), exact where the rank of A is locally constant (Golub & Pereyra):
    # gA = -P^H g P^H + (I - A P) g^H P P^H + P^H P g^H (I - P A).
    pt, gt = _mH(xp, out), _mH(xp, g)
    ga = -xp.matmul(xp.matmul(pt, g), pt)
    ga = ga + xp.matmul(gt - xp.matmul(x, xp.matmul(out, gt)), xp.matmul(out, pt))
    return ga + xp.matmul(xp.matmul(pt, out), gt - xp.matmul(xp.matmul(gt, out), x))


def _pinv_jvp(xp, t, x, out, p):
    # dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P.
    pt, dat = _mH(xp, out), _mH(xp, t)
    dp = -xp.matmul(xp.matmul(out, t), out)
    dp = dp + xp.matmul(xp.matmul(out, pt), dat - xp.matmul(xp.matmul(dat, x), out))
    return dp + xp.matmul(dat - xp.matmul(out, xp.matmul(x, dat)), xp.matmul(pt, out))


unary(
    "linalg_pinv",
    lambda xp, x, p: xp.linalg.pinv(x, rtol=p),
    _pinv_vjp,
    "x out",
    jvp=_pinv_jvp,
    complex="own",
)


def _exp_derivative(xp, a, e):
    """L(a, e), the derivative of exp at a in the direction e: the upper right block of
    exp([[a, e], [0, a]]) (a block triangular matrix whose exponential holds it there). Written
    with matrix_exp itself, so it differentiates again, to any order."""
    n = a.shape[-1]
    top = xp.concat([a, e], axis=-1)
    bottom = xp.concat([xp.zeros_like(a), a], axis=-1)
    block = xp.primitive("linalg_matrix_exp", xp.concat([top, bottom], axis=-2))
    return block[..., :n, n:]


# matrix_exp: d exp(A) = L(A, dA), and L(A, .)'s transpose is L(A^T, .): gA = L(A^T, g).
unary(
    "linalg_matrix_exp",
    lambda xp, x, p: _backend.matrix_exp(xp, x),
    lambda xp, g, x, out, p: _exp_derivative(xp, _mT(xp, x), g),
    "x",
    jvp=lambda xp, t, x, out, p: _exp_derivative(xp, x, t),
    complex="holomorphic",
)
