"""Optimizers and complex parameters: SGD's update is linear in the gradient, so it is right
for complex values as written (the same steps as on the real and imaginary parts as separate
real parameters, PyTorch's view_as_real); the others refuse them rather than give other
numbers than PyTorch's."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import optim
from conftest import N, T

Z0 = np.array([1.0 + 2.0j, -0.5 + 0.25j, 3.0 - 1.0j])
C = np.array([0.5 - 1.0j, 2.0 + 0.0j, -1.0 + 1.5j])


def test_sgd_steps_a_complex_parameter_as_its_real_and_imaginary_parts():
    kw = dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.05)
    z = T(Z0, requires_grad=True)
    re, im = T(Z0.real, requires_grad=True), T(Z0.imag, requires_grad=True)
    opt_z, opt_pair = optim.SGD([z], **kw), optim.SGD([re, im], **kw)
    c = T(C)
    for _ in range(4):
        opt_z.zero_grad()
        d = z - c
        cr.sum(cr.real(d * cr.conj(d)) * cr.abs(d)).backward()
        opt_z.step()
        opt_pair.zero_grad()
        dr, di = re - T(C.real), im - T(C.imag)
        cr.sum((dr * dr + di * di) ** 1.5).backward()
        opt_pair.step()
    np.testing.assert_allclose(N(z), N(re) + 1j * N(im), rtol=1e-12)


@pytest.mark.parametrize(
    "name", ["Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "LBFGS"]
)
def test_optimizers_whose_update_is_not_linear_refuse_complex_parameters(name):
    z = T(Z0, requires_grad=True)
    with pytest.raises(NotImplementedError, match="complex parameters"):
        getattr(optim, name)([z])
    with pytest.raises(NotImplementedError, match="complex parameters"):
        getattr(optim, name)([T([1.0], requires_grad=True)]).add_param_group({"params": [z]})
