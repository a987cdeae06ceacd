"""L-BFGS with complex parameters, as PyTorch's: each complex element is two real numbers in
the flat vectors (view_as_real). Checked against PyTorch's recorded steps on a complex least
squares problem (tests/fixtures/lbfgs_complex_torch.json, from make_lbfgs_complex_fixtures.py)
and against L-BFGS on the real pairs as a real parameter."""

import json
import pathlib

import numpy as np
import pytest

import chainrule as cr
from chainrule import optim
from conftest import N, T

REC = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "lbfgs_complex_torch.json").read_text()
)


def _complex(parts):
    return np.array(parts[0]) + 1j * np.array(parts[1])


A, B, Z0, W0 = _complex(REC["A"]), _complex(REC["b"]), _complex(REC["z0"]), np.array(REC["w0"])


def _closure(opt, z, w, a, b):
    def closure():
        opt.zero_grad()
        r = a @ z - b
        loss = cr.sum(cr.real(r * cr.conj(r))) + 0.1 * cr.sum(w * w)
        loss.backward()
        return loss

    return closure


@pytest.mark.parametrize("case", REC["cases"], ids=lambda c: str(c["kwargs"]))
def test_lbfgs_steps_a_complex_least_squares_problem_as_pytorchs(case):
    z, w = T(Z0, requires_grad=True), T(W0, requires_grad=True)
    opt = optim.LBFGS([z, w], **case["kwargs"])
    closure = _closure(opt, z, w, T(A), T(B))
    for k in range(REC["steps"]):
        loss = opt.step(closure)
        np.testing.assert_allclose(float(loss), case["losses"][k], rtol=1e-13)
        # The late iterations amplify rounding (PyTorch's own differ as much between builds).
        np.testing.assert_allclose(N(z.detach()), _complex(case["z"][k]), rtol=0, atol=1e-9)
        np.testing.assert_allclose(N(w.detach()), case["w"][k], rtol=0, atol=1e-9)


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_of_a_complex_parameter_steps_as_of_its_real_pairs(line_search_fn):
    z = T(Z0, requires_grad=True)
    opt = optim.LBFGS([z], max_iter=4, line_search_fn=line_search_fn)
    a, b = T(A), T(B)

    def loss_of(v):
        r = a @ v - b
        return cr.sum(cr.real(r * cr.conj(r)))

    def closure():
        opt.zero_grad()
        loss = loss_of(z)
        loss.backward()
        return loss

    pairs = T(np.stack([Z0.real, Z0.imag], axis=-1), requires_grad=True)
    opt_pairs = optim.LBFGS([pairs], max_iter=4, line_search_fn=line_search_fn)

    def closure_pairs():
        opt_pairs.zero_grad()
        loss = loss_of(pairs[..., 0] + 1j * pairs[..., 1])
        loss.backward()
        return loss

    for _ in range(2):
        opt.step(closure)
        opt_pairs.step(closure_pairs)
    p = N(pairs.detach())
    np.testing.assert_allclose(N(z.detach()), p[..., 0] + 1j * p[..., 1], rtol=1e-12, atol=1e-14)


def test_lbfgs_keeps_a_complex64_parameter_complex64_and_its_identity():
    z = T(Z0.astype(np.complex64), requires_grad=True)
    opt = optim.LBFGS([z], max_iter=3)
    a, b = T(A.astype(np.complex64)), T(B.astype(np.complex64))

    def closure():
        opt.zero_grad()
        r = a @ z - b
        loss = cr.sum(cr.real(r * cr.conj(r)))
        loss.backward()
        return loss

    first = float(opt.step(closure))
    assert opt.param_groups[0]["params"][0] is z and z.dtype == cr.complex64
    assert float(closure()) < first
