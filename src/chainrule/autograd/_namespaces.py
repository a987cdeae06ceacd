"""The namespace that derivative formulas run with when a backward is recorded
(`create_graph`, forward mode on tensors): chainrule's own functions, with the rule table's
extras as recorded primitives. The raw namespaces (first order, on arrays) are `_rules`'."""

from __future__ import annotations

import types

from .. import _backend, _namespace, _rules, fft, linalg
from .._tensor import Tensor

__all__ = ["GRAPH_NAMESPACE"]


def _graph_namespace() -> types.ModuleType:
    ns = types.ModuleType("chainrule.rules[chainrule]")
    ns.__dict__.update({k: getattr(_namespace, k) for k in _namespace.__all__})
    ns.linalg = linalg
    ns.fft = fft
    for extra in _rules.EXTRAS:
        ns.__dict__[extra] = _rules.OPS[extra]
    ns.__dict__.update(_rules.KERNELS)
    ns.outside = lambda g, key: Tensor(_backend.outside(g._xp, g.shape, key), g._xp, None)
    ns.written_last = lambda g, key, taken: Tensor(
        _backend.written_last(g._xp, g.shape, key, taken), g._xp, None
    )
    ns.primitive = lambda name, a, b=None: _rules.OPS[name](a, b)
    return ns


# Built once at import: every rule is registered by then (the rule table fills at its own
# import). A VJP that is handed this namespace knows that it runs on tensors.
GRAPH_NAMESPACE = _graph_namespace()
