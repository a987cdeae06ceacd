"""checkpoint's options as PyTorch documents them: use_reentrant=True (same results),
context_fn, determinism_check, debug, early stop, CheckpointError, and selective
checkpointing (create_selective_checkpoint_contexts)."""

import contextlib

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import grad
from chainrule.utils.checkpoint import (
    CheckpointError,
    CheckpointPolicy,
    checkpoint,
    create_selective_checkpoint_contexts,
    set_checkpoint_early_stop,
)
from conftest import N, T

RNG = np.random.default_rng(11)
W = RNG.normal(size=(4, 4)) * 0.5


def block(h, w):
    return cr.sin(cr.tanh(h @ w) @ w) * cr.exp(h)


def inputs():
    return T(RNG.normal(size=(2, 4)), requires_grad=True), T(W, requires_grad=True)


def test_use_reentrant_true_gives_the_same_gradients():
    x, w = inputs()
    plain = grad(cr.sum(block(x, w) ** 2), [x, w])
    for reentrant in (True, False, None):
        got = grad(cr.sum(checkpoint(block, x, w, use_reentrant=reentrant) ** 2), [x, w])
        for a, b in zip(plain, got):
            np.testing.assert_allclose(N(a), N(b), rtol=1e-12)


def test_context_fn_wraps_the_first_run_and_the_recomputation():
    seen = []

    @contextlib.contextmanager
    def noting(label):
        seen.append(f"enter {label}")
        try:
            yield
        finally:
            seen.append(f"exit {label}")

    x, w = inputs()
    out = checkpoint(block, x, w, context_fn=lambda: (noting("forward"), noting("recompute")))
    assert seen == ["enter forward", "exit forward"]
    cr.sum(out).backward(retain_graph=True)
    assert seen[2:] == ["enter recompute", "exit recompute"]
    cr.sum(out).backward()  # a second recomputation gets a new pair from context_fn
    assert seen[4:] == ["enter recompute", "exit recompute"]
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(block, x, w, use_reentrant=True, debug=True)


def changing():
    """A block whose recomputation saves a value of another dtype than its first run."""
    runs = []

    def run(h):
        runs.append(1)
        return cr.sum(cr.sin(h if len(runs) == 1 else cr.astype(h, cr.float32)))

    return run


def test_a_recomputation_with_other_metadata_raises_checkpoint_error():
    x = T(RNG.normal(size=4), requires_grad=True)
    out = checkpoint(changing(), x)
    with pytest.raises(CheckpointError, match="tensor at position 0:\nsaved metadata"):
        out.backward()
    assert issubclass(CheckpointError, RuntimeError)
    # determinism_check="none" looks at the number of values only.
    out = checkpoint(changing(), x, determinism_check="none")
    out.backward()
    np.testing.assert_allclose(N(x.grad), np.cos(N(x)), rtol=1e-6)
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        checkpoint(cr.sin, x, determinism_check="strict")


def test_a_recomputation_saving_fewer_values_raises_and_debug_names_the_operations():
    def fewer(h):
        fewer.runs += 1
        y = cr.sin(h)
        return y * h if fewer.runs == 1 else y + h

    fewer.runs = 0
    x = T(RNG.normal(size=3), requires_grad=True)
    out = checkpoint(fewer, x, debug=True)
    with pytest.raises(CheckpointError, match="A different number of tensors") as e:
        cr.sum(out).backward()
    text = str(e.value)
    assert "SinBackward0 at" in text and "MulBackward0 at" in text
    assert "test_checkpoint_options.py" in text


def test_early_stop_ends_the_recomputation_once_it_has_every_value():
    ran = []

    def block_with_tail(h):
        a = cr.sin(h)  # saves h
        ran.append("sin")
        b = cr.exp(a)  # saves its output: the last value backward needs
        ran.append("exp")
        tail = b.detach() * 3.0  # saves nothing
        ran.append("tail")
        return b, tail

    x = T([0.5, 1.0], requires_grad=True)
    expected = np.exp(np.sin([0.5, 1.0])) * np.cos([0.5, 1.0])
    y, _ = checkpoint(block_with_tail, x)
    ran.clear()
    cr.sum(y).backward(retain_graph=True)
    assert ran == ["sin"]  # stopped inside exp, as it saved the last value
    ran.clear()
    with set_checkpoint_early_stop(False):
        cr.sum(y).backward()
    assert ran == ["sin", "exp", "tail"]
    np.testing.assert_allclose(N(x.grad), 2 * expected, rtol=1e-12)
    y, _ = checkpoint(block_with_tail, x, early_stop=False)
    ran.clear()
    cr.sum(y).backward()
    assert ran == ["sin", "exp", "tail"]


# ----------------------------------------------------------------------------- selective


def test_selective_checkpointing_keeps_the_values_of_the_chosen_operations():
    x, w = inputs()
    plain = grad(cr.sum(block(x, w)), [x, w])
    calls = []

    def counted(h, w):
        calls.append(1)
        return block(h, w)

    def keep_all(ctx, op):
        assert not ctx.is_recompute
        return CheckpointPolicy.MUST_SAVE

    out = checkpoint(
        counted, x, w, context_fn=lambda: create_selective_checkpoint_contexts(keep_all)
    )
    got = grad(cr.sum(out), [x, w])
    assert len(calls) == 1  # every value was kept: no recomputation
    for a, b in zip(plain, got):
        np.testing.assert_allclose(N(a), N(b), rtol=1e-12)
    # Keeping matmul's values only: the graph holds those, and backward recomputes the rest.
    out = checkpoint(
        counted, x, w, context_fn=lambda: create_selective_checkpoint_contexts([cr.matmul])
    )
    got = grad(cr.sum(out), [x, w])
    assert len(calls) == 3
    for a, b in zip(plain, got):
        np.testing.assert_allclose(N(a), N(b), rtol=1e-12)


def test_a_policy_that_recomputes_everything_is_plain_checkpointing():
    x, w = inputs()
    calls, asked = [], []

    def counted(h, w):
        calls.append(1)
        return block(h, w)

    def recompute(ctx, op):
        asked.append(op)
        return CheckpointPolicy.PREFER_RECOMPUTE

    out = checkpoint(
        counted, x, w, context_fn=lambda: create_selective_checkpoint_contexts(recompute)
    )
    cr.sum(out).backward()
    assert len(calls) == 2
    # The policy is asked once per saved value of the first run, with the primitive's name.
    assert {"matmul", "sin", "tanh", "exp"} <= set(asked)


def test_a_kept_value_written_in_place_raises_unless_allowed():
    def scaled(h):
        y = h * 1.0
        return cr.sin(y), y

    for allow in (False, True):
        x = T([0.5, 1.0], requires_grad=True)
        pair = create_selective_checkpoint_contexts(["sin"], allow_cache_entry_mutation=allow)
        out, y = checkpoint(scaled, x, context_fn=lambda pair=pair: pair)
        y.detach()[0] = 5.0  # the value sin kept
        if allow:
            cr.sum(out).backward()
            np.testing.assert_allclose(N(x.grad), np.cos([5.0, 1.0]))
        else:
            with pytest.raises(CheckpointError, match="allow_cache_entry_mutation"):
                cr.sum(out).backward()
    with pytest.raises(TypeError, match="policy_fn_or_list must be either"):
        create_selective_checkpoint_contexts(3)
