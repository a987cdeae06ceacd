"""Adagrad, Adamax, NAdam and RAdam, step for step as PyTorch's (its single-tensor code path:
the same operations in the same order, so trajectories agree to rounding). Each update's
Python numbers come from `_scalars` and what it branches on from `_layout`, so that compile
replays them (see Optimizer.step)."""

from __future__ import annotations

import math
from typing import Any

from .. import _namespace as ops
from .._tensor import Tensor
from .adam import _AdamLike
from .optimizer import Optimizer, ParamsT, _check, _decayed, _Update

__all__ = ["Adagrad", "Adamax", "NAdam", "RAdam"]


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
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        fused: bool | None = None,
    ) -> None:
        _check(
            lr=lr, lr_decay=lr_decay, weight_decay=weight_decay,
            initial_accumulator_value=initial_accumulator_value, eps=eps,
        )  # fmt: skip
        defaults = dict(
            lr=lr, lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
            initial_accumulator_value=initial_accumulator_value, foreach=foreach,
            maximize=maximize, differentiable=differentiable, fused=fused,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _init(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = 0
        state["sum"] = ops.full_like(p, group["initial_accumulator_value"])

    def _scalars(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        state["step"] += 1
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        return group["weight_decay"], clr, group["eps"]

    def _flags(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        return (bool(group["weight_decay"]),)

    def _update(self, p: Tensor, g: Tensor, u: _Update) -> None:
        wd, clr, eps = u.numbers
        g = _decayed(p, g, u.group, wd)
        total = u.scale_add("sum", 1, g * g)
        p -= clr * (g / (ops.sqrt(total) + eps))


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
        foreach: bool | None = None,
        *,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check(lr=lr, eps=eps, weight_decay=weight_decay, betas=betas)
        defaults = dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay, foreach=foreach,
            maximize=maximize, differentiable=differentiable, capturable=capturable,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _init(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = 0
        state["exp_avg"] = ops.zeros_like(p)
        state["exp_inf"] = ops.zeros_like(p)

    def _scalars(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        beta1, beta2 = group["betas"]
        state["step"] += 1
        clr = group["lr"] / (1 - beta1 ** state["step"])
        return group["weight_decay"], 1 - beta1, 1 - (1 - beta1), beta2, group["eps"], clr

    def _flags(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        return bool(group["weight_decay"]), 1 - group["betas"][0] < 0.5

    def _update(self, p: Tensor, g: Tensor, u: _Update) -> None:
        wd, w1, rest, beta2, eps, clr = u.numbers
        g = _decayed(p, g, u.group, wd)
        exp_avg = u.lerp("exp_avg", g, w1, rest, 1 - u.group["betas"][0] < 0.5)
        exp_inf = u.set("exp_inf", ops.maximum(u.state["exp_inf"] * beta2, ops.abs(g) + eps))
        p -= clr * (exp_avg / exp_inf)


class NAdam(_AdamLike):
    """Adam with Nesterov momentum and momentum decay: mu_t = beta1 (1 - 0.5 0.96^(t
    momentum_decay)); p = p - lr (1 - mu_t) / (1 - prod mu) g / d - lr mu_{t+1} / (1 - prod
    mu mu_{t+1}) m / d, d = sqrt(v / (1 - beta2^t)) + eps; weight decay as L2 or decoupled."""

    _NUMBERS = {"step": int, "mu_product": float}

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
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check(lr=lr, eps=eps, weight_decay=weight_decay, momentum_decay=momentum_decay)
        _check(betas=betas)
        defaults = dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
            momentum_decay=momentum_decay, decoupled_weight_decay=decoupled_weight_decay,
            foreach=foreach, maximize=maximize, capturable=capturable,
            differentiable=differentiable,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _init(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = 0
        state["mu_product"] = 1.0
        state["exp_avg"] = ops.zeros_like(p)
        state["exp_avg_sq"] = ops.zeros_like(p)

    def _scalars(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        lr, (beta1, beta2), wd = group["lr"], group["betas"], group["weight_decay"]
        state["step"] += 1
        step = state["step"]
        decay = group["momentum_decay"]
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * decay)))
        mu_product = state["mu_product"] = state["mu_product"] * mu
        return (
            wd, 1 - lr * wd, 1 - beta1, 1 - (1 - beta1), beta2, 1 - beta2, 1 / (1 - beta2**step),
            group["eps"], -lr * (1.0 - mu) / (1.0 - mu_product),
            -lr * mu_next / (1.0 - mu_product * mu_next),
        )  # fmt: skip

    def _update(self, p: Tensor, g: Tensor, u: _Update) -> None:
        g, exp_avg, v = self._moments(p, g, u)
        inv_bias_correction2, eps, step_g, step_m = u.numbers[6:]
        denom = ops.sqrt(v * inv_bias_correction2) + eps  # a product: see RAdam's _scalars
        p += step_g * (g / denom)
        p += step_m * (exp_avg / denom)


class RAdam(_AdamLike):
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
        foreach: bool | None = None,
        maximize: bool = False,
        capturable: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check(lr=lr, eps=eps, weight_decay=weight_decay, betas=betas)
        defaults = dict(
            lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
            decoupled_weight_decay=decoupled_weight_decay, foreach=foreach, maximize=maximize,
            capturable=capturable, differentiable=differentiable,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _scalars(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        lr, (beta1, beta2), wd = group["lr"], group["betas"], group["weight_decay"]
        state["step"] += 1
        step = state["step"]
        bias_correction2 = 1 - beta2**step
        rho_inf, rho_t = _rho(beta2, step)
        rect = 0.0
        rectified = rho_t > 5.0
        if rectified:
            rect = math.sqrt(
                (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
            )
        step_size = lr / (1 - beta1**step)
        # Products with numbers only (no division by one): PyTorch storage divides by a Python
        # number as a product with its reciprocal, by a 0-d tensor exactly (compile's replay).
        return (
            wd, 1 - lr * wd, 1 - beta1, 1 - (1 - beta1), beta2, 1 - beta2, step_size,
            step_size * rect * bias_correction2**0.5, group["eps"], float(rectified),
        )  # fmt: skip

    def _update(self, p: Tensor, g: Tensor, u: _Update) -> None:
        g, exp_avg, v = self._moments(p, g, u)
        step_size, rectified_size, eps, rectified = u.numbers[6:]
        if u.traced:
            # Whether the step is rectified depends on the step count: both steps computed and
            # one picked by the number, so that a replay follows the count (a guard, checked
            # before the call, would miss a change between two steps in one compiled call).
            rectified_step = (exp_avg * rectified_size) / (ops.sqrt(v) + eps)
            p -= ops.where(rectified > 0, rectified_step, exp_avg * step_size)
        elif rectified:
            p -= (exp_avg * rectified_size) / (ops.sqrt(v) + eps)
        else:
            p -= exp_avg * step_size


def _rho(beta2: float, step: int) -> tuple[float, float]:
    """RAdam's maximum length of the approximated SMA, and its length at `step`."""
    rho_inf = 2 / (1 - beta2) - 1
    return rho_inf, rho_inf - 2 * step * (beta2**step) / (1 - beta2**step)
