"""chainrule's dtypes (DType objects standing for NumPy's dtypes; another backend's dtypes map
to them by name), constants, and the data type functions of the standard: result_type,
can_cast, finfo, iinfo, isdtype, and __array_namespace_info__."""

from __future__ import annotations

import builtins
from typing import Any, NamedTuple

from . import _backend, _tensor
from ._backend import DTYPE_OBJECTS, DType, public, to_backend_dtype
from ._tensor import Tensor, as_tensor, as_tensors
from ._typing import ArrayLike, Device, DTypeLike

np = _backend.np


float32, float64 = DTYPE_OBJECTS["float32"], DTYPE_OBJECTS["float64"]
# Beyond the standard, as PyTorch's half: computed in float16 where the library does (NumPy,
# PyTorch, JAX, CuPy); array_api_strict has none.
float16 = DTYPE_OBJECTS["float16"]
complex64, complex128 = DTYPE_OBJECTS["complex64"], DTYPE_OBJECTS["complex128"]
int8, int16, int32, int64 = (DTYPE_OBJECTS[n] for n in ("int8", "int16", "int32", "int64"))
uint8, uint16, uint32, uint64 = (DTYPE_OBJECTS[n] for n in ("uint8", "uint16", "uint32", "uint64"))
bool = DTYPE_OBJECTS["bool"]  # noqa: A001 - the standard's name

# PyTorch's names of the dtypes, for its messages.
TORCH_DTYPE_NAMES = {
    float64: "Double",
    int64: "Long",
    float32: "Float",
    float16: "Half",
    int32: "Int",
    int16: "Short",
    int8: "Char",
    uint8: "Byte",
    bool: "Bool",
    complex64: "ComplexFloat",
    complex128: "ComplexDouble",
}


e = np.e
pi = np.pi
inf = np.inf
nan = np.nan
newaxis = None


# ----------------------------------------------------------------------------- data types
# chainrule's dtypes stand for NumPy's dtype objects. Promotion and casting are those of the backend
# of the tensors given (the default backend for dtypes alone), as in chainrule's operations.


def _dtype_arg(a: Any) -> Any:
    """A dtype function's argument: a tensor (arrays wrapped), a Python scalar, or a dtype
    (as NumPy's)."""
    if a.__class__ is DType:
        return a.dtype
    if a.__class__ is Tensor or a.__class__ in _tensor._SCALARS or isinstance(a, np.dtype):
        return a
    return as_tensor(a) if _backend.is_array(a) else _backend.from_backend_dtype(a)


def _backend_dtype(a: Any, xp: Any) -> Any:
    return a._data.dtype if a.__class__ is Tensor else to_backend_dtype(xp, a)


def result_type(*arrays_and_dtypes: ArrayLike | DTypeLike) -> DType:
    """The dtype of a result from these tensors and dtypes, and Python scalars, which are weak:
    a float32 tensor with 2.0 gives float32."""
    args = [_dtype_arg(a) for a in arrays_and_dtypes]
    _, xp = as_tensors([a for a in args if a.__class__ is Tensor], "result_type")
    if builtins.all(a.__class__ in _tensor._SCALARS for a in args):
        raise ValueError("result_type needs at least one tensor or dtype")
    backend_args = [a if a.__class__ in _tensor._SCALARS else _backend_dtype(a, xp) for a in args]
    return public(xp.result_type(*backend_args))


def can_cast(from_: DTypeLike | Tensor, to: DTypeLike, /) -> builtins.bool:
    """Whether dtype `from_` (or a tensor's dtype) casts to `to` by the promotion rules."""
    from_, to = _dtype_arg(from_), _dtype_arg(to)
    _, xp = as_tensors([from_] if from_.__class__ is Tensor else [], "can_cast")
    return _backend.can_cast(xp, _backend_dtype(from_, xp), _backend_dtype(to, xp))


class finfo_object(NamedTuple):
    """What finfo returns: the limits of a floating dtype."""

    bits: int
    eps: float
    max: float
    min: float
    smallest_normal: float
    dtype: DType


class iinfo_object(NamedTuple):
    """What iinfo returns: the limits of an integer dtype."""

    bits: int
    max: int
    min: int
    dtype: DType


def finfo(type: DTypeLike | Tensor, /) -> finfo_object:  # noqa: A002 - the standard's name
    """Limits of a floating dtype (or a tensor's); of a complex dtype, those of its parts."""
    f = np.finfo(type.dtype if type.__class__ is Tensor else _backend.from_backend_dtype(type))
    return finfo_object(
        int(f.bits), float(f.eps), float(f.max), float(f.min), float(f.smallest_normal),
        public(f.dtype),
    )  # fmt: skip


def iinfo(type: DTypeLike | Tensor, /) -> iinfo_object:  # noqa: A002 - the standard's name
    """Limits of an integer dtype (or a tensor's)."""
    i = np.iinfo(type.dtype if type.__class__ is Tensor else _backend.from_backend_dtype(type))
    return iinfo_object(int(i.bits), int(i.max), int(i.min), public(i.dtype))


_KINDS = {
    "bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
    "real floating": "f", "complex floating": "c", "numeric": "iufc",
}  # fmt: skip


def isdtype(dtype: DTypeLike, kind: DTypeLike | str | tuple[DTypeLike | str, ...]) -> builtins.bool:
    """Whether `dtype` is `kind`: a dtype, a kind named by the standard, or a tuple of these."""
    dtype = _backend.from_backend_dtype(dtype)
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"isdtype: unknown kind {k!r}")
            if dtype.kind in _KINDS[k]:
                return True
        elif dtype == _backend.from_backend_dtype(k):
            return True
    return False


class __array_namespace_info__:
    """What chainrule supports: that of its default backend, with chainrule's dtypes."""

    def _info(self) -> Any:
        return _backend.default_namespace().__array_namespace_info__()

    def capabilities(self) -> dict[str, Any]:
        """The default backend's capabilities (boolean indexing, data-dependent shapes,
        ...)."""
        return dict(self._info().capabilities())

    def default_device(self) -> Device:
        """The default backend's default device."""
        return self._info().default_device()

    def default_dtypes(self, *, device: Device = None) -> dict[str, DType]:
        """The default dtypes (chainrule's) for 'real floating', 'complex floating',
        'integral' and 'indexing'."""
        found = self._info().default_dtypes(device=device)
        return {k: public(d) for k, d in found.items()}

    def dtypes(
        self, *, device: Device = None, kind: str | tuple[str, ...] | None = None
    ) -> dict[str, DType]:
        """The dtypes (chainrule's) the default backend supports, by name, of the kinds
        asked for (all when None)."""
        found = self._info().dtypes(device=device, kind=kind)
        return {k: public(d) for k, d in found.items()}

    def devices(self) -> tuple[Device, ...]:
        """A tuple (2025.12; before, a list)."""
        return tuple(self._info().devices())
