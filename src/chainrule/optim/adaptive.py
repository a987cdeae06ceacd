"""Adagrad, Adamax, NAdam and RAdam, step for step as PyTorch's (its single-tensor code path:
the same operations in the same order, so trajectories agree to rounding)."""

from __future__ import annotations

import math
from typing import Any

from .. import _namespace as ops
from .._tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check, _lerp

__all__ = ["Adagrad", "Adamax", "NAdam", "RAdam"]


def _check_betas(betas: tuple[float, float]) -> None:
    for i, beta in enumerate(betas):
        if not 0.0 <= beta < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {beta}")


class Adagrad(Optimizer):
    """s = s + g^2 (g = grad + weight_decay p, s starting at initial_accumulator_value);
    p = p - lr / (1 + (t - 1) lr_decay) g / (sqrt(s) + eps)."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        lr_decay: float = 0.0,
        weight_decay: float = 0.0,
        initial_accumulator_value: float = 0.0,
        eps: float = 1e-10,
        *,
        maximize: bool = False,
    ) -> None:
        _check("learning rate", lr)
        _check("lr_decay value", lr_decay)
        _check("weight_decay value", weight_decay)
        _check("initial_accumulator_value value", initial_accumulator_value)
        _check("epsilon value", eps)
        defaults = dict(
            lr=lr, lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
            initial_accumulator_value=initial_accumulator_value, maximize=maximize,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        if not state:
            state["step"] = 0
            state["sum"] = ops.full_like(p, group["initial_accumulator_value"])
        state["step"] += 1
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        s = state["sum"] = state["sum"] + g * g
        p -= clr * (g / (ops.sqrt(s) + group["eps"]))


class Adamax(Optimizer):
    """m = lerp(m, g, 1 - beta1), u = max(beta2 u, |g| + eps) (g = grad + weight_decay p);
    p = p - lr / (1 - beta1^t) m / u."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        *,
        maximize: bool = False,
    ) -> None:
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("weight_decay value", weight_decay)
        _check_betas(betas)
        defaults = dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, maximize=maximize
        )
        super().__init__(params, defaults)

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        if not state:
            state["step"] = 0
            state["exp_avg"] = ops.zeros_like(p)
            state["exp_inf"] = ops.zeros_like(p)
        beta1, beta2 = group["betas"]
        state["step"] += 1
        if group["weight_decay"]:
            g = g + group["weight_decay"] * p
        exp_avg = state["exp_avg"] = _lerp(state["exp_avg"], g, 1 - beta1)
        u = state["exp_inf"] = ops.maximum(state["exp_inf"] * beta2, ops.abs(g) + group["eps"])
        clr = group["lr"] / (1 - beta1 ** state["step"])
        p -= clr * (exp_avg / u)


class NAdam(Optimizer):
    """Adam with Nesterov momentum and momentum decay: mu_t = beta1 (1 - 0.5 0.96^(t
    momentum_decay)); p = p - lr (1 - mu_t) / (1 - prod mu) g / d - lr mu_{t+1} / (1 - prod
    mu mu_{t+1}) m / d, d = sqrt(v / (1 - beta2^t)) + eps; weight decay as L2 or decoupled."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 2e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        momentum_decay: float = 4e-3,
        decoupled_weight_decay: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("weight_decay value", weight_decay)
        _check("momentum_decay value", momentum_decay)
        _check_betas(betas)
        defaults = dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
            momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
            maximize=maximize,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        if not state:
            state["step"] = 0
            state["mu_product"] = 1.0
            state["exp_avg"] = ops.zeros_like(p)
            state["exp_avg_sq"] = ops.zeros_like(p)
        lr, (beta1, beta2), wd = group["lr"], group["betas"], group["weight_decay"]
        state["step"] += 1
        step = state["step"]
        bias_correction2 = 1 - beta2**step
        if wd:
            if group["decoupled_weight_decay"]:
                p *= 1 - lr * wd
            else:
                g = g + wd * p
        decay = group["momentum_decay"]
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * decay)))
        mu_product = state["mu_product"] = state["mu_product"] * mu
        exp_avg = state["exp_avg"] = _lerp(state["exp_avg"], g, 1 - beta1)
        v = state["exp_avg_sq"] = state["exp_avg_sq"] * beta2 + (1 - beta2) * (g * g)
        denom = ops.sqrt(v / bias_correction2) + group["eps"]
        p += (-lr * (1.0 - mu) / (1.0 - mu_product)) * (g / denom)
        p += (-lr * mu_next / (1.0 - mu_product * mu_next)) * (exp_avg / denom)


class RAdam(Optimizer):
    """Rectified Adam: while the variance of the adaptive rate is intractable (rho_t <= 5)
    an SGD-with-momentum step, p = p - lr m / (1 - beta1^t); after, Adam's step scaled by the
    rectification r_t; weight decay as L2 or decoupled."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
        decoupled_weight_decay: bool = False,
        *,
        maximize: bool = False,
    ) -> None:
        _check("learning rate", lr)
        _check("epsilon value", eps)
        _check("weight_decay value", weight_decay)
        _check_betas(betas)
        defaults = dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
            decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _update(self, p: Tensor, g: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        if not state:
            state["step"] = 0
            state["exp_avg"] = ops.zeros_like(p)
            state["exp_avg_sq"] = ops.zeros_like(p)
        lr, (beta1, beta2), wd = group["lr"], group["betas"], group["weight_decay"]
        state["step"] += 1
        step = state["step"]
        if wd:
            if group["decoupled_weight_decay"]:
                p *= 1 - lr * wd
            else:
                g = g + wd * p
        exp_avg = state["exp_avg"] = _lerp(state["exp_avg"], g, 1 - beta1)
        v = state["exp_avg_sq"] = state["exp_avg_sq"] * beta2 + (1 - beta2) * (g * g)
        bias_correction1 = 1 - beta1**step
        bias_correction2 = 1 - beta2**step
        corrected = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2**step) / bias_correction2
        if rho_t > 5.0:
            rect = math.sqrt(
                (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
            )
            adaptive = (bias_correction2**0.5) / (ops.sqrt(v) + group["eps"])
            p -= corrected * lr * adaptive * rect
        else:
            p -= corrected * lr
