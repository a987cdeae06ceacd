"""chainrule: define-by-run reverse-mode automatic differentiation over any Python Array API
library. The package is itself an Array API namespace whose functions record gradients."""

# _methods completes Tensor; _einops defines the backend einops finds (if installed).
from . import (  # noqa: F401
    _einops,
    _methods,
    autograd,
    distributions,
    fft,
    func,
    linalg,
    nn,
    optim,
    optimize,
    random,
    special,
    utils,
)
from ._backend import DType
from ._compile import CompiledFunction, CompileWarning, ConcretizationError, compile
from ._mode import inference_mode, is_inference_mode_enabled
from ._namespace import *  # noqa: F403
from ._namespace import __all__ as _NAMESPACE
from ._namespace import __array_namespace_info__  # noqa: F401 - public
from ._tensor import Tensor, enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from ._torch_functions import *  # noqa: F403
from ._torch_functions import __all__ as _TORCH_FUNCTIONS
from .serialization import load, save

# PyTorch's other names of the same dtypes (`torch.double` is float64, `torch.long` int64).
double, half, long, short = float64, float16, int64, int16  # noqa: F405
float, int = float32, int32  # noqa: A001, F405
cfloat, cdouble = complex64, complex128  # noqa: F405

__version__ = "0.1.0"
__array_api_version__ = "2025.12"

__all__ = [
    *_NAMESPACE,
    *_TORCH_FUNCTIONS,
    "Tensor", "DType", "autograd", "distributions", "fft", "func", "linalg", "nn", "optim",
    "optimize", "random", "special", "utils",
    "double", "half", "long", "short", "float", "int", "cfloat", "cdouble",
    "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
    "inference_mode", "is_inference_mode_enabled",
    "compile", "CompiledFunction", "CompileWarning", "ConcretizationError", "save", "load",
]  # fmt: skip
