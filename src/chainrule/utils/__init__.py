"""Utilities on top of autograd: activation checkpointing; `tree`, pytrees (nested containers
of tensors) as the function transforms take them."""

from . import checkpoint, tree

__all__ = ["checkpoint", "tree"]
