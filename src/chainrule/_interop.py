"""How tensors meet other array code: NumPy's ufuncs and functions dispatch to chainrule
(NEP 13 `__array_ufunc__`, NEP 18 `__array_function__`) and stay differentiable, or raise
TypeError where chainrule has no equivalent; `__array_namespace__`, DLPack and `to_device`.
Tensor binds these in `_methods`; the calls go through the tables of `_numpy_functions`."""

from __future__ import annotations

import inspect
import sys
import types
from typing import Any

from . import _backend
from ._dtypes import __array_namespace_info__
from ._inplace import setitem
from ._namespace import asarray, astype, broadcast_to, reshape, where
from ._numpy_composites import TABLES
from ._numpy_composites import UFUNCS as COMPOSITE_UFUNCS
from ._numpy_functions import VALUE_FUNCTIONS, _fn, _Missing
from ._rules import OPS
from ._tensor import Tensor, constant, dual, exportable, grad_mode
from ._tensor import _concrete as concrete
from ._typing import Device

np = _backend.np

API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")


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
# SciPy's special-function ufuncs (scipy.special._ufuncs, by their __name__) -> the function of
# chainrule.special computing them on tensors.
_SCIPY_SAME_NAME = (
    "erf erfc erfinv erfcinv expit logit gammaln xlogy xlog1py entr ndtr ndtri log_ndtr i0 i0e "
    "i1 i1e j0 j1 gammainc gammaincc beta betaln jv iv ive log_expit kl_div"
).split()
SCIPY_UFUNCS = {name: f"special.{name}" for name in _SCIPY_SAME_NAME} | {
    "expm1": "expm1",  # the standard's own, under SciPy's ufunc of the same name
    "log1p": "log1p",
    "round": "round",
    "psi": "special.digamma",
    "_zeta": "special.zeta",
    "_riemann_zeta": "special.zeta",
}


def _scipy_special(ufunc, name: str) -> str | None:
    """chainrule's function for one of SciPy's special-function ufuncs (None for others).
    SciPy is not imported here: a SciPy ufunc reaching a tensor means SciPy is loaded."""
    ufuncs = sys.modules.get("scipy.special._ufuncs")
    if ufuncs is None or getattr(ufuncs, name, None) is not ufunc:
        return None
    return SCIPY_UFUNCS.get(name)


# Ufunc keywords accepted at these values (NumPy leaves out `out` when it is None).
_UFUNC_DEFAULTS = {"where": True, "casting": "same_kind", "order": "K", "subok": True}


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    """`np.sin(t)`, `ndarray * t`: NumPy's ufunc call as the chainrule function of the same
    meaning; `out=` writes the result in place (see _write_out), where `where=` is true
    only when given; add.at and subtract.at as _add_at. Other ufunc methods, `where=` without
    `out=` and ufuncs without one raise TypeError."""
    name = ufunc.__name__
    own = getattr(np, name, None) is ufunc
    what = f"numpy.{name}" if own else f"the ufunc {name!r}"
    if method == "at" and own and name in ("add", "subtract"):
        return _add_at(ufunc, *inputs)
    if method != "__call__":
        raise _unsupported(f"{what}.{method}", _GENERIC_HINT)
    out = kwargs.pop("out", None)  # NumPy passes it as a tuple, one entry per output
    mask = kwargs.pop("where", True)
    if mask is not True and out is None:  # NumPy leaves the other elements unset
        raise _unsupported(f"{what} with where= and no out=", "pass out= too, or")
    for key, value in kwargs.items():
        if value is not None and not _is_default(value, _UFUNC_DEFAULTS.get(key)):
            raise _unsupported(f"{what} with {key}=", f"call it without {key}= or")
    target = UFUNCS.get(name) if own else _scipy_special(ufunc, name)
    if target is None and own and name in COMPOSITE_UFUNCS:
        fn = COMPOSITE_UFUNCS[name]
    elif target is None:
        raise _unsupported(what, _GENERIC_HINT)
    else:
        try:
            fn = _fn(target)
        except _Missing:
            raise _unsupported(what, _missing_hint(target)) from None
    if out is None:
        return fn(*inputs)
    result = fn(*(_unaliased(x, out) for x in inputs))
    results = result if ufunc.nout > 1 else (result,)
    written = tuple(
        r if o is None else _write_out(name, r, o, mask=mask)
        for r, o in zip(results, out, strict=True)
    )
    return written if ufunc.nout > 1 else written[0]


def _add_at(ufunc, a, indices, b=None) -> None:
    """`np.add.at(a, indices, b)` (and subtract's): b added at a[indices] in place, once per
    time an index names a position (unbuffered). Into a tensor, as `a[...] = a + the sums of
    b at each position` (in place and recorded as item assignment is; differentiable in a
    and b); into a NumPy array, b's values (refused for a tensor that requires grad)."""
    if b is None:
        raise TypeError(f"numpy.{ufunc.__name__}.at needs the values to add (b)")
    if a.__class__ is not Tensor:
        ufunc.at(a, _numpy_key(indices), np.asarray(b))
        return
    positions = np.arange(a.size).reshape(a.shape)[_numpy_key(indices)]
    b = b if b.__class__ is Tensor else constant(b, a._xp)
    b = astype(b, a.dtype) if b.dtype != a.dtype else b
    b = broadcast_to(b, positions.shape)
    if ufunc is np.subtract:
        b = -b
    flat = a._xp.asarray(positions.reshape(-1))
    sums = OPS["take_add"](reshape(b, (-1,)), (flat, 0, (a.size,), a._data.dtype))
    setitem(a, ..., a + reshape(sums, a.shape))


def _numpy_key(key):
    """An index key with its tensors as NumPy arrays (to index NumPy's arange with)."""
    parts = key if key.__class__ is tuple else (key,)
    parts = tuple(np.asarray(k) if k.__class__ is Tensor else k for k in parts)
    return parts if key.__class__ is tuple else parts[0]


def _unaliased(x, out: tuple):
    """Input x, or a copy of it (with its history) where it shares memory with a tensor of
    `out`: the nodes that compute the result must save values that the write leaves as they
    are (x.mul_(y) on a view of x's base would make them stale)."""
    vc = getattr(x, "_vc", None)
    if vc is None or not any(getattr(o, "_vc", None) is vc for o in out):
        return x
    return asarray(x, copy=True)


def _write_out(name: str, result, out, same_kind: bool = True, mask=True):
    """NumPy's `out=`: the result written into `out`, which is returned. Into a tensor, as
    item assignment `out[...] = result` (in place: its version is bumped, a view writes its
    base; recorded as a write when either needs grad, so a leaf that requires grad refuses
    it as `x.add_` does). Into a NumPy array, the values (a result that requires grad refuses
    NumPy's conversion, which would cut the graph). NumPy's rules: the result broadcasts to
    `out`'s shape; a ufunc's casts to its dtype only within its kind (casting='same_kind'),
    a function's to any (same_kind False). A ufunc's `where=` mask: out keeps its values
    where the mask is false (they get no gradient from the result there)."""
    shape = tuple(result.shape) if result.__class__ is Tensor else np.shape(result)
    target = tuple(out.shape)
    if len(shape) > len(target) or any(
        n not in (1, m) for n, m in zip(shape[::-1], target[::-1], strict=False)
    ):
        try:
            both = np.broadcast_shapes(shape, target)
        except ValueError:
            raise ValueError(
                f"operands could not be broadcast together with shapes {_shape(shape)} "
                f"{_shape(target)}"
            ) from None
        raise ValueError(
            f"non-broadcastable output operand with shape {_shape(target)} doesn't match the "
            f"broadcast shape {_shape(both)}"
        )
    source = _numpy_dtype(result)
    dest = _numpy_dtype(out)
    if same_kind and not np.can_cast(source, dest, casting="same_kind"):
        raise TypeError(
            f"Cannot cast ufunc '{name}' output from {source!r} to {dest!r} with casting rule "
            "'same_kind'"
        )
    if out.__class__ is Tensor:
        if result.__class__ is Tensor and result.dtype != out.dtype:
            result = astype(result, out.dtype)
        if mask is not True:
            result = where(constant(mask, out._xp), result, asarray(out, copy=True))
        setitem(out, ..., result)
    elif mask is not True:
        out[...] = np.where(np.asarray(mask), np.asarray(result), out)
    else:
        out[...] = np.asarray(result)
    return out


def _shape(shape: tuple) -> str:
    """A shape as NumPy's messages write it: (2,3), (3,)."""
    return f"({','.join(map(str, shape))}{',' if len(shape) == 1 else ''})"


def _numpy_dtype(x):
    """NumPy's dtype of a tensor's or array's elements (a Python scalar's: NumPy's default)."""
    dtype = x.dtype if hasattr(x, "dtype") else np.asarray(x).dtype
    return np.dtype(str(dtype).rsplit(".", 1)[-1])


# NumPy function -> (its positional parameters' names, the name of its *args parameter or
# None, every parameter's default by name). inspect.Signature.bind costs too much per call.
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
            next((p.name for p in params if p.kind is P.VAR_POSITIONAL), None),
            {p.name: p.default for p in params},
        )
    names, rest, defaults = spec
    given = dict(zip(names, args))
    if rest is not None:  # *arys: the positional arguments after the named ones, as a tuple
        given[rest] = tuple(args[len(names) :])
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
    table = TABLES.get(module)
    entry = None if table is None else table.get(name)
    if entry is None:
        raise _unsupported(what, _GENERIC_HINT)
    handler, takes = entry
    call = {}
    out = None
    for key, (default, value) in _bind(func, args, kwargs).items():
        if key in takes:
            call[key] = value
        elif key == "out" and value is not None:  # the result written into it (as ufuncs')
            out = value
        elif not _is_default(value, default):
            raise _unsupported(f"{what} with argument {key}", f"call it without {key} or")
    if out is not None:
        call = {key: _unaliased(value, (out,)) for key, value in call.items()}
    try:
        result = handler(**call)
    except _Missing as e:
        raise _unsupported(what, _missing_hint(e.args[0])) from None
    # NumPy's functions cast into `out` whatever its dtype (casting="unsafe").
    return result if out is None else _write_out(name, result, out, same_kind=False)


# ----------------------------------------------------------------------------- Array API


def _package():
    """The chainrule package itself: the namespace `Tensor.__array_namespace__` returns is the
    object users import, every public name included. The package imports this module, so it
    is looked up when called; it is the one lookup of the package from below it."""
    return sys.modules[__package__]  # layers: the package itself


def array_namespace(self, /, *, api_version=None):
    """The Array API namespace of tensors: the chainrule module (the latest version), or for an
    earlier `api_version` chainrule as that version has it."""
    if api_version is None or api_version == API_VERSIONS[-1]:
        return _package()
    if api_version not in API_VERSIONS:
        raise ValueError(
            f"chainrule implements Array API versions {', '.join(API_VERSIONS)}, "
            f"not {api_version!r}"
        )
    found = _earlier.get(api_version)
    if found is None:
        found = _earlier[api_version] = Earlier(api_version)
    return found


class _EarlierInfo(__array_namespace_info__):
    def devices(self):
        return list(super().devices())


class Earlier(types.ModuleType):
    """chainrule as the namespace of a version of the standard before 2025.12: where 2025.12
    changed a result (tuples for lists) the earlier one; all else is chainrule's own (a
    namespace may offer more than its version asks)."""

    def __init__(self, version: str) -> None:
        super().__init__(_package().__name__, self.__doc__)
        self.__array_api_version__ = version

    def __getattr__(self, name: str):
        return getattr(_package(), name)

    def broadcast_arrays(self, *arrays) -> list:
        return list(_package().broadcast_arrays(*arrays))

    def meshgrid(self, *arrays, indexing="xy") -> list:
        return list(_package().meshgrid(*arrays, indexing=indexing))

    def __array_namespace_info__(self) -> _EarlierInfo:
        return _EarlierInfo()


_earlier: dict[str, Earlier] = {}


def _given(**kwargs) -> dict:
    """The keyword arguments that are not None: a library that predates one of them still
    accepts a call that does not use it."""
    return {k: v for k, v in kwargs.items() if v is not None}


def dlpack(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
    """The backend array's DLPack capsule; as in PyTorch, not for tensors that require grad
    (the consumer could not see the graph), nor with a tangent; while compile traces, not at
    all (as numpy(): the array made from it would be the trace's constant; chainrule's own
    from_dlpack is recorded). Under vmap the batched value refuses it."""
    exportable(self)
    if grad_mode.extended:
        concrete(self, "__dlpack__")
    return self._data.__dlpack__(
        **_given(stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)
    )


def dlpack_device(self, /):
    return self._data.__dlpack_device__()


def to_device(self: Tensor, device: Device, /, *, stream: Any = None) -> Tensor:
    """The tensor on `device`: itself when it is there already (so it stays differentiable);
    the backend rejects devices it does not know (ValueError)."""
    if device == self.device:
        return self
    out = _backend.to_device(self._data, device, stream)
    if (self._edge is not None and grad_mode.enabled) or dual(self):
        raise NotImplementedError(
            "to_device: moving a tensor that requires grad to another device is not "
            "differentiable yet; move tensor.detach() instead"
        )
    return Tensor(out, self._xp, None)
