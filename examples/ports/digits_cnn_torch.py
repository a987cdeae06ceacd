"""A small CNN on scikit-learn's digits (8x8 images of handwritten digits), written as a
PyTorch user writes it: Conv2d, BatchNorm2d, MaxPool2d, Dropout, a DataLoader with a
Sampler, SGD with OneCycleLR. digits_cnn_torch.py runs it on PyTorch, digits_cnn.py on
chainrule: the two files differ in their imports only, and from the same weights and batches
they give the same losses (tests/test_ports.py checks it against the PyTorch run's).

    python examples/ports/digits_cnn.py [--size small|full] [--dropout P]
"""

import argparse

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from torch import nn
from torch.utils.data import DataLoader, Sampler, TensorDataset

SIZES = {"small": {"train": 256, "epochs": 2}, "full": {"train": 1500, "epochs": 10}}


class Net(nn.Module):
    def __init__(self, dropout: float = 0.25):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 16, 3, padding=1),
            nn.BatchNorm2d(16),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(16, 32, 3, padding=1),
            nn.BatchNorm2d(32),
            nn.ReLU(),
            nn.MaxPool2d(2),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(dropout), nn.Linear(128, 10))

    def forward(self, x):
        return self.classifier(self.features(x))


class NumpyShuffle(Sampler):
    """The indices of a dataset in a new order at each epoch, drawn by NumPy: the PyTorch and
    the chainrule runs see the same batches."""

    def __init__(self, n: int, rng: np.random.Generator):
        self.n, self.rng = n, rng

    def __iter__(self):
        return iter(self.rng.permutation(self.n).tolist())

    def __len__(self):
        return self.n


def init_weights(model, seed: int) -> None:
    """Draw each convolution's and linear layer's weights from one NumPy generator (uniform,
    within PyTorch's default bounds): the PyTorch and the chainrule runs start alike."""
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                bound = 1 / np.sqrt(m.weight[0].numel())
                for p in (m.weight, m.bias):
                    p.copy_(torch.from_numpy(rng.uniform(-bound, bound, tuple(p.shape))))


def run(size: str = "small", dropout: float = 0.25, seed: int = 0) -> dict:
    """Train, then evaluate on the held-out digits; returns the loss of every step, the test
    loss and the test accuracy."""
    config = SIZES[size]
    digits = load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]  # (n, 1, 8, 8)
    labels = digits.target.astype(np.int64)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(labels))
    train, test = order[: config["train"]], order[1500:]

    model = Net(dropout).float()
    init_weights(model, seed)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    batch_size = 32
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=0.05, epochs=config["epochs"], steps_per_epoch=len(train) // batch_size
    )
    data = TensorDataset(torch.from_numpy(images[train]), torch.from_numpy(labels[train]))
    loader = DataLoader(
        data, batch_size=batch_size, sampler=NumpyShuffle(len(train), rng), drop_last=True
    )
    losses = []
    for _ in range(config["epochs"]):
        model.train()
        for x, y in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            sched.step()
            losses.append(loss.item())

    model.eval()
    with torch.no_grad():
        x, y = torch.from_numpy(images[test]), torch.from_numpy(labels[test])
        logits = model(x)
        test_loss = F.cross_entropy(logits, y).item()
        accuracy = (logits.argmax(dim=1) == y).float().mean().item()
    return {"losses": losses, "test_loss": test_loss, "accuracy": accuracy}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    parser.add_argument("--dropout", type=float, default=0.25)
    args = parser.parse_args()
    result = run(args.size, args.dropout)
    losses = result["losses"]
    print(f"{len(losses)} steps: loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    print(f"test loss {result['test_loss']:.4f}, accuracy {result['accuracy']:.3f}")
