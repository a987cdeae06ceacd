"""Adadelta, step for step as PyTorch's (its single-tensor code path: the same operations in
the same order, so trajectories agree to rounding)."""

from __future__ import annotations

from typing import Any

from .. import _namespace as ops
from .._tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check, _decayed, _Update

__all__ = ["Adadelta"]


class Adadelta(Optimizer):
    """v = rho v + (1 - rho) g^2 (g = grad + weight_decay p); the step
    d = sqrt(u + eps) / sqrt(v + eps) g, then u = rho u + (1 - rho) d^2; p = p - lr d. The
    accumulated squared steps u make the step's units those of p (lr 1.0 by default).
    `foreach` and `capturable` choose how PyTorch computes a step: accepted and kept in the
    groups, the numbers are the same."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1.0,
        rho: float = 0.9,
        eps: float = 1e-6,
        weight_decay: float = 0.0,
        foreach: bool | None = None,
        *,
        capturable: bool = False,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check(lr=lr, eps=eps, weight_decay=weight_decay)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if differentiable:
            raise NotImplementedError(
                "Adadelta(differentiable=True), a step that autograd records, is not implemented"
            )
        defaults = dict(
            lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, foreach=foreach,
            capturable=capturable, maximize=maximize, differentiable=differentiable,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _init(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = 0
        state["square_avg"] = ops.zeros_like(p)
        state["acc_delta"] = ops.zeros_like(p)

    def _scalars(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        state["step"] += 1
        rho = group["rho"]
        return rho, 1 - rho, group["eps"], group["weight_decay"], group["lr"]

    def _flags(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        return (bool(group["weight_decay"]),)

    def _update(self, p: Tensor, g: Tensor, u: _Update) -> None:
        rho, w, eps, weight_decay, lr = u.numbers
        g = _decayed(p, g, u.group, weight_decay)
        v = u.scale_add("square_avg", rho, w * (g * g))
        delta = ops.sqrt(u.state["acc_delta"] + eps) / ops.sqrt(v + eps) * g
        u.scale_add("acc_delta", rho, w * (delta * delta))
        p -= lr * delta
