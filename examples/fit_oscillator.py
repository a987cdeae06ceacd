"""Fit a damped oscillator y(t) = A exp(-g t) cos(w t + p) to noisy measurements with
chainrule.optimize (SciPy's optimizers given exact derivatives by chainrule), and compare the
iterations and model evaluations with SciPy's finite-difference derivatives.

    python examples/fit_oscillator.py      (needs SciPy: pip install 'chainrule[optimize]')
"""

import time

import numpy as np
import scipy.optimize

import chainrule as cr
from chainrule import optimize

TRUE = {"amplitude": 1.5, "damping": 0.3, "frequency": 2.1, "phase": 0.4}
START = {"amplitude": 1.0, "damping": 0.1, "frequency": 2.0, "phase": 0.0}
NAMES = list(TRUE)

rng = np.random.default_rng(0)
t = np.linspace(0.0, 10.0, 200)


def oscillator(xp, p, t):
    return p["amplitude"] * xp.exp(-p["damping"] * t) * xp.cos(p["frequency"] * t + p["phase"])


y = oscillator(np, TRUE, t) + rng.normal(0.0, 0.05, t.shape)
t_cr, y_cr = cr.asarray(t), cr.asarray(y)
calls = {"model": 0}


def residuals(p):
    calls["model"] += 1
    return oscillator(cr, p, t_cr) - y_cr


def loss(p):
    r = residuals(p)
    return 0.5 * cr.sum(r * r)


def residuals_flat(v):
    calls["model"] += 1
    return oscillator(np, dict(zip(NAMES, v)), t) - y


def loss_flat(v):
    r = residuals_flat(v)
    return 0.5 * np.sum(r * r)


def run(label, fit):
    calls["model"] = 0
    start = time.perf_counter()
    res = fit()
    seconds = time.perf_counter() - start
    x = res.x if isinstance(res.x, dict) else dict(zip(NAMES, res.x))
    error = max(abs(x[k] - TRUE[k]) for k in NAMES)
    cost = res.fun if np.ndim(res.fun) == 0 else 0.5 * np.sum(res.fun**2)
    nit = res.get("nit", res.get("njev"))  # least_squares: one Jacobian per iteration
    print(
        f"| {label:<44} | {nit!s:>5} | {calls['model']:>6} | {float(cost):.6f} | "
        f"{error:.1e} | {seconds * 1000:6.0f} |"
    )
    return res


def main():
    x0 = np.array([START[k] for k in NAMES])
    print(f"Fitting {len(NAMES)} parameters to {t.size} noisy samples of a damped oscillator.\n")
    print("| method | iterations | model evaluations | final cost | largest error | ms |")
    # largest error: the fitted parameters' largest distance from the true ones (noise-bound)
    print("|---|---:|---:|---:|---:|---:|")
    run("BFGS, chainrule gradient", lambda: optimize.minimize(loss, START, method="BFGS"))
    run(
        "BFGS, finite differences",
        lambda: scipy.optimize.minimize(loss_flat, x0, method="BFGS"),
    )
    run(
        "Newton-CG, chainrule gradient + Hessian-vector",
        lambda: optimize.minimize(loss, START, method="Newton-CG"),
    )
    run(
        "Newton-CG, finite differences (gradient; Hv from it)",
        lambda: scipy.optimize.minimize(
            loss_flat,
            x0,
            method="Newton-CG",
            jac=lambda v: scipy.optimize.approx_fprime(v, loss_flat),
        ),
    )
    fitted = run(
        "least_squares, chainrule Jacobian",
        lambda: optimize.least_squares(residuals, START),
    )
    run(
        "least_squares, finite differences",
        lambda: scipy.optimize.least_squares(residuals_flat, x0),
    )
    print("\nFitted (least_squares, chainrule Jacobian) vs true:")
    for k in NAMES:
        print(f"  {k:<9} {fitted.x[k]:8.4f}   (true {TRUE[k]})")
    print(
        "\n'model evaluations' counts every evaluation of the model, those made to estimate "
        "derivatives included;\nchainrule's evaluations each also run one backward pass "
        "(two for a Hessian-vector product; one per parameter, plus one, for a Jacobian)."
    )


if __name__ == "__main__":
    main()
