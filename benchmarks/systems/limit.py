"""The NumPy "limit": hand-written forward and backward passes.

No graph, no tape objects: the forward pass keeps exactly the arrays its
backward pass needs, so its time is what the same NumPy calls cost without
any autodiff bookkeeping.
"""

import numpy as np

from workloads import CHAIN_DIVISOR


def setup(one_thread: bool) -> dict:
    return {"version": np.__version__}


def to_numpy(grads) -> list:
    return list(grads)


def build(work, data) -> dict:
    return {
        "chain": _chain,
        "fanout": _fanout,
        "mlp": _mlp,
        "hvp": _hvp,
        "memory": _deep_mlp,
    }[work.kind](**data)


def _chain(x, c, n_ops):
    def step():
        saved = []
        h = x
        for i in range(n_ops):
            k = i % 6
            if k == 0:
                h = h * c
            elif k == 1:
                h = h + x
            elif k == 2:
                saved.append(h)
                h = np.sin(h)
            elif k == 3:
                h = np.exp(h)
                saved.append(h)
            elif k == 4:
                h = np.tanh(h)
                saved.append(h)
            else:
                h = h / CHAIN_DIVISOR
        loss = h.sum()
        g = np.ones_like(h)
        gx = np.zeros_like(x)
        for i in reversed(range(n_ops)):
            k = i % 6
            if k == 0:
                g = g * c
            elif k == 1:
                gx += g
            elif k == 2:
                g = g * np.cos(saved.pop())
            elif k == 3:
                g = g * saved.pop()
            elif k == 4:
                t = saved.pop()
                g = g * (1.0 - t * t)
            else:
                g = g / CHAIN_DIVISOR
        gx += g
        return loss, [gx]

    return {"step": step}


def _fanout(x, a, b):
    def step():
        saved = []
        total = None
        for ai, bi in zip(a, b):
            u = x * ai
            s = np.sin(u)
            e = np.exp(x * bi)
            branch = s * e
            total = branch if total is None else total + branch
            saved.append((u, s, e))
        loss = total.sum()
        gx = np.zeros_like(x)
        for (u, s, e), ai, bi in zip(reversed(saved), reversed(a), reversed(b)):
            gx += np.cos(u) * e * ai
            gx += s * e * bi
        return loss, [gx]

    return {"step": step}


def _mlp(X, labels, params):
    W1, b1, W2, b2, W3, b3 = params
    batch = X.shape[0]
    rows = np.arange(batch)

    def step():
        h1 = np.tanh(X @ W1 + b1)
        z2 = h1 @ W2 + b2
        h2 = np.maximum(z2, 0.0)
        z3 = h2 @ W3 + b3
        z3 -= z3.max(axis=1, keepdims=True)
        e = np.exp(z3)
        total = e.sum(axis=1, keepdims=True)
        loss = -(z3[rows, labels] - np.log(total[:, 0])).mean()
        dz3 = e / total
        dz3[rows, labels] -= 1.0
        dz3 /= batch
        dh2 = dz3 @ W3.T
        dz2 = dh2 * (z2 > 0)
        dh1 = dz2 @ W2.T
        dz1 = dh1 * (1.0 - h1 * h1)
        grads = [X.T @ dz1, dz1.sum(axis=0), h1.T @ dz2, dz2.sum(axis=0)]
        return loss, [*grads, h2.T @ dz3, dz3.sum(axis=0)]

    return {"step": step}


def _hvp(W, x, v):
    def grad():
        t = np.tanh(W @ x)
        return (t * t).sum(), [W.T @ (2.0 * t * (1.0 - t * t))]

    def hvp():
        t = np.tanh(W @ x)
        t2 = t * t
        curvature = 2.0 * (1.0 - t2) * (1.0 - 3.0 * t2)
        return None, [W.T @ (curvature * (W @ v))]

    return {"grad": grad, "hvp": hvp}


def _deep_mlp(X, params):
    def step():
        hs = [X]
        for i in range(0, len(params), 2):
            hs.append(np.tanh(hs[-1] @ params[i] + params[i + 1]))
        h = hs.pop()
        loss = (h * h).mean()
        g = h * (2.0 / h.size)
        grads = []
        for i in reversed(range(0, len(params), 2)):
            dz = g * (1.0 - h * h)
            h = hs.pop()
            grads += [dz.sum(axis=0), h.T @ dz]
            if i:
                g = dz @ params[i].T
        return loss, grads[::-1]

    return {"step": step}
