"""The graph, open to users, with PyTorch's names: saved-tensor hooks, multi-gradient hooks,
save_on_cpu, gradient edges, version bumps, allow_mutation_on_saved_tensors, and
introspection (a summary of what a graph holds, and a Graphviz DOT export). Tensor and node
hooks themselves are methods: `Tensor.register_hook`, `grad_fn.register_hook`."""

from __future__ import annotations

import math
import threading
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from .. import _backend
from .._mode import grad_mode, set_feature
from .._node import RELEASED, AccumulateGrad, Packed, Port, RemovableHandle, node_of
from .._node import GradNode as Node
from .._node import Node as _Recorded
from .._state import STATE
from .._tensor import Tensor, version_counter
from . import _engine

__all__ = [
    "GradientEdge",
    "GraphSummary",
    "Node",
    "allow_mutation_on_saved_tensors",
    "disable_saved_tensors_hooks",
    "get_gradient_edge",
    "increment_version",
    "register_multi_grad_hook",
    "save_on_cpu",
    "saved_tensors_hooks",
    "summary",
    "to_dot",
]


# ----------------------------------------------------------------------------- saved tensors


class saved_tensors_hooks:
    """Within this context, every value an operation saves for backward is passed to
    `pack_hook(tensor)`, and what it returns is stored instead; when backward needs the value,
    `unpack_hook(packed)` must give back a tensor of the same values. Nested contexts: the
    innermost hooks apply."""

    def __init__(self, pack_hook: Callable[[Tensor], Any], unpack_hook: Callable[[Any], Tensor]):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if grad_mode.saved_hooks_refused is not None:
            raise RuntimeError(grad_mode.saved_hooks_refused)
        set_feature("saved_hooks", (*grad_mode.saved_hooks, (self.pack_hook, _checked(self))))

    def __exit__(self, *exc: object) -> None:
        set_feature("saved_hooks", grad_mode.saved_hooks[:-1])


def _checked(hooks: saved_tensors_hooks) -> Callable[[Any], Tensor]:
    unpack = hooks.unpack_hook

    def checked_unpack(packed: Any) -> Tensor:
        t = unpack(packed)
        if t.__class__ is not Tensor:
            raise TypeError(
                f"saved_tensors_hooks: the unpack hook must return a Tensor, not {type(t)}"
            )
        return t

    return checked_unpack


class disable_saved_tensors_hooks:
    """Within this context, entering saved_tensors_hooks raises RuntimeError(error_message)."""

    def __init__(self, error_message: str) -> None:
        self.error_message = error_message
        self.prev: list[str | None] = []

    def __enter__(self) -> None:
        self.prev.append(grad_mode.saved_hooks_refused)
        grad_mode.saved_hooks_refused = self.error_message

    def __exit__(self, *exc: object) -> None:
        grad_mode.saved_hooks_refused = self.prev.pop()


class save_on_cpu(saved_tensors_hooks):
    """Saved values live in host memory until backward needs them (for backends with a
    device, e.g. CuPy); on host backends (NumPy) values stay where they are. pin_memory and
    device_type are PyTorch's and change nothing here: a value goes back to the device and
    library it came from."""

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        super().__init__(_to_host, _from_host)


def _to_host(t: Tensor) -> Any:
    device = t.device
    if t._xp is _backend.np or device == "cpu" or str(device) == "CPU_DEVICE":
        return t
    return (t._xp, device, t.numpy().copy(), t.requires_grad)


def _from_host(packed: Any) -> Tensor:
    if packed.__class__ is Tensor:
        return packed
    xp, device, values, _ = packed
    return Tensor(_backend.normalize(xp.asarray(values, device=device), xp), xp, None)


class allow_mutation_on_saved_tensors:
    """Within this context, a tensor saved for backward may be written in place afterwards:
    backward uses the value it had when saved. chainrule copies each saved tensor when it is
    saved (PyTorch copies it when it is written): simpler, at the cost of memory for every
    saved value. Contexts cannot be nested."""

    active = threading.local()

    def __enter__(self) -> allow_mutation_on_saved_tensors:
        if getattr(self.active, "on", False):
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        self.active.on = True
        self.hooks = saved_tensors_hooks(_copied, _as_saved)
        self.hooks.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self.hooks.__exit__(*exc)
        self.active.on = False


def _copied(t: Tensor) -> Any:
    # The copy needs no history: backward reaches the input through the node's own edge.
    return Tensor(_backend.normalize(t._xp.asarray(t._data, copy=True), t._xp), t._xp, None)


def _as_saved(packed: Tensor) -> Tensor:
    return packed


# ----------------------------------------------------------------------------- gradient edges


class GradientEdge(NamedTuple):
    """Where a tensor's gradient goes: its node (grad_fn, or a leaf's AccumulateGrad) and
    which of that node's outputs it is. autograd.grad takes one in `inputs` in place of the
    tensor: the gradient reaches it even if the tensor itself is gone or was replaced."""

    node: Any
    output_nr: int


# Per node, per output number: (shape, dtype, namespace) of the tensor get_gradient_edge
# was given, so that grad can shape the gradient it finds there. Weak: holds no node alive.
_EDGE_META: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The GradientEdge of `tensor`: `grad(loss, get_gradient_edge(x))` is `grad(loss, x)`."""
    e = tensor._edge
    if e is None:
        raise RuntimeError(
            "It is not possible to get the gradient edge for a Tensor that does not require "
            "gradients"
        )
    node, nr = (e.node, e.index) if e.__class__ is Port else (e, 0)
    _EDGE_META.setdefault(node, {})[nr] = (tensor.shape, tensor._data.dtype, tensor._xp)
    return GradientEdge(node, nr)


def edge_input(edge: GradientEdge) -> Tensor:
    """A tensor standing for `edge` among autograd.grad's inputs: on that edge, with the
    shape and dtype of the tensor it was taken from."""
    node, nr = edge
    if node.__class__ is AccumulateGrad:
        leaf = node.leaf()
        if leaf is not None:
            return leaf
    meta = _EDGE_META.get(node, {}).get(nr)
    if meta is None:
        raise RuntimeError(
            "autograd.grad takes a GradientEdge made by autograd.graph.get_gradient_edge "
            "(chainrule learns the shape of the gradient there from the tensor)"
        )
    shape, dtype, xp = meta
    multi = node.__class__ is not AccumulateGrad and node.rule.multi
    return Tensor(xp.empty(shape, dtype=dtype), xp, Port(node, nr) if multi else node)


# ----------------------------------------------------------------------------- saved values


def _saved(key: str) -> property:
    """PyTorch's `grad_fn._saved_<key>`: what the node saved, as a tensor on the input's
    edge (`self`, `other`: its first two inputs) or a new tensor (`result`, or `result0`,
    `result1`... for several outputs); AttributeError where the node saved no such value."""

    def get(node: _Recorded) -> Any:
        n_in = len(node.edges)
        slots = {"self": 0, "other": 1} if n_in == 2 else {"self": 0} if n_in == 1 else {}
        if node.n_out == 1:
            slots["result"] = n_in
        else:
            slots.update({f"result{i}": n_in + i for i in range(node.n_out)})
        saved = node.saved
        slot = slots.get(key)
        if slot is None or saved is None or (saved is not RELEASED and _slot(saved, slot) is None):
            raise AttributeError(f"{node.name()} saved no {key!r}: no attribute '_saved_{key}'")
        if saved is RELEASED:
            raise RuntimeError(_engine._FREED.format(name=node.name()))
        value = _slot(saved, slot)
        if value.__class__ in (bool, int, float, complex):
            return value
        if saved.__class__ is Packed:
            value = saved.unpack(value)._data if saved.packed[slot] else value
        xp = _backend.namespace(value)
        edge = node.edges[slot] if slot < n_in else None
        return Tensor(_backend.normalize(value, xp), xp, edge)

    return property(get, doc=get.__doc__)


def _slot(saved: Any, slot: int) -> Any:
    values = saved.slots if saved.__class__ is Packed else saved
    return values[slot] if slot < len(values) else None


# Properties, not __getattr__: a miss on a node's other attributes (the engine's
# getattr(node, "hooks", None)) stays as cheap as it was.
for _key in ("self", "other", "result", *(f"result{i}" for i in range(8))):
    setattr(_Recorded, f"_saved_{_key}", _saved(_key))


# ----------------------------------------------------------------------------- versions


def increment_version(tensor: Tensor | Iterable[Tensor]) -> None:
    """Count an in-place write that chainrule did not see (one made through another library
    on the tensor's memory): backward then refuses values saved before it, as it does for its
    own in-place operations."""
    for t in (tensor,) if tensor.__class__ is Tensor else tensor:
        version_counter(t).value += 1
        STATE.inplace_writes += 1


# ----------------------------------------------------------------------------- multi-grad hooks


class _Handles:
    """The handle of a multi-gradient hook: remove() takes away its hook on every tensor."""

    def __init__(self, handles: list[RemovableHandle]) -> None:
        self.handles = handles

    def remove(self) -> None:
        for h in self.handles:
            h.remove()

    def __enter__(self) -> _Handles:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def register_multi_grad_hook(
    tensors: Sequence[Tensor], fn: Callable[..., Any], *, mode: str = "all"
) -> _Handles:
    """Call `fn` once per backward that reaches any of `tensors`. mode "all": at the end of
    that backward, with a list of one gradient per tensor (None for those not reached);
    mode "any": at the first of their gradients, with that gradient."""
    if mode not in ("all", "any"):
        raise ValueError(f"register_multi_grad_hook: mode must be 'all' or 'any', not {mode!r}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    state: dict[str, Any] = {"run": None, "grads": None}

    def make_hook(i: int) -> Callable[[Tensor], None]:
        def hook(g: Tensor) -> None:
            run = _engine.current_run()
            with lock:
                first = state["run"] is not run
                if first:
                    state["run"] = run
                if mode == "any":
                    if first:
                        fn(g)
                    return
                if first:
                    grads: list[Tensor | None] = [None] * len(tensors)
                    state["grads"] = grads
                    _engine.at_end(lambda: fn(grads))
                state["grads"][i] = g

        return hook

    return _Handles([t.register_hook(make_hook(i)) for i, t in enumerate(tensors)])


# ----------------------------------------------------------------------------- introspection


@dataclass
class GraphSummary:
    """What a graph holds: its nodes by kind, the bytes they saved, the largest saved values."""

    nodes: int = 0
    leaves: int = 0
    by_kind: dict[str, tuple[int, int]] = field(default_factory=dict)  # name: (count, bytes)
    largest: list[tuple[int, str, tuple[int, ...]]] = field(
        default_factory=list
    )  # (bytes, node, shape)

    @property
    def saved_bytes(self) -> int:
        """The bytes saved by all nodes together."""
        return sum(b for _, b in self.by_kind.values())

    def __str__(self) -> str:
        lines = [
            f"{self.nodes} nodes, {self.leaves} leaves, {_size(self.saved_bytes)} saved",
            f"{'node':<28}{'count':>8}{'saved':>12}",
        ]
        for name, (n, b) in sorted(self.by_kind.items(), key=lambda kv: -kv[1][1]):
            lines.append(f"{name:<28}{n:>8}{_size(b):>12}")
        if self.largest:
            lines.append("largest saved values:")
            lines += [f"  {_size(b):>10}  {name} {shape}" for b, name, shape in self.largest]
        return "\n".join(lines)


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def _walk(tensors: Iterable[Tensor], caller: str) -> list[Any]:
    """Every node and accumulator reachable from the tensors, each once (iteratively)."""
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(
                f"{caller}() takes tensors whose graph to show (a forward pass's output, a "
                f"loss), not {type(t).__name__}: call it as {caller}(model(x)) or {caller}(loss)"
            )
    stack = [node_of(t._edge) for t in tensors if t._edge is not None]
    seen: set[Any] = set()
    order = []
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        stack.extend(node_of(e) for e in node.edges if e is not None)
    return order


def _saved_arrays(node: Any) -> list[Any]:
    saved = node.saved
    if saved is None or saved.__class__ is not tuple:
        return []  # nothing saved, released, or packed by saved-tensor hooks
    return [d for d in saved if d is not None and hasattr(d, "shape")]


def _nbytes(a: Any) -> int:
    return int(math.prod(a.shape)) * _backend.from_backend_dtype(a.dtype).itemsize


def summary(*tensors: Tensor, top: int = 5) -> GraphSummary:
    """Count the nodes of the graph behind `tensors`, the bytes each kind of node saved, and
    list the `top` largest saved values."""
    out = GraphSummary()
    sizes = []
    for node in _walk(tensors, "summary"):
        if node.__class__ is AccumulateGrad:
            out.leaves += 1
            continue
        out.nodes += 1
        arrays = _saved_arrays(node)
        total = sum(_nbytes(a) for a in arrays)
        n, b = out.by_kind.get(node.name(), (0, 0))
        out.by_kind[node.name()] = (n + 1, b + total)
        sizes += [(_nbytes(a), node.name(), tuple(a.shape)) for a in arrays]
    out.largest = sorted(sizes, key=lambda s: -s[0])[:top]
    return out


def to_dot(
    *tensors: Tensor, path: str | None = None, params: Mapping[str, Tensor] | None = None
) -> str:
    """The graph behind `tensors` in Graphviz's DOT language: one box per node with its name
    and saved values (shape, size), leaves with their shapes, an edge per gradient path.

    :param path: where to write it too (render with `dot -Tsvg`).
    :param params: names of leaves, as `dict(model.named_parameters())`: a leaf found there
        is labelled by its name (`0.weight`) above its shape.
    :returns: the DOT text."""
    nodes = _walk(tensors, "to_dot")
    names = {id(t): name for name, t in (params or {}).items()}
    ids = {node: f"n{i}" for i, node in enumerate(nodes)}
    lines = ["digraph chainrule {", '  node [shape=box, fontname="Helvetica", fontsize=10];']
    for t in tensors:
        if t._edge is not None:
            lines.append(f'  out{id(t)} [label="output {t.shape}", shape=ellipse];')
            lines.append(f"  out{id(t)} -> {ids[node_of(t._edge)]};")
    for node in nodes:
        if node.__class__ is AccumulateGrad:
            leaf = node.variable
            shape = "" if leaf is None else f"\\n{leaf.shape} {leaf.dtype}"
            label = f"{names.get(id(leaf), 'AccumulateGrad')}{shape}"
            lines.append(f'  {ids[node]} [label="{label}", style=filled, fillcolor=lightblue];')
            continue
        saved = "".join(
            f"\\nsaved {tuple(a.shape)} {_size(_nbytes(a))}" for a in _saved_arrays(node)
        )
        if isinstance(node.saved, Packed):
            saved = "\\nsaved: packed by hooks"
        lines.append(f'  {ids[node]} [label="{node.name()}{saved}"];')
        for e in node.edges:
            if e is not None:
                label = f' [label="{e.index}"]' if e.__class__ is Port else ""
                lines.append(f"  {ids[node]} -> {ids[node_of(e)]}{label};")
    lines.append("}")
    text = "\n".join(lines) + "\n"
    if path is not None:
        with open(path, "w") as f:
            f.write(text)
    return text
