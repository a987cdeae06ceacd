"""chainrule.utils.data: TensorDataset, Subset, random_split, and DataLoader's batching,
seeded shuffling, drop_last and collation (PyTorch's default_collate rules)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.utils.data import (
    DataLoader,
    Dataset,
    Subset,
    TensorDataset,
    default_collate,
    random_split,
)
from conftest import N, T

X = np.arange(20.0).reshape(10, 2)
Y = np.arange(10)


def test_tensor_dataset_items_are_tuples_of_rows():
    data = TensorDataset(T(X), T(Y))
    assert len(data) == 10
    x, y = data[3]
    assert N(x).tolist() == [6.0, 7.0] and int(y) == 3
    with pytest.raises(ValueError, match="Size mismatch"):
        TensorDataset(T(X), T(Y[:5]))


def test_loader_batches_in_order_and_keeps_or_drops_the_short_batch():
    loader = DataLoader(TensorDataset(T(X), T(Y)), batch_size=4)
    batches = list(loader)
    assert len(loader) == 3 and [b[0].shape for b in batches] == [(4, 2), (4, 2), (2, 2)]
    assert N(batches[2][1]).tolist() == [8, 9]
    dropped = DataLoader(TensorDataset(T(X), T(Y)), batch_size=4, drop_last=True)
    assert len(dropped) == 2 and len(list(dropped)) == 2


def test_shuffle_is_a_new_permutation_each_epoch_reproducible_from_the_seed():
    def epochs(seed):
        loader = DataLoader(
            TensorDataset(T(Y)), batch_size=5, shuffle=True, generator=cr.random.Generator(seed)
        )
        return [[int(v) for batch in loader for v in N(batch[0])] for _ in range(2)]

    first, second = epochs(0)
    assert sorted(first) == list(range(10)) and sorted(second) == list(range(10))
    assert first != second and first != list(range(10))
    assert epochs(0) == [first, second]


def test_collation_of_tuples_dicts_numbers_arrays_and_strings():
    class Records(Dataset):
        def __getitem__(self, i):
            return {"x": T(X[i]), "label": int(Y[i]), "name": f"r{i}", "pair": (i, float(i))}

        def __len__(self):
            return 3

    batch = next(iter(DataLoader(Records(), batch_size=3)))
    assert batch["x"].shape == (3, 2)
    assert N(batch["label"]).tolist() == [0, 1, 2]
    assert batch["name"] == ["r0", "r1", "r2"]
    assert N(batch["pair"][0]).tolist() == [0, 1, 2] and batch["pair"][1].dtype == cr.float64
    arrays = default_collate([np.zeros(2), np.ones(2)])
    assert isinstance(arrays, cr.Tensor) and arrays.shape == (2, 2)
    assert isinstance(default_collate([[1, 2], [3, 4]]), list)
    with pytest.raises(TypeError, match="default_collate"):
        default_collate([object()])


def test_batch_size_none_yields_samples_and_custom_collate_is_used():
    data = TensorDataset(T(Y))
    assert [int(s[0]) for s in DataLoader(data, batch_size=None)][:3] == [0, 1, 2]
    sizes = list(DataLoader(data, batch_size=4, collate_fn=len))
    assert sizes == [4, 4, 2]
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        DataLoader(data, batch_size=0)
    with pytest.raises(NotImplementedError, match="num_workers"):
        DataLoader(data, num_workers=2)


def test_random_split_by_lengths_and_fractions_is_disjoint_and_complete():
    data = TensorDataset(T(Y))
    parts = random_split(data, [3, 7], generator=cr.random.Generator(1))
    assert [len(p) for p in parts] == [3, 7] and all(isinstance(p, Subset) for p in parts)
    seen = sorted(int(p[i][0]) for p in parts for i in range(len(p)))
    assert seen == list(range(10))
    assert [len(p) for p in random_split(data, [0.25, 0.25, 0.5])] == [3, 2, 5]
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(data, [3, 3])


def test_a_training_loop_over_a_loader():
    data = TensorDataset(T(X / 10), T(X.sum(1, keepdims=True) / 10))
    model = cr.nn.Linear(2, 1)
    opt = cr.optim.SGD(model.parameters(), lr=0.1)
    loader = DataLoader(data, batch_size=4, shuffle=True, generator=cr.random.Generator(0))

    def full_loss():
        return cr.nn.functional.mse_loss(model(T(X / 10)), T(X.sum(1, keepdims=True) / 10)).item()

    before = full_loss()
    for _ in range(50):
        for x, y in loader:
            opt.zero_grad()
            cr.nn.functional.mse_loss(model(x), y).backward()
            opt.step()
    assert full_loss() < 0.01 * before
