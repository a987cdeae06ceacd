"""Layers with PyTorch's names, arguments and default initialisations, drawn from
chainrule.random's default generator (seed it with `chainrule.random.manual_seed`), in
chainrule's default floating dtype (float64) unless `dtype` says otherwise."""

from __future__ import annotations

import math
import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

from .. import _namespace as ops
from .. import random as _random
from .._tensor import Tensor, no_grad
from . import functional as F
from .module import Module, Parameter

__all__ = [
    "Linear",
    "Conv2d",
    "Sequential",
    "ReLU",
    "Tanh",
    "GELU",
    "SiLU",
    "Mish",
    "Softplus",
    "Softsign",
    "LeakyReLU",
    "ELU",
    "SELU",
    "Hardtanh",
    "ReLU6",
    "Hardsigmoid",
    "Hardswish",
    "Threshold",
    "CELU",
    "RReLU",
    "PReLU",
    "GLU",
    "LogSigmoid",
    "Hardshrink",
    "Softshrink",
    "Tanhshrink",
    "CosineSimilarity",
    "PairwiseDistance",
    "Sigmoid",
    "Softmax",
    "LogSoftmax",
    "Softmin",
    "Dropout",
    "LayerNorm",
    "Embedding",
    "Flatten",
    "Unflatten",
    "Bilinear",
    "BatchNorm1d",
    "BatchNorm2d",
    "Conv1d",
    "Conv3d",
    "MaxPool2d",
    "AvgPool2d",
    "AdaptiveAvgPool2d",
]


def _uniform_parameter(shape: tuple[int, ...], bound: float, dtype: Any) -> Tensor:
    return Parameter(_random.uniform(-bound, bound, shape, dtype=dtype))


def _weight_and_bias(
    layer: Module, shape: tuple[int, ...], fan_in: int, bias: bool, dtype: Any
) -> None:
    """PyTorch's default initialisation of a layer's `weight` (of `shape`) and `bias` (of
    shape[0], or None where `bias` is false): both uniform in +-1/sqrt(fan_in), drawn in that
    order."""
    bound = 1 / math.sqrt(fan_in) if fan_in else 0.0
    layer.weight = _uniform_parameter(shape, bound, dtype)
    if bias:
        layer.bias = _uniform_parameter(shape[:1], bound, dtype)
    else:
        layer.register_parameter("bias", None)


class Linear(Module):
    """y = x W^T + b, W of shape (out_features, in_features); W and b start uniform in
    +-1/sqrt(in_features), in `dtype`, on `device` (both positional too, as PyTorch's)."""

    def __init__(
        self,
        in_features: int,
        out_features: int,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        _weight_and_bias(self, (out_features, in_features), in_features, bias, dtype)
        if device is not None:
            self.to(device)

    def forward(self, x: Tensor) -> Tensor:
        """x W^T + b."""
        if not x.ndim or x.shape[-1] != self.in_features:
            raise ValueError(
                f"Linear({self.in_features}, {self.out_features}) got input of shape "
                f"{tuple(x.shape)}: its last axis must have {self.in_features} features"
            )
        return F.linear(x, self.weight, self.bias)

    # For type checkers, calling a layer has the signature of its forward (Module.__call__
    # takes and returns anything); at run time Module.__call__ calls forward.
    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """Sizes and whether there is a bias."""
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


class Bilinear(Module):
    """y = x1^T A x2 + b for each output feature (see functional.bilinear): weight
    (out_features, in1_features, in2_features) and bias (out_features,) start uniform in
    +-1/sqrt(in1_features), as PyTorch's."""

    def __init__(
        self,
        in1_features: int,
        in2_features: int,
        out_features: int,
        bias: bool = True,
        *,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        shape = (out_features, in1_features, in2_features)
        _weight_and_bias(self, shape, in1_features, bias, dtype)

    def forward(self, input1: Tensor, input2: Tensor) -> Tensor:
        """The bilinear form of input1 (*, in1) and input2 (*, in2): (*, out)."""
        return F.bilinear(input1, input2, self.weight, self.bias)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The sizes and whether there is a bias, as PyTorch prints them."""
        return (
            f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
            f"out_features={self.out_features}, bias={self.bias is not None}"
        )


class Conv2d(Module):
    """2-D convolution (cross-correlation) of NCHW input by a weight (out_channels,
    in_channels / groups, kh, kw), with stride, zero padding (ints, "valid" or "same"),
    dilation and groups (see functional.conv2d); weight and bias start uniform in
    +-1/sqrt(in_channels / groups kh kw)."""

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: int | Sequence[int] | str = 0,
        dilation: int | Sequence[int] = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        *,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        kernel = F._pair(kernel_size, "kernel_size")
        _check_conv_options(in_channels, out_channels, groups, padding, stride, padding_mode)
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel
        self.stride = F._pair(stride, "stride")
        self.padding = padding if isinstance(padding, str) else F._pair(padding, "padding")
        self.dilation = F._pair(dilation, "dilation")
        self.groups = groups
        self.padding_mode = padding_mode
        kh, kw = self.kernel_size
        shape = (out_channels, in_channels // groups, kh, kw)
        _weight_and_bias(self, shape, in_channels // groups * kh * kw, bias, dtype)

    def forward(self, x: Tensor) -> Tensor:
        """The convolution of x (N, C, H, W)."""
        return F.conv2d(
            x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """As PyTorch prints it (see _conv_repr)."""
        return _conv_repr(self)


def _check_conv_options(
    in_channels: int, out_channels: int, groups: int, padding, stride, padding_mode: str
) -> None:
    """PyTorch's checks of a convolution layer's options, with its wording."""
    if groups <= 0:
        raise ValueError("groups must be a positive integer")
    if in_channels % groups:
        raise ValueError("in_channels must be divisible by groups")
    if out_channels % groups:
        raise ValueError("out_channels must be divisible by groups")
    if isinstance(padding, str):
        if padding not in ("valid", "same"):
            raise ValueError(
                f"Invalid padding string {padding!r}, should be one of {{'valid', 'same'}}"
            )
        strides = (stride,) if isinstance(stride, int) else tuple(stride)
        if padding == "same" and any(s != 1 for s in strides):
            raise ValueError("padding='same' is not supported for strided convolutions")
    if padding_mode in ("reflect", "replicate", "circular"):
        raise NotImplementedError(
            f"padding_mode={padding_mode!r} is not implemented in chainrule; only 'zeros' is"
        )
    if padding_mode != "zeros":
        raise ValueError(
            "padding_mode must be one of {'zeros', 'replicate', 'reflect', 'circular'}, but "
            f"got padding_mode='{padding_mode}'"
        )


def _conv_repr(layer: Module) -> str:
    """A convolution layer's (transposed too) extra_repr, as PyTorch's: channels, kernel size
    and stride, then only the options set away from their defaults (padding, dilation,
    output_padding, groups, bias, padding_mode), a string padding shown unquoted."""
    n = len(layer.kernel_size)
    s = (
        f"{layer.in_channels}, {layer.out_channels}, kernel_size={layer.kernel_size}, "
        f"stride={layer.stride}"
    )
    if layer.padding != (0,) * n:
        s += f", padding={layer.padding}"
    if layer.dilation != (1,) * n:
        s += f", dilation={layer.dilation}"
    output_padding = getattr(layer, "output_padding", (0,) * n)
    if output_padding != (0,) * n:
        s += f", output_padding={output_padding}"
    if layer.groups != 1:
        s += f", groups={layer.groups}"
    if layer.bias is None:
        s += ", bias=False"
    if layer.padding_mode != "zeros":
        s += f", padding_mode={layer.padding_mode}"
    return s


class Sequential(Module):
    """Modules applied one after the other; indexable, iterable, named "0", "1", ... (or by
    the keys of one OrderedDict given, as PyTorch's)."""

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for name, m in modules[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(modules):
                self.add_module(str(i), m)

    def forward(self, x: Any) -> Any:
        """Each module applied to the previous one's output."""
        for m in self._modules.values():
            x = m(x)
        return x

    if TYPE_CHECKING:
        __call__ = forward

    def _key(self, index: int) -> str:
        """The name of the module at position `index` (negative: from the end)."""
        n = len(self._modules)
        index = operator.index(index)
        if not -n <= index < n:
            raise IndexError(f"index {index} is out of range")
        return list(self._modules)[index % n]

    def __getitem__(self, index: int | slice) -> Any:
        """The module at `index`; a slice gives a Sequential of those modules, their names
        kept."""
        if isinstance(index, slice):
            return type(self)(OrderedDict(list(self._modules.items())[index]))
        return self._modules[self._key(index)]

    def __setitem__(self, index: int, module: Module) -> None:
        setattr(self, self._key(index), module)

    def __delitem__(self, index: int | slice) -> None:
        """Remove the module(s) at `index`; the rest are numbered 0, 1, ... again, as PyTorch
        does (names given by an OrderedDict too)."""
        keys = list(self._modules)[index] if isinstance(index, slice) else [self._key(index)]
        for key in keys:
            del self._modules[key]
        rest = list(self._modules.values())
        self._modules.clear()
        for i, m in enumerate(rest):
            self._modules[str(i)] = m

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(list(self._modules.values()))

    def append(self, module: Module) -> Sequential:
        """Add `module` at the end; returns the Sequential."""
        self.add_module(str(len(self._modules)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> Sequential:
        """Append each of `modules`; returns the Sequential."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Put `module` at position `index` (-len to len), those after it moving up one
        number; returns the Sequential."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self._modules)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += n
        for i in range(n, index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module
        return self

    def pop(self, index: int | slice) -> Any:
        """Remove and return the module(s) at `index` (see __delitem__)."""
        out = self[index]
        del self[index]
        return out


class _Elementwise(Module):
    """A layer without parameters that applies its class's function `fn` to its input."""

    fn: staticmethod[[Tensor], Tensor]

    def forward(self, x: Tensor) -> Tensor:
        """fn(x), as the class's docstring says."""
        return self.fn(x)

    if TYPE_CHECKING:
        __call__ = forward


class ReLU(Module):
    """max(x, 0); with `inplace`, written into x (as F.relu)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        """max(x, 0), into x with inplace."""
        return F.relu(x, self.inplace)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """inplace=True where set, as PyTorch prints it."""
        return "inplace=True" if self.inplace else ""


class Tanh(_Elementwise):
    """tanh(x)."""

    fn = staticmethod(F.tanh)


class Sigmoid(_Elementwise):
    """1 / (1 + exp(-x))."""

    fn = staticmethod(F.sigmoid)


class _AlongDim(Module):
    """A layer without parameters that applies its class's function `fn` along axis `dim`
    (PyTorch's nn.Softmax family; PyTorch's implicit axis, with its warning, where dim is
    None)."""

    fn: staticmethod[..., Tensor]

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        """fn(x, dim), as the class's docstring says."""
        return self.fn(x, self.dim)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The axis, as PyTorch prints it."""
        return f"dim={self.dim}"


class Softmax(_AlongDim):
    """exp(x) / sum(exp(x)) along `dim`."""

    fn = staticmethod(F.softmax)


class LogSoftmax(_AlongDim):
    """log(softmax(x)) along `dim`."""

    fn = staticmethod(F.log_softmax)


class Softmin(_AlongDim):
    """softmax(-x) along `dim`."""

    fn = staticmethod(F.softmin)


class GELU(Module):
    """x Phi(x): exact (erf) by default, `approximate='tanh'` for the tanh form."""

    def __init__(self, approximate: Literal["none", "tanh"] = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        """x Phi(x)."""
        return F.gelu(x, approximate=self.approximate)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The approximation."""
        return f"approximate={self.approximate!r}"


class _Activation(Module):
    """A layer without parameters that applies its class's function `fn` to its input, with
    the keyword arguments named in `options` (stored as attributes, printed by repr)."""

    fn: staticmethod[..., Tensor]
    options: tuple[str, ...] = ()

    def forward(self, x: Tensor) -> Tensor:
        """fn(x, **options), as the class's docstring says."""
        return self.fn(x, **{name: getattr(self, name) for name in self.options})

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The options, as PyTorch prints them (inplace only where set)."""
        shown = [n for n in self.options if n != "inplace" or getattr(self, n)]
        return ", ".join(f"{n}={getattr(self, n)}" for n in shown)


class SiLU(_Activation):
    """x * sigmoid(x); with `inplace`, written into x."""

    fn = staticmethod(F.silu)
    options = ("inplace",)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Mish(_Activation):
    """x * tanh(softplus(x)); with `inplace`, written into x."""

    fn = staticmethod(F.mish)
    options = ("inplace",)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Softplus(_Activation):
    """log(1 + exp(beta x)) / beta, x itself where beta x > threshold."""

    fn = staticmethod(F.softplus)
    options = ("beta", "threshold")

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold


class Softsign(_Activation):
    """x / (1 + |x|)."""

    fn = staticmethod(F.softsign)


class LeakyReLU(_Activation):
    """x where x > 0, negative_slope * x elsewhere; with `inplace`, written into x."""

    fn = staticmethod(F.leaky_relu)
    options = ("negative_slope", "inplace")

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace


class ELU(_Activation):
    """x where x > 0, alpha * (exp(x) - 1) elsewhere; with `inplace`, written into x."""

    fn = staticmethod(F.elu)
    options = ("alpha", "inplace")

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace


class SELU(_Activation):
    """scale * elu(x, alpha), the self-normalising constants; with `inplace`, into x."""

    fn = staticmethod(F.selu)
    options = ("inplace",)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class ReLU6(_Activation):
    """min(max(x, 0), 6); with `inplace`, written into x."""

    fn = staticmethod(F.relu6)
    options = ("inplace",)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Hardsigmoid(_Activation):
    """x / 6 + 1 / 2 clipped to [0, 1]; with `inplace`, written into x."""

    fn = staticmethod(F.hardsigmoid)
    options = ("inplace",)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Hardswish(_Activation):
    """x * hardsigmoid(x); with `inplace`, written into x."""

    fn = staticmethod(F.hardswish)
    options = ("inplace",)

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Threshold(_Activation):
    """x where x > threshold, `value` elsewhere; with `inplace`, written into x."""

    fn = staticmethod(F.threshold)
    options = ("threshold", "value", "inplace")

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace


class Hardtanh(_Activation):
    """x clipped to [min_val, max_val]; with `inplace`, written into x."""

    fn = staticmethod(F.hardtanh)
    options = ("min_val", "max_val", "inplace")

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        if min_val > max_val:
            raise ValueError("min_val cannot be greater than max_val")
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace


class CELU(_Activation):
    """x where x > 0, alpha * (exp(x / alpha) - 1) elsewhere; with `inplace`, into x."""

    fn = staticmethod(F.celu)
    options = ("alpha", "inplace")

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace


class RReLU(Module):
    """x where x > 0, a * x elsewhere: in training a drawn for each element uniform in
    [lower, upper) (chainrule.random's default generator), in eval (lower + upper) / 2; with
    `inplace`, written into x."""

    def __init__(
        self, lower: float = 1.0 / 8.0, upper: float = 1.0 / 3.0, inplace: bool = False
    ) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        """rrelu(x), random slopes in training mode."""
        return F.rrelu(x, self.lower, self.upper, self.training, self.inplace)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The bounds (and inplace where set), as PyTorch prints them."""
        inplace = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace}"


class PReLU(Module):
    """x where x > 0, weight * x elsewhere, with a learnable `weight` of `num_parameters`
    slopes (1, or one per channel: axis 1 of the input), each `init` at first, in `dtype`,
    on `device`."""

    def __init__(
        self, num_parameters: int = 1, init: float = 0.25, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(ops.full((num_parameters,), init, dtype=dtype))
        if device is not None:
            self.to(device)

    def forward(self, x: Tensor) -> Tensor:
        """prelu(x, weight)."""
        return F.prelu(x, self.weight)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The number of slopes, as PyTorch prints it."""
        return f"num_parameters={self.num_parameters}"


class GLU(Module):
    """a * sigmoid(b), a and b the halves of the input along `dim`."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        """glu(x, dim)."""
        return F.glu(x, self.dim)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The axis, as PyTorch prints it."""
        return f"dim={self.dim}"


class LogSigmoid(_Activation):
    """log(sigmoid(x)), without overflow or cancellation."""

    fn = staticmethod(F.logsigmoid)


class _Shrink(_Activation):
    """hardshrink or softshrink with threshold `lambd`, printed as PyTorch prints it."""

    options = ("lambd",)

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def extra_repr(self) -> str:
        """The threshold alone."""
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """0 where -lambd <= x <= lambd, x elsewhere."""

    fn = staticmethod(F.hardshrink)


class Softshrink(_Shrink):
    """x - lambd above lambd, x + lambd below -lambd, 0 between."""

    fn = staticmethod(F.softshrink)


class Tanhshrink(_Activation):
    """x - tanh(x)."""

    fn = staticmethod(F.tanhshrink)


class CosineSimilarity(Module):
    """cosine_similarity(x1, x2, dim, eps): the cosine of the angle between x1 and x2 along
    `dim`."""

    def __init__(self, dim: int = 1, eps: float = 1e-8) -> None:
        super().__init__()
        self.dim = dim
        self.eps = eps

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """cosine_similarity(x1, x2) along dim."""
        return F.cosine_similarity(x1, x2, self.dim, self.eps)

    if TYPE_CHECKING:
        __call__ = forward


class PairwiseDistance(Module):
    """pairwise_distance(x1, x2, p, eps, keepdim): the p-norm of x1 - x2 + eps along the
    last axis."""

    def __init__(self, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False) -> None:
        super().__init__()
        self.norm = p
        self.eps = eps
        self.keepdim = keepdim

    def forward(self, x1: Tensor, x2: Tensor) -> Tensor:
        """pairwise_distance(x1, x2)."""
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)

    if TYPE_CHECKING:
        __call__ = forward


class Dropout(Module):
    """In training mode, zeroes each element with probability p and scales the rest by
    1 / (1 - p), a new mask per call (written into the input with `inplace`); in eval mode,
    the identity."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        """Dropout of x in training mode (written into x with inplace), x itself in eval
        mode."""
        return F.dropout(x, self.p, self.training, self.inplace)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The probability and inplace, as PyTorch prints them."""
        return f"p={self.p}, inplace={self.inplace}"


class Dropout1d(Dropout):
    """In training mode, zeroes each channel of (N, C, L) or (C, L) input, all of it, with
    probability p and scales the rest by 1 / (1 - p); in eval mode, the identity."""

    def forward(self, x: Tensor) -> Tensor:
        """Channel dropout of x in training mode, x itself in eval mode."""
        return F.dropout1d(x, self.p, self.training, self.inplace)


class Dropout2d(Dropout):
    """In training mode, zeroes each channel of (N, C, H, W) input, all of it, with
    probability p and scales the rest by 1 / (1 - p); in eval mode, the identity."""

    def forward(self, x: Tensor) -> Tensor:
        """Channel dropout of x in training mode, x itself in eval mode."""
        return F.dropout2d(x, self.p, self.training, self.inplace)


class Dropout3d(Dropout):
    """In training mode, zeroes each channel of (N, C, D, H, W) or (C, D, H, W) input, all
    of it, with probability p and scales the rest by 1 / (1 - p); in eval mode, the
    identity."""

    def forward(self, x: Tensor) -> Tensor:
        """Channel dropout of x in training mode, x itself in eval mode."""
        return F.dropout3d(x, self.p, self.training, self.inplace)


class LayerNorm(Module):
    """Normalisation over the trailing `normalized_shape` axes, then an elementwise affine
    map whose weight starts at ones and bias at zeros."""

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        *,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        shape = (
            (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        )
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ops.ones(shape, dtype=dtype))
            if bias:
                self.bias = Parameter(ops.zeros(shape, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)

    def forward(self, x: Tensor) -> Tensor:
        """x normalised over the trailing axes, scaled and shifted."""
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """Shape, eps and the affine map's parts, as PyTorch prints them."""
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}"
        )


class Embedding(Module):
    """A lookup table: integer indices of any shape -> rows of `weight` (num_embeddings,
    embedding_dim), which starts standard normal; the row `padding_idx` (if given; negative
    counts from the end) starts at zeros and gets no gradient; with `max_norm`, each call
    first scales the rows it looks up down to that norm_type norm, in place, as PyTorch's;
    with `scale_grad_by_freq`, each row's gradient is divided by its index's count in the
    call's indices."""

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Tensor | None = None,
        _freeze: bool = False,
        *,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if sparse:
            raise NotImplementedError(
                "Embedding: sparse=True (a sparse gradient) is not implemented"
            )
        if _weight is not None and tuple(_weight.shape) != (num_embeddings, embedding_dim):
            raise AssertionError("Shape of weight does not match num_embeddings and embedding_dim")
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is not None:  # PyTorch's way in for a given table (from_pretrained's)
            self.weight = Parameter(_weight, requires_grad=not _freeze)
            return
        self.weight = Parameter(_random.randn(num_embeddings, embedding_dim, dtype=dtype))
        if padding_idx is not None:
            with no_grad():
                self.weight[padding_idx] = 0.0
        if device is not None:
            self.to(device)

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """An Embedding whose table is a copy of the 2-D `embeddings` (its padding row kept as
        given), frozen (no gradient) unless `freeze` is False."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(
            rows, cols, padding_idx, max_norm, norm_type, scale_grad_by_freq, sparse,
            embeddings, freeze,
        )  # fmt: skip

    def forward(self, indices: Tensor) -> Tensor:
        """weight[indices], of shape indices.shape + (embedding_dim,) (see
        functional.embedding)."""
        return F.embedding(
            indices, self.weight, self.padding_idx, self.max_norm, self.norm_type,
            self.scale_grad_by_freq,
        )  # fmt: skip

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """Table size, and padding_idx, max_norm and norm_type where given."""
        out = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            out += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            out += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            out += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            out += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        return out


class Flatten(Module):
    """Axes start_dim..end_dim merged into one (by default all but the batch axis)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, x: Tensor) -> Tensor:
        """x with axes start_dim..end_dim merged."""
        n = x.ndim
        start, end = self.start_dim % max(n, 1), self.end_dim % max(n, 1)
        if start > end:
            raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
        shape = x.shape[:start] + (math.prod(x.shape[start : end + 1]),) + x.shape[end + 1 :]
        return ops.reshape(x, shape)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The axes merged."""
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Axis `dim` split into the axes `unflattened_size` (one of which may be -1), the
    inverse of Flatten."""

    def __init__(self, dim: int, unflattened_size: Sequence[int]) -> None:
        super().__init__()
        if not isinstance(unflattened_size, (tuple, list)):
            raise TypeError(
                "unflattened_size must be a tuple of ints, but found type "
                f"{type(unflattened_size).__name__}"
            )
        for position, size in enumerate(unflattened_size):
            if not isinstance(size, int):
                raise TypeError(
                    "unflattened_size must be tuple of ints, but found element of type "
                    f"{type(size).__name__} at pos {position}"
                )
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, x: Tensor) -> Tensor:
        """x with axis dim split."""
        dim = self.dim % x.ndim if x.ndim else self.dim
        sizes = list(self.unflattened_size)
        length = x.shape[dim]
        known = math.prod(n for n in sizes if n != -1)
        if sizes.count(-1) > 1:
            raise RuntimeError("only one dimension can be inferred")
        if -1 in sizes and known and length % known == 0:
            sizes[sizes.index(-1)] = length // known
        if math.prod(sizes) != length or min(sizes, default=0) < 0:
            raise RuntimeError(
                f"unflatten: Provided sizes {list(self.unflattened_size)} don't multiply up to "
                f"the size of dim {self.dim} ({length}) in the input tensor"
            )
        return ops.reshape(x, x.shape[:dim] + tuple(sizes) + x.shape[dim + 1 :])

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The axis and the sizes, as PyTorch prints them."""
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


def _norm_state(
    m: Module,
    num_features: int,
    eps: float,
    momentum: float | None,
    affine: bool,
    bias: bool,
    track_running_stats: bool,
    dtype: Any,
) -> None:
    """The options, parameters and buffers of a normalisation over channels (_BatchNorm's,
    normalization._InstanceNorm's): with `affine`, weight (ones) and, with `bias`, bias
    (zeros); with `track_running_stats`, running_mean (zeros), running_var (ones) and
    num_batches_tracked (kept in the state dict, as PyTorch's); None in their place else."""
    m.num_features = num_features
    m.eps = eps
    m.momentum = momentum
    m.affine = affine
    m.track_running_stats = track_running_stats
    shape = (num_features,)
    m.register_parameter("weight", Parameter(ops.ones(shape, dtype=dtype)) if affine else None)
    shift = Parameter(ops.zeros(shape, dtype=dtype)) if affine and bias else None
    m.register_parameter("bias", shift)
    track = track_running_stats
    m.register_buffer("running_mean", ops.zeros(shape, dtype=dtype) if track else None)
    m.register_buffer("running_var", ops.ones(shape, dtype=dtype) if track else None)
    m.register_buffer("num_batches_tracked", ops.asarray(0, dtype=ops.int64) if track else None)


class _BatchNorm(Module):
    """Batch normalisation over axis 1 (channels): weight starts at ones, bias at zeros;
    running_mean (zeros), running_var (ones) and num_batches_tracked are buffers, updated
    in training (by `momentum`, or as a cumulative average when momentum is None) and used
    in eval mode."""

    _dims: tuple[int, ...] = ()
    _optional_buffers = ("num_batches_tracked",)

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        *,
        bias: bool = True,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        _norm_state(self, num_features, eps, momentum, affine, bias, track_running_stats, dtype)

    def forward(self, x: Tensor) -> Tensor:
        """x normalised per channel: by the batch in training (or without running
        statistics), by the running statistics in eval mode."""
        if x.ndim not in self._dims:
            wanted = " or ".join(f"{d}D" for d in self._dims)
            raise ValueError(f"expected {wanted} input (got {x.ndim}D input)")
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                # A tensor, not a Python number: compile replays it from the counter.
                factor = 1.0 / ops.astype(self.num_batches_tracked, ops.float64)
        by_batch = self.training or self.running_mean is None
        return F.batch_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            by_batch,
            factor,
            self.eps,
        )

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """Features and settings."""
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of (N, C) or (N, C, L) input, per channel C."""

    _dims = (2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of (N, C, H, W) input, per channel C."""

    _dims = (4,)


class _ConvNd(Module):
    """A convolution layer over `_n` spatial axes by the class's function `_conv`: PyTorch's
    options, checked and stored as PyTorch stores them (tuples of `_n`), weight and bias
    uniform in +-1/sqrt(fan_in)."""

    _n: int

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: int | Sequence[int] | str = 0,
        dilation: int | Sequence[int] = 1,
        groups: int = 1,
        bias: bool = True,
        padding_mode: str = "zeros",
        *,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        _check_conv_options(in_channels, out_channels, groups, padding, stride, padding_mode)
        n, name = self._n, type(self).__name__
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = F._tuple(kernel_size, n, "kernel_size", name)
        self.stride = F._tuple(stride, n, "stride", name)
        self.padding = (
            padding if isinstance(padding, str) else F._tuple(padding, n, "padding", name)
        )
        self.dilation = F._tuple(dilation, n, "dilation", name)
        self.groups = groups
        self.padding_mode = padding_mode
        shape = (out_channels, in_channels // groups, *self.kernel_size)
        fan_in = in_channels // groups * math.prod(self.kernel_size)
        _weight_and_bias(self, shape, fan_in, bias, dtype)

    def forward(self, x: Tensor) -> Tensor:
        """The convolution of x (N, C, *spatial) or (C, *spatial)."""
        return type(self)._conv(
            x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups
        )

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """As PyTorch prints it (see _conv_repr)."""
        return _conv_repr(self)


class Conv1d(_ConvNd):
    """1-D convolution (cross-correlation) of (N, C, L) input by a weight (out_channels,
    in_channels / groups, k), with stride, zero padding (an int, "valid" or "same"),
    dilation and groups (see functional.conv1d); weight and bias start uniform in
    +-1/sqrt(in_channels / groups k)."""

    _n = 1
    _conv = staticmethod(F.conv1d)


class Conv3d(_ConvNd):
    """3-D convolution (cross-correlation) of (N, C, D, H, W) input by a weight
    (out_channels, in_channels / groups, kd, kh, kw), with stride, zero padding (ints,
    "valid" or "same"), dilation and groups (see functional.conv3d); weight and bias start
    uniform in +-1/sqrt(in_channels / groups kd kh kw)."""

    _n = 3
    _conv = staticmethod(F.conv3d)


class _Pool2d(Module):
    """Pooling of each kernel window by the class's function `pool`, with the keyword
    options `options` (PyTorch's names) after kernel_size, stride and padding; the repr
    shows those of them in `shown`, as PyTorch's."""

    pool: staticmethod[..., Tensor]
    options: tuple[str, ...]
    shown: tuple[str, ...]

    def __init__(
        self,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: int | Sequence[int] = 0,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = kernel_size if stride is None else stride
        self.padding = padding

    def extra_repr(self) -> str:
        """Kernel size, stride, padding and the options."""
        options = "".join(f", {name}={getattr(self, name)}" for name in self.shown)
        return (
            f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}{options}"
        )

    def forward(self, x: Tensor) -> Tensor:
        """The pooled x."""
        options = {name: getattr(self, name) for name in self.options}
        return self.pool(x, self.kernel_size, self.stride, self.padding, **options)

    if TYPE_CHECKING:
        __call__ = forward


class _MaxPool(_Pool2d):
    """The maximum of each kernel window by the class's `pool` (MaxPool1d, MaxPool2d,
    MaxPool3d): the options dilation and ceil_mode, shown in the repr, and return_indices
    (the maxima and their flat indices), not shown, as PyTorch's."""

    options = ("dilation", "ceil_mode", "return_indices")
    shown = ("dilation", "ceil_mode")

    def __init__(
        self,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: int | Sequence[int] = 0,
        dilation: int | Sequence[int] = 1,
        return_indices: bool = False,
        ceil_mode: bool = False,
    ) -> None:
        super().__init__(kernel_size, stride, padding)
        self.dilation = dilation
        self.ceil_mode = ceil_mode
        self.return_indices = return_indices


class MaxPool2d(_MaxPool):
    """The maximum of each kernel window (see functional.max_pool2d)."""

    pool = staticmethod(F.max_pool2d)


class _AvgPool(_Pool2d):
    """The mean of each kernel window by the class's `pool` (AvgPool2d, AvgPool3d), with
    PyTorch's options, none of them in the repr."""

    options = ("ceil_mode", "count_include_pad", "divisor_override")
    shown = ()

    def __init__(
        self,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: int | Sequence[int] = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
        divisor_override: int | None = None,
    ) -> None:
        super().__init__(kernel_size, stride, padding)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override


class AvgPool2d(_AvgPool):
    """The mean of each kernel window (see functional.avg_pool2d)."""

    pool = staticmethod(F.avg_pool2d)


class AdaptiveAvgPool2d(Module):
    """The means of an `output_size` grid of bins (see functional.adaptive_avg_pool2d)."""

    def __init__(self, output_size: int | Sequence[int | None]) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        """The pooled x."""
        return F.adaptive_avg_pool2d(x, self.output_size)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The output size."""
        return f"output_size={self.output_size}"
