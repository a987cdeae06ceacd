"""Adapters that run each workload on one system.

Every adapter module exposes ``setup(one_thread) -> dict`` (imports the
library, pins its threads, returns version information),
``build(work, data, **options) -> {step name: callable}`` where each callable
runs one forward + backward pass and returns ``(aux, grads)``, and
``to_numpy(grads) -> list of ndarrays``.
"""

# name -> (adapter module, distribution that must be importable, build options)
SYSTEMS = {
    "numpy": ("limit", "numpy", {}),
    "chainrule": ("chainrule_ad", "chainrule", {}),
    "chainrule-torch": ("chainrule_ad", "torch", {"storage": "torch"}),
    "chainrule-cupy": ("chainrule_ad", "cupy", {"storage": "cupy"}),
    "chainrule-compiled": ("chainrule_compiled", "chainrule", {}),
    "torch": ("torch_ad", "torch", {}),
    "autograd": ("autograd_ad", "autograd", {}),
    "mygrad": ("mygrad_ad", "mygrad", {}),
    "jax": ("jax_ad", "jax", {"jit": False}),
    "jax-jit": ("jax_ad", "jax", {"jit": True}),
}
