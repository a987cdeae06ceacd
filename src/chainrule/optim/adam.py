"""Adam (with AMSGrad and L2 weight decay) and AdamW (decoupled weight decay), step for step
as PyTorch's; `_AdamLike` holds what they share with NAdam and RAdam."""

from __future__ import annotations

from typing import Any

from .. import _namespace as ops
from .._tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check, _decayed, _Update

__all__ = ["Adam", "AdamW"]


class _AdamLike(Optimizer):
    """What the Adam family shares: its state (a step count and the moments exp_avg and
    exp_avg_sq), weight decay as L2 or decoupled, and the moments' update. Its `_scalars`
    begin with (wd, 1 - lr wd, 1 - beta1, beta1, beta2, 1 - beta2)."""

    def _init(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = 0
        state["exp_avg"] = ops.zeros_like(p)
        state["exp_avg_sq"] = ops.zeros_like(p)

    def _decoupled(self, group: dict[str, Any]) -> bool:
        """Whether weight decay scales the parameter (AdamW's) rather than adding to g."""
        return group["decoupled_weight_decay"]

    def _flags(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        near = 1 - group["betas"][0] < 0.5
        return bool(group["weight_decay"]), self._decoupled(group), near

    def _moments(self, p: Tensor, g: Tensor, u: _Update) -> tuple[Tensor, Tensor, Tensor]:
        """Weight decay, then m = lerp(m, g, 1 - beta1) and v = beta2 v + (1 - beta2) g^2:
        (g after weight decay, m, v)."""
        wd, decay, w1, rest, beta2, w2 = u.numbers[:6]
        g = _decayed(p, g, u.group, wd, decay if self._decoupled(u.group) else None)
        exp_avg = u.lerp("exp_avg", g, w1, rest, 1 - u.group["betas"][0] < 0.5)
        return g, exp_avg, u.scale_add("exp_avg_sq", beta2, w2 * (g * g))


class Adam(_AdamLike):
    """m = lerp(m, g, 1 - beta1), v = beta2 v + (1 - beta2) g^2 (g = grad + weight_decay p),
    p = p - lr / (1 - beta1^t) m / (sqrt(v) / sqrt(1 - beta2^t) + eps); with amsgrad the
    running maximum of v is used."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        amsgrad: bool = False,
        *,
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
        decoupled_weight_decay: bool = False,
    ) -> None:
        _check(lr=lr, eps=eps, weight_decay=weight_decay, betas=betas)
        defaults = dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
            maximize=maximize, foreach=foreach, capturable=capturable,
            differentiable=differentiable, fused=fused,
            decoupled_weight_decay=decoupled_weight_decay,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _init(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        super()._init(p, state, group)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = ops.zeros_like(p)

    def _scalars(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        lr, (beta1, beta2), wd = group["lr"], group["betas"], group["weight_decay"]
        state["step"] += 1
        step = state["step"]
        return (
            wd, 1 - lr * wd, 1 - beta1, 1 - (1 - beta1), beta2, 1 - beta2,
            lr / (1 - beta1**step), (1 - beta2**step) ** 0.5, group["eps"],
        )  # fmt: skip

    def _flags(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        # _AdamLike's flags, then amsgrad (written out: compile's guard reads them per call).
        wd, near = bool(group["weight_decay"]), 1 - group["betas"][0] < 0.5
        return wd, group["decoupled_weight_decay"], near, group["amsgrad"]

    def _update(self, p: Tensor, g: Tensor, u: _Update) -> None:
        g, exp_avg, v = self._moments(p, g, u)
        step_size, bias2, eps = u.numbers[6:]
        if u.group["amsgrad"]:
            v = u.set("max_exp_avg_sq", ops.maximum(u.state["max_exp_avg_sq"], v))
        denom = ops.sqrt(v) / bias2 + eps
        p -= step_size * (exp_avg / denom)


class AdamW(Adam):
    """Adam with decoupled weight decay: p = p (1 - lr weight_decay) before the Adam step;
    weight_decay defaults to 0.01."""

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
        foreach: bool | None = None,
        capturable: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        super().__init__(
            params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach, maximize=maximize,
            capturable=capturable, differentiable=differentiable, fused=fused,
            decoupled_weight_decay=True,
        )  # fmt: skip
