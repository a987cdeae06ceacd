"""PyTorch's names of the backward nodes (`grad_fn.name()`) of the primitives that PyTorch has
too: a name, or a function of the node where PyTorch's name depends on the call (`x.sum()` is
SumBackward0, `x.sum(1)` SumBackward1). `_rules` gives each rule its name from here; a rule
not listed keeps chainrule's own (`<Name>Backward`, without PyTorch's digit). A node that
doesn't hold its call (a compiled function's) gets the first overload's name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["TORCH_NAMES"]

_BASIC = (int, slice, type(None), type(Ellipsis))


def _getitem(node: Any) -> str:
    """PyTorch indexes with the parts of a key in turn (an array part last, by `index`):
    the node is named after the last part that did something."""
    if node.params is None:
        return "SelectBackward0"
    key = node.params[0]
    if any(not isinstance(k, _BASIC) for k in key):
        return "IndexBackward0"
    active = [k for k in key if k is not Ellipsis and k != slice(None)]
    if not active:
        return "AliasBackward0"
    last = active[-1]
    if last is None:
        return "UnsqueezeBackward0"
    return "SliceBackward0" if isinstance(last, slice) else "SelectBackward0"


def _reduction(everything: str, some: str) -> Callable[[Any], str]:
    """A reduction over all dimensions (without keepdims) is one overload of PyTorch's, one
    over some dimensions another (`x.max()` MaxBackward1, `x.amax(1)` AmaxBackward0)."""

    def name(node: Any) -> str:
        if node.params is None:
            return everything
        axes, keepdims, shape = node.params[:3]
        return everything if len(axes) == len(shape) and not keepdims else some

    return name


def _by_operands(x_only: str, both: str, y_only: str) -> Callable[[Any], str]:
    """A binary op whose PyTorch overload depends on which operand is a tensor that needs
    grad (x ** 2 PowBackward0, x ** y PowBackward1, 2 ** x PowBackward2). A tensor that
    needs no grad counts as a scalar here, where PyTorch would name the tensor overload."""

    def name(node: Any) -> str:
        if len(node.edges) != 2:
            return x_only
        ex, ey = node.edges
        if ey is None:
            return x_only
        return both if ex is not None else y_only

    return name


TORCH_NAMES: dict[str, str | Callable[[Any], str]] = {
    # elementwise, one input
    "abs": "AbsBackward0",
    "acos": "AcosBackward0",
    "acosh": "AcoshBackward0",
    "angle": "AngleBackward0",
    "asin": "AsinBackward0",
    "asinh": "AsinhBackward0",
    "atan": "AtanBackward0",
    "atanh": "AtanhBackward0",
    "ceil": "CeilBackward0",
    "cos": "CosBackward0",
    "cosh": "CoshBackward0",
    "elu": "EluBackward0",
    # erf from elementwise operations (nn.functional.gelu's exact form): an erf node
    "erf_series": "ErfBackward0",
    "exp": "ExpBackward0",
    "expm1": "Expm1Backward0",
    "floor": "FloorBackward0",
    "bernoulli": "BernoulliBackward0",
    "imag": "ImagBackward0",
    "log": "LogBackward0",
    "log10": "Log10Backward0",
    "log1p": "Log1PBackward0",
    "log2": "Log2Backward0",
    "log_sigmoid": "LogSigmoidBackward0",
    "negative": "NegBackward0",
    "real": "RealBackward0",
    "reciprocal": "ReciprocalBackward0",
    "relu": "ReluBackward0",
    "round": "RoundBackward0",
    "sigmoid": "SigmoidBackward0",
    "sign": "SignBackward0",
    "sin": "SinBackward0",
    "sinh": "SinhBackward0",
    "softplus": "SoftplusBackward0",
    "sqrt": "SqrtBackward0",
    "square": "PowBackward0",
    "tan": "TanBackward0",
    "tanh": "TanhBackward0",
    "trunc": "TruncBackward0",
    # elementwise, two inputs
    "add": "AddBackward0",
    "atan2": "Atan2Backward0",
    "copysign": "CopysignBackward0",
    "divide": "DivBackward0",
    "hypot": "HypotBackward0",
    "logaddexp": "LogaddexpBackward0",
    "maximum": "MaximumBackward0",
    "minimum": "MinimumBackward0",
    "multiply": "MulBackward0",
    "nextafter": "NextafterBackward0",
    "pow": _by_operands("PowBackward0", "PowBackward1", "PowBackward2"),
    "remainder": _by_operands("RemainderBackward0", "RemainderBackward1", "RemainderBackward1"),
    "subtract": "SubBackward0",
    "where": "WhereBackward0",
    "xlog1py": "SpecialXlog1PyBackward0",
    "xlogy": "XlogyBackward0",
    # reductions and scans
    "cumulative_prod": "CumprodBackward0",
    "cumulative_sum": "CumsumBackward0",
    "log_softmax": "LogSoftmaxBackward0",
    "logsumexp": "LogsumexpBackward0",
    "max": _reduction("MaxBackward1", "AmaxBackward0"),
    "mean": _reduction("MeanBackward0", "MeanBackward1"),
    "min": _reduction("MinBackward1", "AminBackward0"),
    "prod": _reduction("ProdBackward0", "ProdBackward1"),
    "softmax": "SoftmaxBackward0",
    "sum": _reduction("SumBackward0", "SumBackward1"),
    # shapes, copies, indexing
    "astype": "ToCopyBackward0",
    "broadcast_to": "ExpandBackward0",
    "concat": "CatBackward0",
    "copy": "CloneBackward0",
    "flip": "FlipBackward0",
    "getitem": _getitem,
    "permute_dims": "PermuteBackward0",
    "reshape": "ViewBackward0",
    "roll": "RollBackward0",
    "setitem": "CopySlices",
    "stack": "StackBackward0",
    "take": "IndexSelectBackward0",
    "take_along_axis": "GatherBackward0",
    "tile": "RepeatBackward0",
    "unstack": "UnbindBackward0",
    # products and linear algebra (matmul: PyTorch names the op by the operands' ranks, from
    # the ops it decomposes into; chainrule names them all after the matrix product)
    "conv2d": "ConvolutionBackward0",
    "matmul": "MmBackward0",
    "linalg_cholesky": "LinalgCholeskyExBackward0",
    "linalg_det": "LinalgDetBackward0",
    "linalg_diagonal": "DiagonalBackward0",
    "linalg_diagonal_embed": "DiagEmbedBackward0",
    "linalg_eig": "LinalgEigBackward0",
    "linalg_eigh": "LinalgEighBackward0",
    "linalg_eigvalsh": "LinalgEighBackward0",
    "linalg_inv": "LinalgInvExBackward0",
    "linalg_matrix_exp": "LinalgMatrixExpBackward0",
    "linalg_pinv": "LinalgPinvBackward0",
    "linalg_qr": "LinalgQrBackward0",
    "linalg_slogdet": "LinalgSlogdetBackward0",
    "linalg_solve": "LinalgSolveExBackward0",
    "linalg_solve_triangular": "LinalgSolveTriangularBackward0",
    "linalg_svd": "LinalgSvdBackward0",
    "linalg_svdvals": "LinalgSvdBackward0",
}
