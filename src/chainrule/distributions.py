"""Probability distributions with PyTorch's names and semantics (torch.distributions):
`Distribution`, the shared base (batch and event shapes, argument checks), and `Categorical`.
Log-probabilities and entropies are chainrule operations, differentiable to any order in the
parameters; samples are drawn from chainrule's generator (other numbers than PyTorch's for
one seed) and carry no gradient."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

from . import _namespace as ops
from . import random as _random
from ._mode import grad_mode
from ._namespace import finfo, int64
from ._tensor import Tensor, no_grad
from ._typing import ArrayLike

__all__ = ["Distribution", "Categorical"]


class Distribution:
    """The base of the distributions: a batch of independent distributions of shape
    `batch_shape`, each over values of shape `event_shape`. With `validate_args` (the default,
    as PyTorch's, unless `set_default_validate_args(False)`), the parameters and the values
    given to log_prob are checked, which reads their values (on Dask: computes them)."""

    _validate_default = True
    arg_names: tuple[str, ...] = ()

    def __init__(
        self,
        batch_shape: Sequence[int] = (),
        event_shape: Sequence[int] = (),
        validate_args: bool | None = None,
    ) -> None:
        self._batch_shape = tuple(batch_shape)
        self._event_shape = tuple(event_shape)
        self._validate_args = self._validate_default if validate_args is None else validate_args
        if self._validate_args:
            for name in self.arg_names:
                if name in self.__dict__:
                    self._check_argument(name, getattr(self, name))

    @staticmethod
    def set_default_validate_args(value: bool) -> None:
        """Whether distributions made from now on check their arguments by default."""
        if value not in (True, False):
            raise ValueError
        Distribution._validate_default = value

    @property
    def batch_shape(self) -> tuple[int, ...]:
        """The shape of the batch of distributions."""
        return self._batch_shape

    @property
    def event_shape(self) -> tuple[int, ...]:
        """The shape of one value of one distribution."""
        return self._event_shape

    def _extended_shape(self, sample_shape: Sequence[int] = ()) -> tuple[int, ...]:
        return tuple(sample_shape) + self._batch_shape + self._event_shape

    def _check_argument(self, name: str, value: Tensor) -> None:
        """A ValueError, in PyTorch's words, where a parameter breaks its constraint."""
        raise NotImplementedError(f"{type(self).__name__} does not check its arguments")

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """Values drawn from the distributions, of shape sample_shape + batch + event."""
        raise NotImplementedError(f"{type(self).__name__} does not implement sample")

    def log_prob(self, value: Tensor) -> Tensor:
        """The log of the probability (density or mass) of `value`."""
        raise NotImplementedError(f"{type(self).__name__} does not implement log_prob")

    def entropy(self) -> Tensor:
        """The entropy of each distribution of the batch, in nats."""
        raise NotImplementedError(f"{type(self).__name__} does not implement entropy")

    def perplexity(self) -> Tensor:
        """exp(entropy)."""
        return ops.exp(self.entropy())

    @staticmethod
    def _holds(valid: Tensor) -> bool:
        """Whether every element of the check `valid` holds. It reads values: traced by
        chainrule.compile, the function runs eagerly (validate_args=False replays)."""
        if grad_mode.extended and grad_mode.tracer is not None:
            grad_mode.tracer.unsupported("a distribution's argument checks (validate_args)")
        return bool(ops.all(valid))

    def _check_value(self, value: Any) -> None:
        """PyTorch's checks of a value given to log_prob: a tensor, of a shape that
        broadcasts with the distribution's, in its support."""
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        event = len(self._event_shape)
        if value.shape[len(value.shape) - event :] != self._event_shape:
            raise ValueError(
                f"The right-most size of value must match event_shape: {tuple(value.shape)} "
                f"vs {self._event_shape}."
            )
        actual, expected = tuple(value.shape), self._batch_shape + self._event_shape
        for i, j in zip(reversed(actual), reversed(expected)):
            if i != 1 and j != 1 and i != j:
                raise ValueError(
                    "Value is not broadcastable with batch_shape+event_shape: "
                    f"{actual} vs {expected}."
                )
        if not self._holds(self._in_support(value)):
            raise ValueError(
                f"Expected value argument (Tensor of shape {tuple(value.shape)}) to be within "
                f"the support ({self._support_name()}) of the distribution {self!r}, but found "
                f"invalid values:\n{value}"
            )

    def _in_support(self, value: Tensor) -> Tensor:
        raise NotImplementedError(f"{type(self).__name__} does not check values")

    def _support_name(self) -> str:
        raise NotImplementedError(f"{type(self).__name__} does not check values")

    def __repr__(self) -> str:
        shown = [
            f"{n}: {tuple(self.__dict__[n].shape)}" for n in self.arg_names if n in self.__dict__
        ]
        return f"{type(self).__name__}({', '.join(shown)})"


class Categorical(Distribution):
    """K categories 0 .. K-1 with probabilities `probs` (non-negative, normalised to sum 1
    over the last axis) or with unnormalised log-probabilities `logits` (one of the two);
    the axes before the last are the batch. `probs` and `logits` are both available: the one
    not given is computed from the other on first use (probs as softmax of the logits, logits
    as the log of the probabilities clamped to [eps, 1 - eps])."""

    arg_names = ("probs", "logits")

    def __init__(
        self,
        probs: Tensor | None = None,
        logits: Tensor | None = None,
        validate_args: bool | None = None,
    ) -> None:
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.ndim < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            param = self.probs
        else:
            if logits.ndim < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - ops.logsumexp(logits, axis=-1, keepdims=True)
            param = self.logits
        self._param = param
        self._num_events = param.shape[-1]
        super().__init__(param.shape[:-1], validate_args=validate_args)

    @cached_property
    def probs(self) -> Tensor:
        """The probabilities of the categories (summing to 1 over the last axis)."""
        return ops.softmax(self.logits, axis=-1)

    @cached_property
    def logits(self) -> Tensor:
        """The log-probabilities of the categories (logsumexp 0 over the last axis)."""
        eps = finfo(self.probs.dtype).eps
        return ops.log(self.probs.clamp(min=eps, max=1 - eps))

    @property
    def param_shape(self) -> tuple[int, ...]:
        """The shape of the parameter given: batch_shape + (K,)."""
        return tuple(self._param.shape)

    @property
    def mean(self) -> Tensor:
        """NaN (categories have no mean), of the batch's shape."""
        return ops.full(self._extended_shape(), ops.nan, dtype=self.probs.dtype)

    @property
    def variance(self) -> Tensor:
        """NaN (categories have no variance), of the batch's shape."""
        return ops.full(self._extended_shape(), ops.nan, dtype=self.probs.dtype)

    @property
    def mode(self) -> Tensor:
        """The most probable category (the first of a tie)."""
        return ops.argmax(self.probs, axis=-1)

    def _check_argument(self, name: str, value: Tensor) -> None:
        if name == "probs":
            valid = ops.all(value >= 0, axis=-1) & (ops.abs(value.sum(-1) - 1) < 1e-6)
            constraint = "Simplex()"
        else:
            valid = ops.all(value == value, axis=-1)  # no NaN; infinities are allowed
            constraint = "IndependentConstraint(Real(), 1)"
        if not self._holds(valid):
            raise ValueError(
                f"Expected parameter {name} (Tensor of shape {tuple(value.shape)}) of "
                f"distribution {self!r} to satisfy the constraint {constraint}, but found "
                f"invalid values:\n{value}"
            )

    def _in_support(self, value: Tensor) -> Tensor:
        return (value % 1 == 0) & (value >= 0) & (value <= self._num_events - 1)

    def _support_name(self) -> str:
        return f"IntegerInterval(lower_bound=0, upper_bound={self._num_events - 1})"

    def sample(self, sample_shape: Sequence[int] = ()) -> Tensor:
        """Categories drawn independently (int64, of shape sample_shape + batch_shape), by
        inverting the cumulative probabilities at uniform numbers from chainrule's
        generator; no gradient."""
        shape = self._extended_shape(sample_shape)
        with no_grad():
            probs = ops.broadcast_to(self.probs, shape + (self._num_events,))
            cdf = ops.cumulative_sum(probs, axis=-1)
            u = _random.rand(shape + (1,), dtype=probs.dtype) * cdf[..., -1:]
            drawn = ops.sum(ops.astype(cdf <= u, int64), axis=-1)
            return ops.minimum(drawn, self._num_events - 1)

    def log_prob(self, value: ArrayLike) -> Tensor:
        """The log-probability of each category in `value` (broadcast with the batch)."""
        if self._validate_args:
            self._check_value(value)
        index = ops.expand_dims(ops.astype(value, int64), axis=-1)
        shape = ops.broadcast_shapes(index.shape, self.logits.shape)
        index = ops.broadcast_to(index, shape[:-1] + (1,))
        return ops.broadcast_to(self.logits, shape).gather(-1, index).squeeze(-1)

    def entropy(self) -> Tensor:
        """-sum p log p over the categories (a category of probability 0 adds 0)."""
        logits = self.logits.clamp(min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand: bool = True) -> Tensor:
        """The categories 0 .. K-1 along the first axis, the batch's axes after it (of size
        1 unless `expand`)."""
        values = ops.arange(self._num_events, dtype=int64)
        values = values.reshape((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = ops.broadcast_to(values, (self._num_events,) + self._batch_shape)
        return values
