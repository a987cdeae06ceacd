"""Neural-network helpers built on chainrule's public API."""

from . import functional

__all__ = ["functional"]
