"""The Optimizer base class, with PyTorch's interface: parameter groups, `step`, `zero_grad`,
`state_dict` / `load_state_dict`. Updates run under no_grad: a parameter keeps its identity
and gets a new array, so graphs that saved the old values stay valid."""

from __future__ import annotations

import functools
import weakref
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .. import _backend, _lazy
from .. import _namespace as ops
from .._tensor import Tensor, enable_grad, grad_mode, no_grad
from ..nn.module import zero_grads

__all__ = ["Optimizer"]

ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]]


class Optimizer:
    """Base class of the optimizers: holds `param_groups` (dicts of 'params' and
    hyperparameters) and `state` (per-parameter dicts). Subclasses write `_update`."""

    # How complex parameters are stepped: "as is" where `_update` is right for complex values
    # as written (linear in g: SGD); "pairs", PyTorch's view_as_real, for the others, whose
    # formulas (g * g, sqrt, max, ...) are for reals: p and g as real pairs on a last axis of
    # 2, the state too (LBFGS, which steps all parameters at once, puts the pairs in its flat
    # vectors itself).
    _COMPLEX_PARAMETERS: str = "pairs"
    # The state entries kept as Python numbers (PyTorch keeps them as 0-d tensors, which
    # load_state_dict turns back into numbers of these types).
    _NUMBERS: dict[str, type] = {"step": int}

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        if isinstance(params, Tensor):
            raise TypeError(
                "params argument given to the optimizer should be an iterable of Tensors or "
                f"dicts, but got {type(params).__name__}"
            )
        self.defaults = defaults
        # As PyTorch's: reading the state of a parameter not yet stepped gives an empty dict.
        self.state: defaultdict[Tensor, dict[str, Any]] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters, with hyperparameters that override the defaults."""
        group = dict(param_group)
        params = group["params"]
        if isinstance(params, set):
            raise TypeError(
                "optimizer parameters need to be organized in ordered collections, but the "
                "ordering of tensors in sets will change between runs. Please use a list instead."
            )
        params = [params] if isinstance(params, Tensor) else list(params)
        # Named parameters, (name, tensor) pairs (model.named_parameters()): their names are
        # kept in the group's "param_names", as PyTorch's.
        names = [p[0] for p in params if isinstance(p, tuple)]
        group["params"] = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError(
                    "all optimizer params should be with/without names. Some param names are "
                    "missing"
                )
            group["param_names"] = names
        if self.param_groups and ("param_names" in group) != (
            "param_names" in self.param_groups[0]
        ):
            raise ValueError("all optimizer param groups should be with/without names.")
        for p in group["params"]:
            if p.__class__ is not Tensor:
                raise TypeError(
                    "optimizer can only optimize Tensors, but one of the params is "
                    f"{type(p).__name__}"
                )
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            group.setdefault(name, default)
        _check_implementation(group)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in group["params"]):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the parameters' gradients: to None, or to zeros written in place."""
        if grad_mode.extended and grad_mode.tracer is not None:
            _guard_groups(self, grad_mode.tracer)
        for group in self.param_groups:
            zero_grads(group["params"], set_to_none)

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """One update of every parameter that has a gradient (those whose .grad is None are
        skipped). `closure`, if given, recomputes and returns the loss first.

        On a lazy library (Dask), the parameters, their gradients, the optimizer's state and
        the closure's loss are then computed, in one pass: brought here and wrapped back in
        their chunks when together at most 1 MiB, else persisted on the workers (see
        docs/dask.md). So step k's task graph is the size of step 1's. Under chainrule.compile
        they are settled after each call of the compiled function, with its outputs."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        lazy: list[Tensor] = []
        tracer = grad_mode.tracer if grad_mode.extended else None
        if tracer is not None:
            _guard_groups(self, tracer)
        with no_grad():
            for index, group in enumerate(self.param_groups):
                traced = []  # (p, p's state, what its update branched on)
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    g = p.grad.detach()
                    if group.get("maximize", False):
                        g = -g
                    state = self.state.setdefault(p, {})
                    # A complex p stepped as real pairs (view_as_real): `pairs` is updated,
                    # then written back into p.
                    pairs = p
                    if self._COMPLEX_PARAMETERS == "pairs" and p.dtype.kind == "c":
                        pairs, g = _as_pairs(p), _as_pairs(g)
                    if not state:
                        self._init(pairs, state, group)
                    if tracer is None:
                        self._update(pairs, g, _Update(state, group, self._scalars(state, group)))
                        if pairs is not p:
                            p[...] = _from_pairs(pairs)
                        if _backend.is_lazy(p._data):
                            lazy += _step_tensors(p, state)
                        continue
                    if _backend.is_lazy(p._data):
                        # Settled after each replay, as here (see chainrule.compile).
                        refs = (weakref.ref(self), weakref.ref(p))
                        tracer.settle_after(functools.partial(_traced_step_tensors, refs))
                    # Traced by chainrule.compile: the numbers are computed in Python at each
                    # replay (a scheduler may change lr between steps; a step count grows);
                    # what the update branched on is checked before it (one guard a group).
                    traced.append((p, state, self._layout(p, state, group)))
                    numbers = tracer.host(self._scalars, (state, group), pairs)
                    self._update(pairs, g, _Update(state, group, tuple(numbers), traced=True))
                    if pairs is not p:
                        p[...] = _from_pairs(pairs)
                if traced:
                    key = (id(self), index, *[id(entry[0]) for entry in traced])
                    where = (self, index, group, tuple(traced))
                    tracer.guard(key, functools.partial(_same_layouts, where))
        if lazy:
            # On a lazy library (Dask) each update is a task graph on top of the last one:
            # left lazy, step k would carry the graphs of all k steps. Settled, the next step
            # starts from their values. The closure's loss is settled with them: its value
            # comes from the same pass as the gradients.
            if loss.__class__ is Tensor:
                lazy.append(loss)
            _lazy.settle(lazy)
        return loss

    def _init(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> None:
        """Make p's state before its first update (none by default)."""

    def _scalars(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        """The Python numbers one parameter's update uses, from its group's hyperparameters
        and its state (advancing a step count kept there). No tensor is read."""
        raise NotImplementedError(f"{type(self).__name__} must define _scalars")

    def _update(self, p: Tensor, g: Tensor, u: _Update) -> None:
        """Update p in place from its gradient g; `u` holds p's state, its group and the
        numbers `_scalars` returned, and writes the state's tensors."""
        raise NotImplementedError(f"{type(self).__name__} must define _update")

    def _layout(self, p: Tensor, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        """What `_update` branches on (besides the numbers it is given): its state's entries,
        the flags and signs of its hyperparameters (`_flags`)."""
        return (tuple(state), bool(group.get("maximize", False))) + self._flags(state, group)

    def _flags(self, state: dict[str, Any], group: dict[str, Any]) -> tuple:
        """The flags and signs of p's hyperparameters and state that `_update` branches on."""
        return ()

    def state_dict(self) -> dict[str, Any]:
        """{'state': {index: per-parameter state}, 'param_groups': [group with 'params' as
        indices]}; parameters are numbered in group order. State tensors are copied (later
        steps may write them in place), so the dict stays as it was."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            saved = {k: v for k, v in group.items() if k != "params"}
            saved["params"] = []
            for p in group["params"]:
                index.setdefault(id(p), len(index))
                saved["params"].append(index[id(p)])
            groups.append(saved)
        state = {
            index[id(p)]: {k: _copied(v) for k, v in s.items()}
            for group in self.param_groups
            for p in group["params"]
            if (s := self.state.get(p))
        }
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: Mapping[str, Any]) -> None:
        """Restore hyperparameters (lr included) and per-parameter state saved by
        `state_dict`; arrays are copied into tensors of each parameter's library and dtype."""
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        for saved, group in zip(saved_groups, self.param_groups):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(
                    "loaded state dict contains a parameter group that doesn't match the size "
                    "of optimizer's group"
                )
        by_index = {
            i: p
            for saved, group in zip(saved_groups, self.param_groups)
            for i, p in zip(saved["params"], group["params"])
        }
        self.state = defaultdict(dict)
        for i, s in state_dict["state"].items():
            p = by_index[int(i)]
            self.state[p] = {
                k: (_number(v, self._NUMBERS[k]) if k in self._NUMBERS else _state_value(v, p))
                for k, v in s.items()
            }
        for saved, group in zip(saved_groups, self.param_groups):
            params = group["params"]
            group.clear()
            group.update({k: v for k, v in saved.items() if k != "params"})
            group["params"] = params

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            lines += [f"    {k}: {v}" for k, v in sorted(group.items()) if k != "params"]
        return "\n".join(lines + [")"])


def _step_tensors(p: Tensor, state: dict[str, Any]) -> list[Tensor]:
    """What a step on a lazy library settles of one parameter: it, its gradient, its state."""
    return [p, p.grad, *(v for v in state.values() if v.__class__ is Tensor)]


def _as_pairs(t: Tensor) -> Tensor:
    """A complex tensor's real and imaginary parts on a new last axis (PyTorch's
    view_as_real, as a copy)."""
    return ops.stack([ops.real(t), ops.imag(t)], axis=-1)


def _from_pairs(t: Tensor) -> Tensor:
    """The complex tensor whose real and imaginary parts `_as_pairs` put on t's last axis,
    each as it is (t[..., 0] + 1j * t[..., 1] would make an infinite imaginary part's real
    part NaN, 1j * inf being (0 * inf, inf)): the real part cast, the imaginary one written."""
    out = ops.astype(t[..., 0], ops.complex64 if t.dtype == ops.float32 else ops.complex128)
    out.imag[...] = t[..., 1]
    return out


def _traced_step_tensors(refs: tuple) -> list[Tensor]:
    """_step_tensors of a compiled step's parameter (none once it or its optimizer is gone)."""
    opt, p = refs[0](), refs[1]()
    if opt is None or p is None:
        return []
    return _step_tensors(p, opt.state.get(p, {}))


def _state_value(value: Any, p: Tensor) -> Any:
    """A saved state entry for parameter p: arrays and tensors become new tensors of p's
    library (floating ones in p's dtype, real pairs of its precision for a complex p); numbers
    stay."""
    if isinstance(value, (bool, int, float)) or value is None:
        return value
    t = ops.asarray(value).detach()
    if t._xp is not p._xp:
        t = ops.asarray(p._xp.asarray(ops.np.asarray(t.numpy())))
    else:
        t = ops.asarray(t, copy=True)
    if p.dtype.kind == "c":
        # A complex parameter's state holds real pairs (as PyTorch's view_as_real of its
        # complex state, which is taken too), in p's precision.
        if t.dtype.kind == "c":
            t = _as_pairs(t)
        if ops.isdtype(t.dtype, "real floating") and t.dtype != ops.finfo(p.dtype).dtype:
            t = ops.astype(t, ops.finfo(p.dtype).dtype)
    elif ops.isdtype(t.dtype, "real floating") and t.dtype != p.dtype:
        t = ops.astype(t, p.dtype)
    return t


def _number(value: Any, kind: type) -> Any:
    """A saved number of the state (a Python number, or a 0-d array or tensor as PyTorch
    saves its step) as a Python number of `kind`."""
    if isinstance(value, (bool, int, float)) or value is None:
        return kind(value) if value is not None else value
    return kind(ops.asarray(value).item())


def _copied(v: Any) -> Any:
    return ops.asarray(v, copy=True) if v.__class__ is Tensor else v


def _guard_groups(opt: Optimizer, tracer: Any) -> None:
    """Under compile: the loops over the parameter groups are unrolled into the trace, so a
    replay checks that the groups and their parameters are those it was traced with (a group
    added by add_param_group, or a parameter appended to one, traces again)."""
    groups = tuple((g, tuple(g["params"])) for g in opt.param_groups)
    tracer.guard((id(opt), "groups"), functools.partial(_same_groups, (opt, groups)))


def _same_groups(where: tuple, leaves: Any) -> bool:
    """compile's guard of _guard_groups, `where` = (optimizer, ((group, its params), ...))."""
    opt, groups = where
    now = opt.param_groups
    if len(now) != len(groups):
        return False
    for g, (group, params) in zip(now, groups):
        ps = g["params"]
        if g is not group or len(ps) != len(params):
            return False
        for p, q in zip(ps, params):
            if p is not q:
                return False
    return True


def _same_layouts(where: tuple, leaves: Any) -> bool:
    """compile's guard on a traced step of a parameter group, `where` = (optimizer, group
    index, group, ((p, p's state, layout), ...)): the group and each p's state are still
    those it updated (not replaced by load_state_dict), and each update branches as it did."""
    opt, index, group, traced = where
    groups = opt.param_groups
    if index >= len(groups) or groups[index] is not group:
        return False
    states, layout = opt.state, opt._layout
    for p, state, was in traced:
        if states.get(p) is not state or layout(p, state, group) != was:
            return False
    return True


class _Update:
    """One parameter's update in progress: its state, its group's hyperparameters, the numbers
    `_scalars` returned (Python numbers, or 0-d tensors under compile), and whether compile
    traces it. State tensors are written by `set`, `lerp` and `scale_add`: in place when traced
    (compile's replay carries them), else replaced (cheaper, and graphs that saved the old
    ones stay valid)."""

    __slots__ = ("state", "group", "numbers", "traced")

    def __init__(
        self, state: dict[str, Any], group: dict[str, Any], numbers: tuple, traced: bool = False
    ) -> None:
        self.state = state
        self.group = group
        self.numbers = numbers
        self.traced = traced

    def set(self, key: str, value: Tensor) -> Tensor:
        """state[key] = value."""
        state = self.state
        if self.traced:
            state[key][...] = value
            return state[key]
        state[key] = value
        return value

    def lerp(self, key: str, end: Tensor, weight: Any, rest: Any, near: bool) -> Tensor:
        """state[key] = lerp(state[key], end, weight), computed from the nearer end (as
        PyTorch's lerp): near when weight < 0.5; rest = 1 - weight."""
        start = self.state[key]
        if near:
            if self.traced:
                start += weight * (end - start)
                return start
            out = self.state[key] = start + weight * (end - start)
            return out
        return self.set(key, end - (end - start) * rest)

    def scale_add(self, key: str, scale: Any, add: Tensor) -> Tensor:
        """state[key] = state[key] * scale + add."""
        t = self.state[key]
        if self.traced:
            t *= scale
            t += add
            return t
        out = self.state[key] = t * scale + add
        return out


def _decayed(p: Tensor, g: Tensor, group: dict[str, Any], wd: Any, decay: Any = None) -> Tensor:
    """The gradient under the group's weight decay, where its weight_decay is not 0: g + wd p
    (L2); or, given `decay` (1 - lr wd), g as it is and p scaled by decay in place (decoupled,
    as AdamW's)."""
    if group["weight_decay"]:
        if decay is None:
            return g + wd * p
        p *= decay
    return g


def _check_implementation(group: dict[str, Any]) -> None:
    """PyTorch's options that choose how a step is computed (`foreach`, `fused`, `capturable`)
    are kept in the groups, as PyTorch's, and change nothing here: each step computes the same
    numbers (chainrule.compile is what replays a step as one program). PyTorch's errors for
    `fused` with `foreach` or `differentiable`; NotImplementedError for differentiable=True
    (a step recorded by autograd, to differentiate through it)."""
    if group.get("fused") and group.get("differentiable"):
        raise RuntimeError("`fused` does not support `differentiable`")
    if group.get("fused") and group.get("foreach"):
        raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
    if group.get("differentiable"):
        raise NotImplementedError(
            "differentiable=True (recording the optimizer's step for autograd) is not "
            "implemented in chainrule: its steps run under no_grad"
        )


# The words of PyTorch's message for an invalid hyperparameter, where they are not its name's.
_WORDS = {"lr": "learning rate", "eps": "epsilon value"}


def _check(**values: Any) -> None:
    """ValueError, in PyTorch's words, for the first of the hyperparameters given that is
    negative (each of `betas` must lie in [0, 1))."""
    for name, value in values.items():
        if name == "betas":
            for i, beta in enumerate(value):
                if not 0.0 <= beta < 1.0:
                    raise ValueError(f"Invalid beta parameter at index {i}: {beta}")
        elif not value >= 0.0:
            raise ValueError(f"Invalid {_WORDS.get(name, f'{name} value')}: {value}")
