"""PyTorch's `nn.utils.rnn`: PackedSequence (variable-length sequences stored time step by
time step, longest first) and the functions that pack, pad and split sequences. The recurrent
layers that read a PackedSequence live in `nn.rnn`; the index arithmetic here is on Python
ints, the data moves through differentiable `take`, `concat` and `stack`."""

from __future__ import annotations

from collections import namedtuple
from collections.abc import Sequence
from typing import Any

from ... import _namespace as ops
from ..._mode import grad_mode
from ..._tensor import Tensor

__all__ = [
    "PackedSequence",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "pack_sequence",
    "unpack_sequence",
    "unpad_sequence",
]

_UNSORTED = (
    "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You "
    "can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep "
    "this requirement if you do not need ONNX exportability."
)

_Fields = namedtuple("_Fields", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


class PackedSequence(_Fields):
    """Sequences of different lengths as one tensor: `data` (total steps, *features) holds
    time step 0 of every sequence, then step 1 of those that have one, and so on, the
    sequences in order of decreasing length; `batch_sizes` (int64) counts the sequences
    present at each step; `sorted_indices` maps that order to the batch's (None when the
    batch was already sorted) and `unsorted_indices` is its inverse. Built by
    pack_padded_sequence or pack_sequence, not by hand."""

    __slots__ = ()

    def __new__(
        cls,
        data: Tensor,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = _inverse(sorted_indices)
        if batch_sizes is None:
            # PackedSequence(*pieces) with pieces (data, batch_sizes), as PyTorch accepts.
            data, batch_sizes = data
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """The same sequences with `data` converted by Tensor.to (the indices unchanged)."""
        return type(self)(self.data.to(*args, **kwargs), *self[1:])

    def double(self) -> PackedSequence:
        """The same sequences with float64 data."""
        return self.to(ops.float64)

    def float(self) -> PackedSequence:
        """The same sequences with float32 data."""
        return self.to(ops.float32)


def _read(t: Tensor, what: str) -> list:
    """t's values as Python numbers, for the index arithmetic of packing. A trace of
    chainrule.compile can't replay that (a call with other lengths would keep the first
    call's steps and rows): the function runs eagerly."""
    if grad_mode.extended and grad_mode.tracer is not None:
        grad_mode.tracer.unsupported(f"{what} (it reads the sequences' lengths)")
    return t.tolist()


def _inverse(permutation: Tensor) -> Tensor:
    """The permutation that undoes `permutation` (a 1-D int64 tensor)."""
    order = _read(permutation, "a PackedSequence's sorted_indices")
    inverse = [0] * len(order)
    for position, index in enumerate(order):
        inverse[index] = position
    return ops.asarray(inverse, dtype=ops.int64)


def _int_list(lengths: Any) -> list[int]:
    """Sequence lengths as Python ints, from a list or a 1-D tensor."""
    if isinstance(lengths, Tensor):
        if lengths.ndim != 1:
            raise RuntimeError(
                "'lengths' argument should be a 1D CPU int64 tensor, but got "
                f"{lengths.ndim}D tensor"
            )
        lengths = _read(lengths, "a tensor of sequence lengths")
    return [int(n) for n in lengths]


def _batch_sizes(descending: list[int]) -> list[int]:
    """How many of the sequences (lengths in decreasing order) have a step t, for each t."""
    sizes: list[int] = []
    present = len(descending)
    for t in range(descending[0] if descending else 0):
        while descending[present - 1] <= t:
            present -= 1
        sizes.append(present)
    return sizes


def _swap_first_axes(x: Tensor) -> Tensor:
    return ops.permute_dims(x, (1, 0, *range(2, x.ndim)))


def pack_padded_sequence(
    input: Tensor,  # noqa: A002
    lengths: Tensor | Sequence[int],
    batch_first: bool = False,
    enforce_sorted: bool = True,
) -> PackedSequence:
    """Pack a padded batch (time, batch, *features), or (batch, time, *features) with
    batch_first, whose sequence b is `lengths[b]` steps long. With enforce_sorted the
    lengths must be in decreasing order; otherwise the batch is sorted (stably) and the
    order kept in sorted_indices. Gradients flow back to the steps inside the lengths."""
    lengths = _int_list(lengths)
    if enforce_sorted:
        if any(a < b for a, b in zip(lengths, lengths[1:])):
            raise RuntimeError(_UNSORTED)
        order = list(range(len(lengths)))
        sorted_indices = None
    else:
        order = sorted(range(len(lengths)), key=lambda b: -lengths[b])
        sorted_indices = ops.asarray(order, dtype=ops.int64)
    if input.ndim < 2:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [-{input.ndim}, "
            f"{input.ndim - 1}], but got 1)"
        )
    if input.size == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    x = _swap_first_axes(input) if batch_first else input
    steps, batch = x.shape[0], x.shape[1]
    if len(lengths) != batch:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths)} "
            f"(batch_size={batch})"
        )
    descending = [lengths[b] for b in order]
    if descending and descending[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in "
            "'lengths' that is <= 0"
        )
    if descending and descending[0] > steps:
        raise RuntimeError(
            f"Expected every length to be at most the padded sequence length {steps}, but "
            f"got a length of {descending[0]}"
        )
    sizes = _batch_sizes(descending)
    # Row t * batch + b of the flattened input is step t of sequence b.
    rows = [t * batch + order[k] for t, size in enumerate(sizes) for k in range(size)]
    flat = ops.reshape(x, (steps * batch, *x.shape[2:]))
    data = ops.take(flat, ops.asarray(rows, dtype=ops.int64), axis=0)
    return PackedSequence(data, ops.asarray(sizes, dtype=ops.int64), sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """(padded, lengths): the packed sequences as a (time, batch, *features) tensor, or
    (batch, time, *features) with batch_first, in the batch's original order, steps past a
    sequence's end filled with padding_value and time padded to total_length where given;
    lengths an int64 tensor."""
    data, batch_sizes, _, unsorted_indices = sequence
    sizes = _read(batch_sizes, "pad_packed_sequence")
    steps, batch = len(sizes), sizes[0]
    if total_length is not None:
        if total_length < steps:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in "
                f"input, but got total_length={total_length} and max sequence length being "
                f"{steps}"
            )
        steps = total_length
    unsorted = (
        list(range(batch))
        if unsorted_indices is None
        else _read(unsorted_indices, "pad_packed_sequence")
    )
    starts = [0]
    for size in sizes:
        starts.append(starts[-1] + size)
    # One extra row of padding after the data: every step past a sequence's end reads it.
    pad_row = data.shape[0]
    rows = [
        starts[t] + k if t < len(sizes) and k < sizes[t] else pad_row
        for t in range(steps)
        for k in unsorted
    ]
    filler = ops.full((1, *data.shape[1:]), padding_value, dtype=data.dtype)
    source = ops.concat([data, filler], axis=0)
    out = ops.take(source, ops.asarray(rows, dtype=ops.int64), axis=0)
    out = ops.reshape(out, (steps, batch, *data.shape[1:]))
    lengths = [sum(1 for size in sizes if size > k) for k in unsorted]
    if batch_first:
        out = _swap_first_axes(out)
    return out, ops.asarray(lengths, dtype=ops.int64)


def pad_sequence(
    sequences: Sequence[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """The tensors (length_i, *features) stacked into (longest, batch, *features), or (batch,
    longest, *features) with batch_first, each filled with padding_value after its end (or
    before its start with padding_side='left')."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    if len(sequences) == 0:
        raise RuntimeError("received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        gap = longest - s.shape[0]
        if gap:
            filler = ops.full((gap, *s.shape[1:]), padding_value, dtype=s.dtype)
            s = ops.concat([s, filler] if padding_side == "right" else [filler, s], axis=0)
        padded.append(s)
    return ops.stack(padded, axis=0 if batch_first else 1)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of tensors (length_i, *features); with enforce_sorted their lengths must
    be in decreasing order."""
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The packed sequences as a list of tensors (length_i, *features), in the batch's
    original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def unpad_sequence(
    padded_sequences: Tensor,
    lengths: Tensor | Sequence[int],
    batch_first: bool = False,
) -> list[Tensor]:
    """The padded batch (time, batch, *features), or (batch, time, *features) with
    batch_first, as a list of tensors cut to their lengths. Each is a copy, as PyTorch's
    (a slice would be a view sharing the padded batch's memory and version counter: a write
    to one would reach the batch, and fail the backward of its siblings). A difference:
    without batch_first PyTorch transposes `padded_sequences` itself in place (its shape
    changes); chainrule leaves it as it was."""
    x = padded_sequences if batch_first else _swap_first_axes(padded_sequences)
    return [x[b, :n].clone() for b, n in enumerate(_int_list(lengths))]
