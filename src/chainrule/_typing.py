"""Type aliases of chainrule's public signatures, for annotations only (nothing at run time
reads them). See docs/typing.md."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeAlias

__all__ = ["ArrayLike", "Axis", "DTypeLike", "Device", "IndexKey", "Scalar", "Shape"]

Scalar: TypeAlias = bool | int | float | complex
# What a function takes as an array: a Tensor, an array of any Array API library, a Python
# scalar, or nested sequences of numbers. Arrays of other libraries share no type, nor even a
# protocol (PyTorch's tensors have no __array_namespace__: array-api-compat wraps them), so
# the alias is Any: annotations say which arguments are arrays, results are Tensor.
ArrayLike: TypeAlias = Any
# A dtype: chainrule's (chainrule.float64, ...), NumPy's (numpy.float64, numpy.dtype), or any
# backend's dtype object, matched by name; as for arrays, they share no type.
DTypeLike: TypeAlias = Any
# A device of the tensor's array library ("cpu" for NumPy).
Device: TypeAlias = Any
# An index: ints, slices, Ellipsis, None, integer or bool tensors and arrays, lists, and tuples
# of these.
IndexKey: TypeAlias = Any
Axis: TypeAlias = int | tuple[int, ...] | None
Shape: TypeAlias = int | Sequence[int]
