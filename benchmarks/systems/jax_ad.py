"""JAX on CPU: jax.value_and_grad of the Python function, eager or jitted.

Eager (``jit=False``) dispatches op by op, as the other define-by-run systems
do. Jitted (``jit=True``) is compiled ahead of time in ``build``, so the timed
steps exclude tracing and XLA compilation. float64 needs ``jax_enable_x64``.
"""

from types import SimpleNamespace

import jax
import jax.numpy as jnp

from systems import _functional

jax.config.update("jax_enable_x64", True)


def _backend(jit: bool) -> SimpleNamespace:
    return SimpleNamespace(
        ops=SimpleNamespace(
            sin=jnp.sin,
            exp=jnp.exp,
            tanh=jnp.tanh,
            relu=jax.nn.relu,
            log_softmax=lambda z: jax.nn.log_softmax(z, axis=-1),
            sum=jnp.sum,
            mean=jnp.mean,
        ),
        asarray=jnp.asarray,
        value_and_grad=jax.value_and_grad,
        grad=jax.grad,
        compile=(lambda f, *a: jax.jit(f).lower(*a).compile()) if jit else (lambda f, *a: f),
        block=jax.block_until_ready,
    )


def setup(one_thread: bool) -> dict:
    return {"version": jax.__version__, "backend": jax.default_backend()}


def build(work, data, jit: bool) -> dict:
    return _functional.build(work, data, _backend(jit))


def to_numpy(grads) -> list:
    return [jax.device_get(g) for g in grads]
