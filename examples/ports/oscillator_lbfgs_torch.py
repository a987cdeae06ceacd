"""Fit a damped oscillator x(t) = A exp(-g t) cos(w t + p) to noisy measurements with L-BFGS
(strong Wolfe line search, a closure), written as a PyTorch user writes it: the model is a
Module whose parameters are the physical constants. oscillator_lbfgs_torch.py runs it on
PyTorch, oscillator_lbfgs.py on chainrule: the two files differ in their imports only, and
they give the same losses at every evaluation (tests/test_ports.py checks it against the
PyTorch run's).

    python examples/ports/oscillator_lbfgs.py [--size small|full]
"""

import argparse

import numpy as np
import torch
from torch import nn

SIZES = {"small": {"points": 100, "steps": 3}, "full": {"points": 2000, "steps": 10}}
TRUE = {"amplitude": 1.5, "damping": 0.3, "frequency": 2.1, "phase": 0.4}


class Oscillator(nn.Module):
    def __init__(self):
        super().__init__()
        self.amplitude = nn.Parameter(torch.tensor(1.0, dtype=torch.float64))
        self.damping = nn.Parameter(torch.tensor(0.1, dtype=torch.float64))
        self.frequency = nn.Parameter(torch.tensor(2.0, dtype=torch.float64))
        self.phase = nn.Parameter(torch.tensor(0.0, dtype=torch.float64))

    def forward(self, t):
        decay = torch.exp(-self.damping * t)
        return self.amplitude * decay * torch.cos(self.frequency * t + self.phase)


def measurements(points: int, seed: int):
    """The true oscillator at `points` times in [0, 10], with Gaussian noise (sd 0.05)."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 10.0, points)
    x = (
        TRUE["amplitude"]
        * np.exp(-TRUE["damping"] * t)
        * np.cos(TRUE["frequency"] * t + TRUE["phase"])
    )
    return t, x + rng.normal(0.0, 0.05, points)


def run(size: str = "small", seed: int = 0) -> dict:
    """Fit; returns the loss at every evaluation of the closure, the loss after each step,
    and the fitted constants."""
    config = SIZES[size]
    t, x = measurements(config["points"], seed)
    t, x = torch.tensor(t), torch.tensor(x)
    model = Oscillator()
    opt = torch.optim.LBFGS(
        model.parameters(), lr=1.0, max_iter=20, history_size=10, line_search_fn="strong_wolfe"
    )
    evaluations = []

    def closure():
        opt.zero_grad()
        loss = ((model(t) - x) ** 2).mean()
        loss.backward()
        evaluations.append(loss.item())
        return loss

    steps = []
    for _ in range(config["steps"]):
        opt.step(closure)
        with torch.no_grad():
            steps.append(((model(t) - x) ** 2).mean().item())
    fitted = {name: p.item() for name, p in model.named_parameters()}
    return {"evaluations": evaluations, "losses": steps, "fitted": fitted}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    result = run(parser.parse_args().size)
    print(f"{len(result['evaluations'])} evaluations: loss {result['losses'][-1]:.6f}")
    print(", ".join(f"{k} {v:.4f} (true {TRUE[k]})" for k, v in result["fitted"].items()))
