"""Stochastic gradient descent with momentum, dampening, weight decay and Nesterov momentum,
step for step as PyTorch's SGD."""

from __future__ import annotations

from typing import Any

from .. import _namespace as ops
from .._tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check, _decayed, _Update

__all__ = ["SGD"]


class SGD(Optimizer):
    """g = grad + weight_decay p; with momentum, b = g at the first step and then
    b = momentum b + (1 - dampening) g, and g = b (or g + momentum b with nesterov);
    p = p - lr g."""

    _COMPLEX_PARAMETERS = "as is"  # linear in g: right for complex values as written

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        momentum: float = 0.0,
        dampening: float = 0.0,
        weight_decay: float = 0.0,
        nesterov: bool = False,
        *,
        maximize: bool = False,
        foreach: bool | None = None,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _check(lr=lr, momentum=momentum, weight_decay=weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(
            lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
            nesterov=nesterov, maximize=maximize, foreach=foreach, differentiable=differentiable,
            fused=fused,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _scalars(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        return group["lr"], group["momentum"], 1 - group["dampening"], group["weight_decay"]

    def _flags(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        return bool(group["weight_decay"]), bool(group["momentum"]), group["nesterov"]

    def _update(self, p: Tensor, g: Tensor, u: _Update) -> None:
        lr, momentum, undamped, weight_decay = u.numbers
        group = u.group
        g = _decayed(p, g, group, weight_decay)
        if group["momentum"]:
            buf = u.state.get("momentum_buffer")
            if buf is None:
                buf = u.state["momentum_buffer"] = ops.asarray(g, copy=True)
            else:
                # In place, as PyTorch: chainrule.compile replays a training step that
                # updates state kept outside it only when the state is written in place.
                buf *= momentum
                buf += undamped * g
            g = g + momentum * buf if group["nesterov"] else buf
        p -= lr * g
