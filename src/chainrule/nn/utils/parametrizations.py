"""PyTorch's `nn.utils.parametrizations`: weight_norm, spectral_norm and orthogonal registered
as parametrizations (parametrize.py), state dict keys as PyTorch's. The older forms of the
first two, run by forward pre-hooks, are in norm_hooks.py."""

from __future__ import annotations

import functools

from ... import _namespace as ops
from ... import linalg
from ..._tensor import Tensor, no_grad
from .. import functional as F
from ..conv_transpose import ConvTranspose1d, ConvTranspose2d
from ..module import Module
from . import parametrize

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


def _wrap_dim(dim: int, ndim: int) -> int:
    if not -ndim <= dim < ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but "
            f"got {dim})"
        )
    return dim % ndim


def _norm_except_dim(v: Tensor, dim: int) -> Tensor:
    """The 2-norm of v over every axis but `dim`, which stays with the other axes kept as size
    1; dim=-1 is the norm of the whole tensor, a 0-d tensor (PyTorch's norm_except_dim)."""
    if dim == -1:
        return linalg.vector_norm(v)
    dim = _wrap_dim(dim, v.ndim)
    rows = ops.moveaxis(v, dim, 0) if dim else v
    norms = linalg.vector_norm(ops.reshape(rows, (v.shape[dim], -1)), axis=1)
    shape = [1] * v.ndim
    shape[dim] = v.shape[dim]
    return ops.reshape(norms, tuple(shape))


def _weight_norm(v: Tensor, g: Tensor, dim: int) -> Tensor:
    """v rescaled to the norms g (per slice along `dim`; of the whole with -1)."""
    return v * (g / _norm_except_dim(v, dim))


class _WeightNorm(Module):
    """weight = g * v / ||v||, stored as original0 = g and original1 = v."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:
        """The weight of the magnitudes weight_g and the directions weight_v."""
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        """(g, v) for `weight`: its norms, and itself."""
        return _norm_except_dim(weight, self.dim), weight


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Parametrize `module.<name>` by a magnitude and a direction, weight = g * v / ||v||,
    the norm taken over every axis but `dim` (over the whole tensor with dim=None or -1).
    g and v are the parameters `parametrizations.<name>.original0` and `original1`; the
    weight is recomputed at each read. Returns the module."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)
    # A state dict of the older weight_norm (`<name>_g`, `<name>_v`) loads, as in PyTorch.
    module.register_load_state_dict_pre_hook(functools.partial(_older_weight_norm_keys, name))
    return module


def _older_weight_norm_keys(name: str, module: Module, state_dict: dict, prefix: str, *_) -> None:
    """Rename the keys of the older weight_norm's magnitude and direction to this one's."""
    g, v = f"{prefix}{name}_g", f"{prefix}{name}_v"
    if g in state_dict and v in state_dict:
        state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g)
        state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v)


def _as_matrix(weight: Tensor, dim: int) -> Tensor:
    """weight with axis `dim` as rows and the others flattened into columns."""
    if dim:
        weight = ops.moveaxis(weight, dim, 0)
    return ops.reshape(weight, (weight.shape[0], -1))


def _normal_vector(n: int, like: Tensor) -> Tensor:
    """n standard normal numbers of `like`'s dtype and library; for a complex `like`, normal
    real and imaginary parts (PyTorch's complex normal_, but for a scale that normalising
    removes)."""
    real = ops.real(like) if like.dtype.kind == "c" else like
    draw = real.new_zeros((n,)).normal_(0.0, 1.0)
    if like.dtype.kind != "c":
        return draw
    return draw + 1j * real.new_zeros((n,)).normal_(0.0, 1.0)


def _adjoint(m: Tensor) -> Tensor:
    m = ops.matrix_transpose(m)
    return ops.conj(m) if m.dtype.kind == "c" else m


class _SpectralNorm(Module):
    """weight / sigma, sigma the largest singular value of the weight seen as a matrix,
    estimated by power iteration with the vectors kept in the buffers _u and _v."""

    def __init__(
        self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        super().__init__()
        ndim = weight.ndim
        if not -ndim <= dim < ndim:  # (PyTorch's wording here has no comma)
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}] but "
                f"got {dim})"
            )
        self.dim = dim % ndim
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.eps = eps
        if weight.ndim > 1:
            self.n_power_iterations = n_power_iterations
            with no_grad():
                matrix = _as_matrix(weight, self.dim)
                h, w = matrix.shape
                u, v = _normal_vector(h, matrix), _normal_vector(w, matrix)
                self.register_buffer("_u", F.normalize(u, dim=0, eps=eps))
                self.register_buffer("_v", F.normalize(v, dim=0, eps=eps))
            self._power_method(matrix, 15)

    def _power_method(self, matrix: Tensor, n_power_iterations: int) -> None:
        """Move _u and _v (written through normalize's out=, as PyTorch's, which the func
        transforms allow where they refuse an in-place write into a captured tensor) towards
        the leading singular vectors of `matrix`."""
        with no_grad():
            for _ in range(n_power_iterations):
                F.normalize(ops.matmul(matrix, self._v), dim=0, eps=self.eps, out=self._u)
                F.normalize(ops.matmul(_adjoint(matrix), self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight: Tensor) -> Tensor:
        """The weight divided by its estimated spectral norm (a vector: normalised); in
        training mode, the power iterations run first."""
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        matrix = _as_matrix(weight, self.dim)
        if self.training:
            self._power_method(matrix, self.n_power_iterations)
        # Copies: the buffers change in place at the next training read, and sigma's
        # derivative needs these values.
        u, v = self._u.clone(), self._v.clone()
        sigma = ops.vecdot(u, ops.matmul(matrix, v))
        return weight / sigma

    def right_inverse(self, value: Tensor) -> Tensor:
        """The weight is stored as given (its scale is not recoverable)."""
        return value


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """Parametrize `module.<name>` as itself divided by its spectral norm, seen as a matrix
    with axis `dim` as rows (1 for transposed convolutions, else 0, by default), the norm
    estimated by `n_power_iterations` steps of power iteration at each read in training mode
    (none in eval mode). The vectors are the buffers `parametrizations.<name>.0._u` and `_v`,
    drawn from chainrule's generator and iterated 15 times at registration. Returns the
    module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d)) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps)
    )
    return module


# ----------------------------------------------------------------------------- orthogonal

_ORTHOGONAL_MAPS = ("matrix_exp", "cayley", "householder")


def _eye_like(x: Tensor, value: float) -> Tensor:
    """A tensor of x's shape, dtype and library: `value` on the diagonal of each matrix, 0
    elsewhere (a constant)."""
    xp = x._xp
    m, n = x.shape[-2:]
    on = xp.reshape(xp.arange(m), (m, 1)) == xp.reshape(xp.arange(n), (1, n))
    return ops.where(Tensor(on, xp, None), value, ops.zeros_like(x))


def _is_orthogonal(q: Tensor) -> bool:
    """Whether the columns of q (..., n, k) are orthonormal, to 10 n eps (PyTorch's test)."""
    n = q.shape[-2]
    gram = ops.matmul(_adjoint(q), q)
    identity = _eye_like(gram, 1.0)
    atol = 10.0 * n * ops.finfo(q.dtype).eps
    return bool(ops.all(ops.abs(gram - identity) <= atol + 1e-5 * ops.abs(identity)))


def _make_orthogonal(a: Tensor) -> Tensor:
    """Q of a = QR (a tall, maybe complex) with R's diagonal made real and non-negative: each
    column of Q times the sign of its diagonal entry of R."""
    q, r = linalg.qr(a)
    return q * ops.expand_dims(ops.sign(linalg.diagonal(r)), axis=-2)


def _householder_qr(a: Tensor) -> tuple[Tensor, Tensor]:
    """LAPACK's geqrf of real tall matrices a (..., m, n): R on and above the diagonal, the
    reflectors' vectors below it (their leading 1 implied), and the reflectors' tau. Column j
    with x = the part of the current column from row j: beta = -sign(x_0) |x|,
    tau = (beta - x_0) / beta, v = x[1:] / (x_0 - beta); no reflection (tau = 0) where x[1:]
    is zero."""
    m, n = a.shape[-2:]
    rest = a
    rows, columns, taus = [], [], []
    for j in range(n):
        x = rest[..., :, 0]
        alpha, tail = x[..., 0], x[..., 1:]
        none = linalg.vector_norm(tail, axis=-1) == 0
        norm = ops.sqrt(alpha * alpha + ops.sum(tail * tail, axis=-1))
        beta = ops.where(alpha >= 0, -norm, norm)
        tau = ops.where(none, 0.0, (beta - alpha) / ops.where(none, 1.0, beta))
        v = ops.where(
            ops.expand_dims(none, axis=-1),
            0.0,
            tail / ops.expand_dims(ops.where(none, 1.0, alpha - beta), axis=-1),
        )
        # The reflector applied to the columns on the right: block - tau v (v^T block).
        block = rest[..., :, 1:]
        full_v = ops.concat([ops.ones_like(alpha)[..., None], v], axis=-1)
        w = ops.sum(full_v[..., :, None] * block, axis=-2)
        block = block - tau[..., None, None] * full_v[..., :, None] * w[..., None, :]
        diagonal = ops.where(none, alpha, beta)
        zeros_before = ops.zeros_like(a[..., 0, :j])
        rows.append(ops.concat([zeros_before, diagonal[..., None], block[..., 0, :]], axis=-1))
        columns.append(ops.concat([ops.zeros_like(a[..., : j + 1, 0]), v], axis=-1))
        taus.append(tau)
        rest = block[..., 1:, :]
    upper = ops.concat([ops.stack(rows, axis=-2), ops.zeros_like(a[..., n:, :])], axis=-2)
    return upper + ops.stack(columns, axis=-1), ops.stack(taus, axis=-1)


def _normal_like(q: Tensor, shape: tuple) -> Tensor:
    """Standard normal numbers of q's dtype and library, complex ones of unit variance for a
    complex q (as PyTorch's randn)."""
    real = ops.real(q) if q.dtype.kind == "c" else q
    draw = real.new_zeros(shape).normal_(0.0, 1.0)
    if q.dtype.kind != "c":
        return draw
    return (draw + 1j * real.new_zeros(shape).normal_(0.0, 1.0)) / 2**0.5


class _Orthogonal(Module):
    """An orthogonal (unitary) matrix, or one with orthonormal columns (rows, when wide), made
    of the stored one by `orthogonal_map`; with `use_trivialization`, times the buffer `base`,
    which assignment sets (PyTorch's dynamic trivialization)."""

    def __init__(self, weight: Tensor, orthogonal_map: str, *, use_trivialization: bool = True):
        super().__init__()
        if weight.dtype.kind == "c" and orthogonal_map == "householder":
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        self.use_trivialization = use_trivialization
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, x: Tensor) -> Tensor:
        """The orthogonal matrix of x, of x's shape."""
        n, k = x.shape[-2:]
        transposed = n < k
        if transposed:
            x = ops.matrix_transpose(x)
            n, k = k, n
        # x is tall (n >= k) from here.
        if self.orthogonal_map == "householder":
            lower = ops.tril(x, k=-1)
            tau = 2.0 / (1.0 + ops.sum(lower * lower, axis=-2))
            q = linalg.householder_product(lower, tau)
            # Each column's sign from x's diagonal, cut to an integer (1, -1 or 0): piecewise
            # constant, so no gradient (as PyTorch's cast to int).
            signs = ops.trunc(linalg.diagonal(x))
            q = q * ops.expand_dims(signs, axis=-2)
        else:
            # A skew-symmetric (skew-Hermitian) n x n matrix from x's lower triangle (its
            # n k - k (k - 1) / 2 entries), whose exponential or Cayley transform is orthogonal.
            x = ops.tril(x)
            if n != k:
                x = ops.concat([x, x.new_zeros(x.shape[:-1] + (n - k,))], axis=-1)
            a = x - _adjoint(x)
            if self.orthogonal_map == "matrix_exp":
                q = linalg.matrix_exp(a)
            else:
                identity = _eye_like(a, 1.0)
                q = linalg.solve(identity - a / 2, identity + a / 2)
            if n != k:
                q = q[..., :k]
        if self.use_trivialization:
            q = ops.matmul(self.base, q)
        return ops.matrix_transpose(q) if transposed else q

    def right_inverse(self, q: Tensor) -> Tensor:
        """What to store for the matrix q. With use_trivialization: q (orthogonalized by QR if
        it is not orthogonal; completed by random columns to a square one if not square)
        becomes `base`, and the stored tensor is -I (which the maps send to I). Without it, the
        householder map stores q's QR factorization (reflectors and signs); the others can't
        be assigned (NotImplementedError, as PyTorch)."""
        if q.shape != self.shape:
            raise ValueError(
                f"Expected a matrix or batch of matrices of shape {self.shape}. "
                f"Got a tensor of shape {q.shape}."
            )
        with no_grad():
            given = q
            n, k = q.shape[-2:]
            transposed = n < k
            if transposed:
                q = ops.matrix_transpose(q)
                n, k = k, n
            if not self.use_trivialization:
                if self.orthogonal_map != "householder":
                    raise NotImplementedError(
                        "It is not possible to assign to the matrix exponential or the Cayley "
                        "parametrizations when use_trivialization=False."
                    )
                a, tau = _householder_qr(q)
                # The diagonal holds the signs of R's (whose sign the map gives back), negated
                # where no reflection was made.
                signs = ops.sign(linalg.diagonal(a))
                signs = ops.where(tau == 0, -signs, signs)
                a = ops.where(_eye_like(a, 1.0) == 1, ops.expand_dims(signs, axis=-2), a)
                return ops.matrix_transpose(a) if transposed else a
            if n == k:
                q = q.clone() if _is_orthogonal(q) else _make_orthogonal(q)
            else:
                extra = _normal_like(q, q.shape[:-2] + (n, n - k))
                q = _make_orthogonal(ops.concat([q, extra], axis=-1))
            self.base = q
            return _eye_like(given, -1.0)


def orthogonal(
    module: Module,
    name: str = "weight",
    orthogonal_map: str | None = None,
    *,
    use_trivialization: bool = True,
) -> Module:
    """Parametrize `module.<name>` (a matrix, or a batch of them, ..., m, n) as an orthogonal
    one: orthonormal columns if m >= n, rows otherwise (unitary, for complex values), as
    PyTorch's. `orthogonal_map`: "matrix_exp" or "cayley" (of a skew-symmetric matrix made of
    the stored tensor's lower triangle), or "householder" (a product of reflectors, real only);
    by default "matrix_exp" for square or complex matrices, else "householder". With
    `use_trivialization` (default), the result is multiplied by the buffer
    `parametrizations.<name>.0.base`, set at registration and at each assignment to the given
    matrix (made orthogonal by QR if it is not). A non-square matrix's base is completed with
    columns drawn from chainrule's generator (PyTorch's come from its own). Returns the
    module."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(
            f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} dimensions."
        )
    if orthogonal_map is None:
        square = weight.shape[-2] == weight.shape[-1]
        orthogonal_map = "matrix_exp" if square or weight.dtype.kind == "c" else "householder"
    if orthogonal_map not in _ORTHOGONAL_MAPS:
        raise ValueError(
            'orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
            f"Got: {orthogonal_map}"
        )
    orth = _Orthogonal(weight, orthogonal_map, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module
