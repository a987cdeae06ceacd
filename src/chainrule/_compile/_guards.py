"""What a replay checks before it runs, beyond its arguments' kinds: that the tensors the
function read from outside are still where it finds them (paths from its closure, its
globals and its arguments, found once after tracing), and the Python values it branched on
(Module.training, an optimizer's layout), and which of those tensors share an alias group with
an argument. A failed guard makes the call trace again."""

from __future__ import annotations

import collections
import functools
import types
from collections.abc import Callable

from .. import _backend
from .._tensor import Tensor, alias_group

__all__ = ["alias_guard", "path_guard"]

# A path is a root and steps from it. Steps: (CELL, None) a cell's contents, (ITEM, key) an
# item of a dict, list or tuple, (ATTR, name) an entry of an object's __dict__.
CELL, ITEM, ATTR = range(3)

_MAX_VISITS = 20000  # objects looked at to find the paths, at most (a guard is best effort)
_MAX_ITEMS = 1000  # larger containers (data sets) are not searched
_OPAQUE = (
    str, bytes, int, float, complex, bool, type(None), type, types.ModuleType,
    types.FunctionType, types.BuiltinFunctionType, types.MethodType, types.CodeType,
)  # fmt: skip


def _code_names(code: types.CodeType) -> set[str]:
    """The global names that code and the functions defined in it read."""
    names: set[str] = set()
    stack = [code]
    while stack:
        c = stack.pop()
        names.update(c.co_names)
        stack.extend(k for k in c.co_consts if isinstance(k, types.CodeType))
    return names


def _roots(fn, leaves: list) -> list[tuple]:
    """(root, first steps, object) where the search starts: the function's closure cells, the
    globals it names, a bound method's object, a partial's arguments, a callable object
    itself, and the arguments that are neither tensors nor arrays (root ("arg", position))."""
    out: list[tuple] = []
    stack = [fn]
    while stack:
        f = stack.pop()
        if isinstance(f, types.MethodType):
            out.append((("obj", f.__self__), (), f.__self__))
            stack.append(f.__func__)
        elif isinstance(f, functools.partial):
            out.extend((("obj", a), (), a) for a in f.args if not _plain(a))
            stack.append(f.func)
        elif isinstance(f, types.FunctionType):
            for cell in f.__closure__ or ():
                out.append((("obj", cell), ((CELL, None),), None))
            g = f.__globals__
            for name in sorted(_code_names(f.__code__)):
                if name in g and (g[name].__class__ is Tensor or not _plain(g[name])):
                    out.append((("obj", g), ((ITEM, name),), None))
        elif not _plain(f):
            out.append((("obj", f), (), f))
    for i, x in enumerate(leaves):
        if not _plain(x):
            out.append((("arg", i), (), x))
    return out


# Containers searched as they are: no array (asking the array libraries costs a first look-up
# of array-api-compat, an import, when no array of it was met yet).
_CONTAINERS = frozenset((dict, list, tuple, types.CellType))


def _plain(x) -> bool:
    c = x.__class__
    if c in _CONTAINERS:
        return False
    return isinstance(x, _OPAQUE) or c is Tensor or _backend.is_array(x)


def _step(obj, kind: int, key):
    if kind == CELL:
        return obj.cell_contents
    if kind == ITEM:
        return obj[key]
    return obj.__dict__[key]


def find_paths(fn, leaves: list, wanted: dict[int, int]) -> dict[int, tuple]:
    """For each tensor in `wanted` (id -> a number), the first path found to it from the
    roots (breadth first): number -> (root, steps)."""
    found: dict[int, tuple] = {}
    seen: set[int] = set()
    queue: collections.deque = collections.deque()
    for root, steps, obj in _roots(fn, leaves):
        if obj is None:  # a cell or a global: its first step is the object
            try:
                obj = _step(root[1], *steps[0])
            except (LookupError, ValueError):
                continue
        queue.append((obj, root, steps))
    visits = 0
    while queue and len(found) < len(wanted) and visits < _MAX_VISITS:
        obj, root, steps = queue.popleft()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        visits += 1
        if obj.__class__ is Tensor:
            n = wanted.get(id(obj))
            if n is not None and n not in found:
                found[n] = (root, steps)
            continue
        if obj.__class__ not in _CONTAINERS and (
            isinstance(obj, _OPAQUE) or _backend.is_array(obj)
        ):
            continue
        if isinstance(obj, dict):
            if len(obj) > _MAX_ITEMS:
                continue
            items = [(ITEM, k, v) for k, v in obj.items()]
        elif obj.__class__ is list or obj.__class__ is tuple:
            if len(obj) > _MAX_ITEMS:
                continue
            items = [(ITEM, i, v) for i, v in enumerate(obj)]
        elif obj.__class__ is types.CellType:
            try:
                items = [(CELL, None, obj.cell_contents)]
            except ValueError:
                continue
        else:
            d = getattr(obj, "__dict__", None)
            if d.__class__ is not dict:
                continue
            items = [(ATTR, k, v) for k, v in d.items()]
        for kind, key, v in items:
            if id(v) not in seen:
                queue.append((v, root, (*steps, (kind, key))))
    return found


def path_guard(
    fn, leaves: list, refs: dict[int, Callable], args: tuple[int, ...] = ()
) -> Callable | None:
    """A guard that the tensors refs (number -> weak reference) name are still where `fn`
    finds them now (by identity), and that the tensor arguments at positions `args` that
    `fn` can also reach from outside (a global passed as an argument: the trace read it as
    the argument) are still those arguments there: `guard(leaves) -> bool`; None when no
    path is found."""
    wanted = {id(ref()): n for n, ref in refs.items() if ref() is not None}
    for i in args:  # numbered -1 - i
        wanted.setdefault(id(leaves[i]), -1 - i)
    paths = find_paths(fn, leaves, wanted)
    if not paths:
        return None
    names: dict = {}

    def name(obj) -> str:
        k = names.get(id(obj))
        if k is None:
            k = names[id(obj)] = f"K{len(names)}"
            scope[k] = obj
        return k

    scope: dict = {}
    tests = []
    for n, (root, steps) in sorted(paths.items()):
        expr = f"leaves[{root[1]}]" if root[0] == "arg" else name(root[1])
        for kind, key in steps:
            if kind == CELL:
                expr += ".cell_contents"
            else:
                k = repr(key) if key.__class__ in (str, int) else name(key)
                expr += f"[{k}]" if kind == ITEM else f".__dict__[{k}]"
        tests.append(f"{expr} is leaves[{-1 - n}]" if n < 0 else f"{expr} is {name(refs[n])}()")
    text = (
        "def guard(leaves):\n    try:\n        return " + " and ".join(tests) + "\n"
        "    except (LookupError, AttributeError, ValueError, TypeError):\n"
        "        return False\n"
    )
    exec(compile(text, "<chainrule.compile guard>", "exec"), scope)  # noqa: S102 - our own
    guard = scope["guard"]
    guard.source = text
    return guard


def alias_guard(leaves: list, aliasing: tuple | None, refs: dict[int, Callable]) -> Callable | None:
    """Where arrays are values (JAX's, Dask's: see compile's _aliasing), a guard that each
    argument in an alias group with another live tensor shares it with the same tensors from
    outside (refs: number -> weak reference) as at the trace: the call's kind says that an
    argument shares a group, not with which, and a replay follows only the groups it traced
    (a view of a tensor the function writes, traced as a view of another, would miss the
    write). `guard(leaves) -> bool`; None when no argument shares a group."""
    if aliasing is None:
        return None
    positions = [i for i, (_, first) in enumerate(aliasing) if first >= 0]
    if not positions:
        return None

    def sharing(leaves: list) -> list:
        groups = [alias_group(leaves[i]) for i in positions]
        members = [(n, alias_group(t)) for n, t in ((n, ref()) for n, ref in refs.items())]
        return [frozenset(n for n, h in members if h is g and g is not None) for g in groups]

    traced = sharing(leaves)

    def guard(leaves: list) -> bool:
        return sharing(leaves) == traced

    return guard
