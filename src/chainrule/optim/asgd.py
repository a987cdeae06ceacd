"""ASGD, averaged stochastic gradient descent, step for step as PyTorch's (its single-tensor
code path: the same operations in the same order, so trajectories agree to rounding)."""

from __future__ import annotations

from typing import Any

from .. import _namespace as ops
from .._tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check, _decayed, _Update

__all__ = ["ASGD"]


class ASGD(Optimizer):
    """Averaged SGD: p = p (1 - lambd eta) - eta g (g = grad + weight_decay p), then the
    average ax = ax + mu (p - ax), or ax = p while mu is 1; after step t,
    eta = lr / (1 + lambd lr t)^alpha and mu = 1 / max(1, t - t0), so ax copies p through
    step t0 + 2 (for a whole t0) and is then the mean of the parameters since that step. The
    average is in `state[p]["ax"]`; the parameters are not replaced by it.
    `foreach` and `capturable` choose how PyTorch computes a step: accepted and kept in the
    groups, the numbers are the same. eta and mu are Python floats, as PyTorch's 0-d tensors
    of its default dtype when that is float64."""

    _NUMBERS = {"step": int, "eta": float, "mu": float}

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        lambd: float = 1e-4,
        alpha: float = 0.75,
        t0: float = 1e6,
        weight_decay: float = 0.0,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
        capturable: bool = False,
    ) -> None:
        _check(lr=lr, weight_decay=weight_decay)
        defaults = dict(
            lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay, foreach=foreach,
            maximize=maximize, differentiable=differentiable, capturable=capturable,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _init(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = 0
        state["eta"] = float(group["lr"])
        state["mu"] = 1.0
        state["ax"] = ops.zeros_like(p)

    def _scalars(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        # This step uses the eta and mu the last one left; it leaves those of the next.
        eta, mu, lr, lambd = state["eta"], state["mu"], group["lr"], group["lambd"]
        state["step"] += 1
        step = state["step"]
        state["eta"] = lr / ((1 + lambd * lr * step) ** group["alpha"])
        state["mu"] = 1 / max(1, step - group["t0"])
        # Whether ax averages (mu != 1) or copies p: decided here, in Python, and handed to
        # _update as a number, so that a compiled step reads it at every call.
        return group["weight_decay"], 1 - lambd * eta, eta, mu, float(mu != 1)

    def _flags(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        return (bool(group["weight_decay"]),)

    def _update(self, p: Tensor, g: Tensor, u: _Update) -> None:
        weight_decay, decay, eta, mu, averaging = u.numbers
        g = _decayed(p, g, u.group, weight_decay)
        p *= decay
        p -= eta * g
        ax = u.state["ax"]
        if u.traced:
            # Both forms computed and one picked by the number: a replay follows the step
            # count past t0 (and a step taken twice in one compiled call) with no guard.
            u.set("ax", ops.where(averaging > 0, ax + (p - ax) * mu, p))
        elif averaging:
            u.set("ax", ax + (p - ax) * mu)
        else:
            u.set("ax", ops.asarray(p, copy=True))
