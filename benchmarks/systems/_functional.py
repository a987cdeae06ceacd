"""Workload steps for functional systems: ``value_and_grad`` of the function.

A backend namespace supplies ``ops``, ``asarray``, ``value_and_grad(f)`` and
``grad(f)`` (both with respect to the first argument), ``compile(f, *args)``
(returns the callable to time: ``f`` itself, or a compiled version) and
``block(out)`` (waits for asynchronous results).
"""

import numpy as np

import workloads as wl


def build(work, data, be) -> dict:
    ops, arr = be.ops, be.asarray
    if work.kind == "chain":
        n_ops = data["n_ops"]
        args = (arr(data["x"]), arr(data["c"]))

        def loss(x, c):
            return wl.chain(x, c, n_ops, ops)

    elif work.kind == "fanout":
        a, b = data["a"], data["b"]
        args = (arr(data["x"]),)

        def loss(x):
            return wl.fanout(x, a, b, ops)

    elif work.kind == "mlp":
        rows = np.arange(data["X"].shape[0])
        args = ([arr(p) for p in data["params"]], arr(data["X"]), arr(rows), arr(data["labels"]))

        def loss(params, X, rows, labels):
            return wl.mlp_loss(X, rows, labels, params, ops)

    elif work.kind == "hvp":
        args = (arr(data["x"]), arr(data["W"]), arr(data["v"]))
        grad_f = be.grad(lambda x, W, v: wl.hvp_objective(x, W, ops))
        grad_fn = be.compile(grad_f, *args)
        hvp_fn = be.compile(be.grad(lambda x, W, v: ops.sum(grad_f(x, W, v) * v)), *args)
        return {
            "grad": lambda: (None, [be.block(grad_fn(*args))]),
            "hvp": lambda: (None, [be.block(hvp_fn(*args))]),
        }

    else:
        args = ([arr(p) for p in data["params"]], arr(data["X"]))

        def loss(params, X):
            return wl.deep_mlp_loss(X, params, ops)

    fn = be.compile(be.value_and_grad(loss), *args)

    def step():
        value, grads = be.block(fn(*args))
        return value, list(grads) if isinstance(grads, (list, tuple)) else [grads]

    return {"step": step}
