"""RMSprop (with momentum, centring and weight decay), step for step as PyTorch's."""

from __future__ import annotations

from typing import Any

from .. import _namespace as ops
from .._tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check, _decayed, _Update

__all__ = ["RMSprop"]


class RMSprop(Optimizer):
    """v = alpha v + (1 - alpha) g^2 (g = grad + weight_decay p); d = sqrt(v) + eps, or
    sqrt(v - a^2) + eps when centered (a = lerp(a, g, 1 - alpha)); p = p - lr g / d, or with
    momentum b = momentum b + g / d and p = p - lr b."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        alpha: float = 0.99,
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum: float = 0.0,
        centered: bool = False,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check(lr=lr, eps=eps, momentum=momentum, weight_decay=weight_decay, alpha=alpha)
        defaults = dict(
            lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum,
            centered=centered, capturable=capturable, foreach=foreach, maximize=maximize,
            differentiable=differentiable,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _init(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = 0
        state["square_avg"] = ops.zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = ops.zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = ops.zeros_like(p)

    def _scalars(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        alpha = group["alpha"]
        state["step"] += 1
        return (
            alpha, 1 - alpha, 1 - (1 - alpha), group["eps"], group["weight_decay"],
            group["momentum"], group["lr"],
        )  # fmt: skip

    def _flags(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        return (
            bool(group["weight_decay"]), group["momentum"] > 0, group["centered"],
            1 - group["alpha"] < 0.5,
        )  # fmt: skip

    def _update(self, p: Tensor, g: Tensor, u: _Update) -> None:
        alpha, w, rest, eps, weight_decay, momentum, lr = u.numbers
        group = u.group
        g = _decayed(p, g, group, weight_decay)
        v = u.scale_add("square_avg", alpha, w * (g * g))
        if group["centered"]:
            a = u.lerp("grad_avg", g, w, rest, 1 - group["alpha"] < 0.5)
            v = v - a * a
        denom = ops.sqrt(v) + eps
        if group["momentum"] > 0:
            buf = u.scale_add("momentum_buffer", momentum, g / denom)
            p -= lr * buf
        else:
            p -= lr * (g / denom)
