"""THE table of derivative rules: every primitive as a forward on raw arrays, its VJP and its
JVP.

Each rule is written once against a namespace `xp`: the engine calls it with the backend's
namespace and raw arrays for a first-order backward, and with chainrule's namespace and
tensors under create_graph, so every rule differentiates again, to any order. Forward mode
runs the JVPs the same way.
Every VJP has the one signature of `_node.Rule`: `(xp, g, saved, p, needs)`, every JVP
`(xp, ts, xs, outs, p)`. The declaration helpers below let one-input and two-input rules
write just the formula of each derivative: unary `(xp, g, x, out, p)`, binary
`(xp, g, x, y, out)`; `saves` names the values each reads ("x", "y", "out"). Most JVPs need
no formula of their own, and say which identity gives them (`jvp=`):
- "symmetric": the Jacobian is symmetric (elementwise functions: diagonal; softmax), so the
  VJP formula applied to the tangent is the JVP. The default of `elementwise` and `binary`
  (where the JVP is the sum of both inputs' terms).
- "linear": the primitive is linear in its inputs, so its JVP is itself, applied to the
  tangents (zeros for inputs without one, integer and boolean ones too).
- "bilinear": linear in each input (matmul, conv2d): op(tx, y) + op(x, ty).
- "reduction": every input element reaches one output element (max, prod, logsumexp): the
  VJP of ones gives each element's partial derivative; the JVP sums them times the tangent.
The others are written out: `(xp, t, x, out, p)` for unary rules, the full signature
otherwise.
Under vmap (jacrev, is_grads_batched) `g` may be a batched value while the saved ones are raw
arrays: a formula puts the value made from `g` on the left of an operator (`g * y`, not
`y * g`) and writes products as `xp.matmul`, since array-api-strict's operators raise on an
operand they don't know instead of deferring to it.

The table is one registry (`_declare`) filled by its families, each in a module of its own:
`_elementwise`, `_reductions`, `_products`, `_shape`, `_linalg`, `_nondiff`, `_fft`,
`_special`, `_activations`. Importing this package imports them all."""

from __future__ import annotations

from . import (  # noqa: F401 - each module registers its family of rules
    _activations,
    _elementwise,
    _fft,
    _linalg,
    _nondiff,
    _products,
    _reductions,
    _shape,
    _special,
)
from ._declare import EXTRAS, KERNELS, OPS, RAW_NAMESPACES, RULES, raw_namespace

__all__ = ["EXTRAS", "KERNELS", "OPS", "RAW_NAMESPACES", "RULES", "raw_namespace"]
