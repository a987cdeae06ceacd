"""Thread-local autograd state: grad mode, the features that change how operations are
recorded (anomaly mode, forward-mode levels, ...), and the context managers. An operation
reads `grad_mode.extended` once: while it is truthy (a feature is on) it runs the features'
parts."""

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
    "inference_mode",
    "is_inference_mode_enabled",
]


class _GradMode(threading.local):
    enabled = True
    # A feature of FEATURES is on: operations run the features' parts. True, or the tracer
    # while chainrule.compile's trace is the only feature on (the one-read dispatch of the
    # operations' fast paths to it: the trace's cost, benchmarks/compile_trace.py W1, W3, W5).
    extended: Any = False
    anomaly = False  # detect_anomaly: nodes remember where they were created
    anomaly_check_nan = True  # detect_anomaly(check_nan=): a NaN gradient raises
    inference = False  # inference_mode: results are inference tensors
    saved_hooks: tuple = ()  # saved_tensors_hooks: (pack, unpack) pairs, innermost last
    saved_hooks_refused: str | None = None  # disable_saved_tensors_hooks' message
    packing = None  # the node whose saved values the saved_tensors_hooks are packing now
    tracer = None  # chainrule.compile's trace in progress: it follows every operation
    forward: tuple = ()  # forward mode: the dual levels operations see, innermost last
    vmap: tuple = ()  # vmap: (level, batch size, randomness) of the active levels, innermost last
    profiler = None  # autograd.profiler's profile in progress: it times every operation
    # func.jacfwd's batched passes: id -> the state of each tensor written in place before
    # its first write there (see _inplace.note_write); None elsewhere.
    writes: dict | None = None
    # The one dual level while forward mode, at one level, is the only feature on (else 0):
    # operations on dual tensors then take forward mode's lean path.
    dual = 0
    # The tracer while chainrule.compile's trace is the only feature on (else None):
    # operations hand their results straight to it.
    lone_tracer = None
    # `enabled` and `extended` in the one read of the one- and two-input fast paths: None
    # while grad mode is on and no feature is, False while grad mode is off and no feature
    # is on, else `extended` (the fast path then reads `enabled` too). A read of this
    # thread-local object costs about 550 instructions: one less per operation on W1, W3
    # and W5 (benchmarks/instructions.py). Kept by _set_enabled and set_feature.
    route: Any = None


grad_mode = _GradMode()

# The attributes of grad_mode that make operations run the features' parts when truthy.
FEATURES = ("anomaly", "inference", "saved_hooks", "tracer", "forward", "vmap", "profiler")


def set_feature(name: str, value: Any) -> None:
    """Set a feature of FEATURES in this thread, and whether operations take the extended
    path."""
    setattr(grad_mode, name, value)
    on = [f for f in FEATURES if getattr(grad_mode, f)]
    grad_mode.extended = grad_mode.tracer if on == ["tracer"] else bool(on)
    levels = grad_mode.forward
    grad_mode.dual = levels[0] if on == ["forward"] and len(levels) == 1 else 0
    grad_mode.lone_tracer = grad_mode.tracer if on == ["tracer"] else None
    _set_route()


def _set_enabled(mode: bool) -> None:
    """Set grad mode in this thread (and the fast paths' `route`)."""
    grad_mode.enabled = mode
    _set_route()


def _set_route() -> None:
    """`route` from `enabled` and `extended`."""
    extended = grad_mode.extended
    grad_mode.route = extended if extended else None if grad_mode.enabled else False


class _ModeContext:
    """Context manager and decorator that sets grad mode to `mode` for its duration."""

    __slots__ = ("mode", "prev")

    def __init__(self, mode: bool) -> None:
        self.mode = mode
        self.prev: list[bool] = []

    def __enter__(self) -> None:
        self.prev.append(grad_mode.enabled)
        _set_enabled(self.mode)

    def __exit__(self, *exc: object) -> None:
        _set_enabled(self.prev.pop())

    def __call__(self, fn: _F) -> _F:
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with _ModeContext(mode):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


class no_grad(_ModeContext):
    """Disable recording of operations (context manager or decorator): results computed
    inside need no grad and have no grad_fn. Thread-local, as PyTorch's.

    >>> import chainrule as cr
    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> with cr.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False"""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(False)


class enable_grad(_ModeContext):
    """Enable recording of operations (context manager or decorator), inside `no_grad`.

    >>> import chainrule as cr
    >>> x = cr.tensor([1.0, 2.0], requires_grad=True)
    >>> with cr.no_grad(), cr.enable_grad():
    ...     y = x * 2
    >>> y.requires_grad
    True"""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(True)


class set_grad_enabled(_ModeContext):
    """Set grad mode to `mode` (a bool): at once when called, and as a context manager or
    decorator (which restores the previous mode on exit).

    >>> import chainrule as cr
    >>> with cr.set_grad_enabled(False):
    ...     print(cr.is_grad_enabled())
    False"""

    __slots__ = ()

    def __init__(self, mode: bool) -> None:
        super().__init__(bool(mode))
        self.prev.append(grad_mode.enabled)
        _set_enabled(self.mode)

    def __enter__(self) -> None:
        return None

    def __call__(self, fn: _F) -> _F:
        _set_enabled(self.prev.pop())
        return super().__call__(fn)


def is_grad_enabled() -> bool:
    """Whether operations are recorded in this thread."""
    return grad_mode.enabled


class inference_mode:
    """Inference mode (context manager or decorator): nothing is recorded, as under no_grad,
    and the tensors made are inference tensors, which can never be saved for backward or
    require grad, and are written in place only in inference mode. `inference_mode(False)`
    turns it off inside.

    :param mode: True (the default) turns inference mode on, False off.

    >>> import chainrule as cr
    >>> with cr.inference_mode():
    ...     y = cr.ones(2) * 2
    >>> y.is_inference()
    True"""

    __slots__ = ("mode", "prev")

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)
        self.prev: list[tuple[bool, bool]] = []

    def __enter__(self) -> None:
        self.prev.append((grad_mode.enabled, grad_mode.inference))
        if self.mode:
            _set_enabled(False)
        elif grad_mode.inference:
            _set_enabled(True)
        set_feature("inference", self.mode)

    def __exit__(self, *exc: object) -> None:
        enabled, inference = self.prev.pop()
        _set_enabled(enabled)
        set_feature("inference", inference)

    def __call__(self, fn: _F) -> _F:
        mode = self.mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(mode):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


def is_inference_mode_enabled() -> bool:
    """Whether inference_mode is on in this thread."""
    return grad_mode.inference
