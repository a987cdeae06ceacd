"""Finite-difference checks of gradients, first order (gradcheck) and second (gradgradcheck):
the oracle for every rule, in reverse mode and (check_forward_ad) forward mode. Jacobians are
compared in float64, element by element. A complex value counts as its real and imaginary
parts (as PyTorch's gradcheck): a complex input is moved along each separately, a complex
output's parts are two real outputs. PyTorch's further checks are options: reentrant backward
(nondet_tol), undefined output gradients, batched gradients (vmap), and fast mode (random
projections u^T J v instead of whole Jacobians)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import _namespace
from .._tensor import Tensor, as_tensor
from . import forward_ad
from ._backward import grad
from .function import Function


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


def _seed(o: Tensor, v: np.ndarray) -> Tensor:
    """The grad_output whose gradient is v^T J for v over o's real numbers (see
    _analytical's convention)."""
    return _set(o, v[: o.size] + 1j * v[o.size :] if _is_complex(o) else v)


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
    rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
    check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
    check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
    check_forward_ad: bool = False, check_backward_ad: bool = True, fast_mode: bool = False,
    masked: bool | None = None,
) -> bool:  # fmt: skip
    """Check the gradients of `fn` at `inputs` (a tensor or a tuple; those that require grad
    are checked) against central finite differences, in float64: by backward passes, and
    with check_forward_ad by forward mode (JVPs). Returns True, or raises GradcheckError
    naming the worst element, its index and both values (with raise_exception=False:
    returns False).

    As PyTorch's: backward must be reentrant (a backward pass run twice gives the same
    gradients to `nondet_tol`; chainrule runs each output's first pass twice);
    `check_undefined_grad`: with the outputs' gradients undefined, all of them or one at a
    time, backward runs and gives zeros or nothing; `check_batched_grad`: gradients for a
    batch of grad_outputs at once (is_grads_batched, vmap) equal those of a loop;
    `fast_mode`: instead of whole Jacobians, compare v^T J u for random u and v (one
    backward pass per output, one central difference per input). Gradients always have
    their input's dtype in chainrule (check_grad_dtypes is always on)."""
    if masked:
        raise NotImplementedError(
            "gradcheck(masked=True) checks sparse and masked tensors; chainrule has none"
        )
    if check_batched_forward_grad:
        raise NotImplementedError(
            "gradcheck(check_batched_forward_grad=True) is not implemented: check forward "
            "mode under vmap with chainrule.func.jacfwd against jvp instead"
        )
    inputs = _to_float64(_tuple(inputs))
    wrt = [k for k, x in enumerate(inputs) if x.__class__ is Tensor and x.requires_grad]
    if not wrt:
        raise ValueError("gradcheck: no input requires grad")
    try:
        if check_backward_ad:
            _check_reentrant(fn, inputs, wrt, nondet_tol)
            if check_undefined_grad:
                _check_undefined_grad(fn, inputs, wrt)
            if check_batched_grad:
                _check_batched_grad(fn, inputs, wrt)
        if fast_mode:
            _check_fast(fn, inputs, wrt, eps, atol, rtol, check_backward_ad, check_forward_ad)
            return True
    except GradcheckError:
        if raise_exception:
            raise
        return False
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


def _check_reentrant(fn, inputs, wrt, nondet_tol: float) -> None:
    """Each output's first backward pass, run twice on one graph, gives the same gradients
    (to nondet_tol)."""

    xs = [inputs[k] for k in wrt]
    for o in _outputs(fn, inputs):
        if o.dtype.kind not in "fc" or not o.requires_grad or not o.size:
            continue
        seed = _set(o, _unit(o, 0))
        first, second = (grad(o, xs, seed, retain_graph=True, allow_unused=True) for _ in range(2))
        for a, b in zip(first, second):
            if (a is None) != (b is None) or (
                a is not None and np.max(np.abs(_parts(a) - _parts(b)), initial=0) > nondet_tol
            ):
                raise GradcheckError(
                    "Backward is not reentrant, i.e., running backward with same input and "
                    "grad_output multiple times gives different values, although analytical "
                    "gradient matches numerical gradient. The tolerance for nondeterminism "
                    f"was {nondet_tol}."
                )


class UndefinedGrad(Function):
    """An identity whose backward gives no gradient: what follows it gets none (PyTorch's
    undefined gradient)."""

    @staticmethod
    def forward(ctx: Any, x: Tensor) -> Tensor:
        return x

    @staticmethod
    def backward(ctx: Any, g: Tensor) -> None:
        return None


def _check_undefined_grad(fn, inputs, wrt) -> None:
    """Backward runs when the outputs' gradients are undefined (all of them, then each one
    alone, the others zero), and gives every input zeros or nothing."""

    xs = [inputs[k] for k in wrt]
    n = len([o for o in _outputs(fn, inputs) if o.requires_grad])
    cases = [None] + (list(range(n)) if n > 1 else [])
    for undefined in cases:
        outs = [o for o in _outputs(fn, inputs) if o.requires_grad]
        outs = [
            UndefinedGrad.apply(o) if undefined is None or i == undefined else o
            for i, o in enumerate(outs)
        ]
        # A Function's complex output carries no gradient: undefined as well.
        outs = [o for o in outs if o.requires_grad]
        if not outs:
            continue
        try:
            gs = grad(outs, xs, [_namespace.zeros_like(o) for o in outs], allow_unused=True)
        except (RuntimeError, TypeError, AttributeError) as e:
            raise GradcheckError(
                "Expected backward function to handle undefined output grads: with the "
                f"gradient of {'every output' if undefined is None else f'output {undefined}'}"
                f" undefined, backward raised {type(e).__name__}: {e}"
            ) from e
        if any(g is not None and np.any(_parts(g) != 0) for g in gs):
            raise GradcheckError(
                "Expected all input grads to be undefined or zero when all output grads are "
                "undefined or zero."
            )


def _check_batched_grad(fn, inputs, wrt) -> None:
    """For each output, the gradients for a batch of two random grad_outputs, computed at
    once (is_grads_batched: one backward walk under vmap), equal those of a loop."""

    xs = [inputs[k] for k in wrt]
    rng = np.random.default_rng(0)
    for i, o in enumerate(_outputs(fn, inputs)):
        if o.dtype.kind not in "fc" or not o.requires_grad:
            continue
        vs = [_set(o, _random(rng, o)) for _ in range(2)]
        expected = [grad(o, xs, v, retain_graph=True, allow_unused=True) for v in vs]
        stacked = _namespace.stack(vs)
        try:
            found = grad(
                o, xs, stacked, retain_graph=True, allow_unused=True, is_grads_batched=True
            )
        except (RuntimeError, TypeError, ValueError) as e:
            raise GradcheckError(f"While computing batched gradients, got: {e}") from e
        for col, (x, g) in enumerate(zip(xs, found)):
            rows = [np.zeros(x.shape) if e[col] is None else _numpy(e[col]) for e in expected]
            got = np.zeros((2, *x.shape)) if g is None else _numpy(g)
            if not np.allclose(got, np.stack(rows)):
                raise GradcheckError(
                    f"For output {i} and input {wrt[col]}: batched grad is not consistent "
                    "with the values computed with a for-loop"
                )


def _check_fast(fn, inputs, wrt, eps, atol, rtol, backward: bool, forward: bool) -> None:
    """Fast mode: for random u over each input and v over each output (real numbers), v^T J u
    by one backward pass per output (and by forward mode, J u per input) against v^T of J u
    by central differences along u."""

    rng = np.random.default_rng(0)
    us = [rng.standard_normal(_width(inputs[k])) for k in wrt]
    outs = _outputs(fn, inputs)
    vs = [rng.standard_normal(_width(o)) for o in outs]
    numeric = []  # per input: J u (per output, as real numbers), by central differences
    for k, u in zip(wrt, us):
        x = inputs[k]
        direction = u[: x.size] + 1j * u[x.size :] if _is_complex(x) else u
        sides = []
        for step in (eps, -eps):
            args = list(inputs)
            moved = _numpy(x).ravel() + step * direction
            args[k] = _set(x, moved).requires_grad_(x.requires_grad)
            sides.append([_parts(o) for o in _outputs(fn, args)])
        numeric.append([(p - m) / (2 * eps) for p, m in zip(*sides)])
    analytic = {}
    if backward:
        xs = [inputs[k] for k in wrt]
        vjps = {}
        for i, (o, v) in enumerate(zip(outs, vs)):
            if o.dtype.kind in "fc" and o.requires_grad:
                gs = grad(o, xs, _seed(o, v), retain_graph=True, allow_unused=True)
                vjps[i] = gs
        analytic["analytical gradient"] = [
            [
                0.0 if i not in vjps or vjps[i][col] is None else _parts(vjps[i][col]) @ u
                for col, u in enumerate(us)
            ]
            for i in range(len(outs))
        ]
    if forward:
        jvps = []
        for k, u in zip(wrt, us):
            x = inputs[k]
            with forward_ad.dual_level():
                args = list(inputs)
                args[k] = forward_ad.make_dual(x, _seed(x, u))
                ts = [forward_ad.unpack_dual(o).tangent for o in _outputs(fn, args)]
            jvps.append([None if t is None else _parts(t) for t in ts])
        analytic["forward-mode derivative"] = [
            [0.0 if col[i] is None else v @ col[i] for col in jvps] for i, v in enumerate(vs)
        ]
    for mode, table in analytic.items():
        for i, v in enumerate(vs):
            for col, k in enumerate(wrt):
                a, n = table[i][col], v @ numeric[col][i]
                if not abs(a - n) <= atol + rtol * abs(n):
                    raise GradcheckError(
                        f"Jacobian mismatch for output {i} with respect to input {k} (fast "
                        f"mode: v^T J u for random u and v): the {mode} gives {a!r} but "
                        f"finite differences give {n!r} (atol={atol}, rtol={rtol}); run "
                        "with fast_mode=False to find the element"
                    )


def _random(rng, o: Tensor) -> np.ndarray:
    v = rng.standard_normal(o.shape)
    return v + 1j * rng.standard_normal(o.shape) if _is_complex(o) else v


def gradgradcheck(
    fn: Callable[..., Any], inputs: Any, grad_outputs: Sequence[Tensor] | None = None, *,
    eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3, seed: int = 0,
    gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
    nondet_tol: float = 0.0, check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
    check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
    check_rev_over_rev: bool = True, fast_mode: bool = False, masked: bool = False,
) -> bool:  # fmt: skip
    """Check second derivatives: gradcheck of the vector-Jacobian product of `fn` (with random
    or given `grad_outputs`, themselves differentiated) with respect to inputs and vectors, by
    backward passes (check_rev_over_rev) and by forward mode (check_fwd_over_rev). The
    options are gradcheck's, applied to that check; gen_non_contig_grad_outputs changes
    nothing (chainrule's tensors have no strides to make non-contiguous)."""
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
        raise_exception=raise_exception, nondet_tol=nondet_tol,
        check_undefined_grad=check_undefined_grad, check_grad_dtypes=check_grad_dtypes,
        check_batched_grad=check_batched_grad, check_forward_ad=check_fwd_over_rev,
        check_backward_ad=check_rev_over_rev, fast_mode=fast_mode, masked=masked,
    )  # fmt: skip
