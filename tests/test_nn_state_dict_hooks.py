"""Module.register_load_state_dict_pre_hook / _post_hook, as PyTorch 2.13's (the orders and
prefixes below were recorded from it), and the older weight_norm's state dict loading into
parametrizations.weight_norm through such a hook."""

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.nn.utils import parametrizations as P


def _model():
    return nn.Sequential(
        nn.Linear(3, 4), nn.Sequential(nn.Linear(4, 2), nn.Tanh()), nn.Linear(2, 1)
    )


def _values(m):
    return {k: np.array(v) for k, v in m.state_dict().items()}


def _assert_unchanged(m, before):
    for k, v in _values(m).items():
        np.testing.assert_array_equal(v, before[k])


def test_hooks_run_on_each_module_with_its_prefix_pre_parents_first_post_children_first():
    m = _model()
    calls = []
    for name, sub in m.named_modules():
        sub.register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, meta, strict, mk, uk, em, name=name: calls.append(
                ("pre", name, prefix, mod is m.get_submodule(name), strict, meta)
            )
        )
        sub.register_load_state_dict_post_hook(
            lambda mod, keys, name=name: calls.append(("post", name, tuple(keys.missing_keys)))
        )
    m.load_state_dict(m.state_dict())
    # PyTorch 2.13, the same model: pre-hooks in this order and post-hooks in this order
    # (it interleaves them: pre '', pre 0, post 0, pre 1, pre 1.0, post 1.0, ...).
    pre = [c[1:4] for c in calls if c[0] == "pre"]
    post = [c[1] for c in calls if c[0] == "post"]
    assert pre == [("", "", True), ("0", "0.", True), ("1", "1.", True), ("1.0", "1.0.", True),
                   ("1.1", "1.1.", True), ("2", "2.", True)]  # fmt: skip
    assert post == ["0", "1.0", "1.1", "1", "2", ""]
    assert all(c[4] is True and c[5] == {} for c in calls if c[0] == "pre")
    assert calls.index(("post", "", ())) == len(calls) - 1


def test_a_pre_hook_renames_keys_in_a_copy_of_the_callers_state_dict():
    src, dst = nn.Linear(2, 3), nn.Linear(2, 3)
    old = {"w": src.state_dict()["weight"], "b": src.state_dict()["bias"]}

    def rename(mod, sd, prefix, *_):
        sd[prefix + "weight"] = sd.pop(prefix + "w")
        sd[prefix + "bias"] = sd.pop(prefix + "b")

    handle = dst.register_load_state_dict_pre_hook(rename)
    keys = dst.load_state_dict(old)
    assert keys.missing_keys == [] and keys.unexpected_keys == []
    np.testing.assert_array_equal(np.asarray(dst.weight.detach()), old["w"])
    assert list(old) == ["w", "b"]  # the caller's dict is left as it was
    handle.remove()
    with pytest.raises(RuntimeError, match='Missing key.s. in state_dict: "weight", "bias"'):
        dst.load_state_dict(old)


def test_a_post_hook_sees_the_new_values_and_may_clear_missing_keys():
    m = nn.Linear(2, 2)
    seen = []

    def clear(mod, keys):
        seen.append(np.array(mod.weight.detach()))
        keys.missing_keys.clear()

    m.register_load_state_dict_post_hook(clear)
    keys = m.load_state_dict({"weight": np.zeros((2, 2))})  # no bias: missing, then cleared
    assert keys.missing_keys == [] and keys.unexpected_keys == []
    np.testing.assert_array_equal(seen[0], np.zeros((2, 2)))
    np.testing.assert_array_equal(np.asarray(m.weight.detach()), np.zeros((2, 2)))


def test_a_failed_load_with_post_hooks_puts_the_old_values_back():
    m = _model()
    before = _values(m)
    m[1][0].register_load_state_dict_post_hook(lambda mod, keys: None)
    zeros = {k: np.zeros_like(v) for k, v in before.items() if k != "2.bias"}
    with pytest.raises(RuntimeError, match='Missing key.s. in state_dict: "2.bias"'):
        m.load_state_dict(zeros)
    _assert_unchanged(m, before)
    m[1][0].register_load_state_dict_post_hook(lambda mod, keys: 1)
    with pytest.raises(AssertionError, match="must return None"):
        m.load_state_dict(zeros, strict=False)
    _assert_unchanged(m, before)


def test_a_message_a_pre_hook_adds_makes_the_load_raise_before_anything_is_copied():
    m = nn.Linear(2, 2)
    before = _values(m)
    m.register_load_state_dict_pre_hook(lambda mod, sd, p, meta, s, mk, uk, em: em.append("bad"))
    zeros = {k: np.zeros_like(v) for k, v in before.items()}
    # PyTorch 2.13's message: 'Error(s) in loading state_dict for Linear:\n\tbad'
    with pytest.raises(RuntimeError, match="^Error.s. in loading state_dict for Linear:\n\tbad$"):
        m.load_state_dict(zeros, strict=False)
    _assert_unchanged(m, before)


def test_strict_messages_come_first_missing_then_unexpected_as_pytorchs():
    m = nn.Linear(2, 2)
    with pytest.raises(RuntimeError) as info:
        m.load_state_dict({"weight": np.zeros((3, 2)), "foo": np.zeros(1)})
    lines = str(info.value).split("\n\t")
    assert lines[1:3] == ['Missing key(s) in state_dict: "bias". ',
                          'Unexpected key(s) in state_dict: "foo". ']  # fmt: skip
    assert lines[3].startswith("size mismatch for weight")


@pytest.mark.parametrize("dim", [0, 1, None])
def test_the_older_weight_norms_state_dict_loads_into_parametrizations_weight_norm(dim):
    cr.manual_seed(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        old = nn.Sequential(nn.utils.weight_norm(nn.Linear(3, 2), dim=dim), nn.Tanh())
    new = nn.Sequential(P.weight_norm(nn.Linear(3, 2), dim=dim), nn.Tanh())
    sd = old.state_dict()
    assert list(sd) == ["0.bias", "0.weight_g", "0.weight_v"]  # (PyTorch 2.13's keys)
    keys = new.load_state_dict(sd)
    assert keys.missing_keys == [] and keys.unexpected_keys == []
    x = cr.reshape(cr.linspace(-1.0, 1.0, 6), (2, 3))
    np.testing.assert_allclose(np.asarray(new(x).detach()), np.asarray(old(x).detach()), rtol=1e-12)
    assert set(new.state_dict()) == {
        "0.bias", "0.parametrizations.weight.original0", "0.parametrizations.weight.original1"
    }  # fmt: skip
