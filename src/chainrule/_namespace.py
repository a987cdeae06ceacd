"""chainrule's public array functions (Array API names and signatures): the primitives of
`_rules` with their parameters checked, composites built from them, creation functions,
dtypes, and the operators and methods of Tensor."""

from __future__ import annotations

import builtins
import inspect
import numbers as _numbers
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Literal, NamedTuple, cast, overload

from . import _backend, _batching, _factories, _tensor
from ._backend import DEFAULT_FLOAT, normalize_axes, to_backend_dtype
from ._dtypes import (  # noqa: F401 - public
    __array_namespace_info__,
    bool,
    can_cast,
    complex64,
    complex128,
    e,
    finfo,
    float16,
    float32,
    float64,
    iinfo,
    inf,
    int8,
    int16,
    int32,
    int64,
    isdtype,
    nan,
    newaxis,
    pi,
    result_type,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ._rules import OPS, RULES
from ._tensor import Tensor, as_tensor, as_tensors
from ._typing import ArrayLike, Axis, Device, DTypeLike, IndexKey, Scalar, Shape

np = _backend.np

# chainrule's namespace: the Array API standard's names, then chainrule's own (tensor,
# logsumexp, softmax, log_softmax, angle). chainrule/__init__.py exports exactly these.
__all__ = [
    # constants and data types
    "e", "inf", "nan", "newaxis", "pi",
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128",
    # data type functions
    "astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type",
    # creation
    "arange", "asarray", "empty", "empty_like", "eye", "from_dlpack", "full", "full_like",
    "linspace", "meshgrid", "ones", "ones_like", "tril", "triu", "zeros", "zeros_like",
    # elementwise
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
    "bitwise_invert", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "ceil", "clip", "conj", "copysign", "cos", "cosh", "divide", "equal", "exp", "expm1",
    "floor", "floor_divide", "greater", "greater_equal", "hypot", "imag", "isfinite", "isinf",
    "isnan", "less", "less_equal", "log", "log1p", "log2", "log10", "logaddexp", "logical_and",
    "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative",
    "nextafter", "not_equal", "positive", "pow", "real", "reciprocal", "remainder", "round",
    "sign", "signbit", "sin", "sinh", "sqrt", "square", "subtract", "tan", "tanh", "trunc",
    # indexing
    "take", "take_along_axis",
    # linear algebra
    "matmul", "matrix_transpose", "tensordot", "vecdot",
    # manipulation
    "broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip",
    "moveaxis", "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack",
    # searching
    "argmax", "argmin", "count_nonzero", "nonzero", "searchsorted", "where",
    # sets
    "isin", "unique_all", "unique_counts", "unique_inverse", "unique_values",
    # sorting
    "argsort", "sort",
    # statistics
    "cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var",
    # utility
    "all", "any", "diff",
    # inspection
    "__array_namespace_info__",
    # chainrule's own
    "tensor", "logsumexp", "softmax", "log_softmax", "angle", "float16",
]  # fmt: skip


# ----------------------------------------------------------------------------- elementwise


_ONE_ARRAY = inspect.Signature([inspect.Parameter("x", inspect.Parameter.POSITIONAL_ONLY)])
_TWO_ARRAYS = inspect.Signature(
    [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in ("x1", "x2")]
)


# Where a function is not differentiable everywhere, the gradient chainrule gives there (as
# PyTorch); these notes complete the generated docstrings.
_CONVENTIONS = {
    "abs": "gradient 0 at 0",
    "sign": "gradient 0",
    "floor": "gradient 0",
    "ceil": "gradient 0",
    "trunc": "gradient 0",
    "round": "gradient 0",
    "floor_divide": "gradient 0",
    "pow": "d/dx2 is 0 where x1 is 0",
    "maximum": "tied elements share the gradient evenly",
    "minimum": "tied elements share the gradient evenly",
    "remainder": "d/dx1 is 1, d/dx2 is -floor(x1 / x2)",
    "hypot": "gradient 0 where x1 and x2 are 0",
    "copysign": "d/dx1 is 0 at x1 == 0, d/dx2 is 0",
    "nextafter": "d/dx1 is 1, d/dx2 is 0",
}


def _doc(name: str, what: str) -> str:
    note = _CONVENTIONS.get(name)
    return f"{what} (as the Array API standard); differentiable" + (f": {note}." if note else ".")


def _elementwise(name: str) -> Callable[[ArrayLike], Tensor]:
    """The primitive itself (no wrapper on the hot path), showing the standard's signature."""
    op = OPS[name]
    op.__signature__ = _ONE_ARRAY  # type: ignore[attr-defined]
    op.__module__ = __name__  # found here by name (pickle, documentation tools)
    op.__doc__ = _doc(name, f"Elementwise {name} of x")
    return op


def _binary(name: str) -> Callable[[ArrayLike, ArrayLike], Tensor]:
    """The two-input primitive itself, showing the standard's signature."""
    op = OPS[name]
    op.__signature__ = _TWO_ARRAYS  # type: ignore[attr-defined]
    op.__module__ = __name__
    if name == "matmul":
        what = "The matrix product of x1 and x2"
    else:
        what = f"Elementwise {name} of x1 and x2, broadcast together"
    op.__doc__ = _doc(name, what)
    return op


negative = _elementwise("negative")
positive = _elementwise("positive")
abs = _elementwise("abs")  # noqa: A001
square = _elementwise("square")
sqrt = _elementwise("sqrt")
exp = _elementwise("exp")
expm1 = _elementwise("expm1")
log = _elementwise("log")
log1p = _elementwise("log1p")
log2 = _elementwise("log2")
log10 = _elementwise("log10")
sin = _elementwise("sin")
cos = _elementwise("cos")
tan = _elementwise("tan")
asin = _elementwise("asin")
acos = _elementwise("acos")
atan = _elementwise("atan")
sinh = _elementwise("sinh")
cosh = _elementwise("cosh")
tanh = _elementwise("tanh")
asinh = _elementwise("asinh")
acosh = _elementwise("acosh")
atanh = _elementwise("atanh")
sign = _elementwise("sign")
floor = _elementwise("floor")
ceil = _elementwise("ceil")
trunc = _elementwise("trunc")
round = _elementwise("round")  # noqa: A001
reciprocal = _elementwise("reciprocal")

add = _binary("add")
subtract = _binary("subtract")
multiply = _binary("multiply")
divide = _binary("divide")
pow = _binary("pow")  # noqa: A001
atan2 = _binary("atan2")
maximum = _binary("maximum")
minimum = _binary("minimum")
floor_divide = _binary("floor_divide")
remainder = _binary("remainder")
matmul = _binary("matmul")
hypot = _binary("hypot")
logaddexp = _binary("logaddexp")
copysign = _binary("copysign")
nextafter = _binary("nextafter")


def _nondiff(name: str, signature: inspect.Signature = _TWO_ARRAYS) -> Callable[..., Tensor]:
    """A function whose result carries no gradient (bool or integer results)."""
    op = OPS[name]

    def fn(*args: ArrayLike) -> Tensor:
        return op(args)

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise {name} (as the Array API standard); the result carries no gradient."
    fn.__signature__ = signature  # type: ignore[attr-defined]
    return fn


equal = _nondiff("equal")
not_equal = _nondiff("not_equal")
less = _nondiff("less")
less_equal = _nondiff("less_equal")
greater = _nondiff("greater")
greater_equal = _nondiff("greater_equal")
isnan = _nondiff("isnan", _ONE_ARRAY)
isinf = _nondiff("isinf", _ONE_ARRAY)
isfinite = _nondiff("isfinite", _ONE_ARRAY)
logical_and = _nondiff("logical_and")
logical_or = _nondiff("logical_or")
logical_xor = _nondiff("logical_xor")
logical_not = _nondiff("logical_not", _ONE_ARRAY)
bitwise_and = _nondiff("bitwise_and")
bitwise_or = _nondiff("bitwise_or")
bitwise_xor = _nondiff("bitwise_xor")
bitwise_invert = _nondiff("bitwise_invert", _ONE_ARRAY)
bitwise_left_shift = _nondiff("bitwise_left_shift")
bitwise_right_shift = _nondiff("bitwise_right_shift")
signbit = _nondiff("signbit", _ONE_ARRAY)


def real(x: ArrayLike, /) -> Tensor:
    """The real part of x (differentiable: a complex x gets the gradient g + 0i); a real x as
    it is."""
    x = as_tensor(x)
    return OPS["real"](x, x._data.dtype) if x.dtype.kind == "c" else positive(x)


def imag(x: ArrayLike, /) -> Tensor:
    """The imaginary part of a complex x (differentiable: the gradient is i g)."""
    x = as_tensor(x)
    return OPS["imag"](x, x._data.dtype)


def conj(x: ArrayLike, /) -> Tensor:
    """The complex conjugate of x (differentiable); a real x as it is."""
    x = as_tensor(x)
    return OPS["conj"](x) if x.dtype.kind == "c" else positive(x)


def angle(x: ArrayLike, /) -> Tensor:
    """The argument of each complex element, in (-pi, pi] (0 or pi for real values), as
    PyTorch's angle: differentiable, with gradient 0 at 0 and for real x."""
    return OPS["angle"](x)


@overload
def where(condition: ArrayLike, /) -> tuple[Tensor, ...]: ...
@overload
def where(condition: ArrayLike, x1: ArrayLike, x2: ArrayLike, /) -> Tensor: ...
def where(
    condition: ArrayLike, x1: ArrayLike = None, x2: ArrayLike = None, /
) -> Tensor | tuple[Tensor, ...]:
    """Elements of x1 where condition holds, else of x2; differentiable in x1 and x2. With
    the condition alone, its nonzero indices (NumPy's and PyTorch's one-argument form, which
    array-API code written against NumPy calls: scikit-learn's roc_curve)."""
    if x1 is None or x2 is None:
        if x1 is None and x2 is None:
            return nonzero(condition)
        raise ValueError("where: either both or neither of x1 and x2 should be given")
    return OPS["where"]((condition, x1, x2))


def clip(x: ArrayLike, /, min: ArrayLike = None, max: ArrayLike = None) -> Tensor:  # noqa: A002
    """x limited to [min, max]. The gradient passes where min <= x <= max (to x) and goes to a
    tensor bound where x is beyond it, as PyTorch's clamp."""
    x = as_tensor(x)
    out = x
    if min is not None:
        out = where(less(out, min), min, out)
    if max is not None:
        out = where(greater(out, max), max, out)
    if out is x:
        return positive(x)
    if not _backend.is_floating(x._data.dtype):
        return astype(out, x.dtype)
    if x.requires_grad or _tensor.dual(x):
        # No gradient to a NaN x, which is not within [min, max] (PyTorch's).
        out = where(isnan(x), x.detach(), out)
    return out


# ----------------------------------------------------------------------------- reductions


def _reduction_params(x: Tensor, axis: Axis, keepdims: builtins.bool) -> tuple[Any, ...]:
    shape = tuple(x._data.shape)
    return (
        normalize_axes(axis, len(shape)), builtins.bool(keepdims), shape,
        _backend.layout(x._data),
    )  # fmt: skip


def _reduce(
    name: str, x: ArrayLike, axis: Axis, keepdims: builtins.bool, dtype: DTypeLike = None
) -> Tensor:
    x = as_tensor(x)
    if dtype is not None and _backend.from_backend_dtype(dtype).kind in "biu":
        # Integer results carry no gradient: the backend accumulates in `dtype` (NumPy would
        # widen small integers if only the input were cast).
        return _integral(name, x, dtype, axis=normalize_axes(axis, x.ndim), keepdims=keepdims)
    if dtype is not None and x.dtype != dtype:
        x = astype(x, dtype)
    return OPS[name](x, _reduction_params(x, axis, keepdims))


def _integral(name: str, x: Tensor, dtype: DTypeLike, **kwargs: Any) -> Tensor:
    return OPS["integer_reduction"]((x,), (name, _dtype(x._xp, dtype), tuple(kwargs.items())))


def _accumulator_dtype(x: Tensor, dtype: DTypeLike) -> DTypeLike:
    """The dtype that sums and products of x use: `dtype` if given; else x's, except that bool
    and integers widen to 64 bits (unsigned ones staying unsigned), as the standard says."""
    if dtype is not None or x.dtype.kind not in "biu":
        return dtype
    return uint64 if x.dtype.kind == "u" else int64


def sum(  # noqa: A001
    x: ArrayLike, /, *, axis: Axis = None, dtype: DTypeLike = None, keepdims: builtins.bool = False
) -> Tensor:
    """The sum along `axis` (all axes when None); bool and integers accumulate in 64 bits
    unless `dtype`. Differentiable for floating results."""
    x = as_tensor(x)
    return _reduce("sum", x, axis, keepdims, _accumulator_dtype(x, dtype))


def prod(
    x: ArrayLike, /, *, axis: Axis = None, dtype: DTypeLike = None, keepdims: builtins.bool = False
) -> Tensor:
    """The product along `axis` (all axes when None); bool and integers accumulate in 64
    bits unless `dtype`. The gradient is exact where x holds zeros (to first order; to any
    order where a reduced slice holds at most one zero)."""
    x = as_tensor(x)
    return _reduce("prod", x, axis, keepdims, _accumulator_dtype(x, dtype))


def mean(x: ArrayLike, /, *, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor:
    """The arithmetic mean along `axis` (all axes when None); differentiable."""
    return _reduce("mean", x, axis, keepdims)


def max(x: ArrayLike, /, *, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor:  # noqa: A001
    """The maximum along `axis` (all axes when None). Tied maxima share the gradient evenly,
    as PyTorch's amax."""
    return _reduce("max", x, axis, keepdims)


def min(x: ArrayLike, /, *, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor:  # noqa: A001
    """The minimum along `axis` (all axes when None). Tied minima share the gradient evenly,
    as PyTorch's amin."""
    return _reduce("min", x, axis, keepdims)


def var(
    x: ArrayLike, /, *, axis: Axis = None, correction: float = 0.0, keepdims: builtins.bool = False
) -> Tensor:
    """The variance along `axis` (all axes when None), dividing by the count less
    `correction` (1: the sample variance); NaN where no more values than the correction
    remain. A slice of equal values has variance 0 exactly, and gradient 0. Complex values
    have a real variance: the mean of |x - mean|^2."""
    x = as_tensor(x)
    axes = normalize_axes(axis, x.ndim)
    n = _backend.count(x.shape, axes)
    d = x - mean(x, axis=axes, keepdims=True)
    if n and x.dtype.kind != "c":
        # A slice of equal values has variance 0 exactly, and gradient 0: its deviations,
        # which the rounding of the mean leaves of order eps, lose a constant that zeroes them.
        d = d - OPS["var_rounding"]((x, d), axes)
    # The standard: NaN where there are no more values than the correction.
    dof = n - correction if n > correction else nan
    # Complex values: the mean of |d|^2, real (as NumPy and PyTorch).
    squares = d * d if x.dtype.kind != "c" else real(d * conj(d))
    return sum(squares, axis=axes, keepdims=keepdims) / dof


def std(
    x: ArrayLike, /, *, axis: Axis = None, correction: float = 0.0, keepdims: builtins.bool = False
) -> Tensor:
    """The square root of var. Where the variance is 0 the gradient is 0 (as PyTorch): sqrt
    there sees 1 and its result is replaced, so no 0 * inf reaches the gradient."""
    v = var(x, axis=axis, correction=correction, keepdims=keepdims)
    zero = equal(v, 0)
    return where(zero, 0.0, sqrt(where(zero, 1.0, v)))


def logsumexp(x: ArrayLike, /, *, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor:
    """log(sum(exp(x))) over `axis`, computed without overflow."""
    return _reduce("logsumexp", x, axis, keepdims)


def softmax(x: ArrayLike, /, *, axis: int = -1) -> Tensor:
    """exp(x) normalised to sum to 1 along `axis`, computed without overflow;
    differentiable."""
    x = as_tensor(x)
    return OPS["softmax"](x, normalize_axes(axis, x.ndim))


def log_softmax(x: ArrayLike, /, *, axis: int = -1) -> Tensor:
    """log(softmax(x)) along `axis`, computed without overflow; differentiable."""
    x = as_tensor(x)
    return OPS["log_softmax"](x, normalize_axes(axis, x.ndim))


def _cumulative(
    name: str, x: ArrayLike, axis: int | None, dtype: DTypeLike, include_initial: builtins.bool
) -> Tensor:
    x = as_tensor(x)
    if x.ndim == 0:
        # As NumPy and array_api_strict: a 0-d x counts as one element along axis 0.
        x = reshape(x, (1,))
    if axis is None:
        if x.ndim != 1:
            raise ValueError(f"{name}: axis is required for a tensor of {x.ndim} dimensions")
        axis = 0
    dtype = _accumulator_dtype(x, dtype)
    axis = normalize_axes(axis, x.ndim)[0]
    if dtype is not None and _backend.from_backend_dtype(dtype).kind in "biu":
        return _integral(name, x, dtype, axis=axis, include_initial=builtins.bool(include_initial))
    if dtype is not None and x.dtype != dtype:
        x = astype(x, dtype)
    return OPS[name](x, (axis, builtins.bool(include_initial)))


def cumulative_sum(
    x: ArrayLike,
    /,
    *,
    axis: int | None = None,
    dtype: DTypeLike = None,
    include_initial: builtins.bool = False,
) -> Tensor:
    """Running sums along `axis` (optional for 1-D x), led by 0 if include_initial."""
    return _cumulative("cumulative_sum", x, axis, dtype, include_initial)


def cumulative_prod(
    x: ArrayLike,
    /,
    *,
    axis: int | None = None,
    dtype: DTypeLike = None,
    include_initial: builtins.bool = False,
) -> Tensor:
    """Running products along `axis` (optional for 1-D x), led by 1 if include_initial; the
    gradient is exact where x holds zeros."""
    return _cumulative("cumulative_prod", x, axis, dtype, include_initial)


def diff(
    x: ArrayLike,
    /,
    n: int = 1,
    axis: int = -1,
    *,
    prepend: ArrayLike = None,
    append: ArrayLike = None,
) -> Tensor:
    """The n-th forward difference along `axis` of x between `prepend` and `append` (arrays,
    or scalars that stand for a slice of x), by slicing and subtraction (differentiable);
    bool values differ by not_equal, as NumPy's. n and axis may also come positionally, in
    NumPy's order (the standard makes them keywords): array-API code written against NumPy
    calls `xp.diff(x, 2)` (scikit-learn's roc_curve)."""
    x = as_tensor(x)
    if x.ndim == 0:
        raise ValueError("diff needs a tensor of at least one dimension")
    if n < 0:
        raise ValueError(f"diff: n must be non-negative, got {n}")
    axis = normalize_axes(axis, x.ndim)[0]
    if prepend is not None or append is not None:
        # NumPy's: a scalar (0-d) stands for a slice of x's shape along the axis.
        edge = x.shape[:axis] + (1,) + x.shape[axis + 1 :]
        parts = [_tensor.constant(t, x._xp) for t in (prepend, x, append) if t is not None]
        x = concat([broadcast_to(t, edge) if t.ndim == 0 else t for t in parts], axis=axis)
    lead = (slice(None),) * axis
    later, earlier = lead + (slice(1, None), ...), lead + (slice(None, -1), ...)
    for _ in range(n):
        if x.shape[axis] == 0:  # empty stays empty (a slice from 1 of it fails on some libraries)
            break
        x = not_equal(x[later], x[earlier]) if x.dtype.kind == "b" else x[later] - x[earlier]
    return x


def all(x: ArrayLike, /, *, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor:  # noqa: A001
    """Whether every element along `axis` is true (nonzero); no gradient."""
    x = as_tensor(x)
    axes = normalize_axes(axis, x.ndim)
    return OPS["all"]((x,), (axes, keepdims))


def any(x: ArrayLike, /, *, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor:  # noqa: A001
    """Whether some element along `axis` is true (nonzero); no gradient."""
    x = as_tensor(x)
    axes = normalize_axes(axis, x.ndim)
    return OPS["any"]((x,), (axes, keepdims))


# ----------------------------------------------------------------------------- linear algebra


def matrix_transpose(x: ArrayLike, /) -> Tensor:
    """x with its last two axes swapped (each matrix of a stack transposed); differentiable."""
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(f"matrix_transpose needs at least 2 dimensions, got shape {x.shape}")
    axes = tuple(range(x.ndim - 2)) + (x.ndim - 1, x.ndim - 2)
    return permute_dims(x, axes)


def tensordot(
    x1: ArrayLike, x2: ArrayLike, /, *, axes: int | tuple[Sequence[int], Sequence[int]] = 2
) -> Tensor:
    """Sum of products over the given axes, by permute, reshape and matmul."""
    x1, x2 = as_tensor(x1), as_tensor(x2)
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError("tensordot: axes must be a non-negative integer")
        ax1 = tuple(range(x1.ndim - axes, x1.ndim))
        ax2 = tuple(range(axes))
    else:
        ax1, ax2 = (tuple(a) for a in axes)
        ax1 = tuple(a % x1.ndim for a in ax1)
        ax2 = tuple(a % x2.ndim for a in ax2)
    if len(ax1) != len(ax2) or builtins.any(x1.shape[a] != x2.shape[b] for a, b in zip(ax1, ax2)):
        raise ValueError(
            f"tensordot: shape mismatch for sum over axes {ax1} of {x1.shape} "
            f"and {ax2} of {x2.shape}"
        )
    free1 = tuple(a for a in range(x1.ndim) if a not in ax1)
    free2 = tuple(a for a in range(x2.ndim) if a not in ax2)
    k = _backend.count(x1.shape, ax1)
    a = reshape(permute_dims(x1, free1 + ax1), (_backend.count(x1.shape, free1), k))
    b = reshape(permute_dims(x2, ax2 + free2), (k, _backend.count(x2.shape, free2)))
    shape = tuple(x1.shape[i] for i in free1) + tuple(x2.shape[i] for i in free2)
    return reshape(matmul(a, b), shape)


def vecdot(x1: ArrayLike, x2: ArrayLike, /, *, axis: int = -1) -> Tensor:
    """Dot products of vectors along `axis` (which is not broadcast), other axes broadcast."""
    x1, x2 = as_tensor(x1), as_tensor(x2)
    if not -builtins.min(x1.ndim, x2.ndim) <= axis < 0 or x1.shape[axis] != x2.shape[axis]:
        raise ValueError(
            f"vecdot: axis {axis} must be a negative axis of the same size in both inputs; "
            f"got shapes {x1.shape} and {x2.shape}"
        )
    if x1.dtype.kind == "c":
        x1 = conj(x1)
    product = x1 * x2
    return sum(product, axis=axis, dtype=product.dtype)


# ----------------------------------------------------------------------------- manipulation


def reshape(x: ArrayLike, /, shape: Shape, *, copy: builtins.bool | None = None) -> Tensor:
    """x with a new shape: a view where the backend gives one; a new array (recorded, so still
    differentiable) with copy=True; with copy=False, a ValueError where a view is impossible."""
    x = as_tensor(x)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if copy is False:
        x._xp.reshape(x._data, shape, copy=False)
    out = OPS["reshape"](x, (shape, x.shape))
    return OPS["copy"](out) if copy else out


def permute_dims(x: ArrayLike, /, axes: Sequence[int]) -> Tensor:
    """x with its axes in the order `axes`; differentiable (the gradient is permuted back)."""
    x = as_tensor(x)
    axes = tuple(a % x.ndim for a in axes) if x.ndim else tuple(axes)
    if sorted(axes) != list(range(x.ndim)):
        raise ValueError(f"permute_dims: axes {axes} is not a permutation of {x.ndim} axes")
    return OPS["permute_dims"](x, axes)


def expand_dims(x: ArrayLike, /, axis: int | tuple[int, ...] = 0) -> Tensor:
    """x with axes of size 1 at `axis` (an int or a tuple of ints), positions in the result."""
    x = as_tensor(x)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    n = x.ndim + len(axes)
    new = [a + n if a < 0 else a for a in axes]
    for a, b in zip(axes, new):
        if not 0 <= b < n:
            raise IndexError(f"expand_dims: axis {a} is out of bounds for {n} dimensions")
    if len(set(new)) != len(new):
        raise ValueError(f"expand_dims: repeated axis in {axis}")
    sizes = iter(x.shape)
    return reshape(x, tuple(1 if i in new else next(sizes) for i in range(n)))


def squeeze(x: ArrayLike, /, axis: int | tuple[int, ...]) -> Tensor:
    """x without the axes `axis`, which must have size 1; differentiable."""
    x = as_tensor(x)
    axes = normalize_axes(axis, x.ndim)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"squeeze: axis {a} has size {x.shape[a]}, not 1")
    return reshape(x, tuple(n for i, n in enumerate(x.shape) if i not in axes))


def broadcast_to(x: ArrayLike, /, shape: Sequence[int]) -> Tensor:
    """x broadcast to `shape`; the gradient is summed over the broadcast axes."""
    x = as_tensor(x)
    return OPS["broadcast_to"](x, (tuple(shape), x.shape))


def flip(x: ArrayLike, /, *, axis: Axis = None) -> Tensor:
    """x with the order of elements reversed along `axis` (all axes when None);
    differentiable."""
    x = as_tensor(x)
    return OPS["flip"](x, normalize_axes(axis, x.ndim))


def concat(arrays: Sequence[ArrayLike], /, *, axis: int | None = 0) -> Tensor:
    """The arrays joined along an existing `axis` (flattened first when axis is None);
    differentiable in each."""
    arrays, _ = as_tensors(arrays, "concat")
    if axis is None:
        arrays = tuple(reshape(a, (-1,)) for a in arrays)
        axis = 0
    ndim = arrays[0].ndim
    axis = normalize_axes(axis, ndim)[0]
    return OPS["concat"](arrays, (axis, tuple(a.shape[axis] for a in arrays)))


def stack(arrays: Sequence[ArrayLike], /, *, axis: int = 0) -> Tensor:
    """The arrays, all of one shape, joined along a new `axis`; differentiable in each."""
    arrays, _ = as_tensors(arrays, "stack")
    return OPS["stack"](arrays, normalize_axes(axis, arrays[0].ndim + 1)[0])


def take(x: ArrayLike, indices: ArrayLike, /, *, axis: int | None = None) -> Tensor:
    """The elements of x at integer `indices` along `axis` (optional for 1-D x); negative
    indices count from the end. Differentiable in x: the gradient is scattered back (summed
    over repeated indices)."""
    x = as_tensor(x)
    if axis is None:
        if x.ndim != 1:
            raise ValueError("take: axis is required for tensors of more than one dimension")
        axis = 0
    axis = normalize_axes(axis, x.ndim)[0]
    # Non-negative indices: the generic scatter-add of take's VJP matches positions 0..n-1.
    idx = OPS["wrap_indices"]((indices,), x.shape[axis])._data
    if _tensor.grad_mode.vmap:
        x = _lifted_to(x, (idx,))
    return OPS["take"](x, (idx, axis, x._data.shape, x._data.dtype))


def astype(
    x: ArrayLike, dtype: DTypeLike, /, *, copy: builtins.bool = True, device: Device = None
) -> Tensor:
    """x cast to `dtype` (x itself when copy=False and the dtype is x's). A cast between
    floating dtypes, real or complex, is differentiable (the gradient is cast back; a real x
    gets the real part of a complex one); to other dtypes the result carries no gradient."""
    x = as_tensor(x)
    dtype = _backend.from_backend_dtype(dtype)
    src = x._data.dtype
    target = to_backend_dtype(x._xp, dtype)
    if not copy and src == target:
        # The standard: x itself (for autograd, the identity).
        return x
    dual = _tensor.dual(x)
    if (x._edge is None and not dual) or dtype.kind not in "fc":
        return OPS["cast"]((x,), target)
    return OPS["astype"](x, (target, src))


_PLAIN_KEYS = (int, slice, type(None), type(Ellipsis), bool)


def _index_part(k: Any, xp: Any) -> Any:
    if k.__class__ is Tensor:
        k = k._data
    elif k.__class__ in _PLAIN_KEYS:
        return k
    elif isinstance(k, (list, range)):
        # An empty list selects nothing (NumPy's and PyTorch's): integers, not the floats that
        # asarray makes of it. A range is its list (`x[range(n), y]`, as PyTorch takes it).
        k = list(k)
        return xp.asarray(k) if k else xp.asarray(k, dtype=xp.int64)
    elif not _backend.is_array(k):
        return k
    # An array of another library than x's is refused as in arithmetic (NumPy read a
    # one-element PyTorch tensor as an integer); NumPy's arrays index every library's.
    kxp = _backend.namespace(k)
    if kxp is not xp and kxp is not _backend.np and _backend.joint_namespace(xp, kxp) is None:
        _tensor.mixed_error("indexing", xp, kxp)
    return k


def _index_key(key: IndexKey, xp: Any) -> tuple[Any, ...]:
    """An indexing key with tensors replaced by their raw arrays, lists and ranges by arrays
    of `xp`, and a basic key closed by an ellipsis (the standard asks a key to cover every
    axis; NumPy assumes it)."""
    keys = tuple(_index_part(k, xp) for k in (key if isinstance(key, tuple) else (key,)))
    basic = builtins.all(k is None or isinstance(k, (int, slice)) for k in keys)
    return keys + (Ellipsis,) if basic else keys


def _lifted_to(x: Tensor, indices: Sequence[Any]) -> Tensor:
    """x, as a tensor of the vmap level of the innermost batched array of `indices` (raw
    arrays of a key) where that is above x's: per-sample indices into a tensor that is the
    same for every sample (vmap over token ids into an embedding table) then index each
    sample's copy (the lift is recorded: x's gradient is the sum over the batch)."""
    top = None
    for k in indices:
        if _batching.level_of(k) > _batching.level_of(x._data if top is None else top._data):
            top = k
    if top is None:
        return x
    return OPS["batch"](x, (top.level, top.n, None))


def getitem(x: Tensor, key: IndexKey) -> Tensor:
    """x[key], differentiable (Tensor.__getitem__)."""
    keys = _index_key(key, x._xp)
    if _tensor.grad_mode.vmap:
        lifted = _lifted_to(x, keys)
        if lifted is not x:
            x = lifted
            keys = _index_key(key, x._xp)
    return OPS["getitem"](x, (keys, x._data.shape, x._data.dtype))


# ----------------------------------------------------------------------------- more manipulation


def _one_axis(axis: int, ndim: int) -> int:
    """`axis` as a non-negative axis of a tensor of `ndim` dimensions, order kept."""
    if not -ndim <= axis < ndim:
        raise IndexError(f"axis {axis} is out of bounds for a tensor of dimension {ndim}")
    return axis % ndim


def _ints(v: int | Sequence[int]) -> tuple[int, ...]:
    return (v,) if isinstance(v, int) else tuple(v)


def broadcast_shapes(*shapes: tuple[int | None, ...]) -> tuple[int | None, ...]:
    """The shape that `shapes` broadcast to (ValueError if they don't); a size None (unknown)
    stays unknown."""
    n = builtins.max((len(s) for s in shapes), default=0)
    out = []
    for i in range(-n, 0):
        size: int | None = 1
        for s in shapes:
            d = s[i] if len(s) >= -i else 1
            if d == 1 or d == size:
                continue
            if size == 1 or size is None or d is None:
                size = None if d is None or size is None else d
            else:
                raise ValueError(f"shapes {', '.join(map(str, shapes))} do not broadcast")
        out.append(size)
    return tuple(out)


def broadcast_arrays(*arrays: ArrayLike) -> tuple[Tensor, ...]:
    """The arrays broadcast to one shape, as a tuple (2025.12; before, a list); differentiable."""
    arrays, _ = as_tensors(arrays, "broadcast_arrays")
    shape = cast(tuple[int, ...], broadcast_shapes(*(t.shape for t in arrays)))
    return tuple(broadcast_to(t, shape) for t in arrays)


def moveaxis(
    x: ArrayLike, source: int | Sequence[int], destination: int | Sequence[int], /
) -> Tensor:
    """x with the axes `source` moved to positions `destination`, by permute_dims."""
    x = as_tensor(x)
    src = tuple(_one_axis(a, x.ndim) for a in _ints(source))
    dst = tuple(_one_axis(a, x.ndim) for a in _ints(destination))
    if len(src) != len(dst) or len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ValueError(
            f"moveaxis: source {source} and destination {destination} must be unique axes, "
            "as many of each"
        )
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return permute_dims(x, tuple(order))


def repeat(x: ArrayLike, repeats: int | ArrayLike, /, *, axis: int | None = None) -> Tensor:
    """Each element of x repeated along `axis` (of the flattened x when None): `repeats` times,
    or per element by a 1-D integer array of counts (one count for all, or one each)."""
    x = as_tensor(x)
    if axis is None:
        x = reshape(x, (-1,))
        axis = 0
    axis = _one_axis(axis, x.ndim)
    shape = x._data.shape
    if isinstance(repeats, int):
        split = shape[:axis] + (shape[axis], repeats) + shape[axis + 1 :]
        return OPS["repeat"](x, (repeats, axis, split))
    # Counts per element: gather each output element's source, so take's VJP scatters back.
    counts = as_tensor(repeats)
    if not (_backend.is_lazy(x._data) and _backend.library(counts._xp) == "numpy"):
        (x, counts), _ = as_tensors((x, counts), "repeat")
    # else NumPy counts of a Dask x: the sources are found in NumPy, their number known.
    if x._edge is not None and _tensor.grad_mode.enabled and _backend.is_lazy(counts._data):
        raise NotImplementedError(
            "the gradient of repeat by an array of counts on Dask is not supported: the "
            "result's size is unknown until the counts are computed (NaN chunk sizes); repeat "
            "by an integer, or by counts given as NumPy values"
        )
    sources = OPS["repeat_sources"]((counts,), shape[axis])._data
    if counts._xp is not x._xp:
        sources = x._xp.asarray(sources)
    return OPS["take"](x, (sources, axis, shape, x._data.dtype))


def roll(
    x: ArrayLike, /, shift: int | Sequence[int], *, axis: int | Sequence[int] | None = None
) -> Tensor:
    """x with its elements shifted by `shift` places along `axis` (ints, or tuples of one
    length), wrapping around; along the flattened x when axis is None."""
    x = as_tensor(x)
    if axis is None:
        if not isinstance(shift, int):
            raise ValueError("roll: shift must be an integer when axis is None")
        return OPS["roll"](x, (shift, None, -shift))
    axes = tuple(_one_axis(a, x.ndim) for a in _ints(axis))
    shifts = (shift,) * len(axes) if isinstance(shift, int) else tuple(shift)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift {shift} and axis {axis} differ in length")
    return OPS["roll"](x, (shifts, axes, tuple(-s for s in shifts)))


def tile(x: ArrayLike, repetitions: Sequence[int], /) -> Tensor:
    """x repeated `repetitions[i]` times along axis i; the shorter of x's shape and
    `repetitions` is padded with leading ones."""
    x = as_tensor(x)
    reps = tuple(repetitions)
    shape = x._data.shape
    m = builtins.max(len(reps), len(shape))
    padded = zip((1,) * (m - len(reps)) + reps, (1,) * (m - len(shape)) + shape)
    split = tuple(n for pair in padded for n in pair)
    return OPS["tile"](x, (reps, split, tuple(range(0, 2 * m, 2)), shape))


def unstack(x: ArrayLike, /, *, axis: int = 0) -> tuple[Tensor, ...]:
    """The slices of x along `axis`, as a tuple (one recorded node with several outputs)."""
    x = as_tensor(x)
    axis = _one_axis(axis, x.ndim)
    if x.shape[axis] == 0:
        return ()
    if x.shape[axis] == 1:
        # The engine gives a multi-output node with one output a bare gradient, not a list.
        return (reshape(x, x.shape[:axis] + x.shape[axis + 1 :]),)
    lead = (slice(None),) * axis
    if x._edge is None:
        # Without history, each slice is a view of x (a basic index), as PyTorch's unbind:
        # a write through one reaches x and its other views, and in forward mode x's tangent.
        outs = tuple([getitem(x, lead + (i,)) for i in range(x.shape[axis])])
    else:
        # One node for all (a backward of one stack, not one scatter per slice); each output
        # still a view of x, so that a write into x reaches it (its history rebased).
        outs = OPS["unstack"]((x,), axis)
        if outs[0]._edge is not None:
            rule, shape, dtype = RULES["getitem"], x._data.shape, x._data.dtype
            for i, t in enumerate(outs):
                key = _index_key(lead + (i,), x._xp)
                _factories._view_of(x, t, rule, (key, shape, dtype))
    if outs[0]._edge is None:
        for t in outs:
            UNSTACKED[id(t)] = None
            weakref.finalize(t, UNSTACKED.pop, id(t), None)  # ids are reused
    return outs


# The outputs of unstack made without history, by id: a recorded write into one (a value
# that requires grad) is refused by _inplace, as PyTorch refuses it.
UNSTACKED: dict = {}


def take_along_axis(x: ArrayLike, indices: ArrayLike, /, *, axis: int = -1) -> Tensor:
    """The elements of x at `indices` along `axis`: indices have x's rank and broadcast with
    x off that axis; negative ones count from the end. Differentiable in x."""
    (x, indices), _ = as_tensors((x, indices), "take_along_axis")
    if indices.ndim != x.ndim:
        raise ValueError(
            f"take_along_axis: indices of shape {indices.shape} need x's rank {x.ndim}"
        )
    axis = _one_axis(axis, x.ndim)
    idx = OPS["wrap_indices"]((indices,), x.shape[axis])._data
    return OPS["take_along_axis"](x, (idx, axis, x._data.shape, x._data.dtype))


# ----------------------------------------------------------------------------- searching and sets
# Integer and set results carry no gradient.


def argmax(x: ArrayLike, /, *, axis: int | None = None, keepdims: builtins.bool = False) -> Tensor:
    """The index of the first maximum along `axis` (of the flattened x when None)."""
    return OPS["argmax"]((x,), (axis, keepdims))


def argmin(x: ArrayLike, /, *, axis: int | None = None, keepdims: builtins.bool = False) -> Tensor:
    """The index of the first minimum along `axis` (of the flattened x when None)."""
    return OPS["argmin"]((x,), (axis, keepdims))


def count_nonzero(x: ArrayLike, /, *, axis: Axis = None, keepdims: builtins.bool = False) -> Tensor:
    """The number of nonzero elements along `axis` (all when None); an integer tensor, no
    gradient."""
    return OPS["count_nonzero"]((x,), (axis, keepdims))


def nonzero(x: ArrayLike, /) -> tuple[Tensor, ...]:
    """The indices of x's nonzero elements, one index tensor per axis."""
    return OPS["nonzero"]((x,))


def searchsorted(
    x1: ArrayLike,
    x2: ArrayLike,
    /,
    *,
    side: Literal["left", "right"] = "left",
    sorter: ArrayLike = None,
) -> Tensor:
    """Where x2's values would go into the 1-D x1 (ascending, or put in order by the indices
    `sorter`) to keep it sorted: before equal values (side 'left') or after them ('right')."""
    return OPS["searchsorted"]((x1, x2) if sorter is None else (x1, x2, sorter), side)


def isin(x1: ArrayLike, x2: ArrayLike, /, *, invert: builtins.bool = False) -> Tensor:
    """Whether each element of x1 equals some element of x2 (or none, if invert): a bool
    tensor shaped like x1 (0-d for a scalar x1); no gradient. By sorting x2 and searching."""
    (a, b), xp = as_tensors((x1, x2), "isin")
    if a.__class__ is not Tensor:
        a = _new(xp.asarray(a, dtype=b._data.dtype), xp)
    if b.__class__ is not Tensor:
        b = _new(xp.asarray(b, dtype=a._data.dtype), xp)
    return OPS["isin"]((a, b), invert)


class UniqueAllResult(NamedTuple):
    """What unique_all returns."""

    values: Tensor
    indices: Tensor
    inverse_indices: Tensor
    counts: Tensor


class UniqueCountsResult(NamedTuple):
    """What unique_counts returns."""

    values: Tensor
    counts: Tensor


class UniqueInverseResult(NamedTuple):
    """What unique_inverse returns."""

    values: Tensor
    inverse_indices: Tensor


def _unique(x: ArrayLike, kind: str) -> list[Tensor]:
    """unique_<kind> of x with its values sorted (and indices, inverse, counts to match)."""
    return list(OPS["unique"]((x,), kind))


def unique_all(x: ArrayLike, /) -> UniqueAllResult:
    """x's unique values, sorted (NaNs each distinct, last), the index of each one's first
    occurrence, the inverse indices (shaped like x) and the counts."""
    return UniqueAllResult(*_unique(x, "all"))


def unique_counts(x: ArrayLike, /) -> UniqueCountsResult:
    """x's unique values, sorted, and how often each occurs."""
    return UniqueCountsResult(*_unique(x, "counts"))


def unique_inverse(x: ArrayLike, /) -> UniqueInverseResult:
    """x's unique values, sorted, and the index of each element of x among them."""
    return UniqueInverseResult(*_unique(x, "inverse"))


def unique_values(x: ArrayLike, /) -> Tensor:
    """x's unique values, sorted (NaNs each distinct, last)."""
    return _unique(x, "values")[0]


# ----------------------------------------------------------------------------- sorting


def argsort(
    x: ArrayLike,
    /,
    *,
    axis: int = -1,
    descending: builtins.bool = False,
    stable: builtins.bool = True,
) -> Tensor:
    """The indices that sort x along `axis`; no gradient."""
    x = as_tensor(x)
    return OPS["argsort"]((x,), (_one_axis(axis, x.ndim), descending, stable))


def sort(
    x: ArrayLike,
    /,
    *,
    axis: int = -1,
    descending: builtins.bool = False,
    stable: builtins.bool = True,
) -> Tensor:
    """x sorted along `axis`. Differentiable: take_along_axis by argsort's order, so each
    gradient goes back to its value's original position."""
    x = as_tensor(x)
    axis = _one_axis(axis, x.ndim)
    order = OPS["argsort"]((x,), (axis, descending, stable))._data
    return OPS["take_along_axis"](x, (order, axis, x._data.shape, x._data.dtype))


# ----------------------------------------------------------------------------- creation


def weak_number(value: Any, other: Any) -> Any:
    """`value` as an array of the other operand's dtype where value is a Python int or float
    and `other` a tensor of a real floating dtype (a weak scalar, as in NumPy's and SciPy's
    promotion: float32 stays float32); anything else as it is. The classes are exact: a NumPy
    scalar (np.float64) is strong, as in NumPy 2, and a bool is no number here."""
    if value.__class__ in (int, float) and other.__class__ is Tensor and other.dtype.kind == "f":
        return other._xp.asarray(value, dtype=other._data.dtype)
    return value


def _dtype(xp: Any, dtype: DTypeLike) -> Any:
    return None if dtype is None else to_backend_dtype(xp, _backend.from_backend_dtype(dtype))


def _new(data: Any, xp: Any) -> Tensor:
    t = Tensor(_backend.normalize(data, xp), xp, None)
    if _tensor.grad_mode.inference:
        _factories.mark_inference((t,))
    return t


def asarray(
    obj: ArrayLike,
    /,
    *,
    dtype: DTypeLike = None,
    device: Device = None,
    copy: builtins.bool | None = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """A tensor from a tensor, an array of any Array API library (wrapped as it is unless a
    copy or another dtype is asked for), or Python data. A copy of a tensor that requires grad
    is recorded (as PyTorch's clone): the gradient reaches `obj`. `requires_grad`, as in
    PyTorch's asarray, makes the result a leaf that requires grad. A `device` of a library
    (a torch.device, a JAX Device) makes the values that library's, on that device."""
    out = _asarray(obj, dtype, device, copy)
    if requires_grad:
        if out.requires_grad:
            out = out.detach()
        out.requires_grad_(True)
    return out


def _asarray(obj: Any, dtype: DTypeLike, device: Device, copy: builtins.bool | None) -> Tensor:
    if obj.__class__ is Tensor:
        if device is not None and device != obj.device:
            owner = _backend.device_namespace(device)  # None: "cpu", which names no library
            if owner is not None and _backend.library(owner) != _backend.library(obj._xp):
                return _to_library(obj, owner, dtype, copy, device)
            if owner is not None:
                obj = obj.to_device(device)
        if dtype is not None and obj.dtype != _backend.from_backend_dtype(dtype):
            if copy is False:
                raise ValueError("asarray: a cast to another dtype needs a copy, but copy=False")
            return astype(obj, dtype)
        return OPS["copy"](obj) if copy else obj
    if _backend.is_array(obj) and not isinstance(obj, np.generic):
        obj = _backend.unwatched(obj)  # a traced function's NumPy argument: the argument
        xp = _backend.namespace(obj)
        # Wrapped as it is (t.array is obj); NumPy's subclasses (matrix, masked arrays)
        # become plain arrays, as NumPy's asarray makes them.
        plain = xp is not np or obj.__class__ is np.ndarray
        if plain and dtype is None and device is None and not copy:
            if _backend.dtype_kind(obj.dtype) in "biufc":
                return _new(_backend.checked(obj), xp)  # refuses a dtype chainrule lacks
    else:
        xp = _backend.default_namespace()
    if device is not None:
        xp = _owner(device, xp)
    out = _new(_convert(xp, obj, dtype, copy, device), xp)
    _tensor.converted(obj, out, _converted, (dtype, copy, device))
    return out


def _to_library(
    obj: Tensor, xp: Any, dtype: DTypeLike, copy: builtins.bool | None, device: Device
) -> Tensor:
    """obj's values as an array of library `xp` on `device` (a device of that library):
    refused, as to_device refuses it, where the move would have to be differentiated."""
    if (obj.requires_grad and _tensor.grad_mode.enabled) or _tensor.dual(obj):
        raise NotImplementedError(
            "asarray: moving a tensor that requires grad to another library's device is not "
            "differentiable yet; move tensor.detach() instead"
        )
    out = _new(_moved(xp, obj._data, (dtype, copy, device)), xp)
    _tensor.converted(obj, out, _moved, (dtype, copy, device))
    return out


def _moved(xp: Any, a: Any, p: tuple) -> Any:
    """_to_library's conversion, as compile's replay makes it again. A Dask array's values are
    computed first (the move asks for them): not every library takes a Dask array."""
    if _backend.is_lazy(a):
        a = _backend.to_numpy(a)
    return _converted(xp, a, p)


def tensor(
    data: ArrayLike, dtype: DTypeLike = None, requires_grad: builtins.bool = False
) -> Tensor:
    """A new leaf tensor holding a copy of `data`."""
    source = data
    if data.__class__ is Tensor:
        xp, data = data._xp, data._data
    elif _backend.is_array(data) and not isinstance(data, np.generic):
        source = data = _backend.unwatched(data)  # a traced function's NumPy argument
        xp = _backend.namespace(data)
    else:
        xp = _backend.default_namespace()
    t = _new(_convert(xp, data, dtype, True), xp)
    _tensor.converted(source, t, _converted, (dtype, True, None))
    if requires_grad:
        t.requires_grad_(True)
    return t


def _converted(xp: Any, obj: Any, p: tuple) -> Any:
    """asarray's and tensor's conversion of an array, as compile's replay makes it again."""
    return _backend.normalize(_convert(xp, obj, *p), xp)


def _convert(
    xp: Any, obj: ArrayLike, dtype: DTypeLike, copy: builtins.bool | None, device: Device = None
) -> Any:
    """`xp.asarray(obj)`: an array of one of the standard's dtypes, or a TypeError (an element
    that is no number) or OverflowError (an integer no integer dtype holds) that says which."""
    failed: Exception | None
    try:
        out = xp.asarray(obj, dtype=_dtype(xp, dtype), copy=copy, **_on(device))
    except (TypeError, OverflowError, ValueError, NotImplementedError, RuntimeError) as err:
        # Libraries differ: JAX says ValueError for a None element, Dask NotImplementedError,
        # PyTorch RuntimeError.
        failed = err
    else:
        failed = None
    if failed is not None and isinstance(obj, list | tuple):
        # Tensors among the elements (`tensor([x[0], x[1]])`): a library that does not read
        # them through __array__ (PyTorch's asarray asks their len()) gets their arrays.
        raw = _raw_elements(obj)
        if raw is not None:
            obj = raw
            try:
                out = xp.asarray(obj, dtype=_dtype(xp, dtype), copy=copy, **_on(device))
            except (TypeError, OverflowError, ValueError, NotImplementedError, RuntimeError) as err:
                failed = err
            else:
                failed = None
    if failed is not None:
        _check_elements(obj)
        if not isinstance(failed, OverflowError | ValueError):
            raise failed
        # Every integer fits int64 or uint64, but the library's own inference overflowed
        # (JAX's and PyTorch's on uint64 values): NumPy infers the dtype.
        values = np.asarray(obj)
        if values.dtype == np.uint64:
            values = values.astype(np.uint64)  # NumPy infers C's ulonglong: PyTorch refuses it
        out = xp.asarray(values, dtype=_dtype(xp, dtype), copy=copy, **_on(device))
    if dtype is None and not _backend.is_array(obj):
        out = _python_floats(xp, out, device)
    try:
        return _backend.checked(out)
    except TypeError:
        _check_elements(obj)  # an element that is no number says so first
        raise


def _raw_elements(obj: list | tuple) -> list | None:
    """A copy of the nested lists and tuples `obj` with each tensor in it replaced by its
    array, or None when it holds no tensor (walked with a stack: no recursion)."""
    root, found = [obj], False
    stack = [(root, 0)]
    while stack:
        container, i = stack.pop()
        item = container[i]
        if item.__class__ is Tensor:
            if item._edge is not None or _tensor.dual(item):
                item.__array__()  # raises as NumPy's conversion does: the graph would be cut
            container[i], found = item._data, True
        elif isinstance(item, list | tuple):
            container[i] = items = list(item)
            stack.extend((items, j) for j in range(len(items)))
    return root[0] if found else None


def _python_floats(xp: Any, out: Any, device: Device) -> Any:
    """`out`, converted from Python data, in the default floating dtype where the library
    inferred its own for Python floats (and complex numbers), as PyTorch's: NumPy's float64,
    or on a device that names a library (a torch.device) that library's default, PyTorch's
    float32, as the creation functions do (_default)."""
    real, cplx = DEFAULT_FLOAT.real, DEFAULT_FLOAT.complex
    if real is float64 and device is None:
        return out
    inferred = [(float64, real), (complex128, cplx)]
    if device is not None:
        inferred += [(float32, real), (complex64, cplx)]
    for own, default in inferred:
        if own is not default and out.dtype == to_backend_dtype(xp, own):
            return xp.astype(out, to_backend_dtype(xp, default))
    return out


def _check_elements(data: Any) -> None:
    """Raise a clear error for the first element of nested lists and tuples that is not a
    number, or is an integer out of the range of every integer dtype."""
    todo: list[tuple[tuple[int, ...], Any]] = [((), data)]
    while todo:
        at, v = todo.pop()
        place = f" at index {list(at)}" if at else ""
        if isinstance(v, (list, tuple)):
            todo.extend(((*at, i), e) for i, e in reversed(list(enumerate(v))))
        elif isinstance(v, int) and not -(2**63) <= v < 2**64:
            raise OverflowError(
                f"the integer {v}{place} is out of the range of every integer "
                "dtype (int64 and uint64)"
            )
        elif not isinstance(v, _numbers.Number) and not _backend.is_array(v):
            raise TypeError(
                f"a tensor holds numbers, not {type(v).__name__}: {v!r}{place} "
                "(elements must be bool, int, float or complex)"
            )


def _owner(device: Device, xp: Any) -> Any:
    """The namespace that makes arrays on `device`: the library that owns it (a torch.device
    is PyTorch's, whatever the data's library), else `xp` (a string such as "cpu")."""
    owner = _backend.device_namespace(device)
    return xp if owner is None else owner


def _on(device: Device) -> dict:
    """The device keyword for a backend's creation function: passed on only when given."""
    return {} if device is None else {"device": device}


def _default(
    dtype: DTypeLike, floating: builtins.bool = False, device: Device = None
) -> tuple[Any, Any]:
    """The default backend (or the library that owns `device`), and the backend dtype for
    `dtype`; for None, the default floating dtype where the result is `floating` and that
    default may not be the library's own (a default set to float32, or a `device` that names
    a library, as PyTorch's, whose own is float32), else None (the backend's choice)."""
    xp = _backend.default_namespace()
    if device is not None:
        xp = _owner(device, xp)
    if dtype is None and floating and (DEFAULT_FLOAT.real is not float64 or device is not None):
        dtype = DEFAULT_FLOAT.real
    return xp, _dtype(xp, dtype)


def _size(
    shape: Shape | None, more: tuple[int, ...], size: Sequence[int] | None, name: str
) -> Shape:
    """A shape given as the standard's `f((2, 3))`, as PyTorch's varargs `f(2, 3)`, or as
    PyTorch's keyword `f(size=(2, 3))`."""
    if size is not None:
        if shape is not None or more:
            raise TypeError(f"{name}() got multiple values for argument 'size'")
        return tuple(size)
    if shape is None:
        raise TypeError(f'{name}() missing 1 required positional arguments: "size"')
    if not more:
        return shape
    sizes = (shape, *more)
    if not builtins.all(isinstance(n, _numbers.Integral) for n in sizes):
        raise TypeError(f"{name}(): a shape is one tuple of ints or several ints, got {sizes!r}")
    return tuple(builtins.int(n) for n in sizes)


def from_dlpack(x: Any, /, *, device: Device = None, copy: bool | None = None) -> Tensor:
    """A tensor of the default namespace holding the data of `x`, any object with
    `__dlpack__` (a tensor too, unless it requires grad); shared unless copied."""
    xp = _backend.default_namespace()
    # Only the keywords given: a library that predates one of them still takes the call.
    kwargs = {k: v for k, v in (("device", device), ("copy", copy)) if v is not None}
    if x.__class__ is Tensor:
        # Its array, not its __dlpack__, which compile's trace refuses (this is recorded).
        _tensor.exportable(x)
        x = x._data
    out = Tensor(_backend.normalize(xp.from_dlpack(x, **kwargs), xp), xp, None)
    _tensor.converted(x, out, _from_dlpack, kwargs)
    return out


def _from_dlpack(xp: Any, a: Any, kwargs: dict) -> Any:
    """from_dlpack of an array, as compile's replay makes it again."""
    return _backend.normalize(xp.from_dlpack(a, **kwargs), xp)


def zeros(
    shape: Shape | None = None,
    *sizes: int,
    size: Sequence[int] | None = None,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """A new tensor of `shape` filled with zeros, in the default backend (the default floating
    dtype, float64 unless set_default_dtype changed it). `zeros(2, 3)` and `zeros(size=(2, 3))`
    are `zeros((2, 3))`; `requires_grad=True` makes it a leaf that requires grad (PyTorch's
    keyword, as in the other creation functions)."""
    xp, dt = _default(dtype, True, device)
    out = _new(xp.zeros(_size(shape, sizes, size, "zeros"), dtype=dt, **_on(device)), xp)
    return _made(out, requires_grad)


def ones(
    shape: Shape | None = None,
    *sizes: int,
    size: Sequence[int] | None = None,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """A new tensor of `shape` filled with ones, in the default backend (the default floating
    dtype unless `dtype`). `ones(2, 3)` is `ones((2, 3))`."""
    xp, dt = _default(dtype, True, device)
    out = _new(xp.ones(_size(shape, sizes, size, "ones"), dtype=dt, **_on(device)), xp)
    return _made(out, requires_grad)


def empty(
    shape: Shape | None = None,
    *sizes: int,
    size: Sequence[int] | None = None,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """A new tensor of `shape` with unspecified values, in the default backend (the default
    floating dtype unless `dtype`). `empty(2, 3)` is `empty((2, 3))`."""
    xp, dt = _default(dtype, True, device)
    out = _new(xp.empty(_size(shape, sizes, size, "empty"), dtype=dt, **_on(device)), xp)
    return _made(out, requires_grad)


def _made(out: Tensor, requires_grad: builtins.bool) -> Tensor:
    """A creation function's result, made a leaf that requires grad if asked (PyTorch's
    `requires_grad=` keyword; RuntimeError for a dtype that can't require grad)."""
    return out.requires_grad_(True) if requires_grad else out


def full(
    shape: Shape,
    fill_value: Scalar,
    *,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """A new tensor of `shape` filled with `fill_value`, in the default backend (a float
    `fill_value`: the default floating dtype unless `dtype`). A 0-d tensor as `fill_value`
    (NumPy and PyTorch take one; SciPy passes `xp.asarray(number)`): see `_full_of`."""
    if fill_value.__class__ is Tensor:
        size = (shape,) if isinstance(shape, _numbers.Integral) else tuple(shape)
        return _made(_full_of(size, fill_value, dtype, device), requires_grad)
    xp, dt = _default(dtype, isinstance(fill_value, builtins.float), device)
    return _made(_new(xp.full(shape, fill_value, dtype=dt, **_on(device)), xp), requires_grad)


def _full_of(shape: tuple, value: Tensor, dtype: DTypeLike, device: Device) -> Tensor:
    """`full` with a 0-d tensor as the value: the value broadcast and copied (in its dtype
    unless `dtype`, its library unless `device`), never read by Python, so that compile
    replays it and Dask stays lazy; its gradient is the result's sum, as broadcast_to's. The
    backend's `full` would take the tensor for an array and hand it to NumPy's copyto."""
    if value.ndim != 0:
        raise TypeError(
            "full(): fill_value must be a number or a 0-d tensor, got a tensor of shape "
            f"{tuple(value.shape)}"
        )
    if dtype is not None:
        value = astype(value, dtype)
    return asarray(broadcast_to(value, shape), copy=True, device=device)


def arange(
    start: float,
    /,
    stop: float | None = None,
    step: float = 1,
    *,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """Evenly spaced values in [start, stop) with spacing `step` (from 0 to start when stop
    is None), in the default backend; a leaf, that requires grad if `requires_grad`."""
    floating = builtins.any(isinstance(v, builtins.float) for v in (start, stop, step))
    xp, dt = _default(dtype, floating, device)
    return _made(_new(xp.arange(start, stop, step, dtype=dt, **_on(device)), xp), requires_grad)


def linspace(
    start: complex,
    stop: complex,
    /,
    num: int,
    *,
    dtype: DTypeLike = None,
    device: Device = None,
    endpoint: builtins.bool = True,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """`num` evenly spaced values from start to stop (included if `endpoint`), in the
    default backend."""
    floating = not isinstance(start, builtins.complex) and not isinstance(stop, builtins.complex)
    xp, dt = _default(dtype, floating, device)
    out = _new(xp.linspace(start, stop, num, dtype=dt, endpoint=endpoint, **_on(device)), xp)
    return _made(out, requires_grad)


def eye(
    n_rows: int,
    n_cols: int | None = None,
    /,
    *,
    k: int = 0,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """A matrix of n_rows by n_cols (default: square) with ones on diagonal `k`, zeros
    elsewhere."""
    xp, dt = _default(dtype, True, device)
    out = _new(_backend.eye(xp, n_rows, n_cols, k, dtype=dt, **_on(device)), xp)
    return _made(out, requires_grad)


def _like(x: ArrayLike, kind: str, fill: tuple, dtype: DTypeLike, device: Device) -> Tensor:
    """`xp.<kind>_like(x)` in x's library, or `<kind>(x.shape)` in the library that owns
    `device` where that is another one (x's dtype unless `dtype`)."""
    x = as_tensor(x)
    if fill and fill[0].__class__ is Tensor:
        return _full_of(tuple(x.shape), fill[0], x.dtype if dtype is None else dtype, device)
    xp = x._xp if device is None else _owner(device, x._xp)
    if xp is x._xp:
        make = getattr(xp, f"{kind}_like")
        return _new(make(x._data, *fill, dtype=_dtype(xp, dtype), **_on(device)), xp)
    dt = _dtype(xp, x.dtype if dtype is None else dtype)
    return _new(getattr(xp, kind)(tuple(x.shape), *fill, dtype=dt, device=device), xp)


def zeros_like(
    x: ArrayLike,
    /,
    *,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """A new tensor of zeros shaped like x (x's backend and dtype unless `dtype`, or the
    library that owns `device`); no gradient."""
    return _made(_like(x, "zeros", (), dtype, device), requires_grad)


def ones_like(
    x: ArrayLike,
    /,
    *,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """A new tensor of ones shaped like x (x's backend and dtype unless `dtype`, or the
    library that owns `device`); no gradient."""
    return _made(_like(x, "ones", (), dtype, device), requires_grad)


def empty_like(
    x: ArrayLike,
    /,
    *,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """A new tensor shaped like x (of x's backend and dtype unless `dtype`, or the library
    that owns `device`), values unspecified."""
    return _made(_like(x, "empty", (), dtype, device), requires_grad)


def full_like(
    x: ArrayLike,
    /,
    fill_value: Scalar,
    *,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """A new tensor shaped like x (x's backend and dtype unless `dtype`, or the library that
    owns `device`) filled with `fill_value`."""
    return _made(_like(x, "full", (fill_value,), dtype, device), requires_grad)


def _triangle(x: ArrayLike, k: int, lower: builtins.bool) -> Tensor:
    x = as_tensor(x)
    if x.ndim < 2:
        raise ValueError(
            f"{'tril' if lower else 'triu'}: input tensor must have at least 2 dimensions, "
            f"got {x.ndim}"
        )
    xp = x._xp
    n, m = x.shape[-2:]
    rows = xp.reshape(xp.arange(n), (n, 1))
    cols = xp.reshape(xp.arange(m), (1, m))
    keep = (cols - rows <= k) if lower else (cols - rows >= k)
    return where(Tensor(keep, xp, None), x, 0)


def tril(x: ArrayLike, /, *, k: int = 0) -> Tensor:
    """The lower triangle of the last two axes (below and on diagonal k); differentiable."""
    return _triangle(x, k, True)


def triu(x: ArrayLike, /, *, k: int = 0) -> Tensor:
    """The upper triangle of the last two axes (above and on diagonal k); differentiable."""
    return _triangle(x, k, False)


def meshgrid(*arrays: ArrayLike, indexing: Literal["xy", "ij"] = "xy") -> tuple[Tensor, ...]:
    """Coordinate grids from 1-D tensors, as a tuple (2025.12; before, a list); differentiable
    (reshape and broadcast_to)."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', not {indexing!r}")
    arrays, _ = as_tensors(arrays, "meshgrid")
    n = len(arrays)
    shape = [a.size for a in arrays]
    if indexing == "xy" and n > 1:
        shape[0], shape[1] = shape[1], shape[0]
    grids = []
    for i, a in enumerate(arrays):
        axis = i
        if indexing == "xy" and n > 1 and i < 2:
            axis = 1 - i
        one = [1] * n
        one[axis] = a.size
        grids.append(broadcast_to(reshape(a, tuple(one)), tuple(shape)))
    return tuple(grids)
