"""Array libraries underneath chainrule (being split into the modules of this package)."""

from ._indexing import *  # noqa: F403
