"""Stochastic gradient descent with momentum, dampening, weight decay and Nesterov momentum,
step for step as PyTorch's SGD."""

from __future__ import annotations

from typing import Any

from .. import _namespace as ops
from .._tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check

__all__ = ["SGD"]


class SGD(Optimizer):
    """g = grad + weight_decay p; with momentum, b = g at the first step and then
    b = momentum b + (1 - dampening) g, and g = b (or g + momentum b with nesterov);
    p = p - lr g."""

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
    ) -> None:
        _check("learning rate", lr)
        _check("momentum value", momentum)
        _check("weight_decay value", weight_decay)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(
            lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
            nesterov=nesterov, maximize=maximize,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _scalars(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        return group["lr"], group["momentum"], 1 - group["dampening"], group["weight_decay"]

    def _layout(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        flags = (bool(group["weight_decay"]), bool(group["momentum"]), group["nesterov"])
        return super()._layout(p, state, group) + flags

    def _update(
        self,
        p: Tensor,
        g: Tensor,
        state: dict[str, Any],
        group: dict[str, Any],
        s: tuple,
        traced: bool,
    ) -> None:
        lr, momentum, undamped, weight_decay = s
        if group["weight_decay"]:
            g = g + weight_decay * p
        if group["momentum"]:
            buf = state.get("momentum_buffer")
            if buf is None:
                buf = state["momentum_buffer"] = ops.asarray(g, copy=True)
            else:
                # In place, as PyTorch: chainrule.compile replays a training step that
                # updates state kept outside it only when the state is written in place.
                buf *= momentum
                buf += undamped * g
            g = g + momentum * buf if group["nesterov"] else buf
        p -= lr * g
