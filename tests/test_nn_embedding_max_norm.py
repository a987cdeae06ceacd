"""Embedding's and F.embedding's max_norm and norm_type: the rows looked up are scaled down
in place before the lookup, as PyTorch's (fixtures/embedding_max_norm_torch.json, made by
fixtures/make_embedding_max_norm_fixtures.py), with no gradient through the scaling."""

import json
import pathlib

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from conftest import N, T
from helpers import leaf

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "embedding_max_norm_torch.json").read_text()
)["cases"]


def _kwargs(case):
    return {k: float(v) if v == "inf" else v for k, v in case["kwargs"].items()}


@pytest.mark.parametrize("name", list(RECORD))
def test_embedding_max_norm_matches_pytorch_table_output_and_gradient(name):
    case = RECORD[name]
    weight = leaf(np.array(case["weight"]))
    out = F.embedding(T(np.array(case["indices"])), weight, **_kwargs(case))
    np.testing.assert_allclose(N(weight), np.array(case["weight_after"]), rtol=1e-12)
    np.testing.assert_allclose(N(out), np.array(case["output"]), rtol=1e-12)
    cr.sum(out * T(np.array(case["cotangent"]))).backward()
    np.testing.assert_allclose(N(weight.grad), np.array(case["grad"]), rtol=1e-12, atol=1e-15)


def test_embedding_layer_renormalises_only_the_rows_it_looks_up():
    cr.manual_seed(0)
    layer = nn.Embedding(6, 4, max_norm=0.5, dtype=cr.float64)
    before = N(layer.weight).copy()
    out = layer(T(np.array([[2, 4], [4, 2]])))
    after = N(layer.weight)
    norms = np.linalg.norm(after, axis=1)
    assert np.all(norms[[2, 4]] <= 0.5 + 1e-12)
    np.testing.assert_array_equal(after[[0, 1, 3, 5]], before[[0, 1, 3, 5]])
    np.testing.assert_array_equal(N(out)[0, 1], after[4])
    assert repr(layer) == "Embedding(6, 4, max_norm=0.5)"


def test_embedding_without_max_norm_leaves_the_table_alone():
    weight = leaf(np.full((3, 2), 10.0))
    F.embedding(T(np.array([0, 2])), weight)
    np.testing.assert_array_equal(N(weight), np.full((3, 2), 10.0))


def test_embedding_options_left_out_raise_clear_errors():
    with pytest.raises(NotImplementedError, match="sparse"):
        F.embedding(T(np.array([0])), T(np.ones((3, 2))), sparse=True)
