"""chainrule's demonstration: a small neural network learns to separate two interleaved
spirals by gradient descent, then a Hessian-vector product (grad of grad) is checked against
finite differences of the gradient."""

import time

import numpy as np

import chainrule as cr
import chainrule.nn.functional as F
from chainrule.autograd import grad


def spirals(n: int, rng) -> tuple[np.ndarray, np.ndarray]:
    t = np.sqrt(rng.uniform(0.05, 1.0, n)) * 3 * np.pi
    label = rng.integers(0, 2, n)
    r = t / (3 * np.pi)
    angle = t + np.pi * label
    points = np.stack([r * np.cos(angle), r * np.sin(angle)], axis=1)
    return points + rng.normal(0, 0.04, points.shape), label


def main() -> None:
    start = time.perf_counter()
    rng = np.random.default_rng(0)
    x_np, y_np = spirals(400, rng)
    x_test, y_test = spirals(400, rng)
    x = cr.asarray(x_np)
    sizes = [2, 32, 32, 2]
    params = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        params.append(
            cr.tensor(rng.normal(0, 1 / np.sqrt(fan_in), (fan_in, fan_out)), requires_grad=True)
        )
        params.append(cr.tensor(np.zeros(fan_out), requires_grad=True))

    def forward(ps, h):
        for i in range(0, len(ps) - 2, 2):
            h = cr.tanh(h @ ps[i] + ps[i + 1])
        return h @ ps[-2] + ps[-1]

    def loss_fn(*ps):
        logits = forward(ps, x)
        logp = F.log_softmax(logits, axis=-1)
        return -cr.mean(logp[np.arange(len(y_np)), y_np]), logits

    print("Training a 2-32-32-2 tanh network on 400 noisy points of two spirals (Adam, 600 steps)")
    m = [np.zeros(p.shape) for p in params]
    v = [np.zeros(p.shape) for p in params]
    lr, b1, b2 = 0.03, 0.9, 0.999
    for step in range(1, 601):
        loss, logits = loss_fn(*params)
        for p in params:
            p.grad = None
        loss.backward()
        with cr.no_grad():
            for i, p in enumerate(params):
                g = p.grad.numpy()
                m[i] = b1 * m[i] + (1 - b1) * g
                v[i] = b2 * v[i] + (1 - b2) * g * g
                update = lr * (m[i] / (1 - b1**step)) / (np.sqrt(v[i] / (1 - b2**step)) + 1e-8)
                params[i] = cr.tensor(p.numpy() - update, requires_grad=True)
        if step in (1, 100, 300, 600):
            accuracy = np.mean(np.argmax(logits.numpy(), axis=1) == y_np)
            print(f"  step {step:4d}: loss {loss.item():.4f}, training accuracy {accuracy:.1%}")
    with cr.no_grad():
        test_logits = forward(params, cr.asarray(x_test)).numpy()
    print(f"  accuracy on 400 new points: {np.mean(np.argmax(test_logits, axis=1) == y_test):.1%}")

    print("Hessian-vector product of the loss, by differentiating the gradient once more")
    vec = [cr.asarray(rng.normal(size=p.shape)) for p in params]
    gs = grad(loss_fn(*params)[0], params, create_graph=True)
    dot = cr.sum(cr.stack([cr.sum(g * u) for g, u in zip(gs, vec)]))
    hv = grad(dot, params)
    eps = 1e-5
    plus = grad(loss_fn(*[p + eps * u for p, u in zip(params, vec)])[0], params)
    minus = grad(loss_fn(*[p - eps * u for p, u in zip(params, vec)])[0], params)
    fd = [(a.numpy() - b.numpy()) / (2 * eps) for a, b in zip(plus, minus)]
    err = max(np.max(np.abs(h.numpy() - f)) for h, f in zip(hv, fd))
    scale = max(np.max(np.abs(f)) for f in fd)
    print(f"  |Hv| max {scale:.4f}; largest difference from finite differences {err:.2e}")
    print(f"Done in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main()
