"""`numpy.einsum` on tensors (through NEP 18): Einstein summation written with chainrule's
differentiable functions. Repeated labels within an operand take a diagonal, labels no later
operand or the output needs are summed out early, and each further operand is contracted by
one batched matmul."""

from __future__ import annotations

import math
import string

from . import _backend
from . import _namespace as ops

_LETTERS = frozenset(string.ascii_letters)


def _parse(subscripts: str, ndims: list[int]) -> tuple[list[list[str]], list[str]]:
    """The labels of each operand's axes and of the output's. The axes an ellipsis stands for
    get labels of their own ('.0', '.1', ...), aligned from the right as in broadcasting."""
    spec = subscripts.replace(" ", "")
    lhs, arrow, rhs = spec.partition("->")
    terms = lhs.split(",")
    if len(terms) != len(ndims):
        raise ValueError(
            f"einsum: the subscripts {subscripts!r} name {len(terms)} operands, "
            f"but {len(ndims)} were given"
        )
    for term in terms + ([rhs] if arrow else []):
        bad = set(term.replace("...", "")) - _LETTERS
        if bad or term.count("...") > 1:
            raise ValueError(f"einsum: invalid subscripts {subscripts!r}")
    widths = []
    for term, ndim in zip(terms, ndims):
        named = len(term.replace("...", ""))
        width = ndim - named if "..." in term else 0
        if width < 0 or (width == 0 and "..." not in term and named != ndim):
            raise ValueError(
                f"einsum: subscripts {term!r} do not match an operand of {ndim} dimensions"
            )
        widths.append(width)
    most = max(widths, default=0)
    ellipsis = [f".{i}" for i in range(most)]

    def expand(term: str, width: int) -> list[str]:
        head, dots, tail = term.partition("...")
        return list(head) + (ellipsis[most - width :] if dots else []) + list(tail)

    labels = [expand(t, w) for t, w in zip(terms, widths)]
    if arrow:
        out = expand(rhs, most)
    else:  # implicit output: the ellipsis axes, then the labels used once, in ASCII order
        counts: dict[str, int] = {}
        for term in terms:
            for c in term.replace("...", ""):
                counts[c] = counts.get(c, 0) + 1
        out = ellipsis + sorted(c for c, n in counts.items() if n == 1)
    known = {c for ls in labels for c in ls}
    for c in out:
        if c not in known or out.count(c) > 1:
            raise ValueError(f"einsum: output label {c!r} of {subscripts!r} is invalid")
    return labels, out


def _diagonals(x, labels: list[str]):
    """x with each label repeated within it reduced to one axis (a diagonal)."""
    while len(set(labels)) < len(labels):
        c = next(c for c in labels if labels.count(c) > 1)
        a = labels.index(c)
        b = labels.index(c, a + 1)
        n = x.shape[a]
        shape = [1] * x.ndim
        shape[a] = shape[b] = n
        on = ops.reshape(ops.asarray(x._xp.eye(n, dtype=x._xp.bool)), tuple(shape))
        x = ops.sum(ops.where(on, x, ops.zeros_like(x)), axis=b)
        labels = labels[:b] + labels[b + 1 :]
    return x, labels


def _sum_out(x, labels: list[str], keep: set[str]):
    axes = tuple(i for i, c in enumerate(labels) if c not in keep)
    if not axes:
        return x, labels
    return ops.sum(x, axis=axes), [c for c in labels if c in keep]


def _contract(x, xl: list[str], y, yl: list[str], later: set[str], sizes: dict):
    """x and y contracted over the labels they share that nothing later needs, by one batched
    matmul: (batch, free of x, shared) @ (batch, shared, free of y)."""
    batch = [c for c in xl if c in yl and c in later]
    shared = [c for c in xl if c in yl and c not in later]
    free_x = [c for c in xl if c not in yl]
    free_y = [c for c in yl if c not in xl]

    def grouped(t, labels, groups):
        order = [labels.index(c) for g in groups for c in g]
        t = ops.permute_dims(t, tuple(order))
        return ops.reshape(t, tuple(math.prod(sizes[c] for c in g) for g in groups))

    a = grouped(x, xl, (batch, free_x, shared))
    b = grouped(y, yl, (batch, shared, free_y))
    labels = batch + free_x + free_y
    return ops.reshape(ops.matmul(a, b), tuple(sizes[c] for c in labels)), labels


def einsum(subscripts, *operands, dtype=None):
    """numpy.einsum(subscripts, *operands) by chainrule's functions, differentiable."""
    if not isinstance(subscripts, str):
        raise TypeError(
            "chainrule does not implement numpy.einsum with subscripts given as lists for "
            "Tensors; write them as a string, e.g. 'ij,jk->ik'"
        )
    xs = [ops.asarray(x) for x in operands]
    if dtype is not None:
        dtype = _backend.from_backend_dtype(dtype)
        for x in xs:
            if not ops.can_cast(x.dtype, dtype):  # NumPy's default casting='safe'
                raise TypeError(f"einsum: cannot cast {x.dtype} to {dtype} safely")
        xs = [ops.astype(x, dtype) for x in xs]
    labels, out = _parse(subscripts, [x.ndim for x in xs])
    sizes: dict[str, int] = {}
    for x, ls in zip(xs, labels):
        for c, n in zip(ls, x.shape):
            # A size of 1 broadcasts against any other (0 included); other sizes must agree.
            have = sizes.get(c, 1)
            if have == 1:
                sizes[c] = n
            elif n not in (1, have):
                raise ValueError(f"einsum: label {c!r} of {subscripts!r} has sizes {have} and {n}")
    reduced = []
    for i, (x, ls) in enumerate(zip(xs, labels)):
        x, ls = _diagonals(x, ls)
        elsewhere = set(out).union(*(labels[j] for j in range(len(xs)) if j != i))
        x, ls = _sum_out(x, ls, elsewhere)
        target = tuple(sizes[c] for c in ls)
        if x.shape != target:
            x = ops.broadcast_to(x, target)
        reduced.append((x, ls))
    x, xl = reduced[0]
    for k in range(1, len(reduced)):
        y, yl = reduced[k]
        later = set(out).union(*(ls for _, ls in reduced[k + 1 :]))
        x, xl = _sum_out(x, xl, later | set(yl))
        y, yl = _sum_out(y, yl, later | set(xl))
        x, xl = _contract(x, xl, y, yl, later, sizes)
    x, xl = _sum_out(x, xl, set(out))
    return ops.permute_dims(x, tuple(xl.index(c) for c in out)) if xl != out else x
