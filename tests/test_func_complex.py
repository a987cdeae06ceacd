"""jacrev, jacfwd and hessian with complex inputs or outputs raise RuntimeError, as PyTorch's:
rows by VJPs hold conj(J) where columns by JVPs hold J (and a real input's VJP drops the
imaginary direction), so both gave numbers that disagree with each other and with the
Jacobian. vjp, jvp and grad of a real loss take complex values (docs/complex.md)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import func
from conftest import N, T

Z = np.array([1.0 + 2.0j, 0.5 - 1.0j])
X = np.array([1.0, 2.0])


@pytest.mark.parametrize("transform", [func.jacrev, func.jacfwd])
def test_jacobian_transforms_refuse_complex_inputs(transform):
    name = transform.__name__
    with pytest.raises(RuntimeError, match=f"{name}: Expected all inputs to be real"):
        transform(lambda z: z * z)(T(Z))
    # every positional argument counts, not only those differentiated (PyTorch's index)
    with pytest.raises(RuntimeError, match="complex tensor at flattened input idx: 1"):
        transform(lambda x, z: x * cr.abs(z))(T(X), T(Z))


@pytest.mark.parametrize("transform", [func.jacrev, func.jacfwd])
def test_jacobian_transforms_refuse_complex_outputs_but_not_complex_aux(transform):
    name = transform.__name__
    with pytest.raises(RuntimeError, match=f"{name}: Expected all outputs to be real"):
        transform(lambda x: x * 1j)(T(X))
    jac, aux = transform(lambda x: (x * 2.0, x * 1j), has_aux=True)(T(X))
    np.testing.assert_allclose(N(jac), 2.0 * np.eye(2))
    np.testing.assert_allclose(N(aux), X * 1j)


def test_hessian_and_vmapped_jacobians_refuse_complex_values():
    with pytest.raises(RuntimeError, match="jacfwd: Expected all inputs to be real"):
        func.hessian(lambda z: cr.sum(cr.abs(z) ** 2))(T(Z))
    with pytest.raises(RuntimeError, match="jacrev: Expected all outputs to be real"):
        func.vmap(func.jacrev(lambda x: cr.exp(x * 1j)))(T(np.stack([X, X])))


def test_real_jacobian_of_a_function_through_complex_values_is_unchanged():
    def f(x):
        z = cr.astype(x, cr.complex128) * (1.0 + 2.0j)
        return cr.abs(cr.exp(z) * z)

    x = T(X)
    rev, fwd = func.jacrev(f)(x), func.jacfwd(f)(x)
    h = 1e-6
    num = np.stack(
        [(N(f(T(X + h * e))) - N(f(T(X - h * e)))) / (2 * h) for e in np.eye(2)], axis=-1
    )
    np.testing.assert_allclose(N(rev), num, rtol=1e-6)
    np.testing.assert_allclose(N(fwd), num, rtol=1e-6)
