"""Workloads shared by every system: sizes, seeded input data, and the
define-by-run computations, written once against a small namespace of ops.

Each system passes its own ``ops`` namespace (``sin``, ``exp``, ``tanh``,
``relu``, ``log_softmax``, ``sum``, ``mean``) and its own arrays; ``*``, ``+``,
``/``, ``@`` and indexing are the array type's own operators. Only the NumPy
"limit" writes its forward and backward passes by hand.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Workload:
    """One measured configuration: a computation kind at one size."""

    key: str  # "W1" ... "W6"; "W1@20000" for a W7 length
    title: str
    kind: str  # chain | mlp | hvp | fanout | memory
    size: int  # ops, branches, or 0 where the kind has a fixed size
    unit: str  # "us/op", "ms/step", "us/branch", "MiB"

    @property
    def per(self) -> int:
        """Divisor that turns the time of one step into the reported unit."""
        return self.size if self.kind in ("chain", "fanout") else 1

    @property
    def graph_ops(self) -> int:
        """Ops recorded per step where it grows with the size (0: fixed size)."""
        return {"chain": self.size, "fanout": 6 * self.size}.get(self.kind, 0)

    @property
    def scale(self) -> float:
        """Factor from seconds to the reported unit."""
        return {"us/op": 1e6, "us/branch": 1e6, "ms/step": 1e3}.get(self.unit, 1.0)

    @property
    def dtype(self) -> str:
        return "float32" if self.kind in ("mlp", "memory") else "float64"

    @property
    def rtol(self) -> float:
        """Relative tolerance of the gradient check against the NumPy limit."""
        return 1e-4 if self.dtype == "float32" else 1e-8


WORKLOADS = {
    "W1": Workload(
        "W1", "tiny ops: 2,000-op elementwise chain, 16 elements", "chain", 2000, "us/op"
    ),
    "W2": Workload("W2", "MLP step 784-1024-1024-10, batch 256, float32", "mlp", 0, "ms/step"),
    "W3": Workload("W3", "deep chain: 100,000 ops on 1 element", "chain", 100_000, "us/op"),
    "W4": Workload("W4", "Hessian-vector product, n = 1,000", "hvp", 0, "ms/step"),
    "W5": Workload(
        "W5", "fan-out: 1,000 branches of one 16-element input", "fanout", 1000, "us/branch"
    ),
    "W6": Workload("W6", "memory: 20 x 2048 tanh MLP, batch 512, float32", "memory", 0, "MiB"),
}
CHAIN_WIDTH = {"W1": 16, "W3": 1}
MLP_SIZES = (784, 1024, 1024, 10)
MLP_BATCH = 256
HVP_N = 1000
FANOUT_WIDTH = 16
MEMORY_LAYERS, MEMORY_WIDTH, MEMORY_BATCH = 20, 2048, 512


def get(key: str) -> Workload:
    """A workload by key; "W1@20000" is W1 at another length (for W7)."""
    base, _, size = key.partition("@")
    work = WORKLOADS[base]
    if not size:
        return work
    return Workload(key, f"{base} at {int(size):,} ops", work.kind, int(size), work.unit)


def chain_width(key: str) -> int:
    """W1 and its scaled versions use 16-element vectors, W3 one element."""
    return CHAIN_WIDTH[key.partition("@")[0]]


def make_data(work: Workload) -> dict:
    """Seeded NumPy inputs for a workload (identical for every system)."""
    rng = np.random.default_rng(12345)
    if work.kind == "chain":
        width = chain_width(work.key)
        return {
            "x": rng.uniform(-1.0, 1.0, width),
            "c": rng.uniform(0.5, 1.5, width),
            "n_ops": work.size,
        }
    if work.kind == "fanout":
        return {
            "x": rng.uniform(-1.0, 1.0, FANOUT_WIDTH),
            "a": rng.uniform(-1.0, 1.0, work.size).tolist(),
            "b": rng.uniform(-1.0, 1.0, work.size).tolist(),
        }
    if work.kind == "mlp":
        params = []
        for fan_in, fan_out in zip(MLP_SIZES[:-1], MLP_SIZES[1:]):
            params.append(_normal(rng, (fan_in, fan_out), fan_in**-0.5))
            params.append(_normal(rng, (fan_out,), 0.1))
        return {
            "X": _normal(rng, (MLP_BATCH, MLP_SIZES[0]), 1.0),
            "labels": rng.integers(0, MLP_SIZES[-1], MLP_BATCH),
            "params": params,
        }
    if work.kind == "hvp":
        return {
            "W": rng.standard_normal((HVP_N, HVP_N)) * HVP_N**-0.5,
            "x": rng.standard_normal(HVP_N),
            "v": rng.standard_normal(HVP_N),
        }
    if work.kind == "memory":
        params = []
        for _ in range(MEMORY_LAYERS):
            params.append(_normal(rng, (MEMORY_WIDTH, MEMORY_WIDTH), MEMORY_WIDTH**-0.5))
            params.append(_normal(rng, (MEMORY_WIDTH,), 0.1))
        return {"X": _normal(rng, (MEMORY_BATCH, MEMORY_WIDTH), 1.0), "params": params}
    raise ValueError(f"unknown workload kind {work.kind!r}")


def _normal(rng: np.random.Generator, shape: tuple, std: float) -> np.ndarray:
    """float32 normal samples, drawn without a float64 temporary."""
    out = rng.standard_normal(shape, dtype=np.float32)
    out *= np.float32(std)
    return out


def checked(work: Workload, grads: list) -> list:
    """The gradients compared across systems (W6: first/last weights, biases)."""
    if work.kind != "memory":
        return grads
    weights, biases = grads[0::2], grads[1::2]
    return [weights[0], weights[-1], *biases]


# --- define-by-run computations shared by every autodiff system -------------
CHAIN_DIVISOR = 1.5


def chain(x, c, n_ops: int, ops):
    """``n_ops`` elementwise ops applied one after the other, starting at x.

    The op cycle is: multiply by the constant tensor c, add the input x back,
    sin, exp, tanh, divide by a constant; values stay within (-1, 2.8).
    """
    cycle = (
        lambda h: h * c,
        lambda h: h + x,
        ops.sin,
        ops.exp,
        ops.tanh,
        lambda h: h / CHAIN_DIVISOR,
    )
    h = x
    for i in range(n_ops):
        h = cycle[i % 6](h)
    return ops.sum(h)


def fanout(x, a: list, b: list, ops):
    """Sum over branches i of sin(x * a_i) * exp(x * b_i), then a total sum."""
    total = None
    for ai, bi in zip(a, b):
        branch = ops.sin(x * ai) * ops.exp(x * bi)
        total = branch if total is None else total + branch
    return ops.sum(total)


def mlp_loss(X, rows, labels, params, ops):
    """784-1024-1024-10 MLP (tanh, relu), mean softmax cross-entropy."""
    W1, b1, W2, b2, W3, b3 = params
    h = ops.tanh(X @ W1 + b1)
    h = ops.relu(h @ W2 + b2)
    logp = ops.log_softmax(h @ W3 + b3)
    return -ops.mean(logp[rows, labels])


def hvp_objective(x, W, ops):
    """f(x) = sum(tanh(W x)^2)."""
    t = ops.tanh(W @ x)
    return ops.sum(t * t)


def deep_mlp_loss(X, params, ops):
    """20-layer tanh MLP, loss mean(h^2) of the last layer."""
    h = X
    for i in range(0, len(params), 2):
        h = ops.tanh(h @ params[i] + params[i + 1])
    return ops.mean(h * h)
