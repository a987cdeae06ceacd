"""Module and Parameter, with PyTorch's semantics: parameters and submodules registered by
attribute assignment, walked in registration order (a module's own parameters before its
submodules', a shared one once), state dicts of plain arrays, train/eval mode."""

from __future__ import annotations

import functools
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from .. import _namespace as ops
from .._mode import grad_mode
from .._tensor import Tensor, no_grad

__all__ = ["Module", "Parameter"]

# Parameters are plain tensors (the engine's fast paths check `x.__class__ is Tensor`), known
# by identity: id -> weak reference, dropped when the tensor goes.
_PARAMETERS: dict[int, weakref.ref[Tensor]] = {}


def _forget(key: int) -> Callable[[weakref.ref[Tensor]], None]:
    def forget(_ref: weakref.ref[Tensor]) -> None:
        if _PARAMETERS.get(key) is _ref:
            del _PARAMETERS[key]

    return forget


def _is_parameter(obj: object) -> bool:
    if obj.__class__ is not Tensor:
        return False
    ref = _PARAMETERS.get(id(obj))
    return ref is not None and ref() is obj


class _ParameterMeta(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return _is_parameter(obj)


class Parameter(metaclass=_ParameterMeta):
    """`Parameter(data, requires_grad=True)`: a new leaf tensor holding a copy of `data`,
    which a Module registers when it is assigned as an attribute. It is a plain Tensor:
    `isinstance(p, Parameter)` is true for tensors made this way."""

    def __new__(cls, data: Any = None, requires_grad: bool = True) -> Tensor:  # type: ignore[misc]
        t = ops.tensor(ops.zeros((0,)) if data is None else data, requires_grad=requires_grad)
        key = id(t)
        _PARAMETERS[key] = weakref.ref(t, _forget(key))
        return t


class _IncompatibleKeys(NamedTuple):
    missing_keys: list[str]
    unexpected_keys: list[str]


def _values_for(value: Any, p: Tensor) -> Tensor:
    """`value` (a tensor, an array of any library, Python data) as a tensor of p's library
    and dtype, cut from any graph."""
    t = ops.asarray(value).detach()
    if t._xp is not p._xp:
        t = ops.asarray(p._xp.asarray(ops.np.asarray(t.numpy())))
    return t if t.dtype == p.dtype else ops.astype(t, p.dtype)


class _Training:
    """Module.training, an attribute kept in the module's __dict__. chainrule.compile's trace
    guards on its value where the traced code reads it: a replay never runs a module in the
    mode it was traced in after train() or eval() changed it."""

    def __get__(self, obj: Module | None, objtype: Any = None) -> Any:
        if obj is None:
            return self
        try:
            value = obj.__dict__["training"]
        except KeyError:
            raise AttributeError(
                f"'{type(obj).__name__}' object has no attribute 'training' (Module.__init__() "
                "was not called)"
            ) from None
        if grad_mode.extended and grad_mode.tracer is not None:
            grad_mode.tracer.guard(
                (id(obj), "training"), functools.partial(_training_is, weakref.ref(obj), value)
            )
        return value

    def __set__(self, obj: Module, value: bool) -> None:
        obj.__dict__["training"] = value


def _training_is(ref: weakref.ref, value: bool, leaves: Any) -> bool:
    m = ref()
    return m is not None and m.__dict__.get("training") is value


class Module:
    """Base class of layers and models: assign Parameters and Modules as attributes in
    `__init__` (after `super().__init__()`), write `forward`, call the module."""

    training = _Training()

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "training", True)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation of the module; subclasses define it."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # -- registration

    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        if params is None:
            raise AttributeError("cannot assign attributes before Module.__init__() call")
        modules = self._modules
        if _is_parameter(value):
            self.__dict__.pop(name, None)
            modules.pop(name, None)
            params[name] = value
        elif isinstance(value, Module):
            self.__dict__.pop(name, None)
            params.pop(name, None)
            modules[name] = value
        elif name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(nn.Parameter or None expected)"
                )
            params[name] = None
        elif name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(nn.Module or None expected)"
                )
            modules[name] = None
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for registry in ("_parameters", "_modules"):
            entries = d.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Tensor | None) -> None:
        """Register `param` (a Parameter, or None) under `name`."""
        if param is not None and not _is_parameter(param):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(nn.Parameter or None required)"
            )
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Register `module` (or None) as the submodule `name`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._modules[name] = module

    # -- walking

    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """(name, module) for this module and every submodule, depth first in registration
        order, each module once."""
        seen: set[int] = set()
        stack: list[tuple[str, Module]] = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield name, module
            children = [
                (f"{name}.{n}" if name else n, m)
                for n, m in module._modules.items()
                if m is not None
            ]
            stack.extend(reversed(children))

    def modules(self) -> Iterator[Module]:
        """This module and every submodule, each once."""
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, module) for the direct submodules, each once."""
        seen: set[int] = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self) -> Iterator[Module]:
        """The direct submodules, each once."""
        for _, m in self.named_children():
            yield m

    def named_parameters(
        self, prefix: str = "", recurse: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """(name, parameter): each module's own parameters before its submodules', a
        parameter shared by several modules once (under its first name)."""
        seen: set[int] = set()
        walk = self.named_modules(prefix) if recurse else iter([(prefix, self)])
        for module_name, module in walk:
            for name, p in module._parameters.items():
                if p is None or id(p) in seen:
                    continue
                seen.add(id(p))
                yield (f"{module_name}.{name}" if module_name else name), p

    def parameters(self, recurse: bool = True) -> Iterator[Tensor]:
        """The parameters, in the order of `named_parameters`."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    # -- modes and gradients

    def train(self, mode: bool = True) -> Module:
        """Set training mode (dropout active) on this module and its submodules; returns it."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode (`train(False)`); returns the module."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set requires_grad on every parameter; returns the module."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of the parameters: to None, or to zeros written in place."""
        zero_grads(self.parameters(), set_to_none)

    # -- state

    def state_dict(self) -> OrderedDict[str, Any]:
        """name -> a copy of the parameter's values, as an array of its library (NumPy by
        default); a shared parameter appears under each of its names, as in PyTorch."""
        out: OrderedDict[str, Any] = OrderedDict()
        for module_name, module in self.named_modules():
            for name, p in module._parameters.items():
                if p is not None:
                    key = f"{module_name}.{name}" if module_name else name
                    out[key] = p._xp.asarray(p._data, copy=True)
        return out

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True
    ) -> _IncompatibleKeys:
        """Copy the values of `state_dict` (arrays of any library, or tensors) into the
        parameters, keeping the parameter objects. With `strict`, a missing or unexpected key
        raises RuntimeError; a shape that differs always does. Returns (missing_keys,
        unexpected_keys)."""
        own: dict[str, Tensor] = {}
        for module_name, module in self.named_modules():
            for name, p in module._parameters.items():
                if p is not None:
                    own[f"{module_name}.{name}" if module_name else name] = p
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        if strict:
            if unexpected:
                keys = ", ".join(f'"{k}"' for k in unexpected)
                errors.append(f"Unexpected key(s) in state_dict: {keys}. ")
            if missing:
                keys = ", ".join(f'"{k}"' for k in missing)
                errors.append(f"Missing key(s) in state_dict: {keys}. ")
        updates = []
        for key, p in own.items():
            if key not in state_dict:
                continue
            value = _values_for(state_dict[key], p)
            if value.shape != p.shape:
                errors.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} "
                    f"from checkpoint, the shape in current model is {p.shape}."
                )
            else:
                updates.append((p, value))
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        with no_grad():
            for p, value in updates:
                p[...] = value
        return _IncompatibleKeys(missing, unexpected)

    # -- printing

    def extra_repr(self) -> str:
        """The module's own settings, shown in its repr."""
        return ""

    def __repr__(self) -> str:
        lines = []
        for name, m in self._modules.items():
            body = repr(m).replace("\n", "\n  ")
            lines.append(f"({name}): {body}")
        extra = self.extra_repr()
        if not lines:
            return f"{type(self).__name__}({extra})"
        head = [extra] if extra else []
        return f"{type(self).__name__}(\n  " + "\n  ".join(head + lines) + "\n)"


def zero_grads(params: Iterable[Tensor], set_to_none: bool) -> None:
    """Reset each parameter's gradient: to None, or to zeros written in place (a new zero
    tensor where the gradient has a history). Module.zero_grad and Optimizer.zero_grad."""
    for p in params:
        g = p.grad
        if g is None:
            continue
        if set_to_none:
            p.grad = None
        elif g.requires_grad:
            p.grad = ops.zeros_like(g)
        else:
            g[...] = 0
