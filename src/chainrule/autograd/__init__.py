"""The autograd API, with PyTorch's names and semantics: backward, grad, gradcheck,
anomaly detection, forward mode (forward_ad) and the functional transforms. This module only
gathers them; each lives in a module of its own."""

from __future__ import annotations

from . import forward_ad, functional, graph, profiler
from ._anomaly import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_detect_anomaly,
    set_multithreading_enabled,
)
from ._backward import backward, grad
from ._gradcheck import GradcheckError, gradcheck, gradgradcheck
from .function import Function, FunctionCtx

__all__ = [
    "backward",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
    "detect_anomaly",
    "set_detect_anomaly",
    "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled",
    "set_multithreading_enabled",
    "forward_ad",
    "graph",
    "functional",
    "profiler",
    "Function",
    "FunctionCtx",
]


def __dir__() -> list[str]:
    """The API only (dir() and editors' completion), not the names this module imports."""
    return sorted(__all__)
