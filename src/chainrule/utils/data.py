"""Datasets and batch loading with PyTorch's names (torch.utils.data): Dataset, TensorDataset,
Subset, random_split, the samplers (Sequential, Random, SubsetRandom, Batch), and DataLoader
(batch_size, shuffle from a seeded generator, sampler, batch_sampler, drop_last, collation of
tensors, numbers, arrays, tuples and dicts, default_convert of unbatched samples). Loading
runs in the calling process."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from typing import Any

from .. import _backend
from .. import _namespace as ops
from .. import random as _random
from .._tensor import Tensor
from .tree import tree_map

__all__ = [
    "BatchSampler", "DataLoader", "Dataset", "RandomSampler", "Sampler", "SequentialSampler",
    "Subset", "SubsetRandomSampler", "TensorDataset", "default_collate", "default_convert",
    "random_split",
]  # fmt: skip


class Dataset:
    """A map-style dataset: subclasses define `__getitem__(index)` and `__len__`."""

    def __getitem__(self, index: int) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self) -> int:
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


class TensorDataset(Dataset):
    """Samples of tensors that share their first dimension: item i is (t[i] for each)."""

    def __init__(self, *tensors: Tensor) -> None:
        if tensors and any(t.shape[0] != tensors[0].shape[0] for t in tensors):
            raise ValueError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index: int) -> tuple[Tensor, ...]:
        return tuple(t[index] for t in self.tensors)

    def __len__(self) -> int:
        return self.tensors[0].shape[0] if self.tensors else 0


class Subset(Dataset):
    """The items of `dataset` at `indices`, in that order."""

    def __init__(self, dataset: Any, indices: Sequence[int]) -> None:
        self.dataset = dataset
        self.indices = list(indices)

    def __getitem__(self, index: int) -> Any:
        return self.dataset[self.indices[index]]

    def __len__(self) -> int:
        return len(self.indices)


def random_split(
    dataset: Any,
    lengths: Sequence[int | float],
    generator: _random.Generator | None = None,
) -> list[Subset]:
    """Disjoint random subsets of the given lengths (or fractions summing to 1: the
    remainder goes one by one to the first subsets, as PyTorch)."""
    n = len(dataset)
    if math.isclose(sum(lengths), 1) and sum(lengths) <= 1:
        sizes = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(sizes)):
            sizes[i % len(sizes)] += 1
    else:
        sizes = [int(k) for k in lengths]
    if sum(sizes) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    gen = _random.default_generator if generator is None else generator
    order = gen.permutation(n).tolist()
    subsets, start = [], 0
    for size in sizes:
        subsets.append(Subset(dataset, order[start : start + size]))
        start += size
    return subsets


class Sampler:
    """An iterable of dataset indices (or, for a batch sampler, of lists of them): subclasses
    define `__iter__`, and `__len__` where the length is known."""

    def __iter__(self) -> Iterator[Any]:
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """The indices 0, 1, ..., len(data_source) - 1 in order."""

    def __init__(self, data_source: Sized) -> None:
        self.data_source = data_source

    def __iter__(self) -> Iterator[int]:
        return iter(range(len(self.data_source)))

    def __len__(self) -> int:
        return len(self.data_source)


def _generator(generator: _random.Generator | None) -> _random.Generator:
    return _random.default_generator if generator is None else generator


class RandomSampler(Sampler):
    """Indices of `data_source` in a random order drawn anew at each iteration from
    `generator` (default: chainrule.random's): a permutation (several, and then part of one,
    when `num_samples` exceeds the length), or `num_samples` independent draws when
    `replacement`."""

    def __init__(
        self,
        data_source: Sized,
        replacement: bool = False,
        num_samples: int | None = None,
        generator: _random.Generator | None = None,
    ) -> None:
        if not isinstance(replacement, bool):
            raise TypeError(
                f"replacement should be a boolean value, but got replacement={replacement}"
            )
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError(
                "num_samples should be a positive integer value, but got "
                f"num_samples={self.num_samples}"
            )

    @property
    def num_samples(self) -> int:
        """How many indices an iteration gives (the dataset's length unless set)."""
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self) -> Iterator[int]:
        n, gen = len(self.data_source), _generator(self.generator)
        if self.replacement:
            return iter(gen.randint(0, n, (self.num_samples,)).tolist())
        whole, part = divmod(self.num_samples, n)
        order = [i for _ in range(whole) for i in gen.permutation(n).tolist()]
        if part:
            order += gen.permutation(n).tolist()[:part]
        return iter(order)

    def __len__(self) -> int:
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given `indices` in a random order drawn anew at each iteration from `generator`."""

    def __init__(self, indices: Sequence[int], generator: _random.Generator | None = None):
        self.indices = indices
        self.generator = generator

    def __iter__(self) -> Iterator[int]:
        order = _generator(self.generator).permutation(len(self.indices)).tolist()
        return iter([self.indices[i] for i in order])

    def __len__(self) -> int:
        return len(self.indices)


class BatchSampler(Sampler):
    """Lists of `batch_size` indices from `sampler`, in its order; the last, shorter list
    too unless `drop_last`."""

    def __init__(self, sampler: Iterable[int], batch_size: int, drop_last: bool) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self) -> Iterator[list[int]]:
        batch: list[int] = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self) -> int:
        n = len(self.sampler)  # type: ignore[arg-type]
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


def default_collate(batch: Sequence[Any]) -> Any:
    """A list of samples as one batch: tensors (and arrays) stacked on a new first axis,
    numbers as a tensor, strings as a list, and tuples, lists and dicts collated per position
    or key (each nested level in turn)."""
    first = batch[0]
    if isinstance(first, Tensor):
        return ops.stack(list(batch))
    if isinstance(first, Mapping):
        return {key: default_collate([sample[key] for sample in batch]) for key in first}
    if isinstance(first, (tuple, list)):
        if any(len(sample) != len(first) for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [default_collate(list(column)) for column in zip(*batch)]
        if isinstance(first, tuple):
            kind = first.__class__
            return kind(*columns) if hasattr(kind, "_fields") else tuple(columns)
        return columns
    if isinstance(first, (bool, int, float)):
        return ops.asarray(list(batch))
    if isinstance(first, (str, bytes)):
        return list(batch)
    if _backend.is_array(first):
        return ops.stack([ops.asarray(a) for a in batch])
    raise TypeError(
        "default_collate: batch must contain tensors, arrays, numbers, strings, dicts or "
        f"lists; found {type(first)}"
    )


def _converted(x: Any) -> Any:
    """One value of an unbatched sample: an array (a NumPy scalar too) as a tensor."""
    if x.__class__ is Tensor:
        return x
    if _backend.is_array(x) or (isinstance(x, float) and x.__class__ is not float):
        try:
            return ops.asarray(x)
        except TypeError:  # strings and objects: chainrule has no dtype for them
            return x
    return x


def default_convert(data: Any) -> Any:
    """A sample as a loader without batching (batch_size=None) gives it, as PyTorch's:
    arrays and NumPy scalars of numbers become tensors (NumPy's arrays shared, not copied),
    inside tuples, lists, dicts and namedtuples too; tensors, Python numbers and strings stay
    as they are. (PyTorch also turns a tuple into a list.)"""
    return tree_map(_converted, data)


class DataLoader:
    """Batches of a dataset: `batch_size` samples each (None: samples one by one, not
    collated into batches), in the order of `sampler` (default: in order, or shuffled anew
    each epoch from `generator` when `shuffle`), or the index lists of `batch_sampler`; the
    last short batch kept unless `drop_last`; collated by `collate_fn` (default_collate; without
    batching each sample goes through it, default_convert by default)."""

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool | None = None,
        sampler: Iterable[int] | None = None,
        batch_sampler: Iterable[Sequence[int]] | None = None,
        num_workers: int = 0,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        *,
        drop_last: bool = False,
        generator: _random.Generator | None = None,
    ) -> None:
        if num_workers:
            raise NotImplementedError(
                "DataLoader: num_workers > 0 is not supported (batches load in the calling process)"
            )
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError(
                    "batch_sampler option is mutually exclusive with batch_size, shuffle, "
                    "sampler, and drop_last"
                )
            batch_size = None
        elif batch_size is None and drop_last:
            raise ValueError(
                "batch_size=None option disables auto-batching and is mutually exclusive with "
                "drop_last"
            )
        elif batch_size is not None and batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        if sampler is None:
            sampler = (
                RandomSampler(dataset, generator=generator)
                if shuffle
                else SequentialSampler(dataset)
            )
        if batch_size is not None and batch_sampler is None:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.dataset = dataset
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        if collate_fn is None:
            collate_fn = default_collate if batch_sampler is not None else default_convert
        self.collate_fn = collate_fn
        self.generator = generator

    def __iter__(self) -> Iterator[Any]:
        if self.batch_sampler is None:
            for i in self.sampler:
                yield self.collate_fn(self.dataset[i])
            return
        for indices in self.batch_sampler:
            yield self.collate_fn([self.dataset[i] for i in indices])

    def __len__(self) -> int:
        return len(self.sampler if self.batch_sampler is None else self.batch_sampler)  # type: ignore[arg-type]
