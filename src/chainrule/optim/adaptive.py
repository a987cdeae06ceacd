"""Adagrad, Adamax, NAdam and RAdam, step for step as PyTorch's (its single-tensor code path:
the same operations in the same order, so trajectories agree to rounding). Each update's
Python numbers come from `_scalars` and what it branches on from `_layout`, so that compile
replays them (see Optimizer.step)."""

from __future__ import annotations

import math
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

    def _init(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = 0
        state["sum"] = ops.full_like(p, group["initial_accumulator_value"])

    def _scalars(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        state["step"] += 1
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        return group["weight_decay"], clr, group["eps"]

    def _layout(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        return super()._layout(p, state, group) + (bool(group["weight_decay"]),)

    def _update(
        self,
        p: Tensor,
        g: Tensor,
        state: dict[str, Any],
        group: dict[str, Any],
        s: tuple,
        traced: bool,
    ) -> None:
        wd, clr, eps = s
        if group["weight_decay"]:
            g = g + wd * p
        total = _scale_add_state(state, "sum", 1, g * g, traced)
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

    def _init(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = 0
        state["exp_avg"] = ops.zeros_like(p)
        state["exp_inf"] = ops.zeros_like(p)

    def _scalars(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        beta1, beta2 = group["betas"]
        state["step"] += 1
        clr = group["lr"] / (1 - beta1 ** state["step"])
        return group["weight_decay"], 1 - beta1, 1 - (1 - beta1), beta2, group["eps"], clr

    def _layout(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        flags = (bool(group["weight_decay"]), 1 - group["betas"][0] < 0.5)
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
        wd, w1, rest, beta2, eps, clr = s
        if group["weight_decay"]:
            g = g + wd * p
        near = 1 - group["betas"][0] < 0.5
        exp_avg = _lerp_state(state, "exp_avg", g, w1, rest, near, traced)
        u = _set_state(
            state, "exp_inf", ops.maximum(state["exp_inf"] * beta2, ops.abs(g) + eps), traced
        )
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

    def _layout(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        flags = (
            bool(group["weight_decay"]), group["decoupled_weight_decay"],
            1 - group["betas"][0] < 0.5,
        )  # fmt: skip
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
        wd, decay, w1, rest, beta2, w2, inv_bias_correction2, eps, step_g, step_m = s
        if group["weight_decay"]:
            if group["decoupled_weight_decay"]:
                p *= decay
            else:
                g = g + wd * p
        near = 1 - group["betas"][0] < 0.5
        exp_avg = _lerp_state(state, "exp_avg", g, w1, rest, near, traced)
        v = _scale_add_state(state, "exp_avg_sq", beta2, w2 * (g * g), traced)
        denom = ops.sqrt(v * inv_bias_correction2) + eps  # a product: see RAdam's _scalars
        p += step_g * (g / denom)
        p += step_m * (exp_avg / denom)


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

    def _init(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = 0
        state["exp_avg"] = ops.zeros_like(p)
        state["exp_avg_sq"] = ops.zeros_like(p)

    def _scalars(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        lr, (beta1, beta2), wd = group["lr"], group["betas"], group["weight_decay"]
        state["step"] += 1
        step = state["step"]
        bias_correction2 = 1 - beta2**step
        rho_inf, rho_t = _rho(beta2, step)
        rect = 0.0
        if rho_t > 5.0:
            rect = math.sqrt(
                (rho_t - 4) * (rho_t - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho_t)
            )
        step_size = lr / (1 - beta1**step)
        # Products with numbers only (no division by one): PyTorch storage divides by a Python
        # number as a product with its reciprocal, by a 0-d tensor exactly (compile's replay).
        return (
            wd, 1 - lr * wd, 1 - beta1, 1 - (1 - beta1), beta2, 1 - beta2, step_size,
            step_size * rect * bias_correction2**0.5, group["eps"],
        )  # fmt: skip

    def _layout(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        # Whether the coming step is rectified: a Python branch on the step count.
        rectified = _rho(group["betas"][1], state["step"] + 1)[1] > 5.0
        flags = (
            bool(group["weight_decay"]), group["decoupled_weight_decay"],
            1 - group["betas"][0] < 0.5, rectified,
        )  # fmt: skip
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
        wd, decay, w1, rest, beta2, w2, step_size, rectified_size, eps = s
        if group["weight_decay"]:
            if group["decoupled_weight_decay"]:
                p *= decay
            else:
                g = g + wd * p
        near = 1 - group["betas"][0] < 0.5
        exp_avg = _lerp_state(state, "exp_avg", g, w1, rest, near, traced)
        v = _scale_add_state(state, "exp_avg_sq", beta2, w2 * (g * g), traced)
        if _rho(group["betas"][1], state["step"])[1] > 5.0:  # rectified (see _layout)
            p -= (exp_avg * rectified_size) / (ops.sqrt(v) + eps)
        else:
            p -= exp_avg * step_size


def _rho(beta2: float, step: int) -> tuple[float, float]:
    """RAdam's maximum length of the approximated SMA, and its length at `step`."""
    rho_inf = 2 / (1 - beta2) - 1
    return rho_inf, rho_inf - 2 * step * (beta2**step) / (1 - beta2**step)
