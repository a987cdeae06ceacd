"""HIPS autograd's transforms (grad, elementwise_grad, value_and_grad, jacobian, hessian) over
NumPy arrays and Python numbers: the argument differentiated is a tensor during the call,
results come back as NumPy values, and transforms nest (grad(grad(f))). With these and
`import numpy as np`, a HIPS program runs as written (see docs/from-autograd.md)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._namespace import asarray, astype, float64, sum, zeros_like
from .._tensor import Tensor
from ..autograd import grad as _grad
from ..autograd.functional import hessian as _hessian
from ..autograd.functional import jacobian as _jacobian

__all__ = ["grad", "elementwise_grad", "value_and_grad", "jacobian", "hessian"]


def _variable(value: Any) -> tuple[Tensor, bool]:
    """The argument as a tensor to differentiate with respect to, and whether it came as a
    tensor (from an enclosing transform, whose graph the result must keep)."""
    if value.__class__ is Tensor:
        return (value if value.requires_grad else value.detach().requires_grad_()), True
    t = asarray(value)
    if t.dtype.kind not in "fc":
        t = astype(t, float64)
    return t.detach().requires_grad_(), False


def _result(t: Tensor, nested: bool, like: Any) -> Any:
    """A tensor inside an enclosing transform; else NumPy's value (a float for a number)."""
    if nested:
        return t
    values = t.detach().numpy()
    return float(values) if isinstance(like, (int, float)) else values


def _value(t: Any, nested: bool) -> Any:
    if nested or t.__class__ is not Tensor:
        return t
    values = t.detach().numpy()
    return float(values) if values.ndim == 0 else values


def _gradient_of(fun: Callable, argnum: int, elementwise: bool, args: tuple, kwargs: dict):
    args = list(args)
    x, nested = _variable(args[argnum])
    like = args[argnum]
    args[argnum] = x
    out = asarray(fun(*args, **kwargs))
    if elementwise:
        target = sum(out)
    elif out.ndim != 0 and out.size != 1:
        raise TypeError(
            "grad only applies to real scalar-output functions; try jacobian or elementwise_grad"
        )
    else:
        target = out
    g = None
    if target.requires_grad:  # else fun does not depend on x: a gradient of zeros, as HIPS
        (g,) = _grad(target, x, create_graph=nested, allow_unused=True)
    if g is None:
        g = zeros_like(x)
    return _value(out, nested), _result(g, nested, like)


def value_and_grad(fun: Callable, argnum: int = 0) -> Callable:
    """A function returning (fun's value, its gradient with respect to argument `argnum`)."""

    def value_and_gradient(*args: Any, **kwargs: Any) -> tuple:
        return _gradient_of(fun, argnum, False, args, kwargs)

    return value_and_gradient


def grad(fun: Callable, argnum: int = 0) -> Callable:
    """The gradient of scalar-valued fun with respect to argument `argnum`, of its shape."""

    def gradient(*args: Any, **kwargs: Any) -> Any:
        return _gradient_of(fun, argnum, False, args, kwargs)[1]

    return gradient


def elementwise_grad(fun: Callable, argnum: int = 0) -> Callable:
    """The gradient of the sum of fun's outputs: for an elementwise fun, each output's
    derivative with respect to its own input."""

    def gradient(*args: Any, **kwargs: Any) -> Any:
        return _gradient_of(fun, argnum, True, args, kwargs)[1]

    return gradient


def _matrix(transform: Callable, fun: Callable, argnum: int) -> Callable:
    def derivative(*args: Any, **kwargs: Any) -> Any:
        args = list(args)
        x, nested = _variable(args[argnum])
        like = args[argnum]

        def of_x(t: Tensor) -> Tensor:
            return asarray(fun(*args[:argnum], t, *args[argnum + 1 :], **kwargs))

        return _result(transform(of_x, x, create_graph=nested), nested, like)

    return derivative


def jacobian(fun: Callable, argnum: int = 0) -> Callable:
    """The Jacobian of fun with respect to argument `argnum`: shape output + input."""
    return _matrix(_jacobian, fun, argnum)


def hessian(fun: Callable, argnum: int = 0) -> Callable:
    """The Hessian of scalar-valued fun with respect to argument `argnum`."""
    return _matrix(_hessian, fun, argnum)
