"""PyTorch's `nn.utils.parametrize`: a module's parameter or buffer computed at each read by a
chain of modules from the tensors it is stored as (`register_parametrization`,
`remove_parametrizations`, `is_parametrized`, `cached`). The parametrizations themselves
(weight_norm, spectral_norm) are in parametrizations.py."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from ..._tensor import Tensor, no_grad
from ..containers import ModuleDict, ModuleList
from ..module import Module, Parameter, _is_parameter

__all__ = [
    "ParametrizationList",
    "cached",
    "is_parametrized",
    "register_parametrization",
    "remove_parametrizations",
    "type_before_parametrizations",
]


class _Cache:
    """This module's one piece of process-wide state: how many `cached()` blocks are open, and
    the parametrized tensors computed in them, by (id(module), tensor name)."""

    def __init__(self) -> None:
        self.depth = 0
        self.values: dict[tuple[int, str], Tensor] = {}


_CACHE = _Cache()


@contextlib.contextmanager
def cached() -> Iterator[None]:
    """Inside this block, a parametrized tensor is computed at its first read and the same
    tensor is returned at the next ones (a weight used at every step of a recurrent loop is
    parametrized once); the values are dropped when the outermost block ends."""
    _CACHE.depth += 1
    try:
        yield
    finally:
        _CACHE.depth -= 1
        if not _CACHE.depth:
            _CACHE.values.clear()


def _register(module: Module, name: str, tensor: Tensor) -> None:
    if _is_parameter(tensor):
        module.register_parameter(name, tensor)
    else:
        module.register_buffer(name, tensor)


def _set_values(original: Tensor, value: Tensor) -> None:
    """Make `original` hold `value`'s memory, keeping the tensor object (an optimizer given
    the parameter before keeps updating it), as PyTorch's set_."""
    if value is not original:
        original.data = value


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor (`module.parametrizations[name]`), applied in order,
    and the tensors they start from: `original`, or `original0`, `original1`... when the right
    inverse of the first one gives a sequence of tensors."""

    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = False) -> None:
        if len(modules) == 0:
            raise ValueError("ParametrizationList requires one or more modules.")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        # What to store: the original pulled back through each right_inverse, the last
        # parametrization's first; one that has none, or raises NotImplementedError, is taken
        # to be the identity here (on assignment it is an error: see right_inverse).
        with no_grad():
            new: Any = original
            for m in reversed(list(self)):
                inverse = getattr(m, "right_inverse", None)
                if inverse is not None:
                    with contextlib.suppress(NotImplementedError):
                        new = inverse(new)
        if isinstance(new, Tensor):
            if not unsafe and new.dtype != dtype:
                raise ValueError(
                    "When `right_inverse` outputs one tensor, it may not change the dtype.\n"
                    f"original.dtype: {dtype}\nright_inverse(original).dtype: {new.dtype}"
                )
            self.is_tensor = True
            self.ntensors = 1
            with no_grad():
                _set_values(original, new)
            _register(self, "original", original)
        elif isinstance(new, Sequence) and not isinstance(new, str):
            self.is_tensor = False
            self.ntensors = len(new)
            for i, value in enumerate(new):
                if not isinstance(value, Tensor):
                    raise ValueError(
                        "'right_inverse' must return a Tensor or a Sequence of tensors (list, "
                        f"tuple...). Got element {i} of the sequence with type "
                        f"{type(value).__name__}."
                    )
                if _is_parameter(original):
                    value = Parameter(value, original.requires_grad)
                else:
                    value.requires_grad_(original.requires_grad)
                _register(self, f"original{i}", value)
        else:
            raise ValueError(
                "'right_inverse' must return a Tensor or a Sequence of tensors (list, tuple...). "
                f"Got {type(new).__name__}"
            )
        if not unsafe:
            # forward(right_inverse(original)) must be a tensor like the original.
            z = self()
            if not isinstance(z, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(z).__name__}.")
            _check_like(z, shape, dtype, "unparametrized ", "parametrized ", "`unsafe` flag")

    def right_inverse(self, value: Tensor) -> None:
        """Store what the parametrizations' right inverses, last first, make of `value`: then
        the parametrized tensor reads as `value` (what `module.weight = value` does)."""
        with no_grad():
            for m in reversed(list(self)):
                inverse = getattr(m, "right_inverse", None)
                if inverse is None:
                    raise RuntimeError(
                        f"parametrization {type(m).__name__} does not implement right_inverse."
                    )
                value = inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(
                        f"`right_inverse` should return a tensor. Got {type(value).__name__}"
                    )
                if value.dtype != self.original.dtype:
                    raise ValueError(
                        f"The tensor returned by `right_inverse` has dtype {value.dtype} while "
                        f"`original` has dtype {self.original.dtype}"
                    )
                _set_values(self.original, value)
                return
            if not isinstance(value, Sequence):
                raise ValueError(
                    "'right_inverse' must return a sequence of tensors. "
                    f"Got {type(value).__name__}."
                )
            if len(value) != self.ntensors:
                raise ValueError(
                    "'right_inverse' must return a sequence of tensors of length "
                    f"{self.ntensors}. Got a sequence of length {len(value)}."
                )
            for i, tensor in enumerate(value):
                original = getattr(self, f"original{i}")
                if not isinstance(tensor, Tensor):
                    raise ValueError(
                        "`right_inverse` must return a sequence of tensors. "
                        f"Got element {i} of type {type(tensor).__name__}"
                    )
                if tensor.dtype != original.dtype:
                    raise ValueError(
                        f"Tensor {i} returned by `right_inverse` has dtype {tensor.dtype} "
                        f"while `original{i}` has dtype {original.dtype}"
                    )
                _set_values(original, tensor)

    def forward(self) -> Tensor:
        """The parametrized tensor: the first parametrization of the original tensor(s), then
        each next one of the previous one's result."""
        modules = list(self._modules.values())
        if self.is_tensor:
            x = modules[0](self.original)
        else:
            x = modules[0](*[getattr(self, f"original{i}") for i in range(self.ntensors)])
        for m in modules[1:]:
            x = m(x)
        return x


def _check_like(
    x: Tensor, shape: tuple, dtype: Any, before: str, after: str, flag: str = "the `unsafe` flag"
) -> None:
    """Refuse a parametrized tensor whose dtype or shape is not the tensor's own."""
    if x.dtype != dtype:
        raise ValueError(
            f"Registering a parametrization may not change the dtype of the tensor, unless "
            f"{flag} is enabled.\n{before}dtype: {dtype}\n{after}dtype: {x.dtype}"
        )
    if x.shape != shape:
        raise ValueError(
            f"Registering a parametrization may not change the shape of the tensor, unless "
            f"{flag} is enabled.\n{before}shape: {shape}\n{after}shape: {x.shape}"
        )


def _tensor_property(name: str) -> property:
    """The class attribute that makes `module.<name>` the parametrized tensor (computed at
    each read, or once per `cached()` block) and `module.<name> = value` its right inverse."""

    def get(module: Module) -> Tensor:
        parametrization = module.parametrizations[name]
        if not _CACHE.depth:
            return parametrization()
        key = (id(module), name)
        out = _CACHE.values.get(key)
        if out is None:
            out = _CACHE.values[key] = parametrization()
        return out

    def set_(module: Module, value: Tensor) -> None:
        module.parametrizations[name].right_inverse(value)

    return property(get, set_)


def _parametrized_class(cls: type) -> type:
    """A subclass of `cls` of the module's own, which the properties of its parametrized
    tensors are set on: modules of `cls` itself don't see them, and pay nothing for them."""

    def __setattr__(self: Module, name: str, value: Any) -> None:
        # A parameter or module put where a parametrized tensor is: as PyTorch's (whose
        # register_parameter finds the attribute taken).
        if is_parametrized(self, name) and (_is_parameter(value) or isinstance(value, Module)):
            raise KeyError(f"attribute '{name}' already exists")
        cls.__setattr__(self, name, value)

    return type(
        f"Parametrized{cls.__name__}",
        (cls,),
        {"__setattr__": __setattr__, "__module__": cls.__module__, "__doc__": cls.__doc__},
    )


def register_parametrization(
    module: Module, tensor_name: str, parametrization: Module, *, unsafe: bool = False
) -> Module:
    """Make `module.<tensor_name>` (a parameter or buffer) read as
    `parametrization(original)`, the original being stored at
    `module.parametrizations.<tensor_name>.original` (the state dict key
    "parametrizations.<tensor_name>.original"). Registered again on the same tensor, the
    parametrizations apply in order, each to the previous one's result.

    With a `right_inverse(x)` method, the parametrization sets the stored value: at
    registration (to right_inverse(the tensor), so that the tensor keeps its value) and when
    a value is assigned (`module.weight = x`). When right_inverse returns a sequence of tensors
    they are stored as original0, original1... and given to forward as as many arguments.

    Unless `unsafe`, the parametrized tensor must keep the tensor's dtype and shape. The
    module's class becomes a subclass of its own, `Parametrized<Class>`. Returns the module.
    """
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            y = getattr(module, tensor_name)
            x = parametrization(y)
            if not isinstance(x, Tensor):
                raise ValueError(f"A parametrization must return a tensor. Got {type(x).__name__}.")
            before, after = f"module.{tensor_name}", f"parametrization(module.{tensor_name})"
            _check_like(x, y.shape, y.dtype, f"{before}.", f"{after}.")
            inverse = getattr(parametrization, "right_inverse", None)
            if inverse is not None:
                with contextlib.suppress(NotImplementedError):
                    z = inverse(y)
                    if not isinstance(z, Tensor):
                        raise ValueError(
                            "parametrization.right_inverse must return a tensor. Got: "
                            f"{type(z).__name__}"
                        )
                    _check_like(z, y.shape, y.dtype, f"{before}.", "right_inverse(...).")
        parametrizations = module.parametrizations[tensor_name]
        parametrizations.append(parametrization)
        # An unsafe registration makes the whole chain unsafe.
        parametrizations.unsafe |= unsafe
        return module
    if tensor_name not in module._buffers and tensor_name not in module._parameters:
        raise ValueError(
            f"Module '{module}' does not have a parameter, a buffer, or a parametrized "
            f"element with name '{tensor_name}'"
        )
    original = getattr(module, tensor_name)
    parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
    delattr(module, tensor_name)
    if not is_parametrized(module):
        module.__class__ = _parametrized_class(module.__class__)
        module.parametrizations = ModuleDict()
    setattr(module.__class__, tensor_name, _tensor_property(tensor_name))
    module.parametrizations[tensor_name] = parametrizations
    return module


def is_parametrized(module: Module, tensor_name: str | None = None) -> bool:
    """Whether `module` has a parametrized tensor named `tensor_name` (any, with None)."""
    parametrizations = module._modules.get("parametrizations")
    if not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def type_before_parametrizations(module: Module) -> type:
    """The module's class before any parametrization was registered on it."""
    if is_parametrized(module):
        return module.__class__.__bases__[0]
    return type(module)


def remove_parametrizations(
    module: Module, tensor_name: str, leave_parametrized: bool = True
) -> Module:
    """Make `module.<tensor_name>` a plain parameter or buffer again: holding the
    parametrized value (`leave_parametrized`) or the stored original (possible only when it
    is one tensor). The tensor object stored as `original` stays the module's tensor. When
    no parametrized tensor is left, the module gets its class back. Returns the module."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if parametrizations.is_tensor:
        original = parametrizations.original
        if leave_parametrized:
            with no_grad():
                _set_values(original, getattr(module, tensor_name))
    elif leave_parametrized:
        with no_grad():
            t = getattr(module, tensor_name)
        if parametrizations.original0.requires_grad:
            original = Parameter(t, requires_grad=True)
        else:
            original = t
    else:
        raise ValueError(
            "Cannot leave unparametrized (`leave_parametrized=False`) a tensor that is "
            "parametrized in terms of a sequence of tensors."
        )
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    _register(module, tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module
