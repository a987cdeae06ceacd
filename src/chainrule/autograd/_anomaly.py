"""Anomaly mode, as PyTorch's: while on, operations remember where they were created and a
backward that fails or produces NaN names the node and that place (the engine reads the flag
`grad_mode.anomaly`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from .._mode import grad_mode, set_feature

__all__ = ["detect_anomaly", "is_anomaly_enabled", "set_detect_anomaly"]

_F = TypeVar("_F", bound=Callable[..., Any])


class detect_anomaly:
    """While active, operations remember where they were created, and a backward that produces
    NaN or fails names the node and shows that place (this costs time: for debugging). Also a
    decorator."""

    def __init__(self) -> None:
        self.prev: list[bool] = []

    def __enter__(self) -> None:
        self.prev.append(grad_mode.anomaly)
        set_feature("anomaly", True)

    def __exit__(self, *exc: object) -> None:
        set_feature("anomaly", self.prev.pop())

    def __call__(self, fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class set_detect_anomaly:
    """Set anomaly mode to `mode` at once; as a context manager, restore it on exit."""

    def __init__(self, mode: bool) -> None:
        self.prev = grad_mode.anomaly
        set_feature("anomaly", bool(mode))

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        set_feature("anomaly", self.prev)


def is_anomaly_enabled() -> bool:
    """Whether anomaly mode is on in this thread."""
    return grad_mode.anomaly
