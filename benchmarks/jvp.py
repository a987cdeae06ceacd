"""Forward mode's cost: a Jacobian-vector product against the forward pass alone, and against
the double-VJP construction (two reverse passes) that autograd.functional.jvp used before.

    python benchmarks/jvp.py [--quick] [--cpu-time] [--md jvp-results.md]

Workloads in the style of run.py's (one thread): W1, a 2,000-op elementwise chain on 16
elements; W3, a 20,000-op chain on one element (the per-op overhead); W2, the MLP loss
784-1024-1024-10 (batch 256, float32), its JVP along the input and along every parameter
(where each matmul of two varying operands costs two: the JVP's multiply-adds are 2.57x the
forward's). Each figure is the median of several repeats, the variants alternating; results
agree before timing.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import timing  # noqa: E402  (first: one thread for NumPy)

if not (HERE.parent / "src" / "chainrule").is_dir():
    raise SystemExit("run from a chainrule checkout")
sys.path.insert(0, str(HERE.parent / "src"))

import numpy as np  # noqa: E402

import chainrule as cr  # noqa: E402
import chainrule.nn.functional as F  # noqa: E402
import workloads as wl  # noqa: E402

OPS = type(
    "ops",
    (),
    {
        "sin": staticmethod(cr.sin),
        "exp": staticmethod(cr.exp),
        "tanh": staticmethod(cr.tanh),
        "relu": staticmethod(F.relu),
        "log_softmax": staticmethod(lambda z: F.log_softmax(z, axis=-1)),
        "sum": staticmethod(cr.sum),
        "mean": staticmethod(cr.mean),
    },
)


def double_vjp(f, xs, vs):
    """J v as the derivative of a VJP by its cotangent: two reverse passes (the construction
    autograd.functional.jvp used before forward mode)."""
    leaves = [x.detach().requires_grad_(True) for x in xs]
    out = f(*leaves)
    u = cr.zeros_like(out).requires_grad_(True)
    gs = cr.autograd.grad(out, leaves, u, create_graph=True, allow_unused=True)
    pairs = [(g, v) for g, v in zip(gs, vs) if g is not None]
    (jv,) = cr.autograd.grad([g for g, _ in pairs], u, [v for _, v in pairs])
    return out.detach(), jv


def forward_mode(f, xs, vs):
    return cr.func.jvp(f, tuple(xs), tuple(vs))


def workload(key: str):
    """(the function, its inputs, tangents of the inputs, a description)."""
    rng = np.random.default_rng(0)
    if key in ("W1", "W3"):
        n, width = (2000, 16) if key == "W1" else (20_000, 1)
        c = cr.tensor(rng.uniform(0.5, 1.5, width))

        def f(x):
            return wl.chain(x, c, n, OPS)

        x = cr.tensor(rng.uniform(-1, 1, width))
        v = cr.tensor(rng.standard_normal(width))
        return f, [x], [v], f"{n:,}-op chain on {width} element{'s' * (width > 1)}"
    data = wl.make_data(wl.WORKLOADS["W2"])
    X = cr.tensor(data["X"])
    rows, labels = np.arange(wl.MLP_BATCH), data["labels"]
    params = [cr.tensor(p) for p in data["params"]]
    title = "MLP 784-1024-1024-10 loss, batch 256, float32"
    if key == "W2, input":

        def by_input(X):
            return wl.mlp_loss(X, rows, labels, params, OPS)

        v = cr.tensor(rng.standard_normal(X.shape).astype(np.float32))
        return by_input, [X], [v], title + ", along the input"

    def loss(*params):
        return wl.mlp_loss(X, rows, labels, list(params), OPS)

    vs = [cr.tensor(rng.standard_normal(p.shape).astype(np.float32)) for p in data["params"]]
    return loss, params, vs, title + ", along every parameter"


def measure(key: str, repeats: int, min_s: float, clock: str) -> dict:
    f, xs, vs, title = workload(key)
    recorded = [x.detach().requires_grad_(True) for x in xs]
    variants = {
        "forward": lambda: f(*xs),
        "forward, recorded": lambda: f(*recorded),
        "jvp (forward mode)": lambda: forward_mode(f, xs, vs),
        "jvp (double VJP)": lambda: double_vjp(f, xs, vs),
    }
    _, new = forward_mode(f, xs, vs)
    _, old = double_vjp(f, xs, vs)
    tol = 1e-4 if xs[0].dtype == cr.float32 else 1e-9
    if not np.allclose(new.numpy(), old.numpy(), rtol=tol, atol=tol):
        raise SystemExit(f"{key}: forward mode {new} and double VJP {old} disagree")
    return {"title": title, **timing.medians(variants, repeats, min_s, clock)}


def report(results: dict, clock: str) -> str:
    lines = [
        "# Forward mode: JVP cost",
        "",
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"NumPy {np.__version__}, one thread, {timing.clock_note(clock)}. Times are medians, "
        "in ms; ratios to the forward pass alone (no graph recorded).",
        "",
        "| workload | forward | forward, recorded | jvp (forward mode) | jvp (double VJP) "
        "| forward mode / forward | double VJP / forward mode |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for key, r in results.items():
        fwd, new, old = r["forward"], r["jvp (forward mode)"], r["jvp (double VJP)"]
        lines.append(
            f"| {key}: {r['title']} | {fwd * 1e3:.2f} | {r['forward, recorded'] * 1e3:.2f} "
            f"| {new * 1e3:.2f} | {old * 1e3:.2f} | {new / fwd:.2f}x | {old / new:.2f}x |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    args = timing.arguments(__doc__, str(HERE / "jvp-results.md"))
    repeats, min_s = (3, 0.05) if args.quick else (7, 0.3)
    clock = "cpu" if args.cpu_time else "wall"
    keys = ("W1", "W3", "W2, input", "W2, parameters")
    results = {key: measure(key, repeats, min_s, clock) for key in keys}
    text = report(results, clock)
    Path(args.md).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
