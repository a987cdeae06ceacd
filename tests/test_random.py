"""chainrule.random: seeded generators, reproducible draws, shapes, dtypes and ranges, in the
library under test; NumPy draws with its own generator, libraries without one get NumPy's."""

import array_api_strict
import numpy as np
import pytest

import chainrule as cr
from chainrule.random import Generator
from conftest import BACKEND, N, of_backend


def test_a_seed_gives_the_same_numbers_and_manual_seed_starts_again():
    a = Generator(7)
    first = N(a.randn(4, 3))
    assert np.array_equal(first, N(Generator(7).randn(4, 3)))
    assert not np.array_equal(first, N(a.randn(4, 3)))
    a.manual_seed(7)
    assert np.array_equal(first, N(a.randn(4, 3)))
    assert not np.array_equal(first, N(Generator(8).randn(4, 3)))
    assert a.initial_seed() == 7


def test_the_default_generator_follows_manual_seed():
    cr.random.manual_seed(3)
    x = N(cr.random.rand(5))
    cr.random.manual_seed(3)
    assert np.array_equal(x, N(cr.random.rand(5)))
    assert cr.random.initial_seed() == 3
    fresh = cr.random.seed()
    assert cr.random.initial_seed() == fresh
    cr.random.manual_seed(0)


def test_numpy_draws_with_its_own_generator():
    expected = np.random.default_rng(11).random((2, 3))
    assert np.array_equal(N(Generator(11, xp=np).rand(2, 3)), expected)
    assert np.array_equal(
        N(Generator(11, xp=np).randn(4)), np.random.default_rng(11).standard_normal(4)
    )


def test_a_library_without_a_generator_gets_numpys_numbers_in_its_own_arrays():
    t = Generator(11, xp=array_api_strict).rand(2, 3)
    assert type(t._data).__module__.startswith("array_api_strict")
    assert np.array_equal(N(t), np.random.default_rng(11).random((2, 3)))


def test_draws_are_tensors_of_the_default_library():
    t = cr.random.randn(2, generator=Generator(0))
    assert of_backend(t._data)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_shapes_as_arguments_or_a_tuple(shape):
    g = Generator(0)
    assert g.rand(*shape).shape == shape
    assert g.randn(shape).shape == shape
    assert g.uniform(-1, 1, shape).shape == shape
    assert g.normal(0, 2, shape).shape == shape
    assert g.randint(0, 5, shape).shape == shape
    assert g.bernoulli(0.5, shape).shape == shape


def test_default_dtypes_are_float64_and_int64_and_float32_is_drawn_when_asked():
    g = Generator(0)
    assert g.rand(3).dtype == cr.float64
    assert g.randn(3, dtype=cr.float32).dtype == cr.float32
    assert g.randint(5, shape=(3,)).dtype == cr.int64
    assert g.permutation(4).dtype == cr.int64
    with pytest.raises(TypeError, match="floating"):
        g.rand(3, dtype=cr.int64)


def test_values_fall_in_their_ranges_with_the_right_moments():
    g = Generator(1)
    u = N(g.uniform(-2.0, 3.0, (4000,)))
    assert u.min() >= -2.0 and u.max() < 3.0 and abs(u.mean() - 0.5) < 0.1
    z = N(g.normal(1.0, 2.0, (4000,)))
    assert abs(z.mean() - 1.0) < 0.1 and abs(z.std() - 2.0) < 0.1
    k = N(g.randint(2, 6, (4000,)))
    assert set(np.unique(k)) == {2, 3, 4, 5}
    assert set(np.unique(N(g.randint(3, shape=(500,))))) == {0, 1, 2}
    b = N(g.bernoulli(0.25, (4000,)))
    assert set(np.unique(b)) == {0.0, 1.0} and abs(b.mean() - 0.25) < 0.03


def test_permutation_holds_every_index_once():
    p = N(Generator(5).permutation(20))
    assert sorted(p.tolist()) == list(range(20))
    assert p.tolist() != list(range(20))


def test_bernoulli_of_a_tensor_of_probabilities():
    p = cr.asarray(BACKEND.asarray([0.0, 1.0, 0.0, 1.0]))
    assert N(Generator(0).bernoulli(p)).tolist() == [0.0, 1.0, 0.0, 1.0]


def test_bad_arguments_raise():
    g = Generator(0)
    with pytest.raises(ValueError, match="non-negative"):
        g.manual_seed(-1)
    with pytest.raises(ValueError, match="low < high"):
        g.randint(3, 3)
    with pytest.raises(ValueError, match="std"):
        g.normal(0.0, -1.0, (2,))
    with pytest.raises(ValueError, match="negative dimensions"):
        g.rand(-1)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        g.bernoulli(1.5, (2,))
