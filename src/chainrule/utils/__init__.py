"""Utilities on top of autograd: activation checkpointing; `tree`, pytrees (nested containers
of tensors) as the function transforms take them; `data`, datasets and batch loading."""

from . import checkpoint, data, tree

__all__ = ["checkpoint", "data", "tree"]
