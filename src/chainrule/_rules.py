"""THE table of derivative rules: every primitive as a forward on raw arrays, its VJP and its
JVP.

Each rule is written once against a namespace `xp`: the engine calls it with the backend's
namespace and raw arrays for a first-order backward, and with chainrule's namespace and
tensors under create_graph, so every rule differentiates again, to any order. Forward mode
runs the JVPs the same way.
Every VJP has the one signature of `_node.Rule`: `(xp, g, saved, p, needs)`, every JVP
`(xp, ts, xs, outs, p)`. The declaration helpers below let one-input and two-input rules
write just the formula of each derivative: unary `(xp, g, x, out, p)`, binary
`(xp, g, x, y, out)`; `saves` names the values each reads ("x", "y", "out"). Most JVPs need
no formula of their own, and say which identity gives them (`jvp=`):
- "symmetric": the Jacobian is symmetric (elementwise functions: diagonal; softmax), so the
  VJP formula applied to the tangent is the JVP. The default of `elementwise` and `binary`
  (where the JVP is the sum of both inputs' terms).
- "linear": the primitive is linear in its inputs, so its JVP is itself, applied to the
  tangents (zeros for inputs without one, integer and boolean ones too).
- "bilinear": linear in each input (matmul, conv2d): op(tx, y) + op(x, ty).
- "reduction": every input element reaches one output element (max, prod, logsumexp): the
  VJP of ones gives each element's partial derivative; the JVP sums them times the tangent.
The others are written out: `(xp, t, x, out, p)` for unary rules, the full signature
otherwise."""

from __future__ import annotations

import cmath
import functools
import math
import types
from collections.abc import Callable
from typing import Any

from . import _backend, _batching, _special_cases
from ._backend import count, expand_reduced, sum_to
from ._grad_fn_names import TORCH_NAMES
from ._node import OUT, ZERO, Rule
from ._tensor import binary_primitive, crossing_primitive, primitive, unary_primitive

__all__ = ["OPS", "RULES", "EXTRAS", "KERNELS", "raw_namespace", "argsort"]

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


def _unary_jvp(name, vjp, jvp):
    if jvp == "linear":
        return _linear_jvp(name, False)
    if jvp == "symmetric":
        jvp = vjp
    if jvp == "reduction":

        def reduction_jvp(xp, ts, xs, outs, p):
            partials = vjp(xp, xp.ones_like(outs[0]), xs[0], outs[0], p)
            return xp.sum(partials * ts[0], axis=p[0], keepdims=p[1])

        return reduction_jvp
    if not callable(jvp):
        raise ValueError(f"rule {name!r}: unknown jvp {jvp!r}")

    def unary_jvp(xp, ts, xs, outs, p):
        return jvp(xp, ts[0], xs[0], outs[0], p)

    unary_jvp.parts = (jvp,)  # the formula `(xp, t, x, out, p)`, for forward mode's lean path
    return unary_jvp


def unary(name, fwd, vjp, saves="", *, jvp, view=False, complex=None):
    """A one-input rule; `vjp(xp, g, x, out, p)` returns x's gradient; `jvp`: an identity
    (see the module docstring) or a formula `(xp, t, x, out, p)`; `complex`: as `Rule`'s."""
    if saves:

        def rule_vjp(xp, g, s, p, needs):
            return (vjp(xp, g, s[0], s[1], p),)
    else:

        def rule_vjp(xp, g, s, p, needs):
            return (vjp(xp, g, None, None, p),)

    rule_vjp.parts = (vjp,)  # the formula itself, for compile's replay (one call less)
    rule = Rule(
        name, fwd, rule_vjp, (_slots(saves),), view=view, jvp=_unary_jvp(name, vjp, jvp),
        complex=complex,
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

    rule_vjp.parts = (fx, fy)  # the formulas themselves, for compile's replay
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

        rule_jvp.parts = (fx, fy)  # each `(xp, t, x, y, out)`, for forward mode's lean path
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
    )
    _register(rule, crossing_primitive)
    EXTRAS.append(name)


_raw_namespaces: dict[int, types.ModuleType] = {}


def raw_namespace(xp) -> types.ModuleType:
    """The namespace first-order VJPs (and JVPs) run with: backend namespace `xp` and the
    EXTRAS."""
    ns = _raw_namespaces.get(id(xp))
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
        ns.primitive = lambda name, a, b=None: RULES[name].fwd(xp, a, b)
        _raw_namespaces[id(xp)] = ns
    return ns


# --------------------------------------------------------------------- elementwise, one input

elementwise("negative", lambda xp, x, p: -x, lambda xp, g, x, out, p: -g, complex="own")
elementwise("positive", lambda xp, x, p: +x, lambda xp, g, x, out, p: g, complex="own")
# copy: a new array of x's values (asarray(copy=True)), recorded as PyTorch's clone.
elementwise(
    "copy", lambda xp, x, p: xp.asarray(x, copy=True), lambda xp, g, x, out, p: g, complex="own"
)


def _is_complex(x) -> bool:
    """Whether x (a raw array, a tensor or a Python scalar) holds complex values."""
    if x.__class__ in (bool, int, float):
        return False
    return x.__class__ is complex or _backend.dtype_kind(x.dtype) == "c"


def _sgn(xp, x):
    """x / |x| (0 at 0) for complex x, the sign of a real x."""
    if not _is_complex(x):
        return xp.sign(x)
    r = xp.abs(x)
    return xp.where(r == 0, 0.0, x / _nonzero(xp, r))


def _abs_jvp(xp, t, x, out, p):
    # For complex z: d|z| = Re(conj(sgn z) dz).
    if _is_complex(x):
        return xp.real(xp.conj(_sgn(xp, x)) * t)
    return t * xp.sign(x)


# abs: subgradient 0 at 0 (sign(0) == 0), as PyTorch; for complex z the gradient of |z| is
# g sgn(z) = g z / |z| (0 at 0).
unary(
    "abs",
    lambda xp, x, p: xp.abs(x),
    lambda xp, g, x, out, p: g * _sgn(xp, x),
    "x",
    jvp=_abs_jvp,
    complex="own",
)
elementwise("square", lambda xp, x, p: x * x, lambda xp, g, x, out, p: g * (2 * x), "x")
elementwise("sqrt", lambda xp, x, p: xp.sqrt(x), lambda xp, g, x, out, p: g / (2 * out), "out")
elementwise("exp", lambda xp, x, p: xp.exp(x), lambda xp, g, x, out, p: g * out, "out")
elementwise(
    "expm1",
    lambda xp, x, p: _special_cases.expm1(xp, x),
    lambda xp, g, x, out, p: g * (out + 1),
    "out",
)
elementwise("log", lambda xp, x, p: xp.log(x), lambda xp, g, x, out, p: g / x, "x")
elementwise("log1p", lambda xp, x, p: xp.log1p(x), lambda xp, g, x, out, p: g / (x + 1), "x")
elementwise(
    "log2", lambda xp, x, p: xp.log2(x), lambda xp, g, x, out, p: g / (x * math.log(2)), "x"
)
elementwise(
    "log10", lambda xp, x, p: xp.log10(x), lambda xp, g, x, out, p: g / (x * math.log(10)), "x"
)
elementwise("sin", lambda xp, x, p: xp.sin(x), lambda xp, g, x, out, p: g * xp.cos(x), "x")
elementwise("cos", lambda xp, x, p: xp.cos(x), lambda xp, g, x, out, p: -g * xp.sin(x), "x")
elementwise("tan", lambda xp, x, p: xp.tan(x), lambda xp, g, x, out, p: g * (1 + out * out), "out")
elementwise(
    "asin", lambda xp, x, p: xp.asin(x), lambda xp, g, x, out, p: g / xp.sqrt(1 - x * x), "x"
)
elementwise(
    "acos", lambda xp, x, p: xp.acos(x), lambda xp, g, x, out, p: -g / xp.sqrt(1 - x * x), "x"
)
elementwise("atan", lambda xp, x, p: xp.atan(x), lambda xp, g, x, out, p: g / (1 + x * x), "x")
elementwise("sinh", lambda xp, x, p: xp.sinh(x), lambda xp, g, x, out, p: g * xp.cosh(x), "x")
elementwise("cosh", lambda xp, x, p: xp.cosh(x), lambda xp, g, x, out, p: g * xp.sinh(x), "x")
elementwise(
    "tanh",
    lambda xp, x, p: _special_cases.tanh(xp, x),
    lambda xp, g, x, out, p: xp.tanh_backward(g, out),
    "out",
)
elementwise(
    "asinh", lambda xp, x, p: xp.asinh(x), lambda xp, g, x, out, p: g / xp.sqrt(x * x + 1), "x"
)


def _acosh_vjp(xp, g, x, out, p):
    # For complex z, sqrt(z - 1) sqrt(z + 1): sqrt(z^2 - 1) takes the other branch in half
    # of the plane.
    if _is_complex(x):
        return g / (xp.sqrt(x - 1) * xp.sqrt(x + 1))
    return g / xp.sqrt(x * x - 1)


elementwise("acosh", lambda xp, x, p: xp.acosh(x), _acosh_vjp, "x")
elementwise("atanh", lambda xp, x, p: xp.atanh(x), lambda xp, g, x, out, p: g / (1 - x * x), "x")
elementwise(
    "sigmoid",
    lambda xp, x, p: 1 / (1 + xp.exp(-x)),
    lambda xp, g, x, out, p: xp.sigmoid_backward(g, out),
    "out",
)
# relu: subgradient 0 at 0, as PyTorch. The VJP multiplies by the 0/1 mask (a fifth of the
# time of where() in NumPy); so a NaN in g where x <= 0 stays NaN.
elementwise(
    "relu",
    lambda xp, x, p: xp.maximum(x, 0.0),
    lambda xp, g, x, out, p: g * xp.astype(out > 0, g.dtype),
    "out",
    complex=None,
)
elementwise("reciprocal", lambda xp, x, p: 1 / x, lambda xp, g, x, out, p: -g * (out * out), "out")


def _zero_vjp(xp, g, x, out, p):
    return xp.zeros_like(g)


def _sign_vjp(xp, g, x, out, p):
    # Real x: piecewise constant. Complex z = r s (s = z / r): ds = (dz - s Re(conj(s) dz)) / r,
    # whose adjoint gives (g - s Re(conj(s) g)) / r; 0 at z == 0, as PyTorch.
    if not _is_complex(x):
        return xp.zeros_like(g)
    r = xp.abs(x)
    return xp.where(r == 0, 0.0, (g - out * xp.real(xp.conj(out) * g)) / _nonzero(xp, r))


def _sign_jvp(xp, t, x, out, p):
    if not _is_complex(x):
        return xp.zeros_like(t)
    r = xp.abs(x)
    return xp.where(r == 0, 0.0, (t - out * xp.real(xp.conj(out) * t)) / _nonzero(xp, r))


# Piecewise-constant functions: zero gradient everywhere, as PyTorch (round of a complex
# value rounds both parts). The sign of a complex z is z / |z|, smooth away from 0.
unary("sign", lambda xp, x, p: xp.sign(x), _sign_vjp, "x out", jvp=_sign_jvp, complex="own")
elementwise("floor", lambda xp, x, p: xp.floor(x), _zero_vjp, complex=None)
elementwise("ceil", lambda xp, x, p: xp.ceil(x), _zero_vjp, complex=None)
elementwise("trunc", lambda xp, x, p: xp.trunc(x), _zero_vjp, complex=None)
elementwise("round", lambda xp, x, p: xp.round(x), _zero_vjp, complex="own")


# ----------------------------------------------------------------------------- complex parts
# Between complex and real values (PyTorch's convention: the gradient of a real loss by
# z = x + iy is dL/dx + i dL/dy). p = the complex dtype of the input (raw), for gradients
# sent back from a real result.


def _as_complex(xp, g, dtype):
    return g if _is_complex(g) else xp.astype(g, dtype)


unary(
    "real",
    lambda xp, x, p: xp.real(x),
    lambda xp, g, x, out, p: _as_complex(xp, g, p),
    jvp="linear",
    view=True,
    complex="own",
)
# imag: d Im(z) = Re(conj(i g) dz) for a real g: the gradient is i g.
unary(
    "imag",
    lambda xp, x, p: xp.imag(x),
    lambda xp, g, x, out, p: _as_complex(xp, g, p) * 1j,
    jvp="linear",
    view=True,
    complex="own",
)
unary(
    "conj",
    lambda xp, x, p: xp.conj(x),
    lambda xp, g, x, out, p: xp.conj(g),
    jvp="linear",
    complex="own",
)


def _angle_fwd(xp, x, p):
    if _is_complex(x):
        return xp.atan2(xp.imag(x), xp.real(x))
    # A real x: 0, or pi for negative values (NaN stays), as PyTorch.
    return xp.where(x < 0, math.pi, xp.where(xp.isnan(x), x, 0.0))


def _angle_vjp(xp, g, x, out, p):
    # d arg(z) = Im(dz / z) = Re(conj(i z g / |z|^2) dz): the gradient is i z g / |z|^2, 0 at
    # z == 0 (as PyTorch); a real x has gradient 0.
    if not _is_complex(x):
        return xp.zeros_like(g)
    r2 = xp.real(x * xp.conj(x))
    return xp.where(r2 == 0, 0.0, (g * x) * 1j / _nonzero(xp, r2))


def _angle_jvp(xp, t, x, out, p):
    if not _is_complex(x):
        return xp.zeros_like(t)
    r2 = xp.real(x * xp.conj(x))
    return xp.where(r2 == 0, 0.0, xp.imag(xp.conj(x) * t) / _nonzero(xp, r2))


unary("angle", _angle_fwd, _angle_vjp, "x", jvp=_angle_jvp, complex="own")


# -------------------------------------------------------------------- elementwise, two inputs
# Results are reduced back to each input's shape and dtype in BinaryNode, not here.

binary(
    "add",
    lambda xp, x, y: x + y,
    (lambda xp, g, x, y, out: g, ""),
    (lambda xp, g, x, y, out: g, ""),
    complex="own",
)
binary(
    "subtract", lambda xp, x, y: x - y,
    (lambda xp, g, x, y, out: g, ""), (lambda xp, g, x, y, out: -g, ""), complex="own",
)  # fmt: skip
binary(
    "multiply", lambda xp, x, y: x * y,
    (lambda xp, g, x, y, out: g * y, "y"), (lambda xp, g, x, y, out: g * x, "x"),
    complex="holomorphic",
)  # fmt: skip
binary(
    "divide", lambda xp, x, y: x / y,
    (lambda xp, g, x, y, out: g / y, "y"), (lambda xp, g, x, y, out: -g * x / (y * y), "x y"),
    complex="holomorphic",
)  # fmt: skip


def _pow_dx(xp, g, x, y, out):
    # y * x**(y-1), written so that y == 0 gives 0 and integral y needs no log. Only x == y == 0
    # (0 * inf) is masked: a mask at every y == 0 would cut d/dy of this (1/x there).
    if y.__class__ in (int, float, complex):
        if y == 0:
            return g * 0.0
        return g * (y * x ** (y - 1))
    return g * xp.where(xp.logical_and(y == 0, x == 0), 0.0, y * x ** (y - 1))


def _pow_dy(xp, g, x, y, out):
    # x**y * log(x), taken as 0 where x == 0 (the limit for y > 0), as PyTorch.
    if x.__class__ in (int, float, complex):
        if x == 0:
            return g * 0.0
        if x.__class__ is complex or (out.__class__ is not float and _is_complex(out)):
            return g * (out * cmath.log(x))
        return g * (out * (math.log(x) if x > 0 else math.nan))
    if x.dtype != out.dtype and _is_complex(out):  # a real x, a complex y: log of complex x
        x = xp.astype(x, out.dtype)
    return g * xp.where(x == 0, 0.0, out * xp.log(xp.where(x == 0, 1.0, x)))


binary("pow", lambda xp, x, y: x**y, (_pow_dx, "x y"), (_pow_dy, "x out"), complex="holomorphic")
binary(
    "atan2", lambda xp, x, y: xp.atan2(x, y),
    (lambda xp, g, x, y, out: g * y / (x * x + y * y), "x y"),
    (lambda xp, g, x, y, out: -g * x / (x * x + y * y), "x y"),
)  # fmt: skip


# maximum/minimum: where the inputs tie, the gradient is split evenly between them.
def _pick(xp, g, x, y, sign):
    wins = (x > y) if sign > 0 else (x < y)
    return xp.where(wins, g, xp.where(x == y, g * 0.5, 0.0))


binary(
    "maximum", lambda xp, x, y: xp.maximum(x, y),
    (lambda xp, g, x, y, out: _pick(xp, g, x, y, 1), "x y"),
    (lambda xp, g, x, y, out: _pick(xp, g, y, x, 1), "x y"),
)  # fmt: skip
binary(
    "minimum", lambda xp, x, y: xp.minimum(x, y),
    (lambda xp, g, x, y, out: _pick(xp, g, x, y, -1), "x y"),
    (lambda xp, g, x, y, out: _pick(xp, g, y, x, -1), "x y"),
)  # fmt: skip
# floor_divide: piecewise constant, zero gradient. remainder: x - floor(x / y) * y.
binary(
    "floor_divide", lambda xp, x, y: _special_cases.floor_divide(xp, x, y),
    (lambda xp, g, x, y, out: xp.zeros_like(g), ""),
    (lambda xp, g, x, y, out: xp.zeros_like(g), ""),
)  # fmt: skip
binary(
    "remainder", lambda xp, x, y: x % y,
    (lambda xp, g, x, y, out: g, ""), (lambda xp, g, x, y, out: -g * xp.floor(x / y), "x y"),
)  # fmt: skip


def _nonzero(xp, d):
    """d with its zeros replaced by ones: a denominator safe at d == 0."""
    return xp.where(d == 0, 1.0, d)


# hypot: subgradient 0 where x == y == 0, as the gradient of a norm at 0.
binary(
    "hypot", lambda xp, x, y: xp.hypot(x, y),
    (lambda xp, g, x, y, out: g * x / _nonzero(xp, out), "x out"),
    (lambda xp, g, x, y, out: g * y / _nonzero(xp, out), "y out"),
)  # fmt: skip
# logaddexp: d/dx = sigmoid(x - y), from the inputs as PyTorch, not as exp(x - out): right at
# an infinite input (exp(inf - inf) was NaN), and a gradient computed without the loss (Dask's
# lazy graphs) needs no logaddexp, the costliest kernel of a logistic regression's gradient.
# exp overflows where the inputs differ by more than ~709 (NumPy warns), giving the limit 0.
binary(
    "logaddexp", lambda xp, x, y: xp.logaddexp(x, y),
    (lambda xp, g, x, y, out: g / (1 + xp.exp(y - x)), "x y"),
    (lambda xp, g, x, y, out: g / (1 + xp.exp(x - y)), "x y"),
)  # fmt: skip
# copysign: |x| with the sign of y. d/dx is out / x (+1 or -1), 0 at x == 0 as abs; d/dy is 0
# (a jump at y == 0).
binary(
    "copysign", lambda xp, x, y: xp.copysign(x, y),
    (lambda xp, g, x, y, out: g * (out / _nonzero(xp, x)), "x out"),
    (lambda xp, g, x, y, out: xp.zeros_like(g), ""),
)  # fmt: skip
# nextafter: x moved by one unit in the last place towards y, so d/dx is 1 and d/dy is 0.
binary(
    "nextafter", lambda xp, x, y: xp.nextafter(x, y),
    (lambda xp, g, x, y, out: g, ""), (lambda xp, g, x, y, out: xp.zeros_like(g), ""),
)  # fmt: skip


# ----------------------------------------------------------------------------- reductions
# p = (axes, keepdims, input shape, input layout); axes normalised, sorted, non-negative; the
# layout is the backend's (Dask's chunks), for gradients spread back over the input.


def _spread(xp, g, p):
    """A reduction's gradient `g` back over the reduced axes, shaped like the input."""
    axes, keepdims, shape, layout = p
    if not keepdims:
        g = expand_reduced(xp, g, axes, len(shape))
    return _backend.broadcast_to(xp, g, shape, layout)


unary(
    "sum",
    lambda xp, x, p: xp.sum(x, axis=p[0], keepdims=p[1]),
    lambda xp, g, x, out, p: _spread(xp, g, p),
    jvp="linear",
    complex="own",
)
unary(
    "mean",
    lambda xp, x, p: xp.mean(x, axis=p[0], keepdims=p[1]),
    lambda xp, g, x, out, p: _spread(xp, g / count(p[2], p[0]), p),
    jvp="linear",
    complex="own",
)


def _extreme_vjp(xp, g, x, out, p):
    # Ties share the gradient evenly, as PyTorch's amax/amin.
    axes, keepdims, shape = p[:3]
    if not keepdims:
        out = expand_reduced(xp, out, axes, len(shape))
        g = expand_reduced(xp, g, axes, len(shape))
    hit = xp.astype(x == out, g.dtype)
    return g * hit / xp.sum(hit, axis=axes, keepdims=True)


unary(
    "max",
    lambda xp, x, p: xp.max(x, axis=p[0], keepdims=p[1]),
    _extreme_vjp,
    "x out",
    jvp="reduction",
)
unary(
    "min",
    lambda xp, x, p: xp.min(x, axis=p[0], keepdims=p[1]),
    _extreme_vjp,
    "x out",
    jvp="reduction",
)


def _prod_vjp(xp, g, x, out, p):
    # d prod / d x_i = prod of the others, exact at zeros: with no zero in the slice it is
    # P / x_i; with one zero z it is x_z * P / x_i off z and P at z (P: product of the
    # nonzero entries); with two or more zeros it is 0. Every branch is the exact polynomial
    # for its zero pattern, so it differentiates again (except at two or more zeros).
    axes = p[0]
    g = _spread(xp, g, p)
    nz = x != 0
    safe = xp.where(nz, x, 1.0)
    prod_nz = xp.prod(safe, axis=axes, keepdims=True)
    zeros = xp.sum(xp.astype(~nz, x.dtype), axis=axes, keepdims=True)
    zero_value = xp.sum(xp.where(nz, 0.0, x), axis=axes, keepdims=True)
    factor = xp.where(zeros == 0, 1.0, xp.where(zeros == 1, zero_value, 0.0))
    at_zero = xp.where(zeros == 1, prod_nz, 0.0)
    return g * xp.where(nz, factor * prod_nz / safe, at_zero)


unary(
    "prod",
    lambda xp, x, p: xp.prod(x, axis=p[0], keepdims=p[1]),
    _prod_vjp,
    "x",
    jvp="reduction",
    complex="holomorphic",
)


def _shift(xp, x, axes):
    """The largest value along `axes` (kept), subtracted for exp to stay finite: of the real
    parts for complex values (exp(x - m) has modulus exp(Re x - m))."""
    return xp.max(xp.real(x) if _is_complex(x) else x, axis=axes, keepdims=True)


def _logsumexp_fwd(xp, x, p):
    axes, keepdims, shape = p[:3]
    if x.size == 0:  # the log of an empty sum: -inf (without a divide-by-zero warning)
        return xp.sum(x, axis=axes, keepdims=keepdims) - math.inf
    m = _shift(xp, x, axes)
    m = xp.where(xp.isfinite(m), m, xp.zeros_like(m))
    s = xp.log(xp.sum(xp.exp(x - m), axis=axes, keepdims=True)) + m
    return s if keepdims else xp.reshape(s, tuple(n for i, n in enumerate(shape) if i not in axes))


def _logsumexp_vjp(xp, g, x, out, p):
    axes, keepdims, shape = p[:3]
    if not keepdims:
        g = expand_reduced(xp, g, axes, len(shape))
        out = expand_reduced(xp, out, axes, len(shape))
    return g * xp.exp(x - out)


# Holomorphic for complex values (PyTorch's logsumexp takes them; softmax and log_softmax,
# exp(x - logsumexp(x)) and x - logsumexp(x), are too): the principal branch of the log.
unary("logsumexp", _logsumexp_fwd, _logsumexp_vjp, "x out", jvp="reduction", complex="holomorphic")


def _softmax_fwd(xp, x, p):
    if x.size == 0:  # no maximum to subtract; an empty result, as PyTorch
        return xp.zeros_like(x)
    e = xp.exp(x - _shift(xp, x, p))
    return e / xp.sum(e, axis=p, keepdims=True)


def _log_softmax_fwd(xp, x, p):
    if x.size == 0:
        return xp.zeros_like(x)
    s = x - _shift(xp, x, p)
    return s - xp.log(xp.sum(xp.exp(s), axis=p, keepdims=True))


# softmax's Jacobian diag(s) - s s^T is symmetric; log_softmax's, I - 1 s^T, is not.
unary(
    "softmax",
    _softmax_fwd,
    lambda xp, g, x, out, p: out * (g - xp.sum(g * out, axis=p, keepdims=True)),
    "out",
    jvp="symmetric",
    complex="holomorphic",
)
unary(
    "log_softmax",
    _log_softmax_fwd,
    lambda xp, g, x, out, p: g - xp.exp(out) * xp.sum(g, axis=p, keepdims=True),
    "out",
    jvp=lambda xp, t, x, out, p: t - xp.sum(t * xp.exp(out), axis=p, keepdims=True),
    complex="holomorphic",
)


# ----------------------------------------------------------------------------- cumulative
# p = (axis, include_initial), axis non-negative. With include_initial the output has one more
# place along the axis, first, holding 0 (sum) or 1 (product): the VJPs drop it from g.


def _along(axis, s):
    """An indexing key: slice `s` along `axis`, everything elsewhere."""
    return (slice(None),) * axis + (s, Ellipsis)


def _reverse_cumsum(xp, v, axis):
    """r[i] = sum of v[j] over j >= i along axis."""
    return xp.flip(xp.cumulative_sum(xp.flip(v, axis=axis), axis=axis), axis=axis)


def _cumsum_vjp(xp, g, x, out, p):
    axis, initial = p
    if initial:
        g = g[_along(axis, slice(1, None))]
    return _reverse_cumsum(xp, g, axis)


def _cumprod_vjp(xp, g, x, out, p):
    # d out_k / d x_j = prod of x_i over i <= k, i != j (for k >= j). Where x_j != 0 the VJP is
    # reverse_cumsum(g * out)_j / x_j. At the first zero z of a slice it is reverse_cumsum(g * P)_z
    # with P the cumulative product of x with x_z set to 1; at later zeros every term holds x_z,
    # so it is 0. First order is exact everywhere. Second order is exact except for the
    # derivatives of the gradient at the second and later zeros of a slice, taken as 0.
    axis, initial = p
    if initial:
        g = g[_along(axis, slice(1, None))]
        out = out[_along(axis, slice(1, None))]
    zero = x == 0
    first = xp.logical_and(zero, xp.cumulative_sum(xp.astype(zero, x.dtype), axis=axis) == 1)
    off_zero = _reverse_cumsum(xp, g * out, axis) / _nonzero(xp, x)
    at_first = _reverse_cumsum(xp, g * xp.cumulative_prod(xp.where(first, 1.0, x), axis=axis), axis)
    return xp.where(zero, xp.where(first, at_first, 0.0), off_zero)


def _cumprod_jvp(xp, t, x, out, p):
    # d out_k = sum over j <= k of t_j * prod of x_i over i <= k, i != j. Before the first zero
    # of a slice that is out_k * cumulative_sum(t / x)_k; from the first zero z on, every term
    # but j = z holds x_z = 0: t_z * P_k, with P the cumulative product of x with x_z set to 1.
    axis, initial = p
    if initial:
        out = out[_along(axis, slice(1, None))]
    zero = x == 0
    zeros_so_far = xp.cumulative_sum(xp.astype(zero, x.dtype), axis=axis)
    first = xp.logical_and(zero, zeros_so_far == 1)
    before = out * xp.cumulative_sum(t / _nonzero(xp, x), axis=axis)
    t_first = xp.sum(xp.where(first, t, 0.0), axis=axis, keepdims=True)
    after = t_first * xp.cumulative_prod(xp.where(first, 1.0, x), axis=axis)
    dout = xp.where(zeros_so_far == 0, before, after)
    if initial:
        dout = xp.concat([xp.zeros_like(dout[_along(axis, slice(0, 1))]), dout], axis=axis)
    return dout


unary(
    "cumulative_sum",
    lambda xp, x, p: xp.cumulative_sum(x, axis=p[0], include_initial=p[1]),
    _cumsum_vjp,
    jvp="linear",
    complex="own",
)
unary(
    "cumulative_prod",
    lambda xp, x, p: xp.cumulative_prod(x, axis=p[0], include_initial=p[1]),
    _cumprod_vjp,
    "x out",
    jvp=_cumprod_jvp,
    complex="holomorphic",
)


# ----------------------------------------------------------------------------- linear algebra


def _matmul_grads(xp, g, x, y, want_x: bool):
    """matmul's VJP for x (want_x) or y. A 1-D operand's gradient is a vector-matrix product
    (or an outer product for the other operand), not a product of padded matrices."""
    if x.ndim > 1 and y.ndim > 1:
        if want_x:
            return sum_to(xp, xp.matmul(g, xp.matrix_transpose(y)), x.shape)
        return sum_to(xp, xp.matmul(xp.matrix_transpose(x), g), y.shape)
    if x.ndim == 1 and y.ndim == 1:
        return g * y if want_x else g * x
    if y.ndim == 1:  # x (..., n, k) @ y (k,) -> g (..., n)
        if want_x:
            return xp.expand_dims(g, axis=-1) * y
        if x.ndim == 2:
            return xp.matmul(g, x)
        rows = xp.matmul(xp.expand_dims(g, axis=-2), x)
        return xp.reshape(sum_to(xp, rows, (1, y.shape[0])), y.shape)
    # x (k,) @ y (..., k, m) -> g (..., m)
    if not want_x:
        return sum_to(xp, xp.expand_dims(x, axis=-1) * xp.expand_dims(g, axis=-2), y.shape)
    if y.ndim == 2:
        return xp.matmul(y, g)
    cols = xp.matmul(y, xp.expand_dims(g, axis=-1))
    return xp.reshape(sum_to(xp, cols, (x.shape[0], 1)), x.shape)


def _matmul_fwd(xp, x, y):
    """x @ y; operands whose shapes don't fit get an error naming both shapes, not the
    library's text (NumPy's speaks of gufunc core dimensions). No cost when they fit."""
    try:
        return xp.matmul(x, y)
    except Exception as error:
        problem = _matmul_misfit(tuple(x.shape), tuple(y.shape))
        if problem is None:
            raise
        raise ValueError(f"matmul: {tuple(x.shape)} @ {tuple(y.shape)}: {problem}") from error


def _matmul_misfit(a: tuple, b: tuple) -> str | None:
    """What keeps shapes a and b from a matrix product, in words; None if it's not the
    contracted axes (the library's own error stands)."""
    if not a or not b:
        return "matmul takes arrays of at least one axis, not 0-d ones"
    second = "first" if len(b) == 1 else "second-to-last"
    if a[-1] != b[-1 if len(b) == 1 else -2]:
        k = b[-1 if len(b) == 1 else -2]
        return f"the last axis of the first ({a[-1]}) must match the {second} of the second ({k})"
    return None


binary(
    "matmul", _matmul_fwd,
    (lambda xp, g, x, y, out: _matmul_grads(xp, g, x, y, True), "x y"),
    (lambda xp, g, x, y, out: _matmul_grads(xp, g, x, y, False), "x y"),
    broadcast=False,
    jvp="bilinear",
    complex="holomorphic",
)  # fmt: skip


# ----------------------------------------------------------------------------- shape and order
# p carries the input shape where the VJP needs it, so that no input is kept alive for it.

unary(
    "reshape",
    lambda xp, x, p: xp.reshape(x, p[0]),
    lambda xp, g, x, out, p: xp.reshape(g, p[1]),
    jvp="linear",
    view=True,
    complex="own",
)
unary(
    "permute_dims",
    lambda xp, x, p: xp.permute_dims(x, p),
    lambda xp, g, x, out, p: xp.permute_dims(g, tuple(sorted(range(len(p)), key=p.__getitem__))),
    jvp="linear",
    view=True,
    complex="own",
)
unary(
    "broadcast_to",
    lambda xp, x, p: xp.broadcast_to(x, p[0]),
    lambda xp, g, x, out, p: sum_to(xp, g, p[1]),
    jvp="linear",
    view=True,
    complex="own",
)


def _astype(xp, x, dtype):
    """x cast to dtype; a complex x to a real dtype by its real part (NumPy warns)."""
    if _backend.dtype_kind(dtype) != "c" and _is_complex(x):
        x = xp.real(x)
    return xp.astype(x, dtype)


# p = (target dtype, source dtype). Between real and complex dtypes the cast keeps the real
# part, and the gradient of a real source is the real part of g.
unary(
    "astype",
    lambda xp, x, p: _astype(xp, x, p[0]),
    lambda xp, g, x, out, p: _astype(xp, g, p[1]),
    jvp="linear",
    complex="own",
)
unary(
    "flip",
    lambda xp, x, p: xp.flip(x, axis=p),
    lambda xp, g, x, out, p: xp.flip(g, axis=p),
    jvp="linear",
    view=True,
    complex="own",
)


# Variadic rules: one save entry for every input.


def _concat_vjp(xp, g, s, p, needs):
    axis, sizes = p
    grads = []
    start = 0
    lead = (slice(None),) * axis
    for n, need in zip(sizes, needs):
        grads.append(g[lead + (slice(start, start + n), ...)] if need else None)
        start += n
    return grads


nary(
    "concat",
    lambda xp, xs, p: xp.concat(xs, axis=p[0]),
    _concat_vjp,
    ((),),
    jvp="linear",
    variadic=True,
    complex="own",
)


def _stack_vjp(xp, g, s, p, needs):
    lead = (slice(None),) * p
    return [g[lead + (i, ...)] if need else None for i, need in enumerate(needs)]


nary(
    "stack", lambda xp, xs, p: xp.stack(xs, axis=p), _stack_vjp, ((),), jvp="linear",
    variadic=True, complex="own",
)  # fmt: skip


def _where_vjp(xp, g, s, p, needs):
    c = s[0]
    return (
        None,
        xp.where(c, g, 0.0) if needs[1] else None,
        xp.where(c, 0.0, g) if needs[2] else None,
    )


def _where_jvp(xp, ts, xs, outs, p):
    # Linear in x1 and x2, with the condition as it is (not a tangent).
    _, t1, t2 = ts
    c, x1, x2 = xs
    return xp.where(
        c, _zero_like(xp, x1) if t1 is None else t1, _zero_like(xp, x2) if t2 is None else t2
    )


# where(condition, x1, x2): the condition gets no gradient; x1 and x2 read it.
nary(
    "where",
    lambda xp, xs, p: xp.where(*xs),
    _where_vjp,
    ((), (0,), (0,)),
    jvp=_where_jvp,
    broadcast=True,
    complex="own",
)


# ----------------------------------------------------------------------------- indexing
# getitem and index_add are each other's VJP (both linear); so are take and take_add.
# p = (key or indices, axis, input shape, input dtype); keys hold raw arrays.


# A basic key (ints, slices, None, Ellipsis) selects a view, as PyTorch's; other keys copy.
linear_pair(
    "getitem",
    lambda xp, x, p: _backend.getitem(xp, x, p[0]),
    "index_add",
    _backend.index_add,
    view=lambda p: _backend.is_basic(p[0]),
)
linear_pair(
    "take", lambda xp, x, p: _backend.take(xp, x, p[0], p[1]), "take_add", _backend.take_add
)


# ----------------------------------------------------------------------------- writes
# setitem: out = x with out[key] = v (v broadcast to x[key]). p = (key, v's shape, whether
# the key covers every element of x).


def _setitem_fwd(xp, xs, p):
    x, v = xs
    return _backend.assign(xp, xp.asarray(x, copy=True), p[0], v)


def _setitem_vjp(xp, g, s, p, needs):
    key, vshape, covered = p
    # A write over every element leaves x a gradient known to be zero (PyTorch: zeros): the
    # values x held no longer matter, and a NaN among them (scikit-learn overwrites a 0/0 so)
    # must not reach the gradient through 0 * NaN further back.
    gx = None
    if needs[0]:
        gx = ZERO if covered else xp.where(xp.outside(g, key), g, 0.0)
    gv = sum_to(xp, _backend.getitem(xp, g, key), vshape) if needs[1] else None
    return (gx, gv)


nary("setitem", _setitem_fwd, _setitem_vjp, ((), ()), jvp="linear", complex="own")


# ----------------------------------------------------------------------------- repeat, roll, tile
# p carries what the VJP needs (counts, shifts, shapes) precomputed by the public function.


def _repeat_vjp(xp, g, x, out, p):
    # Each input element fills `repeats` consecutive places along the axis: split that axis
    # into (input size, repeats) and sum the copies.
    return xp.sum(xp.reshape(g, p[2]), axis=p[1] + 1)


unary(
    "repeat", lambda xp, x, p: xp.repeat(x, p[0], axis=p[1]), _repeat_vjp, jvp="linear",
    complex="own",
)  # fmt: skip
# p = (shift, axis, the opposite shift): a roll is undone by rolling back.
unary(
    "roll",
    lambda xp, x, p: xp.roll(x, p[0], axis=p[1]),
    lambda xp, g, x, out, p: xp.roll(g, p[2], axis=p[1]),
    jvp="linear",
    complex="own",
)


def _tile_vjp(xp, g, x, out, p):
    # Along each axis the output is `r` blocks of the input: split every axis into
    # (r, size), sum over the block axes, drop the leading axes tiling added.
    split, blocks, shape = p[1:]
    return xp.reshape(xp.sum(xp.reshape(g, split), axis=blocks), shape)


unary("tile", lambda xp, x, p: xp.tile(x, p[0]), _tile_vjp, jvp="linear", complex="own")


# ----------------------------------------------------------------------------- convolution
# conv2d((x, w), p): the cross-correlation of x (N, C, H, W) with w (O, C, kh, kw), with
# p = ((stride_h, stride_w), (pad_h, pad_w), (kh, kw), (H, W), x's dtype): im2col by strided
# slices of the zero-padded input (a loop over the kernel's offsets, never over pixels) and
# one matrix product. The VJPs are the transposed products; x's sends w^T g back through the
# same windows: each offset's slice is getitem's adjoint, index_add, into the padded shape,
# summed and cropped. Padding is a concat, so that it records on tensors.


def _conv_pad(xp, x, ph, pw):
    n, c, h, w = x.shape
    if pw:
        side = xp.broadcast_to(xp.zeros_like(x[..., :1]), (n, c, h, pw))
        x = xp.concat([side, x, side], axis=3)
    if ph:
        edge = xp.broadcast_to(xp.zeros_like(x[:, :, :1, :]), (n, c, ph, w + 2 * pw))
        x = xp.concat([edge, x, edge], axis=2)
    return x


def _conv_output_size(p, h: int, w: int) -> tuple[int, int]:
    """(Ho, Wo) of conv2d with parameters p for an input of height h and width w."""
    (sh, sw), (ph, pw), (kh, kw) = p[:3]
    return (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1


def _conv_windows(p, h, w):
    """For each kernel offset (i, j), the key of the padded input's elements it meets."""
    (sh, sw), _, (kh, kw) = p[:3]
    ho, wo = _conv_output_size(p, h, w)
    rows = [slice(i, i + sh * (ho - 1) + 1, sh) for i in range(kh)]
    cols = [slice(j, j + sw * (wo - 1) + 1, sw) for j in range(kw)]
    return [(slice(None), slice(None), r, c) for r in rows for c in cols]


def _conv_columns(xp, x, p):
    """im2col: (N, C kh kw, Ho Wo), column l holding the input patch under output pixel l."""
    n, c, h, w = x.shape
    keys = _conv_windows(p, h, w)
    padded = _conv_pad(xp, x, *p[1])
    ho, wo = _conv_output_size(p, h, w)
    return xp.reshape(xp.stack([padded[k] for k in keys], axis=2), (n, c * len(keys), ho * wo))


def _conv2d_fwd(xp, xs, p):
    x, w = xs
    n, _, h, wd = x.shape
    o = w.shape[0]
    out = xp.matmul(xp.reshape(w, (o, -1)), _conv_columns(xp, x, p))
    return xp.reshape(out, (n, o, *_conv_output_size(p, h, wd)))


def _conv2d_vjp(xp, g, s, p, needs):
    x, w = s[0], s[1]
    n, o, ho, wo = g.shape
    g2 = xp.reshape(g, (n, o, ho * wo))
    gx = gw = None
    if needs[1]:
        cols = _conv_columns(xp, x, p)
        gw = xp.reshape(
            xp.sum(xp.matmul(g2, xp.matrix_transpose(cols)), axis=0), (o, x.shape[1], *p[2])
        )
    if needs[0]:
        c = w.shape[1]
        (ph, pw), (h, wd), dtype = p[1], p[3], p[4]
        keys = _conv_windows(p, h, wd)
        pieces = xp.matmul(xp.matrix_transpose(xp.reshape(w, (o, -1))), g2)
        pieces = xp.reshape(pieces, (n, c, len(keys), ho, wo))
        shape = (n, c, h + 2 * ph, wd + 2 * pw)
        padded = None
        for i, key in enumerate(keys):
            part = xp.index_add(pieces[:, :, i, ...], (key, shape, dtype))
            padded = part if padded is None else padded + part
        gx = padded[:, :, ph : ph + h, pw : pw + wd]
    return (gx, gw)


# x's gradient reads w; w's reads x.
nary("conv2d", _conv2d_fwd, _conv2d_vjp, ((1,), (0,)), jvp="bilinear", complex="holomorphic")


# ----------------------------------------------------------------------------- unstack


def _unstack_vjp(xp, g, s, p, needs):
    # Outputs that received no gradient contribute zeros (all outputs share shape and dtype).
    zero = xp.zeros_like(next(gi for gi in g if gi is not None))
    return (xp.stack([zero if gi is None else gi for gi in g], axis=p),)


nary(
    "unstack",
    lambda xp, xs, p: xp.unstack(xs[0], axis=p),
    _unstack_vjp,
    ((),),
    jvp="linear",
    multi=True,
    view=True,
    complex="own",
)


# ----------------------------------------------------------------------------- take_along_axis
# take_along_axis and take_along_add are each other's VJP (both linear).
# p = (indices, axis, input shape, input dtype): indices non-negative, of the input's rank and
# broadcastable with it off the axis; the output has the broadcast shape.


linear_pair(
    "take_along_axis",
    lambda xp, x, p: _backend.take_along_axis(xp, x, p[0], p[1]),
    "take_along_add",
    _backend.take_along_add,
)


# ----------------------------------------------------------------------------- linalg extension
# The primitives of chainrule.linalg. Forwards call the backend's `xp.linalg`; VJPs use
# standard functions and `xp.linalg` (chainrule.linalg under create_graph), so they
# differentiate again. mT(a) is the matrix transpose, mH(a) the conjugate transpose (mT for
# real values). inv, det and solve are holomorphic; the decompositions of Hermitian matrices
# (cholesky, eigh), qr, svd and pinv have formulas written with mH, for real and complex
# values. cholesky and eigh read only one triangle of a matrix taken as symmetric
# (Hermitian): their gradient is the symmetric (Hermitian) one, as in PyTorch.


def _mT(xp, a):
    return xp.matrix_transpose(a)


def _mH(xp, a):
    return xp.matrix_transpose(xp.conj(a) if _is_complex(a) else a)


def _gap_inverse(xp, d, offdiagonal):
    """F[..., i, j] = 1 / (d_j - d_i) off the diagonal, 1 on it (where it only meets zeros).
    Equal values off the diagonal give inf: degenerate spectra have no unique gradient."""
    gaps = xp.expand_dims(d, axis=-2) - xp.expand_dims(d, axis=-1)
    return 1 / xp.where(offdiagonal, gaps, 1.0)


# diagonal and diagonal_embed are each other's VJP (both linear). p = (offset, input shape,
# `on`: bool (M, N), True on the diagonal, `index`: for each row, its element of the diagonal
# (clipped), length of the diagonal).


def _diagonal_embed_fwd(xp, g, p):
    offset, shape, on, index, length = p
    if length == 0:
        return xp.zeros(shape, dtype=g.dtype)
    rows = xp.expand_dims(xp.take(g, index, axis=-1), axis=-1)
    return xp.where(on, rows, 0.0)


linear_pair(
    "linalg_diagonal",
    lambda xp, x, p: _backend.diagonal(xp, x, p[0]),
    "linalg_diagonal_embed",
    _diagonal_embed_fwd,
    view=True,
)

# inv: d(A^-1) = -A^-1 dA A^-1, so gA = -out^T g out^T.
unary(
    "linalg_inv",
    lambda xp, x, p: _backend.inv(xp, x),
    lambda xp, g, x, out, p: -xp.matmul(xp.matmul(_mT(xp, out), g), _mT(xp, out)),
    "out",
    jvp=lambda xp, t, x, out, p: -xp.matmul(xp.matmul(out, t), out),
    complex="holomorphic",
)


def _det_vjp(xp, g, x, out, p):
    # d det(A) = det(A) tr(A^-1 dA): gA = g det(A) A^-T (A must be invertible).
    scale = xp.expand_dims(xp.expand_dims(g * out, axis=-1), axis=-1)
    return scale * _mT(xp, _backend.inv(xp, x))


def _logdet_jvp(xp, t, x):
    """d log|det A| = tr(A^-1 dA), summed as the product of A^-T and dA."""
    return xp.sum(_mT(xp, _backend.inv(xp, x)) * t, axis=(-2, -1))


unary(
    "linalg_det",
    lambda xp, x, p: xp.linalg.det(x),
    _det_vjp,
    "x out",
    jvp=lambda xp, t, x, out, p: out * _logdet_jvp(xp, t, x),
    complex="holomorphic",
)


def _slogdet_vjp(xp, g, s, p, needs):
    # With tau = tr(A^-1 dA): d log|det A| = Re(tau); a real sign is piecewise constant (no
    # gradient), a complex one (det / |det|) moves by sign i Im(tau). So gA = c A^-H with
    # c = g_logabsdet - i Im(conj(g_sign) sign).
    gs, gl = g
    a, sign = s[0], s[1]
    c = None
    if gs is not None and _is_complex(sign):
        c = -1j * xp.imag(xp.conj(gs) * sign)
    if gl is not None:
        c = gl if c is None else c + gl
    if c is None:
        return (None,)
    scale = xp.expand_dims(xp.expand_dims(c, axis=-1), axis=-1)
    return (scale * _mH(xp, _backend.inv(xp, a)),)


def _slogdet_jvp(xp, ts, xs, outs, p):
    tau = _logdet_jvp(xp, ts[0], xs[0])
    if not _is_complex(tau):
        return (None, tau)
    return (outs[0] * (1j * xp.imag(tau)), xp.real(tau))


nary(
    "linalg_slogdet",
    lambda xp, xs, p: tuple(xp.linalg.slogdet(xs[0])),
    _slogdet_vjp,
    ((0, OUT),),
    jvp=_slogdet_jvp,
    multi=True,
    complex="own",
)


def _solve_vjp(xp, g, s, p, needs):
    # A X = B: gB = solve(A^T, g), gA = -gB X^T, each summed over the batch axes it was
    # broadcast along. A 1-D B is one vector for every matrix of A.
    a, b, out = s
    at = _mT(xp, a)
    if b.ndim == 1:
        gb = xp.linalg.solve(at, xp.expand_dims(g, axis=-1))[..., 0]
        ga = -(xp.expand_dims(gb, axis=-1) * xp.expand_dims(out, axis=-2)) if needs[0] else None
    else:
        gb = xp.linalg.solve(at, g)
        ga = -(gb @ _mT(xp, out)) if needs[0] else None
    return (
        None if ga is None else sum_to(xp, ga, a.shape),
        sum_to(xp, gb, b.shape) if needs[1] else None,
    )


def _solve_jvp(xp, ts, xs, outs, p):
    # A X = B: dX = A^-1 (dB - dA X). A 1-D B is one vector for every matrix of A.
    (ta, tb), (a, b), x = ts, xs, outs[0]
    vector = b.ndim == 1
    if vector:
        x = xp.expand_dims(x, axis=-1)
        tb = None if tb is None else xp.expand_dims(tb, axis=-1)
    rhs = tb
    if ta is not None:
        rhs = -(ta @ x) if rhs is None else rhs - ta @ x
    dx = xp.linalg.solve(a, rhs)
    return dx[..., 0] if vector else dx


nary(
    "linalg_solve",
    lambda xp, xs, p: xp.linalg.solve(*xs),
    _solve_vjp,
    ((0, 1, OUT),) * 2,
    jvp=_solve_jvp,
    complex="holomorphic",
)


def _cholesky_vjp(xp, g, x, out, p):
    # A = L L^H: gA = L^-H S L^-1 with S = (tril(L^H g) + tril(L^H g, -1)^H) / 2 (its
    # diagonal's real part, for complex values), by two solves with L^H (the standard has no
    # triangular solve). S is Hermitian, so solving L^H Y = S and then L^H Z = Y^H gives Z = gA.
    lh = _mH(xp, out)
    w = xp.tril(lh @ g)
    s = (w + _mH(xp, xp.tril(w, k=-1))) / 2
    if _is_complex(s):
        s = (s + _mH(xp, s)) / 2
    return xp.linalg.solve(lh, _mH(xp, xp.linalg.solve(lh, s)))


def _cholesky_jvp(xp, t, x, out, p):
    # A = L L^H: dL = L Phi(L^-1 dA L^-H), Phi: the lower triangle with half the diagonal. dA
    # is taken Hermitian (as the VJP's gradient is). L^-1 dA L^-H = L^-1 (L^-1 dA)^H for a
    # Hermitian dA: two solves.
    da = (t + _mH(xp, t)) / 2
    m = xp.linalg.solve(out, _mH(xp, xp.linalg.solve(out, da)))
    lower = xp.tril(m)
    return out @ (lower - xp.triu(lower) / 2)


unary(
    "linalg_cholesky",
    lambda xp, x, p: _backend.cholesky(xp, x),
    _cholesky_vjp,
    "out",
    jvp=_cholesky_jvp,
    complex="own",
)


def _qr_square_or_tall(xp, gq, gr, q, r):
    """gA for A = QR with R square and invertible (its diagonal real):
    gA = (gQ + Q copyltu(gR R^H - Q^H gQ)) R^-H, copyltu(M) = triu(M) + triu(M, 1)^H with
    the real part of M's diagonal."""
    c = None if gr is None else gr @ _mH(xp, r)
    if gq is not None:
        qtg = _mH(xp, q) @ gq
        c = -qtg if c is None else c - qtg
    n = xp.triu(c) + _mH(xp, xp.triu(c, k=1))
    if _is_complex(n):
        n = (n + _mH(xp, n)) / 2
    b = q @ n
    if gq is not None:
        b = b + gq
    return _mH(xp, xp.linalg.solve(r, _mH(xp, b)))


def _qr_vjp(xp, g, s, p, needs):
    gq, gr = g
    _, q, r = s
    m, n = q.shape[-2], r.shape[-1]
    if m > n and p == "complete":
        raise NotImplementedError(
            "linalg.qr: the gradient for mode='complete' of a matrix with more rows than "
            "columns is not implemented (Q's extra columns are not unique); use mode='reduced'"
        )
    if m >= n:
        return (_qr_square_or_tall(xp, gq, gr, q, r),)
    # Wide (m < n): A = [X | Y] with X = QU square and Y = QV. Then gY = Q gV, and X is
    # a square QR whose gQ gains Y gV^T.
    u, v = r[..., :m], r[..., m:]
    gu, gv = (None, xp.zeros_like(v)) if gr is None else (gr[..., :m], gr[..., m:])
    y_gv = (q @ v) @ _mH(xp, gv)
    gq = y_gv if gq is None else gq + y_gv
    return (xp.concat([_qr_square_or_tall(xp, gq, gu, q, u), q @ gv], axis=-1),)


def _qr_square_or_tall_jvp(xp, da, q, r):
    """(dQ, dR) for A = QR with R square and invertible (its diagonal real). With
    X = Q^H dA R^-1 = Q^H dQ + dR R^-1, Q^H dQ skew-Hermitian and dR R^-1 upper triangular
    with a real diagonal: Q^H dQ = W - W^H + i Im(diag X) with W the strict lower triangle
    of X, dR = (X - Q^H dQ) R, dQ = dA R^-1 - Q (X - Q^H dQ)."""
    da_rinv = _mT(xp, xp.linalg.solve(_mT(xp, r), _mT(xp, da)))
    x = _mH(xp, q) @ da_rinv
    w = xp.tril(x, k=-1)
    upper = x - (w - _mH(xp, w))
    if _is_complex(upper):
        upper = upper - (xp.triu(xp.tril(upper)) - _mH(xp, xp.triu(xp.tril(upper)))) / 2
    return da_rinv - q @ upper, upper @ r


def _qr_jvp(xp, ts, xs, outs, p):
    t, (q, r) = ts[0], outs
    m, n = q.shape[-2], r.shape[-1]
    if m > n and p == "complete":
        # Q's extra columns are not unique: their tangent is taken as 0 (as PyTorch); R's
        # extra rows are zeros.
        k = n
        dq, dr = _qr_square_or_tall_jvp(xp, t, q[..., :k], r[..., :k, :])
        return (
            xp.concat([dq, xp.zeros_like(q[..., k:])], axis=-1),
            xp.concat([dr, xp.zeros_like(r[..., k:, :])], axis=-2),
        )
    if m >= n:
        return _qr_square_or_tall_jvp(xp, t, q, r)
    # Wide (m < n): A = [X | Y] with X = QU square and Y = QV: dV = Q^T (dY - dQ V).
    u, v = r[..., :m], r[..., m:]
    dq, du = _qr_square_or_tall_jvp(xp, t[..., :m], q, u)
    dv = _mH(xp, q) @ (t[..., m:] - dq @ v)
    return dq, xp.concat([du, dv], axis=-1)


def _qr_fwd(xp, xs, p):
    # With no more rows than columns the complete factors are the reduced ones (which are all
    # that some libraries give).
    x = xs[0]
    return tuple(xp.linalg.qr(x, mode="reduced" if x.shape[-2] <= x.shape[-1] else p))


nary(
    "linalg_qr",
    _qr_fwd,
    _qr_vjp,
    ((OUT,),),
    jvp=_qr_jvp,
    multi=True,
    complex="own",
)


def _eigh_vjp(xp, g, s, p, needs):
    # A = V diag(w) V^H: gA = V (diag(gw) + F o (X - X^H) / 2) V^H, X = V^H gV,
    # F_ij = 1 / (w_j - w_i): inf/NaN for repeated eigenvalues, as in PyTorch. (Complex
    # eigenvectors are defined up to a phase each: a loss that depends on it has no gradient.)
    gw, gv = g
    _, w, v = s
    vt = _mH(xp, v)
    if gv is None:
        return ((v * xp.expand_dims(gw, axis=-2)) @ vt,)
    x = vt @ gv
    inner = _gap_inverse(xp, w, p) * ((x - _mH(xp, x)) / 2)
    if gw is not None:
        inner = xp.where(p, inner, xp.expand_dims(gw, axis=-2))
    return (v @ inner @ vt,)


def _eigh_jvp(xp, ts, xs, outs, p):
    # A = V diag(w) V^H, P = V^H dA V (dA taken Hermitian): dw = diag(P) (real), dV = V (F o P)
    # with F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it.
    t, (w, v) = ts[0], outs
    da = (t + _mH(xp, t)) / 2
    da_v = da @ v
    if _is_complex(v):
        dw = xp.real(xp.sum(xp.conj(v) * da_v, axis=-2))
    else:
        dw = xp.sum(v * da_v, axis=-2)
    inner = xp.where(p, _gap_inverse(xp, w, p) * (_mH(xp, v) @ da_v), 0.0)
    return dw, v @ inner


nary(
    "linalg_eigh",
    lambda xp, xs, p: tuple(xp.linalg.eigh(xs[0])),
    _eigh_vjp,
    ((OUT,),),
    jvp=_eigh_jvp,
    multi=True,
    complex="own",
)


def _eig_parts(xp, w, v, offdiagonal):
    """E_ij = 1 / (w_j - w_i) off the diagonal, 0 on it; and V^H V."""
    e = xp.where(offdiagonal, _gap_inverse(xp, w, offdiagonal), 0.0)
    return e, _mH(xp, v) @ v


def _eig_vjp(xp, g, s, p, needs):
    # A = V diag(w) V^-1, columns of V of unit norm (each with a free phase). With
    # P = V^-1 dA V: dw = diag(P), dV = V (E o P + diag(d)), d_i = -Re((V^H V (E o P))_ii)
    # (the norm stays 1; the phase is taken fixed). The adjoint: W = V^H gV,
    # gA = V^-H (diag(gw) + conj(E) o (W - V^H V diag(Re diag(W)))) V^H; a real A gets its
    # real part.
    gw, gv = g
    _, w, v = s
    vh = _mH(xp, v)
    if gv is None:
        inner = xp.where(p[1], 0.0, xp.expand_dims(gw, axis=-2))
    else:
        e, vhv = _eig_parts(xp, w, v, p[1])
        wm = vh @ gv
        re_diag = xp.real(xp.linalg.diagonal(wm))
        inner = xp.conj(e) * (wm - vhv * xp.expand_dims(re_diag, axis=-2))
        if gw is not None:
            inner = xp.where(p[1], inner, xp.expand_dims(gw, axis=-2))
    return (xp.linalg.solve(vh, inner @ vh),)


def _eig_jvp(xp, ts, xs, outs, p):
    t, (w, v) = ts[0], outs
    pm = xp.linalg.solve(v, xp.astype(t, v.dtype) @ v)  # a real tangent: PyTorch won't promote
    e, vhv = _eig_parts(xp, w, v, p[1])
    c = e * pm
    d = -xp.real(xp.linalg.diagonal(vhv @ c))
    return xp.linalg.diagonal(pm), v @ (c + xp.where(p[1], 0.0, xp.expand_dims(d, axis=-2)))


# eig: eigenvalues and eigenvectors as complex dtype p[0]; p[1]: True off the diagonal.
nary(
    "linalg_eig",
    lambda xp, xs, p: tuple(xp.astype(r, p[0]) for r in xp.linalg.eig(xs[0])),
    _eig_vjp,
    ((OUT,),),
    jvp=_eig_jvp,
    multi=True,
    complex="own",
)


def _svd_vjp(xp, g, saved, p, needs):
    # A = U diag(s) Vh, k = min(m, n), V = Vh^H, X = U^H gU, Y = V^H gV, F_ij = 1/(s_j^2 - s_i^2):
    # gA = U (diag(gS) + (F o (X - X^H)) diag(s) + diag(s) (F o (Y - Y^H))) Vh
    #      + (I - U U^H) gU diag(1/s) Vh + U diag(1/s) gV^H (I - V V^H).
    # Complex values add i Im(X_ii - Y_ii) / (2 s_i) on the diagonal (the phases of the
    # singular vectors: a loss that depends on them has no gradient). Repeated singular
    # values give inf/NaN (when gU or gVh is used), as in PyTorch.
    full, offdiagonal = p
    gu, gs, gvh = g
    _, u, s, vh = saved
    m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    if full and m != n:
        if gu is not None or gvh is not None:
            raise NotImplementedError(
                "linalg.svd: the gradient through U or Vh for full_matrices=True of a "
                "non-square matrix is not implemented (their extra columns are not unique); "
                "use full_matrices=False"
            )
        u, vh = u[..., :k], vh[..., :k, :]
    if gu is None and gvh is None:
        return ((u * xp.expand_dims(gs, axis=-2)) @ vh,)
    s_col, s_row = xp.expand_dims(s, axis=-1), xp.expand_dims(s, axis=-2)
    f = _gap_inverse(xp, s * s, offdiagonal)
    inner = None
    phase = None  # Im(X_ii - Y_ii), complex values only
    complex_values = _is_complex(u)
    if gu is not None:
        x = _mH(xp, u) @ gu
        inner = f * (x - _mH(xp, x)) * s_row
        if complex_values:
            phase = xp.imag(xp.linalg.diagonal(x))
    if gvh is not None:
        y = vh @ _mH(xp, gvh)
        term = s_col * (f * (y - _mH(xp, y)))
        inner = term if inner is None else inner + term
        if complex_values:
            im_y = xp.imag(xp.linalg.diagonal(y))
            phase = -im_y if phase is None else phase - im_y
    diagonal = gs
    if phase is not None:
        phase = phase * 1j / (2 * s)
        diagonal = phase if gs is None else gs + phase
    if diagonal is not None:
        inner = xp.where(offdiagonal, inner, xp.expand_dims(diagonal, axis=-2))
    elif complex_values:
        inner = xp.where(offdiagonal, inner, 0.0)
    ga = u @ inner @ vh
    if gu is not None and m > k:
        ga = ga + ((gu - u @ x) / s_row) @ vh
    if gvh is not None and n > k:
        ga = ga + u @ ((gvh - _mH(xp, y) @ vh) / s_col)
    return (ga,)


def _svd_jvp(xp, ts, xs, outs, p):
    # A = U diag(s) V^H, k = min(m, n), P = U^H dA V, F_ij = 1 / (s_j^2 - s_i^2) off the
    # diagonal, 0 on it: ds = Re diag(P),
    # dU = U (F o (P S + S P^H)) + (I - U U^H) dA V S^-1,
    # dV = V (F o (S P + P^H S)) + (I - V V^H) dA^H U S^-1,
    # and for complex values the phases: U gains i Im(P_ii) / (2 s_i) on the diagonal of its
    # first term, V loses it (only their difference is defined).
    # With full_matrices=True, the extra columns of U (rows of Vh) of a non-square matrix are
    # not unique: their tangent is taken as 0, as PyTorch.
    full, offdiagonal = p
    t, (u, s, vh) = ts[0], outs
    m, n, k = u.shape[-2], vh.shape[-1], s.shape[-1]
    extra = full and m != n
    if extra:
        u_all, vh_all = u, vh
        u, vh = u[..., :k], vh[..., :k, :]
    v = _mH(xp, vh)
    dav = t @ v
    datu = _mH(xp, t) @ u
    pm = _mH(xp, u) @ dav
    s_col, s_row = xp.expand_dims(s, axis=-1), xp.expand_dims(s, axis=-2)
    f = xp.where(offdiagonal, _gap_inverse(xp, s * s, offdiagonal), 0.0)
    complex_values = _is_complex(u)
    if complex_values:
        ds = xp.real(xp.sum(xp.conj(u) * dav, axis=-2))
    else:
        ds = xp.sum(u * dav, axis=-2)
    du_inner = f * (pm * s_row + s_col * _mH(xp, pm))
    dv_inner = f * (s_col * pm + _mH(xp, pm) * s_row)
    if complex_values:
        pd = xp.imag(xp.linalg.diagonal(pm))
        phase = xp.where(offdiagonal, 0.0, xp.expand_dims(pd * 0.5j / s, axis=-2))
        du_inner = du_inner + phase
        dv_inner = dv_inner - phase
    du = u @ du_inner
    dv = v @ dv_inner
    if m > k:
        du = du + (dav - u @ pm) / s_row
    if n > k:
        dv = dv + (datu - v @ _mH(xp, pm)) / s_row
    dvh = _mH(xp, dv)
    if extra:
        du = xp.concat([du, xp.zeros_like(u_all[..., k:])], axis=-1)
        dvh = xp.concat([dvh, xp.zeros_like(vh_all[..., k:, :])], axis=-2)
    return du, ds, dvh


nary(
    "linalg_svd",
    lambda xp, xs, p: tuple(xp.linalg.svd(xs[0], full_matrices=p[0])),
    _svd_vjp,
    ((OUT,),),
    jvp=_svd_jvp,
    multi=True,
    complex="own",
)


def _pinv_vjp(xp, g, x, out, p):
    # P = pinv(A), exact where the rank of A is locally constant (Golub & Pereyra):
    # gA = -P^H g P^H + (I - A P) g^H P P^H + P^H P g^H (I - P A).
    pt, gt = _mH(xp, out), _mH(xp, g)
    ga = -(pt @ g @ pt)
    ga = ga + (gt - x @ (out @ gt)) @ (out @ pt)
    return ga + (pt @ out) @ (gt - (gt @ out) @ x)


def _pinv_jvp(xp, t, x, out, p):
    # dP = -P dA P + P P^H dA^H (I - A P) + (I - P A) dA^H P^H P.
    pt, dat = _mH(xp, out), _mH(xp, t)
    dp = -(out @ t @ out)
    dp = dp + (out @ pt) @ (dat - (dat @ x) @ out)
    return dp + (dat - out @ (x @ dat)) @ (pt @ out)


unary(
    "linalg_pinv",
    lambda xp, x, p: xp.linalg.pinv(x, rtol=p),
    _pinv_vjp,
    "x out",
    jvp=_pinv_jvp,
    complex="own",
)


# ----------------------------------------------------------------------------- vmap's boundary
# batch: an array of the library below a vmap level as a Batched array of that level (see
# _batching), p = (level, batch size, axis): `axis` becomes the batch axis, or with None the
# value is the same for every sample. unbatch, its adjoint: the batch axis back at `axis`, or
# with None the sum over the batch. Each is the other's VJP.

crossing("batch", lambda xp, x, p: _batching.batch(x, *p), "unbatch")
crossing("unbatch", lambda xp, x, p: _batching.unbatch(x, *p), "batch")


# ----------------------------------------------------------------------------- without gradient
# Results that carry no gradient, computed on raw arrays. Every computation on a tensor's
# values goes through a rule: a value computed beside the table would be invisible to
# compile's trace, and a replay would reuse the traced value.


def _backend_function(name):
    return lambda xp, xs, p: getattr(xp, name)(*xs)


for _name in (
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "isnan", "isinf",
    "isfinite", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift",
    "signbit",
):  # fmt: skip
    nondiff(_name, _backend_function(_name))
# p = (axes, keepdims)
nondiff("all", lambda xp, xs, p: xp.all(xs[0], axis=p[0], keepdims=p[1]))
nondiff("any", lambda xp, xs, p: xp.any(xs[0], axis=p[0], keepdims=p[1]))
nondiff("argmax", lambda xp, xs, p: xp.argmax(xs[0], axis=p[0], keepdims=p[1]))
nondiff("argmin", lambda xp, xs, p: xp.argmin(xs[0], axis=p[0], keepdims=p[1]))
nondiff("count_nonzero", lambda xp, xs, p: xp.count_nonzero(xs[0], axis=p[0], keepdims=p[1]))
nondiff("nonzero", lambda xp, xs, p: tuple(xp.nonzero(xs[0])), multi=True)
# cast: astype to a dtype without gradient (or of a tensor that needs none); p = dtype.
nondiff("cast", lambda xp, xs, p: xp.astype(xs[0], p))


def _integer_reduction(xp, xs, p):
    # sum, prod, cumulative_sum or cumulative_prod accumulated in integer dtype p[1] (bools
    # cast first); p = (name, dtype, keyword arguments as pairs).
    name, dtype, kwargs = p
    x = xs[0]
    if _backend.dtype_kind(x.dtype) == "b":
        x = xp.astype(x, dtype)
    return getattr(xp, name)(x, dtype=dtype, **dict(kwargs))


nondiff("integer_reduction", _integer_reduction)


def _searchsorted(xp, xs, p):
    # xs = (sorted 1-D x1, values[, sorter]); p = side.
    x1, v = xs[0], xs[1]
    sorter = xs[2] if len(xs) > 2 else None
    if not _backend.is_array(v):
        v = xp.asarray(v, dtype=x1.dtype)
    return _backend.searchsorted(xp, x1, v, p, sorter)


nondiff("searchsorted", _searchsorted)


def _isin(xp, xs, p):
    # Whether each element of xs[0] equals some element of xs[1] (none of them if p), shaped
    # like xs[0]: by sorting xs[1] and searching.
    a, b = xs
    dtype = xp.result_type(a, b)
    av = xp.reshape(xp.astype(a, dtype), (-1,))
    bv = xp.reshape(xp.astype(b, dtype), (-1,))
    kind = _backend.dtype_kind(dtype)
    if bv.shape[0] == 0:
        found = xp.zeros(av.shape, dtype=xp.bool)
    elif kind == "c":  # no order to search in: compare every pair
        found = xp.any(xp.expand_dims(av, axis=1) == xp.expand_dims(bv, axis=0), axis=1)
    else:
        if kind == "b":
            av, bv = xp.astype(av, xp.int8), xp.astype(bv, xp.int8)
        s = xp.sort(bv)
        at = xp.searchsorted(s, av)
        at = xp.where(at < s.shape[0], at, xp.zeros_like(at))
        found = xp.take(s, at) == av
    if p:
        found = xp.logical_not(found)
    return xp.reshape(found, a.shape)


nondiff("isin", _isin)


def argsort(xp, a, axis: int, descending: bool, stable: bool):
    """The order that sorts raw array `a` along `axis`, equal values in their original order
    when stable (descending too)."""
    if not descending:
        return xp.argsort(a, axis=axis, stable=stable)
    # Descending, equal values in their original order: sort the reversed axis ascending,
    # reverse the result, and map positions in the reversed axis back.
    order = xp.flip(xp.argsort(xp.flip(a, axis=axis), axis=axis, stable=stable), axis=axis)
    return (a.shape[axis] - 1) - order


# p = (axis, descending, stable)
nondiff("argsort", lambda xp, xs, p: argsort(xp, xs[0], *p))


# The standard leaves the order of unique values open, and NumPy >= 2.3 no longer sorts them;
# chainrule sorts (NaNs last, complex values by real then imaginary part), as the libraries
# users meet do and as code such as scikit-learn's label encoding relies on.


def _ascending(xp, values):
    """The order that sorts the 1-D `values`."""
    kind = _backend.dtype_kind(values.dtype)
    if kind == "b":
        values = xp.astype(values, xp.int8)
    if kind != "c":
        return xp.argsort(values, stable=True)
    order = xp.argsort(xp.imag(values), stable=True)
    return xp.take(order, xp.argsort(xp.take(xp.real(values), order), stable=True))


def _unique(xp, xs, p):
    """unique_<p> of x with its values sorted (and indices, inverse, counts to match)."""
    found = getattr(xp, f"unique_{p}")(xs[0])
    if p == "values":
        return (xp.take(found, _ascending(xp, found)),)
    order = _ascending(xp, found[0])
    at = {"all": 2, "inverse": 1}.get(p)  # where the inverse indices are
    out = [r if i == at else xp.take(r, order) for i, r in enumerate(found)]
    if at is not None:
        inverse = found[at]
        # Each element's new index: the position of its old index in `order`.
        rank = xp.astype(xp.argsort(order), inverse.dtype)
        out[at] = xp.reshape(xp.take(rank, xp.reshape(inverse, (-1,))), inverse.shape)
    return tuple(out)


nondiff("unique", _unique, multi=True)  # p = "all", "counts", "inverse" or "values"


def _wrap_indices(xp, xs, p):
    # Indices along an axis of length p, negative ones counted from the end.
    idx = xs[0]
    return xp.where(idx < 0, idx + p, idx)


nondiff("wrap_indices", _wrap_indices)
# repeat by counts: the source position along the axis of each output element; p = length.
nondiff("repeat_sources", lambda xp, xs, p: xp.repeat(xp.arange(p), xs[0]))


def _var_rounding(xp, xs, p):
    # var's deviations d of x where a slice along axes p holds equal values (else 0): the
    # rounding error of the mean, which var subtracts so that such a slice has variance 0.
    x, d = xs
    equal = xp.max(x, axis=p, keepdims=True) == xp.min(x, axis=p, keepdims=True)
    return xp.where(equal, d, xp.zeros_like(d))


nondiff("var_rounding", _var_rounding)
nondiff(  # xs = (x[, rtol])
    "linalg_matrix_rank",
    lambda xp, xs, p: _backend.matrix_rank(xp, xs[0], xs[1] if len(xs) > 1 else None),
)
nondiff("linalg_eigvalsh", lambda xp, xs, p: xp.linalg.eigvalsh(xs[0]))
nondiff("linalg_svdvals", lambda xp, xs, p: _backend.svdvals(xp, xs[0]))


# ----------------------------------------------------------------------------- fft extension
# p = (transform, its keyword arguments as pairs, the complex dtype a real input is cast to
# first (or None), the input's shape). Every transform is linear over the reals, so it is its
# own JVP. Its VJP is the adjoint: the inverse transform with the other norm ("backward" and
# "forward" swap) over the output's sizes, then cropped or zero-padded back to the input's.
# A half spectrum (rfft) is the adjoint of a transform of its zero-padded bins; the inverse
# of one (irfft) counts each bin that stands for two (a frequency and its conjugate) twice.


def _fft_axes(kw: dict, ndim: int) -> tuple[int, ...]:
    return tuple(a % ndim for a in kw["axes"]) if "axes" in kw else (kw["axis"] % ndim,)


def _fft_fwd(xp, x, p):
    name, kwargs, cast, _ = p
    if cast is not None:
        x = xp.astype(x, cast)
    kw = dict(kwargs)
    axes = _fft_axes(kw, x.ndim)
    if not axes and name in ("fftn", "ifftn"):
        return xp.asarray(x, copy=True)  # over no axes, the identity (JAX refuses no axes)
    return getattr(xp.fft, name)(_backend.unchunked(xp, x, axes), **kw)


_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _resized(xp, g, axis: int, size: int):
    """g cropped or zero-padded to `size` along axis."""
    have = g.shape[axis]
    if have > size:
        return g[_along(axis, slice(0, size))]
    if have < size:
        pad = list(g.shape)
        pad[axis] = size - have
        zeros = xp.broadcast_to(xp.zeros_like(g[_along(axis, slice(0, 1))]), tuple(pad))
        return xp.concat([g, zeros], axis=axis)
    return g


def _both_bins_twice(xp, g, axis: int, n: int):
    """g (bins 0 .. n // 2 of a real signal of length n along axis) with the bins that
    stand for a frequency and its conjugate (1 .. (n - 1) // 2) doubled."""
    h = (n + 1) // 2
    if h <= 1:
        return g
    parts = [g[_along(axis, slice(0, 1))], 2 * g[_along(axis, slice(1, h))]]
    if g.shape[axis] > h:
        parts.append(g[_along(axis, slice(h, None))])
    return xp.concat(parts, axis=axis)


def _fft_vjp(xp, g, x, out, p):
    name, kwargs, cast, shape = p
    kw = dict(kwargs)
    norm = kw["norm"]
    axes = _fft_axes(kw, len(shape))
    g = _backend.unchunked(xp, g, axes)
    if name in ("rfft", "ihfft", "rfftn"):
        # The sizes of the real signal transformed.
        if "s" in kw:
            sizes = tuple(kw["s"])
        else:
            sizes = (shape[axes[0]] if kw["n"] is None else kw["n"],)
        if name == "ihfft":  # conj(rfft(x, other norm))
            gx = xp.real(xp.fft.ifftn(xp.conj(g), s=sizes, axes=axes, norm=norm))
        else:
            gx = xp.real(xp.fft.ifftn(g, s=sizes, axes=axes, norm=_SWAP[norm]))
    elif name in ("irfft", "hfft", "irfftn"):
        sizes = tuple(g.shape[a] for a in axes)
        if name == "hfft":  # irfft(conj(x), other norm)
            gx = xp.conj(xp.fft.rfftn(g, s=sizes, axes=axes, norm=norm))
        else:
            gx = xp.fft.rfftn(g, s=sizes, axes=axes, norm=_SWAP[norm])
        gx = _both_bins_twice(xp, gx, axes[-1], sizes[-1])
    else:
        inverse = {"fft": "ifftn", "fftn": "ifftn", "ifft": "fftn", "ifftn": "fftn"}[name]
        sizes = tuple(g.shape[a] for a in axes)
        gx = getattr(xp.fft, inverse)(g, s=sizes, axes=axes, norm=_SWAP[norm]) if axes else g
    for a in axes:
        gx = _resized(xp, gx, a, shape[a])
    return gx if cast is None else xp.real(gx)


unary("fft", _fft_fwd, _fft_vjp, jvp="linear", complex="own")


# ----------------------------------------------------------------------------- special functions
# chainrule.special's primitives, real values only: forwards from the library's kernels
# (_backend.special_function: SciPy's for NumPy), derivatives written with other primitives of
# this block (through xp.primitive), so they differentiate again, to any order. A parameter p
# is an order held fixed (polygamma's n, jv's v). Derivatives in an order or a shape
# parameter that SciPy has no function for raise NotImplementedError (as PyTorch's).

_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2 * math.pi)


def _kernel(name):
    def fwd(xp, x, p):
        return _backend.special_function(xp, name)(x)

    return fwd


def _ordered_kernel(name):
    """A kernel taking its fixed order first: f(p, x)."""

    def fwd(xp, x, p):
        return _backend.special_function(xp, name)(p, x)

    return fwd


def _binary_kernel(name):
    def fwd(xp, x, y):
        return _backend.special_function(xp, name)(x, y)

    return fwd


def _special(name, fwd, vjp, saves):
    """A real elementwise special function: its VJP formula is its JVP."""
    return unary(name, fwd, vjp, saves, jvp="symmetric", complex=None)


def _not_in(name, argument):
    def refuse(xp, g, x, y, out):
        raise NotImplementedError(
            f"the derivative of {name} in its argument {argument} is not implemented"
        )

    return refuse


_special(
    "erf",
    _kernel("erf"),
    lambda xp, g, x, out, p: g * ((2 / _SQRT_PI) * xp.exp(-x * x)),
    "x",
)
_special(
    "erfc",
    _kernel("erfc"),
    lambda xp, g, x, out, p: g * ((-2 / _SQRT_PI) * xp.exp(-x * x)),
    "x",
)
_special(
    "erfinv",
    _kernel("erfinv"),
    lambda xp, g, x, out, p: g * ((_SQRT_PI / 2) * xp.exp(out * out)),
    "out",
)
_special(
    "erfcinv",
    _kernel("erfcinv"),
    lambda xp, g, x, out, p: g * ((-_SQRT_PI / 2) * xp.exp(out * out)),
    "out",
)
_special(
    "ndtr", _kernel("ndtr"), lambda xp, g, x, out, p: g * (xp.exp(-x * x / 2) / _SQRT_2PI), "x"
)
_special(
    "ndtri",
    _kernel("ndtri"),
    lambda xp, g, x, out, p: g * (_SQRT_2PI * xp.exp(out * out / 2)),
    "out",
)
# log ndtr(x)' = ndtr'(x) / ndtr(x), written with the output: finite far into the lower tail.
_special(
    "log_ndtr",
    _kernel("log_ndtr"),
    lambda xp, g, x, out, p: g * (xp.exp(-x * x / 2 - out) / _SQRT_2PI),
    "x out",
)
_special(
    "gammaln", _kernel("gammaln"), lambda xp, g, x, out, p: g * xp.primitive("digamma", x), "x"
)
_special(
    "digamma", _kernel("digamma"), lambda xp, g, x, out, p: g * xp.primitive("polygamma", x, 1), "x"
)
_special(
    "polygamma",
    _ordered_kernel("polygamma"),
    lambda xp, g, x, out, p: g * xp.primitive("polygamma", x, p + 1),
    "x",
)
_special("i0", _kernel("i0"), lambda xp, g, x, out, p: g * xp.primitive("i1", x), "x")
# i1' = (i0 + I_2) / 2 and J_1' = (J_0 - J_2) / 2 (no division by x: exact at 0 to every order);
# i0e = exp(-|x|) i0 and i1e = exp(-|x|) i1 likewise.
_special(
    "i1",
    _kernel("i1"),
    lambda xp, g, x, out, p: g * ((xp.primitive("i0", x) + xp.primitive("iv", x, 2.0)) / 2),
    "x",
)
_special(
    "i0e",
    _kernel("i0e"),
    lambda xp, g, x, out, p: g * (xp.primitive("i1e", x) - xp.sign(x) * out),
    "x out",
)
_special(
    "i1e",
    _kernel("i1e"),
    lambda xp, g, x, out, p: (
        g * ((xp.primitive("i0e", x) + xp.primitive("ive", x, 2.0)) / 2 - xp.sign(x) * out)
    ),
    "x out",
)
_special("j0", _kernel("j0"), lambda xp, g, x, out, p: -g * xp.primitive("j1", x), "x")
_special(
    "j1",
    _kernel("j1"),
    lambda xp, g, x, out, p: g * ((xp.primitive("j0", x) - xp.primitive("jv", x, 2.0)) / 2),
    "x",
)
# Bessel functions of a fixed real order v = p, in x: J_v' = (J_{v-1} - J_{v+1}) / 2,
# I_v' = (I_{v-1} + I_{v+1}) / 2, and ive = exp(-|x|) iv.
_special(
    "jv",
    _ordered_kernel("jv"),
    lambda xp, g, x, out, p: (
        g * ((xp.primitive("jv", x, p - 1) - xp.primitive("jv", x, p + 1)) / 2)
    ),
    "x",
)
_special(
    "iv",
    _ordered_kernel("iv"),
    lambda xp, g, x, out, p: (
        g * ((xp.primitive("iv", x, p - 1) + xp.primitive("iv", x, p + 1)) / 2)
    ),
    "x",
)
_special(
    "ive",
    _ordered_kernel("ive"),
    lambda xp, g, x, out, p: (
        g * ((xp.primitive("ive", x, p - 1) + xp.primitive("ive", x, p + 1)) / 2 - xp.sign(x) * out)
    ),
    "x out",
)
# Two inputs. zeta(s, q): d/dq = -s zeta(s + 1, q); none in s (as PyTorch). The regularised
# incomplete gammas P(a, x), Q(a, x): d/dx = +-exp(-x) x^(a-1) / Gamma(a); none in a.
binary(
    "zeta",
    _binary_kernel("zeta"),
    (_not_in("zeta", "x"), ""),
    (lambda xp, g, x, y, out: g * (-x * xp.primitive("zeta", x + 1, y)), "x y"),
    complex=None,
)


def _gammainc_density(xp, a, x):
    return xp.exp((a - 1) * xp.log(x) - x - xp.primitive("gammaln", a))


binary(
    "gammainc",
    _binary_kernel("gammainc"),
    (_not_in("gammainc", "a"), ""),
    (lambda xp, g, x, y, out: g * _gammainc_density(xp, x, y), "x y"),
    complex=None,
)
binary(
    "gammaincc",
    _binary_kernel("gammaincc"),
    (_not_in("gammaincc", "a"), ""),
    (lambda xp, g, x, y, out: -g * _gammainc_density(xp, x, y), "x y"),
    complex=None,
)


# B(a, b) and log B(a, b): d/da log B = digamma(a) - digamma(a + b), and symmetrically.
def _betaln_da(xp, a, b):
    return xp.primitive("digamma", a) - xp.primitive("digamma", a + b)


binary(
    "betaln",
    _binary_kernel("betaln"),
    (lambda xp, g, x, y, out: g * _betaln_da(xp, x, y), "x y"),
    (lambda xp, g, x, y, out: g * _betaln_da(xp, y, x), "x y"),
    complex=None,
)
binary(
    "beta",
    _binary_kernel("beta"),
    (lambda xp, g, x, y, out: g * out * _betaln_da(xp, x, y), "x y out"),
    (lambda xp, g, x, y, out: g * out * _betaln_da(xp, y, x), "x y out"),
    complex=None,
)
