"""PyTorch's `nn.utils`: gradient clipping and parameter vectors (clip_grad.py),
parametrizations (parametrize.py, and weight_norm and spectral_norm in parametrizations.py),
the older weight_norm and spectral_norm run by forward pre-hooks (norm_hooks.py), and
PackedSequence with the functions that pack and pad sequences (rnn.py)."""

from . import parametrizations, parametrize, rnn
from .clip_grad import (
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
    parameters_to_vector,
    vector_to_parameters,
)
from .norm_hooks import remove_spectral_norm, remove_weight_norm, spectral_norm, weight_norm

__all__ = [
    "clip_grad_norm_",
    "clip_grad_value_",
    "clip_grads_with_norm_",
    "get_total_norm",
    "parameters_to_vector",
    "parametrizations",
    "parametrize",
    "remove_spectral_norm",
    "remove_weight_norm",
    "rnn",
    "spectral_norm",
    "vector_to_parameters",
    "weight_norm",
]
