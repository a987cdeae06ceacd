"""Activation checkpointing: run a block without keeping what its operations save for
backward, and recompute it when backward needs those values. Built on saved-tensor hooks:
the block's graph is recorded as usual, but each saved value is packed as its index in the
block; the first unpack in a backward runs the block again and collects them (stopping as
soon as it has them all). Selective checkpointing keeps the values of chosen operations."""

from __future__ import annotations

import contextlib
import enum
import threading
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager as ContextManager
from typing import Any

from .. import random
from .._mode import enable_grad, grad_mode
from .._tensor import Tensor, version_counter
from ..autograd import _engine
from ..autograd.forward_ad import make_dual, unpack_dual
from ..autograd.graph import saved_tensors_hooks

__all__ = [
    "CheckpointError",
    "CheckpointPolicy",
    "SelectiveCheckpointContext",
    "checkpoint",
    "checkpoint_sequential",
    "create_selective_checkpoint_contexts",
    "noop_context_fn",
    "set_checkpoint_early_stop",
]

_DETERMINISM_CHECKS = ("default", "none")


class CheckpointError(RuntimeError):
    """The recomputation of a checkpointed block did not save what its first run saved."""


class _Stop(Exception):
    """Raised inside a recomputation once it has every value: the rest need not run."""


class _Settings(threading.local):
    early_stop: bool | None = None  # set_checkpoint_early_stop's, over checkpoint's argument
    policy: Any = None  # the selective checkpointing policy of the block running forward


_SETTINGS = _Settings()


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool) -> Iterator[None]:
    """Within this context, recomputations stop as soon as they have every saved value
    (True, the default) or run the whole block (False), whatever checkpoint's early_stop."""
    prev = _SETTINGS.early_stop
    _SETTINGS.early_stop = bool(enable)
    try:
        yield
    finally:
        _SETTINGS.early_stop = prev


def noop_context_fn() -> tuple[ContextManager, ContextManager]:
    """checkpoint's default context_fn: no context around the first run or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


class _Frame:
    """One checkpointed call: its function and inputs, and while a backward runs, the
    values that the recomputation saved, in the order the first run saved them. Values that
    the selective policy keeps are held from the first run on."""

    def __init__(
        self,
        function: Callable[..., Any],
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        rng: Any,
        recompute_context: Callable[[], ContextManager],
        check: bool,
        debug: bool,
        early_stop: bool,
    ) -> None:
        self.function = function
        self.args = args
        self.kwargs = kwargs
        self.rng = rng
        self.recompute_context = recompute_context
        self.check = check
        self.debug = debug
        self.early_stop = early_stop
        self.count = 0
        self.meta: list[tuple] = []  # per saved value: (shape, dtype) for the check
        self.where: list[str] = []  # with debug: the operation and line that saved it
        self.kept: dict[int, tuple] = {}  # index: (value, version counter, version)
        self.values: list[Tensor | None] = []
        self.run: object | None = None
        # The forward-mode and vmap levels of the first run: its values are of them.
        self.levels = (grad_mode.forward, tuple(level for level, _, _ in grad_mode.vmap))

    def pack(self, t: Tensor) -> int:
        index = self.count
        self.count += 1
        if self.check:
            self.meta.append((t.shape, t.dtype))
        if self.debug:
            self.where.append(_where(grad_mode.packing))
        policy = _SETTINGS.policy
        if policy is not None and policy.keeps(grad_mode.packing):
            vc = version_counter(t)
            self.kept[index] = (t.detach(), vc, vc.value, policy.allow_mutation)
        return index

    def unpack(self, index: int) -> Tensor:
        kept = self.kept.get(index)
        if kept is not None:
            value, vc, version, allow_mutation = kept
            if vc.value != version and not allow_mutation:
                raise CheckpointError(
                    "chainrule.utils.checkpoint: a value kept by the selective checkpointing "
                    "policy was written in place after it was saved; pass "
                    "allow_cache_entry_mutation=True to create_selective_checkpoint_contexts "
                    "to allow it"
                )
            return value
        run = _engine.current_run()
        if self.run is not run or self.values[index] is None:
            self.run = run
            self.values = self._recompute()
        value = self.values[index]
        self.values[index] = None  # each value is unpacked once per backward
        return value

    def _recompute(self) -> list[Tensor | None]:
        dual, mapped = self.levels
        active = tuple(level for level, _, _ in grad_mode.vmap)
        if any(lv not in grad_mode.forward for lv in dual) or any(
            lv not in active for lv in mapped
        ):
            raise CheckpointError(
                "chainrule.utils.checkpoint: the block ran inside a forward-mode level or a "
                "vmap that has exited since (jacrev of jacfwd, a backward from outside a "
                "vmap): its values can't be recomputed there. Checkpoint outside the "
                "transform, or differentiate inside it (jacfwd of jacrev, vmap of grad)."
            )
        values: list[Tensor | None] = []
        meta: list[tuple] = []
        where: list[str] = []
        stop = self.early_stop if _SETTINGS.early_stop is None else _SETTINGS.early_stop

        def collect(t: Tensor) -> int:
            values.append(t.detach())
            if self.check:
                meta.append((t.shape, t.dtype))
            if self.debug:
                where.append(_where(grad_mode.packing))
            if stop and len(values) == self.count:
                raise _Stop
            return len(values) - 1

        with enable_grad():  # a dual that needs grad is a recorded view of its primal
            args = tuple(_detached(a) if a.__class__ is Tensor else a for a in self.args)
        state = None
        if self.rng is not None:
            state = random.get_rng_state()
            random.set_rng_state(self.rng)
        policy, _SETTINGS.policy = _SETTINGS.policy, None
        try:
            with enable_grad(), saved_tensors_hooks(collect, lambda i: values[i]):
                with self.recompute_context():
                    self.function(*args, **self.kwargs)
        except _Stop:
            pass
        finally:
            _SETTINGS.policy = policy
            if state is not None:
                random.set_rng_state(state)
        if len(values) != self.count:
            raise CheckpointError(
                "chainrule.utils.checkpoint: A different number of tensors was saved during "
                "the original forward and recomputation.\n"
                f"Number of tensors saved during forward: {self.count}\n"
                f"Number of tensors saved during recomputation: {len(values)}" + self._trace(where)
            )
        if self.check:
            differ = [
                f"tensor at position {i}:\nsaved metadata: {_meta(a)}\n"
                f"recomputed metadata: {_meta(b)}\n"
                for i, (a, b) in enumerate(zip(self.meta, meta))
                if a != b
            ]
            if differ:
                raise CheckpointError(
                    "chainrule.utils.checkpoint: Recomputed values for the following tensors "
                    "have different metadata than during the forward pass.\n"
                    + "".join(differ)
                    + self._trace(where)
                )
        return values

    def _trace(self, recomputed: list[str]) -> str:
        if not self.debug:
            return "\n(run checkpoint with debug=True to see the operations of both runs)"
        lines = ["\nOperations that saved values in the original forward:"]
        lines += [f"  {i}: {w}" for i, w in enumerate(self.where)]
        lines.append("Operations that saved values in the recomputation:")
        lines += [f"  {i}: {w}" for i, w in enumerate(recomputed)]
        return "\n".join(lines)


def _detached(a: Tensor) -> Tensor:
    """An input of the recomputation: `a` detached, needing grad as `a` does, with `a`'s
    tangents at the visible forward levels (each detached likewise). Under forward mode the
    tangents' operations save values too: without the tangents the recomputation would save
    fewer than the first run (jvp of grad, jacfwd of jacrev, hessian)."""
    out = a.detach().requires_grad_(a.requires_grad)
    fw = getattr(a, "_fw", None)
    if fw:
        for level in grad_mode.forward:
            t = unpack_dual(a, level=level).tangent
            if t is not None:
                out = make_dual(out, t.detach().requires_grad_(t.requires_grad), level=level)
    return out


def _meta(m: tuple) -> str:
    return f"{{'shape': {m[0]}, 'dtype': {m[1]}}}"


def _where(node: Any) -> str:
    """The operation saving a value, and the line of user code that ran it (debug only)."""
    frames = [f for f in traceback.extract_stack() if "/chainrule/" not in f.filename]
    at = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    return (node.name() if node is not None else "?") + at


def checkpoint(
    function: Callable[..., Any],
    *args: Any,
    use_reentrant: bool | None = None,
    context_fn: Callable[[], tuple[ContextManager, ContextManager]] = noop_context_fn,
    determinism_check: str = "default",
    debug: bool = False,
    early_stop: bool = True,
    preserve_rng_state: bool = True,
    **kwargs: Any,
) -> Any:
    """`function(*args, **kwargs)`, keeping none of the values its operations save for
    backward: backward runs it once more to get them. Gradients are the same (to any order:
    double backward works), memory holds only the inputs. With preserve_rng_state the
    recomputation draws the same random numbers (chainrule.random's default generator).

    As PyTorch's: `context_fn` gives two context managers, around the first run and around
    the recomputation (create_selective_checkpoint_contexts makes a pair); with
    determinism_check="default" the recomputed values must have the shapes and dtypes of the
    first run's ("none": only their number is checked), else CheckpointError, which with
    `debug` lists the operations of both runs; `early_stop` ends the recomputation once it
    has every value. use_reentrant=True gives the same results: chainrule has one
    implementation, PyTorch's use_reentrant=False (so grad() and double backward work)."""
    if determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(
            f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, but got "
            f"{determinism_check}"
        )
    if use_reentrant and (context_fn is not noop_context_fn or debug):
        raise ValueError(
            "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
        )
    forward_context, recompute_context = context_fn()
    contexts = iter((recompute_context,))

    def recompute_ctx() -> ContextManager:
        # The pair's second is used for the first recomputation; later backwards ask
        # context_fn for a new pair, as each call of PyTorch's does.
        return next(contexts, None) or context_fn()[1]

    frame = _Frame(
        function,
        args,
        kwargs,
        random.get_rng_state() if preserve_rng_state else None,
        recompute_ctx,
        determinism_check == "default",
        debug,
        early_stop,
    )
    with saved_tensors_hooks(frame.pack, frame.unpack), forward_context:
        return function(*args, **kwargs)


def checkpoint_sequential(
    functions: Sequence[Callable[..., Any]] | Any,
    segments: int,
    input: Any,
    use_reentrant: bool | None = None,
    **kwargs: Any,
) -> Any:
    """Run `functions` (a sequence, or a module whose children run in order) one after the
    other on `input`, in `segments` checkpointed chunks; the last chunk runs normally (its
    values are needed at once by backward)."""
    if not isinstance(functions, Sequence):
        functions = list(functions.children())
    functions = list(functions)
    if segments < 1:
        raise ValueError(f"checkpoint_sequential: segments must be positive, got {segments}")
    size = -(-len(functions) // segments)

    def run(chunk: list[Callable[..., Any]]) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for f in chunk:
                x = f(x)
            return x

        return forward

    chunks = [functions[i : i + size] for i in range(0, len(functions), size)]
    for chunk in chunks[:-1]:
        input = checkpoint(run(chunk), input, use_reentrant=use_reentrant, **kwargs)
    return run(chunks[-1])(input) if chunks else input


# ----------------------------------------------------------------------------- selective


class CheckpointPolicy(enum.Enum):
    """What selective checkpointing does with the values an operation saves: keep them
    from the first run (SAVE) or recompute them (RECOMPUTE). chainrule treats MUST and
    PREFER alike."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3


class SelectiveCheckpointContext:
    """What a policy function is told besides the operation: whether this is the
    recomputation (chainrule asks the policy during the first run only: False)."""

    def __init__(self, is_recompute: bool) -> None:
        self.is_recompute = is_recompute


class _Policy:
    """A selective checkpointing policy, active while the checkpointed block first runs."""

    def __init__(self, policy: Any, allow_mutation: bool) -> None:
        self.policy = policy
        self.allow_mutation = allow_mutation

    def keeps(self, node: Any) -> bool:
        """Whether the values `node` saves are kept (not recomputed)."""
        if node is None:
            return False
        op = node.rule.name
        if isinstance(self.policy, (list, tuple, set, frozenset)):
            return op in self.policy
        decision = self.policy(SelectiveCheckpointContext(False), op)
        if isinstance(decision, bool):
            return decision
        if not isinstance(decision, CheckpointPolicy):
            raise TypeError(
                "a selective checkpointing policy returns a CheckpointPolicy or a bool, "
                f"got {type(decision).__name__}"
            )
        return decision in (CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE)

    @contextlib.contextmanager
    def active(self) -> Iterator[None]:
        prev, _SETTINGS.policy = _SETTINGS.policy, self
        try:
            yield
        finally:
            _SETTINGS.policy = prev


def _op_names(ops: Sequence[Any]) -> frozenset:
    """A list of operations as their primitives' names: names, or chainrule functions."""
    names = []
    for op in ops:
        name = op if isinstance(op, str) else getattr(op, "__name__", None)
        if name is None:
            raise TypeError(
                "create_selective_checkpoint_contexts takes a policy function or a list of "
                f"operations (chainrule functions or their names), got {op!r}"
            )
        names.append(name)
    return frozenset(names)


def create_selective_checkpoint_contexts(
    policy_fn_or_list: Callable[..., Any] | Sequence[Any],
    allow_cache_entry_mutation: bool = False,
) -> tuple[ContextManager, ContextManager]:
    """The context_fn pair for checkpoint that keeps the values chosen operations save, and
    recomputes the rest. `policy_fn_or_list`: a list of operations to keep (chainrule
    functions, or primitive names such as "matmul"), or `policy(ctx, op)` given the
    primitive's name and returning a CheckpointPolicy (or True to keep). A kept value
    written in place before backward raises CheckpointError unless
    allow_cache_entry_mutation. Unlike PyTorch, a recomputation (when backward needs a
    value not kept) runs the whole block: the policy saves memory, not recomputation."""
    if isinstance(policy_fn_or_list, (list, tuple, set, frozenset)):
        policy: Any = _op_names(policy_fn_or_list)
    elif callable(policy_fn_or_list):
        policy = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    return _Policy(policy, allow_cache_entry_mutation).active(), contextlib.nullcontext()
