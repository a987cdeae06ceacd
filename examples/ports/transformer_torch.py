"""A small Transformer encoder that learns to reverse sequences of tokens (a synthetic task),
written as a PyTorch user writes it: Embedding, TransformerEncoderLayer, AdamW and
clip_grad_norm_. transformer_torch.py runs it on PyTorch, transformer.py on chainrule: the two
files differ in their imports only, and from the same weights and data they give the same
losses (tests/test_ports.py checks it against the PyTorch run's).

    python examples/ports/transformer.py [--size small|full]
"""

import argparse

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

SIZES = {"small": {"steps": 12}, "full": {"steps": 600}}
VOCAB, LENGTH, WIDTH, HEADS = 10, 8, 32, 4


class Encoder(nn.Module):
    """One post-norm encoder block (attention, then a feed-forward network) over a learned
    position embedding, and a head that reads a token at every position."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(VOCAB, WIDTH)
        self.position = nn.Parameter(torch.zeros(LENGTH, WIDTH))
        self.block = nn.TransformerEncoderLayer(
            WIDTH, HEADS, dim_feedforward=4 * WIDTH, dropout=0.0, batch_first=True
        )
        self.head = nn.Linear(WIDTH, VOCAB)

    def forward(self, tokens):
        return self.head(self.block(self.embed(tokens) + self.position))


def init_weights(model, seed: int) -> None:
    """Draw the weights from one NumPy generator (normal for the embeddings, uniform within
    PyTorch's default bounds for the projections): the PyTorch and the chainrule runs start
    alike. The LayerNorms keep their ones and zeros."""
    rng = np.random.default_rng(seed)

    def fill(p, values):
        p.copy_(torch.from_numpy(values))

    with torch.no_grad():
        fill(model.embed.weight, rng.normal(0.0, 1.0, (VOCAB, WIDTH)))
        fill(model.position, rng.normal(0.0, 0.5, (LENGTH, WIDTH)))
        for m in model.modules():
            if isinstance(m, nn.MultiheadAttention):
                bound = 1 / np.sqrt(WIDTH)
                fill(m.in_proj_weight, rng.uniform(-bound, bound, (3 * WIDTH, WIDTH)))
                fill(m.in_proj_bias, np.zeros(3 * WIDTH))
            elif isinstance(m, nn.Linear):
                bound = 1 / np.sqrt(m.in_features)
                fill(m.weight, rng.uniform(-bound, bound, (m.out_features, m.in_features)))
                fill(m.bias, rng.uniform(-bound, bound, m.out_features))


def run(size: str = "small", seed: int = 0) -> dict:
    """Train on fresh random sequences at every step; returns the loss of every step, the
    gradient norm before clipping, and the accuracy on held-out sequences."""
    rng = np.random.default_rng(seed)
    model = Encoder().float()
    init_weights(model, seed)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.01)
    losses, norms = [], []
    for _ in range(SIZES[size]["steps"]):
        sequences = rng.integers(0, VOCAB, (32, LENGTH))
        tokens = torch.from_numpy(sequences)
        target = tokens.flip(1)
        opt.zero_grad()
        loss = F.cross_entropy(model(tokens).reshape(-1, VOCAB), target.reshape(-1))
        loss.backward()
        norms.append(nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0).item())
        opt.step()
        losses.append(loss.item())

    model.eval()
    with torch.no_grad():
        tokens = torch.from_numpy(rng.integers(0, VOCAB, (256, LENGTH)))
        predicted = model(tokens).argmax(dim=-1)
        accuracy = (predicted == tokens.flip(1)).float().mean().item()
    return {"losses": losses, "grad_norms": norms, "accuracy": accuracy}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", choices=sorted(SIZES), default="small")
    result = run(parser.parse_args().size)
    losses = result["losses"]
    print(f"{len(losses)} steps: loss {losses[0]:.4f} -> {losses[-1]:.4f}")
    print(f"held-out accuracy {result['accuracy']:.3f}")
