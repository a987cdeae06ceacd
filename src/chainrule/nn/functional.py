"""Activation and normalisation functions, differentiable to any order."""

from __future__ import annotations

from .._namespace import log_softmax, logsumexp, softmax
from .._rules import OPS


def sigmoid(x, /):
    """1 / (1 + exp(-x))."""
    return OPS["sigmoid"](x)


def relu(x, /):
    """max(x, 0), with gradient 0 at 0 (as PyTorch)."""
    return OPS["relu"](x)


__all__ = ["logsumexp", "softmax", "log_softmax", "sigmoid", "relu"]
