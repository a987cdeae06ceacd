"""Last stop's nn functions (pooling indices and unpooling, quantile's q, CTC loss, adaptive
log-softmax, embeddings, weight and spectral norm, cdist, xlogy) under the transforms: jvp,
jacfwd against jacrev, vmap against a loop over samples, Hessians; each test checks a value
against another path or numbers PyTorch 2.13 gave."""

import warnings

import numpy as np

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import autograd, func
from conftest import T


def _stack(tensors):
    return np.stack([t.numpy() for t in tensors])


def test_vmap_of_max_unpool_with_each_samples_indices():
    # Pooling's indices differ per sample: their range check read the batched indices as one
    # number (vmap's data-dependent control flow error) where PyTorch runs.
    rng = np.random.default_rng(0)
    for k, size in ((1, (1, 2, 4)), (2, (1, 4, 4)), (3, (1, 2, 4, 4))):
        pool, unpool = getattr(F, f"max_pool{k}d"), getattr(F, f"max_unpool{k}d")

        def f(z, pool=pool, unpool=unpool):
            return unpool(*pool(z, 2, return_indices=True), 2)

        batch = T(rng.standard_normal((3, *size)))
        loop = _stack([f(batch[i]) for i in range(3)])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the gather by per-sample indices is a loop
            np.testing.assert_array_equal(func.vmap(f)(batch).numpy(), loop)
        first = T(batch.numpy()[0])  # not a view (JAX, Dask: a view failed under vjp)
        jac = func.jacfwd(f)(first)
        np.testing.assert_array_equal(jac.numpy(), func.jacrev(f)(first).numpy())


def test_vmap_and_jacfwd_over_quantiles_q():
    # A batched q met quantile's range check as one number (vmap's error) where PyTorch runs;
    # jacfwd over q is vmap's too.
    data = T([0.3, -1.2, 2.0, 0.7, 1.1])
    qs = T([[0.1, 0.5], [0.25, 0.9], [0.0, 1.0]])
    loop = _stack([cr.quantile(data, qs[i]) for i in range(3)])
    np.testing.assert_allclose(func.vmap(lambda q: cr.quantile(data, q))(qs).numpy(), loop)
    # d/dq of linear interpolation: (n - 1) times the slope between the ranks' neighbours
    # (sorted: -1.2, 0.3, 0.7, 1.1, 2.0; ranks 0.4 and 3.6).
    jac = func.jacfwd(lambda q: cr.quantile(data, q))(T([0.1, 0.9]))
    np.testing.assert_allclose(jac.numpy(), np.diag([4 * 1.5, 4 * 0.9]), rtol=1e-12)
    nan_jac = func.jacfwd(lambda q: cr.nanquantile(data, q))(T([0.1, 0.9]))
    np.testing.assert_allclose(nan_jac.numpy(), jac.numpy(), rtol=1e-12)


def test_embedding_forward_mode_is_the_lookups_derivative_as_pytorch():
    # PyTorch's forward mode of embedding is the lookup's derivative: neither
    # scale_grad_by_freq nor padding_idx (reverse mode only) touch the tangents; they were
    # divided by the counts and zeroed at the padding.
    ids = T(np.array([[0, 2, 0], [4, 2, 2]]), np.int64)
    weight = T(np.arange(15.0).reshape(5, 3) / 7)
    tangent = T(np.arange(15.0).reshape(5, 3) + 1)

    def lookup(w):
        return F.embedding(ids, w, padding_idx=2, scale_grad_by_freq=True)

    _, out_tangent = func.jvp(lookup, (weight,), (tangent,))
    np.testing.assert_array_equal(out_tangent.numpy(), tangent.numpy()[ids.numpy()])
    # PyTorch's jacfwd and jacrev of the sum: each row's count; counts / counts, 0 at padding
    by_forward = func.jacfwd(lambda w: cr.sum(lookup(w)))(weight)
    np.testing.assert_array_equal(by_forward.numpy()[:, 0], [2.0, 0.0, 3.0, 0.0, 1.0])
    by_reverse = func.jacrev(lambda w: cr.sum(lookup(w)))(weight)
    np.testing.assert_array_equal(by_reverse.numpy()[:, 0], [1.0, 0.0, 0.0, 0.0, 1.0])
    bag = func.jacfwd(lambda w: F.embedding_bag(ids, w, mode="sum", scale_grad_by_freq=True))
    np.testing.assert_array_equal(bag(weight).numpy()[0, 0, :, 0], [2.0, 0.0, 1.0, 0.0, 0.0])


def test_embedding_hessians_scale_the_gradient_once_as_pytorch():
    # The scaled gradient's own backward divided by the counts again, so a Hessian by reverse
    # over reverse had them twice (diag(2, 1) for the squares); PyTorch's double backward
    # leaves them out: forward over reverse is the gradient's Jacobian, reverse over reverse
    # its transpose. Values: PyTorch 2.13, float64.
    ids = T(np.array([[0, 1, 1]]), np.int64)
    weight = T([[0.1], [0.2], [0.3]])

    def squares(w):
        return cr.sum(F.embedding(ids, w, scale_grad_by_freq=True) ** 2)

    def coupled(w):
        return cr.sum(cr.tanh(cr.sum(F.embedding(ids, w, scale_grad_by_freq=True), axis=1)))

    diagonal = np.diag([2.0, 2.0, 0.0])
    for hessian in (func.hessian(squares), lambda w: autograd.functional.hessian(squares, w)):
        np.testing.assert_allclose(hessian(weight).numpy().reshape(3, 3), diagonal)
    s = -0.7268619813835874  # d/du sech(u)^2 at u = 0.5
    jacobian = np.array([[s, 2 * s, 0.0], [s, 2 * s, 0.0], [0.0, 0.0, 0.0]])
    forward = func.hessian(coupled)(weight).numpy().reshape(3, 3)
    np.testing.assert_allclose(forward, jacobian, rtol=1e-12)
    reverse = autograd.functional.hessian(coupled, weight).numpy().reshape(3, 3)
    np.testing.assert_allclose(reverse, jacobian.T, rtol=1e-12)


def test_vmap_of_ctc_loss_with_each_samples_targets_and_lengths():
    # The labels' and lengths' range checks read the batched values as one number (vmap's
    # data-dependent control flow error); PyTorch's ctc_loss can't be vmapped at all.
    rng = np.random.default_rng(1)
    log_probs = F.log_softmax(T(rng.standard_normal((3, 5, 1, 4))), dim=-1)
    targets = T(np.array([[[1, 2]], [[3, 3]], [[2, 1]]]), np.int64)
    input_lengths = T(np.array([[5], [4], [3]]), np.int64)

    def loss(lp, target, n):
        return F.ctc_loss(lp, target, n, [2])

    loop = _stack([loss(log_probs[i], targets[i], input_lengths[i]) for i in range(3)])
    batched = func.vmap(loss)(log_probs, targets, input_lengths)
    np.testing.assert_allclose(batched.numpy(), loop, rtol=1e-12)
    grads = func.vmap(func.grad(loss))(log_probs, targets, input_lengths)
    each = _stack([func.grad(loss)(log_probs[i], targets[i], input_lengths[i]) for i in range(3)])
    np.testing.assert_allclose(grads.numpy(), each, rtol=1e-12, atol=1e-15)


def test_vmap_of_embedding_scaled_by_frequency_with_each_samples_indices():
    # Per-sample token ids (per-sample gradients of a model with such an embedding): the
    # counts' scatter-add took the batched indices as one array (vmap's data-dependent
    # control flow error). Each sample's rows are scaled by that sample's counts.
    weight = T(np.arange(15.0).reshape(5, 3) / 10)
    ids = T(np.array([[0, 2, 0], [4, 2, 2], [1, 1, 1]]), np.int64)

    def gradient(i):
        return func.grad(lambda w: cr.sum(cr.tanh(F.embedding(i, w, scale_grad_by_freq=True))))

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the counts' search per sample is a loop
        batched = func.vmap(lambda i: gradient(i)(weight))(ids)
    np.testing.assert_allclose(batched.numpy(), _stack([gradient(i)(weight) for i in ids]))
    # sample 2 looks row 1 up three times: its gradient is one lookup's
    np.testing.assert_allclose(batched.numpy()[2, 1], 1 - np.tanh(weight.numpy()[1]) ** 2)


def test_a_compiled_step_with_padding_idx_replays_and_forward_mode_keeps_the_derivative():
    # Reverse mode and compile take the composite (padding rows detached); forward mode the
    # Function whose tangent is the lookup's (tested above): both here, one model.
    weight = cr.asarray([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    ids = cr.asarray([0, 2, 0, 1])

    def step(w):
        w.grad = None
        loss = cr.sum(F.embedding(ids, w, padding_idx=0) ** 2)
        loss.backward()
        return loss.detach(), w.grad

    compiled = cr.compile(step)
    eager_w, compiled_w = weight.detach().requires_grad_(), weight.detach().requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no CompileWarning: it replays
        for _ in range(3):
            for got, want in zip(compiled(compiled_w), step(eager_w)):
                np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    np.testing.assert_array_equal(np.asarray(eager_w.grad), [[0, 0], [6, 8], [10, 12]])
    _, tangent = func.jvp(
        lambda w: F.embedding(ids, w, padding_idx=0), (weight,), (cr.ones_like(weight),)
    )
    np.testing.assert_array_equal(np.asarray(tangent), np.ones((4, 2)))


def test_a_transform_of_a_view_reshapes_it_from_its_own_values():
    # func.vjp's leaf for b[0] shared b[0]'s counter but was no member of its alias group:
    # where views are bookkeeping (JAX, Dask), a reshape of a view of it replayed its steps
    # from b's whole values ("cannot reshape array of size 64"). NumPy's layouts never ask.
    b = T(np.arange(64.0).reshape(2, 1, 2, 4, 4))
    x, fresh = b[0], T(np.arange(32.0).reshape(1, 2, 4, 4))
    out, vjp = func.vjp(lambda t: F.max_pool3d(t, 2), x)
    want, vjp_fresh = func.vjp(lambda t: F.max_pool3d(t, 2), fresh)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(want))
    np.testing.assert_array_equal(
        np.asarray(vjp(cr.ones_like(out))[0]), np.asarray(vjp_fresh(cr.ones_like(want))[0])
    )
    g = func.grad(lambda t: cr.sum(cr.reshape(cr.permute_dims(t, (0, 2, 1, 3)), (8, 4)) ** 2))
    np.testing.assert_array_equal(np.asarray(g(x)), 2 * np.arange(32.0).reshape(1, 2, 4, 4))
    # The same for a transform's output that is a view, and for a dual tensor's primal.
    out, _ = func.vjp(lambda t: t[0], b)
    np.testing.assert_array_equal(
        np.asarray(cr.reshape(cr.permute_dims(out, (0, 2, 1, 3)), (8, 4))),
        np.arange(32.0).reshape(1, 2, 4, 4).transpose(0, 2, 1, 3).reshape(8, 4),
    )
    with autograd.forward_ad.dual_level():
        primal = autograd.forward_ad.unpack_dual(
            autograd.forward_ad.make_dual(x, cr.ones_like(x))
        ).primal
        np.testing.assert_array_equal(
            np.asarray(cr.reshape(cr.permute_dims(primal[0], (1, 0, 2)), (16, 2))),
            np.arange(32.0).reshape(2, 4, 4).transpose(1, 0, 2).reshape(16, 2),
        )
