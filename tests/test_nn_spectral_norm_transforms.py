"""spectral_norm (the parametrization and the older hook form) in training mode under the
func transforms: the power iteration writes its vectors through normalize's out=, which
PyTorch's transforms allow (they refuse in-place writes into captured tensors), so jacrev,
jacfwd, jvp and vmap run once each with PyTorch 2.13's values (recorded below) and leave the
vectors as one eager call does; over the parameters, forward mode is PyTorch's
NotImplementedError. Also normalize's out= itself."""

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.func import functional_call, jacfwd, jacrev, jvp, vmap
from conftest import T
from helpers import assert_values, leaf

W = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]]
BIAS = [0.1, -0.2]
U, V = [0.6, 0.8], [2 / 3, -1 / 3, 2 / 3]
X = [[1.0, 2.0, -1.0], [0.5, -0.5, 3.0]]
TANGENT = [[0.3, -0.2, 0.1], [1.0, 0.0, -1.0]]
# PyTorch's normalised weight after one power iteration from (U, V), and the vectors then:
# torch.func's jacrev, jacfwd, jvp and vmap of the module gave these, as an eager call.
RECORD = {
    "parametrization": (
        [
            [0.2289222755393851, -0.4578445510787702, 0.9156891021575404],
            [0.6867668266181554, 0.11446113776969255, -0.2289222755393851],
        ],
        [0.9600000000000001, 0.2800000000000001],
        [0.4120600959708933, -0.4074816504601056, 0.8149633009202112],
    ),
    "hook": (
        [
            [0.2678893538055459, -0.5357787076110918, 1.0715574152221836],
            [0.8036680614166377, 0.13394467690277295, -0.2678893538055459],
        ],
        [0.8436614877321074, 0.5368754921931593],
        [0.8588975014708023, -0.22903933372554727, 0.45807866745109455],
    ),
}


def _module(form):
    """Linear(3, 2) under spectral_norm with the weight W and the vectors (U, V); the module
    and a function giving its vectors."""
    lin = nn.Linear(3, 2)
    with cr.no_grad():
        lin.bias.copy_(T(BIAS))
    if form == "parametrization":
        m = nn.utils.parametrizations.spectral_norm(lin)
        p = m.parametrizations.weight
        u, v, weight = p[0]._u, p[0]._v, p.original
    else:
        m = nn.utils.spectral_norm(lin)
        u, v, weight = m.weight_u, m.weight_v, m.weight_orig
    with cr.no_grad():
        weight.copy_(T(W))
        u.copy_(T(U))
        v.copy_(T(V))
    return m, (u, v)


@pytest.mark.parametrize("form", RECORD)
@pytest.mark.parametrize("transform", ["jacrev", "jacfwd", "jvp", "vmap"])
def test_a_transform_runs_the_power_iteration_once_as_pytorchs(form, transform):
    m, (u, v) = _module(form)
    normalised, u_after, v_after = (np.asarray(a) for a in RECORD[form])
    x = T(X)
    value = np.asarray(X) @ normalised.T + BIAS
    if transform in ("jacrev", "jacfwd"):
        jacobian = (jacrev if transform == "jacrev" else jacfwd)(m)(x)
        assert_values(jacobian, np.einsum("ik,jl->ijkl", np.eye(2), normalised))
    elif transform == "jvp":
        out, tangent = jvp(m, (x,), (T(TANGENT),))
        assert_values(out, value)
        assert_values(tangent, np.asarray(TANGENT) @ normalised.T)
    else:
        assert_values(vmap(m)(x), value)
    assert_values(u, u_after)
    assert_values(v, v_after)


@pytest.mark.parametrize("form", RECORD)
def test_eager_calls_move_the_vectors_as_the_transforms_do(form):
    m, (u, v) = _module(form)
    normalised, u_after, v_after = (np.asarray(a) for a in RECORD[form])
    assert_values(m(T(X)), np.asarray(X) @ normalised.T + BIAS)
    assert_values(u, u_after)
    assert_values(v, v_after)
    m.eval()
    before = u.numpy().copy()
    m(T(X))
    assert_values(u, before)


@pytest.mark.parametrize("form", RECORD)
def test_over_the_parameters_reverse_mode_runs_and_forward_mode_is_pytorchs_error(form):
    m, _ = _module(form)
    params = {k: p.detach() for k, p in m.named_parameters()}

    def f(p):
        return functional_call(m, p, (T(X),))

    jacobians = jacrev(f)(params)
    assert set(jacobians) == set(params)
    assert_values(jacobians["bias"], np.broadcast_to(np.eye(2), (2, 2, 2)))
    out_fn = "Trying to use forward AD with div_out that does not support it because it is an"
    with pytest.raises(NotImplementedError, match=out_fn):
        jacfwd(f)(params)
    with pytest.raises(NotImplementedError, match=out_fn):
        jvp(f, (params,), (params,))


def test_a_write_in_place_into_a_captured_tensor_is_still_refused():
    captured = T([1.0, 2.0])

    def f(x):
        captured.copy_(x)
        return x * 2

    with pytest.raises(RuntimeError, match="mutate a captured Tensor"):
        jacrev(f)(T([3.0, 4.0]))
    assert_values(captured, [1.0, 2.0])


def test_normalize_out():
    out = T(np.zeros((2, 3)))
    x = T(X)
    assert F.normalize(x, dim=1, out=out) is out
    assert_values(out, np.asarray(X) / np.linalg.norm(X, axis=1, keepdims=True))
    with pytest.raises(RuntimeError, match=r"div\(\): functions with out=\.\.\. arguments don't"):
        F.normalize(leaf(X), out=out)
    with cr.no_grad():
        F.normalize(leaf(X), out=out)
    with pytest.raises(NotImplementedError, match=r"an out of shape \[3\] for a result of"):
        F.normalize(x, out=T(np.zeros(3)))
