"""Anomaly mode, as PyTorch's: while on, operations remember where they were created and a
backward that fails or produces NaN names the node and that place (the engine reads the flag
`grad_mode.anomaly`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from .._mode import grad_mode, set_feature

__all__ = [
    "detect_anomaly",
    "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled",
    "set_detect_anomaly",
    "set_multithreading_enabled",
]

_F = TypeVar("_F", bound=Callable[..., Any])


class detect_anomaly:
    """While active, operations remember where they were created, and a backward that produces
    NaN (unless check_nan=False) or fails names the node and shows that place (this costs
    time: for debugging). Also a decorator."""

    def __init__(self, check_nan: bool = True) -> None:
        self.check_nan = bool(check_nan)
        self.prev: list[tuple[bool, bool]] = []

    def __enter__(self) -> None:
        self.prev.append((grad_mode.anomaly, grad_mode.anomaly_check_nan))
        grad_mode.anomaly_check_nan = self.check_nan
        set_feature("anomaly", True)

    def __exit__(self, *exc: object) -> None:
        anomaly, grad_mode.anomaly_check_nan = self.prev.pop()
        set_feature("anomaly", anomaly)

    def __call__(self, fn: _F) -> _F:
        check_nan = self.check_nan

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly(check_nan):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class set_detect_anomaly:
    """Set anomaly mode to `mode` (and whether it checks for NaN) at once; as a context
    manager, restore both on exit."""

    def __init__(self, mode: bool, check_nan: bool = True) -> None:
        self.prev = (grad_mode.anomaly, grad_mode.anomaly_check_nan)
        grad_mode.anomaly_check_nan = bool(check_nan)
        set_feature("anomaly", bool(mode))

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        anomaly, grad_mode.anomaly_check_nan = self.prev
        set_feature("anomaly", anomaly)


def is_anomaly_enabled() -> bool:
    """Whether anomaly mode is on in this thread."""
    return grad_mode.anomaly


def is_anomaly_check_nan_enabled() -> bool:
    """Whether anomaly mode, when on, checks backward's gradients for NaN in this thread."""
    return grad_mode.anomaly_check_nan


class set_multithreading_enabled:
    """PyTorch's switch for backward on per-device worker threads. chainrule's backward
    always runs in the calling thread (several threads may run backward at once), so this
    changes nothing; it is accepted so that PyTorch code runs. A context manager and a
    plain call, as PyTorch's."""

    def __init__(self, mode: bool) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None
