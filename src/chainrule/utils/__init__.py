"""Utilities on top of autograd: activation checkpointing."""

from . import checkpoint

__all__ = ["checkpoint"]
