"""Adam (with AMSGrad and L2 weight decay) and AdamW (decoupled weight decay), step for step
as PyTorch's."""

from __future__ import annotations

from typing import Any

from .. import _namespace as ops
from .._tensor import Tensor
from .optimizer import (
    Optimizer,
    ParamsT,
    _check,
    _check_betas,
    _lerp_state,
    _scale_add_state,
    _set_state,
)

__all__ = ["Adam", "AdamW"]


class Adam(Optimizer):
    """m = lerp(m, g, 1 - beta1), v = beta2 v + (1 - beta2) g^2 (g = grad + weight_decay p),
    p = p - lr / (1 - beta1^t) m / (sqrt(v) / sqrt(1 - beta2^t) + eps); with amsgrad the
    running maximum of v is used."""

    _decoupled = False

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("weight_decay value", weight_decay)
        _check_betas(betas)
        defaults = dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
            maximize=maximize,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _init(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = 0
        state["exp_avg"] = ops.zeros_like(p)
        state["exp_avg_sq"] = ops.zeros_like(p)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = ops.zeros_like(p)

    def _scalars(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        lr, (beta1, beta2), wd = group["lr"], group["betas"], group["weight_decay"]
        state["step"] += 1
        step = state["step"]
        return (
            1 - beta1, 1 - (1 - beta1), beta2, 1 - beta2, wd, 1 - lr * wd,
            lr / (1 - beta1**step), (1 - beta2**step) ** 0.5, group["eps"],
        )  # fmt: skip

    def _layout(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        flags = (bool(group["weight_decay"]), group["amsgrad"], 1 - group["betas"][0] < 0.5)
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
        w1, rest, beta2, w2, wd, decay, step_size, bias2, eps = s
        if group["weight_decay"]:
            if self._decoupled:
                p *= decay
            else:
                g = g + wd * p
        exp_avg = _lerp_state(state, "exp_avg", g, w1, rest, 1 - group["betas"][0] < 0.5, traced)
        v = _scale_add_state(state, "exp_avg_sq", beta2, w2 * (g * g), traced)
        if group["amsgrad"]:
            v = _set_state(state, "max_exp_avg_sq", ops.maximum(state["max_exp_avg_sq"], v), traced)
        denom = ops.sqrt(v) / bias2 + eps
        p -= step_size * (exp_avg / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay: p = p (1 - lr weight_decay) before the Adam step;
    weight_decay defaults to 0.01."""

    _decoupled = True

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 1e-2,
        amsgrad: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, maximize=maximize)
