"""DataLoader and collation as PyTorch's where a port would see a difference: without
batching (batch_size=None) each sample goes through `collate_fn` (default_convert: NumPy
arrays and scalars become tensors), a user's collate_fn included (it was ignored); a
namedtuple sample collates to its own type (it became a plain tuple)."""

from collections import namedtuple

import numpy as np
import pytest

import chainrule as cr
from chainrule.utils.data import DataLoader, Dataset, default_collate, default_convert
from conftest import LIBRARY, N, T

Pair = namedtuple("Pair", ["x", "y"])


class Records(Dataset):
    def __getitem__(self, i):
        return {"a": np.full(2, float(i)), "k": np.int64(i), "pair": Pair(T([i, i + 1.0]), i)}

    def __len__(self):
        return 3


def test_a_loader_without_batching_applies_the_users_collate_fn():
    got = list(DataLoader(Records(), batch_size=None, collate_fn=lambda s: int(s["k"]) * 10))
    assert got == [0, 10, 20]


@pytest.mark.skipif(LIBRARY != "numpy", reason="the samples hold NumPy arrays")
def test_a_loader_without_batching_converts_numpy_values_to_tensors():
    sample = list(DataLoader(Records(), batch_size=None))[2]
    assert sample["a"].__class__ is cr.Tensor and N(sample["a"]).tolist() == [2.0, 2.0]
    assert sample["k"].__class__ is cr.Tensor and sample["k"].dtype == cr.int64
    assert int(sample["k"]) == 2
    assert type(sample["pair"]) is Pair and sample["pair"].y == 2


@pytest.mark.skipif(LIBRARY != "numpy", reason="the samples hold NumPy arrays")
def test_default_convert_keeps_tensors_strings_and_python_numbers():
    t = T([1.0])
    out = default_convert((t, "s", 3, [np.float32(0.5), np.float64(1.5)]))
    assert isinstance(out, tuple) and out[0] is t and out[1:3] == ("s", 3)
    assert [v.__class__ for v in out[3]] == [cr.Tensor, cr.Tensor]
    assert out[3][0].dtype == cr.float32 and out[3][1].dtype == cr.float64
    assert default_convert(np.array(["a", "b"])).dtype.kind == "U"  # strings stay arrays


def test_a_loader_with_a_batch_sampler_still_collates():
    loader = DataLoader(Records(), batch_sampler=[[0, 2]])
    (batch,) = list(loader)
    assert N(batch["k"]).tolist() == [0, 2]


def test_a_namedtuple_collates_to_its_type():
    batch = default_collate([Pair(T([0.0]), 1), Pair(T([2.0]), 3)])
    assert type(batch) is Pair
    assert N(batch.x).tolist() == [[0.0], [2.0]] and N(batch.y).tolist() == [1, 3]
    assert type(default_collate([(T(1.0), 2), (T(3.0), 4)])) is tuple
