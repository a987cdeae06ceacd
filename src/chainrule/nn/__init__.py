"""Neural networks on chainrule, with PyTorch's names and semantics: Module and Parameter,
layers with PyTorch's default initialisations, and `functional`."""

from . import functional, init, utils
from .containers import Identity, ModuleDict, ModuleList, ParameterDict, ParameterList
from .layers import (
    GELU,
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    LayerNorm,
    Linear,
    ReLU,
    Sequential,
    Sigmoid,
    Tanh,
)
from .loss import (
    BCELoss,
    BCEWithLogitsLoss,
    CrossEntropyLoss,
    HuberLoss,
    KLDivLoss,
    L1Loss,
    MSELoss,
    NLLLoss,
    SmoothL1Loss,
)
from .module import Module, Parameter

__all__ = [
    "functional",
    "init",
    "utils",
    "Module",
    "Parameter",
    "Linear",
    "Conv2d",
    "Sequential",
    "ReLU",
    "Tanh",
    "GELU",
    "Sigmoid",
    "Dropout",
    "LayerNorm",
    "Embedding",
    "Flatten",
    "Identity",
    "ModuleList",
    "ModuleDict",
    "ParameterList",
    "ParameterDict",
    "L1Loss",
    "MSELoss",
    "SmoothL1Loss",
    "HuberLoss",
    "BCELoss",
    "BCEWithLogitsLoss",
    "NLLLoss",
    "CrossEntropyLoss",
    "KLDivLoss",
]
