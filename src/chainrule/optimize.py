"""SciPy's optimizers with derivatives from chainrule: `minimize` gets the exact gradient (and,
for Newton-type methods, Hessian-vector products by grad of grad, or the Hessian), and
`least_squares` the exact Jacobian, over parameters given as a pytree: nested tuples, lists and
dicts of tensors, arrays and numbers. SciPy is an optional dependency (the `optimize` extra)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from . import _backend
from . import _namespace as ops
from ._tensor import Tensor, no_grad
from .autograd import grad
from .autograd.functional import hessian, jacobian

__all__ = ["minimize", "least_squares"]


def __dir__() -> list[str]:
    """The API only (dir() and editors' completion), not the names this module imports."""
    return sorted(__all__)


# Methods of scipy.optimize.minimize that use a gradient, Hessian-vector products, or only a
# full Hessian.
_GRADIENT = {
    "cg", "bfgs", "newton-cg", "l-bfgs-b", "tnc", "slsqp",
    "dogleg", "trust-ncg", "trust-krylov", "trust-exact", "trust-constr",
}  # fmt: skip
_HESSP = {"newton-cg", "trust-ncg", "trust-krylov", "trust-constr"}
_HESS = {"dogleg", "trust-exact"}


def _scipy_optimize():
    try:
        import scipy.optimize
    except ImportError as e:
        raise ImportError(
            "chainrule.optimize needs SciPy, which is not installed: "
            "pip install 'chainrule[optimize]' (or pip install scipy)"
        ) from e
    return scipy.optimize


# ----------------------------------------------------------------------------- pytrees
# A tree is flattened, without recursion, into its nodes in pre-order: ("dict", keys),
# ("list", n), ("tuple", n), ("none",) or ("leaf", shape, kind), kind being how a leaf is
# given back: "tensor", "array" (NumPy) or "number" (float).


class _Tree:
    """The structure of a pytree and its leaves as one float64 vector."""

    def __init__(self, tree: Any) -> None:
        nodes: list[tuple] = []
        leaves: list[np.ndarray] = []
        stack = [tree]
        while stack:
            node = stack.pop()
            if isinstance(node, dict):
                nodes.append(("dict", tuple(node)))
                stack.extend(reversed(list(node.values())))
            elif node.__class__ in (list, tuple):
                nodes.append((node.__class__.__name__, len(node)))
                stack.extend(reversed(node))
            elif node is None:
                nodes.append(("none",))
            else:
                if node.__class__ is Tensor:
                    kind, values = "tensor", node.detach().numpy()
                elif isinstance(node, (bool, int, float)):
                    kind, values = "number", node
                else:
                    kind, values = "array", node
                a = np.asarray(values, dtype=np.float64)
                nodes.append(("leaf", a.shape, kind))
                leaves.append(a.ravel())
        self.nodes = nodes
        self.sizes = [leaf.size for leaf in leaves]
        self.x0 = np.concatenate(leaves) if leaves else np.zeros(0)

    def split(self, flat: Tensor) -> list[Tensor]:
        """The leaves of the flat tensor, in their shapes."""
        shapes = [n[1] for n in self.nodes if n[0] == "leaf"]
        out, start = [], 0
        for shape, size in zip(shapes, self.sizes):
            out.append(ops.reshape(flat[start : start + size], shape))
            start += size
        return out

    def build(self, leaves: list[Any]) -> Any:
        """The tree with `leaves` in place of its leaves (in order)."""
        built: list[Any] = []
        i = len(leaves)
        for node in reversed(self.nodes):
            kind = node[0]
            if kind == "leaf":
                i -= 1
                built.append(leaves[i])
            elif kind == "none":
                built.append(None)
            else:
                n = len(node[1]) if kind == "dict" else node[1]
                children = [built.pop() for _ in range(n)]
                if kind == "dict":
                    built.append(dict(zip(node[1], children)))
                else:
                    built.append(list(children) if kind == "list" else tuple(children))
        return built[0]

    def result(self, flat: np.ndarray) -> Any:
        """The tree at the flat float64 vector `flat`, leaves of the kinds given."""
        kinds = [n for n in self.nodes if n[0] == "leaf"]
        leaves, start = [], 0
        for (_, shape, kind), size in zip(kinds, self.sizes):
            a = np.array(flat[start : start + size]).reshape(shape)
            start += size
            if kind == "tensor":
                leaves.append(_vector(a.ravel()).reshape(shape))
            elif kind == "number":
                leaves.append(float(a))
            else:
                leaves.append(a)
        return self.build(leaves)


class _Objective:
    """Evaluations of `fun(tree, *args)` at flat float64 vectors, with its derivatives; the
    gradient graph of the last point is kept for Hessian-vector products there."""

    def __init__(self, fun: Callable[..., Any], tree: _Tree, args: tuple) -> None:
        self.fun = fun
        self.tree = tree
        self.args = args
        self._point: tuple[bytes, Tensor, Tensor] | None = None

    def leaf(self, x: np.ndarray) -> Tensor:
        return _vector(x).requires_grad_(True)

    def value(self, flat: Tensor) -> Tensor:
        out = self.fun(self.tree.build(self.tree.split(flat)), *self.args)
        return out if out.__class__ is Tensor else ops.asarray(out)

    def scalar(self, flat: Tensor) -> Tensor:
        f = self.value(flat)
        if f.size != 1:
            raise ValueError(f"minimize: fun must return a scalar, got shape {f.shape}")
        return ops.reshape(f, ())

    def value_and_grad(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        flat = self.leaf(x)
        f = self.scalar(flat)
        (g,) = grad(f, flat, allow_unused=True, materialize_grads=True)
        return float(f.item()), _numpy(g)

    def hessp(self, x: np.ndarray, p: np.ndarray) -> np.ndarray:
        key = np.asarray(x, dtype=np.float64).tobytes()
        if self._point is None or self._point[0] != key:
            flat = self.leaf(x)
            (g,) = grad(self.scalar(flat), flat, create_graph=True, allow_unused=True)
            self._point = (key, flat, g)
        _, flat, g = self._point
        if g is None or g.grad_fn is None:  # fun is at most linear: H = 0
            return np.zeros_like(np.asarray(p, dtype=np.float64))
        (hv,) = grad(ops.sum(g * _vector(p)), flat, retain_graph=True, allow_unused=True)
        return np.zeros(len(p)) if hv is None else _numpy(hv)

    def hess(self, x: np.ndarray) -> np.ndarray:
        return _numpy(hessian(lambda flat: self.scalar(flat), self.leaf(x)))

    def residuals(self, x: np.ndarray) -> np.ndarray:
        with no_grad():
            return _numpy(ops.reshape(self.value(_vector(x)), (-1,)))

    def jacobian(self, x: np.ndarray) -> np.ndarray:
        """J[i, k] = d residual_i / d x_k: by rows (one backward pass per residual) when
        there are no more residuals than parameters, else by columns: with u a free vector,
        J^T u is linear in u, and its gradient with respect to u along e_k is column k (one
        backward pass per parameter, after one that records J^T u)."""
        flat = self.leaf(x)
        r = ops.reshape(self.value(flat), (-1,))
        if r.size <= flat.size:
            return _numpy(jacobian(lambda v: ops.reshape(self.value(v), (-1,)), flat))
        u = ops.zeros_like(r).requires_grad_(True)
        (jtu,) = grad(r, flat, u, create_graph=True, allow_unused=True, materialize_grads=True)
        columns = []
        for k in range(flat.size):
            e = _vector(np.eye(1, flat.size, k)[0])
            (col,) = grad(jtu, u, e, retain_graph=True, allow_unused=True)
            columns.append(np.zeros(r.size) if col is None else _numpy(col))
        return np.stack(columns, axis=1) if columns else np.zeros((r.size, 0))


def _vector(x: np.ndarray) -> Tensor:
    """A float64 vector as a tensor of the default array library."""
    return ops.asarray(_backend.default_namespace().asarray(np.asarray(x, dtype=np.float64)))


def _numpy(t: Tensor) -> np.ndarray:
    return np.asarray(t.detach().numpy(), dtype=np.float64)


def minimize(
    fun: Callable[..., Any],
    x0: Any,
    args: tuple = (),
    method: str | Callable[..., Any] | None = None,
    **kwargs: Any,
) -> Any:
    """Minimise the scalar `fun(params, *args)` from `x0` with `scipy.optimize.minimize`.

    `x0` is a pytree (nested tuples, lists and dicts) of tensors, arrays and numbers; `fun`
    receives the same structure with float64 tensors and returns a scalar tensor. Without a
    `method`, SciPy's default: SLSQP with constraints, L-BFGS-B with bounds, else BFGS. chainrule
    supplies `jac` for the methods that use a gradient, `hessp` (Hessian-vector products, by
    grad of grad) for Newton-CG, trust-ncg, trust-krylov and trust-constr, and `hess` for
    dogleg and trust-exact. Other keyword arguments (`tol`, `bounds`, `constraints`,
    `options`, `callback`) go to SciPy as they are: bounds, constraints and callbacks see the
    flat vector of all leaves, in pre-order. Returns SciPy's OptimizeResult with `x` as a
    pytree like `x0` (tensors stay tensors, arrays become NumPy float64 arrays, numbers
    floats) and `x_flat` the flat vector."""
    so = _scipy_optimize()
    tree = _Tree(x0)
    objective = _Objective(fun, tree, tuple(args))
    if method is None:  # SciPy's default for the problem (BFGS ignores bounds, constraints)
        if kwargs.get("constraints"):
            method = "SLSQP"
        elif kwargs.get("bounds") is not None:
            method = "L-BFGS-B"
        else:
            method = "BFGS"
    name = method.lower() if isinstance(method, str) else ""
    if name in _GRADIENT:
        kwargs.setdefault("jac", True)
        f = objective.value_and_grad
    else:
        f = lambda x: objective.value_and_grad(x)[0]  # noqa: E731
    if name in _HESSP and "hess" not in kwargs:
        kwargs.setdefault("hessp", objective.hessp)
    if name in _HESS:
        kwargs.setdefault("hess", objective.hess)
    res = so.minimize(f, tree.x0, method=method, **kwargs)
    res.x_flat = res.x
    res.x = tree.result(res.x)
    return res


def least_squares(
    fun: Callable[..., Any],
    x0: Any,
    args: tuple = (),
    **kwargs: Any,
) -> Any:
    """Minimise half the sum of squares of the residuals `fun(params, *args)` (a tensor of
    any shape) with `scipy.optimize.least_squares`, given the exact Jacobian from chainrule.
    `x0` is a pytree as for `minimize`; `bounds` and other keyword arguments go to SciPy as
    they are (bounds for the flat vector). Returns SciPy's OptimizeResult with `x` as a pytree
    like `x0` and `x_flat` the flat vector."""
    so = _scipy_optimize()
    tree = _Tree(x0)
    objective = _Objective(fun, tree, tuple(args))
    kwargs.setdefault("jac", objective.jacobian)
    res = so.least_squares(objective.residuals, tree.x0, **kwargs)
    res.x_flat = res.x
    res.x = tree.result(res.x)
    return res
