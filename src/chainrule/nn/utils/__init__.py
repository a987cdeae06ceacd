"""PyTorch's `nn.utils` helpers for training loops: gradient clipping by norm (in one call,
or as the norm and the scaling) or value, and parameters flattened to one vector and back.
The submodule `rnn` holds PackedSequence and the functions that pack and pad sequences."""

from __future__ import annotations

from collections.abc import Iterable

from ... import _namespace as ops
from ... import linalg
from ..._mode import grad_mode
from ..._tensor import Tensor, no_grad
from . import rnn

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "rnn",
    "vector_to_parameters",
]


def _tensors(parameters: Tensor | Iterable[Tensor]) -> list[Tensor]:
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def get_total_norm(
    tensors: Tensor | Iterable[Tensor],
    norm_type: float | str = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """The `norm_type`-norm of the tensors (gradients, usually) taken as one vector (0 for
    none); `norm_type` 'inf' or float('inf') for the largest magnitude. `foreach` is
    PyTorch's choice of kernels and changes nothing here."""
    norm_type = float(norm_type)
    tensors = _tensors(tensors)
    if not tensors:
        return ops.asarray(0.0)
    with no_grad():
        norms = ops.stack([linalg.vector_norm(t, ord=norm_type) for t in tensors])
        total = linalg.vector_norm(norms, ord=norm_type)
        if error_if_nonfinite and grad_mode.extended and grad_mode.tracer is not None:
            # A branch on the norm's value: chainrule.compile runs the function eagerly.
            grad_mode.tracer.unsupported("clip_grad_norm_(error_if_nonfinite=True)")
        if error_if_nonfinite and not bool(ops.isfinite(total)):
            raise RuntimeError(
                f"The total norm of order {norm_type} for gradients from `parameters` "
                "is non-finite, so it cannot be clipped. To disable this error and scale the "
                "gradients by the non-finite norm anyway, set "
                "`error_if_nonfinite=False`"
            )
    return total


def clip_grads_with_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    total_norm: Tensor,
    foreach: bool | None = None,
) -> None:
    """Scale the parameters' gradients in place by min(1, max_norm / (total_norm + 1e-6)),
    `total_norm` being their norm (get_total_norm's)."""
    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        coef = ops.minimum(max_norm / (total_norm + 1e-6), 1.0)
        for g in grads:
            g.mul_(ops.astype(coef, g.dtype))


def clip_grad_norm_(
    parameters: Tensor | Iterable[Tensor],
    max_norm: float,
    norm_type: float | str = 2.0,
    error_if_nonfinite: bool = False,
    foreach: bool | None = None,
) -> Tensor:
    """Scale the parameters' gradients in place so that their joint `norm_type`-norm (of all
    gradients as one vector) is at most `max_norm`: each is multiplied by
    min(1, max_norm / (norm + 1e-6)). Returns the norm before clipping."""
    parameters = _tensors(parameters)
    grads = [p.grad for p in parameters if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite)
    clip_grads_with_norm_(parameters, max_norm, total)
    return total


def clip_grad_value_(
    parameters: Tensor | Iterable[Tensor], clip_value: float, foreach: bool | None = None
) -> None:
    """Clamp the parameters' gradients in place to [-clip_value, clip_value]."""
    with no_grad():
        for p in _tensors(parameters):
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)


def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor:
    """The parameters' values flattened and joined in one vector (differentiable)."""
    return ops.concat([ops.reshape(p, (-1,)) for p in parameters])


def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None:
    """Write consecutive slices of `vec` into the parameters, in place (without recording)."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {type(vec).__name__}")
    start = 0
    with no_grad():
        for p in parameters:
            n = p.size
            p.copy_(ops.reshape(vec[start : start + n], p.shape))
            start += n
