"""The other library gaps that rules call: Dask's broadcasts in chunks and reshapes of empty
arrays, Cholesky factor, searches, one-chunk transforms, wide identity matrices, PyTorch's
unique_all and linear algebra that array-api-compat passes on wrongly; inverses in the
input's dtype, and JAX's singular inverses and solves refused; PyTorch's own derivative
kernels."""

from __future__ import annotations

from importlib import import_module

import numpy as np

from ._dtypes import dtype_kind
from ._namespaces import library


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
        # Each chunk a broadcast view of a's block, shaped by a block of zeros that nothing
        # writes (calloc'd pages): one blockwise layer, fused by Dask with the elementwise
        # tasks that read it (Dask's broadcast_to is a task per chunk that nothing fuses).
        dar = import_module("dask.array")
        axes = tuple(range(len(shape)))
        zeros = dar.zeros(shape, dtype=a.dtype, chunks=layout)
        return dar.blockwise(_broadcast_block, axes, a, axes[lead:], zeros, axes, dtype=a.dtype)
    return xp.broadcast_to(a, shape)


def _broadcast_block(a, zeros):
    return np.broadcast_to(a, zeros.shape)


def reshape_empty(xp, a, shape):
    """xp.reshape of an array with no element; on Dask new zeros of the shape (its reshape
    merges or splits axes by their chunks, which an axis of length 0 defeats: an empty
    batch). The shape is resolved (-1) as NumPy does, with NumPy's error."""
    if library(xp) == "dask":
        return xp.zeros(np.empty(a.shape, dtype=bool).reshape(shape).shape, dtype=a.dtype)
    return xp.reshape(a, shape)


def complex_from_parts(xp, re, im):
    """The complex array with real part `re` and imaginary part `im` (real arrays of one
    shape and dtype), each part as it is: `re + 1j * im` would make (1, inf) into (nan, inf),
    since 1j * inf has a real part 0 * inf. Each library's own constructor, or NumPy's parts
    written in place; other libraries by that arithmetic (exact for finite parts)."""
    lib = library(xp)
    if lib == "torch":
        return import_module("torch").complex(re, im)
    if lib == "jax":
        return import_module("jax").lax.complex(re, im)
    if lib == "dask":
        dtype = np.result_type(re.dtype, np.complex64)
        return import_module("dask.array").map_blocks(_complex_block, re, im, dtype=dtype)
    if lib == "array_api_strict":
        out = _complex_block(np.from_dlpack(re), np.from_dlpack(im))
        return xp.asarray(out, device=re.device)
    if lib in ("numpy", "cupy"):
        out = xp.empty(re.shape, dtype=xp.complex64 if re.dtype == xp.float32 else xp.complex128)
        out.real[...] = re
        out.imag[...] = im
        return out
    return re + im * 1j


def _complex_block(re, im):
    out = np.empty(re.shape, dtype=np.result_type(re.dtype, np.complex64))
    out.real, out.imag = re, im
    return out


def cholesky(xp, x):
    """The lower Cholesky factor of x. array-api-compat's Dask namespace returns Dask's default,
    the upper factor: Dask is asked for the lower one."""
    if library(xp) == "dask":
        return xp.linalg.cholesky(x, lower=True)
    return xp.linalg.cholesky(x)


def searchsorted(xp, x1, v, side, sorter):
    """xp.searchsorted. Dask's takes no sorter (x1 is put in order first there) and fails on
    0-d values when computed (they search as one value). JAX's answers int32 even with 64-bit
    types on: cast to its index dtype, as the standard asks and the other libraries give."""
    lib = library(xp)
    if lib == "jax":
        found = xp.searchsorted(x1, v, side=side, sorter=sorter)
        return xp.astype(found, xp.__array_namespace_info__().default_dtypes()["indexing"])
    if lib == "dask":
        if sorter is not None:
            x1 = xp.take(x1, sorter)
            sorter = None
        if v.ndim == 0:
            found = xp.searchsorted(x1, xp.reshape(v, (1,)), side=side)
            return xp.reshape(found, ())
    return xp.searchsorted(x1, v, side=side, sorter=sorter)


def repeat_indices(xp, counts, n: int):
    """Each of the indices 0 to n - 1 repeated by its count (`counts`: 1-D, one for all or n).
    Dask's repeat takes one integer count: the indices of each chunk of counts, made when
    computed (their number is unknown until then)."""
    if library(xp) != "dask":
        return xp.repeat(xp.arange(n), counts)
    if counts.shape[0] != n:
        counts = xp.broadcast_to(counts, (n,))
    dar = import_module("dask.array")
    chunks = ((np.nan,) * counts.numblocks[0],)
    return dar.map_blocks(_repeat_block, counts, chunks=chunks, dtype=np.int64)


def _repeat_block(counts, block_info=None):
    start = block_info[0]["array-location"][0][0]
    return np.repeat(np.arange(start, start + counts.shape[0]), counts)


def unique(xp, x, kind: str) -> tuple:
    """xp.unique_<kind>(x) as a tuple of arrays, and whether its values come sorted (as
    chainrule returns them). Dask's do (np.unique of each chunk, then of their values), and
    could not be put in order by a gather anyway: their size is unknown until computed."""
    if kind == "all" and library(xp) == "torch":
        return _unique_all(xp, x), False
    found = getattr(xp, f"unique_{kind}")(x)
    return (found,) if kind == "values" else tuple(found), library(xp) == "dask"


def _unique_all(xp, x) -> tuple:
    """unique_all from unique_inverse and unique_counts, for array-api-compat's PyTorch, which
    has none: the first occurrence of each value is the first position of its run in a stable
    sort of the inverse indices (runs start at the counts' exclusive cumulative sums)."""
    values, inverse = xp.unique_inverse(x)
    counts = xp.unique_counts(x)[1]
    order = xp.argsort(xp.reshape(inverse, (-1,)), stable=True)
    return values, xp.take(order, xp.cumulative_sum(counts) - counts), inverse, counts


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
    """The inverse of x, in x's floating dtype (Dask's is float64 for float32 matrices); of
    integers, the library's (NumPy's float64: an integer inverse would be cut to 0). A
    singular x raises NumPy's LinAlgError on JAX too (_singular)."""
    out = xp.linalg.inv(x)
    _singular(xp, x, out)
    if out.dtype == x.dtype or dtype_kind(x.dtype) not in "fc":
        return out
    return xp.astype(out, x.dtype)


def solve_triangular(xp, a, b, upper: bool, unit: bool):
    """X with T X = B, T the upper (or lower) triangle of `a`, its diagonal taken as ones when
    `unit`; batch axes broadcast. PyTorch's and JAX's triangular solve where the library has
    one (n^2 work per column of B); elsewhere (NumPy, array-api-strict, Dask, CuPy, vmap's
    arrays) the general solve of the triangle, as the standard offers no other."""
    lib = library(xp)
    if lib == "torch":
        return xp.linalg.solve_triangular(a, b, upper=upper, unitriangular=unit)
    if lib == "jax":
        jsl = import_module("jax.scipy.linalg")
        return jsl.solve_triangular(a, b, lower=not upper, unit_diagonal=unit)
    k = 1 if unit else 0
    tri = xp.triu(a, k=k) if upper else xp.tril(a, k=-k)
    if unit:
        tri = tri + xp.eye(a.shape[-1], dtype=a.dtype)
    return solve(xp, tri, b)


# What inverting a singular matrix raises: NumPy's LinAlgError (JAX's and Dask's too, see
# _singular), PyTorch's torch.linalg.LinAlgError, a RuntimeError (torch is not imported here).
SINGULAR_ERRORS = (np.linalg.LinAlgError, RuntimeError)


def zero_read_on_host(xp, a) -> bool:
    """Whether an entry of `a` is 0, for PyTorch, JAX and CuPy arrays, where a determinant of
    0 may come with an inverse that did not fail (their det and inv factorize apart: PyTorch's
    det of [[1, 2, 3], [4, 5, 6], [7, 8, 9]] is 0, its inverse finite). NumPy's raise together
    (one LAPACK factorization); Dask's are not computed behind the user's back; the tensors
    and vmap's arrays that rules meet under create_graph and vmap are not read: False."""
    return library(xp) in ("torch", "jax", "cupy") and bool(xp.any(a == 0))


def solve(xp, a, b):
    """xp.linalg.solve; a singular `a` raises NumPy's LinAlgError on JAX too (_singular)."""
    out = xp.linalg.solve(a, b)
    _singular(xp, a, out)
    return out


def _singular(xp, a, out) -> None:
    """NumPy's LinAlgError where JAX inverted (or solved with) singular matrices: JAX's LU
    divides by the zero pivot that NumPy's LAPACK call reports, and returns inf and NaN
    without a word. Checked on the host (as indices are, _indexing._check_bounds): a result
    not finite from a finite `a`. PyTorch raises its own error; Dask's is NumPy's, when
    computed."""
    if library(xp) == "jax" and not bool(xp.all(xp.isfinite(out))):
        if bool(xp.all(xp.isfinite(a))):
            raise np.linalg.LinAlgError("Singular matrix")


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


def derivative_kernels(xp) -> dict:
    """The library's own kernels for derivative formulas of `_rules.KERNELS`, by name: one
    call where the formula takes several (and PyTorch's operators with a Python scalar cost
    more than the kernel), same values. Only PyTorch's are used so far."""
    if library(xp) != "torch":
        return {}
    aten = import_module("torch").ops.aten
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
