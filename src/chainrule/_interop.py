"""How tensors meet other array code: NumPy's ufuncs and functions dispatch to chainrule
(NEP 13 `__array_ufunc__`, NEP 18 `__array_function__`) and stay differentiable, or raise
TypeError where chainrule has no equivalent; `__array_namespace__`, DLPack and `to_device`.
Tensor binds these in `_namespace`; chainrule's functions are looked up when called."""

from __future__ import annotations

import inspect
import sys

from . import _backend
from ._backend import normalize_axes
from ._tensor import Tensor, grad_mode

np = _backend.np

API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12")


class _Missing(LookupError):
    """chainrule lacks the function that a NumPy function or ufunc maps to."""


def _chainrule():
    """The chainrule package (it imports this module, so it is looked up when needed)."""
    return sys.modules[__package__]


def _fn(name: str):
    fn = getattr(_chainrule(), name, None)
    if fn is None:
        raise _Missing(name)
    return fn


def _unsupported(what: str, hint: str) -> TypeError:
    return TypeError(
        f"chainrule does not implement {what} for Tensors; {hint} convert with .numpy() "
        "(this drops the graph)"
    )


def _missing_hint(name: str) -> str:
    return f"it needs chainrule.{name}, which this version lacks:"


_GENERIC_HINT = "use chainrule's functions of the same meaning, or"


def _is_default(value, default) -> bool:
    """Whether an argument is its parameter's default (compared by value for plain Python
    values only: an array must not be compared elementwise)."""
    if value is default:
        return True
    return (
        value.__class__ in (bool, int, float, str)
        and value.__class__ is default.__class__
        and value == default
    )


# ----------------------------------------------------------------------------- ufuncs (NEP 13)

# NumPy's ufuncs whose name and meaning are the Array API standard's.
_SAME_NAME = (
    "add", "bitwise_and", "bitwise_or", "bitwise_xor", "ceil", "copysign", "cos", "cosh",
    "divide", "equal", "exp", "expm1", "floor", "floor_divide", "greater", "greater_equal",
    "hypot", "isfinite", "isinf", "isnan", "less", "less_equal", "log", "log10", "log1p", "log2",
    "logaddexp", "logical_and", "logical_not", "logical_or", "logical_xor", "matmul", "maximum",
    "minimum", "multiply", "negative", "nextafter", "not_equal", "positive", "reciprocal",
    "remainder", "sign", "signbit", "sin", "sinh", "sqrt", "square", "subtract", "tan", "tanh",
    "trunc", "vecdot",
)  # fmt: skip
# NumPy's ufunc name -> the standard's name of the same function.
UFUNCS = {name: name for name in _SAME_NAME} | {
    "absolute": "abs", "arccos": "acos", "arccosh": "acosh", "arcsin": "asin",
    "arcsinh": "asinh", "arctan": "atan", "arctan2": "atan2", "arctanh": "atanh",
    "conjugate": "conj", "invert": "bitwise_invert", "left_shift": "bitwise_left_shift",
    "power": "pow", "right_shift": "bitwise_right_shift",
}  # fmt: skip
# Ufunc keywords accepted at these values (NumPy leaves out `out` when it is None).
_UFUNC_DEFAULTS = {"where": True, "casting": "same_kind", "order": "K", "subok": True}


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """`np.sin(t)`, `ndarray * t`: NumPy's ufunc call as the chainrule function of the same
    meaning. Other ufunc methods, `out=`, `where=` and ufuncs without one raise TypeError."""
    name = ufunc.__name__
    own = getattr(np, name, None) is ufunc
    what = f"numpy.{name}" if own else f"the ufunc {name!r}"
    if method != "__call__":
        raise _unsupported(f"{what}.{method}", _GENERIC_HINT)
    for key, value in kwargs.items():
        if value is not None and not _is_default(value, _UFUNC_DEFAULTS.get(key)):
            raise _unsupported(f"{what} with {key}=", f"call it without {key}= or")
    target = UFUNCS.get(name) if own else None
    if target is None:
        raise _unsupported(what, _GENERIC_HINT)
    try:
        fn = _fn(target)
    except _Missing:
        raise _unsupported(what, _missing_hint(target)) from None
    return fn(*inputs)


# ----------------------------------------------------------------------------- functions (NEP 18)
# Each handler takes NumPy's parameters by name (those the call gave) and calls chainrule.
# A parameter that a handler does not take must keep its NumPy default.


def _rename(target: str, **params):
    """A handler calling chainrule.<target>: each NumPy parameter becomes an argument at a
    position (int) or a keyword (str)."""

    def handler(**args):
        pos, kw = {}, {}
        for name, value in args.items():
            to = params[name]
            if to.__class__ is int:
                pos[to] = value
            else:
                kw[to] = value
        return _fn(target)(*(pos[i] for i in sorted(pos)), **kw)

    return handler, frozenset(params)


def _custom(handler):
    """A handler written out: its parameters are the NumPy parameters it takes."""
    return handler, frozenset(inspect.signature(handler).parameters)


def _reduction(target: str, dtype: bool = False):
    if dtype:
        return _rename(target, a=0, axis="axis", dtype="dtype", keepdims="keepdims")
    return _rename(target, a=0, axis="axis", keepdims="keepdims")


def _flat(a):
    return _fn("reshape")(a, (-1,))


def _mean(a, axis=None, dtype=None, keepdims=False):
    if dtype is not None:
        a = _fn("astype")(a, dtype)
    return _fn("mean")(a, axis=axis, keepdims=keepdims)


def _moment(target: str):
    """var or std; NumPy's `ddof` is the standard's `correction` (NumPy 2 takes either)."""

    def handler(a, axis=None, dtype=None, ddof=0, keepdims=False, correction=None):
        if dtype is not None:
            a = _fn("astype")(a, dtype)
        correction = ddof if correction is None else correction
        return _fn(target)(a, axis=axis, correction=correction, keepdims=keepdims)

    return _custom(handler)


def _cumulative(target: str):
    """cumsum, cumprod: axis None means the flattened array, as in NumPy."""

    def handler(a, axis=None, dtype=None):
        if axis is None:
            a, axis = _flat(a), 0
        return _fn(target)(a, axis=axis, dtype=dtype)

    return _custom(handler)


def _sorting(target: str):
    """sort, argsort. chainrule sorts stably, a valid result for every `kind`."""

    def handler(a, axis=-1, kind=None, stable=None):
        if axis is None:
            a, axis = _flat(a), -1
        return _fn(target)(a, axis=axis)

    return _custom(handler)


def _dot(a, b):
    """np.dot: a product with a scalar, matmul up to a 2-D `b`, else the sum over the last
    axis of `a` and the second-to-last of `b`."""
    a, b = _fn("asarray")(a), _fn("asarray")(b)
    if a.ndim == 0 or b.ndim == 0:
        return _fn("multiply")(a, b)
    if b.ndim <= 2:
        return _fn("matmul")(a, b)
    return _fn("tensordot")(a, b, axes=((-1,), (-2,)))


def _transpose(a, axes=None):
    if axes is None:
        axes = tuple(range(a.ndim))[::-1]
    return _fn("permute_dims")(a, axes)


def _expand_dims(a, axis):
    """One or several new axes of size 1, at their positions in the result."""
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    n = a.ndim + len(axes)
    new = normalize_axes(axes, n)
    sizes = iter(a.shape)
    return _fn("reshape")(a, tuple(1 if i in new else next(sizes) for i in range(n)))


def _squeeze(a, axis=None):
    if axis is None:
        axis = tuple(i for i, n in enumerate(a.shape) if n == 1)
    return _fn("squeeze")(a, axis=axis)


def _take(a, indices, axis=None):
    if axis is None:
        a = _flat(a)
    return _fn("take")(a, indices, axis=axis)


def _where(condition, x=None, y=None):
    if x is None and y is None:
        return _fn("nonzero")(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    return _fn("where")(condition, x, y)


def _clip(a, a_min=None, a_max=None, min=None, max=None):  # noqa: A002 - NumPy's names
    lo = min if a_min is None else a_min
    hi = max if a_max is None else a_max
    return _fn("clip")(a, min=lo, max=hi)


def _unique(ar, return_index=False, return_inverse=False, return_counts=False):
    if not (return_index or return_inverse or return_counts):
        return _fn("unique_values")(ar)
    wanted = (True, return_index, return_inverse, return_counts)
    return tuple(out for out, w in zip(_fn("unique_all")(ar), wanted) if w)


def _like(target: str, first: str):
    return _rename(target, **{first: 0}, dtype="dtype", device="device")


# NumPy function name (in the `numpy` module) -> (handler, the NumPy parameters it takes).
FUNCTIONS = {
    "sum": _reduction("sum", dtype=True),
    "prod": _reduction("prod", dtype=True),
    "mean": _custom(_mean),
    "max": _reduction("max"),
    "amax": _reduction("max"),
    "min": _reduction("min"),
    "amin": _reduction("min"),
    "var": _moment("var"),
    "std": _moment("std"),
    "all": _reduction("all"),
    "any": _reduction("any"),
    "argmax": _reduction("argmax"),
    "argmin": _reduction("argmin"),
    "count_nonzero": _reduction("count_nonzero"),
    "cumsum": _cumulative("cumulative_sum"),
    "cumprod": _cumulative("cumulative_prod"),
    "cumulative_sum": _rename(
        "cumulative_sum", x=0, axis="axis", dtype="dtype", include_initial="include_initial"
    ),
    "cumulative_prod": _rename(
        "cumulative_prod", x=0, axis="axis", dtype="dtype", include_initial="include_initial"
    ),
    "dot": _custom(_dot),
    "tensordot": _rename("tensordot", a=0, b=1, axes="axes"),
    "matrix_transpose": _rename("matrix_transpose", x=0),
    "concatenate": _rename("concat", arrays=0, axis="axis"),
    "stack": _rename("stack", arrays=0, axis="axis"),
    "reshape": _rename("reshape", a=0, shape=1, copy="copy"),
    "transpose": _custom(_transpose),
    "expand_dims": _custom(_expand_dims),
    "squeeze": _custom(_squeeze),
    "broadcast_to": _rename("broadcast_to", array=0, shape=1),
    "flip": _rename("flip", m=0, axis="axis"),
    "moveaxis": _rename("moveaxis", a=0, source=1, destination=2),
    "roll": _rename("roll", a=0, shift=1, axis="axis"),
    "tile": _rename("tile", A=0, reps=1),
    "repeat": _rename("repeat", a=0, repeats=1, axis="axis"),
    "take": _custom(_take),
    "where": _custom(_where),
    "nonzero": _rename("nonzero", a=0),
    "clip": _custom(_clip),
    "sort": _sorting("sort"),
    "argsort": _sorting("argsort"),
    "diff": _rename("diff", a=0, n="n", axis="axis", prepend="prepend", append="append"),
    "unique": _custom(_unique),
    "unique_values": _rename("unique_values", x=0),
    "unique_counts": _rename("unique_counts", x=0),
    "unique_inverse": _rename("unique_inverse", x=0),
    "unique_all": _rename("unique_all", x=0),
    "round": _rename("round", a=0),
    "around": _rename("round", a=0),
    "real": _rename("real", val=0),
    "imag": _rename("imag", val=0),
    "astype": _rename("astype", x=0, dtype=1, copy="copy", device="device"),
    "zeros_like": _like("zeros_like", "a"),
    "ones_like": _like("ones_like", "a"),
    "empty_like": _like("empty_like", "prototype"),
    "full_like": _rename("full_like", a=0, fill_value=1, dtype="dtype", device="device"),
}

# Functions whose results carry no gradient (predicates, shapes): NumPy computes them on the
# tensors' values, so no graph is lost.
VALUE_FUNCTIONS = frozenset(
    ("allclose", "isclose", "array_equal", "array_equiv", "shape", "ndim", "size",
     "result_type", "iscomplexobj", "isrealobj")
)  # fmt: skip

# NumPy function -> (its positional parameters' names, every parameter's default by name).
# inspect.Signature.bind costs too much to run on every call.
_parameters: dict = {}


def _values(x):
    return x.detach().numpy() if x.__class__ is Tensor else x


def _bind(func, args, kwargs) -> dict:
    """The arguments of a call of NumPy's `func` by parameter name, each as (the parameter's
    default or Parameter.empty, the value given). NumPy checked the call when it dispatched."""
    spec = _parameters.get(func)
    if spec is None:
        P = inspect.Parameter
        params = inspect.signature(func).parameters.values()
        positional = (P.POSITIONAL_ONLY, P.POSITIONAL_OR_KEYWORD)
        spec = _parameters[func] = (
            tuple(p.name for p in params if p.kind in positional),
            {p.name: p.default for p in params},
        )
    names, defaults = spec
    given = dict(zip(names, args))
    given.update(kwargs)
    empty = inspect.Parameter.empty
    return {key: (defaults.get(key, empty), value) for key, value in given.items()}


def array_function(self, func, types, args, kwargs):
    """`np.sum(t, axis=0)`, `np.concatenate([t, u])`: NumPy's function as chainrule's."""
    if not all(issubclass(t, (Tensor, np.ndarray)) for t in types):
        return NotImplemented
    module, name = func.__module__, func.__name__
    what = f"{module}.{name}"
    if module == "numpy" and name in VALUE_FUNCTIONS:
        return func(*map(_values, args), **{k: _values(v) for k, v in kwargs.items()})
    entry = FUNCTIONS.get(name) if module == "numpy" else None
    if entry is None:
        raise _unsupported(what, _GENERIC_HINT)
    handler, takes = entry
    call = {}
    for key, (default, value) in _bind(func, args, kwargs).items():
        if key in takes:
            call[key] = value
        elif not _is_default(value, default):
            raise _unsupported(f"{what} with argument {key}", f"call it without {key} or")
    try:
        return handler(**call)
    except _Missing as e:
        raise _unsupported(what, _missing_hint(e.args[0])) from None


# ----------------------------------------------------------------------------- Array API


def array_namespace(self, /, *, api_version=None):
    """The chainrule module, the Array API namespace of tensors."""
    if api_version is not None and api_version not in API_VERSIONS:
        raise ValueError(
            f"chainrule implements Array API versions {', '.join(API_VERSIONS)}, "
            f"not {api_version!r}"
        )
    return _chainrule()


def _given(**kwargs) -> dict:
    """The keyword arguments that are not None: a library that predates one of them still
    accepts a call that does not use it."""
    return {k: v for k, v in kwargs.items() if v is not None}


def dlpack(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
    """The backend array's DLPack capsule; as in PyTorch, not for tensors that require grad
    (the consumer could not see the graph)."""
    if self._edge is not None:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    return self._data.__dlpack__(
        **_given(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)
    )


def dlpack_device(self, /):
    return self._data.__dlpack_device__()


def from_dlpack(x, /, *, device=None, copy=None):
    """A tensor of the default namespace holding the data of `x`, any object with
    `__dlpack__` (a tensor too, unless it requires grad); shared unless copied."""
    xp = _backend.default_namespace()
    out = xp.from_dlpack(x, **_given(device=device, copy=copy))
    return Tensor(_backend.normalize(out, xp), xp, None)


def to_device(self, device, /, *, stream=None):
    """The tensor on `device`: itself when it is there already (so it stays differentiable);
    the backend rejects devices it does not know (ValueError)."""
    if device == self.device:
        return self
    out = self._data.to_device(device, **_given(stream=stream))
    if self._edge is not None and grad_mode.enabled:
        raise NotImplementedError(
            "to_device: moving a tensor that requires grad to another device is not "
            "differentiable yet; move tensor.detach() instead"
        )
    return Tensor(out, self._xp, None)
