"""chainrule.save and chainrule.load: tensors, arrays, state dicts and optimizer states (nested
dicts, lists and tuples of them and of Python scalars and strings) in a file that runs no code
when loaded: an .npz archive of plain arrays (read without pickle) and a JSON description of
the structure. Other objects need an explicit opt-in on both sides (pickle)."""

from __future__ import annotations

import json
import os
import pickle
from collections import OrderedDict
from typing import IO, Any

from . import _backend
from ._backend import DType
from ._tensor import Tensor

__all__ = ["load", "save"]

_FORMAT = "chainrule-save-1"
# The array libraries a file may name: the backends chainrule knows (a file can't make
# load import anything else).
_LIBRARIES = {module for module, _ in _backend.BACKENDS.values()}
np = _backend.np

_UNSAFE = (
    "it holds a pickled object, and unpickling runs whatever code the file's author put in it. "
    "Load it only if you trust its source, with chainrule.load(f, weights_only=False)"
)


class _Writer:
    def __init__(self) -> None:
        self.arrays: dict[str, Any] = {}

    def array(self, a: Any) -> str:
        key = f"a{len(self.arrays)}"
        self.arrays[key] = np.asarray(_backend.to_numpy(a))
        return key

    def encode(self, root: Any) -> Any:
        """The JSON tree of `root`, written without recursion (deep structures are fine)."""
        out: list = [None]
        stack: list[tuple[Any, list, int]] = [(root, out, 0)]
        while stack:
            obj, parent, slot = stack.pop()
            node = self._leaf(obj)
            if node is None:
                if isinstance(obj, (dict, OrderedDict)):
                    kind = "odict" if isinstance(obj, OrderedDict) else "dict"
                    items: list = [[None, None] for _ in obj]
                    node = [kind, items]
                    for pair, (k, v) in zip(items, obj.items()):
                        stack.append((k, pair, 0))
                        stack.append((v, pair, 1))
                elif isinstance(obj, (list, tuple)):
                    items = [None] * len(obj)
                    node = ["tuple" if isinstance(obj, tuple) else "list", items]
                    for i, v in enumerate(obj):
                        stack.append((v, items, i))
                else:
                    raise TypeError(
                        f"chainrule.save: can't store a {type(obj).__name__} in the safe format "
                        "(tensors, arrays, dtypes, numbers, strings, None, and dicts, lists and "
                        "tuples of them); save(obj, f, allow_pickle=True) pickles it, and such a "
                        "file then loads only with weights_only=False"
                    )
            parent[slot] = node
        return out[0]

    def _leaf(self, obj: Any) -> Any:
        if obj is None or isinstance(obj, (bool, str)):
            return ["v", obj]
        if isinstance(obj, int):
            return ["v", int(obj)]
        if isinstance(obj, float):
            return ["float", repr(float(obj))]
        if isinstance(obj, complex):
            return ["complex", repr(obj.real), repr(obj.imag)]
        if isinstance(obj, DType):
            return ["dtype", obj.name]
        if isinstance(obj, Tensor):
            if obj.grad_fn is not None:
                obj = obj.detach()
            library = _backend.name_of(obj._xp)
            return ["tensor", self.array(obj._data), bool(obj.requires_grad), library]
        if isinstance(obj, np.generic):
            return ["scalar", self.array(np.asarray(obj))]
        if _backend.is_array(obj):
            return ["array", self.array(obj), _backend.name_of(_backend.namespace(obj))]
        return None


def save(obj: Any, f: str | os.PathLike[str] | IO[bytes], *, allow_pickle: bool = False) -> None:
    """Write `obj` (a tensor, a state dict, an optimizer's state dict, or dicts, lists and
    tuples of tensors, arrays, numbers and strings) to the path or binary file `f`. Tensors
    keep their values, dtype, library and requires_grad (not their graph, .grad or the
    sharing of storage between tensors). `allow_pickle` stores other objects by pickling the
    whole of `obj` instead: such a file loads only with `load(f, weights_only=False)`."""
    writer = _Writer()
    try:
        header = {"format": _FORMAT, "root": writer.encode(obj)}
    except TypeError:
        if not allow_pickle:
            raise
        writer.arrays = {"pickle": np.frombuffer(pickle.dumps(obj), dtype=np.uint8)}
        header = {"format": _FORMAT, "pickled": True}
    text = json.dumps(header)
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as file:
            np.savez(file, __chainrule__=np.asarray(text), **writer.arrays)
    else:
        np.savez(f, __chainrule__=np.asarray(text), **writer.arrays)


def _library(name: str) -> Any:
    if name not in _LIBRARIES:
        raise ValueError(f"chainrule.load: the file names an unknown array library {name!r}")
    return _backend.namespace_named(name)


def _decode(root: Any, arrays: Any) -> Any:
    """The object of a JSON tree from save, built without recursion."""
    out: list = [None]
    stack: list[tuple[Any, Any, Any]] = [(root, out, 0)]
    pending: list[tuple[list, Any, Any, str]] = []  # containers to finish, deepest last
    while stack:
        node, parent, slot = stack.pop()
        kind = node[0]
        if kind == "v":
            value = node[1]
        elif kind == "float":
            value = float(node[1])
        elif kind == "complex":
            value = complex(float(node[1]), float(node[2]))
        elif kind == "dtype":
            value = _backend.dtype_named(node[1])
        elif kind == "scalar":
            value = arrays[node[1]][()]
        elif kind in ("tensor", "array"):
            data = arrays[node[1]]
            library = node[3] if kind == "tensor" else node[2]
            xp = _library(library)
            raw = data if xp is np else xp.asarray(data)
            if kind == "array":
                value = raw
            else:
                value = Tensor(_backend.normalize(raw, xp), xp, None)
                if node[2]:
                    value.requires_grad_(True)
        elif kind in ("list", "tuple", "dict", "odict"):
            items = node[1]
            holder: list = (
                [None] * len(items) if kind in ("list", "tuple") else [[None, None] for _ in items]
            )
            pending.append((holder, parent, slot, kind))
            for i, item in enumerate(items):
                if kind in ("list", "tuple"):
                    stack.append((item, holder, i))
                else:
                    stack.append((item[0], holder[i], 0))
                    stack.append((item[1], holder[i], 1))
            continue
        else:
            raise ValueError(f"chainrule.load: unknown entry {kind!r} in the file")
        parent[slot] = value
    for holder, parent, slot, kind in reversed(pending):
        if kind == "list":
            parent[slot] = holder
        elif kind == "tuple":
            parent[slot] = tuple(holder)
        else:
            pairs = [(k, v) for k, v in holder]
            parent[slot] = OrderedDict(pairs) if kind == "odict" else dict(pairs)
    return out[0]


def load(f: str | os.PathLike[str] | IO[bytes], *, weights_only: bool = True) -> Any:
    """Read what `save` wrote. Nothing in the file runs: arrays are read without pickle and
    the structure is JSON. A file saved with allow_pickle (or any pickle) is refused unless
    `weights_only=False` is given, because unpickling runs code the file chooses."""
    try:
        archive = np.load(f, allow_pickle=False)
    except (ValueError, OSError) as e:
        if not weights_only:
            return _unpickle(f)
        raise pickle.UnpicklingError(
            f"chainrule.load: not a file chainrule.save wrote ({e}). If it is a pickle, "
            f"weights_only=False would load it, but {_UNSAFE}"
        ) from e
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise pickle.UnpicklingError("chainrule.load: not a file chainrule.save wrote")
    with archive:
        if "__chainrule__" not in archive.files:
            raise pickle.UnpicklingError("chainrule.load: not a file chainrule.save wrote")
        header = json.loads(str(archive["__chainrule__"]))
        if header.get("format") != _FORMAT:
            raise pickle.UnpicklingError(f"chainrule.load: unknown format {header.get('format')}")
        if header.get("pickled"):
            if weights_only:
                raise pickle.UnpicklingError(f"chainrule.load refuses this file: {_UNSAFE}")
            return pickle.loads(archive["pickle"].tobytes())
        return _decode(header["root"], archive)


def _unpickle(f: str | os.PathLike[str] | IO[bytes]) -> Any:
    """A plain pickle file (weights_only=False only: this runs the file's code)."""
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            return pickle.load(file)
    f.seek(0)
    return pickle.load(f)
