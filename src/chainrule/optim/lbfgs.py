"""L-BFGS with PyTorch's interface and iterations: `step(closure)` runs up to max_iter
quasi-Newton iterations on all parameters as one flat vector, with a fixed step or the strong
Wolfe line search (cubic interpolation, zoom), as PyTorch's algorithm does."""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from typing import Any

from .. import _namespace as ops
from .._tensor import Tensor, enable_grad, grad_mode, no_grad
from .optimizer import Optimizer, ParamsT, _as_pairs, _from_pairs

__all__ = ["LBFGS"]


def _cubic_interpolate(
    x1: float, f1: float, g1: float, x2: float, f2: float, g2: float, bounds: Any = None
) -> float:
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2, kept in
    `bounds` (default: between x1 and x2); their midpoint when the cubic has no minimum."""
    low, high = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1**2 - g1 * g2
    if d2_square < 0:
        return (low + high) / 2.0
    d2 = math.sqrt(d2_square)
    if x1 <= x2:
        at = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        at = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(at, low), high)


def _dot(a: Tensor, b: Tensor) -> float:
    return float(ops.sum(a * b))


def _strong_wolfe(
    evaluate: Callable[[float], tuple[float, Tensor]],
    t: float,
    d: Tensor,
    f: float,
    g: Tensor,
    gtd: float,
    c1: float = 1e-4,
    c2: float = 0.9,
    tolerance_change: float = 1e-9,
    max_ls: int = 25,
) -> tuple[float, Tensor, float, int]:
    """A step t along d that satisfies the strong Wolfe conditions (sufficient decrease c1,
    curvature c2): bracket it, then zoom in by cubic interpolation. Returns (loss, gradient,
    t, evaluations)."""
    d_norm = float(ops.max(ops.abs(d)))
    f_new, g_new = evaluate(t)
    evals = 1
    gtd_new = _dot(g_new, d)
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g, gtd
    done = False
    ls_iter = 0
    bracket: list[float] = []
    bracket_f: list[float] = []
    bracket_g: list[Tensor] = []
    bracket_gtd: list[float] = []
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new], [gtd_prev, gtd_new]
            break
        # Extrapolate: between 1.01 t and 10 t.
        low, high = t + 0.01 * (t - t_prev), t * 10
        t_prev, t = t, _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, (low, high))
        f_prev, g_prev, gtd_prev = f_new, g_new, gtd_new
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0.0, t], [f, f_new], [g, g_new]

    # Zoom: shrink the bracket until a point satisfies the conditions.
    insufficient = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(
            bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1]
        )
        # Too close to an end of the bracket: move away, unless the last try was already.
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insufficient or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = evaluate(t)
        evals += 1
        gtd_new = _dot(g_new, d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new, gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new, gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], evals


class LBFGS(Optimizer):
    """L-BFGS over all parameters as one vector (one parameter group): each `step(closure)`
    runs up to `max_iter` iterations (`max_eval` closure calls, default 1.25 max_iter), the
    direction from the last `history_size` curvature pairs, the step `lr` (the first
    iteration's scaled by 1 / |g|_1) or found by line_search_fn='strong_wolfe'; stops early
    when the gradient (tolerance_grad) or the change (tolerance_change) is small. A complex
    parameter is two real numbers per element in the flat vectors (its real pairs, PyTorch's
    view_as_real), as PyTorch's L-BFGS takes it."""

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1.0,
        max_iter: int = 20,
        max_eval: int | None = None,
        tolerance_grad: float = 1e-7,
        tolerance_change: float = 1e-9,
        history_size: int = 100,
        line_search_fn: str | None = None,
    ) -> None:
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if line_search_fn not in (None, "strong_wolfe"):
            raise RuntimeError("only 'strong_wolfe' is supported")
        defaults = dict(
            lr=lr, max_iter=max_iter, max_eval=max_iter * 5 // 4 if max_eval is None else max_eval,
            tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
            history_size=history_size, line_search_fn=line_search_fn,
        )  # fmt: skip
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params: list[Tensor] = self.param_groups[0]["params"]

    def _flat_grad(self) -> Tensor:
        """The parameters' gradients as one real vector (zeros for a missing one; a complex
        gradient's real pairs)."""
        parts = []
        for p in self._params:
            g = ops.zeros_like(p) if p.grad is None else p.grad
            parts.append(ops.reshape(_as_pairs(g) if p.dtype.kind == "c" else g, (-1,)))
        return ops.concat(parts)

    def _add(self, step: float, direction: Tensor) -> None:
        """Each parameter += step * its part of `direction` (a complex one's real pairs)."""
        offset = 0
        for p in self._params:
            if p.dtype.kind == "c":
                n = 2 * p.size
                d = ops.reshape(direction[offset : offset + n], (*p.shape, 2))
                p[...] = _from_pairs(_as_pairs(p) + step * d)
            else:
                n = p.size
                p.add_(ops.reshape(direction[offset : offset + n], p.shape), alpha=step)
            offset += n

    def _evaluate(
        self, closure: Callable[[], Any], start: list[Tensor], d: Tensor, t: float
    ) -> tuple[float, Tensor]:
        """The loss and gradient at start + t d; the parameters go back to start."""
        self._add(t, d)
        with enable_grad():
            loss = float(closure())
        grad = self._flat_grad()
        for p, value in zip(self._params, start):
            p.copy_(value)
        return loss, grad

    def step(self, closure: Callable[[], Any] | None = None) -> Any:  # type: ignore[override]
        """Up to max_iter L-BFGS iterations; `closure` recomputes the loss (with its
        backward) and returns it. Returns the loss of the first evaluation."""
        if closure is None:
            raise RuntimeError("LBFGS.step needs a closure that recomputes the loss")
        if grad_mode.extended and grad_mode.tracer is not None:
            # Its iterations and line search branch on the loss's and gradients' values:
            # chainrule.compile runs the function eagerly.
            grad_mode.tracer.unsupported("an LBFGS step (it branches on the loss's values)")
        with no_grad():
            return self._step(closure)

    def _step(self, closure: Callable[[], Any]) -> Any:
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        state = self.state.setdefault(self._params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            first_loss = closure()
        loss = float(first_loss)
        evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if float(ops.max(ops.abs(flat_grad))) <= tolerance_grad:
            return first_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_steps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_steps, ro = [], [], []
                h_diag = 1.0
            else:
                y = flat_grad - prev_grad
                s = d * t
                ys = _dot(y, s)
                if ys > 1e-10:  # keep the pair only where the curvature is positive
                    if len(old_dirs) == group["history_size"]:
                        old_dirs.pop(0)
                        old_steps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_steps.append(s)
                    ro.append(1.0 / ys)
                    h_diag = ys / _dot(y, y)
                # The two-loop recursion: d = -H g with H the L-BFGS inverse Hessian.
                al = [0.0] * len(old_dirs)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = _dot(old_steps[i], q) * ro[i]
                    q = q - al[i] * old_dirs[i]
                r = q * h_diag
                for i in range(len(old_dirs)):
                    be_i = _dot(old_dirs[i], r) * ro[i]
                    r = r + (al[i] - be_i) * old_steps[i]
                d = r
            prev_grad = ops.asarray(flat_grad, copy=True)
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / float(ops.sum(ops.abs(flat_grad)))) * lr
            else:
                t = lr
            gtd = _dot(flat_grad, d)
            if gtd > -tolerance_change:
                break
            spent = 0
            if group["line_search_fn"] is not None:
                start = [ops.asarray(p, copy=True) for p in self._params]
                loss, flat_grad, t, spent = _strong_wolfe(
                    functools.partial(self._evaluate, closure, start, d),
                    t, d, loss, flat_grad, gtd, max_ls=max_eval - evals,
                )  # fmt: skip
                self._add(t, d)
                converged = float(ops.max(ops.abs(flat_grad))) <= tolerance_grad
            else:
                self._add(t, d)
                converged = False
                if n_iter != max_iter:
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._flat_grad()
                    converged = float(ops.max(ops.abs(flat_grad))) <= tolerance_grad
                    spent = 1
            evals += spent
            state["func_evals"] += spent
            if n_iter == max_iter or evals >= max_eval or converged:
                break
            if float(ops.max(ops.abs(d * t))) <= tolerance_change:
                break
            if abs(loss - prev_loss) < tolerance_change:
                break
        state.update(
            d=d, t=t, old_dirs=old_dirs, old_stps=old_steps, ro=ro, H_diag=h_diag,
            prev_flat_grad=prev_grad, prev_loss=prev_loss,
        )  # fmt: skip
        return first_loss
