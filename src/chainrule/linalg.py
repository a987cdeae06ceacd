"""chainrule.linalg: the Array API linear algebra extension (2025.12), differentiable for real
and complex inputs (PyTorch's convention for complex gradients), and PyTorch's matrix_exp.
Decompositions, inv, det, solve, pinv and matrix_exp are primitives of `_rules` (their VJPs
live there); norms, trace, cross, outer and matrix_power are composites of differentiable ops."""

from __future__ import annotations

import builtins
from typing import Any, Literal, NamedTuple

from . import _backend
from ._backend import DEFAULT_FLOAT
from ._dtypes import TORCH_DTYPE_NAMES
from ._namespace import (
    abs,
    astype,
    complex64,
    complex128,
    conj,
    expand_dims,
    float16,
    float32,
    imag,
    inf,
    matmul,
    matrix_transpose,
    max,
    min,
    positive,
    real,
    reshape,
    result_type,
    sqrt,
    square,
    stack,
    sum,
    tensordot,
    unstack,
    vecdot,
    where,
)
from ._rules import OPS
from ._tensor import Tensor, as_tensor, as_tensors, dual, grad_mode
from ._typing import ArrayLike, Axis, DTypeLike

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh",
    "householder_product", "inv", "matmul", "matrix_exp", "matrix_norm", "matrix_power",
    "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
    "solve_triangular", "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
    "EigResult", "EighResult", "QRResult", "SlogdetResult", "SVDResult",
]  # fmt: skip


def __dir__() -> list[str]:
    """The API only (dir() and editors' completion), not the names this module imports."""
    return sorted(__all__)


class EigResult(NamedTuple):
    """What eig returns."""

    eigenvalues: Tensor
    eigenvectors: Tensor


class EighResult(NamedTuple):
    """What eigh returns."""

    eigenvalues: Tensor
    eigenvectors: Tensor


class QRResult(NamedTuple):
    """What qr returns."""

    Q: Tensor
    R: Tensor


class SlogdetResult(NamedTuple):
    """What slogdet returns."""

    sign: Tensor
    logabsdet: Tensor


class SVDResult(NamedTuple):
    """What svd returns."""

    U: Tensor
    S: Tensor
    Vh: Tensor


def _matrices(x: ArrayLike, name: str, square_only: bool = False) -> Tensor:
    x = as_tensor(x)
    if x.ndim < 2 or (square_only and x.shape[-1] != x.shape[-2]):
        kind = "square matrices" if square_only else "matrices"
        raise ValueError(f"linalg.{name} needs a stack of {kind}, got shape {x.shape}")
    return x


def _constant(x: Tensor, data: Any) -> Tensor:
    """A result without gradient, from a raw array of x's backend."""
    return Tensor(_backend.normalize(data, x._xp), x._xp, None)


def _records(x: Tensor) -> bool:
    return (x._edge is not None and grad_mode.enabled) or dual(x)


def _off_diagonal(x: Tensor, n: int) -> Any:
    """A bool (n, n) array of x's backend, True off the diagonal (for the VJPs)."""
    i = x._xp.arange(n)
    return x._xp.reshape(i, (n, 1)) != x._xp.reshape(i, (1, n))


def _raw(v: Any) -> Any:
    return v._data if v.__class__ is Tensor else v


# ----------------------------------------------------------------------------- products
# matmul, matrix_transpose, tensordot and vecdot are imported above from the main namespace.


def outer(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
    """The outer product of two 1-D tensors."""
    (x1, x2), _ = as_tensors((x1, x2), "outer")
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"linalg.outer needs 1-D inputs, got shapes {x1.shape} and {x2.shape}")
    return reshape(x1, (-1, 1)) * x2


def cross(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Tensor:
    """Cross products of 3-vectors along `axis` (negative; the other axes broadcast)."""
    (x1, x2), _ = as_tensors((x1, x2), "cross")
    if not -builtins.min(x1.ndim, x2.ndim) <= axis < 0:
        raise ValueError(
            f"linalg.cross: axis must be in [-{builtins.min(x1.ndim, x2.ndim)}, -1], got {axis}"
        )
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(
            f"linalg.cross needs size 3 along axis {axis}, got shapes {x1.shape} and {x2.shape}"
        )
    a0, a1, a2 = unstack(x1, axis=axis)
    b0, b1, b2 = unstack(x2, axis=axis)
    return stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=axis)


# ----------------------------------------------------------------------------- diagonal and trace


def diagonal(x: ArrayLike, /, *, offset: int = 0) -> Tensor:
    """The diagonal `offset` of each matrix (above the main one if positive, below if negative)."""
    x = _matrices(x, "diagonal")
    xp = x._xp
    m, n = x.shape[-2:]
    first_row = builtins.max(0, -offset)
    length = builtins.max(0, builtins.min(m - first_row, n - builtins.max(0, offset)))
    rows = xp.arange(m)
    on = xp.reshape(xp.arange(n), (1, n)) - xp.reshape(rows, (m, 1)) == offset
    index = xp.clip(rows - first_row, 0, builtins.max(length - 1, 0))
    return OPS["linalg_diagonal"](x, (offset, x._data.shape, on, index, length))


def trace(x: ArrayLike, /, *, offset: int = 0, dtype: DTypeLike = None) -> Tensor:
    """The sum of the diagonal `offset` of each matrix."""
    return sum(diagonal(x, offset=offset), axis=-1, dtype=dtype)


# ----------------------------------------------------------------------------- inverses and solvers


def inv(x: ArrayLike, /) -> Tensor:
    """The inverses of square matrices; the gradient needs them invertible: -inv(x)^T g
    inv(x)^T. Integers and bools are inverted in the default floating dtype (float64 unless set)."""
    x = _matrices(x, "inv", square_only=True)
    if x.dtype.kind not in "fc":
        x = astype(x, DEFAULT_FLOAT.real)
    return OPS["linalg_inv"](x)


def det(x: ArrayLike, /) -> Tensor:
    """Determinants; the gradient is the adjugate's transpose, at singular matrices too (see
    docs/conventions.md)."""
    return OPS["linalg_det"](_matrices(x, "det", square_only=True))


def slogdet(x: ArrayLike, /) -> SlogdetResult:
    """Sign and log of the absolute value of determinants; the gradient (of logabsdet only)
    needs invertible matrices."""
    return SlogdetResult(*OPS["linalg_slogdet"]((_matrices(x, "slogdet", square_only=True),)))


def solve(x1: ArrayLike, x2: ArrayLike, /) -> Tensor:
    """X with x1 @ X = x2. x2 of shape (M,) is one vector for every matrix of x1; otherwise x2
    is a stack of (M, K) matrices, its batch axes broadcast with those of x1."""
    (x1, x2), _ = as_tensors((x1, x2), "solve")
    _matrices(x1, "solve", square_only=True)
    dtype = result_type(x1, x2)
    return OPS["linalg_solve"]((astype(x1, dtype, copy=False), astype(x2, dtype, copy=False)))


def solve_triangular(
    A: ArrayLike,  # noqa: N803 - PyTorch's names
    B: ArrayLike,  # noqa: N803
    /,
    *,
    upper: bool,
    left: bool = True,
    unitriangular: bool = False,
) -> Tensor:
    """X with A X = B (X A = B when not `left`), for triangular A, as PyTorch's
    `linalg.solve_triangular`: only A's upper (or lower) triangle is read, without its diagonal
    (taken as ones) when `unitriangular`, and only that part gets a gradient. Batch dimensions
    broadcast; B is a matrix or a stack of them."""
    (A, B), _ = as_tensors((A, B), "solve_triangular")
    _matrices(A, "solve_triangular", square_only=True)
    _matrices(B, "solve_triangular")
    dtype = result_type(A, B)
    A, B = astype(A, dtype, copy=False), astype(B, dtype, copy=False)
    if left:
        return OPS["linalg_solve_triangular"]((A, B), (upper, unitriangular))
    # X A = B: A^T X^T = B^T, A^T the triangle of the other kind.
    xt = OPS["linalg_solve_triangular"](
        (matrix_transpose(A), matrix_transpose(B)), (not upper, unitriangular)
    )
    return matrix_transpose(xt)


def pinv(x: ArrayLike, /, *, rtol: float | ArrayLike | None = None) -> Tensor:
    """Moore-Penrose pseudo-inverses (singular values below rtol times the largest count as
    zero). The gradient holds where the rank does not change nearby, as for full rank.
    Integers and bools are inverted in the default floating dtype (float64 unless set)."""
    x = _matrices(x, "pinv")
    if x.dtype.kind not in "fc":
        x = astype(x, DEFAULT_FLOAT.real)
    return OPS["linalg_pinv"](x, _raw(rtol))


def matrix_power(x: ArrayLike, n: int, /) -> Tensor:
    """x multiplied by itself n times (by repeated squaring); inv(x) -n times for negative n;
    for n == 0, identity matrices (a constant)."""
    x = _matrices(x, "matrix_power", square_only=True)
    if not isinstance(n, int):
        raise TypeError(f"linalg.matrix_power: n must be an integer, got {type(n).__name__}")
    if n == 0:
        xp = x._xp
        return _constant(x, xp.zeros_like(x._data) + xp.eye(x.shape[-1], dtype=x._data.dtype))
    base = inv(x) if n < 0 else x
    n = -n if n < 0 else n
    out = None
    while True:
        if n & 1:
            out = base if out is None else matmul(out, base)
        n >>= 1
        if not n:
            return positive(out) if out is x else out
        base = matmul(base, base)


def matrix_exp(x: ArrayLike, /) -> Tensor:
    """The exponentials of square matrices (any batch dimensions; real or complex floating), by
    scaling and squaring with Padé approximants (float16 computed in float32). Derivatives of
    every order in both modes: the derivative is itself a matrix exponential, of a block matrix
    twice the size. PyTorch's errors for fewer than 2 dimensions, non-square matrices and
    integer or bool input."""
    x = as_tensor(x)
    if x.ndim < 2:
        raise RuntimeError("linalg.matrix_exp: The input tensor A must have at least 2 dimensions.")
    if x.shape[-1] != x.shape[-2]:
        raise RuntimeError(
            "linalg.matrix_exp: A must be batches of square matrices, but they are "
            f"{x.shape[-2]} by {x.shape[-1]} matrices"
        )
    if x.dtype.kind not in "fc":
        raise RuntimeError(
            "linalg.matrix_exp: Expected a floating point or complex tensor as input. Got "
            f"{TORCH_DTYPE_NAMES.get(x.dtype, x.dtype)}"
        )
    if x.dtype == float16:
        return astype(OPS["linalg_matrix_exp"](astype(x, float32)), float16)
    return OPS["linalg_matrix_exp"](x)


def matrix_rank(x: ArrayLike, /, *, rtol: float | ArrayLike | None = None) -> Tensor:
    """The number of singular values above rtol times the largest; no gradient."""
    x = _matrices(x, "matrix_rank")
    return OPS["linalg_matrix_rank"]((x,) if rtol is None else (x, rtol))


# ----------------------------------------------------------------------------- decompositions


def householder_product(A: ArrayLike, tau: ArrayLike, /) -> Tensor:  # noqa: N803 - PyTorch's
    """The first n columns of the product H_1 ... H_k of Householder reflectors
    H_i = I - tau_i v_i v_i^H, as PyTorch's: v_i is column i of A (..., m, n) below its
    diagonal, with a 1 on it and zeros above (how a QR factorization stores its reflectors),
    k = tau.shape[-1] <= n <= m, and the batch dimensions of A and tau are equal. Composed of
    differentiable operations (k rank-one updates), so derivatives of every order in both
    modes; PyTorch's errors for wrong shapes."""
    (A, tau), _ = as_tensors((A, tau), "householder_product")  # noqa: N806
    name = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    m, n = A.shape[-2:]
    if m < n:
        raise RuntimeError(
            f"{name}: input.shape[-2] must be greater than or equal to input.shape[-1]"
        )
    if tau.ndim != A.ndim - 1:
        raise RuntimeError(
            f"{name}: Expected tau to have one dimension less than input, but got tau.ndim "
            f"equal to {tau.ndim} and input.ndim is equal to {A.ndim}"
        )
    k = tau.shape[-1]
    if n < k:
        raise RuntimeError(
            f"{name}: input.shape[-1] must be greater than or equal to tau.shape[-1]"
        )
    if tau.shape[:-1] != A.shape[:-2]:
        raise RuntimeError(
            f"{name}: Expected batch dimensions of tau to be equal to input.shape[:-2], but "
            f"got {list(tau.shape[:-1])}"
        )
    dtype = result_type(A, tau)
    if dtype.kind not in "fc":
        raise NotImplementedError(
            f"\"orgqr_cpu\" not implemented for '{TORCH_DTYPE_NAMES.get(dtype, dtype)}'"
        )
    A, tau = astype(A, dtype, copy=False), astype(tau, dtype, copy=False)  # noqa: N806
    xp = A._xp
    row = xp.arange(m)
    eye = xp.astype(xp.reshape(row, (m, 1)) == xp.reshape(xp.arange(n), (1, n)), A._data.dtype)
    q = _constant(A, xp.zeros_like(A._data) + eye)
    # H_1 (H_2 (... (H_k I))): each reflector a rank-one update, H q = q - tau v (v^H q).
    for i in reversed(range(k)):
        v = where(_constant(A, row > i), A[..., i], _constant(A, xp.astype(row == i, eye.dtype)))
        vh_q = sum(expand_dims(conj(v) if dtype.kind == "c" else v, axis=-1) * q, axis=-2)
        scale = expand_dims(tau[..., i : i + 1], axis=-1)
        q = q - scale * expand_dims(v, axis=-1) * expand_dims(vh_q, axis=-2)
    return q


def cholesky(x: ArrayLike, /, *, upper: bool = False) -> Tensor:
    """L with x = L L^H (or U = L^H with x = U^H U if upper), for Hermitian (real: symmetric)
    positive definite x. The gradient is the Hermitian one (x is taken as Hermitian)."""
    lower = OPS["linalg_cholesky"](_matrices(x, "cholesky", square_only=True))
    if not upper:
        return lower
    return matrix_transpose(conj(lower) if lower.dtype.kind == "c" else lower)


def qr(x: ArrayLike, /, *, mode: Literal["reduced", "complete"] = "reduced") -> QRResult:
    """Q and R with x = QR. Gradients need R's leading square block invertible (full rank); with
    mode='complete' and more rows than columns they raise NotImplementedError."""
    if mode not in ("reduced", "complete"):
        raise ValueError(f"linalg.qr: mode must be 'reduced' or 'complete', got {mode!r}")
    return QRResult(*OPS["linalg_qr"]((_matrices(x, "qr"),), mode))


def eigh(x: ArrayLike, /) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices. The gradient is the
    symmetric one; through the eigenvectors it needs distinct eigenvalues (else inf/NaN)."""
    x = _matrices(x, "eigh", square_only=True)
    return EighResult(*OPS["linalg_eigh"]((x,), _off_diagonal(x, x.shape[-1])))


def _eig(x: ArrayLike, name: str) -> list[Tensor]:
    """The backend's general eigendecomposition of square matrices (values, vectors) as
    complex tensors: the standard's dtype, also where every eigenvalue is real."""
    x = _matrices(x, name, square_only=True)
    xp = x._xp
    dtype = _backend.to_backend_dtype(
        xp, complex64 if x.dtype in (float32, complex64) else complex128
    )
    return list(OPS["linalg_eig"]((x,), (dtype, _off_diagonal(x, x.shape[-1]))))


def eig(x: ArrayLike, /) -> EigResult:
    """Eigenvalues and right eigenvectors (columns of unit norm) of square matrices, complex
    (complex64 for float32), eigenvalues in no particular order. Differentiable where the
    eigenvalues are distinct (else inf/NaN, as PyTorch); each eigenvector has a free phase,
    so a loss that depends on it has no gradient."""
    return EigResult(*_eig(x, "eig"))


def eigvals(x: ArrayLike, /) -> Tensor:
    """Eigenvalues of square matrices, complex (complex64 for float32); differentiable."""
    return _eig(x, "eigvals")[0]


def eigvalsh(x: ArrayLike, /) -> Tensor:
    """Eigenvalues (ascending) of symmetric matrices; gradient V diag(g) V^T."""
    x = _matrices(x, "eigvalsh", square_only=True)
    if _records(x):
        return eigh(x).eigenvalues
    return OPS["linalg_eigvalsh"]((x,))


def svd(x: ArrayLike, /, *, full_matrices: bool = True) -> SVDResult:
    """U, S (descending) and Vh with x = U diag(S) Vh. Gradients through U or Vh need distinct
    nonzero singular values (else inf/NaN), and full_matrices=False unless x is square."""
    x = _matrices(x, "svd")
    p = (bool(full_matrices), _off_diagonal(x, builtins.min(x.shape[-2:])))
    return SVDResult(*OPS["linalg_svd"]((x,), p))


def svdvals(x: ArrayLike, /) -> Tensor:
    """Singular values (descending); gradient U diag(g) Vh."""
    x = _matrices(x, "svdvals")
    if _records(x):
        return svd(x, full_matrices=False).S
    return OPS["linalg_svdvals"]((x,))


# ----------------------------------------------------------------------------- norms
# Convention at non-differentiable points: the subgradient of minimum norm, 0 at x == 0 (as
# PyTorch); a singular value of 0 passes no gradient; ties of max/min share the gradient.


def _root(s: Tensor, p: float) -> Tensor:
    """s ** (1/p), with gradient 0 where s == 0."""
    zero = s == 0
    safe = where(zero, 1.0, s)
    return where(zero, 0.0, sqrt(safe) if p == 2 else safe ** (1 / p))


def vector_norm(
    x: ArrayLike,
    /,
    *,
    axis: Axis = None,
    keepdims: bool = False,
    ord: float = 2,  # noqa: A002
) -> Tensor:
    """Vector norms over `axis` (all axes if None): ord 2 (default), 1, inf, -inf, 0 (the number
    of nonzero elements), or any other p: sum(abs(x)**p)**(1/p)."""
    x = as_tensor(x)
    if x.dtype.kind == "c":
        if ord == 2:  # |z|**2 from the parts: smooth at z = 0, where abs has a kink
            squares = square(real(x)) + square(imag(x))
            return _root(sum(squares, axis=axis, keepdims=keepdims), 2)
        x = abs(x)  # a real tensor of the same precision; norms depend only on |x|
    elif x.dtype.kind != "f":
        x = astype(x, DEFAULT_FLOAT.real)
    if ord == 2:
        return _root(sum(square(x), axis=axis, keepdims=keepdims), 2)
    if ord == 1:
        return sum(abs(x), axis=axis, keepdims=keepdims)
    if ord == inf:
        return max(abs(x), axis=axis, keepdims=keepdims)
    if ord == -inf:
        return min(abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        # The count of nonzero elements, with a zero derivative of every order in both modes
        # (PyTorch's result needs grad too): where x == 0 the count's term is abs(x), whose
        # slope is sign(0) = 0 there; elsewhere it is the constant 1.
        return sum(where(x != 0, 1.0, abs(x)), axis=axis, keepdims=keepdims)
    a = abs(x)
    if ord < 1:  # |x|**ord has an infinite slope at 0: gradient 0 there, as PyTorch
        zero = a == 0
        a = where(zero, 0.0 if ord > 0 else inf, where(zero, 1.0, a) ** ord)
    else:
        a = a**ord
    return _root(sum(a, axis=axis, keepdims=keepdims), ord)


def matrix_norm(
    x: ArrayLike,
    /,
    *,
    keepdims: bool = False,
    ord: float | Literal["fro", "nuc"] = "fro",  # noqa: A002 - the standard's name
) -> Tensor:
    """Matrix norms: 'fro' (default), 'nuc' (sum of singular values), 2 and -2 (largest and
    smallest singular value), 1 and -1 (max and min column sum of abs), inf and -inf (rows)."""
    x = _matrices(x, "matrix_norm")
    if ord == "fro":
        return vector_norm(x, axis=(-2, -1), keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        s = svdvals(x)
        s = where(s == 0, 0.0, s)
        out = sum(s, axis=-1) if ord == "nuc" else s[..., 0 if ord == 2 else -1]
        return reshape(out, out.shape + (1, 1)) if keepdims else out
    if ord in (1, -1, inf, -inf):
        along = -2 if ord in (1, -1) else -1
        pick = max if ord > 0 else min
        out = pick(sum(abs(x), axis=along, keepdims=True), axis=-3 - along, keepdims=True)
        return out if keepdims else reshape(out, x.shape[:-2])
    raise ValueError(f"linalg.matrix_norm: unsupported ord {ord!r}")
