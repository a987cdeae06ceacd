"""Array libraries underneath chainrule: which namespace an array belongs to, dtype mapping,
and the array-level helpers that rules share (written against a namespace `xp`).
The only module of the library that imports NumPy (gradcheck aside, whose finite differences
run in NumPy float64) or names a backend's functions."""

from __future__ import annotations

import importlib
import math
import os
import re

import numpy as np

ndarray = np.ndarray
_SCALAR_TYPES = (bool, int, float, complex)

# Backend namespaces by array type: namespace() is on the hot path.
_namespaces: dict[type, object] = {np.ndarray: np}

# The array types of libraries other than NumPy met so far: their operations return arrays,
# never NumPy's scalars, so normalize() leaves them as they are and the one- and two-input
# factories of _tensor skip the call (W1 on PyTorch storage: one call less per operation).
ARRAY_TYPES: set[type] = set()


def namespace(a) -> object:
    """The Array API namespace of raw array `a`."""
    t = a.__class__
    xp = _namespaces.get(t)
    if xp is None:
        xp = _lookup_namespace(a)
        register_namespace(t, xp)
    return xp


def register_namespace(t: type, xp) -> None:
    """Make `xp` the namespace of arrays of type `t` (vmap's Batched arrays)."""
    _namespaces[t] = xp
    if xp is not np and not issubclass(t, (np.generic, *_SCALAR_TYPES)):
        ARRAY_TYPES.add(t)


def _lookup_namespace(a):
    if isinstance(a, (np.ndarray, np.generic)):
        return np
    compat = _compat()
    if compat is not None:
        # array-api-compat answers for every library, wrapping those without a namespace of
        # their own (PyTorch, Dask, CuPy) and passing the others' `__array_namespace__` on.
        try:
            return compat.array_namespace(a)
        except TypeError:
            pass
    else:
        get = getattr(a, "__array_namespace__", None)
        if get is not None:
            return get()
    kind = f"{type(a).__module__}.{type(a).__qualname__}"
    if compat is None and type(a).__module__.split(".")[0] in _NEEDS_COMPAT:
        raise TypeError(
            f"chainrule needs the package array-api-compat to wrap a {kind}: "
            "pip install array-api-compat (or chainrule[backends])"
        )
    raise TypeError(
        f"chainrule cannot wrap an object of type {kind}: "
        "it is not an array of a library implementing the Python Array API standard"
    )


# Array libraries whose arrays have no `__array_namespace__`: array-api-compat serves them.
_NEEDS_COMPAT = ("torch", "dask", "cupy", "sparse", "ndonnx")
_compat_module: list = []


def _compat():
    """The array_api_compat module, or None when it is not installed (looked up once)."""
    if not _compat_module:
        try:
            import array_api_compat
        except ImportError:
            array_api_compat = None
        _compat_module.append(array_api_compat)
    return _compat_module[0]


def joint_namespace(xp, other):
    """The namespace that holds the result of an operation on arrays of `xp` and `other`
    where one library takes the other's arrays as operands (Dask takes NumPy's), else None."""
    libs = (library(xp), library(other))
    if "vmap" in libs:  # vmap's Batched arrays take those of the libraries below them
        return xp if libs[0] == "vmap" else other
    if libs == ("dask", "numpy"):
        return xp
    if libs == ("numpy", "dask"):
        return other
    return None


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
    """Whether `a` may be written in place (NumPy, array-api-strict: the writeable flag;
    PyTorch: no element stands in two places, as in a broadcast view; others: assumed, as
    their in-place operators return a new array where they can't write)."""
    if a.__class__ is np.ndarray:
        return a.flags.writeable
    lib = library(namespace(a))
    if lib == "torch":
        return all(step != 0 or n < 2 for step, n in zip(a.stride(), a.shape))
    if lib == "array_api_strict":
        return a._array.flags.writeable
    return True


def owns_memory(a) -> bool:
    """Whether `a` is a writable array that is no view of another: a NumPy array, or a
    PyTorch tensor (no base, no lazy conjugate or negation); unknown: False."""
    if a.__class__ is np.ndarray:
        return a.base is None and a.flags.writeable
    if library(namespace(a)) == "torch":
        return a._base is None and not (a.is_conj() or a.is_neg())
    return False


# How a library's arrays alias (see aliasing()), by namespace.
_aliasing: dict[int, str | None] = {}


def aliasing(xp) -> str | None:
    """How arrays of `xp` share memory: "memory" where views share it and are written in place
    (NumPy, PyTorch, CuPy, array-api-strict), "values" where arrays are immutable (JAX) or
    lazy (Dask: a view is a task graph of its own), and for vmap's batched arrays (a write
    gives a new batch, from which the views' values are remade)."""
    kind = _aliasing.get(id(xp), False)
    if kind is False:
        lib = library(xp)
        kind = "values" if lib in ("jax", "dask", "vmap") else "memory"
        _aliasing[id(xp)] = kind
    return kind


def shares_memory(a, b) -> bool:
    """Whether arrays a and b may share memory (a view op's result against its input: NumPy's
    reshape copies where no view can be had). Unknown libraries: assumed."""
    if a.__class__ is np.ndarray and b.__class__ is np.ndarray:
        return np.may_share_memory(a, b)
    lib = library(namespace(a))
    if lib == "array_api_strict":
        return np.may_share_memory(a._array, b._array)
    if lib == "torch":
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    return True


def name_of(xp) -> str:
    name = getattr(xp, "__name__", None) or type(xp).__name__
    return name


def namespace_named(name: str):
    """The namespace whose name_of() is `name` (unpickling a tensor)."""
    return importlib.import_module(name)


# ----------------------------------------------------------------------------- default backend


# CHAINRULE_BACKEND names the library that creation functions and Python data use (NumPy
# unless set; the tests run under each): a short name below, or a namespace module's name.
BACKENDS = {
    "numpy": ("numpy", "numpy"),
    "array_api_strict": ("array_api_strict", "array-api-strict"),
    "dask": ("array_api_compat.dask.array", "dask[array] array-api-compat"),
    "jax": ("jax.numpy", "jax"),
    "torch": ("array_api_compat.torch", "torch array-api-compat"),
    "cupy": ("array_api_compat.cupy", "cupy array-api-compat"),
}


def load_backend(name: str):
    """The namespace module of backend `name` (a short name of BACKENDS or a module name).
    JAX gets 64-bit types enabled and PyTorch float64 as its default floating dtype, as NumPy
    and chainrule's own default have."""
    module, packages = BACKENDS.get(name, (name, name.split(".")[0]))
    if module.split(".")[0] == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
    if name == "torch":
        import torch

        torch.set_default_dtype(torch.float64)
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            f"the chainrule backend {name!r} needs the module {module}: pip install {packages}"
        ) from e


_DEFAULT = load_backend(os.environ.get("CHAINRULE_BACKEND", "numpy"))


def default_namespace():
    """The namespace that creation functions use for new arrays."""
    return _DEFAULT


# ----------------------------------------------------------------------------- dtypes
# chainrule's dtypes are NumPy's dtype objects; another backend's dtypes map by name.

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
_from_backend: dict = {}


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


class _ComplexDtypes(dict):
    """dtype -> whether it is complex floating, learned on first sight of each dtype: one
    dict lookup for the record paths, which ask it of the dtypes of every operation."""

    def __missing__(self, d) -> bool:
        c = self[d] = dtype_kind(d) == "c"
        return c


IS_COMPLEX = _ComplexDtypes()
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


# ----------------------------------------------------------------------------- helpers for rules
# Written against the namespace `xp`, so that they run on raw arrays and on chainrule tensors.


def sum_to(xp, g, shape):
    """Sum `g` down to `shape`, undoing broadcasting."""
    gshape = g.shape
    if gshape == shape:
        return g
    # `shape` may have more axes than g, all ones (item assignment broadcasts a value of
    # shape (1, n) into a row): those only reshape.
    core = shape[max(len(shape) - len(gshape), 0) :]
    lead = len(gshape) - len(core)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(core) if n == 1 and gshape[lead + i] != 1
    )
    if axes:
        g = xp.sum(g, axis=axes, keepdims=True)
    if g.shape != shape:
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
        if is_basic(key):
            out[key] = g
        else:
            np.add.at(out, key, g)
        return out
    out = xp.zeros(shape, dtype=dtype)
    if is_basic(key) or _is_mask(key):
        # Not every library assigns through newaxis: drop those size-1 axes from key and g.
        keys = key if isinstance(key, tuple) else (key,)
        if any(k is None for k in keys):
            key = tuple(k for k in keys if k is not None)
            g = xp.reshape(g, getitem(xp, out, key).shape)
        if library(xp) == "dask":
            return _dask_index_add(xp, out, key, g)
        return assign(xp, out, key, g)
    # Integer arrays may repeat positions: gather each element's flat source position, then
    # add the gradients up at those positions.
    size = math.prod(shape)
    positions = xp.reshape(getitem(xp, xp.reshape(xp.arange(size), shape), key), (-1,))
    return xp.reshape(scatter_add(xp, positions, xp.reshape(g, (-1,)), size, dtype), shape)


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
    for i, k in enumerate(keys):
        if k is None:
            continue
        if k is Ellipsis:  # (keys.index would compare arrays with ==)
            axis = len(shape) - sum(width(j) for j in keys[i + 1 :])
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
    return library(namespace(a)) == "dask"


def is_lazy(a) -> bool:
    """Whether `a` is an array of a lazy library (Dask's): values computed only when asked."""
    return a.__class__ is not ndarray and library(namespace(a)) == "dask"


def settle(arrays: list, small: int) -> list:
    """Dask arrays with their values computed, by one call (the tasks they share run once):
    brought here and wrapped back in their chunks when together they hold at most `small`
    bytes, else persisted (on a cluster's workers, where a client is set) and waited for."""
    dask = _module("dask")
    if sum(a.nbytes for a in arrays) <= small:
        from_array = _module("dask.array").from_array
        values = dask.compute(*arrays)
        return [from_array(np.asarray(v), chunks=a.chunks) for v, a in zip(values, arrays)]
    arrays = list(dask.persist(*arrays))
    # Waiting keeps the next computation from being sent while this one runs: both would
    # share tasks, which Dask's fused graphs may give different specs (dask issue 9888).
    # Without a distributed client, persist has computed them already.
    try:
        _module("distributed").wait(arrays)
    except (ImportError, ValueError):
        pass
    return arrays


def dask_token(a) -> str:
    """Dask's token of the values of `a` (its graph's name for a Dask array)."""
    if is_lazy(a):
        return a.__dask_tokenize__()
    return _module("dask.base").tokenize(a)


def dask_array_attribute(name: str):
    """An attribute of Dask's array class (its default scheduler, its graph optimization);
    AttributeError where Dask is not installed (so that nothing takes a tensor for a Dask
    collection there)."""
    try:
        return getattr(_module("dask.array").Array, name)
    except ImportError as e:
        raise AttributeError(f"{name}: Dask is not installed") from e


def outside(xp, shape, key):
    """A bool array of `shape`: False at `key`, True elsewhere."""
    return assign(xp, xp.ones(shape, dtype=xp.bool), key, False)


def is_basic(key) -> bool:
    """Whether an index key is basic (ints, slices, None, Ellipsis): it selects a view."""
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
    size = math.prod(shape)
    positions = take(xp, xp.reshape(xp.arange(size), shape), indices, axis)
    flat = scatter_add(xp, xp.reshape(positions, (-1,)), xp.reshape(g, (-1,)), size, dtype)
    return xp.reshape(flat, shape)


def take_along_add(xp, g, p):
    """Zeros of the input's shape and dtype with `g` added at `indices` along `axis` (repeated
    indices add up, axes along which the input was broadcast are summed); `p` is
    take_along_axis's (indices, axis, input shape, input dtype)."""
    indices, axis, shape, dtype = p
    n = shape[axis]
    full = g.shape[:axis] + (n,) + g.shape[axis + 1 :]
    if xp is np:
        key = tuple(
            indices if d == axis else np.arange(k).reshape((k,) + (1,) * (g.ndim - 1 - d))
            for d, k in enumerate(g.shape)
        )
        out = index_add(xp, g, (key, full, dtype))
    else:
        positions = xp.reshape(_flat_positions(xp, full, indices, axis, g.shape), (-1,))
        size = math.prod(full)
        out = xp.reshape(scatter_add(xp, positions, xp.reshape(g, (-1,)), size, dtype), full)
    return sum_to(xp, out, shape)


# ----------------------------------------------------------------------------- library gaps
# Where the standard leaves a gap that a library fills its own way (writes into JAX's immutable
# arrays, a scatter-add, PyTorch's slices with negative steps, Dask's missing take_along_axis)
# or a library departs from it (Dask's Cholesky factor, svdvals, 0-d searches and one-chunk
# FFTs), rules call these helpers: library names appear here and nowhere else.

# First match wins: "jax.numpy" is JAX, "array_api_compat.dask.array" Dask; "vmap" is
# chainrule's own namespace of batched arrays (_batching), whose gaps are filled here too.
_KNOWN = ("vmap", "dask", "jax", "torch", "cupy", "array_api_strict", "numpy")
_libraries: dict[int, str] = {id(np): "numpy"}


def library(xp) -> str:
    """The array library behind namespace `xp` (a backend's, or the namespace a rule runs
    with, named after it): one of _KNOWN, else its top module's name."""
    lib = _libraries.get(id(xp))
    if lib is None:
        name = name_of(xp)
        found = [k for k in _KNOWN if re.search(rf"\b{k}\b", name)]
        lib = found[0] if found else name.split(".")[0]
        _libraries[id(xp)] = lib
    return lib


def _module(name: str):
    return importlib.import_module(name)


def getitem(xp, a, key):
    """a[key]; PyTorch's slices take no negative step: those axes are flipped first. Dask
    gives a selection by an integer array of one element the indexed array's shape (its
    values are right): such an array is doubled, and the result cut back to one."""
    lib = library(xp)
    if lib == "vmap":  # `a` or the key's arrays may be batched
        return xp.vmap_getitem(a, key)
    if lib == "torch":
        axes, key = _positive_steps(key, a.shape)
        if axes:
            a = xp.flip(a, axis=axes)
        moved = _torch_order(key, a.ndim)
        if moved is not None:
            at, n = moved
            return xp.moveaxis(a[key], tuple(range(at, at + n)), tuple(range(n)))
    elif lib == "numpy" or lib == "array_api_strict":
        if key.__class__ is int or key.__class__ is tuple and _all_ints(key):
            # One element by integers: a 0-d view, as PyTorch's (NumPy's is a scalar copy).
            return a[(key if key.__class__ is tuple else (key,)) + (Ellipsis,)]
    if lib == "dask":
        keys = key if isinstance(key, tuple) else (key,)
        for i, k in enumerate(keys):
            if _one_index(k):
                doubled = keys[:i] + (xp.concat([k, k]),) + keys[i + 1 :]
                at = _result_axis(keys[:i], a.ndim - sum(_consumed(e) for e in keys))
                return a[doubled][(slice(None),) * at + (slice(0, 1),)]
    return a[key]


def _torch_order(key, ndim: int) -> tuple[int, int] | None:
    """Where PyTorch's indexing orders the result's axes otherwise than NumPy's: (at, n), the
    n axes of the key's index arrays left at `at` that NumPy puts first; None where the two
    agree. NumPy counts integers beside index arrays as advanced indices, whose axes go first
    when a slice, None or Ellipsis separates any two; PyTorch selects by integers first, so
    only a separation between the arrays themselves moves their axes."""
    keys = key if isinstance(key, tuple) else (key,)
    arrays, advanced = [], []
    for i, k in enumerate(keys):
        if k is None or k is Ellipsis or isinstance(k, slice):
            continue
        advanced.append(i)
        if not isinstance(k, int) and k.ndim:  # a 0-d array selects, as an integer
            arrays.append(i)
    if not arrays or advanced[-1] - advanced[0] + 1 == len(advanced):
        return None  # no array, or NumPy's advanced indices side by side
    between = keys[arrays[0] : arrays[-1] + 1]
    if any(k is None or k is Ellipsis or isinstance(k, slice) for k in between):
        return None  # the arrays apart: both put their axes first
    spanned = ndim - sum(0 if k is None or k is Ellipsis else _consumed(k) for k in keys)
    at = 0
    for k in keys[: arrays[0]]:
        if k is Ellipsis:
            at += spanned
        elif k is None or isinstance(k, slice):
            at += 1
    kinds = [keys[i] for i in arrays]
    n = max(1 if dtype_kind(k.dtype) == "b" else k.ndim for k in kinds)
    return at, n


def _all_ints(keys: tuple) -> bool:
    for k in keys:
        if k.__class__ is not int:
            return False
    return True


def take(xp, x, indices, axis: int):
    """xp.take (for Dask, a one-element `indices` as in getitem)."""
    if library(xp) == "dask" and _one_index(indices):
        cut = (slice(None),) * axis + (slice(0, 1),)
        return xp.take(x, xp.concat([indices, indices]), axis=axis)[cut]
    return xp.take(x, indices, axis=axis)


def _one_index(k) -> bool:
    """Whether key entry k is an integer array of one element, in one dimension."""
    return (
        getattr(k, "ndim", 0) == 1
        and k.shape[0] == 1
        and dtype_kind(k.dtype) in "iu"
        and not isinstance(k, np.ndarray)
    )


def _consumed(k) -> int:
    """The axes of the indexed array that key entry k uses (Ellipsis counted apart)."""
    return 0 if k is None or k is Ellipsis else getattr(k, "ndim", 1) or 1


def _result_axis(before, spanned: int) -> int:
    """Where the axis of an integer array key lands, after the key entries `before` it (an
    Ellipsis spans `spanned` axes)."""
    at = 0
    for k in before:
        if k is Ellipsis:
            at += spanned
        elif k is None or isinstance(k, slice):
            at += 1
    return at


def assign(xp, a, key, v):
    """`a` with a[key] = v: `a` itself, written in place, or a new array where arrays are
    immutable (JAX) or the write can't be made in place (PyTorch's negative steps)."""
    lib = library(xp)
    if lib == "vmap":
        return xp.vmap_assign(a, key, v)
    if lib == "jax":
        if getattr(v, "dtype", a.dtype) != a.dtype:
            v = xp.astype(v, a.dtype)  # cast as NumPy's assignment does (JAX warns)
        nd = getattr(v, "ndim", 0)
        if nd and nd > a[key].ndim:
            # NumPy's and PyTorch's rule, which JAX lacks: a value's extra leading axes of
            # length 1 are dropped.
            v = xp.reshape(v, v.shape[nd - a[key].ndim :])
        return a.at[key].set(v)
    if lib == "torch":
        if getattr(v, "dtype", a.dtype) != a.dtype:
            v = xp.astype(v, a.dtype)  # cast as NumPy's assignment does (PyTorch refuses)
        axes, key = _positive_steps(key, a.shape)
        moved = _torch_order(key, a.ndim)
        if moved is not None and getattr(v, "ndim", 0):
            v = _torch_value(xp, a, key, v, *moved)
        if axes:
            flipped = xp.flip(a, axis=axes)
            flipped[key] = v
            return xp.flip(flipped, axis=axes)
    a[key] = v
    return a


def _torch_value(xp, a, key, v, at: int, n: int):
    """Value v for a[key] in NumPy's order of axes (see _torch_order) in PyTorch's."""
    shape = tuple(a[key].shape)  # PyTorch's order
    shape = shape[at : at + n] + shape[:at] + shape[at + n :]
    if v.ndim > len(shape):  # leading axes of 1, which NumPy drops
        v = xp.reshape(v, tuple(v.shape[v.ndim - len(shape) :]))
    v = xp.broadcast_to(v, shape)
    return xp.moveaxis(v, tuple(range(n)), tuple(range(at, at + n)))


def diagonal(xp, x, offset: int):
    """The diagonal `offset` of each matrix of x: a view, writable where x is (NumPy's is
    read-only: made here from x's strides, as PyTorch's, which a write through may reach)."""
    d = xp.linalg.diagonal(x, offset=offset)
    strict = library(xp) == "array_api_strict"
    a = x._array if strict else x
    if a.__class__ is np.ndarray and not writable(d) and a.flags.writeable:
        corner = a[..., max(0, -offset) :, max(0, offset) :]
        step = a.strides[-2] + a.strides[-1]
        d = np.lib.stride_tricks.as_strided(corner, d.shape, a.strides[:-2] + (step,))
        if strict:
            d = xp.asarray(d, copy=False)
    return d


def write_into(xp, a, key, v) -> None:
    """a[key] = v in a's own memory, which its views see (a library whose assignment made a
    new array, as PyTorch's with a negative step: copied back)."""
    out = assign(xp, a, key, v)
    if out is not a:
        a[...] = out


def _positive_steps(key, shape):
    """(axes, key'): a[key] == flip(a, axes)[key'] with no negative step in key'."""
    keys = key if isinstance(key, tuple) else (key,)
    if not any(isinstance(k, slice) and k.step is not None and k.step < 0 for k in keys):
        return (), key
    used = sum(0 if k is None or k is Ellipsis else getattr(k, "ndim", 1) or 1 for k in keys)
    axes, out, d = [], [], 0
    for k in keys:
        if k is Ellipsis:
            d += len(shape) - used
        elif isinstance(k, slice) and k.step is not None and k.step < 0:
            n = shape[d]
            picked = range(*k.indices(n))
            if len(picked):
                k = slice(n - 1 - picked[0], n - picked[-1], -k.step)
            else:
                k = slice(0, 0)
            axes.append(d)
        if k is not None and k is not Ellipsis:
            d += getattr(k, "ndim", 1) or 1
        out.append(k)
    return tuple(axes), tuple(out)


def scatter_add(xp, positions, values, size: int, dtype):
    """A 1-D array of `size` zeros of `dtype` with `values` added at `positions` (1-D integer
    arrays; repeated positions add up), by the library's own scatter-add."""
    lib = library(xp)
    if lib == "vmap":
        return xp.vmap_scatter_add(positions, values, size, dtype)
    if lib == "numpy":
        out = np.zeros(size, dtype=dtype)
        np.add.at(out, positions, values)
        return out
    if lib == "torch":
        return xp.zeros(size, dtype=dtype, device=positions.device).index_add_(
            0, positions, xp.astype(values, dtype)
        )
    if lib == "jax":
        return xp.zeros(size, dtype=dtype).at[positions].add(values)
    if lib == "cupy":
        out = xp.zeros(size, dtype=dtype)
        _module("cupyx").scatter_add(out, positions, values)
        return out
    if lib == "dask":
        bincount = _module("dask.array").bincount
        values = values.rechunk(positions.chunks)  # its weights must be chunked as positions
        if dtype_kind(values.dtype) == "c":  # bincount weighs by real numbers only
            sums = bincount(positions, weights=xp.real(values), minlength=size) + 1j * bincount(
                positions, weights=xp.imag(values), minlength=size
            )
        else:
            sums = bincount(positions, weights=values, minlength=size)
        return xp.astype(sums, dtype)
    # Generic: a one-hot matrix (memory grows as size x number of values).
    onehot = xp.astype(xp.arange(size)[:, None] == positions[None, :], dtype)
    return xp.matmul(onehot, values)


def take_along_axis(xp, x, indices, axis: int):
    """xp.take_along_axis, or for Dask (which lacks it) a gather of flat positions."""
    if library(xp) != "dask":
        return xp.take_along_axis(x, indices, axis=axis)
    shape = tuple(max(a, b) for a, b in zip(x.shape, indices.shape))
    shape = shape[:axis] + (indices.shape[axis],) + shape[axis + 1 :]
    flat = xp.reshape(x, (-1,))
    return xp.reshape(
        xp.take(flat, xp.reshape(_flat_positions(xp, x.shape, indices, axis, shape), (-1,))), shape
    )


def _flat_positions(xp, shape, indices, axis, out_shape):
    """The flat position in an array of `shape` of each element that take_along_axis picks."""
    strides = [math.prod(shape[d + 1 :]) for d in range(len(shape))]
    pos = xp.broadcast_to(indices * strides[axis], out_shape)
    for d, n in enumerate(out_shape):
        if d != axis:
            step = xp.reshape(
                xp.arange(n) * (strides[d] if shape[d] != 1 else 0),
                (1,) * d + (n,) + (1,) * (len(out_shape) - d - 1),
            )
            pos = pos + step
    return pos


def layout(a):
    """How `a` is laid out where a gradient spread over its shape should follow it: a Dask
    array's chunks; None for every other library."""
    if a.__class__ is ndarray or library(namespace(a)) != "dask":
        return None
    return a.chunks


def lazy_summary(a) -> str | None:
    """What a lazy (Dask) array is without computing it: its library, shape, dtype and chunks
    (None for arrays of the other libraries, whose values are at hand)."""
    if a.__class__ is ndarray or library(namespace(a)) != "dask":
        return None
    chunks = ", ".join(_axis_chunks(c) for c in a.chunks)
    if len(a.chunks) == 1:
        chunks += ","
    return f"dask.array<shape={tuple(a.shape)}, dtype={a.dtype}, chunks=({chunks})>"


def _axis_chunks(sizes: tuple) -> str:
    """One axis's chunk sizes, short: (1000,) * 4 + (200,) for 4 chunks of 1000 and one of
    200; a long irregular axis by its ends and count."""
    first, n = sizes[0], len(sizes)
    body = sizes[:-1] if n > 1 and sizes[-1] != first else sizes
    if n > 2 and all(s == first for s in body):
        text = f"({first},) * {len(body)}"
        return text if body is sizes else f"{text} + ({sizes[-1]},)"
    if n <= 6:
        return repr(tuple(sizes))
    return f"({sizes[0]}, {sizes[1]}, ..., {sizes[-1]}) [{n} chunks]"


def broadcast_to(xp, a, shape, layout=None):
    """xp.broadcast_to; on Dask in the chunks `layout` (else a broadcast axis would be one
    chunk as large as the whole axis). Dask takes new chunks only along broadcast axes: `a`'s
    own axes are rechunked to the layout first where they differ."""
    if layout is not None and library(xp) == "dask":
        lead = len(shape) - a.ndim
        own = {
            d: layout[lead + d]
            for d in range(a.ndim)
            if a.shape[d] != 1 and a.chunks[d] != layout[lead + d]
        }
        if own:
            a = a.rechunk(own)
        return _module("dask.array").broadcast_to(a, shape, chunks=layout)
    return xp.broadcast_to(a, shape)


def cholesky(xp, x):
    """The lower Cholesky factor of x. array-api-compat's Dask namespace returns Dask's default,
    the upper factor: Dask is asked for the lower one."""
    if library(xp) == "dask":
        return xp.linalg.cholesky(x, lower=True)
    return xp.linalg.cholesky(x)


def searchsorted(xp, x1, v, side, sorter):
    """xp.searchsorted. Dask's takes no sorter (x1 is put in order first there) and fails on
    0-d values when computed (they search as one value)."""
    if library(xp) == "dask":
        if sorter is not None:
            x1 = xp.take(x1, sorter)
            sorter = None
        if v.ndim == 0:
            found = xp.searchsorted(x1, xp.reshape(v, (1,)), side=side)
            return xp.reshape(found, ())
    return xp.searchsorted(x1, v, side=side, sorter=sorter)


def unchunked(xp, a, axes):
    """`a`, for Dask in one chunk along `axes` (its transforms take no other; a gradient
    joined from slices has several)."""
    if library(xp) == "dask":
        return a.rechunk(dict.fromkeys(axes, -1))
    return a


def eye(xp, n_rows, n_cols, k, **kwargs):
    """xp.eye. Dask's eye of a wide matrix builds a graph that fails when computed: the
    transpose of the tall one there."""
    if library(xp) == "dask" and n_cols is not None and n_cols > n_rows:
        return xp.permute_dims(xp.eye(n_cols, n_rows, k=-k, **kwargs), (1, 0))
    return xp.eye(n_rows, n_cols, k=k, **kwargs)


def inv(xp, x):
    """The inverse of x, in x's dtype (Dask's is float64 for float32 matrices)."""
    out = xp.linalg.inv(x)
    return out if out.dtype == x.dtype else xp.astype(out, x.dtype)


def matrix_rank(xp, x, rtol):
    """The rank of x: singular values above rtol times the largest (rtol: the standard's
    default where None). array-api-compat's Dask matrix_rank passes Dask's svd an argument it
    doesn't take: counted from svdvals there."""
    if library(xp) != "dask":
        return xp.linalg.matrix_rank(x, rtol=rtol)
    s = svdvals(xp, x)
    if rtol is None:
        rtol = max(x.shape[-2:]) * xp.finfo(x.dtype).eps
    elif not isinstance(rtol, (int, float)):
        rtol = xp.expand_dims(rtol, axis=-1)
    return xp.count_nonzero(s > xp.max(s, axis=-1, keepdims=True) * rtol, axis=-1)


def svdvals(xp, x):
    """The singular values of x. array-api-compat's Dask svdvals asks Dask for full matrices,
    which it refuses: the reduced decomposition's."""
    if library(xp) == "dask":
        return xp.linalg.svd(x, full_matrices=False)[1]
    return xp.linalg.svdvals(x)


def _dask_index_add(xp, out, key, g):
    """Dask's item assignment refuses an empty selection and boolean masks (whose selections
    have unknown sizes until computed)."""
    if _is_mask(key):
        raise NotImplementedError(
            "the gradient of boolean-mask indexing of a Dask array is not supported: the "
            "selection's size is unknown until computed (NaN chunk sizes); use "
            "where(mask, x, 0), or compute the chunk sizes first"
        )
    if math.prod(g.shape) == 0:
        return out
    out[key] = g
    return out


def derivative_kernels(xp) -> dict:
    """The library's own kernels for derivative formulas of `_rules.KERNELS`, by name: one
    call where the formula takes several (and PyTorch's operators with a Python scalar cost
    more than the kernel), same values. Only PyTorch's are used so far."""
    if library(xp) != "torch":
        return {}
    aten = _module("torch").ops.aten
    return {
        "tanh_backward": _unconjugated(aten.tanh_backward.default),
        "sigmoid_backward": _unconjugated(aten.sigmoid_backward.default),
    }


def _unconjugated(overload):
    """PyTorch's derivative kernel `overload(g, out)`, without the conjugate it takes of a
    complex derivative (PyTorch's convention, built in): chainrule's formulas compute J^T g
    and the engine conjugates around them."""
    # The operator's own entry point, behind the overload's Python __call__: 0.5 us less per
    # call (tanh's VJP in W1 on PyTorch storage); the overload where a version lacks it.
    kernel = getattr(overload, "_op", overload)

    def call(g, out):
        if out.is_complex():
            return kernel(g.conj(), out).conj()
        return kernel(g, out)

    return call


def to_numpy(a):
    """A NumPy array of a's values: copied to the host from a device, computed for Dask (the
    user asked), with PyTorch's lazy conjugate and negative bits resolved."""
    if isinstance(a, np.ndarray):
        return a
    lib = library(namespace(a))
    if lib == "torch":
        return a.detach().resolve_conj().resolve_neg().cpu().numpy()
    if lib == "cupy":
        return a.get()
    if lib == "dask":
        return np.asarray(a.compute())
    try:
        return np.from_dlpack(a)
    except (TypeError, AttributeError, BufferError, RuntimeError):
        return np.asarray(a)


def to_device(a, device, stream=None):
    """a on `device`: the array's own to_device, or array-api-compat's where it has none."""
    kwargs = {} if stream is None else {"stream": stream}
    if hasattr(a, "to_device"):
        return a.to_device(device, **kwargs)
    try:
        return _compat().to_device(a, device, **kwargs)
    except RuntimeError as e:  # PyTorch's word for a device it does not know
        raise ValueError(str(e)) from e


def device(a):
    """a's device: its own `device` attribute, or array-api-compat's answer."""
    d = getattr(a, "device", None)
    if d is None and _compat() is not None:
        return _compat().device(a)
    return "cpu" if d is None else d


# ----------------------------------------------------------------------------- special functions
# chainrule.special's values come from the library's own kernels, by SciPy's names: SciPy's
# ufuncs for NumPy (SciPy is optional: only these functions need it), torch.special's and
# jax.scipy.special's where they have the function.
_SPECIAL_NAMES = {
    "torch": {"j0": "bessel_j0", "j1": "bessel_j1"},
    "jax": {},
}
_SPECIAL_MODULES = {"torch": "torch.special", "jax": "jax.scipy.special"}
_PY_SCALARS = (bool, int, float, complex)
_special_kernels: dict = {}


def special_function(xp, name: str):
    """The kernel of special function `name` (SciPy's name) for arrays of namespace `xp`:
    the library's own, or a namespace's `special_kernel` (vmap's batches them), or SciPy's
    through NumPy where the library has none (by DLPack, for arrays on the CPU; Dask's block
    by block, lazily); ImportError naming SciPy where it is needed and missing,
    NotImplementedError for other libraries."""
    key = (id(xp), name)
    fn = _special_kernels.get(key)
    if fn is not None:
        return fn
    own = getattr(xp, "special_kernel", None)
    lib = library(xp)
    if own is not None:
        fn = own(name)
    elif lib == "array_api_strict":
        fn = _through_numpy(xp, _scipy_special(name))
    elif lib == "dask":
        fn = _blockwise(xp, _scipy_special(name))
    elif lib == "numpy":
        fn = _scipy_special(name)
    elif lib in _SPECIAL_MODULES:
        module = _module(_SPECIAL_MODULES[lib])
        fn = getattr(module, _SPECIAL_NAMES[lib].get(name, name), None)
        if fn is None:  # SciPy's, for arrays on the CPU
            fn = _through_numpy(xp, _scipy_special(name))
    else:
        raise NotImplementedError(
            f"chainrule.special.{name}: no kernel for {lib} arrays (chainrule uses SciPy's for "
            "NumPy, array-api-strict and Dask, torch.special's and jax.scipy.special's)"
        )
    _special_kernels[key] = fn
    return fn


def _scipy_special(name: str):
    try:
        module = _module("scipy.special")
    except ImportError as e:
        raise ImportError(
            f"chainrule.special.{name} on NumPy arrays needs SciPy, which is not installed: "
            "pip install scipy"
        ) from e
    return getattr(module, name)


def _through_numpy(xp, fn):
    """fn (SciPy's, on NumPy arrays) on arrays of xp, exchanged by DLPack."""

    def call(*args):
        return xp.asarray(
            fn(*(a if a.__class__ in _PY_SCALARS else np.from_dlpack(a) for a in args))
        )

    return call


def _blockwise(xp, fn):
    """fn (SciPy's, elementwise) on Dask arrays: block by block, lazily, after broadcasting."""
    dask_array = _module("dask.array")

    def call(*args):
        arrays = [a for a in args if a.__class__ not in _PY_SCALARS]
        shaped = iter(dask_array.broadcast_arrays(*arrays))
        args = [a if a.__class__ in _PY_SCALARS else next(shaped) for a in args]
        dtype = np.result_type(*(a.dtype for a in arrays), np.float32)
        return dask_array.map_blocks(fn, *args, dtype=dtype)

    return call
