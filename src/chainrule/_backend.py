"""Array libraries underneath chainrule: which namespace an array belongs to, dtype mapping,
and the array-level helpers that rules share (written against a namespace `xp`).
The only module of the library that imports NumPy (gradcheck aside, whose finite differences
run in NumPy float64) or names a backend's functions."""

from __future__ import annotations

import importlib
import math
import os

import numpy as np

ndarray = np.ndarray
_SCALAR_TYPES = (bool, int, float, complex)

# Backend namespaces by array type: namespace() is on the hot path.
_namespaces: dict[type, object] = {np.ndarray: np}


def namespace(a) -> object:
    """The Array API namespace of raw array `a`."""
    t = a.__class__
    xp = _namespaces.get(t)
    if xp is None:
        xp = _lookup_namespace(a)
        _namespaces[t] = xp
    return xp


def _lookup_namespace(a):
    if isinstance(a, (np.ndarray, np.generic)):
        return np
    get = getattr(a, "__array_namespace__", None)
    if get is not None:
        return get()
    try:
        import array_api_compat
    except ImportError:
        array_api_compat = None
    if array_api_compat is not None:
        try:
            return array_api_compat.array_namespace(a)
        except TypeError:
            pass
    raise TypeError(
        f"chainrule cannot wrap an object of type {type(a).__module__}.{type(a).__qualname__}: "
        "it is not an array of a library implementing the Python Array API standard"
    )


def is_array(a) -> bool:
    if a.__class__ in _namespaces:
        return True
    try:
        namespace(a)
    except TypeError:
        return False
    return not isinstance(a, _SCALAR_TYPES)


def normalize(out, xp):
    """NumPy returns scalars from 0-d arithmetic and reductions: make them 0-d arrays."""
    if isinstance(out, np.generic):
        return np.asarray(out)
    if xp is np and not isinstance(out, np.ndarray):
        return np.asarray(out)
    return out


def writable(a) -> bool:
    """Whether `a` may be written in place (NumPy: its writeable flag; others: assumed, as
    their in-place operators return a new array where they can't write)."""
    return a.flags.writeable if a.__class__ is np.ndarray else True


def owns_memory(a) -> bool:
    """Whether `a` is a writable NumPy array that is no view of another (unknown: False)."""
    return a.__class__ is np.ndarray and a.base is None and a.flags.writeable


def name_of(xp) -> str:
    name = getattr(xp, "__name__", None) or type(xp).__name__
    return name


def namespace_named(name: str):
    """The namespace whose name_of() is `name` (unpickling a tensor)."""
    return importlib.import_module(name)


# ----------------------------------------------------------------------------- default backend


# The library that creation functions and Python data use: NumPy, unless the environment
# variable CHAINRULE_BACKEND names another module (the tests use array_api_strict).
_DEFAULT = importlib.import_module(os.environ.get("CHAINRULE_BACKEND", "numpy"))


def default_namespace():
    """The namespace that creation functions use for new arrays."""
    return _DEFAULT


# ----------------------------------------------------------------------------- dtypes
# chainrule's dtypes are NumPy's dtype objects; another backend's dtypes map by name.

DTYPE_NAMES = (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128",
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
        try:
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
        d = getattr(xp, np.dtype(dtype).name)
        _to_backend[key] = d
    return d


def from_backend_dtype(d) -> np.dtype:
    if isinstance(d, np.dtype):
        return d
    return np.dtype(str(d).rsplit(".", 1)[-1].split("'")[0])


def dtype_kind(d) -> str:
    """'b' bool, 'i' signed, 'u' unsigned, 'f' real floating, 'c' complex floating."""
    return from_backend_dtype(d).kind


def is_floating(d) -> bool:
    return from_backend_dtype(d).kind in "fc"


# ----------------------------------------------------------------------------- helpers for rules
# Written against the namespace `xp`, so that they run on raw arrays and on chainrule tensors.


def sum_to(xp, g, shape):
    """Sum `g` down to `shape`, undoing broadcasting."""
    gshape = g.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1
    )
    if axes:
        g = xp.sum(g, axis=axes, keepdims=True)
    if lead or g.shape != shape:
        g = xp.reshape(g, shape)
    return g


def normalize_axes(axis, ndim: int) -> tuple[int, ...]:
    """`axis` (None, int or tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    out = []
    for a in axis:
        if not -ndim <= a < max(ndim, 1):
            raise IndexError(f"axis {a} is out of bounds for a tensor of dimension {ndim}")
        out.append(a % ndim if ndim else 0)
    if len(set(out)) != len(out):
        raise ValueError(f"repeated axis in {axis}")
    return tuple(sorted(out))


def expand_reduced(xp, g, axes: tuple[int, ...], ndim: int):
    """Re-insert the reduced `axes` of a reduction result `g` as size-1 axes."""
    if not axes or g.ndim == ndim:
        return g
    shape = list(g.shape)
    for a in axes:
        shape.insert(a, 1)
    return xp.reshape(g, tuple(shape))


def count(shape, axes) -> int:
    return math.prod(shape[a] for a in axes)


def index_add(xp, g, p):
    """Zeros of the input's shape and dtype with `g` added at key `p[0]` (repeated indices
    add up); `p` is getitem's (key, input shape, input dtype)."""
    key, shape, dtype = p
    if xp is np:
        out = np.zeros(shape, dtype=dtype)
        if _is_basic(key):
            out[key] = g
        else:
            np.add.at(out, key, g)
        return out
    out = xp.zeros(shape, dtype=dtype)
    if _is_basic(key) or _is_mask(key):
        # Not every library assigns through newaxis: drop those size-1 axes from key and g.
        keys = key if isinstance(key, tuple) else (key,)
        if any(k is None for k in keys):
            key = tuple(k for k in keys if k is not None)
            g = xp.reshape(g, out[key].shape)
        out[key] = g
        return out
    # Integer arrays may repeat positions, and the standard has no scatter-add: find each
    # gathered element's flat source position, then sum with a one-hot matrix (memory
    # grows as input size x gathered size).
    size = math.prod(shape)
    positions = xp.reshape(xp.reshape(xp.arange(size), shape)[key], (-1,))
    onehot = xp.astype(xp.arange(size)[:, None] == positions[None, :], dtype)
    return xp.reshape(xp.matmul(onehot, xp.reshape(g, (-1,))), shape)


def covers_all(shape, key) -> bool:
    """Whether indexing an array of `shape` with `key` selects every element: decided from
    the key's structure, and for a boolean mask from its values, except on lazy arrays
    (Dask), where that would compute: then False. Integer arrays count as not covering."""
    keys = key if isinstance(key, tuple) else (key,)

    def width(k) -> int:  # the axes of the array that k indexes
        if k is None or k is Ellipsis:
            return 0
        if isinstance(k, (int, slice)):
            return 1
        return k.ndim if dtype_kind(k.dtype) == "b" else 1

    axis = 0
    for k in keys:
        if k is None:
            continue
        if k is Ellipsis:
            axis = len(shape) - sum(width(j) for j in keys[keys.index(Ellipsis) + 1 :])
        elif isinstance(k, int):
            if shape[axis] != 1:
                return False
            axis += 1
        elif isinstance(k, slice):
            if len(range(*k.indices(shape[axis]))) != shape[axis]:
                return False
            axis += 1
        elif dtype_kind(k.dtype) != "b" or _is_lazy(k):
            return False
        else:
            if tuple(k.shape) != tuple(shape[axis : axis + k.ndim]):
                return False
            if not bool(namespace(k).all(k)):
                return False
            axis += k.ndim
    return True


def _is_lazy(a) -> bool:
    return type(a).__module__.split(".")[0] == "dask"


def outside(xp, shape, key):
    """A bool array of `shape`: False at `key`, True elsewhere."""
    mask = xp.ones(shape, dtype=xp.bool)
    mask[key] = False
    return mask


def _is_basic(key) -> bool:
    keys = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (int, slice)) for k in keys)


def _is_mask(key) -> bool:
    keys = key if isinstance(key, tuple) else (key,)
    arrays = [k for k in keys if not (k is None or k is Ellipsis or isinstance(k, (int, slice)))]
    return len(arrays) == 1 and dtype_kind(arrays[0].dtype) == "b"


def take_add(xp, g, p):
    """Zeros of the input's shape and dtype with `g` added at `indices` along `axis`;
    `p` is take's (indices, axis, input shape, input dtype)."""
    indices, axis, shape, dtype = p
    if xp is np:
        out = np.zeros(shape, dtype=dtype)
        np.add.at(out, (slice(None),) * axis + (indices,), g)
        return out
    # Generic: a one-hot matrix sends each gathered slice back to its source position.
    onehot = xp.astype(
        xp.arange(shape[axis], dtype=indices.dtype)[:, None] == indices[None, :], dtype
    )
    moved = xp.moveaxis(g, axis, -1)
    return xp.moveaxis(xp.matmul(moved, onehot.T), -1, axis)


def take_along_add(xp, g, p):
    """Zeros of the input's shape and dtype with `g` added at `indices` along `axis` (repeated
    indices add up, axes along which the input was broadcast are summed); `p` is
    take_along_axis's (indices, axis, input shape, input dtype)."""
    indices, axis, shape, dtype = p
    n = shape[axis]
    if xp is np:
        key = tuple(
            indices if d == axis else np.arange(k).reshape((k,) + (1,) * (g.ndim - 1 - d))
            for d, k in enumerate(g.shape)
        )
        out = index_add(xp, g, (key, g.shape[:axis] + (n,) + g.shape[axis + 1 :], dtype))
    else:
        # hit[..., j, i] says whether the j-th index along the axis is i; a batched matmul
        # sums g over the j of each i (memory grows as g's size times n).
        idx = xp.expand_dims(xp.moveaxis(indices, axis, -1), axis=-1)
        hit = xp.astype(idx == xp.arange(n, dtype=indices.dtype), dtype)
        rows = xp.expand_dims(xp.moveaxis(g, axis, -1), axis=-2)
        out = xp.moveaxis(xp.matmul(rows, hit)[..., 0, :], -1, axis)
    return sum_to(xp, out, shape)
