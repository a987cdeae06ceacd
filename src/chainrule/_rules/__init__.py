"""The table of derivative rules (being split into one module per family: for now whole in
`_linalg`, moved there so that its history follows the split)."""

from ._linalg import EXTRAS, KERNELS, OPS, RULES, _raw_namespaces, raw_namespace

__all__ = ["EXTRAS", "KERNELS", "OPS", "RULES", "_raw_namespaces", "raw_namespace"]
