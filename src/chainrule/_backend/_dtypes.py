"""The dtypes under chainrule's own (DType objects standing for NumPy's dtypes of the same name;
another library's dtypes map to them by name), their kinds, and casting. The dtype functions of
the standard (result_type, finfo, ...) are chainrule._dtypes, built on these."""

from __future__ import annotations

import re

import numpy as np

from ._namespaces import library, name_of, namespace

DTYPE_NAMES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128",
)  # fmt: skip
DTYPES = {n: np.dtype(n) for n in DTYPE_NAMES}
_to_backend: dict[tuple[int, object], object] = {}


class DType:
    """A chainrule data type: it stands for NumPy's dtype of its name, is equal to it (and to
    that dtype's name and scalar type), hashes alike, and converts to it wherever NumPy takes a
    dtype (its `dtype` attribute); unlike NumPy's float64 dtype it is not equal to None."""

    __slots__ = ("dtype",)

    def __init__(self, name: str) -> None:
        self.dtype = DTYPES[name]

    @property
    def name(self) -> str:
        """The dtype's name, as NumPy's ('float64')."""
        return self.dtype.name

    @property
    def kind(self) -> str:
        """NumPy's kind character: 'b' bool, 'i' signed, 'u' unsigned, 'f' real
        floating, 'c' complex floating."""
        return self.dtype.kind

    @property
    def itemsize(self) -> int:
        """The size of one element in bytes."""
        return self.dtype.itemsize

    def __eq__(self, other: object) -> bool:
        if other is None:
            return False
        if other.__class__ is DType:
            return self.dtype is other.dtype
        if other.__class__ is str and not _DTYPE_NAME.match(other):
            return False  # a structured dtype's spec ('f8, i4'), or no dtype at all
        try:
            if not isinstance(other, (np.dtype, str, type)):
                # Another library's dtype object: compared by name (asking that library to
                # compare itself with NumPy's warns, as array_api_strict does, and says no).
                # Anything else is no dtype: not equal, whatever its str() says.
                other = from_backend_dtype(other)
            return bool(self.dtype == other)
        except TypeError:
            return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self.dtype)

    def __repr__(self) -> str:
        return f"chainrule.{self.dtype.name}"

    def __str__(self) -> str:
        return self.dtype.name

    def __reduce__(self) -> tuple:
        return dtype_named, (self.dtype.name,)  # unpickled as the very same object


# The DType of each name; chainrule.float64 and the others are these objects.
DTYPE_OBJECTS = {n: DType(n) for n in DTYPE_NAMES}
_PUBLIC = {d.dtype: d for d in DTYPE_OBJECTS.values()}  # NumPy's dtype -> chainrule's DType


class DefaultFloat:
    """The floating dtype that new tensors get when no dtype is given: from Python floats, the
    creation functions, random numbers and new layers, and operations that make floating
    values from integers alone (PyTorch's `get_default_dtype`). The one process-wide setting
    of dtypes: float64 (NumPy's default) unless `set_default_dtype` changed it."""

    __slots__ = ("real", "complex")

    def __init__(self) -> None:
        self.real, self.complex = DTYPE_OBJECTS["float64"], DTYPE_OBJECTS["complex128"]


DEFAULT_FLOAT = DefaultFloat()


def checked(a):
    """Array `a`, or a TypeError naming chainrule's dtypes where its dtype is none of them
    (NumPy's longdouble, strings, objects; PyTorch's bfloat16)."""
    d = a.dtype
    if d.__class__ in _NUMPY_DTYPE_TYPES or _from_backend.get(d) is not None:
        return a
    try:
        known = from_backend_dtype(d) in _PUBLIC
    except TypeError:
        known = False
    if not known:
        _no_dtype(d, f" (of an array of {name_of(namespace(a))})")
    return a


def _no_dtype(d, where: str) -> None:
    raise TypeError(f"chainrule has no dtype {d}{where}: its dtypes are {', '.join(DTYPE_NAMES)}")


def dtype_named(name: str) -> DType:
    """chainrule's DType of that name."""
    return DTYPE_OBJECTS[name]


def public(d) -> DType:
    """chainrule's DType for a dtype of any backend (or a DType)."""
    return d if d.__class__ is DType else _PUBLIC[from_backend_dtype(d)]


def to_backend_dtype(xp, dtype):
    """The backend dtype for chainrule dtype `dtype` (None stays None)."""
    if dtype is None or xp is np:
        return dtype
    key = (id(xp), dtype)
    d = _to_backend.get(key)
    if d is None:
        name = np.dtype(dtype).name
        if name not in DTYPES:
            _no_dtype(name, "")
        d = getattr(xp, name, None)
        if d is None and library(xp) in ("dask", "cupy"):
            d = DTYPES[name]  # their arrays hold NumPy's dtypes (array-api-compat names fewer)
        if d is None:
            raise TypeError(f"{name_of(xp)} has no dtype {name}")
        _to_backend[key] = d
    return d


# Another library's dtype object -> NumPy's dtype of that name (its str() parsed once).
# Python's scalar types name dtypes as in NumPy and PyTorch (float: float64, int: int64).
_from_backend: dict = {t: np.dtype(t) for t in (bool, int, float, complex)}


def from_backend_dtype(d) -> np.dtype:
    """NumPy's dtype of the name of `d` (a dtype object of any library, a scalar type, a
    name); TypeError for anything that names no numeric or boolean dtype."""
    if isinstance(d, np.dtype):
        return d
    if d.__class__ is DType:
        return d.dtype
    n = _from_backend.get(d)
    if n is None:
        name = str(d).rsplit(".", 1)[-1].split("'")[0]
        try:
            n = np.dtype(name) if _DTYPE_NAME.match(name) else None
        except TypeError:  # a name NumPy doesn't know
            n = None
        if n is None or n.kind not in "biufc":
            raise TypeError(f"{d!r} is not a data type")
        _from_backend[d] = n
    return n


# What may name one dtype ('float64', 'f8', '<f4', 'torch.float32' once cut at its dot); a
# str() with a comma or brackets would be parsed by NumPy as a structured dtype's spec.
_DTYPE_NAME = re.compile(r"[<>=|]?[A-Za-z_][A-Za-z0-9_]*\Z")


# The classes of NumPy's dtypes of DTYPE_NAMES: a set lookup where isinstance(d, np.dtype)
# takes 0.15 us (NumPy's dtype type has a metaclass); dtype_kind() is on the hot path (the
# tanh of W1: 0.18 us less per call on PyTorch storage, 0.15 us on NumPy's).
_NUMPY_DTYPE_TYPES = {np.dtype(n).__class__ for n in DTYPE_NAMES}


def dtype_kind(d) -> str:
    """'b' bool, 'i' signed, 'u' unsigned, 'f' real floating, 'c' complex floating."""
    if d.__class__ in _NUMPY_DTYPE_TYPES:
        return d.kind
    n = _from_backend.get(d)
    return (n if n is not None else from_backend_dtype(d)).kind


class _Kinds(dict):
    """dtype -> its kind (see dtype_kind), learned on first sight of each dtype."""

    def __missing__(self, d) -> str:
        k = self[d] = dtype_kind(d)
        return k


class _ComplexDtypes(dict):
    """dtype -> whether it is complex floating, learned on first sight of each dtype."""

    def __missing__(self, d) -> bool:
        c = self[d] = dtype_kind(d) == "c"
        return c


class _ByClass(dict):
    """dtype class -> a table of the dtypes of that class (made on first sight), asked as
    TABLE[d.__class__][d]. One table for all would compare dtypes of two libraries whose
    hashes are equal (array_api_strict's hash as their NumPy twins), and array_api_strict
    warns on that comparison."""

    __slots__ = ("table",)

    def __init__(self, table: type) -> None:
        super().__init__()
        self.table = table

    def __missing__(self, cls) -> dict:
        t = self[cls] = self.table()
        return t


# Two lookups for the record paths, which ask them of the dtypes of every operation.
KIND = _ByClass(_Kinds)
IS_COMPLEX = _ByClass(_ComplexDtypes)
# NumPy's float64 and float32, which most operations meet: the record paths know them as real
# by identity before asking IS_COMPLEX (hashing a NumPy dtype costs ~400 instructions).
FLOAT64, FLOAT32 = np.dtype("float64"), np.dtype("float32")


def can_cast(xp, from_, to) -> bool:
    """Whether dtype from_ casts to `to` by the promotion rules. PyTorch's can_cast allows
    every cast within a kind (int8 to uint8, float64 to float32): NumPy's answer there."""
    if library(xp) == "torch":
        return bool(np.can_cast(from_backend_dtype(from_), from_backend_dtype(to)))
    return bool(xp.can_cast(from_, to))


def is_floating(d) -> bool:
    return from_backend_dtype(d).kind in "fc"
