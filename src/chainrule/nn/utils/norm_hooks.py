"""PyTorch's older weight_norm and spectral_norm (`nn.utils.weight_norm`, deprecated, and
`nn.utils.spectral_norm`) and their removal: the weight becomes a plain attribute that a forward
pre-hook recomputes before each call, from weight_g and weight_v, or from weight_orig and the
buffers weight_u and weight_v. The parametrization forms are in parametrizations.py."""

from __future__ import annotations

import warnings
from typing import Any

from ... import _namespace as ops
from ..._tensor import Tensor, no_grad
from .. import functional as F
from ..conv_transpose import ConvTranspose1d, ConvTranspose2d
from ..module import Module, Parameter
from .parametrizations import _as_matrix, _norm_except_dim, _normal_vector, _weight_norm

__all__ = [
    "SpectralNorm",
    "WeightNorm",
    "remove_spectral_norm",
    "remove_weight_norm",
    "spectral_norm",
    "weight_norm",
]


class WeightNorm:
    """The forward pre-hook of `weight_norm`: sets `module.<name>` to
    `<name>_g * <name>_v / ||<name>_v||`."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = dim

    def compute_weight(self, module: Module) -> Tensor:
        """The weight from the module's magnitude and direction parameters."""
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    def remove(self, module: Module) -> None:
        """Make the weight a parameter again, holding its current value."""
        with no_grad():
            weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight))

    def __call__(self, module: Module, inputs: Any) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module: Module, name: str = "weight", dim: int | None = 0) -> Module:
    """Deprecated (a FutureWarning): `parametrizations.weight_norm` is its replacement.
    Replace the parameter `<name>` by `<name>_g` (its norms over every axis but `dim`; the
    whole tensor's with None or -1) and `<name>_v` (its values), and set `module.<name>` to
    g * v / ||v|| before each forward. Returns the module."""
    warnings.warn(
        "`chainrule.nn.utils.weight_norm` is deprecated in favor of "
        "`chainrule.nn.utils.parametrizations.weight_norm`.",
        FutureWarning,
        stacklevel=2,
    )
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, WeightNorm) and hook.name == name:
            raise RuntimeError(
                f"Cannot register two weight_norm hooks on the same parameter {name}"
            )
    fn = WeightNorm(name, -1 if dim is None else dim)
    weight = getattr(module, name)
    with no_grad():
        g = _norm_except_dim(weight, fn.dim)
    del module._parameters[name]
    module.register_parameter(name + "_g", Parameter(g))
    module.register_parameter(name + "_v", Parameter(weight))
    setattr(module, name, fn.compute_weight(module))
    module.register_forward_pre_hook(fn)
    return module


def remove_weight_norm(module: Module, name: str = "weight") -> Module:
    """Undo `weight_norm`: `<name>` is a parameter again, holding the current weight."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")


class SpectralNorm:
    """The forward pre-hook of `spectral_norm`: sets `module.<name>` to `<name>_orig` divided
    by its spectral norm, estimated with the vectors `<name>_u` and `<name>_v` (moved by power
    iteration first in training mode)."""

    def __init__(
        self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0, eps: float = 1e-12
    ) -> None:
        if n_power_iterations <= 0:
            raise ValueError(
                "Expected n_power_iterations to be positive, but got "
                f"n_power_iterations={n_power_iterations}"
            )
        self.name = name
        self.dim = dim
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def compute_weight(self, module: Module, do_power_iteration: bool) -> Tensor:
        """The normalised weight; with `do_power_iteration`, the vectors move first (in
        place)."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        matrix = _as_matrix(weight, self.dim)
        if do_power_iteration:
            with no_grad():
                # Written through normalize's out=, as PyTorch's (the func transforms allow
                # that where they refuse an in-place write into a captured tensor).
                for _ in range(self.n_power_iterations):
                    transposed = ops.matrix_transpose(matrix)
                    F.normalize(ops.matmul(transposed, u), dim=0, eps=self.eps, out=v)
                    F.normalize(ops.matmul(matrix, v), dim=0, eps=self.eps, out=u)
            # Copies: sigma's derivative needs these values, and the buffers change in place
            # at the next training call.
            u, v = u.clone(), v.clone()
        # PyTorch's older form conjugates nothing, for complex weights too (W^T u above, and
        # dot(u, W v), complex there): vecdot conjugates its first argument, so conj(u) it is.
        sigma = ops.vecdot(ops.conj(u) if u.dtype.kind == "c" else u, ops.matmul(matrix, v))
        return weight / sigma

    def remove(self, module: Module) -> None:
        """Make the weight a parameter again, holding its current normalised value."""
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        for suffix in ("", "_u", "_v", "_orig"):
            delattr(module, self.name + suffix)
        module.register_parameter(self.name, Parameter(weight))

    def __call__(self, module: Module, inputs: Any) -> None:
        weight = self.compute_weight(module, do_power_iteration=module.training)
        setattr(module, self.name, weight)


def spectral_norm(
    module: Module,
    name: str = "weight",
    n_power_iterations: int = 1,
    eps: float = 1e-12,
    dim: int | None = None,
) -> Module:
    """The older form of `parametrizations.spectral_norm`: the parameter `<name>` becomes
    `<name>_orig`, the power iteration's vectors the buffers `<name>_u` and `<name>_v`
    (drawn from chainrule's generator), and `module.<name>` is set to the normalised weight
    before each forward. `dim` is 1 for transposed convolutions, else 0, by default. Returns
    the module."""
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d)) else 0
    for hook in module._forward_pre_hooks.values():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            raise RuntimeError(
                f"Cannot register two spectral_norm hooks on the same parameter {name}"
            )
    fn = SpectralNorm(name, n_power_iterations, dim, eps)
    weight = module._parameters[name]
    with no_grad():
        matrix = _as_matrix(weight, dim)
        h, w = matrix.shape
        u = F.normalize(_normal_vector(h, weight), dim=0, eps=eps)
        v = F.normalize(_normal_vector(w, weight), dim=0, eps=eps)
    delattr(module, name)
    module.register_parameter(name + "_orig", weight)
    setattr(module, name, weight.data)
    module.register_buffer(name + "_u", u)
    module.register_buffer(name + "_v", v)
    module.register_forward_pre_hook(fn)
    return module


def remove_spectral_norm(module: Module, name: str = "weight") -> Module:
    """Undo `spectral_norm`: `<name>` is a parameter again, holding the current normalised
    weight (without a power iteration)."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")
