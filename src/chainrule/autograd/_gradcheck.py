"""Finite-difference checks of gradients, first order (gradcheck) and second (gradgradcheck):
the oracle for every rule, in reverse mode and (check_forward_ad) forward mode. Jacobians are
compared in float64, element by element. A complex value counts as its real and imaginary
parts (as PyTorch's gradcheck): a complex input is moved along each separately, a complex
output's parts are two real outputs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import _namespace
from .._tensor import Tensor, as_tensor
from . import forward_ad
from ._backward import grad


class GradcheckError(RuntimeError):
    """An analytic gradient disagrees with finite differences."""


def _tuple(x) -> tuple:
    if isinstance(x, (list, tuple)):
        return tuple(x)
    return (x,)


def _to_float64(inputs) -> tuple:
    """Copies of the inputs in float64 (complex128); those that required grad still do."""
    out = []
    for x in inputs:
        if x.__class__ is Tensor and x.dtype.kind in "fc":
            wide = _namespace.float64 if x.dtype.kind == "f" else _namespace.complex128
            y = _namespace.astype(x.detach(), wide)
            out.append(y.requires_grad_(x.requires_grad))
        else:
            out.append(x)
    return tuple(out)


def _outputs(fn, inputs) -> list[Tensor]:
    return [as_tensor(o) for o in _tuple(fn(*inputs))]


def _is_complex(t) -> bool:
    return t.dtype.kind == "c"


def _numpy(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().numpy(), dtype=np.complex128 if _is_complex(t) else np.float64)


def _parts(t: Tensor) -> np.ndarray:
    """t's values as real numbers: a complex t's real parts, then its imaginary parts."""
    a = _numpy(t).ravel()
    return np.concatenate([a.real, a.imag]) if _is_complex(t) else a


def _width(t: Tensor) -> int:
    """How many real numbers t holds."""
    return 2 * t.size if _is_complex(t) else t.size


def _set(x: Tensor, values: np.ndarray) -> Tensor:
    """A leaf like x holding `values`."""
    return Tensor(x._xp.asarray(values.reshape(x.shape)), x._xp, None)


def _unit(x: Tensor, j: int) -> np.ndarray:
    """The j-th real direction of x's values (for a complex x: j < size moves a real part,
    the others an imaginary part)."""
    seed = np.zeros(x.size, dtype=np.complex128 if _is_complex(x) else np.float64)
    if j < x.size:
        seed[j] = 1.0
    else:
        seed[j - x.size] = 1j
    return seed


def _numerical(fn, inputs, wrt, eps: float) -> list[list[np.ndarray]]:
    """J[i][k]: the Jacobian of output i by input wrt[k] (real numbers by real numbers),
    by central differences."""
    base = _outputs(fn, inputs)
    jac = [[np.zeros((_width(o), _width(inputs[k]))) for k in wrt] for o in base]
    for col, k in enumerate(wrt):
        x = inputs[k]
        flat = _numpy(x).ravel()
        for j in range(_width(x)):
            values = []
            for step in (eps, -eps):
                moved = flat + step * _unit(x, j)
                args = list(inputs)
                args[k] = _set(x, moved).requires_grad_(x.requires_grad)
                values.append([_parts(o) for o in _outputs(fn, args)])
            for i, (plus, minus) in enumerate(zip(*values)):
                jac[i][col][:, j] = (plus - minus) / (2 * eps)
    return jac


def _analytical(fn, inputs, wrt) -> list[list[np.ndarray]]:
    """J[i][k] by one backward pass per real number of each output. With PyTorch's
    convention, the gradient seeded with 1 (or i) at a complex output's element is that of
    its real (imaginary) part; a complex input's gradient holds d/dx + i d/dy."""
    outs = _outputs(fn, inputs)
    xs = [inputs[k] for k in wrt]
    jac = [[np.zeros((_width(o), _width(inputs[k]))) for k in wrt] for o in outs]
    for i, o in enumerate(outs):
        if o.dtype.kind not in "fc" or not o.requires_grad:
            continue
        for r in range(_width(o)):
            gs = grad(o, xs, _set(o, _unit(o, r)), retain_graph=True, allow_unused=True)
            for col, (x, g) in enumerate(zip(xs, gs)):
                if g is None:
                    continue
                if g.shape != x.shape or g.dtype != x.dtype:
                    raise GradcheckError(
                        f"the gradient for input {wrt[col]} has shape {g.shape} and dtype "
                        f"{g.dtype}, but the input has shape {x.shape} and dtype {x.dtype}"
                    )
                jac[i][col][r] = _parts(g)
    return jac


def _forward(fn: Callable[..., Any], inputs: tuple, wrt: list[int]) -> list[list[np.ndarray]]:
    """J[i][k] by forward mode: one JVP per real direction of each input."""
    jac = None
    for col, k in enumerate(wrt):
        x = inputs[k]
        for j in range(_width(x)):
            with forward_ad.dual_level():
                args = list(inputs)
                args[k] = forward_ad.make_dual(x, _set(x, _unit(x, j)))
                outs = _outputs(fn, args)
                if jac is None:
                    jac = [[np.zeros((_width(o), _width(inputs[q]))) for q in wrt] for o in outs]
                for i, o in enumerate(outs):
                    t = forward_ad.unpack_dual(o).tangent
                    if t is not None:
                        if t.shape != o.shape or t.dtype != o.dtype:
                            raise GradcheckError(
                                f"the tangent of output {i} has shape {t.shape} and dtype "
                                f"{t.dtype}, but the output has shape {o.shape} and dtype "
                                f"{o.dtype}"
                            )
                        jac[i][col][:, j] = _parts(t)
    return jac if jac is not None else []


def _worst(analytic: list, numeric: list, wrt: list[int], atol: float, rtol: float) -> Any:
    """The element where analytic and numeric Jacobians differ most beyond the tolerance."""
    worst = None
    for i, (arow, nrow) in enumerate(zip(analytic, numeric)):
        for col, (a, n) in enumerate(zip(arow, nrow)):
            excess = np.abs(a - n) - (atol + rtol * np.abs(n))
            if excess.size and (np.nanmax(excess) > 0 or np.isnan(a - n).any()):
                excess = np.where(np.isnan(a - n), np.inf, excess)
                r, c = np.unravel_index(np.argmax(excess), excess.shape)
                if worst is None or excess[r, c] > worst[0]:
                    worst = (excess[r, c], i, wrt[col], r, c, a[r, c], n[r, c])
    return worst


def gradcheck(
    fn: Callable[..., Any], inputs: Any, *, eps: float = 1e-6, atol: float = 1e-5,
    rtol: float = 1e-3, raise_exception: bool = True, check_forward_ad: bool = False,
    check_backward_ad: bool = True,
) -> bool:  # fmt: skip
    """Check the gradients of `fn` at `inputs` (a tensor or a tuple; those that require grad
    are checked) against central finite differences, in float64: by backward passes, and
    with check_forward_ad by forward mode (JVPs). Returns True, or raises GradcheckError
    naming the worst element, its index and both values."""
    inputs = _to_float64(_tuple(inputs))
    wrt = [k for k, x in enumerate(inputs) if x.__class__ is Tensor and x.requires_grad]
    if not wrt:
        raise ValueError("gradcheck: no input requires grad")
    numeric = _numerical(fn, inputs, wrt, eps)
    for mode, check, jacobian in (
        ("analytical gradient", check_backward_ad, _analytical),
        ("forward-mode derivative", check_forward_ad, _forward),
    ):
        if not check:
            continue
        worst = _worst(jacobian(fn, inputs, wrt), numeric, wrt, atol, rtol)
        if worst is None:
            continue
        if not raise_exception:
            return False
        _, i, k, r, c, a, n = worst
        raise GradcheckError(
            f"Jacobian mismatch for output {i} with respect to input {k}: at (output element "
            f"{r}, input element {c}) the {mode} is {a!r} but finite differences give {n!r} "
            f"(atol={atol}, rtol={rtol})"
        )
    return True


def _random(rng, o: Tensor) -> np.ndarray:
    v = rng.standard_normal(o.shape)
    return v + 1j * rng.standard_normal(o.shape) if _is_complex(o) else v


def gradgradcheck(
    fn: Callable[..., Any], inputs: Any, grad_outputs: Sequence[Tensor] | None = None, *,
    eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3, seed: int = 0,
    raise_exception: bool = True, check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True,
) -> bool:  # fmt: skip
    """Check second derivatives: gradcheck of the vector-Jacobian product of `fn` (with random
    or given `grad_outputs`, themselves differentiated) with respect to inputs and vectors, by
    backward passes (check_rev_over_rev) and by forward mode (check_fwd_over_rev)."""
    inputs = _to_float64(_tuple(inputs))
    n = len(inputs)
    wrt = [k for k, x in enumerate(inputs) if x.__class__ is Tensor and x.requires_grad]
    outs = _outputs(fn, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(seed)
        grad_outputs = tuple(
            _set(o, _random(rng, o)).requires_grad_(True) for o in outs if o.requires_grad
        )
    else:
        grad_outputs = _to_float64(_tuple(grad_outputs))

    def first_derivative(*args):
        xs, vs = args[:n], args[n:]
        os = [o for o in _outputs(fn, xs) if o.requires_grad]
        gs = grad(os, [xs[k] for k in wrt], vs, create_graph=True, allow_unused=True)
        return tuple(_namespace.zeros_like(xs[k]) if g is None else g for k, g in zip(wrt, gs))

    return gradcheck(
        first_derivative, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
        raise_exception=raise_exception, check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev,
    )  # fmt: skip
