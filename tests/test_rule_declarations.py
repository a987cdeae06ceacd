"""Rules declare their calling form and formulas (Rule.form, vjp_formulas, jvp_formulas): what
compile's replay and forward mode's lean path read instead of inspecting functions."""

import numpy as np
import pytest

import chainrule as cr
from chainrule._node import Rule
from chainrule._rules import OPS, RULES, raw_namespace


def test_every_rule_declares_one_of_the_three_forms():
    forms = {name: rule.form for name, rule in RULES.items()}
    assert set(forms.values()) == {"unary", "binary", "sequence"}
    assert forms["sin"] == forms["reshape"] == forms["sum"] == forms["batch"] == "unary"
    assert forms["add"] == forms["multiply"] == forms["matmul"] == "binary"
    assert forms["stack"] == forms["where"] == forms["linalg_svd"] == forms["equal"] == "sequence"


def test_an_unknown_form_is_refused():
    with pytest.raises(ValueError, match="unknown form 'ternary'"):
        Rule("r", None, None, ((),), form="ternary")


def test_a_rule_made_outside_the_table_is_of_the_sequence_form_without_formulas():
    rule = Rule("r", None, None, ((),))
    assert (rule.form, rule.vjp_formulas, rule.jvp_formulas) == ("sequence", None, None)


def test_each_rule_is_called_as_its_form_says():
    t = cr.reshape(cr.linspace(0.5, 1.5, 6), (2, 3))
    x, xp = t._data, t._xp
    for name, call in [
        ("sin", lambda op: op(t, None)),
        ("reshape", lambda op: op(t, ((3, 2), (2, 3)))),
        ("multiply", lambda op: op(t, t)),
        ("stack", lambda op: op((t, t), 0)),
    ]:
        rule = RULES[name]
        via_op = call(OPS[name]).numpy()
        if rule.form == "unary":
            direct = rule.fwd(xp, x, ((3, 2), (2, 3)) if name == "reshape" else None)
        elif rule.form == "binary":
            direct = rule.fwd(xp, x, x)
        else:
            direct = rule.fwd(xp, (x, x), 0)
        np.testing.assert_array_equal(via_op, cr.asarray(direct).numpy())


def _first_order(rule, xs, out, g):
    """The rule's VJP in the one signature, with every input needing a gradient."""
    n = len(xs)
    saved = (*xs, out)
    return rule.vjp(raw_namespace(np), g, saved, None, (True,) * n)


@pytest.mark.parametrize("name", ["sin", "exp", "tanh", "sqrt", "log"])
def test_a_one_input_rules_vjp_formula_is_what_its_vjp_computes(name):
    rule = RULES[name]
    x = np.linspace(0.5, 1.5, 5)
    out = rule.fwd(np, x, None)
    g = np.linspace(-1.0, 1.0, 5)
    (formula,) = rule.vjp_formulas
    ns = raw_namespace(np)
    np.testing.assert_allclose(formula(ns, g, x, out, None), _first_order(rule, (x,), out, g)[0])
    # An elementwise function's Jacobian is diagonal: its JVP formula is its VJP formula.
    assert rule.jvp_formulas == rule.vjp_formulas


@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "atan2"])
def test_a_two_input_rules_vjp_formulas_are_what_its_vjp_computes(name):
    rule = RULES[name]
    x = np.linspace(0.5, 1.5, 4)
    y = np.linspace(2.0, 3.0, 4)
    out = rule.fwd(np, x, y)
    g = np.linspace(-1.0, 1.0, 4)
    ns = raw_namespace(np)
    expected = _first_order(rule, (x, y), out, g)
    for formula, want in zip(rule.vjp_formulas, expected):
        np.testing.assert_allclose(formula(ns, g, x, y, out), want)
    assert rule.jvp_formulas == rule.vjp_formulas  # elementwise: symmetric


def test_rules_whose_jvp_is_an_identity_declare_no_jvp_formula():
    # linear (reshape), reduction (max) and bilinear (matmul) JVPs have no per-input formula
    for name in ("reshape", "max", "matmul"):
        assert RULES[name].jvp_formulas is None, name
    assert RULES["matmul"].vjp_formulas is not None
    assert RULES["stack"].vjp_formulas is None  # a sequence rule: the one signature


def test_forward_mode_lean_path_uses_the_declared_formula():
    x = cr.tensor([0.3, 0.7, 1.1])
    t = cr.tensor([1.0, -2.0, 0.5])
    with cr.autograd.forward_ad.dual_level():
        y = cr.autograd.forward_ad.make_dual(x, t)
        tangent = cr.autograd.forward_ad.unpack_dual(cr.sin(y) * y).tangent
    xv, tv = x.numpy(), t.numpy()
    np.testing.assert_allclose(tangent.numpy(), (np.cos(xv) * xv + np.sin(xv)) * tv)
