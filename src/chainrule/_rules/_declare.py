"""The rule table's registry (RULES, OPS, EXTRAS, KERNELS), the namespaces derivative formulas
run with on raw arrays (raw_namespace), the declaration helpers every family is written with
(unary, elementwise, binary, nary, linear_pair, nondiff, crossing), and a few helpers several
families share. The families themselves are the package's other modules."""

from __future__ import annotations

import functools
import types
from collections.abc import Callable
from typing import Any

from .. import _backend
from .._factories import binary_primitive, crossing_primitive, primitive, unary_primitive
from .._grad_fn_names import TORCH_NAMES
from .._node import OUT, Rule

__all__ = [
    "EXTRAS", "KERNELS", "OPS", "RAW_NAMESPACES", "RULES", "binary", "crossing", "elementwise",
    "linear_pair", "nary", "nondiff", "raw_namespace", "unary",
]  # fmt: skip

RULES: dict[str, Rule] = {}
OPS: dict[str, Callable[..., Any]] = {}
# The functions VJPs call beyond the standard, by name: linear primitives that are other
# primitives' VJPs (`xp.index_add(g, p)`), and `outside`. Both namespaces a VJP runs with
# offer them: raw_namespace(xp) here, chainrule's in the engine. Both also offer
# `xp.primitive(name, a, b)`: the rule `name` applied to (a, b) as its op takes them (x, p),
# (x, y) or (xs, p): its forward on raw arrays, the recorded op on tensors (linear JVPs).
EXTRAS: list[str] = []

_SLOTS = {"x": 0, "y": 1, "out": OUT}


def _slots(names: str) -> tuple:
    """A derivative's saved slots from the names it reads ("x", "y", "out")."""
    slots = tuple(_SLOTS[n] for n in names.split())
    return slots


def _register(rule: Rule, factory):
    if rule.name in RULES:
        raise ValueError(f"duplicate rule {rule.name!r}")
    if rule.jvp is None and rule.vjp is not None:
        raise ValueError(f"rule {rule.name!r} declares no JVP")
    RULES[rule.name] = rule
    torch_name = TORCH_NAMES.get(rule.name)
    if isinstance(torch_name, str):
        rule.backward_name = torch_name
    elif torch_name is not None:
        rule.naming = torch_name
    op = factory(rule)
    OPS[rule.name] = op
    return op


def _zero_like(xp, x):
    """The tangent of an input that has none, for a linear rule: zeros of its type or dtype
    (an integer or boolean operand is a constant: its tangent is zero, as PyTorch's)."""
    if x.__class__ in (bool, int, float, complex):
        return x.__class__(0)
    return xp.zeros_like(x)


def _linear_jvp(name, several):
    """The JVP of a linear primitive: the primitive itself, applied to the tangents."""
    if not several:
        return lambda xp, ts, xs, outs, p: xp.primitive(name, ts[0], p)

    def linear_jvp(xp, ts, xs, outs, p):
        args = [_zero_like(xp, x) if t is None else t for t, x in zip(ts, xs)]
        return xp.primitive(name, args, p)

    return linear_jvp


def _bilinear_jvp(name, sequence):
    """The JVP of a primitive linear in each of its two inputs: op(tx, y) + op(x, ty)."""

    def bilinear_jvp(xp, ts, xs, outs, p):
        (tx, ty), (x, y) = ts, xs
        # A binary op takes (x, y); a sequence rule ((x, y), p).
        r = None
        if tx is not None:
            r = xp.primitive(name, [tx, y], p) if sequence else xp.primitive(name, tx, y)
        if ty is not None:
            r2 = xp.primitive(name, [x, ty], p) if sequence else xp.primitive(name, x, ty)
            r = r2 if r is None else r + r2
        return r

    return bilinear_jvp


def _unary_jvp(name, vjp, jvp) -> tuple:
    """A one-input rule's JVP in the one signature, and its formula `(xp, t, x, out, p)`
    when it has one (Rule.jvp_formulas), from `jvp` as `unary` takes it."""
    if jvp == "linear":
        return _linear_jvp(name, False), None
    if jvp == "symmetric":
        jvp = vjp
    if jvp == "reduction":

        def reduction_jvp(xp, ts, xs, outs, p):
            partials = vjp(xp, xp.ones_like(outs[0]), xs[0], outs[0], p)
            return xp.sum(partials * ts[0], axis=p[0], keepdims=p[1])

        return reduction_jvp, None
    if not callable(jvp):
        raise ValueError(f"rule {name!r}: unknown jvp {jvp!r}")

    def unary_jvp(xp, ts, xs, outs, p):
        return jvp(xp, ts[0], xs[0], outs[0], p)

    return unary_jvp, (jvp,)


def unary(name, fwd, vjp, saves="", *, jvp, view=False, complex=None, dtype_given=False):
    """A one-input rule; `vjp(xp, g, x, out, p)` returns x's gradient; `jvp`: an identity
    (see the module docstring) or a formula `(xp, t, x, out, p)`; `complex`, `dtype_given`:
    as `Rule`'s."""
    if saves:

        def rule_vjp(xp, g, s, p, needs):
            return (vjp(xp, g, s[0], s[1], p),)
    else:

        def rule_vjp(xp, g, s, p, needs):
            return (vjp(xp, g, None, None, p),)

    rule_jvp, jvp_formulas = _unary_jvp(name, vjp, jvp)
    rule = Rule(
        name, fwd, rule_vjp, (_slots(saves),), view=view, jvp=rule_jvp, complex=complex,
        form="unary", vjp_formulas=(vjp,), jvp_formulas=jvp_formulas, dtype_given=dtype_given,
    )  # fmt: skip
    return _register(rule, unary_primitive)


def elementwise(name, fwd, vjp, saves="", *, complex="holomorphic"):
    """A one-input elementwise function: a unary rule without parameters, whose Jacobian is
    diagonal, so its VJP formula is its JVP. Holomorphic unless `complex` says otherwise."""
    return unary(name, fwd, vjp, saves, jvp="symmetric", complex=complex)


_NOTHING = (None, None, None)


def binary(name, fwd, dx, dy, *, broadcast=True, jvp="symmetric", complex=None):
    """A two-input rule; `dx`, `dy`: (formula `(xp, g, x, y, out)`, the names it reads).
    `broadcast`: elementwise, gradients are summed back to each input's shape. `jvp`:
    "symmetric" (elementwise: each formula applied to its input's tangent, summed),
    "bilinear", or the full signature. `complex`: as `Rule`'s."""
    fx, fy = dx[0], dy[0]

    def rule_vjp(xp, g, s, p, needs):
        x, y, out = _NOTHING if s is None else s
        return (
            fx(xp, g, x, y, out) if needs[0] else None,
            fy(xp, g, x, y, out) if needs[1] else None,
        )

    jvp_formulas = None
    if jvp == "symmetric":
        if not broadcast:
            raise ValueError(f"rule {name!r}: only elementwise rules have a symmetric JVP")

        def rule_jvp(xp, ts, xs, outs, p):
            (tx, ty), (x, y), out = ts, xs, outs[0]
            r = None if tx is None else fx(xp, tx, x, y, out)
            if ty is not None:
                r2 = fy(xp, ty, x, y, out)
                r = r2 if r is None else r + r2
            return r

        jvp_formulas = (fx, fy)
    elif jvp == "bilinear":
        rule_jvp = _bilinear_jvp(name, False)
    else:
        rule_jvp = jvp

    rule = Rule(
        name,
        fwd,
        rule_vjp,
        (_slots(dx[1]), _slots(dy[1])),
        elementwise=broadcast,
        jvp=rule_jvp,
        complex=complex,
        form="binary",
        vjp_formulas=(fx, fy),
        jvp_formulas=jvp_formulas,
    )
    return _register(rule, binary_primitive)


def nary(
    name, fwd, vjp, saves, *, jvp, variadic=False, multi=False, broadcast=False, view=False,
    complex=None,
):  # fmt: skip
    """A rule over a sequence of inputs, its VJP in the one signature; `saves` per input
    (one entry for every input of a variadic rule): a tuple of input indices and OUT.
    `jvp`: "linear", "bilinear" (two inputs), or the full signature; `complex`: as `Rule`'s."""
    if jvp == "linear":
        jvp = _linear_jvp(name, True)
    elif jvp == "bilinear":
        jvp = _bilinear_jvp(name, True)
    rule = Rule(
        name, fwd, vjp, saves, variadic=variadic, multi=multi, elementwise=broadcast,
        view=view, jvp=jvp, complex=complex,
    )  # fmt: skip
    return _register(rule, primitive)


def linear_pair(name, fwd, adjoint, adjoint_fwd, *, view=False):
    """Two linear primitives, each the other's VJP (getitem and index_add, take and take_add):
    a VJP calls the other through the namespace (`xp.index_add(g, p)`), which applies its
    forward on raw arrays or records it on tensors, so both differentiate to any order.
    Forwards are `(xp, x, p)`; both share `p`. Each is its own JVP."""
    unary(
        name, fwd, lambda xp, g, x, out, p: getattr(xp, adjoint)(g, p), jvp="linear", view=view,
        complex="own",
    )  # fmt: skip
    unary(
        adjoint, adjoint_fwd, lambda xp, g, x, out, p: getattr(xp, name)(g, p), jvp="linear",
        complex="own",
    )  # fmt: skip
    EXTRAS.extend((name, adjoint))


def nondiff(name, fwd, *, multi=False):
    """A rule whose result carries no gradient (comparisons, indices, masks, integer and
    complex results): no VJP and no JVP (nor tangent), and no node is ever recorded. It is
    still an operation of the table, so features that follow every operation (compile's
    trace) see it. The forward is `(xp, xs, p)` over the raw arrays (or Python scalars) of
    the inputs."""
    rule = Rule(name, fwd, None, ((),), variadic=True, multi=multi)
    return _register(rule, primitive)


# Derivative formulas that a library may compute in one call of its own (its kernels in
# `_backend.derivative_kernels`): VJPs call them by name through the namespace, as the EXTRAS;
# each is `(g, out)` written with operators only, so that it runs on raw arrays and on tensors.
KERNELS: dict[str, Callable[..., Any]] = {
    "tanh_backward": lambda g, out: g * (1 - out * out),
    "sigmoid_backward": lambda g, out: g * (out * (1 - out)),
}


def crossing(name, fwd, adjoint):
    """A linear one-input rule whose result belongs to another array library than its input
    (vmap's boundary), and whose VJP is the rule `adjoint` (called through the namespace)."""
    rule = Rule(
        name,
        fwd,
        lambda xp, g, s, p, needs: (getattr(xp, adjoint)(g, p),),
        ((),),
        jvp=_linear_jvp(name, False),
        complex="own",  # moving values in or out of a batch: real coefficients
        form="unary",
    )
    _register(rule, crossing_primitive)
    EXTRAS.append(name)


RAW_NAMESPACES: dict[int, types.ModuleType] = {}


def raw_namespace(xp) -> types.ModuleType:
    """The namespace first-order VJPs (and JVPs) run with: backend namespace `xp` and the
    EXTRAS."""
    ns = RAW_NAMESPACES.get(id(xp))
    if ns is None:
        ns = types.ModuleType(f"chainrule.rules[{_backend.name_of(xp)}]")
        ns.__dict__.update({k: getattr(xp, k) for k in dir(xp) if not k.startswith("__")})
        for extension in ("linalg", "fft"):  # some libraries serve these on demand
            if extension not in ns.__dict__ and hasattr(xp, extension):
                ns.__dict__[extension] = getattr(xp, extension)
        for extra in EXTRAS:
            ns.__dict__[extra] = functools.partial(RULES[extra].fwd, xp)
        own = _backend.derivative_kernels(xp)
        for name, formula in KERNELS.items():
            ns.__dict__[name] = own.get(name, formula)
        ns.outside = lambda g, key: _backend.outside(xp, g.shape, key)
        ns.written_last = lambda g, key, taken: _backend.written_last(xp, g.shape, key, taken)
        ns.primitive = lambda name, a, b=None: RULES[name].fwd(xp, a, b)
        RAW_NAMESPACES[id(xp)] = ns
    return ns


# --------------------------------------------------------------------- helpers the families share


def _is_complex(x) -> bool:
    """Whether x (a raw array, a tensor or a Python scalar) holds complex values."""
    if x.__class__ in (bool, int, float):
        return False
    return x.__class__ is complex or _backend.dtype_kind(x.dtype) == "c"


def _nonzero(xp, d):
    """d with its zeros replaced by ones: a denominator safe at d == 0."""
    return xp.where(d == 0, 1.0, d)


def _along(axis, s):
    """An indexing key: slice `s` along `axis`, everything elsewhere."""
    return (slice(None),) * axis + (s, Ellipsis)
