"""functional_call: call an nn.Module with some of its parameters replaced by given tensors,
for the duration of the call (as torch.func.functional_call), so that transforms can
differentiate a module by a dict of parameters; stack_module_state stacks the parameters of
several like modules, for vmap over an ensemble."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import _namespace
from .._tensor import Tensor
from ..nn.module import Module

__all__ = ["functional_call", "stack_module_state"]


def _owner(module: Module, name: str) -> tuple[Module, str]:
    """The submodule holding dotted name `name`, and the last part of the name."""
    *path, last = name.split(".")
    for part in path:
        sub = module._modules.get(part)
        if sub is None:
            raise AttributeError(f"{type(module).__name__} has no submodule {part!r} ({name!r})")
        module = sub
    return module, last


def _merged(dicts: dict | Sequence[dict]) -> dict:
    if isinstance(dicts, dict):
        return dict(dicts)
    merged: dict = {}
    for d in dicts:
        for k, v in d.items():
            if k in merged:
                raise ValueError(
                    f"{k!r} appeared in multiple dictionaries; behavior of functional call is "
                    "ambiguous"
                )
            merged[k] = v
    return merged


def _tied_names(module: Module) -> dict[int, list[str]]:
    """id of each parameter -> every name it has: a parameter shared by several modules, or
    of a module used in several places, has several."""
    names: dict[int, list[str]] = {}
    stack = [("", module)]
    while stack:
        prefix, m = stack.pop()
        for n, p in m._parameters.items():
            if p is not None:
                names.setdefault(id(p), []).append(f"{prefix}{n}")
        stack.extend((f"{prefix}{n}.", c) for n, c in m._modules.items() if c is not None)
    return names


def functional_call(
    module: Module,
    parameter_and_buffer_dicts: dict[str, Tensor] | Sequence[dict[str, Tensor]],
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """`module(*args, **kwargs)` with the parameters named in the dict(s) replaced by their
    values (dotted names, as named_parameters gives them); the module is restored afterwards.
    tie_weights: a value for one name of a shared parameter replaces it under every name.
    strict: every parameter must be given, and no other name. A name that is not a
    parameter is set as an attribute for the call, as PyTorch."""
    values = _merged(parameter_and_buffer_dicts)
    tied = _tied_names(module)
    ties = {name: names for names in tied.values() for name in names}
    if tie_weights:
        for name in list(values):
            for other in ties.get(name, ()):
                if other in values and values[other] is not values[name]:
                    raise ValueError(
                        f"functional_call got multiple values for keys {[name, other]}, which "
                        "are tied. Consider using tie_weights=False"
                    )
                values[other] = values[name]
    if strict:
        everything = set(ties)
        missing = sorted(everything - set(values))
        unexpected = sorted(set(values) - everything)
        if missing or unexpected:
            lines = [f"Error(s) in reparametrizing for {type(module).__name__}:"]
            if missing:
                lines.append("\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + ".")
            if unexpected:
                lines.append(
                    "\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + "."
                )
            raise RuntimeError("\n".join(lines))
    swapped = []  # (owner, name, registry or None, previous value or a marker)
    try:
        for name, value in values.items():
            owner, last = _owner(module, name)
            if last in owner._parameters:
                swapped.append((owner, last, True, owner._parameters[last]))
                owner._parameters[last] = value
            else:
                swapped.append((owner, last, False, owner.__dict__.get(last, _ABSENT)))
                object.__setattr__(owner, last, value)
        if args is None:
            args = ()
        elif not isinstance(args, tuple):
            args = (args,)
        return module(*args, **(kwargs or {}))
    finally:
        for owner, last, registered, previous in reversed(swapped):
            if registered:
                owner._parameters[last] = previous
            elif previous is _ABSENT:
                object.__delattr__(owner, last)
            else:
                object.__setattr__(owner, last, previous)


_ABSENT = object()


def _stacked_leaf(tensors: list[Tensor], name: str) -> Tensor:
    """The tensors stacked along a new first axis: a new leaf that requires grad if they all
    do (cut from their graphs), plain if none does."""
    flags = {t.requires_grad for t in tensors}
    if len(flags) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    out = _namespace.stack(tensors)
    return out.detach().requires_grad_() if True in flags else out


def stack_module_state(models: Sequence[Module]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """(params, buffers): each parameter and buffer name of the models (as named_parameters
    and named_buffers give them) mapped to the models' values stacked along a new first axis,
    for `vmap(lambda p, b, x: functional_call(models[0], (p, b), x), (0, 0, None))`. The
    stacked parameters are new leaves: training the ensemble trains them, not the models.
    The models must be of one class and all in training mode or all in eval mode."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    if len({type(m) for m in models}) > 1:
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    found = []
    for named in ("named_parameters", "named_buffers"):
        per_model = [dict(getattr(m, named)()) for m in models]
        found.append({k: _stacked_leaf([d[k] for d in per_model], k) for k in per_model[0]})
    return found[0], found[1]
