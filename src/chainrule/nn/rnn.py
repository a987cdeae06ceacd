"""Recurrent layers with PyTorch's names, parameters, initialisation and semantics: the cells
RNNCell, LSTMCell and GRUCell, and the multi-layer, optionally bidirectional RNN, LSTM (with
proj_size) and GRU, written as loops of chainrule's differentiable operations over the time
steps, on padded tensors or on PackedSequence (built in `nn.utils.rnn`)."""

from __future__ import annotations

import math
import warnings
from typing import TYPE_CHECKING, Any, overload

from .. import _namespace as ops
from .._tensor import Tensor
from . import functional as F
from .layers import _uniform_parameter
from .module import Module
from .utils.rnn import PackedSequence, _read

__all__ = ["RNNCell", "LSTMCell", "GRUCell", "RNN", "LSTM", "GRU"]

# Gates per mode: the weights stack them along axis 0 (LSTM: input, forget, cell, output;
# GRU: reset, update, new), as PyTorch's.
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}

State = Tensor | tuple[Tensor, Tensor]


def _chunks(x: Tensor, n: int) -> list[Tensor]:
    """x split into n equal parts along its last axis."""
    size = x.shape[-1] // n
    return [x[..., k * size : (k + 1) * size] for k in range(n)]


def _step(
    mode: str,
    gi: Tensor,
    state: State,
    w_hh: Tensor,
    b_hh: Tensor | None,
    w_hr: Tensor | None = None,
) -> State:
    """One time step of `mode` from gi, the input's projection x W_ih^T + b_ih, and the state
    (h, or (h, c) for an LSTM); the new state. An LSTM with w_hr (proj_size) projects h by it."""
    if mode == "LSTM":
        h, c = state
        i, f, g, o = _chunks(gi + F.linear(h, w_hh, b_hh), 4)
        c = F.sigmoid(f) * c + F.sigmoid(i) * ops.tanh(g)
        h = F.sigmoid(o) * ops.tanh(c)
        return (h if w_hr is None else F.linear(h, w_hr)), c
    assert isinstance(state, Tensor)
    gh = F.linear(state, w_hh, b_hh)
    if mode == "GRU":
        ir, iz, in_ = _chunks(gi, 3)
        hr, hz, hn = _chunks(gh, 3)
        r = F.sigmoid(ir + hr)
        z = F.sigmoid(iz + hz)
        n = ops.tanh(in_ + r * hn)
        return n + z * (state - n)
    return ops.tanh(gi + gh) if mode == "RNN_TANH" else F.relu(gi + gh)


def _sweep(
    mode: str,
    gi: Tensor,
    state: list[Tensor],
    weights: tuple[Tensor, Tensor | None, Tensor | None],
    reverse: bool,
) -> tuple[Tensor, list[Tensor]]:
    """One direction of one layer over a padded batch: gi (time, batch, gates * hidden) the
    input projections, state the initial state(s); the outputs h (time, batch, hidden) and
    the final state(s)."""
    steps = gi.shape[0]
    hs: list[Tensor] = [None] * steps  # type: ignore[list-item]
    for t in range(steps - 1, -1, -1) if reverse else range(steps):
        new = _step(mode, gi[t], tuple(state) if len(state) == 2 else state[0], *weights)
        state = list(new) if isinstance(new, tuple) else [new]
        hs[t] = state[0]
    return ops.stack(hs, axis=0), state


def _sweep_packed(
    mode: str,
    gi: Tensor,
    sizes: list[int],
    initial: list[Tensor],
    weights: tuple[Tensor, Tensor | None, Tensor | None],
    reverse: bool,
) -> tuple[Tensor, list[Tensor]]:
    """_sweep over packed data: gi (total steps, gates * hidden) holds, for each time step t,
    sizes[t] rows (the sequences still running, longest first). The state is sliced to those
    rows at each step, so that each sequence's final state is the one at its own last step
    and, in reverse, each sequence starts from its initial state at its own last step."""
    starts = [0]
    for size in sizes:
        starts.append(starts[-1] + size)
    hs: list[Tensor] = [None] * len(sizes)  # type: ignore[list-item]
    if reverse:
        # The running rows grow as t falls: sequences join with their initial state.
        state = [s[: sizes[-1]] for s in initial]
        for t in range(len(sizes) - 1, -1, -1):
            running = state[0].shape[0]
            if sizes[t] > running:
                state = [ops.concat([s, s0[running : sizes[t]]]) for s, s0 in zip(state, initial)]
            gi_t = gi[starts[t] : starts[t + 1]]
            new = _step(mode, gi_t, tuple(state) if len(state) == 2 else state[0], *weights)
            state = list(new) if isinstance(new, tuple) else [new]
            hs[t] = state[0]
        return ops.concat(hs), state
    # Forward, the running rows shrink: the final rows of the sequences that ended are set
    # aside as they end, and put back below the running ones at the end, the last set aside
    # first (they are the upper rows).
    state = initial
    ended: list[list[Tensor]] = [[] for _ in initial]
    for t, size in enumerate(sizes):
        if size < state[0].shape[0]:
            for kind, s in zip(ended, state):
                kind.append(s[size:])
            state = [s[:size] for s in state]
        gi_t = gi[starts[t] : starts[t + 1]]
        new = _step(mode, gi_t, tuple(state) if len(state) == 2 else state[0], *weights)
        state = list(new) if isinstance(new, tuple) else [new]
        hs[t] = state[0]
    finals = [ops.concat([s, *kind[::-1]]) if kind else s for s, kind in zip(state, ended)]
    return ops.concat(hs), finals


# ----------------------------------------------------------------------------- cells


class _CellBase(Module):
    """Parameters weight_ih (gates * hidden, input), weight_hh (gates * hidden, hidden),
    bias_ih and bias_hh (gates * hidden), all uniform in +-1/sqrt(hidden_size)."""

    def __init__(
        self, mode: str, input_size: int, hidden_size: int, bias: bool, dtype: Any
    ) -> None:
        super().__init__()
        self.mode = mode
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        rows = _GATES[self.mode] * hidden_size
        bound = 1 / math.sqrt(hidden_size)
        self.weight_ih = _uniform_parameter((rows, input_size), bound, dtype)
        self.weight_hh = _uniform_parameter((rows, hidden_size), bound, dtype)
        if bias:
            self.bias_ih = _uniform_parameter((rows,), bound, dtype)
            self.bias_hh = _uniform_parameter((rows,), bound, dtype)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)

    def _batched(self, x: Tensor) -> bool:
        if x.ndim not in (1, 2):
            raise ValueError(
                f"{type(self).__name__}: Expected input to be 1D or 2D, got {x.ndim}D input instead"
            )
        if x.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {x.shape[-1]} expected {self.input_size}"
            )
        return x.ndim == 2

    def _hidden(self, x: Tensor, h: Tensor | None, batched: bool) -> Tensor:
        """h with a batch axis (zeros where None), checked against x."""
        if h is None:
            return ops.zeros((x.shape[0], self.hidden_size), dtype=x.dtype)
        if h.ndim != (2 if batched else 1):
            raise RuntimeError(
                f"{type(self).__name__}: Expected hidden to be {2 if batched else 1}D for a "
                f"{x.ndim}D input, got {h.ndim}D instead"
            )
        return h if batched else ops.expand_dims(h, axis=0)

    def _project(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight_ih, self.bias_ih)

    def _next_hidden(self, input: Tensor, hx: Tensor | None) -> Tensor:  # noqa: A002
        """One step of a cell whose state is one tensor (RNNCell, GRUCell)."""
        batched = self._batched(input)
        x = input if batched else ops.expand_dims(input, axis=0)
        h = _step(
            self.mode, self._project(x), self._hidden(x, hx, batched), self.weight_hh, self.bias_hh
        )
        assert isinstance(h, Tensor)
        return h if batched else ops.squeeze(h, axis=0)

    def extra_repr(self) -> str:
        """Sizes, and bias where off, as PyTorch prints them."""
        return f"{self.input_size}, {self.hidden_size}" + ("" if self.bias else ", bias=False")


class RNNCell(_CellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (relu with nonlinearity='relu')."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        *,
        dtype: Any = None,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(f"Unknown nonlinearity: {nonlinearity}")
        mode = "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"
        super().__init__(mode, input_size, hidden_size, bias, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        """The next hidden state, of shape (batch, hidden) or (hidden,) for a 1-D input."""
        return self._next_hidden(input, hx)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """Sizes, bias and the nonlinearity where not the defaults."""
        extra = "" if self.nonlinearity == "tanh" else f", nonlinearity={self.nonlinearity}"
        return super().extra_repr() + extra


class LSTMCell(_CellBase):
    """(h', c') from the input, forget, cell and output gates (stacked in that order in the
    weights); hx is (h, c), zeros where None."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, *, dtype: Any = None
    ) -> None:
        super().__init__("LSTM", input_size, hidden_size, bias, dtype)

    def forward(
        self,
        input: Tensor,  # noqa: A002
        hx: tuple[Tensor, Tensor] | None = None,
    ) -> tuple[Tensor, Tensor]:
        """The next (h, c), each of shape (batch, hidden) or (hidden,) for a 1-D input."""
        batched = self._batched(input)
        x = input if batched else ops.expand_dims(input, axis=0)
        h0, c0 = (None, None) if hx is None else hx
        state = (self._hidden(x, h0, batched), self._hidden(x, c0, batched))
        h, c = _step(self.mode, self._project(x), state, self.weight_hh, self.bias_hh)
        if batched:
            return h, c
        return ops.squeeze(h, axis=0), ops.squeeze(c, axis=0)

    if TYPE_CHECKING:
        __call__ = forward


class GRUCell(_CellBase):
    """h' = (1 - z) n + z h from the reset, update and new gates (stacked in that order in
    the weights), n = tanh(x W_in^T + b_in + r (h W_hn^T + b_hn))."""

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, *, dtype: Any = None
    ) -> None:
        super().__init__("GRU", input_size, hidden_size, bias, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        """The next hidden state, of shape (batch, hidden) or (hidden,) for a 1-D input."""
        return self._next_hidden(input, hx)

    if TYPE_CHECKING:
        __call__ = forward


# ----------------------------------------------------------------------------- multi-layer


class _RNNBase(Module):
    """num_layers stacked recurrent layers, each one or two directions; parameters
    weight_ih_l{k}, weight_hh_l{k}, bias_ih_l{k}, bias_hh_l{k}, and weight_hr_l{k} for an
    LSTM with proj_size (and ..._reverse for the backward direction), all uniform in
    +-1/sqrt(hidden_size), as PyTorch's."""

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int,
        bias: bool,
        batch_first: bool,
        dropout: float,
        bidirectional: bool,
        dtype: Any,
        proj_size: int = 0,
    ) -> None:
        super().__init__()
        if not (isinstance(dropout, (int, float)) and not isinstance(dropout, bool)) or not (
            0 <= dropout <= 1
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of "
                "an element being zeroed"
            )
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                f"dropout expects num_layers greater than 1, but got dropout={dropout} and "
                f"num_layers={num_layers}",
                UserWarning,
                stacklevel=3,
            )
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        rows = _GATES[self.mode] * hidden_size
        bound = 1 / math.sqrt(hidden_size)
        out_size = proj_size or hidden_size  # the size of h
        for layer in range(num_layers):
            width = input_size if layer == 0 else out_size * directions
            for suffix in ("", "_reverse")[:directions]:
                names = [f"weight_ih_l{layer}{suffix}", f"weight_hh_l{layer}{suffix}"]
                shapes = [(rows, width), (rows, out_size)]
                if bias:
                    names += [f"bias_ih_l{layer}{suffix}", f"bias_hh_l{layer}{suffix}"]
                    shapes += [(rows,), (rows,)]
                if proj_size:
                    names.append(f"weight_hr_l{layer}{suffix}")
                    shapes.append((proj_size, hidden_size))
                for name, shape in zip(names, shapes):
                    setattr(self, name, _uniform_parameter(shape, bound, dtype))

    def flatten_parameters(self) -> None:
        """Nothing to do: PyTorch's call packs the weights for cuDNN; kept so that ports
        calling it run."""

    def _weights(
        self, layer: int, suffix: str
    ) -> tuple[Tensor, Tensor | None, Tensor, Tensor | None, Tensor | None]:
        """The parameters of one layer and direction: w_ih, b_ih, w_hh, b_hh, w_hr (the
        biases None without bias, w_hr None without proj_size)."""
        names = ("weight_ih", "bias_ih", "weight_hh", "bias_hh", "weight_hr")
        w_ih, b_ih, w_hh, b_hh, w_hr = (getattr(self, f"{n}_l{layer}{suffix}", None) for n in names)
        return w_ih, b_ih, w_hh, b_hh, w_hr

    def _check_features(self, x: Tensor) -> None:
        if x.shape[-1] != self.input_size:
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                f"got {x.shape[-1]}"
            )

    def _initial(
        self, h: Tensor | None, batch: int, dtype: Any, batched: bool | None, k: int, n: int
    ) -> Tensor:
        """Initial state k of n (h, or c for an LSTM) shaped (num_layers * directions,
        batch, size), zeros where None; batched None for packed input (no unbatched form)."""
        size = self.proj_size if self.proj_size and k == 0 else self.hidden_size
        expected = (self.num_layers * (2 if self.bidirectional else 1), batch, size)
        if h is None:
            return ops.zeros(expected, dtype=dtype)
        if batched is not None and h.ndim != (3 if batched else 2):
            want, kind = (3, "batched") if batched else (2, "unbatched")
            raise RuntimeError(
                f"For {kind} {want}-D input, hx should also be {want}-D but got {h.ndim}-D tensor"
            )
        h = h if batched is not False else ops.expand_dims(h, axis=1)
        if tuple(h.shape) != expected:
            which = f"hidden[{k}]" if n == 2 else "hidden"
            raise RuntimeError(f"Expected {which} size {expected}, got {list(h.shape)}")
        return h

    def _run(
        self, x: Tensor, state: list[Tensor], sizes: list[int] | None = None
    ) -> tuple[Tensor, list[Tensor]]:
        """x (time, batch, features), or packed data (total steps, features) with its batch
        sizes, through every layer and direction from the initial state(s) (one tensor per
        kind of state, stacked over layers and directions); the last layer's outputs and the
        final states, stacked the same way."""
        directions = 2 if self.bidirectional else 1
        finals: list[list[Tensor]] = [[] for _ in state]
        for layer in range(self.num_layers):
            outputs = []
            for d, suffix in enumerate(("", "_reverse")[:directions]):
                w_ih, b_ih, w_hh, b_hh, w_hr = self._weights(layer, suffix)
                weights = (w_hh, b_hh, w_hr)
                gi = F.linear(x, w_ih, b_ih)  # all the time steps' input projections at once
                s = [kind[layer * directions + d] for kind in state]
                if sizes is None:
                    out, s = _sweep(self.mode, gi, s, weights, d == 1)
                else:
                    out, s = _sweep_packed(self.mode, gi, sizes, s, weights, d == 1)
                for kind, final in zip(finals, s):
                    kind.append(final)
                outputs.append(out)
            x = outputs[0] if directions == 1 else ops.concat(outputs, axis=-1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout, True)
        return x, [ops.stack(kind, axis=0) for kind in finals]

    def _forward(
        self,
        input: Tensor | PackedSequence,  # noqa: A002
        hx: list[Tensor | None],
    ) -> tuple[Any, list[Tensor]]:
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx)
        if input.ndim not in (2, 3):
            raise ValueError(
                f"{type(self).__name__}: Expected input to be 2D or 3D, got {input.ndim}D "
                "tensor instead"
            )
        self._check_features(input)
        batched = input.ndim == 3
        x = input if batched else ops.expand_dims(input, axis=1)
        if batched and self.batch_first:
            x = ops.permute_dims(x, (1, 0, 2))
        state = [
            self._initial(h, x.shape[1], x.dtype, batched, k, len(hx)) for k, h in enumerate(hx)
        ]
        out, finals = self._run(x, state)
        if not batched:
            return ops.squeeze(out, axis=1), [ops.squeeze(f, axis=1) for f in finals]
        if self.batch_first:
            out = ops.permute_dims(out, (1, 0, 2))
        return out, finals

    def _forward_packed(
        self, packed: PackedSequence, hx: list[Tensor | None]
    ) -> tuple[PackedSequence, list[Tensor]]:
        """Packed input (batch_first does not apply): the states are taken in the packed
        (longest first) order of the batch and given back in the batch's own order."""
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        self._check_features(data)
        sizes = _read(batch_sizes, f"{type(self).__name__} on a PackedSequence")
        state = []
        for k, h in enumerate(hx):
            h = self._initial(h, sizes[0], data.dtype, None, k, len(hx))
            if hx[k] is not None and sorted_indices is not None:
                h = ops.take(h, sorted_indices, axis=1)
            state.append(h)
        out, finals = self._run(data, state, sizes)
        if unsorted_indices is not None:
            finals = [ops.take(f, unsorted_indices, axis=1) for f in finals]
        return PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices), finals

    def extra_repr(self) -> str:
        """Sizes and the options that differ from the defaults, as PyTorch prints them."""
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if not self.bias:
            s += ", bias=False"
        if self.batch_first:
            s += ", batch_first=True"
        if self.dropout:
            s += f", dropout={self.dropout}"
        if self.bidirectional:
            s += ", bidirectional=True"
        return s


class RNN(_RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (relu with
    nonlinearity='relu'), per layer and direction. forward(input, hx=None) returns
    (output, h_n)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        nonlinearity: str = "tanh",
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        *,
        dtype: Any = None,
    ) -> None:
        if nonlinearity not in ("tanh", "relu"):
            raise ValueError(
                f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'."
            )
        super().__init__(
            "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            dtype,
        )
        self.nonlinearity = nonlinearity

    @overload
    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]: ...  # noqa: A002

    @overload
    def forward(  # noqa: A002
        self, input: PackedSequence, hx: Tensor | None = None
    ) -> tuple[PackedSequence, Tensor]: ...

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:  # noqa: A002
        """(output, h_n): output (time, batch, directions * hidden) (batch first with
        batch_first; no batch axis for a 2-D input), h_n (layers * directions, batch,
        hidden). For a PackedSequence input, output is a PackedSequence too and h_n holds
        each sequence's state after its own last step."""
        out, (h,) = self._forward(input, [hx])
        return out, h

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """Sizes and the options that differ from the defaults."""
        extra = "" if self.nonlinearity == "tanh" else f", nonlinearity={self.nonlinearity}"
        return super().extra_repr() + extra


class LSTM(_RNNBase):
    """Long short-term memory, per layer and direction; forward(input, (h0, c0)=None) returns
    (output, (h_n, c_n)). With proj_size > 0, h is projected to proj_size features by
    weight_hr_l{k} at every step (c keeps hidden_size)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        *,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            "LSTM",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            dtype,
            proj_size,
        )

    @overload
    def forward(
        self,
        input: Tensor,  # noqa: A002
        hx: tuple[Tensor, Tensor] | None = None,
    ) -> tuple[Tensor, tuple[Tensor, Tensor]]: ...

    @overload
    def forward(
        self,
        input: PackedSequence,  # noqa: A002
        hx: tuple[Tensor, Tensor] | None = None,
    ) -> tuple[PackedSequence, tuple[Tensor, Tensor]]: ...

    def forward(
        self,
        input: Any,  # noqa: A002
        hx: tuple[Tensor, Tensor] | None = None,
    ) -> tuple[Any, tuple[Tensor, Tensor]]:
        """(output, (h_n, c_n)), shaped as RNN's output and h_n (h_n and the output with
        proj_size features where proj_size > 0); a PackedSequence output for a
        PackedSequence input."""
        out, (h, c) = self._forward(input, [None, None] if hx is None else list(hx))
        return out, (h, c)

    if TYPE_CHECKING:
        __call__ = forward


class GRU(_RNNBase):
    """Gated recurrent unit, per layer and direction; forward(input, hx=None) returns
    (output, h_n)."""

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        *,
        dtype: Any = None,
    ) -> None:
        super().__init__(
            "GRU",
            input_size,
            hidden_size,
            num_layers,
            bias,
            batch_first,
            dropout,
            bidirectional,
            dtype,
        )

    @overload
    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]: ...  # noqa: A002

    @overload
    def forward(  # noqa: A002
        self, input: PackedSequence, hx: Tensor | None = None
    ) -> tuple[PackedSequence, Tensor]: ...

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:  # noqa: A002
        """(output, h_n), shaped as RNN's; a PackedSequence output for a PackedSequence
        input."""
        out, (h,) = self._forward(input, [hx])
        return out, h

    if TYPE_CHECKING:
        __call__ = forward
