"""Thread-local autograd state: grad mode, the features that change how operations are
recorded (anomaly mode, ...), and the context managers. An operation reads
`grad_mode.extended` once: while it is False (no feature on) it takes the fast path."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])

__all__ = [
    "FEATURES",
    "grad_mode",
    "set_feature",
    "no_grad",
    "enable_grad",
    "set_grad_enabled",
    "is_grad_enabled",
]


class _GradMode(threading.local):
    enabled = True
    extended = False  # a feature of FEATURES is on: operations take the extended path
    anomaly = False  # detect_anomaly: nodes remember where they were created


grad_mode = _GradMode()

# The attributes of grad_mode that send operations down the extended path when truthy.
FEATURES = ("anomaly",)


def set_feature(name: str, value: Any) -> None:
    """Set a feature of FEATURES in this thread, and whether operations take the extended
    path."""
    setattr(grad_mode, name, value)
    grad_mode.extended = any(getattr(grad_mode, f) for f in FEATURES)


class _ModeContext:
    """Context manager and decorator that sets grad mode to `mode` for its duration."""

    __slots__ = ("mode", "prev")

    def __init__(self, mode: bool) -> None:
        self.mode = mode
        self.prev: list[bool] = []

    def __enter__(self) -> None:
        self.prev.append(grad_mode.enabled)
        grad_mode.enabled = self.mode

    def __exit__(self, *exc: object) -> None:
        grad_mode.enabled = self.prev.pop()

    def __call__(self, fn: _F) -> _F:
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with _ModeContext(mode):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class no_grad(_ModeContext):
    """Disable recording of operations (context manager or decorator)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(False)


class enable_grad(_ModeContext):
    """Enable recording of operations (context manager or decorator)."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(True)


class set_grad_enabled(_ModeContext):
    """Set grad mode to `mode`: at once when called, and as a context manager or decorator."""

    __slots__ = ()

    def __init__(self, mode: bool) -> None:
        super().__init__(bool(mode))
        self.prev.append(grad_mode.enabled)
        grad_mode.enabled = self.mode

    def __enter__(self) -> None:
        return None

    def __call__(self, fn: _F) -> _F:
        grad_mode.enabled = self.prev.pop()
        return super().__call__(fn)


def is_grad_enabled() -> bool:
    """Whether operations are recorded in this thread."""
    return grad_mode.enabled
