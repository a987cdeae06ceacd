"""The graph's one node type. A Node is one recorded primitive: edges to where its inputs'
gradients go, the values its rule saved, its static parameters. Also here: Rule (a primitive
as the table in `_rules` declares it), Port and AccumulateGrad (the other ends of edges), and
VersionCounter, Alias and View (memory shared by tensors). The engine that runs nodes lives
in `autograd._engine`."""

from __future__ import annotations

import os
import traceback
import weakref
from typing import Any

from ._state import STATE

__all__ = [
    "OUT",
    "RELEASED",
    "Packed",
    "AccumulateGrad",
    "COMPLEX_ONE",
    "COMPLEX_TWO",
    "ComplexFit",
    "Alias",
    "GradNode",
    "Hooks",
    "Node",
    "Port",
    "RemovableHandle",
    "Rule",
    "VersionCounter",
    "View",
    "ZERO",
    "hooks_of",
    "node_of",
    "remember",
    "written_arrays",
]

# A save spec names, for each input, the saved slots its derivative reads: input indices,
# and OUT for the output (all outputs of a rule with several).
OUT = -1


class VersionCounter:
    """How many times a tensor's memory was written in place; shared with its views.

    `alias` marks memory shared with values a graph holds (a result computed from one under
    no_grad): chainrule never writes such memory in place; a write gives the tensor a new
    array and a new counter instead. `inference` marks a tensor made under inference_mode: it
    can't be saved for backward. `group`: the Alias group of tensors that share the memory
    (None until a view, detach() or .data of it is made): a tensor is a member while its
    counter's group is that group."""

    __slots__ = ("value", "alias", "inference", "group")

    def __init__(
        self, value: int = 0, alias: bool = False, inference: bool = False, group: Any = None
    ) -> None:
        self.value = value
        self.alias = alias
        self.inference = inference
        self.group = group


class Alias:
    """The tensors that share one memory: a base, its views, its detach() and .data aliases
    (PyTorch's storage). Made when the first alias of a tensor is, and read only by in-place
    writes (see `_inplace`): a write to a tensor of a group with another live member happens
    in that memory, so that every member sees it.

    members: per member, [weak reference, path (the view steps that make its values from
    `root`)]. arrays: (weak reference, version counter)
    of every array object a member held: a write through a member with counter c makes those
    of c stale (`written_arrays`), as PyTorch's shared counter does for values a graph saved.
    mutable: the library writes arrays in place; where it can't (JAX's arrays are immutable,
    Dask's lazy), `root` holds the values of the group's first member once a view of it is
    made (before, every member has its values), from which a write remakes every member's
    (paths). graph: a member ever needed grad (a graph may hold the
    memory's arrays without a version to check)."""

    __slots__ = ("members", "arrays", "mutable", "graph", "root", "prune_at")

    def __init__(self, mutable: bool) -> None:
        self.members: list = []
        self.arrays: list = []
        self.mutable = mutable
        self.graph = False
        self.root: Any = None
        self.prune_at = 16

    def add(self, t: Any, path: tuple) -> None:
        """Make t a member (its counter set: its group becomes this one)."""
        t._vc.group = self
        # t is new to the group (a member that takes other memory leaves first: `drop`), so
        # nothing is looked up; dead members are dropped once the list has doubled since the
        # last time. A loop that took a view at each step (y[1:3] = x[0:2], or a chain of
        # reshapes) made each add pass over every member before it: quadratic in the steps.
        if len(self.members) >= self.prune_at:
            self.live()
            self.prune_at = 2 * len(self.members) + 16
        self.members.append((weakref.ref(t), path))
        if t._edge is not None:
            self.graph = True
        self.held(t)

    def drop(self, t: Any) -> None:
        """t leaves the group (its .data is set: it joins the group of other memory, or this
        one again with another path)."""
        self.members = [e for e in self.members if e[0]() is not t]

    def held(self, t: Any) -> None:
        """Note t's array object (new, or t's after a write)."""
        self.arrays.append((weakref.ref(t._data), t._vc))

    def live(self) -> list:
        """(tensor, path) of the members still alive (dead ones are dropped)."""
        out = []
        for ref, path in self.members:
            t = ref()
            if t is not None and getattr(t, "_vc", None) is not None and t._vc.group is self:
                out.append((t, path))
        if len(out) != len(self.members):
            self.members = [(weakref.ref(t), p) for t, p in out]
            self.arrays = [(r, c) for r, c in self.arrays if r() is not None]
        return out

    def path(self, t: Any) -> tuple:
        """The view steps that make member t's values from the root's."""
        for ref, path in self.members:
            if ref() is t:
                return path
        return ()


class View:
    """How a view is made from its base (PyTorch's view record, a view tensor's `_view`):
    `base`, the tensor at the root of a chain of views (held strongly, as PyTorch's `_base`;
    a base holds none of its views), and `steps`, the view
    rules with their parameters and gradient fit, (rule, p, fit), that make the view's values
    from the base's, in order."""

    __slots__ = ("base", "steps")

    def __init__(self, base: Any, steps: tuple) -> None:
        self.base = base
        self.steps = steps


# Arrays written in place through a tensor that shares its memory, since a node may have saved
# them: id -> (weak reference, the counter, its version before the write). A node that saved
# one refuses to run (Node.stale), as PyTorch's version check of a saved tensor. The members'
# own arrays are given new array objects of the same memory at the write (nodes made later
# save those). Empty unless such a write happened.
written_arrays: dict = {}


_FORMS = ("unary", "binary", "sequence")


class Rule:
    """A primitive: its forward on raw arrays, its VJP and JVP, and what the VJP needs saved.

    fwd: `(xp, x, p)` for one input, `(xp, x, y)` for two (elementwise, no parameters),
    `(xp, xs, p)` for a sequence; a rule with several outputs returns a tuple.
    vjp: `(xp, g, saved, p, needs) -> one gradient, None or ZERO per input`, the one signature
    of every rule. `g` is the output's gradient (a tuple with None for outputs that got none,
    for several outputs); `saved` the node's saved slots (inputs, then outputs; None where
    not saved), or None when nothing was saved; `needs[i]` is truthy when input i needs a
    gradient. Called with the backend's namespace on raw arrays, or with chainrule's
    namespace on tensors under create_graph, so it differentiates again.
    jvp: `(xp, ts, xs, outs, p) -> the output's tangent` (a tuple, for several outputs; None
    for a zero tangent): forward mode. `ts` holds one tangent or None per input, `xs` the
    inputs (Python scalars as they are), `outs` the outputs (always a tuple). Run as the VJP
    is: on raw arrays, or on tensors with chainrule's namespace, so it differentiates again.
    saves: per input, the slots its VJP reads (input indices, OUT); a variadic rule gives one
    entry that holds for every input.
    elementwise: inputs broadcast together; the engine sums each gradient back to its
    input's shape (the one generic place where broadcasting is undone).
    view: the forward may return a view of its (first) input's memory: True, or a function
    of the parameters that says whether this call does (getitem: a basic key).
    complex: how the rule meets complex values (PyTorch's convention: the gradient of a real
    loss L by z = x + iy is dL/dx + i dL/dy), one of
    - "holomorphic": the VJP formula computes the transposed Jacobian J^T g, which for
      complex values must be conjugated: the engine runs it as conj(vjp(conj(g))) = J^H g,
      and the JVP formula (f'(z) dz) as it is.
    - "own": the formulas follow the convention as written (a real Jacobian: reshapes,
      sums, indexing; or formulas that handle complex values themselves: abs, real, imag).
    - None: real values only; a complex gradient or tangent reaching it raises
      NotImplementedError.
    form: how the forward (and the operation) is called: "unary" `(xp, x, p)`, "binary"
    `(xp, x, y)`, or "sequence" `(xp, xs, p)` (as `fwd` above); set by the rule table's
    declaration helpers, read by compile's replay.
    vjp_formulas: the per-input formulas a declaration helper wrapped into `vjp`, for callers
    that can skip the wrapper (compile's replay): one-input `((xp, g, x, out, p),)`,
    two-input `(dx, dy)`, each `(xp, g, x, y, out)`; None for a VJP written in the one
    signature.
    jvp_formulas: likewise for `jvp` (forward mode's lean path): `((xp, t, x, out, p),)` for
    a one-input rule with a JVP formula, `(dx, dy)` for a two-input symmetric one (each
    applied to its input's tangent, summed); None otherwise.
    dtype_given: the parameters name the result's dtype (astype): its integer inputs are not
    cast to the default floating dtype first, as those of an operation that makes floating
    values of them by its library's promotion are (_factories._default_floating)."""

    __slots__ = (
        "name", "fwd", "vjp", "jvp", "saves", "variadic", "multi", "elementwise", "view",
        "backward_name", "naming", "_plans", "complex", "form", "vjp_formulas", "jvp_formulas",
        "dtype_given",
    )  # fmt: skip

    def __init__(
        self,
        name: str,
        fwd: Any,
        vjp: Any,
        saves: tuple,
        *,
        variadic: bool = False,
        multi: bool = False,
        elementwise: bool = False,
        view: Any = False,
        jvp: Any = None,
        complex: str | None = None,
        form: str = "sequence",
        vjp_formulas: tuple | None = None,
        jvp_formulas: tuple | None = None,
        dtype_given: bool = False,
    ) -> None:
        if form not in _FORMS:
            raise ValueError(f"rule {name!r}: unknown form {form!r}")
        self.name = name
        self.complex = complex
        self.fwd = fwd
        self.vjp = vjp
        self.jvp = jvp
        self.saves = saves
        self.variadic = variadic
        self.multi = multi
        self.elementwise = elementwise
        self.view = view
        self.form = form
        self.vjp_formulas = vjp_formulas
        self.jvp_formulas = jvp_formulas
        self.dtype_given = dtype_given
        # The node's name: PyTorch's, given by the rule table where PyTorch has the op; else
        # chainrule's own. `naming(node)`, when set, names the node by its call instead.
        self.backward_name = "".join(w.capitalize() for w in name.split("_")) + "Backward"
        self.naming: Any = None
        self._plans: dict = {}

    def plan(self, needs: tuple) -> tuple[tuple[bool, ...], bool]:
        """For inputs where `needs` holds: which inputs to save, and whether the output."""
        plan = self._plans.get(needs)
        if plan is None:
            n = len(needs)
            wanted: set = set()
            for i, need in enumerate(needs):
                if need:
                    wanted.update(self.saves[0 if self.variadic else i])
            plan = tuple(i in wanted for i in range(n)), OUT in wanted
            self._plans[needs] = plan
        return plan

    def __repr__(self) -> str:
        return f"<rule {self.name}>"


class _Released:
    __slots__ = ()

    def __repr__(self) -> str:
        return "RELEASED"


RELEASED = _Released()  # `Node.saved` once a backward without retain_graph freed it


class _KnownZero:
    """A gradient known to be zero: what a VJP returns for an input whose values no longer
    matter (every element overwritten). The engine runs no VJP on it and hands it on as it
    is, so a NaN the overwritten values came from can't make it NaN (0 * NaN); it becomes
    zeros only where a result is asked for (a leaf's .grad, autograd.grad's answer) or a
    hook sees it (a hook that returns a gradient replaces it)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "ZERO"


ZERO = _KnownZero()


class Packed:
    """`Node.saved` of a node recorded under saved_tensors_hooks: each array slot holds what
    the pack hook returned for it; `values()` runs the matching unpack hook, once per slot
    each time the node runs, and gives the arrays back."""

    __slots__ = ("slots", "packed", "unpack")

    def __init__(self, slots: tuple, packed: tuple, unpack: Any) -> None:
        self.slots = slots
        self.packed = packed  # per slot: whether it holds a packed value
        self.unpack = unpack

    def values(self) -> tuple:
        unpack = self.unpack
        return tuple(unpack(v)._data if p else v for v, p in zip(self.slots, self.packed))


class RemovableHandle:
    """What registering a hook returns: `remove()` takes the hook away (again: no-op)."""

    __slots__ = ("_list", "_fn")

    def __init__(self, hooks: list, fn: Any) -> None:
        self._list = hooks
        self._fn = fn
        hooks.append(fn)
        STATE.live_hooks += 1

    def remove(self) -> None:
        hooks = self._list
        for i, fn in enumerate(hooks):
            if fn is self._fn:
                del hooks[i]
                STATE.live_hooks -= 1
                return

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


class Hooks:
    """The hooks of one node or leaf accumulator, made on first use.

    tensor: per output index, hooks registered on the tensor of that output (`fn(grad)`; for
    a leaf, index 0, they run before accumulation); retain: per output index, a weak reference
    to a tensor whose .grad keeps the gradient (retain_grad: after the tensor hooks);
    pre: the node's prehooks `fn(grad_outputs)`; post: its hooks `fn(grad_inputs,
    grad_outputs)`; accumulated: a leaf's post-accumulate-grad hooks `fn(tensor)`;
    zeros: per output index of a node, (namespace, shape, dtype, device) of the tensor a hook
    or retain_grad was registered on: what its hooks see when its gradient is known to be
    zero (ZERO; a node holds no tensor of its outputs to take it from)."""

    __slots__ = ("tensor", "retain", "pre", "post", "accumulated", "metadata", "zeros")

    def __init__(self) -> None:
        self.tensor: dict[int, list] = {}
        self.retain: dict[int, Any] = {}
        self.pre: list = []
        self.post: list = []
        self.accumulated: list = []
        self.metadata: dict = {}
        self.zeros: dict[int, tuple] = {}


def hooks_of(node: Any) -> Hooks:
    """The Hooks of a node or accumulator, made on first use."""
    hooks = getattr(node, "hooks", None)
    if hooks is None:
        hooks = node.hooks = Hooks()
    return hooks


class GradNode:
    """What every node of the graph offers (a Node, an AccumulateGrad): PyTorch's grad_fn
    interface. `isinstance(t.grad_fn, autograd.graph.Node)` holds."""

    __slots__ = ()

    @property
    def next_functions(self) -> tuple:
        """Per input: (the node its gradient goes to, output index), (None, 0) if none."""
        out = []
        for e in self.edges:
            if e is None:
                out.append((None, 0))
            elif e.__class__ is Port:
                out.append((e.node, e.index))
            else:
                out.append((e, 0))
        return tuple(out)

    @property
    def metadata(self) -> dict:
        """A dict for the user's own annotations."""
        return hooks_of(self).metadata

    def register_prehook(self, fn: Any) -> RemovableHandle:
        """Call `fn(grad_outputs)` before the node runs; a tuple it returns replaces them."""
        return RemovableHandle(hooks_of(self).pre, fn)

    def register_hook(self, fn: Any) -> RemovableHandle:
        """Call `fn(grad_inputs, grad_outputs)` after the node ran; a tuple it returns
        replaces grad_inputs (None where an input needs no gradient)."""
        return RemovableHandle(hooks_of(self).post, fn)


class ComplexFit(tuple):
    """Node.fit of a node that meets complex values (see Node.meets_complex): per input, the
    (shape, dtype) to sum and cast its gradient to, or None, as a plain fit."""

    __slots__ = ()


# The fits of one- and two-input nodes that meet complex values and need nothing else.
COMPLEX_ONE, COMPLEX_TWO = ComplexFit((None,)), ComplexFit((None, None))


class Node(GradNode):
    """One recorded primitive.

    edges: per input, where its gradient goes (a Node, a Port, an AccumulateGrad), or None.
    saved: one slot per input, then one per output, then (custom Functions only) values that
    are neither; a slot holds a raw array (or a Python scalar) or None. None when nothing was
    saved (such a node can run again, as in PyTorch); RELEASED once freed. A saved input is
    its raw array, never the tensor: no node keeps a leaf alive, and under create_graph the
    engine rewraps it on the input's edge. A saved output is rewrapped with this node as its
    grad_fn: no out -> node -> out cycle.
    params: the rule's static parameters. fit: None, or per input (shape, dtype) to sum and
    cast its gradient to (None where nothing to do), when inputs were broadcast or promoted.
    versions: None, or (slot, VersionCounter, version) for saved tensors that need no grad
    (they may be written in place; the engine refuses a stale one). n_out: outputs.
    meets_complex (a property kept in `fit`): an input or output of a rule not "own" for
    complex values was complex when recorded: the engine runs the node by PyTorch's
    convention for complex gradients (`autograd._engine.apply_complex`); decided per node,
    never by what else ran before. (Every such rule of the table makes a complex result of a
    complex input, or refuses it: the one- and two-input fast paths look at the result's dtype
    only.) It lives in `fit`, as a ComplexFit, because the engine reads `fit` of every node
    anyway: a slot of its own cost W1 about 180 instructions per operation (its store in
    __init__ and the engine's test).
    hooks: unset until a hook, retain_grad or metadata asks for a Hooks. fw: unset unless
    recorded while inputs had tangents (forward mode): what the saved values' tangents are
    made of (see autograd.forward_ad.keep_saved_tangents)."""

    __slots__ = (
        "rule", "edges", "saved", "params", "fit", "versions", "n_out", "trace",
        "hooks", "fw", "__weakref__",
    )  # fmt: skip

    def __init__(
        self,
        rule: Rule,
        edges: tuple,
        saved: tuple | None,
        params: Any,
        fit: tuple | None = None,
        versions: tuple | None = None,
        n_out: int = 1,
    ) -> None:
        self.rule = rule
        self.edges = edges
        self.saved = saved
        self.params = params
        self.fit = fit
        self.versions = versions
        self.n_out = n_out

    @property
    def meets_complex(self) -> bool:
        return self.fit.__class__ is ComplexFit

    @meets_complex.setter
    def meets_complex(self, value: bool) -> None:
        fit = self.fit
        if value and fit.__class__ is not ComplexFit:
            self.fit = ComplexFit((None,) * len(self.edges) if fit is None else fit)
        elif not value and fit.__class__ is ComplexFit:
            self.fit = None if all(f is None for f in fit) else tuple(fit)

    def name(self) -> str:
        """The node's name: PyTorch's where PyTorch has the op (MulBackward0, SumBackward1),
        else the primitive's, then 'Backward'."""
        rule = self.rule
        return rule.backward_name if rule.naming is None else rule.naming(self)

    def __repr__(self) -> str:
        return f"<{self.name()} node>"

    def created(self) -> str:
        """Where the node was recorded (under detect_anomaly), else ''."""
        trace = getattr(self, "trace", None)
        if trace is None:
            return ""
        return f"\n{self.name()} was created by:\n" + "".join(trace)

    def stale(self) -> tuple | None:
        """The (slot, counter, version) of a saved tensor written since it was saved, if any."""
        versions = self.versions
        if versions is not None:
            for v in versions:
                if v[1].value != v[2]:
                    return v
        saved = self.saved
        if written_arrays and saved.__class__ is tuple:
            for i, a in enumerate(saved):
                entry = written_arrays.get(id(a))
                if entry is not None and entry[0]() is a:
                    return (i, entry[1], entry[2])
        return None


class Port:
    """Output `index` of a node with several outputs, as the edge of that output's tensor."""

    __slots__ = ("node", "index")

    def __init__(self, node: Node, index: int) -> None:
        self.node = node
        self.index = index


def node_of(edge: Any) -> Any:
    """The node an edge leads to."""
    return edge.node if edge.__class__ is Port else edge


class AccumulateGrad(GradNode):
    """Where a leaf's gradient arrives. Holds its leaf weakly: the leaf holds it strongly."""

    __slots__ = ("leaf", "hooks", "__weakref__")
    edges = ()
    saved = None

    def __init__(self, leaf: Any) -> None:
        self.leaf = weakref.ref(leaf)

    def name(self) -> str:
        return "AccumulateGrad"

    def __repr__(self) -> str:
        return "<AccumulateGrad>"

    @property
    def variable(self) -> Any:
        """The leaf tensor (None once it is gone)."""
        return self.leaf()

    def stale(self) -> None:
        """A leaf saves nothing: never stale."""
        return None


_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def remember(node: Node) -> Node:
    """Keep the user's frames that recorded `node` (detect_anomaly only)."""
    frames = [f for f in traceback.extract_stack()[:-2] if not f.filename.startswith(_PACKAGE)]
    node.trace = traceback.format_list(frames[-6:])
    return node
