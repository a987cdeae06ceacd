"""Module and Parameter, with PyTorch's semantics: parameters, buffers and submodules registered
by attribute assignment, walked in registration order (a module's own parameters before its
submodules', a shared one once), state dicts of plain arrays, train/eval mode, `to`."""

from __future__ import annotations

import copy
import functools
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from .. import _backend
from .. import _namespace as ops
from .._mode import grad_mode
from .._tensor import Tensor, no_grad
from ..autograd.function import Function, FunctionCtx

__all__ = ["HookHandle", "Module", "Parameter"]

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


def _post_order(modules: list[tuple[str, Module]]) -> list[Module]:
    """The modules of `modules` (named_modules' order: each before its submodules) with each
    after its submodules, siblings in their order (PyTorch runs load_state_dict post-hooks
    so)."""
    out = []
    stack: list[tuple[str, Module]] = []
    for name, m in modules:
        while stack and not (stack[-1][0] == "" or name.startswith(stack[-1][0] + ".")):
            out.append(stack.pop()[1])
        stack.append((name, m))
    out += [m for _, m in reversed(stack)]
    return out


def _raise_load_errors(
    module: Module, errors: list[str], strict: bool, missing: list[str], unexpected: list[str]
) -> None:
    """load_state_dict's RuntimeError, if there are errors or, with strict, missing or
    unexpected keys."""
    if strict:  # (first, missing before unexpected, as PyTorch's message)
        keys = [("Missing", missing), ("Unexpected", unexpected)]
        errors = [
            f"{what} key(s) in state_dict: " + ", ".join(f'"{k}"' for k in names) + ". "
            for what, names in keys
            if names
        ] + errors
    if errors:
        raise RuntimeError(
            f"Error(s) in loading state_dict for {type(module).__name__}:\n\t" + "\n\t".join(errors)
        )


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
            tracer = grad_mode.tracer
            if id(obj) not in tracer.modes:  # (else the function set it: see __set__)
                check = functools.partial(_training_is, weakref.ref(obj), value)
                tracer.guard((id(obj), "training"), check)
        return value

    def __set__(self, obj: Module, value: bool) -> None:
        obj.__dict__["training"] = value
        if grad_mode.extended and grad_mode.tracer is not None:
            # Set by the traced function (train(), eval()): what it reads later is its own
            # doing, and each replay ends by setting it again (Tracer.set_mode).
            grad_mode.tracer.set_mode(obj, value)


def _training_is(ref: weakref.ref, value: bool, leaves: Any) -> bool:
    m = ref()
    return m is not None and m.__dict__.get("training") is value


# The Python values of a module's settings (p, eps, momentum, ...), as kept in its __dict__.
_SETTINGS = frozenset((int, float, bool, str, type(None)))


def _setting(v: Any) -> Any:
    """v as a setting a replay compares with the module's value then, or _setting itself where
    v is none: a plain value, or a tuple or list of them or of such tuples and lists (a
    kernel_size, a stride, an Upsample's size: pairs a forward reads as Python numbers). A
    list is copied: written in place, it differs from the copy."""
    c = v.__class__
    if c in _SETTINGS:
        return v
    if c is not tuple and c is not list:
        return _setting
    stack = [v]
    while stack:
        for item in stack.pop():
            if item.__class__ is tuple or item.__class__ is list:
                stack.append(item)
            elif item.__class__ not in _SETTINGS:
                return _setting
    return copy.deepcopy(v) if c is list else v


def _hooks_of(m: Module) -> tuple:
    if not (m._forward_pre_hooks or m._forward_hooks or m._backward_hooks or m._backward_pre_hooks):
        return ()
    return (
        tuple(m._forward_pre_hooks.values()),
        tuple(m._forward_hooks.values()),
        tuple(m._backward_hooks.values()),
        tuple(m._backward_pre_hooks.values()),
    )


def _guard_hooks(m: Module, tracer: Any) -> None:
    """chainrule.compile's trace runs a module's hooks in Python (each is baked into the
    recording, or makes the function eager) and its forward reads its settings (Dropout's p,
    BatchNorm's eps) as Python values: a replay checks that the module has the hooks, the
    settings and the submodules it was traced with (a hook registered or removed, a setting
    changed, a submodule added or replaced since traces again)."""
    # (Module.training is guarded where it is read: see _Training.)
    settings = [(k, _setting(v)) for k, v in m.__dict__.items() if k != "training"]
    settings = tuple([(k, v) for k, v in settings if v is not _setting])
    # Its submodules too: a container's forward loops over them (Sequential's layers, the
    # parametrizations of a tensor), so one appended after the trace must trace again.
    children = tuple(m._modules.values())
    check = functools.partial(_state_is, weakref.ref(m), _hooks_of(m), settings, children)
    tracer.guard((id(m), "hooks"), check)


def _state_is(
    ref: weakref.ref, hooks: tuple, settings: tuple, children: tuple, leaves: Any
) -> bool:
    m = ref()
    if m is None:
        return False
    d = m.__dict__
    for k, v in settings:
        now = d.get(k, _state_is)
        if now is not v and (now.__class__ is not v.__class__ or now != v):
            return False
    now_children = m._modules.values()
    if len(now_children) != len(children) or any(
        a is not b for a, b in zip(now_children, children)
    ):
        return False
    return _hooks_of(m) == hooks


class Module:
    """Base class of layers and models: assign Parameters and Modules as attributes in
    `__init__` (after `super().__init__()`), write `forward`, call the module."""

    training = _Training()
    # Buffers load_state_dict does without (see there).
    _optional_buffers: tuple[str, ...] = ()

    def __init__(self) -> None:
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent_buffers_set", set())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_forward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_forward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_hooks", OrderedDict())
        object.__setattr__(self, "_backward_pre_hooks", OrderedDict())
        object.__setattr__(self, "_load_state_dict_pre_hooks", OrderedDict())
        object.__setattr__(self, "_load_state_dict_post_hooks", OrderedDict())
        object.__setattr__(self, "training", True)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The computation of the module; subclasses define it."""
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if grad_mode.extended and grad_mode.tracer is not None:
            _guard_hooks(self, grad_mode.tracer)
        if (
            self._forward_pre_hooks
            or self._forward_hooks
            or self._backward_hooks
            or self._backward_pre_hooks
        ):
            return _call_with_hooks(self, args, kwargs)
        return self.forward(*args, **kwargs)

    # -- hooks

    def register_forward_pre_hook(self, hook: Callable[..., Any]) -> HookHandle:
        """Call `hook(module, args)` before each forward; a value it returns (a tuple, or one
        argument) replaces the positional arguments. Returns a handle with remove()."""
        return HookHandle(self._forward_pre_hooks, hook)

    def register_forward_hook(self, hook: Callable[..., Any]) -> HookHandle:
        """Call `hook(module, args, output)` after each forward; a value it returns replaces
        the output. Returns a handle with remove()."""
        return HookHandle(self._forward_hooks, hook)

    def register_full_backward_hook(self, hook: Callable[..., Any]) -> HookHandle:
        """Call `hook(module, grad_input, grad_output)` when the gradients of the module's
        tensor inputs have been computed (from this call only: not from other uses of the
        inputs); a tuple it returns replaces grad_input. grad_input has None for inputs that
        need no gradient. Returns a handle with remove()."""
        return HookHandle(self._backward_hooks, hook)

    def register_full_backward_pre_hook(
        self, hook: Callable[..., Any], prepend: bool = False
    ) -> HookHandle:
        """Call `hook(module, grad_output)` when the gradients of the module's outputs (from
        this call) have been computed, before those of its inputs; a tuple it returns
        replaces grad_output (the full backward hooks then see the new one). `prepend` runs
        it before the pre-hooks already registered. Returns a handle with remove()."""
        handle = HookHandle(self._backward_pre_hooks, hook)
        if prepend:
            self._backward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_load_state_dict_pre_hook(self, hook: Callable[..., Any]) -> HookHandle:
        """Call `hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)` in load_state_dict before this module's own tensors
        are loaded: state_dict is load_state_dict's copy, which the hook may change (rename
        the keys of an older layout); `prefix` is this module's (e.g. "layer1.");
        local_metadata is an empty dict; a message the hook appends to error_msgs makes
        load_state_dict raise. Returns a handle with remove()."""
        return HookHandle(self._load_state_dict_pre_hooks, hook)

    def register_load_state_dict_post_hook(self, hook: Callable[..., Any]) -> HookHandle:
        """Call `hook(module, incompatible_keys)` in load_state_dict once this module and its
        submodules are loaded, before strict's check: the hook may change the lists
        incompatible_keys.missing_keys and .unexpected_keys (removing a key it knows to be
        harmless). It must return None. Returns a handle with remove()."""
        return HookHandle(self._load_state_dict_post_hooks, hook)

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
        elif name in self._buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as buffer '{name}' "
                    "(Tensor or None expected)"
                )
            self._buffers[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = d.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
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

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Register `tensor` (state that is not a parameter: running statistics) under `name`:
        moved by `to`, in `state_dict` unless not `persistent`."""
        if "." in name or not name:
            raise KeyError(f'buffer name can\'t contain "." or be empty, got "{name}"')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{type(tensor).__name__}' object to buffer '{name}' "
                "(torch Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_module(self, name: str, module: Module | None) -> None:
        """add_module's other name, as PyTorch's."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at the dotted path `target` ("" is this module), as PyTorch's."""
        module = self
        for item in target.split(".") if target else []:
            child = module._modules.get(item)
            if child is None:
                raise AttributeError(f"{type(module).__name__} has no attribute `{item}`")
            module = child
        return module

    def get_parameter(self, target: str) -> Tensor:
        """The parameter at the dotted path `target` ("block.0.weight")."""
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if not hasattr(module, name):
            raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
        param = module._parameters.get(name)
        if param is None:
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at the dotted path `target` ("norm.running_mean")."""
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if not hasattr(module, name):
            raise AttributeError(f"{type(module).__name__} has no attribute `{name}`")
        buffer = module._buffers.get(name)
        if buffer is None:
            raise AttributeError(f"`{name}` is not a buffer")
        return buffer

    def add_module(self, name: str, module: Module | None) -> None:
        """Register `module` (or None) as the submodule `name`."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        self._modules[name] = module

    # -- walking

    def named_modules(
        self, memo: set[Module] | None = None, prefix: str = "", remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Module]]:
        """(name, module) for this module and every submodule, depth first in registration
        order, each module once (the modules in `memo` not at all; those yielded are added to
        it); with remove_duplicate=False, a module (and its submodules) at each place it is
        registered."""
        seen: set[Module] = set() if memo is None else memo
        stack: list[tuple[str, Module]] = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if remove_duplicate:
                if module in seen:
                    continue
                seen.add(module)
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
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """(name, parameter): each module's own parameters before its submodules', a
        parameter shared by several modules once (under its first name), or at each of its
        names with remove_duplicate=False."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Tensor]:
        """The parameters, in the order of `named_parameters`."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Tensor]]:
        """(name, buffer), in the order of `named_parameters`, each buffer once (or at each of
        its names with remove_duplicate=False)."""
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def _named_members(
        self, kind: str, prefix: str, recurse: bool, remove_duplicate: bool
    ) -> Iterator[tuple[str, Tensor]]:
        """(name, tensor) of the modules' `kind` dicts (_parameters or _buffers)."""
        seen: set[int] = set()
        walk = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else iter([(prefix, self)])
        )
        for module_name, module in walk:
            for name, t in getattr(module, kind).items():
                if t is None or (remove_duplicate and id(t) in seen):
                    continue
                seen.add(id(t))
                yield (f"{module_name}.{name}" if module_name else name), t

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers, in the order of `named_buffers`."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call `fn` on every submodule, then on this module (children before parents, as
        PyTorch: an initialisation that a parent overrides runs last); returns the module."""
        order: list[Module] = []
        stack: list[Module] = [self]
        seen: set[int] = set()
        while stack:  # a pre-order walk with the children's order reversed, read backwards
            module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            order.append(module)
            stack.extend(m for m in module._modules.values() if m is not None)
        for module in reversed(order):
            fn(module)
        return self

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

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move and/or cast the parameters and buffers (and the parameters' gradients) in
        place, keeping the tensor objects: `to(dtype)`, `to(device)`, `to(device, dtype)`,
        `to(tensor)`, or `dtype=`/`device=`. A dtype applies to floating tensors only, as in
        PyTorch. Returns the module."""
        dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
        kwargs.pop("non_blocking", None)
        if kwargs:
            raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                dtype, device = a.dtype, a.device
            elif _is_dtype(a):
                dtype = a
            else:
                device = a
        with no_grad():
            for t in (*self.parameters(), *self.buffers()):
                _move(t, dtype, device)
                if t.grad is not None:
                    _move(t.grad, dtype, device)
        return self

    def float(self) -> Module:
        """Cast the floating parameters and buffers to float32; returns the module."""
        return self.to(ops.float32)

    def double(self) -> Module:
        """Cast the floating parameters and buffers to float64; returns the module."""
        return self.to(ops.float64)

    # -- state

    def state_dict(
        self,
        *,
        destination: dict[str, Any] | None = None,
        prefix: str = "",
        keep_vars: bool = False,
    ) -> Any:
        """name -> a copy of the values of each parameter and persistent buffer (each module's
        parameters, then its buffers), as an array of its library (NumPy by default); a shared
        parameter appears under each of its names, as in PyTorch. PyTorch's options: the names
        start with `prefix`; `keep_vars` gives the tensors themselves; `destination` is the
        dict filled and returned."""
        out: Any = OrderedDict() if destination is None else destination
        for key, t in _state(self).items():
            out[prefix + key] = t if keep_vars else t._xp.asarray(t._data, copy=True)
        return out

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True
    ) -> _IncompatibleKeys:
        """Copy the values of `state_dict` (arrays of any library, or tensors) into the
        parameters and persistent buffers, keeping the tensor objects. With `strict`, a
        missing or unexpected key raises RuntimeError; a shape that differs always does, and
        then nothing is copied. Each module's load_state_dict pre-hooks run first (on a copy
        of `state_dict`, parent before children), its post-hooks once the values are copied
        (children first: PyTorch runs each module's pre-hooks just before its own tensors
        load, which is the same unless a hook reads another module's values), before
        strict's check, which puts the old values back when it fails. Returns
        (missing_keys, unexpected_keys)."""
        state_dict = OrderedDict(state_dict)
        modules = list(self.named_modules(remove_duplicate=False))
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        for name, m in modules:
            for hook in tuple(m._load_state_dict_pre_hooks.values()):
                prefix = f"{name}." if name else ""
                hook(m, state_dict, prefix, {}, strict, missing, unexpected, errors)
        own = _state(self)
        # Buffers a state dict may lack (a norm layer's num_batches_tracked, absent from
        # PyTorch's checkpoints made before it existed): they keep their values, as PyTorch's.
        optional = {
            f"{name}.{b}" if name else b for name, m in modules for b in m._optional_buffers
        }
        missing += [k for k in own if k not in state_dict and k not in optional]
        unexpected += [k for k in state_dict if k not in own]
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
        hooked = [m for m in _post_order(modules) if m._load_state_dict_post_hooks]
        if errors or not hooked:
            _raise_load_errors(self, errors, strict, missing, unexpected)
        # (With post-hooks, the values they may read are the new ones; kept to be put back.)
        before = [(p, p._xp.asarray(p._data, copy=True)) for p, _ in updates] if hooked else []
        with no_grad():
            for p, value in updates:
                p[...] = value
        incompatible = _IncompatibleKeys(missing, unexpected)
        try:
            for m in hooked:
                for hook in tuple(m._load_state_dict_post_hooks.values()):
                    if hook(m, incompatible) is not None:  # (PyTorch's type)
                        raise AssertionError(
                            "a load_state_dict post-hook returned a value: it must return "
                            "None, and change incompatible_keys in place"
                        )
            _raise_load_errors(self, errors, strict, missing, unexpected)
        except BaseException:
            with no_grad():
                for p, value in before:
                    p[...] = value
            raise
        return incompatible

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


def _state(module: Module) -> dict[str, Tensor]:
    """The tensors of a state dict by name: each module's parameters, then its persistent
    buffers; a module registered at several places is there under each of its names (as in
    PyTorch's state dicts)."""
    own: dict[str, Tensor] = {}
    for module_name, m in module.named_modules(remove_duplicate=False):
        prefix = f"{module_name}." if module_name else ""
        for name, p in m._parameters.items():
            if p is not None:
                own[prefix + name] = p
        for name, b in m._buffers.items():
            if b is not None and name not in m._non_persistent_buffers_set:
                own[prefix + name] = b
    return own


def _is_dtype(a: Any) -> bool:
    return isinstance(a, (_backend.DType, type, _backend.np.dtype))


def _move(t: Tensor, dtype: Any, device: Any) -> None:
    """Give t (in place: the same object) its values on `device` and, if floating, in
    `dtype`."""
    out = t.detach()
    if device is not None and device != t.device:
        out = out.to_device(device)
    if dtype is not None and t.dtype.kind in "fc" and out.dtype != dtype:
        out = ops.astype(out, dtype)
    if out._data is not t._data:
        t._data = out._data


class HookHandle:
    """What registering a module hook returns: `remove()` takes the hook away."""

    _next_id = 0

    def __init__(self, hooks: OrderedDict[int, Any], hook: Callable[..., Any]) -> None:
        HookHandle._next_id += 1
        self.id = HookHandle._next_id
        self._hooks = weakref.ref(hooks)
        hooks[self.id] = hook

    def remove(self) -> None:
        """Take the hook away (again: nothing)."""
        hooks = self._hooks()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self) -> HookHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class _BackwardHookState:
    """One hooked call's module and the gradients of its outputs, once they arrived."""

    def __init__(self, module: Module, n_inputs: int, n_tensors: int) -> None:
        self.module = module
        self.n_inputs = n_inputs  # the tensor inputs that need a gradient
        self.n_tensors = n_tensors  # all tensor inputs
        self.grad_output: tuple = ()

    def run(self, grad_input: tuple) -> tuple:
        for hook in list(self.module._backward_hooks.values()):
            result = hook(self.module, grad_input, self.grad_output)
            if result is not None:
                grad_input = tuple(result)
        return grad_input


class _HookInputs(Function):
    """Identity on a hooked call's tensor inputs: its backward gets their gradients from this
    call alone and runs the module's backward hooks on them."""

    @staticmethod
    def forward(ctx: FunctionCtx, state: _BackwardHookState, *xs: Tensor) -> tuple:
        ctx.state = state
        return tuple(x.detach() for x in xs)

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Tensor) -> tuple:
        needs = ctx.needs_input_grad[1:]
        grad_input = tuple(g if need else None for g, need in zip(grads, needs))
        return (None, *ctx.state.run(grad_input))


class _HookOutputs(Function):
    """Identity on a hooked call's tensor outputs: its backward runs the backward pre-hooks on
    their gradients and keeps what they give (and runs the backward hooks itself when no
    input needs a gradient)."""

    @staticmethod
    def forward(ctx: FunctionCtx, state: _BackwardHookState, *outs: Tensor) -> tuple:
        ctx.state = state
        return tuple(o.detach() for o in outs)

    @staticmethod
    def backward(ctx: FunctionCtx, *grads: Tensor) -> tuple:
        state = ctx.state
        for hook in list(state.module._backward_pre_hooks.values()):
            result = hook(state.module, grads)
            if result is not None:
                result = tuple(result)
                if len(result) != len(grads):
                    raise RuntimeError(
                        "Backward pre hook returned an invalid number of grad_output, got "
                        f"{len(result)}, but expected {len(grads)}"
                    )
                grads = result
        state.grad_output = grads
        if state.n_inputs == 0:
            state.run((None,) * state.n_tensors)
        return (None, *grads)


def _call_with_hooks(module: Module, args: tuple, kwargs: dict) -> Any:
    """Module.__call__ with hooks: forward pre-hooks, forward, forward hooks; for backward
    hooks the tensor inputs and outputs pass through identities that catch their gradients."""
    for hook in list(module._forward_pre_hooks.values()):
        result = hook(module, args)
        if result is not None:
            args = result if isinstance(result, tuple) else (result,)
    state = None
    if module._backward_hooks or module._backward_pre_hooks:
        places = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
        tensors = sum(isinstance(a, Tensor) for a in args)
        state = _BackwardHookState(module, len(places), tensors)
        # only full backward hooks need the inputs' gradients
        if places and module._backward_hooks:
            wrapped = _HookInputs.apply(state, *(args[i] for i in places))
            args = list(args)
            for i, t in zip(places, wrapped):
                args[i] = t
            args = tuple(args)
    output = module.forward(*args, **kwargs)
    for hook in list(module._forward_hooks.values()):
        result = hook(module, args, output)
        if result is not None:
            output = result
    if state is not None:
        single = isinstance(output, Tensor)
        outs = (output,) if single else output
        if isinstance(outs, tuple) and any(isinstance(o, Tensor) and o.requires_grad for o in outs):
            spots = [i for i, o in enumerate(outs) if isinstance(o, Tensor) and o.requires_grad]
            wrapped = _HookOutputs.apply(state, *(outs[i] for i in spots))
            outs = list(outs)
            for i, t in zip(spots, wrapped):
                outs[i] = t
            output = outs[0] if single else tuple(outs)
    return output
