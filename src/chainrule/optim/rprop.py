"""Rprop, resilient backpropagation, step for step as PyTorch's (its single-tensor code
path: the same operations in the same order, so trajectories agree to rounding)."""

from __future__ import annotations

from typing import Any

from .. import _namespace as ops
from .._tensor import Tensor
from .optimizer import Optimizer, ParamsT, _check, _Update

__all__ = ["Rprop"]


class Rprop(Optimizer):
    """Each element has its own step size, which starts at lr: where the gradient kept its
    sign since the last step the size is multiplied by etaplus, where it changed sign by
    etaminus (and that element does not move this step, its gradient taken as 0), limited to
    step_sizes = (min, max); then p = p - sign(g) step_size. The last gradient is in
    `state[p]["prev"]`, the sizes in `state[p]["step_size"]`. `foreach` and `capturable`
    choose how PyTorch computes a step: accepted and kept in the groups, the numbers are the
    same."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-2,
        etas: tuple[float, float] = (0.5, 1.2),
        step_sizes: tuple[float, float] = (1e-6, 50),
        *,
        capturable: bool = False,
        foreach: bool | None = None,
        maximize: bool = False,
        differentiable: bool = False,
    ) -> None:
        _check(lr=lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(
            lr=lr, etas=tuple(etas), step_sizes=tuple(step_sizes), foreach=foreach,
            maximize=maximize, differentiable=differentiable, capturable=capturable,
        )  # fmt: skip
        super().__init__(params, defaults)

    def _init(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        state["step"] = 0
        state["prev"] = ops.zeros_like(p)
        state["step_size"] = ops.full_like(p, group["lr"])

    def _scalars(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        state["step"] += 1
        return (*group["etas"], *group["step_sizes"])

    def _update(self, p: Tensor, g: Tensor, u: _Update) -> None:
        etaminus, etaplus, smallest, largest = u.numbers
        # The factor of each step size, from the sign of g prev, as PyTorch writes it: the
        # positive signs become etaplus, then the negative ones etaminus, then the zeros 1
        # (one after the other: a NaN stays NaN). Selections, not Python branches, so that a
        # compiled step follows the signs of every call.
        factor = ops.sign(g * u.state["prev"])
        factor = ops.where(factor > 0, etaplus, factor)
        factor = ops.where(factor < 0, etaminus, factor)
        factor = ops.where(factor == 0, 1, factor)
        size = u.set("step_size", ops.clip(u.state["step_size"] * factor, smallest, largest))
        g = ops.where(factor == etaminus, 0, g)
        p -= ops.sign(g) * size
        u.set("prev", g)
