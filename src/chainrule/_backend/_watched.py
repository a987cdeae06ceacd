"""WatchedArray: a raw NumPy array argument as a function traced by chainrule.compile sees it,
a view that reports every use of its values outside chainrule (NumPy's ufuncs, functions and
methods, Python conversions, writes) to the tracer. `unwatched` gives chainrule's kernels the
argument itself: they never meet the subclass."""

from __future__ import annotations

import weakref
from collections.abc import Callable

import numpy as np

# NumPy functions that read an array's shape and dtype only (a kind of input fixes them).
_LAYOUT_FUNCTIONS = frozenset(
    (np.shape, np.ndim, np.size, np.result_type, np.iscomplexobj, np.isrealobj)
)


class WatchedArray(np.ndarray):
    """A view of a raw NumPy array argument while its function is traced, or one that NumPy
    made of such a view (a.T, a.copy(): the same class). `_argument`: the argument (None for
    the arrays NumPy made); `_report`: a weak reference to the tracer's method that is told
    of a use of the values (it abandons the trace while that trace runs; later, nothing).
    Every result it gives is a plain ndarray, computed as NumPy computes it."""

    _argument: np.ndarray | None = None
    _report: Callable | None = None

    def __array_finalize__(self, obj) -> None:
        self._report = getattr(obj, "_report", None)

    def _use(self, what: str) -> None:
        """Report a use of the values: `what` is said of the array (".item() on")."""
        report = self._report
        method = None if report is None else report()
        if method is not None:
            whose = (
                "a raw NumPy array argument" if self._argument is not None
                else "a copy or a view of a raw NumPy array argument, made by NumPy"
            )  # fmt: skip
            method(f"{what} {whose}")

    def __array_ufunc__(self, ufunc, method: str, *inputs, **kwargs):
        if _foreign(inputs) or _foreign(kwargs.get("out", ())):
            return NotImplemented  # a chainrule Tensor among them: its own dispatch records
        name = ufunc.__name__
        own = getattr(np, name, None) is ufunc
        self._use(f"numpy.{name} on" if own else f"the ufunc {name} on")
        out = kwargs.get("out")
        kwargs = {k: _plain_arg(v) for k, v in kwargs.items()}  # out=, where=
        result = getattr(ufunc, method)(*map(plain, inputs), **kwargs)
        if out is None or result is None:
            return result
        return out[0] if len(out) == 1 else out  # the arrays given (a += 1 keeps a)

    def __array_function__(self, func, types, args, kwargs):
        for t in types:
            if not issubclass(t, np.ndarray):
                return NotImplemented
        if func not in _LAYOUT_FUNCTIONS:
            self._use(f"{func.__module__}.{func.__name__} on")
        args = tuple(_plain_arg(v) for v in args)
        kwargs = {k: _plain_arg(v) for k, v in kwargs.items()}
        return super().__array_function__(func, types, args, kwargs)

    # Printing is a side effect of the trace, not a value of the replay.
    def __repr__(self) -> str:
        return repr(plain(self))

    def __str__(self) -> str:
        return str(plain(self))

    def __format__(self, spec: str) -> str:
        return format(plain(self), spec)

    def __getitem__(self, key):
        out = super().__getitem__(key)
        if not isinstance(out, np.ndarray):  # an element: a value in Python
            self._use("reading an element of")
        return out

    def __setitem__(self, key, value) -> None:
        self._use("a write into")
        plain(self)[key] = value

    def __iter__(self):
        self._use("iterating over")
        return iter(plain(self))

    def __reduce__(self):
        self._use("pickling")
        return plain(self).__reduce__()

    def __reduce_ex__(self, protocol):
        self._use("pickling")
        return plain(self).__reduce_ex__(protocol)

    @property
    def flat(self):
        self._use(".flat of")
        return plain(self).flat

    @property
    def data(self):
        self._use(".data of")
        return plain(self).data

    @property
    def ctypes(self):
        self._use(".ctypes of")
        return plain(self).ctypes


def _reading(name: str):
    """The ndarray method `name`, which reads the values or writes them, as one that reports
    that use first."""
    method = getattr(np.ndarray, name)

    def use(self, *args, **kwargs):
        self._use(f".{name}() on")
        return method(plain(self), *args, **kwargs)

    use.__name__ = use.__qualname__ = name
    use.__doc__ = method.__doc__
    return use


# Methods that give Python values, or arrays NumPy computes without a ufunc (which would not
# carry the subclass), or that write in place. (Those whose result is a WatchedArray, a copy
# or a view, report when it is used.)
_READING = (
    "__float__", "__int__", "__bool__", "__complex__", "__index__", "__array__", "item",
    "tolist", "tobytes", "tofile", "dump", "dumps", "argmax", "argmin", "nonzero",
    "searchsorted", "fill", "put", "sort", "partition", "resize", "setfield", "itemset",
)  # fmt: skip
for _name in _READING:
    if hasattr(np.ndarray, _name):
        setattr(WatchedArray, _name, _reading(_name))


def _foreign(items) -> bool:
    """Whether one of the operands overrides NumPy's ufuncs and is not an ndarray (a chainrule
    Tensor): it decides."""
    for x in items:
        if not isinstance(x, (np.ndarray, np.generic)) and hasattr(type(x), "__array_ufunc__"):
            return True
    return False


def plain(a):
    """`a` as a plain ndarray when it is a WatchedArray (a view of the same memory)."""
    return a.view(np.ndarray) if isinstance(a, WatchedArray) else a


def _plain_arg(v):
    if v.__class__ is list or v.__class__ is tuple:
        return v.__class__(map(plain, v))
    return plain(v)


def watched(a: np.ndarray, report: Callable) -> WatchedArray:
    """A WatchedArray view of argument `a` that tells the bound method `report` of each use
    of its values (as report(what))."""
    w = a.view(WatchedArray)
    w._argument = a
    w._report = weakref.WeakMethod(report)
    return w


def unwatched(a):
    """The array that chainrule computes with for a raw array `a` of a class other than
    ndarray: for a WatchedArray, the argument itself, or (for one NumPy made of it) a plain
    ndarray once the use is reported; any other array as it is."""
    if isinstance(a, WatchedArray):
        argument = a._argument
        if argument is not None:
            return argument
        a._use("chainrule's operations on")
        return a.view(np.ndarray)
    return a
