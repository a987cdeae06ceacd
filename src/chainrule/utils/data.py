"""Datasets and batch loading with PyTorch's names (torch.utils.data): Dataset, TensorDataset,
Subset, random_split, and DataLoader (batch_size, shuffle from a seeded generator, drop_last,
collation of tensors, numbers, arrays, tuples and dicts). Loading runs in the calling
process: there are no worker processes."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from .. import _backend
from .. import _namespace as ops
from .. import random as _random
from .._tensor import Tensor

__all__ = ["DataLoader", "Dataset", "Subset", "TensorDataset", "default_collate", "random_split"]


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
        return tuple(columns) if isinstance(first, tuple) else columns
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


class DataLoader:
    """Batches of a dataset: `batch_size` samples each (None: samples one by one, not
    collated into batches), in order or shuffled anew each epoch from `generator` (default:
    chainrule.random's), the last short batch kept unless `drop_last`, collated by
    `collate_fn` (default_collate)."""

    def __init__(
        self,
        dataset: Any,
        batch_size: int | None = 1,
        shuffle: bool = False,
        *,
        drop_last: bool = False,
        collate_fn: Callable[[list[Any]], Any] | None = None,
        generator: _random.Generator | None = None,
        num_workers: int = 0,
    ) -> None:
        if num_workers:
            raise NotImplementedError(
                "DataLoader: num_workers > 0 is not supported (batches load in the calling process)"
            )
        if batch_size is not None and batch_size <= 0:
            raise ValueError(
                f"batch_size should be a positive integer value, but got batch_size={batch_size}"
            )
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.drop_last = drop_last
        self.collate_fn = default_collate if collate_fn is None else collate_fn
        self.generator = generator

    def _order(self) -> list[int]:
        n = len(self.dataset)
        if not self.shuffle:
            return list(range(n))
        gen = _random.default_generator if self.generator is None else self.generator
        return gen.permutation(n).tolist()

    def __iter__(self) -> Iterator[Any]:
        order = self._order()
        if self.batch_size is None:
            for i in order:
                yield self.dataset[i]
            return
        size = self.batch_size
        stop = len(order) - len(order) % size if self.drop_last else len(order)
        for start in range(0, stop, size):
            yield self.collate_fn([self.dataset[i] for i in order[start : start + size]])

    def __len__(self) -> int:
        n = len(self.dataset)
        if self.batch_size is None:
            return n
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
