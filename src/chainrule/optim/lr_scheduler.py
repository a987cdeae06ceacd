"""Learning-rate schedulers with PyTorch's interface: built on an optimizer, `step()` once per
epoch after the optimizer's step, writing each `param_groups[i]['lr']`."""

from __future__ import annotations

import math
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from .optimizer import Optimizer

__all__ = [
    "LRScheduler", "StepLR", "CosineAnnealingLR", "LambdaLR", "MultiplicativeLR", "MultiStepLR",
    "ExponentialLR", "LinearLR", "ConstantLR", "PolynomialLR", "OneCycleLR", "ReduceLROnPlateau",
    "SequentialLR", "ChainedScheduler", "CosineAnnealingWarmRestarts", "CyclicLR",
]  # fmt: skip


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
        self._initial_step()

    def _initial_step(self) -> None:
        """The step made on construction (and by SequentialLR for its first scheduler):
        `_is_initial` tells get_lr, which keeps the lrs then where PyTorch's does (not only
        at epoch 0: a scheduler made with last_epoch resumes from the lrs it is given)."""
        self._step_count = 0
        self._is_initial = True
        self.step()
        self._is_initial = False

    def get_lr(self) -> list[float]:
        """The learning rates for `last_epoch`."""
        raise NotImplementedError(f"{type(self).__name__} must define get_lr")

    def step(self, epoch: int | None = None) -> None:
        """Advance one epoch and write the new learning rates into the optimizer (to
        `epoch`, by the schedule's closed form where it has one: PyTorch's deprecated form)."""
        self._step_count += 1
        self._update_lr(epoch)

    def _update_lr(self, epoch: int | None) -> None:
        if epoch is None:
            self.last_epoch += 1
            lrs = self.get_lr()
        else:
            self.last_epoch = epoch
            lrs = self._closed_form() if hasattr(self, "_closed_form") else self.get_lr()
        for group, lr in zip(self.optimizer.param_groups, lrs):
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

    def _closed_form(self) -> list[float]:
        return [b * self.gamma ** (self.last_epoch // self.step_size) for b in self.base_lrs]


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
        if self._is_initial:
            return [g["lr"] for g in groups]
        if self._step_count == 1 and t > 0:  # a first step not made on construction
            return self._closed_form()
        if (t - 1 - n) % (2 * n) == 0:
            return [
                g["lr"] + (b - low) * (1 - math.cos(math.pi / n)) / 2
                for b, g in zip(self.base_lrs, groups)
            ]
        ratio = (1 + math.cos(math.pi * t / n)) / (1 + math.cos(math.pi * (t - 1) / n))
        return [ratio * (g["lr"] - low) + low for g in groups]

    def _closed_form(self) -> list[float]:
        t, n, low = self.last_epoch, self.T_max, self.eta_min
        return [low + (b - low) * (1 + math.cos(math.pi * t / n)) / 2 for b in self.base_lrs]


class LambdaLR(LRScheduler):
    """Each group's lr is its initial lr times `lr_lambda(epoch)` (one function, or one per
    group)."""

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """initial lr times lr_lambda(last_epoch), per group."""
        return [b * f(self.last_epoch) for f, b in zip(self.lr_lambdas, self.base_lrs)]

    def state_dict(self) -> dict[str, Any]:
        """The attributes, except the optimizer and the functions (as PyTorch)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}


def _lambdas(
    optimizer: Optimizer,
    lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
) -> list[Callable[[int], float]]:
    """One function per parameter group: `lr_lambda` for each, or one of its list each."""
    n = len(optimizer.param_groups)
    if callable(lr_lambda):
        return [lr_lambda] * n
    if len(lr_lambda) != n:
        raise ValueError(f"Expected {n} lr_lambdas, but got {len(lr_lambda)}")
    return list(lr_lambda)


class MultiStepLR(LRScheduler):
    """Multiply each lr by `gamma` at each milestone epoch (twice at a milestone listed
    twice)."""

    def __init__(
        self,
        optimizer: Optimizer,
        milestones: Sequence[int],
        gamma: float = 0.1,
        last_epoch: int = -1,
    ) -> None:
        self.milestones = Counter(milestones)
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current lrs, times gamma^k at a milestone listed k times."""
        k = self.milestones.get(self.last_epoch, 0)
        return [g["lr"] * self.gamma**k for g in self.optimizer.param_groups]

    def _closed_form(self) -> list[float]:
        passed = bisect_right(sorted(self.milestones.elements()), self.last_epoch)
        return [b * self.gamma**passed for b in self.base_lrs]


class ExponentialLR(LRScheduler):
    """Multiply each lr by `gamma` every epoch."""

    def __init__(self, optimizer: Optimizer, gamma: float, last_epoch: int = -1) -> None:
        self.gamma = gamma
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current lrs times gamma (unchanged on construction)."""
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        return lrs if self._is_initial else [lr * self.gamma for lr in lrs]

    def _closed_form(self) -> list[float]:
        return [b * self.gamma**self.last_epoch for b in self.base_lrs]


class MultiplicativeLR(LRScheduler):
    """Multiply each group's lr by `lr_lambda(epoch)` every epoch (one function, or one per
    group)."""

    def __init__(
        self,
        optimizer: Optimizer,
        lr_lambda: Callable[[int], float] | Sequence[Callable[[int], float]],
        last_epoch: int = -1,
    ) -> None:
        self.lr_lambdas = _lambdas(optimizer, lr_lambda)
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The current lrs times lr_lambda(last_epoch), per group (unchanged on
        construction)."""
        groups = self.optimizer.param_groups
        if self._is_initial:
            return [g["lr"] for g in groups]
        return [g["lr"] * f(self.last_epoch) for f, g in zip(self.lr_lambdas, groups)]

    def state_dict(self) -> dict[str, Any]:
        """The attributes, except the optimizer and the functions (as LambdaLR's)."""
        return {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "lr_lambdas")}


class ConstantLR(LRScheduler):
    """Scale each lr by `factor` for the first `total_iters` epochs, then restore it."""

    def __init__(
        self,
        optimizer: Optimizer,
        factor: float = 1.0 / 3,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if not 0 <= factor <= 1:
            raise ValueError("Constant multiplicative factor expected to be between 0 and 1.")
        self.factor = factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The next lrs, by PyTorch's recursive form (other changes to the lr carry)."""
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        if self.last_epoch == 0:
            return [lr * self.factor for lr in lrs]
        if self.last_epoch != self.total_iters:
            return lrs
        return [lr * (1.0 / self.factor) for lr in lrs]

    def _closed_form(self) -> list[float]:
        factor = self.factor + (self.last_epoch >= self.total_iters) * (1 - self.factor)
        return [b * factor for b in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Decay each lr as (1 - epoch / total_iters)^power of its initial value, reaching 0 at
    `total_iters`."""

    def __init__(
        self,
        optimizer: Optimizer,
        total_iters: int = 5,
        power: float = 1.0,
        last_epoch: int = -1,
    ) -> None:
        self.total_iters = total_iters
        self.power = power
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The next lrs, by PyTorch's recursive form (other changes to the lr carry)."""
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        t, n = self.last_epoch, self.total_iters
        if self._is_initial or t > n:
            return lrs
        decay = ((1.0 - t / n) / (1.0 - (t - 1) / n)) ** self.power
        return [lr * decay for lr in lrs]

    def _closed_form(self) -> list[float]:
        n = self.total_iters
        return [b * (1.0 - min(n, self.last_epoch) / n) ** self.power for b in self.base_lrs]


class LinearLR(LRScheduler):
    """Scale each lr by a factor going linearly from `start_factor` to `end_factor` over
    `total_iters` epochs, then keep it."""

    def __init__(
        self,
        optimizer: Optimizer,
        start_factor: float = 1.0 / 3,
        end_factor: float = 1.0,
        total_iters: int = 5,
        last_epoch: int = -1,
    ) -> None:
        if not 0 < start_factor <= 1:
            raise ValueError(
                "Starting multiplicative factor expected to be greater than 0 and less or "
                "equal to 1."
            )
        if not 0 <= end_factor <= 1:
            raise ValueError("Ending multiplicative factor expected to be between 0 and 1.")
        self.start_factor = start_factor
        self.end_factor = end_factor
        self.total_iters = total_iters
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """The next lrs, by PyTorch's recursive form (other changes to the lr carry)."""
        lrs = [g["lr"] for g in self.optimizer.param_groups]
        if self.last_epoch == 0:
            return [lr * self.start_factor for lr in lrs]
        if self._is_initial or self.last_epoch > self.total_iters:
            return lrs
        span = self.end_factor - self.start_factor
        ratio = 1.0 + span / (self.total_iters * self.start_factor + (self.last_epoch - 1) * span)
        return [lr * ratio for lr in lrs]

    def _closed_form(self) -> list[float]:
        progress = min(self.total_iters, self.last_epoch) / self.total_iters
        factor = self.start_factor + (self.end_factor - self.start_factor) * progress
        return [b * factor for b in self.base_lrs]


class CosineAnnealingWarmRestarts(LRScheduler):
    """Cosine annealing from each initial lr to `eta_min` over T_0 epochs, then restart,
    each period T_mult times the previous one."""

    def __init__(
        self,
        optimizer: Optimizer,
        T_0: int,
        T_mult: int = 1,
        eta_min: float = 0.0,
        last_epoch: int = -1,
    ) -> None:
        if T_0 <= 0 or not isinstance(T_0, int):
            raise ValueError(f"Expected positive integer T_0, but got {T_0}")
        if T_mult < 1 or not isinstance(T_mult, int):
            raise ValueError(f"Expected integer T_mult >= 1, but got {T_mult}")
        self.T_0 = T_0
        self.T_i = T_0
        self.T_mult = T_mult
        self.eta_min = eta_min
        self.T_cur = last_epoch
        super().__init__(optimizer, last_epoch)

    def get_lr(self) -> list[float]:
        """eta_min + (initial lr - eta_min) (1 + cos(pi T_cur / T_i)) / 2."""
        c = (1 + math.cos(math.pi * self.T_cur / self.T_i)) / 2
        return [self.eta_min + (b - self.eta_min) * c for b in self.base_lrs]

    def step(self, epoch: float | None = None) -> None:
        """Advance one epoch (or go to `epoch`, possibly fractional: within an epoch's
        batches) and write the lrs."""
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            epoch = self.last_epoch + 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:
                self.T_cur -= self.T_i
                self.T_i *= self.T_mult
        else:
            if epoch < 0:
                raise ValueError(f"Expected non-negative epoch, but got {epoch}")
            if epoch >= self.T_0:
                if self.T_mult == 1:
                    self.T_cur = epoch % self.T_0
                else:
                    n = int(math.log(epoch / self.T_0 * (self.T_mult - 1) + 1, self.T_mult))
                    self.T_cur = epoch - self.T_0 * (self.T_mult**n - 1) / (self.T_mult - 1)
                    self.T_i = self.T_0 * self.T_mult**n
            else:
                self.T_i = self.T_0
                self.T_cur = epoch
        self._step_count += 1
        self.last_epoch = math.floor(epoch)
        for group, lr in zip(self.optimizer.param_groups, self.get_lr()):
            group["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]


class OneCycleLR(LRScheduler):
    """The one-cycle policy, one step per batch: the lr rises from max_lr / div_factor to
    `max_lr` over the first pct_start of `total_steps` and anneals to initial_lr /
    final_div_factor by the end (cosine or linear; three_phase adds a symmetric descent
    first); momentum (or Adam's beta1) cycles the other way between base_momentum and
    max_momentum."""

    def __init__(
        self,
        optimizer: Optimizer,
        max_lr: float | Sequence[float],
        total_steps: int | None = None,
        epochs: int | None = None,
        steps_per_epoch: int | None = None,
        pct_start: float = 0.3,
        anneal_strategy: str = "cos",
        cycle_momentum: bool = True,
        base_momentum: float | Sequence[float] = 0.85,
        max_momentum: float | Sequence[float] = 0.95,
        div_factor: float = 25.0,
        final_div_factor: float = 1e4,
        three_phase: bool = False,
        last_epoch: int = -1,
    ) -> None:
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError(
                    "You must define either total_steps OR (epochs AND steps_per_epoch)"
                )
            if epochs <= 0 or steps_per_epoch <= 0:
                raise ValueError("Expected positive integer epochs and steps_per_epoch")
            total_steps = epochs * steps_per_epoch
        elif total_steps <= 0:
            raise ValueError(f"Expected positive integer total_steps, but got {total_steps}")
        if not 0 <= pct_start <= 1:
            raise ValueError(f"Expected float between 0 and 1 pct_start, but got {pct_start}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(
                f"anneal_strategy must be one of 'cos' or 'linear', instead got {anneal_strategy}"
            )
        self.total_steps = total_steps
        self.anneal_strategy = anneal_strategy
        self.cycle_momentum = cycle_momentum
        up = float(pct_start * total_steps) - 1
        if three_phase:
            self._phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (2 * up, "max_lr", "initial_lr", "base_momentum", "max_momentum"),
                (total_steps - 1, "initial_lr", "min_lr", "max_momentum", "max_momentum"),
            ]
        else:
            self._phases = [
                (up, "initial_lr", "max_lr", "max_momentum", "base_momentum"),
                (total_steps - 1, "max_lr", "min_lr", "base_momentum", "max_momentum"),
            ]
        groups = optimizer.param_groups
        max_lrs = _per_group(max_lr, len(groups), "max_lr")
        if last_epoch == -1:
            for lr, group in zip(max_lrs, groups):
                group["initial_lr"] = lr / div_factor
                group["max_lr"] = lr
                group["min_lr"] = group["initial_lr"] / final_div_factor
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self._beta1 = "betas" in optimizer.defaults
            bases = _per_group(base_momentum, len(groups), "base_momentum")
            maxes = _per_group(max_momentum, len(groups), "max_momentum")
            if last_epoch == -1:
                for low, high, group in zip(bases, maxes, groups):
                    _set_momentum(group, high, self._beta1)
                    group["base_momentum"] = low
                    group["max_momentum"] = high
        super().__init__(optimizer, last_epoch)

    def _anneal(self, start: float, end: float, pct: float) -> float:
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2.0 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start

    def get_lr(self) -> list[float]:
        """The lrs (and momenta, written into the groups) of step `last_epoch`."""
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(
                f"Tried to step {step} times. The specified number of total steps is "
                f"{self.total_steps}"
            )
        lrs = []
        for group in self.optimizer.param_groups:
            start = 0.0
            for i, (end, lr_from, lr_to, m_from, m_to) in enumerate(self._phases):
                if step <= end or i == len(self._phases) - 1:
                    pct = (step - start) / (end - start)
                    lr = self._anneal(group[lr_from], group[lr_to], pct)
                    if self.cycle_momentum:
                        momentum = self._anneal(group[m_from], group[m_to], pct)
                        _set_momentum(group, momentum, self._beta1)
                    break
                start = end
            lrs.append(lr)
        return lrs


def _set_momentum(group: dict[str, Any], value: float, beta1: bool) -> None:
    """A group's momentum (its optimizer's beta1 where it has betas) set to `value`."""
    if beta1:
        group["betas"] = (value, *group["betas"][1:])
    else:
        group["momentum"] = value


def _per_group(value: float | Sequence[float], n: int, name: str) -> list[float]:
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"expected {n} values for {name}, got {len(value)}")
        return list(value)
    return [value] * n  # type: ignore[list-item]


class CyclicLR(LRScheduler):
    """The cyclical learning rate policy, one step per batch: each lr goes from base_lr up to
    max_lr over `step_size_up` steps and back over `step_size_down`, the cycle's amplitude
    scaled by `mode` ('triangular': constant; 'triangular2': halved each cycle; 'exp_range':
    gamma^step) or by `scale_fn` (of the cycle or of the step, as `scale_mode` says);
    momentum (or Adam's beta1) cycles the other way between base_momentum and
    max_momentum."""

    def __init__(
        self,
        optimizer: Optimizer,
        base_lr: float | Sequence[float],
        max_lr: float | Sequence[float],
        step_size_up: int = 2000,
        step_size_down: int | None = None,
        mode: str = "triangular",
        gamma: float = 1.0,
        scale_fn: Callable[[float], float] | None = None,
        scale_mode: str = "cycle",
        cycle_momentum: bool = True,
        base_momentum: float | Sequence[float] = 0.8,
        max_momentum: float | Sequence[float] = 0.9,
        last_epoch: int = -1,
    ) -> None:
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")
        groups = optimizer.param_groups
        base_lrs = _per_group(base_lr, len(groups), "base_lr")
        if last_epoch == -1:
            for lr, group in zip(base_lrs, groups):
                group["lr"] = lr
        self.max_lrs = _per_group(max_lr, len(groups), "max_lr")
        up = float(step_size_up)
        down = float(step_size_down) if step_size_down is not None else up
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if mode not in ("triangular", "triangular2", "exp_range") and scale_fn is None:
            raise ValueError("mode is invalid and scale_fn is None")
        self.mode = mode
        self.gamma = gamma
        self._scale_fn_custom = scale_fn
        if scale_fn is None:  # the mode's scale is of the cycle, or of the step for exp_range
            scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.scale_mode = scale_mode
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                )
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group(base_momentum, len(groups), "base_momentum")
            self.max_momentums = _per_group(max_momentum, len(groups), "max_momentum")
            if last_epoch == -1:
                for high, low, group in zip(self.max_momentums, self.base_momentums, groups):
                    _set_momentum(group, high, self.use_beta1)
                    group["max_momentum"] = high
                    group["base_momentum"] = low
        super().__init__(optimizer, last_epoch)
        self.base_lrs = base_lrs

    def scale_fn(self, x: float) -> float:
        """The amplitude's scale at cycle (or step) x."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma**x

    def get_lr(self) -> list[float]:
        """The lrs (and momenta, written into the groups) of step `last_epoch`."""
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle
        if x <= self.step_ratio:
            rise = x / self.step_ratio
        else:
            rise = (x - 1) / (self.step_ratio - 1)
        scale = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [b + (m - b) * rise * scale for b, m in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for low, high, group in zip(
                self.base_momentums, self.max_momentums, self.optimizer.param_groups
            ):
                _set_momentum(group, high - (high - low) * rise * scale, self.use_beta1)
        return lrs

    def state_dict(self) -> dict[str, Any]:
        """The attributes, except the optimizer and a custom scale_fn (as PyTorch, which
        keeps a function out)."""
        state = super().state_dict()
        state["_scale_fn_custom"] = None
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes saved by `state_dict`, keeping this scheduler's scale_fn."""
        state = dict(state_dict)
        state.pop("_scale_fn_custom", None)
        self.__dict__.update(state)


class SequentialLR(LRScheduler):
    """The schedulers one after the other: schedulers[i] drives the lr from milestones[i - 1]
    on (each restarted from epoch 0 when it takes over)."""

    def __init__(
        self,
        optimizer: Optimizer,
        schedulers: Sequence[LRScheduler],
        milestones: Sequence[int],
        last_epoch: int = -1,
    ) -> None:
        if not schedulers:
            raise ValueError("SequentialLR expects at least one scheduler, but got no scheduler.")
        for i, s in enumerate(schedulers):
            if isinstance(s, ReduceLROnPlateau):
                raise ValueError(
                    "SequentialLR does not support `ReduceLROnPlateau` scheduler as it requires "
                    "additional kwargs to be specified when calling `step`, but got one at index "
                    f"{i} in the given schedulers sequence."
                )
            if s.optimizer is not optimizer:
                raise ValueError(
                    "SequentialLR expects all schedulers to belong to the same optimizer, but "
                    f"got scheduler {type(s).__name__} at index {i} with another optimizer."
                )
        if len(milestones) != len(schedulers) - 1:
            raise ValueError(
                "Sequential Schedulers expects number of schedulers provided to be one more "
                f"than the number of milestone points, but got number of schedulers "
                f"{len(schedulers)} and the number of milestones to be equal to {len(milestones)}"
            )
        self._schedulers = list(schedulers)
        self._milestones = list(milestones)
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        for group in optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        for s in self._schedulers:  # undo the step each made on construction
            s.last_epoch -= 1
        first = self._schedulers[bisect_right(self._milestones, 0)]
        first._initial_step()
        self._last_lr = first.get_last_lr()

    def step(self) -> None:  # type: ignore[override]
        """Advance one epoch with the scheduler whose turn it is."""
        self.last_epoch += 1
        i = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            scheduler._update_lr(0)
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()

    def state_dict(self) -> dict[str, Any]:
        """The attributes, with each scheduler's state dict."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes and the schedulers' states."""
        state = dict(state_dict)
        for s, sub in zip(self._schedulers, state.pop("_schedulers")):
            s.load_state_dict(sub)
        self.__dict__.update(state)


class ChainedScheduler(LRScheduler):
    """Several schedulers of one optimizer stepped together: each `step` steps every one of
    them in turn, so their changes to the lr compose."""

    def __init__(
        self, schedulers: Sequence[LRScheduler], optimizer: Optimizer | None = None
    ) -> None:
        if not schedulers:
            raise ValueError(
                "ChainedScheduler expects at least one scheduler to be chained, but got no "
                "scheduler."
            )
        optimizer = optimizer or schedulers[0].optimizer
        for i, s in enumerate(schedulers):
            if isinstance(s, ReduceLROnPlateau):
                raise ValueError(
                    "ChainedScheduler does not support `ReduceLROnPlateau` scheduler as it "
                    "requires additional kwargs to be specified when calling `step`, but got "
                    f"one at index {i} in the given schedulers sequence."
                )
            if s.optimizer is not optimizer:
                raise ValueError(
                    "ChainedScheduler expects all schedulers to belong to the same optimizer, "
                    f"but got scheduler {type(s).__name__} at index {i} with another optimizer."
                )
        self._schedulers = list(schedulers)
        self.optimizer = optimizer
        self._last_lr = [g["lr"] for g in optimizer.param_groups]

    def step(self) -> None:  # type: ignore[override]
        """Step each scheduler in turn."""
        for s in self._schedulers:
            s.step()
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def state_dict(self) -> dict[str, Any]:
        """The attributes, with each scheduler's state dict."""
        state = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        state["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return state

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore attributes and the schedulers' states."""
        state = dict(state_dict)
        for s, sub in zip(self._schedulers, state.pop("_schedulers")):
            s.load_state_dict(sub)
        self.__dict__.update(state)


class ReduceLROnPlateau(LRScheduler):
    """Multiply each lr by `factor` (down to min_lr) once the metric passed to `step` has not
    improved (by `threshold`, relative or absolute) for more than `patience` epochs; then
    wait `cooldown` epochs before counting again."""

    def __init__(
        self,
        optimizer: Optimizer,
        mode: str = "min",
        factor: float = 0.1,
        patience: int = 10,
        threshold: float = 1e-4,
        threshold_mode: str = "rel",
        cooldown: int = 0,
        min_lr: float | Sequence[float] = 0.0,
        eps: float = 1e-8,
    ) -> None:
        if factor >= 1.0:
            raise ValueError("Factor should be < 1.0.")
        if mode not in ("min", "max"):
            raise ValueError(f"mode {mode} is unknown!")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"threshold mode {threshold_mode} is unknown!")
        self.optimizer = optimizer
        self.min_lrs = _per_group(min_lr, len(optimizer.param_groups), "min_lr")
        self.factor = factor
        self.patience = patience
        self.threshold = threshold
        self.threshold_mode = threshold_mode
        self.cooldown = cooldown
        self.mode = mode
        self.eps = eps
        self.best = math.inf if mode == "min" else -math.inf
        self.num_bad_epochs = 0
        self.cooldown_counter = 0
        self.last_epoch = 0
        self._last_lr = [g["lr"] for g in optimizer.param_groups]

    def _better(self, a: float) -> bool:
        best, t = self.best, self.threshold
        if self.mode == "min":
            return a < (best * (1.0 - t) if self.threshold_mode == "rel" else best - t)
        return a > (best * (t + 1.0) if self.threshold_mode == "rel" else best + t)

    def step(self, metrics: Any = None, epoch: int | None = None) -> None:  # type: ignore[override]
        """Record this epoch's metric; reduce the lrs after too long a plateau."""
        if metrics is None:
            raise TypeError("ReduceLROnPlateau.step() missing required argument: 'metrics'")
        current = float(metrics)
        self.last_epoch = self.last_epoch + 1 if epoch is None else epoch
        if self._better(current):
            self.best = current
            self.num_bad_epochs = 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        if self.num_bad_epochs > self.patience:
            for group, low in zip(self.optimizer.param_groups, self.min_lrs):
                old = group["lr"]
                new = max(old * self.factor, low)
                if old - new > self.eps:
                    group["lr"] = new
            self.cooldown_counter = self.cooldown
            self.num_bad_epochs = 0
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]
