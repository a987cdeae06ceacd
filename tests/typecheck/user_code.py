"""Typical user code, checked by `mypy --strict` (tests/test_typing.py) and also run: every
`assert_type` states what mypy must infer, so an annotation that says less (Any) or
something else fails the check, and running the file shows the types describe the values."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
from typing_extensions import assert_type

import chainrule as cr
from chainrule import Tensor, nn, optim
from chainrule.autograd import functional as AF
from chainrule.autograd.graph import saved_tensors_hooks, to_dot
from chainrule.nn import functional as F
from chainrule.optim.lr_scheduler import CosineAnnealingLR
from chainrule.utils.checkpoint import checkpoint

# ----------------------------------------------------------------------------- creation, dtypes

x = cr.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
w = cr.asarray(np.eye(2), dtype=cr.float64)
b = cr.zeros((2,), dtype=cr.float64)
ones = cr.ones_like(x)
grid = cr.linspace(0.0, 1.0, 5)
steps = cr.arange(10, dtype=cr.int64)
eye = cr.eye(3)
full = cr.full((2, 2), 0.5)
assert_type(x, Tensor)
assert_type(w, Tensor)
assert_type(grid, Tensor)
assert_type(cr.empty((3,)), Tensor)

# Tensor.dtype is the backend's dtype object (NumPy's here), equal to chainrule's.
assert x.dtype == cr.float64
assert cr.isdtype(x.dtype, "real floating")
dtype: cr.DType = cr.float32
assert_type(cr.result_type(x, cr.float32), cr.DType)
assert_type(cr.finfo(cr.float32).eps, float)
assert_type(cr.iinfo(cr.int32).max, int)
assert_type(cr.astype(steps, cr.float32), Tensor)
assert_type(cr.can_cast(cr.int32, cr.float64), bool)
assert_type(x.shape, tuple[int, ...])
assert_type(x.ndim, int)
assert_type(x.requires_grad, bool)

# ----------------------------------------------------------------------------- arithmetic

y = x @ w + b
z = 2.0 * x - x / 3 + 1
p = x**2 + 2**x - (-x) + abs(x)
q = cr.sin(x) * cr.exp(-x) + cr.sqrt(cr.abs(x)) - cr.log1p(x**2)
r = np.float64(2.0) * x
assert_type(y, Tensor)
assert_type(z, Tensor)
assert_type(p, Tensor)
assert_type(q, Tensor)
assert_type(x // 2, Tensor)
assert_type(x % 2.0, Tensor)
assert_type(cr.maximum(x, 0.0), Tensor)
assert_type(cr.where(x > 2.0, x, 0.0), Tensor)
assert_type(cr.clip(x, min=0.0, max=2.0), Tensor)

# Comparisons give bool tensors.
mask = (x > 1.0) & (x <= 3.0) | ~(x == 2.0)
assert_type(mask, Tensor)
assert_type(x != w, Tensor)
assert_type(x >= 0, Tensor)

# Indexing and item assignment.
row = x[0]
corner = x[0, 1]
sliced = x[:, 1:]
picked = x[mask]
assert_type(row, Tensor)
assert_type(x[..., None], Tensor)
assert_type(x[cr.asarray([0, 1])], Tensor)
buffer = cr.zeros((3, 2))
buffer[0] = x[1]
buffer[1:, :] = 1.0
buffer += 1
buffer *= x[0]

# Conversions.
value: float = float(corner)
as_list = x.tolist()
as_numpy = x.detach().numpy()
scalar: float = corner.item()
n_rows: int = len(x)
rows: Iterator[Tensor] = iter(x)

# ----------------------------------------------------------------------------- reductions, linalg

total = cr.sum(x * x)
assert_type(total, Tensor)
assert_type(x.sum(), Tensor)
assert_type(x.sum(axis=0), Tensor)
assert_type(x.mean(axis=(0, 1), keepdims=True), Tensor)
assert_type(cr.mean(x, axis=1), Tensor)
assert_type(cr.max(x, axis=-1), Tensor)
assert_type(cr.std(x, correction=1), Tensor)
assert_type(cr.logsumexp(x, axis=1), Tensor)
assert_type(cr.softmax(x), Tensor)
assert_type(cr.argmax(x, axis=0), Tensor)
assert_type(cr.reshape(x, (4,)), Tensor)
assert_type(x.reshape(4, 1), Tensor)
assert_type(x.T, Tensor)
assert_type(x.mT, Tensor)
assert_type(cr.concat([x, w], axis=0), Tensor)
assert_type(cr.stack((x, w)), Tensor)
assert_type(cr.unstack(x), tuple[Tensor, ...])
assert_type(cr.broadcast_arrays(x, b), tuple[Tensor, ...])
assert_type(cr.meshgrid(grid, grid), tuple[Tensor, ...])
assert_type(cr.unique_values(steps), Tensor)
assert_type(cr.unique_counts(steps).counts, Tensor)
assert_type(cr.sort(x, axis=0, descending=True), Tensor)

spd = x @ x.mT + cr.eye(2)
assert_type(cr.linalg.inv(spd), Tensor)
assert_type(cr.linalg.det(spd), Tensor)
assert_type(cr.linalg.solve(spd, b), Tensor)
assert_type(cr.linalg.cholesky(spd), Tensor)
assert_type(cr.linalg.vector_norm(x, ord=1), Tensor)
assert_type(cr.linalg.matrix_norm(x, ord="fro"), Tensor)
assert_type(cr.linalg.trace(spd), Tensor)
evals, evecs = cr.linalg.eigh(spd)
assert_type(evals, Tensor)
assert_type(cr.linalg.svd(x).S, Tensor)
assert_type(cr.linalg.qr(x).Q, Tensor)
assert_type(cr.linalg.slogdet(spd).logabsdet, Tensor)
assert_type(cr.fft.rfft(grid), Tensor)
assert_type(cr.fft.fftfreq(8, d=0.1), Tensor)

# ----------------------------------------------------------------------------- autograd

loss = cr.sum(cr.tanh(y) ** 2) + total
loss.backward(retain_graph=True)
grad_x: Tensor | None = x.grad
if x.grad is not None:
    assert_type(x.grad, Tensor)
cr.autograd.backward([loss], inputs=[x], retain_graph=True)
(gx,) = cr.autograd.grad(loss, x, create_graph=True)
assert_type(gx, Tensor)
(hx,) = cr.autograd.grad(cr.sum(gx), [x])
other = cr.tensor([1.0], requires_grad=True)
unused = cr.autograd.grad(cr.sum(x), [x, other], allow_unused=True)
assert_type(unused, tuple[Tensor | None, ...])
assert unused[1] is None
assert_type(x.detach(), Tensor)
fn = y.grad_fn
if fn is not None:
    assert isinstance(fn, cr.autograd.graph.Node)
    kind: str = fn.name()
    fn.metadata["note"] = "first layer"
    parents = fn.next_functions
assert_type(y.is_leaf, bool)
assert_type(x.requires_grad_(True), Tensor)


def energy(u: Tensor) -> Tensor:
    return cr.sum(u**4) / 4


out, vjp_value = AF.vjp(energy, x, cr.asarray(1.0))
jac = AF.jacobian(energy, x)
energy_value, hvp_value = AF.hvp(energy, x, cr.ones_like(x))
assert cr.autograd.gradcheck(energy, (cr.tensor([0.3, -0.2], requires_grad=True),))
assert cr.autograd.gradgradcheck(energy, (cr.tensor([0.3, -0.2], requires_grad=True),))


class Cube(cr.autograd.Function):
    @staticmethod
    def forward(ctx: cr.autograd.FunctionCtx, u: Tensor) -> Tensor:
        ctx.save_for_backward(u)
        return u**3

    @staticmethod
    def backward(ctx: cr.autograd.FunctionCtx, g: Tensor) -> Tensor:
        (u,) = ctx.saved_tensors
        return 3 * u**2 * g


cubed = Cube.apply(x)
cr.sum(cubed).backward()

with cr.no_grad():
    frozen = x * 2
assert not frozen.requires_grad
with cr.enable_grad(), cr.set_grad_enabled(True):
    assert cr.is_grad_enabled()
with cr.inference_mode():
    assert cr.is_inference_mode_enabled()
with cr.autograd.detect_anomaly():
    cr.sum(x * 3).backward()


@cr.no_grad()
def evaluate(t: Tensor) -> Tensor:
    return t * 2


assert_type(evaluate(x), Tensor)

# Graph API: hooks, saved-tensor hooks, checkpointing, DOT.
handle = x.register_hook(lambda g: g * 2)
handle.remove()
h = x * 2
h.retain_grad()
with saved_tensors_hooks(lambda t: t, lambda t: t):
    cr.sum(cr.sin(x)).backward()
checkpointed = checkpoint(energy, x)
dot: str = to_dot(cr.sum(x * x))
summary = cr.autograd.graph.summary(cr.sum(x * x))
assert_type(summary.nodes, int)

# ----------------------------------------------------------------------------- nn, optim


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Linear(2, 8)
        self.out = nn.Linear(8, 3)

    def forward(self, u: Tensor) -> Tensor:
        return self.out(F.gelu(self.hidden(u)))


cr.random.manual_seed(0)
model = MLP()
optimizer = optim.Adam(model.parameters(), lr=1e-2)
scheduler = CosineAnnealingLR(optimizer, T_max=10)
inputs = cr.random.randn(16, 2)
labels = cr.random.randint(0, 3, (16,))
for _ in range(3):
    optimizer.zero_grad()
    logits: Tensor = model(inputs)
    step_loss = F.cross_entropy(logits, labels)
    step_loss.backward()
    optimizer.step()
    scheduler.step()
accuracy = cr.mean(cr.astype(cr.argmax(logits, axis=1) == labels, cr.float64))
print(f"loss {step_loss.item():.3f}, accuracy {float(accuracy):.2f}")
state = model.state_dict()
model.load_state_dict(state)
seq = nn.Sequential(nn.Linear(2, 4), nn.ReLU(), nn.Linear(4, 1))
sgd = optim.SGD(seq.parameters(), lr=0.1, momentum=0.9)
assert_type(list(seq.parameters()), list[Tensor])
assert_type(F.mse_loss(seq(inputs), cr.zeros((16, 1))), Tensor)
