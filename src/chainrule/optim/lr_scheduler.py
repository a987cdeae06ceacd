"""Learning-rate schedulers with PyTorch's interface: built on an optimizer, `step()` once per
epoch after the optimizer's step, writing each `param_groups[i]['lr']`."""

from __future__ import annotations

import math
from typing import Any

from .optimizer import Optimizer

__all__ = ["LRScheduler", "StepLR", "CosineAnnealingLR"]


class LRScheduler:
    """Base class: remembers each group's initial lr as `base_lrs` and sets the first lr on
    construction; subclasses write `get_lr` (the lrs for `last_epoch`)."""

    def __init__(self, optimizer: Optimizer, last_epoch: int = -1) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        self.optimizer = optimizer
        for i, group in enumerate(optimizer.param_groups):
            if last_epoch == -1:
                group.setdefault("initial_lr", group["lr"])
            elif "initial_lr" not in group:
                raise KeyError(
                    f"param 'initial_lr' is not specified in param_groups[{i}] when resuming "
                    "an optimizer"
                )
        self.base_lrs: list[float] = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self._step_count = 0
        self.step()

    def get_lr(self) -> list[float]:
        """The learning rates for `last_epoch`."""
        raise NotImplementedError(f"{type(self).__name__} must define get_lr")

    def step(self) -> None:
        """Advance one epoch and write the new learning rates into the optimizer."""
        self._step_count += 1
        self.last_epoch += 1
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def get_last_lr(self) -> list[float]:
        """The learning rates the last `step` set."""
        return self._last_lr

    def state_dict(self) -> dict[str, Any]:
        """The scheduler's attributes, except the optimizer."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes saved by `state_dict`."""
        self.__dict__.update(state_dict)


class StepLR(LRScheduler):
    """Multiply each group's lr by `gamma` every `step_size` epochs."""

    def __init__(
        self, optimizer: Optimizer, step_size: int, gamma: float = 0.1, last_epoch: int = -1
    ) -> None:
        self.step_size = step_size
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current lrs, times gamma at a non-zero multiple of step_size."""
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        if self.last_epoch == 0 or self.last_epoch % self.step_size:
            return lrs
        return [lr * self.gamma for lr in lrs]


class CosineAnnealingLR(LRScheduler):
    """Anneal each lr from its initial value to `eta_min` along half a cosine over `T_max`
    epochs (and back up over the next T_max), by PyTorch's recursive form, so that other
    changes to the lr carry through."""

    def __init__(
        self, optimizer: Optimizer, T_max: int, eta_min: float = 0.0, last_epoch: int = -1
    ) -> None:
        self.T_max = T_max
        self.eta_min = eta_min
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The next lrs of the cosine schedule."""
        groups = self.optimizer.param_groups
        t, n, low = self.last_epoch, self.T_max, self.eta_min
        if self._step_count == 1:  # the step made on construction keeps the lrs
            return [g["lr"] for g in groups]
        if (t - 1 - n) % (2 * n) == 0:
            return [
                g["lr"] + (b - low) * (1 - math.cos(math.pi / n)) / 2
                for b, g in zip(self.base_lrs, groups)
            ]
        ratio = (1 + math.cos(math.pi * t / n)) / (1 + math.cos(math.pi * (t - 1) / n))
        return [ratio * (g["lr"] - low) + low for g in groups]
