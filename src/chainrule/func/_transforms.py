"""grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd and hessian, with torch.func's
names and semantics, over pytrees, composable to any depth.

Reverse transforms run `f` on new tensors standing for the differentiated inputs (a view of
an input that already requires grad, so an outer transform sees through; else a fresh leaf),
always recording (an outer no_grad is ignored, one inside `f` respected), and take gradients
with autograd.grad, which leaves `.grad` alone. The gradients are built as a graph only when
something outside the transform needs it (`f` reads a tensor that requires grad, or an input
does); results are cut from the transform's own leaves. Forward transforms open a dual level
of their own (levels nest, so jvp of jvp and jvp of grad work)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from .. import _backend, _rules, _tensor
from .. import _namespace as ops
from .._batching import level_of
from .._inplace import undo_writes
from .._node import AccumulateGrad, node_of
from .._tensor import Tensor, enable_grad, grad_mode
from ..autograd import forward_ad
from ..autograd import grad as _autograd_grad
from ..utils.tree import tree_flatten, tree_unflatten
from ._vmap import vmap as _vmap

__all__ = [
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "vjp",
]

_Argnums = int | tuple[int, ...]


# ----------------------------------------------------------------------------- helpers


def _argnums(argnums: _Argnums, n: int, what: str) -> tuple[int, ...]:
    one = isinstance(argnums, int)
    nums = (argnums,) if one else tuple(argnums)
    if not nums:
        raise RuntimeError(f"{what}: argnums must be non-empty")
    out = []
    for a in nums:
        if not isinstance(a, int):
            raise RuntimeError(f"{what}: argnums must be int or Tuple[int, ...], got: {a!r}")
        if not -n <= a < n:
            raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
        out.append(a % n)
    if len(set(out)) != len(out):
        raise RuntimeError(f"{what}: argnums must be unique, got {argnums}")
    return tuple(out)


def _tensor_leaves(tree: Any, what: str, role: str) -> tuple[list, Any]:
    """The leaves of a pytree of tensors and None (which transforms pass through)."""
    leaves, spec = tree_flatten(tree)
    for x in leaves:
        if x.__class__ is not Tensor and x is not None:
            raise ValueError(
                f"{what}: Thing passed to transform API must be Tensor, got {type(x)} (in {role})"
            )
    return leaves, spec


def _inner(x: Tensor, outer_grad: bool) -> Tensor:
    """The tensor a reverse transform differentiates by in place of x."""
    if x.dtype.kind not in "fc":
        raise RuntimeError("only Tensors of floating point and complex dtype can require gradients")
    levels = grad_mode.vmap
    if levels and level_of(x._data) < levels[-1][0]:
        # Inside vmap, differentiated inputs are per sample: an input the same for every
        # sample is lifted to the innermost level, so that its gradient comes out batched.
        level, n, _ = levels[-1]
        x = _rules.OPS["batch"](x, (level, n, None))
    if x._edge is not None and outer_grad:
        # A view, recorded: gradients of an outer transform (or the user) reach x through it.
        return _rules.OPS["reshape"](x, (x.shape, x.shape))
    leaf = Tensor(x._data, x._xp, None)
    _tensor.same_values(x, leaf)
    fw = forward_ad._tangents_of(x)
    if fw:
        leaf._fw = fw
    return leaf.requires_grad_(True)


def _reaches_outside(tensors, inner: set) -> bool:
    """Whether the graph of `tensors` leads to a leaf other than the transform's own."""
    stack = [node_of(t._edge) for t in tensors if t._edge is not None]
    seen = set()
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        if node.__class__ is AccumulateGrad:
            if node not in inner:
                return True
            continue
        stack.extend(node_of(e) for e in node.edges if e is not None)
    return False


def _shallow(t: Tensor, inner: set, keep: bool) -> Tensor:
    """A new tensor of t's values and tangents, on t's edge if `keep` and t's graph leads
    outside the transform, else cut from the graph."""
    edge = t._edge if keep and t._edge is not None and _reaches_outside([t], inner) else None
    out = Tensor(t._data, t._xp, edge)
    _tensor.same_values(t, out)
    fw = getattr(t, "_fw", None)
    if fw is not None:
        out._fw = fw
    return out


def _cut(t: Any, inner: set, keep: bool) -> Any:
    """t as a transform returns it: a new tensor, which keeps its graph only if `keep` and
    the graph leads outside the transform (so that outer transforms, or the user,
    differentiate it); its tangents (and theirs) likewise."""
    if t.__class__ is not Tensor:
        return t
    out = _shallow(t, inner, keep)
    stack = [out]
    while stack:
        x = stack.pop()
        fw = forward_ad._tangents_of(x)
        if fw:
            x._fw = {level: _shallow(v, inner, keep) for level, v in fw.items()}
            stack.extend(x._fw.values())
        elif getattr(x, "_fw", None) is not None:
            x._fw = None
    return out


def _cut_tree(tree: Any, inner: set, keep: bool) -> Any:
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([_cut(x, inner, keep) for x in leaves], spec)


class _Reverse:
    """One reverse transform's call of f: its inner tensors, the output, and how to take
    gradients of it (a graph or not)."""

    def __init__(
        self, what: str, f: Callable, args: tuple, nums: tuple[int, ...], given: Any = None
    ) -> None:
        self.what = what
        self.outer_grad = grad_mode.enabled
        self.specs = []
        self.xs = []
        args = list(args)
        for a in nums:
            leaves, spec = _tensor_leaves(args[a], what, f"argument {a}")
            with enable_grad():
                inner = [None if x is None else _inner(x, self.outer_grad) for x in leaves]
            args[a] = tree_unflatten(inner, spec)
            self.specs.append(spec)
            self.xs.append(inner)
        self.flat = [x for xs in self.xs for x in xs if x is not None]
        self.inner = {x._edge for x in self.flat if x._edge.__class__ is AccumulateGrad}
        with enable_grad():
            self.result = _refusing_captured(f, args, self.flat, given)

    def decide(self, outputs: list) -> None:
        """Whether gradients are built as a graph: when grad mode was on outside and the
        outputs lead to a leaf outside the transform."""
        self.create_graph = self.outer_grad and _reaches_outside(outputs, self.inner)

    def gradients(self, outputs: list, cotangents, retain_graph: bool) -> list:
        """The gradients of `outputs` (weighted by `cotangents`) by each inner tensor,
        zeros where an input is not used; per differentiated argument, in its structure
        (None where it holds None)."""
        create_graph = self.create_graph or (
            grad_mode.enabled
            and cotangents is not None
            and any(c is not None and c._edge is not None for c in cotangents)
        )
        live = [i for i, o in enumerate(outputs) if o is not None and o._edge is not None]
        gs = (None,) * len(self.flat)
        if live:
            gs = _autograd_grad(
                [outputs[i] for i in live],
                self.flat,
                None if cotangents is None else [cotangents[i] for i in live],
                retain_graph=retain_graph,
                create_graph=create_graph,
                allow_unused=True,
            )
        gs = [ops.zeros_like(x) if g is None else g for x, g in zip(self.flat, gs)]
        found = iter(_cut(g, self.inner, self.create_graph or create_graph) for g in gs)
        return [
            tree_unflatten([None if x is None else next(found) for x in xs], spec)
            for spec, xs in zip(self.specs, self.xs)
        ]

    def cut(self, tree: Any) -> Any:
        """A value f returned, as the transform returns it."""
        return _cut_tree(tree, self.inner, self.create_graph)


def _split_aux(result: Any, has_aux: bool, what: str) -> tuple[Any, Any]:
    if not has_aux:
        return result, None
    if not (isinstance(result, tuple) and len(result) == 2):
        raise RuntimeError(
            f"{what}: output of function f should be a tuple: (output, aux) if has_aux is True"
        )
    return result


def _real_only(name: str, tree: Any, role: str) -> None:
    """jacrev and jacfwd take real inputs and outputs only (as PyTorch's): with complex ones,
    rows by VJPs would hold conj(J) (and lose what a real input's imaginary direction gives)
    where columns by JVPs hold J, so neither is "the" Jacobian."""
    for i, t in enumerate(tree_flatten(tree)[0]):
        if t.__class__ is Tensor and _backend.dtype_kind(t._data.dtype) == "c":
            raise RuntimeError(
                f"{name}: Expected all {role} to be real but received complex tensor at "
                f"flattened input idx: {i}"
            )


def _only_tensors(tree: Any, what: str, call: str) -> tuple[list, Any]:
    leaves, spec = tree_flatten(tree)
    for o in leaves:
        if o.__class__ is not Tensor and o is not None:
            raise RuntimeError(
                f"{what}: Expected {call} to return only tensors, got unsupported type {type(o)}"
            )
    return leaves, spec


# ----------------------------------------------------------------------------- reverse mode


def grad_and_value(func: Callable, argnums: _Argnums = 0, has_aux: bool = False) -> Callable:
    """A function returning (the gradient of func by the arguments `argnums`, its value); func
    returns a scalar tensor (with has_aux: (scalar, aux), and the value is (scalar, aux)).
    The gradient has the structure of the argument (a tuple of them for a tuple argnums)."""
    what = "grad_and_value(f)(*args)"

    def wrapper(*args: Any, **kwargs: Any) -> tuple:
        nums = _argnums(argnums, len(args), what)
        call = _Reverse(what, lambda *a: func(*a, **kwargs), args, nums, kwargs)
        out, aux = _split_aux(call.result, has_aux, what)
        if out.__class__ is not Tensor:
            raise RuntimeError(f"{what}: Expected f(*args) to return a Tensor, got {type(out)}")
        if out.ndim != 0:
            raise RuntimeError(
                f"{what}: Expected f(*args) to return a scalar Tensor, got tensor with "
                f"{out.ndim} dims. Maybe you wanted to use the vjp or jacrev APIs instead?"
            )
        call.decide([out])
        grads = call.gradients([out], None, retain_graph=call.create_graph)
        grads = grads[0] if isinstance(argnums, int) else tuple(grads)
        value = call.cut(out)
        return (grads, (value, call.cut(aux))) if has_aux else (grads, value)

    return wrapper


def grad(func: Callable, argnums: _Argnums = 0, has_aux: bool = False) -> Callable:
    """A function returning the gradient of scalar func by the arguments `argnums` (with
    has_aux: (gradient, aux)). See grad_and_value."""
    with_value = grad_and_value(func, argnums, has_aux)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        grads, value = with_value(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads

    return wrapper


def vjp(func: Callable, *primals: Any, has_aux: bool = False) -> tuple:
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents), cotangents in the structure of
    func's output, returns the vector-Jacobian products by every primal, as a tuple (always),
    and can be called again."""
    return _vjp(func, primals, has_aux)


def _vjp(func: Callable, primals: tuple, has_aux: bool, given: Any = None) -> tuple:
    """vjp; `given`: the arguments of a transform built on it (jacrev) that func closes over,
    which it may write in place as the primals."""
    what = "vjp(f, *primals)"
    call = _Reverse(what, func, primals, tuple(range(len(primals))), given)
    out, aux = _split_aux(call.result, has_aux, what)
    outputs, out_spec = _only_tensors(out, what, "f(*primals)")
    call.decide(outputs)

    def vjp_fn(cotangents: Any) -> tuple:
        leaves, spec = tree_flatten(cotangents)
        if spec != out_spec:
            raise RuntimeError(
                "Expected pytree structure of cotangents to be the same as pytree structure of "
                f"outputs to the function. cotangents: {spec}, primal output: {out_spec}"
            )
        cts = [None if o is None else _tensor.as_tensor(c) for o, c in zip(outputs, leaves)]
        return tuple(call.gradients(outputs, cts, retain_graph=True))

    result = (call.cut(out), vjp_fn)
    return result + (call.cut(aux),) if has_aux else result


def _basis(o: Tensor) -> Tensor:
    """The one-hot tensors shaped like o, one per element, stacked: (o.size, *o.shape)."""
    n = o.size
    eye = _tensor.constant(o._xp.eye(n, dtype=o._data.dtype), o._xp)
    return ops.reshape(eye, (n, *o.shape))


def _zeros(shape: tuple, like: Tensor) -> Tensor:
    """Zeros of `shape` in like's library and dtype."""
    return _tensor.constant(like._xp.zeros(shape, dtype=like._data.dtype), like._xp)


def _stacked(rows: list, lead: tuple, like: Tensor) -> Tensor:
    """rows (each shaped like `like`) stacked into shape lead + like.shape."""
    if not rows:
        return _zeros(lead + like.shape, like)
    return ops.reshape(ops.stack(rows), lead + like.shape)


def jacrev(
    func: Callable,
    argnums: _Argnums = 0,
    *,
    has_aux: bool = False,
    chunk_size: int | None = None,
) -> Callable:
    """A function returning the Jacobian of func by the arguments `argnums`, one row per
    output element by a vector-Jacobian product: for each output (in func's output
    structure), the structure of the argument (a tuple of them for a tuple argnums) holding
    arrays of shape output.shape + input.shape. The rows of one output are computed in one
    batched backward walk, or with `chunk_size` in walks of at most that many rows (less
    memory, same result; 1 is a plain loop)."""
    what = "jacrev(f)(*args)"
    if chunk_size is not None and (isinstance(chunk_size, bool) or chunk_size < 1):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), what)
        _real_only("jacrev", args, "inputs")

        def partial(*diff: Any) -> Any:
            full = list(args)
            for a, d in zip(nums, diff):
                full[a] = d
            return func(*full, **kwargs)

        found = _vjp(partial, tuple(args[a] for a in nums), has_aux, (args, kwargs))
        out, vjp_fn = found[0], found[1]
        _real_only("jacrev", out, "outputs")
        outputs, out_spec = tree_flatten(out)
        inputs, in_spec = tree_flatten(tuple(args[a] for a in nums))
        jacobians = []
        for k, o in enumerate(outputs):
            if o is None:
                jacobians.append(None)
                continue
            live = [i for i, x in enumerate(inputs) if x is not None]

            def row(e: Tensor, k: int = k, live: list = live) -> tuple:
                # The gradients of every input leaf along one output element's one-hot e.
                cts = [
                    e if j == k else None if p is None else ops.zeros_like(p)
                    for j, p in enumerate(outputs)
                ]
                grads = tree_flatten(vjp_fn(tree_unflatten(cts, out_spec)))[0]
                return tuple(grads[i] for i in live)

            # One batched backward walk for all of o's elements (vmap over the one-hots).
            rows = _vmap(row, chunk_size=chunk_size)(_basis(o)) if o.size else None
            blocks: list = [None] * len(inputs)
            for r, i in enumerate(live):
                x = inputs[i]
                blocks[i] = (
                    ops.reshape(rows[r], o.shape + x.shape)
                    if rows
                    else _zeros(o.shape + x.shape, x)
                )
            per_arg = tree_unflatten(blocks, in_spec)
            jacobians.append(per_arg[0] if isinstance(argnums, int) else per_arg)
        result = tree_unflatten(jacobians, out_spec)
        return (result, found[2]) if has_aux else result

    return wrapper


# ----------------------------------------------------------------------------- forward mode


def jvp(
    func: Callable, primals: tuple, tangents: tuple, *, strict: bool = False, has_aux: bool = False
) -> tuple:
    """(func(*primals), the Jacobian-vector product along `tangents`[, aux]), by forward
    mode: one evaluation of func. primals and tangents are tuples of the same structure; the
    JVP has the structure of func's output (zeros where an output does not depend on the
    primals; with `strict`, such an output raises)."""
    return _jvp(func, primals, tangents, strict, has_aux)


def _jvp(
    func: Callable, primals: tuple, tangents: tuple, strict: bool, has_aux: bool, given: Any = None
) -> tuple:
    """jvp; `given`: the arguments of a transform built on it (jacfwd) that func closes over,
    which it may write in place as the primals."""
    what = "jvp(f, primals, tangents)"
    if not isinstance(primals, tuple):
        raise RuntimeError(
            f"{what}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals)."
        )
    if not isinstance(tangents, tuple):
        raise RuntimeError(f"{what}: Expected tangents to be a tuple.")
    xs, spec = _tensor_leaves(primals, what, "primals")
    ts, t_spec = _tensor_leaves(tangents, what, "tangents")
    if spec != t_spec or any((x is None) != (t is None) for x, t in zip(xs, ts)):
        raise RuntimeError(
            f"{what}: Expected primals and tangents to have the same python structure. For "
            f"example, if primals is a tuple of 3 tensors, tangents also must be. Got "
            f"primals with structure {spec} and tangents with structure {t_spec}"
        )
    level = forward_ad.enter_dual_level()
    try:
        duals = [
            None if x is None else forward_ad.make_dual(x, t, level=level) for x, t in zip(xs, ts)
        ]
        made = tree_unflatten(duals, spec)
        result = _refusing_captured(func, made, [*xs, *ts, *duals], (primals, given))
        out, aux = _split_aux(result, has_aux, what)
        outputs, out_spec = _only_tensors(out, what, "f(*primals)")
        pairs = [
            (None, None) if o is None else forward_ad.unpack_dual(o, level=level) for o in outputs
        ]
        values = [p[0] for p in pairs]
        if strict and any(p[0] is not None and p[1] is None for p in pairs):
            raise RuntimeError(
                "jvp(f, primals, tangents, strict=True): The output of f is independent of the "
                "inputs. This is not allowed with strict=True."
            )
        jvps = [p[1] if p[0] is None or p[1] is not None else ops.zeros_like(p[0]) for p in pairs]
        if has_aux:
            aux_leaves, aux_spec = tree_flatten(aux)
            aux = tree_unflatten(
                [forward_ad.unpack_dual(a, level=level).primal for a in aux_leaves], aux_spec
            )
    finally:
        forward_ad.exit_dual_level(level=level)
    result = (tree_unflatten(values, out_spec), tree_unflatten(jvps, out_spec))
    return result + (aux,) if has_aux else result


def linearize(func: Callable, *primals: Any) -> tuple:
    """(func(*primals), jvp_fn): jvp_fn(*tangents) returns the JVP of func at primals along
    tangents. chainrule records no program to replay: each call evaluates func once more in
    forward mode, on copies of the primals as they were given (a func that writes into its
    arguments is linearized where it was called, as PyTorch's traced program is)."""
    leaves, spec = tree_flatten(primals)
    kept = [ops.asarray(x, copy=True) if x.__class__ is Tensor else x for x in leaves]
    out = func(*primals)
    _only_tensors(out, "linearize(f, *primals)", "f(*primals)")

    def jvp_fn(*tangents: Any) -> Any:
        copies = [ops.asarray(x, copy=True) if x.__class__ is Tensor else x for x in kept]
        return jvp(func, tree_unflatten(copies, spec), tangents)[1]

    return out, jvp_fn


def jacfwd(
    func: Callable,
    argnums: _Argnums = 0,
    has_aux: bool = False,
    *,
    randomness: str = "error",
) -> Callable:
    """A function returning the Jacobian of func by the arguments `argnums`, one column per
    input element by a forward-mode JVP; structured as jacrev's. The columns are computed
    in one batched pass; `randomness` is that pass's vmap randomness ('error', 'different'
    or 'same')."""
    what = "jacfwd(f)(*args)"

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nums = _argnums(argnums, len(args), what)
        _real_only("jacfwd", args, "inputs")
        diff = tuple(args[a] for a in nums)
        inputs, spec = _tensor_leaves(diff, what, "the differentiated arguments")

        def partial(*leaves: Any) -> Any:
            full = list(args)
            for a, d in zip(nums, tree_unflatten(list(leaves), spec)):
                full[a] = d
            return func(*full, **kwargs)

        sizes = [0 if x is None else x.size for x in inputs]
        total = sum(sizes)
        if not total:  # no column to push: one evaluation gives the outputs' shapes
            zeros = [None if x is None else ops.zeros_like(x) for x in inputs]
            found = _jvp(partial, tuple(inputs), tuple(zeros), False, has_aux, (args, kwargs))
            _real_only("jacfwd", found[0], "outputs")
            outputs, out_spec = tree_flatten(found[0])
            aux = found[2] if has_aux else None
            cols = [None if o is None else _zeros(o.shape + (0,), o) for o in outputs]
        else:
            # Every column of every input in one batched forward pass (vmap over the one-hots
            # of all input elements together), so func runs once, as PyTorch's: its side
            # effects (writes into its arguments or captured tensors, random draws) happen once.
            bases, start = [], 0
            for x, n in zip(inputs, sizes):
                if x is not None:
                    eye = _tensor.constant(x._xp.eye(total, dtype=x._data.dtype), x._xp)
                    bases.append(ops.reshape(eye[:, start : start + n], (total, *x.shape)))
                start += n
            found_spec: list = []

            def column(*es: Tensor) -> list:
                it = iter(es)
                ts = tuple(None if x is None else next(it) for x in inputs)
                found = _jvp(partial, tuple(inputs), ts, False, has_aux, (args, kwargs))
                _real_only("jacfwd", found[0], "outputs")
                tangents, spec_out = tree_flatten(found[1])
                leaves, spec_aux = tree_flatten(found[2]) if has_aux else ([], None)
                found_spec[:] = [spec_out, spec_aux, len(tangents), leaves]
                return tangents + [a for a in leaves if a.__class__ is Tensor]

            # A tensor captured from outside that func writes in place is refused, as PyTorch
            # does, and then every tensor it wrote is left as it was before (undo_writes:
            # nothing half done); without one, the arguments keep their writes (one call's).
            passed = {id(t) for t in tree_flatten((args, kwargs))[0] if isinstance(t, Tensor)}
            writes: dict = {}
            outer, grad_mode.writes = grad_mode.writes, writes
            try:
                batched = _vmap(column, out_dims=-1, randomness=randomness)(*bases)
                if any(k not in passed for k in writes):
                    _refuse_captured(undo_writes(writes), passed)
                writes.clear()
            finally:
                grad_mode.writes = outer
                undo_writes(writes)
            out_spec, aux_spec, n_out, aux_leaves = found_spec
            cols = batched[:n_out]
            aux = None
            if has_aux:  # the same for every column: the first one's (other objects as given)
                tensors = iter(batched[n_out:])
                aux_leaves = [
                    next(tensors)[..., 0] if a.__class__ is Tensor else a for a in aux_leaves
                ]
                aux = tree_unflatten(aux_leaves, aux_spec)
        jacobians = []
        for c in cols:
            if c is None:
                jacobians.append(None)
                continue
            blocks, start = [], 0
            for x, n in zip(inputs, sizes):
                blocks.append(
                    None
                    if x is None
                    else ops.reshape(c[..., start : start + n], c.shape[:-1] + x.shape)
                )
                start += n
            per_arg = list(tree_unflatten(blocks, spec))
            jacobians.append(per_arg[0] if isinstance(argnums, int) else tuple(per_arg))
        result = tree_unflatten(jacobians, out_spec)
        return (result, aux) if has_aux else result

    return wrapper


_CAPTURED = (
    "During a grad (vjp, jvp, grad, etc) transform, the function provided attempted to call "
    "in-place operation on a Tensor that would mutate a captured Tensor. This is not "
    "supported; please rewrite the function being transformed to explicitly accept the "
    "mutated Tensor(s) as inputs."
)


def _refusing_captured(f: Callable, args: Any, made: list, given: Any = None) -> Any:
    """f(*args), refusing as PyTorch does a write in place into a tensor captured from
    outside: the tensors f writes are noted (grad_mode.writes), and one that outlives the
    call without being an argument (as given, `given` where the transform's `args` stand in
    for them, or one the transform `made` for them), nor returned (nor the base of a view
    returned), came from outside: every write is undone and PyTorch's RuntimeError raised.
    (A captured tensor returned as it is passes for one f made; see below for compile.) The
    notes of writes into the arguments go on to an enclosing transform's, which may have to
    undo them."""
    if grad_mode.extended and grad_mode.tracer is not None:
        # Under compile's trace every tensor lives on (the trace holds it), so what f made
        # can't be told from what it captured that way: not checked while tracing (the writes
        # go to an enclosing jacfwd's notes, as they did).
        return f(*args)
    writes: dict = {}
    outer, grad_mode.writes = grad_mode.writes, writes
    try:
        result = f(*args)
        if writes:
            kept = {id(t) for t in made}
            kept.update(id(t) for t in tree_flatten((args, given))[0] if isinstance(t, Tensor))
            passed = set(kept)
            for t in tree_flatten(result)[0]:
                if t.__class__ is Tensor:
                    kept.add(id(t))
                    view = getattr(t, "_view", None)
                    if view is not None:
                        kept.add(id(view.base))
            if any(k not in kept and note[0]() is not None for k, note in writes.items()):
                undo_writes(writes)
                raise RuntimeError(_CAPTURED)
            if outer is not None:
                for k in passed & writes.keys():
                    outer.setdefault(k, writes[k])
            writes.clear()
    finally:
        grad_mode.writes = outer
        undo_writes(writes)
    return result


def _refuse_captured(written: list, passed: set) -> None:
    """Raise PyTorch's RuntimeError if a tensor that jacfwd's pass wrote in place (and
    undid) outlives it without being an argument: one captured from outside (or kept)."""
    if any(id(t) not in passed for t in written):
        raise RuntimeError(_CAPTURED)


def hessian(func: Callable, argnums: _Argnums = 0) -> Callable:
    """A function returning the Hessian of scalar func by the arguments `argnums`: jacfwd of
    jacrev (forward over reverse)."""
    return jacfwd(jacrev(func, argnums), argnums)


# ----------------------------------------------------------------------------- functionalize


def functionalize(func: Callable, *, remove: str = "mutations") -> Callable:
    """torch.func.functionalize: `func` with its in-place writes (and with
    remove="mutations_and_views" its views) turned into out-of-place operations, so that
    transforms can handle it; same results. chainrule's transforms, vmap and compile handle
    in-place writes and views themselves (a write through a view rebases its base, see the
    views page), so the function runs as written: this returns it, wrapped, unchanged."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(
            f"functionalize(f, remove='mutations'): received invalid argument for "
            f"remove={remove}. Valid options are:\n"
            "     remove='mutations': all inplace and out= operators will be removed from the "
            "program, and replaced with their out-of-place equivalents.\n"
            "     remove='mutations_and_views': In addition to the above, all aliasing "
            "operators {view} will be replaced with their non-aliasing counterparts, "
            "{view}_copy.\n"
        )

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    return wrapper
