"""The samplers of chainrule.utils.data (Sequential, Random, SubsetRandom, Batch) and
DataLoader's sampler= and batch_sampler=, with PyTorch's orders, lengths and errors."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.random import Generator
from chainrule.utils.data import (
    BatchSampler,
    DataLoader,
    RandomSampler,
    Sampler,
    SequentialSampler,
    SubsetRandomSampler,
    TensorDataset,
)
from conftest import N


def dataset(n=10):
    return TensorDataset(cr.arange(float(n)), cr.arange(n))


def test_sequential_sampler_gives_the_indices_in_order():
    sampler = SequentialSampler(dataset(4))
    assert list(sampler) == [0, 1, 2, 3] and len(sampler) == 4


def test_random_sampler_is_a_permutation_drawn_from_its_generator_anew_each_time():
    sampler = RandomSampler(dataset(), generator=Generator(5))
    first, second = list(sampler), list(sampler)
    assert sorted(first) == sorted(second) == list(range(10)) and len(sampler) == 10
    g = Generator(5)
    assert first == g.permutation(10).tolist() and second == g.permutation(10).tolist()


def test_random_sampler_beyond_the_length_repeats_whole_permutations_then_part_of_one():
    sampler = RandomSampler(dataset(4), num_samples=10, generator=Generator(1))
    order = list(sampler)
    assert len(sampler) == len(order) == 10
    assert sorted(order[:4]) == sorted(order[4:8]) == [0, 1, 2, 3]
    assert len(set(order[8:])) == 2


def test_random_sampler_with_replacement_draws_num_samples_indices_in_range():
    order = list(RandomSampler(dataset(3), replacement=True, num_samples=200))
    assert len(order) == 200 and set(order) == {0, 1, 2}


def test_random_sampler_refuses_what_pytorch_refuses():
    with pytest.raises(TypeError, match="replacement should be a boolean value"):
        RandomSampler(dataset(), replacement=1)
    with pytest.raises(ValueError, match="num_samples should be a positive integer value"):
        RandomSampler(dataset(), num_samples=0)


def test_subset_random_sampler_permutes_the_given_indices():
    sampler = SubsetRandomSampler([7, 2, 5], generator=Generator(0))
    order = list(sampler)
    assert sorted(order) == [2, 5, 7] and len(sampler) == 3
    expected = [[7, 2, 5][i] for i in Generator(0).permutation(3).tolist()]
    assert order == expected


@pytest.mark.parametrize(
    ("drop_last", "batches"), [(False, [[0, 1], [2, 3], [4]]), (True, [[0, 1], [2, 3]])]
)
def test_batch_sampler_groups_its_samplers_indices(drop_last, batches):
    sampler = BatchSampler(range(5), 2, drop_last)
    assert list(sampler) == batches and len(sampler) == len(batches)


def test_batch_sampler_refuses_what_pytorch_refuses():
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(3), 0, False)
    with pytest.raises(ValueError, match="batch_size should be a positive integer value"):
        BatchSampler(range(3), True, False)
    with pytest.raises(ValueError, match="drop_last should be a boolean value"):
        BatchSampler(range(3), 2, 1)


def test_sampler_base_class_needs_iter():
    with pytest.raises(NotImplementedError, match="must define __iter__"):
        iter(Sampler())


def test_dataloader_batches_in_the_order_of_its_sampler():
    loader = DataLoader(dataset(), batch_size=2, sampler=[3, 1, 5])
    batches = [N(x).tolist() for x, _ in loader]
    assert batches == [[3.0, 1.0], [5.0]] and len(loader) == 2


def test_dataloader_takes_index_lists_from_its_batch_sampler():
    loader = DataLoader(dataset(), batch_sampler=[[3, 1], [0]])
    assert [N(y).tolist() for _, y in loader] == [[3, 1], [0]]
    assert len(loader) == 2 and loader.batch_size is None


def test_dataloader_without_batching_yields_the_samples_of_its_sampler():
    loader = DataLoader(dataset(), batch_size=None, sampler=[4, 2])
    assert [x.item() for x, _ in loader] == [4.0, 2.0] and len(loader) == 2


def test_dataloader_with_a_subset_random_sampler_sees_each_index_once():
    loader = DataLoader(dataset(), batch_size=4, sampler=SubsetRandomSampler(range(6)))
    seen = np.concatenate([N(y) for _, y in loader])
    assert sorted(seen.tolist()) == list(range(6))


def test_dataloader_shuffle_is_a_random_sampler_of_its_generator():
    loader = DataLoader(dataset(), batch_size=10, shuffle=True, generator=Generator(3))
    assert isinstance(loader.sampler, RandomSampler)
    ((x, _),) = list(loader)
    assert N(x).tolist() == [float(i) for i in Generator(3).permutation(10).tolist()]


def test_dataloader_refuses_the_combinations_pytorch_refuses():
    with pytest.raises(ValueError, match="sampler option is mutually exclusive with shuffle"):
        DataLoader(dataset(), sampler=[0], shuffle=True)
    message = "batch_sampler option is mutually exclusive with batch_size, shuffle, sampler"
    for kwargs in ({"batch_size": 2}, {"shuffle": True}, {"sampler": [0]}, {"drop_last": True}):
        with pytest.raises(ValueError, match=message):
            DataLoader(dataset(), batch_sampler=[[0]], **kwargs)
    with pytest.raises(ValueError, match="mutually exclusive with drop_last"):
        DataLoader(dataset(), batch_size=None, drop_last=True)
