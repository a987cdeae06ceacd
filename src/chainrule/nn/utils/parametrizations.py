"""PyTorch's `nn.utils.parametrizations`: weight_norm and spectral_norm registered as
parametrizations (parametrize.py), state dict keys as PyTorch's. Their older forms, run by
forward pre-hooks, are in norm_hooks.py; `orthogonal` is not here."""

from __future__ import annotations

import functools

from ... import _namespace as ops
from ... import linalg
from ..._tensor import Tensor, no_grad
from .. import functional as F
from ..conv_transpose import ConvTranspose1d, ConvTranspose2d
from ..module import Module
from . import parametrize

__all__ = ["spectral_norm", "weight_norm"]


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
