"""Random numbers: seeded generators on the array library's own generator (NumPy's
`numpy.random.Generator` by default). A library without one (no `random.default_rng` in its
namespace, as array_api_strict) gets numbers drawn by NumPy from the same seed, converted with
its `asarray`: a seed gives the same numbers on every such library."""

from __future__ import annotations

import copy
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _backend
from ._backend import DEFAULT_FLOAT
from ._batching import NAMESPACE, Batched
from ._namespace import asarray, int64
from ._tensor import Tensor, grad_mode
from ._typing import Device, DTypeLike

__all__ = [
    "Generator",
    "default_generator",
    "manual_seed",
    "seed",
    "initial_seed",
    "get_rng_state",
    "set_rng_state",
    "rand",
    "randn",
    "uniform",
    "normal",
    "randint",
    "permutation",
    "bernoulli",
]


def __dir__() -> list[str]:
    """The API only (dir() and editors' completion), not the names this module imports."""
    return sorted(__all__)


Shape = int | Sequence[int]


class Generator:
    """A seeded source of random tensors in the default array library (or `xp`, a backend
    namespace). The same seed draws the same numbers; `manual_seed` starts again."""

    def __init__(self, seed: int | None = None, *, xp: Any = None) -> None:
        self._xp = _backend.default_namespace() if xp is None else xp
        self.manual_seed(np.random.SeedSequence().entropy if seed is None else seed)

    def manual_seed(self, seed: int) -> Generator:
        """Restart the generator from `seed` (a non-negative integer); returns it."""
        seed = int(seed)
        if seed < 0:
            raise ValueError(f"manual_seed: the seed must be non-negative, got {seed}")
        self._seed = seed
        make = getattr(getattr(self._xp, "random", None), "default_rng", None)
        self._native = make is not None
        self._rng = make(seed) if self._native else np.random.default_rng(seed)
        return self

    def seed(self) -> int:
        """Restart the generator from a fresh non-deterministic seed; returns that seed."""
        self.manual_seed(np.random.SeedSequence().entropy)
        return self._seed

    def initial_seed(self) -> int:
        """The seed the generator last started from."""
        return self._seed

    def get_state(self) -> Any:
        """The generator's state: `set_state` of it draws the same numbers again."""
        return copy.deepcopy(self._rng)

    def set_state(self, state: Any) -> Generator:
        """Go back to a state from `get_state`; returns the generator."""
        self._rng = copy.deepcopy(state)
        return self

    def _wrap(self, a: Any, dtype: DTypeLike, device: Device, different: tuple = ()) -> Tensor:
        """A tensor of the generator's library from the draw `a` (of its own library, or
        NumPy's), cast to `dtype`; drawn per sample of the vmap levels `different` (their
        batch axes first, outermost first), a Batched tensor of those levels. A `device` of
        another library (a torch.device) puts the same draw in that library, on that device,
        as asarray does."""
        if grad_mode.extended and grad_mode.tracer is not None:
            grad_mode.tracer.unsupported("random numbers drawn by chainrule.random")
        xp = self._xp
        kwargs = {} if device is None else {"device": device}
        owner = None if device is None else _backend.device_namespace(device)
        if owner is not None and owner is not xp:
            # The same draw, moved as asarray moves another library's array (Dask's computed).
            a = asarray(asarray(xp.asarray(a)), device=device)._data
            xp, kwargs = owner, {}
        if different:
            value = _backend.normalize(xp.asarray(a, **kwargs), xp)
            for level, n in different:
                value = Batched(value, level, n)
            out = Tensor(value, NAMESPACE, None)
        else:
            out = asarray(xp.asarray(a, **kwargs))
        return out if dtype is None or out.dtype == dtype else asarray(out, dtype=dtype)

    def _floats(self, kind: str, shape: tuple[int, ...], dtype: DTypeLike) -> Any:
        """Uniform ("rand") or standard normal numbers; of a complex dtype as PyTorch's:
        the real and then the imaginary parts drawn in the parts' dtype, a normal's parts
        each of variance 1/2 (the complex number's is 1)."""
        dt = np.dtype(DEFAULT_FLOAT.real if dtype is None else dtype)
        if dt.kind not in "fc":
            raise TypeError(f"{kind}: dtype must be a floating or complex dtype, not {dt}")
        part = np.finfo(dt).dtype  # dt itself where it is real
        draw = self._rng.random if kind == "rand" else self._rng.standard_normal
        if self._native and self._xp is not np:
            part = _backend.to_backend_dtype(self._xp, part)
        if dt.kind == "f":
            return draw(shape, dtype=part)
        real, imag = draw(shape, dtype=part), draw(shape, dtype=part)
        if kind == "randn":
            real, imag = real * math.sqrt(0.5), imag * math.sqrt(0.5)
        return real + 1j * imag

    def rand(
        self, *shape: int | Sequence[int], dtype: DTypeLike = None, device: Device = None
    ) -> Tensor:
        """Uniform numbers in [0, 1) of `shape` (default: the default floating dtype)."""
        s, different = _per_sample(_shape(shape))
        return self._wrap(self._floats("rand", s, dtype), dtype, device, different)

    def randn(
        self, *shape: int | Sequence[int], dtype: DTypeLike = None, device: Device = None
    ) -> Tensor:
        """Standard normal numbers of `shape` (default: the default floating dtype)."""
        s, different = _per_sample(_shape(shape))
        return self._wrap(self._floats("randn", s, dtype), dtype, device, different)

    def uniform(
        self,
        low: float = 0.0,
        high: float = 1.0,
        shape: Shape = (),
        *,
        dtype: DTypeLike = None,
        device: Device = None,
    ) -> Tensor:
        """Uniform numbers in [low, high) of `shape`; of a complex dtype, their real and
        imaginary parts each (PyTorch's complex uniform_)."""
        u = self.rand(shape, dtype=dtype, device=device)
        return u * (high - low) + (low * (1 + 1j) if u.dtype.kind == "c" else low)

    def normal(
        self,
        mean: float = 0.0,
        std: float = 1.0,
        shape: Shape = (),
        *,
        dtype: DTypeLike = None,
        device: Device = None,
    ) -> Tensor:
        """Normal numbers of mean `mean` and standard deviation `std`, of `shape`; of a
        complex dtype, PyTorch's complex normal_: real and imaginary parts each of mean
        `mean` and standard deviation std / sqrt(2)."""
        if std < 0:
            raise ValueError(f"normal expects std >= 0.0, but found std {std}")
        z = self.randn(shape, dtype=dtype, device=device)
        return z * std + (mean * (1 + 1j) if z.dtype.kind == "c" else mean)

    def randint(
        self,
        low: int,
        high: int | None = None,
        shape: Shape = (),
        *,
        dtype: DTypeLike = None,
        device: Device = None,
    ) -> Tensor:
        """Integers uniform in [low, high) (in [0, low) when `high` is omitted), of `shape`
        (default dtype int64)."""
        if high is None:
            low, high = 0, low
        if high <= low:
            raise ValueError(f"randint: expected low < high, got low={low}, high={high}")
        s, different = _per_sample(_shape((shape,)))
        draw = self._rng.integers(low, high, size=s)
        return self._wrap(draw, int64 if dtype is None else dtype, device, different)

    def permutation(self, n: int, *, dtype: DTypeLike = None, device: Device = None) -> Tensor:
        """A random permutation of 0, ..., n - 1 (default dtype int64)."""
        lead, different = _per_sample(())
        draws = [self._rng.permutation(n) for _ in range(math.prod(lead))]
        draw = np.reshape(np.stack(draws), (*lead, n)) if different else draws[0]
        return self._wrap(draw, int64 if dtype is None else dtype, device, different)

    def bernoulli(
        self, p: float | Tensor, shape: Shape | None = None, *, dtype: DTypeLike = None
    ) -> Tensor:
        """1 with probability `p`, else 0 (default: the default floating dtype). `p` is a
        number (then `shape` is needed) or a tensor of probabilities (the result has its
        shape)."""
        if isinstance(p, Tensor):
            s = p.shape if shape is None else _shape((shape,))
            u = self.rand(s, dtype=p.dtype if dtype is None else dtype, device=p.device)
            hit = u < p.detach()
        else:
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"bernoulli: p must be in [0, 1], got {p}")
            u = self.rand(() if shape is None else shape, dtype=dtype)
            hit = u < p
        return asarray(hit, dtype=u.dtype if dtype is None else dtype)


def _per_sample(shape: tuple[int, ...]) -> tuple[tuple[int, ...], tuple]:
    """Inside vmap: (the shape to draw, the levels drawn per sample): the batch sizes of the
    levels whose randomness is 'different' go first ('same': one draw shared by the
    samples); a level whose randomness is 'error' refuses, as PyTorch."""
    levels = grad_mode.vmap
    if not levels:
        return shape, ()
    if any(r == "error" for _, _, r in levels):
        raise RuntimeError(
            "vmap: called random operation while in randomness error mode. Please either use "
            "the 'same' or 'different' randomness flags on vmap or perform the randomness "
            "operation out of vmap"
        )
    different = tuple((level, n) for level, n, r in levels if r == "different")
    return tuple(n for _, n in different) + shape, different


def _shape(shape: tuple[Any, ...]) -> tuple[int, ...]:
    """A shape from `rand(2, 3)`, `rand((2, 3))` or `rand(5)` style arguments."""
    if len(shape) == 1 and not isinstance(shape[0], int):
        shape = tuple(shape[0])
    out = tuple(int(n) for n in shape)
    if any(n < 0 for n in out):
        raise ValueError(f"negative dimensions are not allowed: {out}")
    return out


default_generator = Generator(0)
"""The generator that `manual_seed` seeds and that layers, dropout and the functions of this
module draw from when no `generator=` is given."""


def manual_seed(seed: int) -> Generator:
    """Restart the default generator from `seed`; returns it."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    """Restart the default generator from a fresh non-deterministic seed; returns that seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator last started from."""
    return default_generator.initial_seed()


def get_rng_state() -> Any:
    """The default generator's state (see Generator.get_state)."""
    return default_generator.get_state()


def set_rng_state(state: Any) -> None:
    """Set the default generator's state from get_rng_state()."""
    default_generator.set_state(state)


def _gen(generator: Generator | None) -> Generator:
    return default_generator if generator is None else generator


def rand(
    *shape: int | Sequence[int],
    dtype: DTypeLike = None,
    device: Device = None,
    generator: Generator | None = None,
) -> Tensor:
    """Uniform numbers in [0, 1) of `shape`, from `generator` (default: the default one)."""
    return _gen(generator).rand(*shape, dtype=dtype, device=device)


def randn(
    *shape: int | Sequence[int],
    dtype: DTypeLike = None,
    device: Device = None,
    generator: Generator | None = None,
) -> Tensor:
    """Standard normal numbers of `shape`, from `generator` (default: the default one)."""
    return _gen(generator).randn(*shape, dtype=dtype, device=device)


def uniform(
    low: float = 0.0,
    high: float = 1.0,
    shape: Shape = (),
    *,
    dtype: DTypeLike = None,
    device: Device = None,
    generator: Generator | None = None,
) -> Tensor:
    """Uniform numbers in [low, high) of `shape`."""
    return _gen(generator).uniform(low, high, shape, dtype=dtype, device=device)


def normal(
    mean: float = 0.0,
    std: float = 1.0,
    shape: Shape = (),
    *,
    dtype: DTypeLike = None,
    device: Device = None,
    generator: Generator | None = None,
) -> Tensor:
    """Normal numbers of mean `mean` and standard deviation `std`, of `shape`."""
    return _gen(generator).normal(mean, std, shape, dtype=dtype, device=device)


def randint(
    low: int,
    high: int | None = None,
    shape: Shape = (),
    *,
    dtype: DTypeLike = None,
    device: Device = None,
    generator: Generator | None = None,
) -> Tensor:
    """Integers uniform in [low, high) (in [0, low) when `high` is omitted), of `shape`."""
    return _gen(generator).randint(low, high, shape, dtype=dtype, device=device)


def permutation(
    n: int, *, dtype: DTypeLike = None, device: Device = None, generator: Generator | None = None
) -> Tensor:
    """A random permutation of 0, ..., n - 1."""
    return _gen(generator).permutation(n, dtype=dtype, device=device)


def bernoulli(
    p: float | Tensor,
    shape: Shape | None = None,
    *,
    dtype: DTypeLike = None,
    generator: Generator | None = None,
) -> Tensor:
    """1 with probability `p`, else 0."""
    return _gen(generator).bernoulli(p, shape, dtype=dtype)
