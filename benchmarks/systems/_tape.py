"""Workload steps for tape-based (PyTorch-like) systems: loss.backward().

A backend namespace supplies ``ops``, ``leaf(array)`` (a tensor that requires
grad), ``const(array)``, ``index(int_array)``, ``clear(leaves)`` (drop the
previous gradients, as ``zero_grad(set_to_none=True)`` does), ``grads(leaves)``
and ``hvp(f, x, v)`` (double backward; ``None`` where unsupported).
"""

import numpy as np

import workloads as wl


def build(work, data, be) -> dict:
    if work.kind == "chain":
        x, c = be.leaf(data["x"]), be.const(data["c"])
        leaves = [x]

        def loss():
            return wl.chain(x, c, data["n_ops"], be.ops)

    elif work.kind == "fanout":
        x, a, b = be.leaf(data["x"]), data["a"], data["b"]
        leaves = [x]

        def loss():
            return wl.fanout(x, a, b, be.ops)

    elif work.kind == "mlp":
        X, leaves = be.const(data["X"]), [be.leaf(p) for p in data["params"]]
        rows = be.index(np.arange(X.shape[0]))
        labels = be.index(data["labels"])

        def loss():
            return wl.mlp_loss(X, rows, labels, leaves, be.ops)

    elif work.kind == "hvp":
        W, v, x = be.const(data["W"]), be.const(data["v"]), be.leaf(data["x"])
        leaves = [x]

        def loss():
            return wl.hvp_objective(x, W, be.ops)

    else:
        X, leaves = be.const(data["X"]), [be.leaf(p) for p in data["params"]]

        def loss():
            return wl.deep_mlp_loss(X, leaves, be.ops)

    def step():
        be.clear(leaves)
        value = loss()
        value.backward()
        return value, be.grads(leaves)

    if work.kind != "hvp":
        return {"step": step}
    steps = {"grad": step}
    if be.hvp is not None:
        steps["hvp"] = lambda: (None, [be.hvp(loss(), x, v)])
    return steps
