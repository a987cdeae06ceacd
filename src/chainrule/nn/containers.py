"""Containers of modules and parameters with PyTorch's names: ModuleList, ModuleDict,
ParameterList, ParameterDict (registered under their positions or keys, so a model's
`parameters()` and `state_dict` see what they hold), and Identity."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from .._tensor import Tensor
from .module import Module, Parameter, _is_parameter

__all__ = ["Identity", "ModuleDict", "ModuleList", "ParameterDict", "ParameterList"]


class Identity(Module):
    """Returns its input; takes (and ignores) any constructor arguments, as PyTorch's."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, x: Any) -> Any:
        """x itself."""
        return x


def _index(i: int, n: int) -> int:
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of range")
    return i % n


class ModuleList(Module):
    """Modules in a list, registered as submodules "0", "1", ...: indexable, iterable,
    appendable. It has no forward: the owner decides how to call them."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, index: int | slice) -> Any:
        items = list(self._modules.values())
        if isinstance(index, slice):
            return ModuleList(items[index])
        return items[_index(index, len(items))]

    def __setitem__(self, index: int, module: Module) -> None:
        self.add_module(str(_index(index, len(self))), module)

    def __delitem__(self, index: int | slice) -> None:
        items = list(self._modules.values())
        del items[index]
        self._modules.clear()
        self.extend(items)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._modules.values()))

    def append(self, module: Module) -> ModuleList:
        """Add `module` at the end; returns the list."""
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Add each of `modules` at the end; returns the list."""
        for m in modules:
            self.append(m)
        return self

    def insert(self, index: int, module: Module) -> None:
        """Put `module` before position `index`."""
        items = list(self._modules.values())
        items.insert(index, module)
        self._modules.clear()
        self.extend(items)


class ModuleDict(Module):
    """Modules by name, in insertion order, registered as submodules under their keys."""

    def __init__(
        self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None
    ) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Any:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._modules))

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def keys(self) -> list[str]:
        """The names, in insertion order."""
        return list(self._modules)

    def values(self) -> list[Any]:
        """The modules, in insertion order."""
        return list(self._modules.values())

    def items(self) -> list[tuple[str, Any]]:
        """(name, module) pairs, in insertion order."""
        return list(self._modules.items())

    def pop(self, key: str) -> Any:
        """Remove the module `key` and return it."""
        return self._modules.pop(key)

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add (or replace) the modules of a mapping or of (name, module) pairs."""
        pairs = modules.items() if isinstance(modules, Mapping) else modules
        for key, m in pairs:
            self[key] = m


def _as_parameter(value: Any) -> Any:
    """A parameter as it is; another tensor as a new Parameter of its values, which requires
    grad (PyTorch wraps it so); anything else as it is."""
    if isinstance(value, Tensor) and not _is_parameter(value):
        return Parameter(value.detach())
    return value


class ParameterList(Module):
    """Parameters in a list, registered as "0", "1", ...; a plain tensor put in becomes a
    Parameter."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        if values is not None:
            self.extend(values)

    def __getitem__(self, index: int) -> Any:
        return self._parameters[str(_index(index, len(self)))]

    def __setitem__(self, index: int, value: Any) -> None:
        self.register_parameter(str(_index(index, len(self))), _as_parameter(value))

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[Any]:
        return iter(list(self._parameters.values()))

    def append(self, value: Any) -> ParameterList:
        """Add `value` at the end; returns the list."""
        self.register_parameter(str(len(self)), _as_parameter(value))
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Add each of `values` at the end; returns the list."""
        for v in values:
            self.append(v)
        return self


class ParameterDict(Module):
    """Parameters by name, in insertion order; a plain tensor put in becomes a Parameter."""

    def __init__(
        self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]] | None = None
    ) -> None:
        super().__init__()
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:
        return self._parameters[key]

    def __setitem__(self, key: str, value: Any) -> None:
        self.register_parameter(key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._parameters[key]

    def __len__(self) -> int:
        return len(self._parameters)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._parameters))

    def __contains__(self, key: object) -> bool:
        return key in self._parameters

    def keys(self) -> list[str]:
        """The names, in insertion order."""
        return list(self._parameters)

    def values(self) -> list[Any]:
        """The parameters, in insertion order."""
        return list(self._parameters.values())

    def items(self) -> list[tuple[str, Any]]:
        """(name, parameter) pairs, in insertion order."""
        return list(self._parameters.items())

    def pop(self, key: str) -> Any:
        """Remove the parameter `key` and return it."""
        return self._parameters.pop(key)

    def update(self, parameters: Mapping[str, Any] | Iterable[tuple[str, Any]]) -> None:
        """Add (or replace) the parameters of a mapping or of (name, value) pairs."""
        pairs = parameters.items() if isinstance(parameters, Mapping) else parameters
        for key, v in pairs:
            self[key] = v
