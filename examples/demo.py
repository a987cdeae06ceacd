"""chainrule's demonstration: a small network built with chainrule.nn learns scikit-learn's
bundled handwritten digits (1,797 8x8 images, no download) with optim.Adam; then a
Hessian-vector product (grad of grad) is checked against finite differences of the gradient.

Writes to demo-output/ (or the folder given as the first argument): curves.png (loss and
accuracy per epoch), misclassified.png (the held-out digits it gets wrong), step_graph.dot
(the graph of one training step; step_graph.svg too where Graphviz's `dot` is installed)."""

import os

# Small matrices gain nothing from BLAS threads, and spinning threads slow a busy machine down
# by ten times or more: one thread each, unless the caller says otherwise (set before NumPy).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import pathlib  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import matplotlib  # noqa: E402
import numpy as np  # noqa: E402
from sklearn.datasets import load_digits  # noqa: E402
from sklearn.model_selection import train_test_split  # noqa: E402
from tqdm import tqdm  # noqa: E402

import chainrule as cr  # noqa: E402
import chainrule.nn.functional as F  # noqa: E402
from chainrule import nn, optim  # noqa: E402
from chainrule.autograd import grad  # noqa: E402
from chainrule.autograd.graph import to_dot  # noqa: E402

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 - after choosing the backend

EPOCHS = 25
BATCH = 32


def model() -> nn.Module:
    return nn.Sequential(
        nn.Linear(64, 256),
        nn.GELU(),
        nn.Dropout(0.1),
        nn.Linear(256, 128),
        nn.GELU(),
        nn.Linear(128, 10),
    )


def accuracy(net: nn.Module, x: cr.Tensor, y: np.ndarray) -> tuple[float, np.ndarray]:
    net.eval()
    with cr.no_grad():
        predicted = np.argmax(net(x).numpy(), axis=1)
    net.train()
    return float(np.mean(predicted == y)), predicted


# ----------------------------------------------------------------------------- pictures


def plot_curves(history: dict, path: pathlib.Path) -> None:
    epochs = np.arange(1, len(history["loss"]) + 1)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(9, 3.4))
    ax1.plot(epochs, history["loss"], marker="o", ms=3)
    ax1.set(xlabel="epoch", ylabel="training loss (cross-entropy)", yscale="log")
    ax2.plot(epochs, history["train"], marker="o", ms=3, label="training")
    ax2.plot(epochs, history["test"], marker="o", ms=3, label="held out")
    # Every point in view: from the lowest accuracy (rounded down to 0.05) to a little above 1.
    lowest = min(history["train"] + history["test"])
    ax2.set(xlabel="epoch", ylabel="accuracy", ylim=(np.floor(lowest * 20) / 20, 1.005))
    ax2.legend(loc="lower right")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    fig.suptitle("chainrule: an MLP learns the 8x8 digits")
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


def plot_misclassified(images, truth, predicted, path: pathlib.Path) -> None:
    wrong = np.flatnonzero(truth != predicted)
    n = max(len(wrong), 1)
    # As few rows as 8 columns allow, the images spread evenly over them (9: 5 + 4, not 8 + 1).
    rows = -(-n // 8)
    cols = -(-n // rows)
    fig, axes = plt.subplots(rows, cols, figsize=(1.3 * cols, 1.75 * rows), squeeze=False)
    for ax in axes.ravel():
        ax.axis("off")
    for ax, i in zip(axes.ravel(), wrong):
        ax.imshow(images[i], cmap="gray_r")
        ax.set_title(f"{truth[i]} read as {predicted[i]}", fontsize=8)
    fig.suptitle(f"held-out digits misread: {len(wrong)} of {len(truth)}", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=150)
    plt.close(fig)


# ----------------------------------------------------------------------------- main


def main(out_dir: pathlib.Path) -> None:
    start = time.perf_counter()
    out_dir.mkdir(parents=True, exist_ok=True)
    cr.random.manual_seed(0)
    rng = np.random.default_rng(0)
    digits = load_digits()
    x_train, x_test, y_train, y_test, _, img_test = train_test_split(
        digits.data / 16.0, digits.target, digits.images, test_size=0.2,
        stratify=digits.target, random_state=0,
    )  # fmt: skip
    xtr, xte = cr.asarray(x_train), cr.asarray(x_test)
    ytr = cr.asarray(y_train)
    net = model()
    opt = optim.Adam(net.parameters(), lr=2e-3)
    sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=EPOCHS)
    n_params = sum(p.size for p in net.parameters())
    print(
        f"Training a 64-256-128-10 GELU network ({n_params:,} parameters) on "
        f"{len(y_train)} digits, {len(y_test)} held out; Adam, cosine-annealed learning rate"
    )
    history = {"loss": [], "train": [], "test": []}
    for epoch in range(1, EPOCHS + 1):
        order = rng.permutation(len(y_train))
        batches = [order[i : i + BATCH] for i in range(0, len(order), BATCH)]
        total, correct, seen = 0.0, 0, 0
        bar = tqdm(total=len(batches), desc=f"epoch {epoch:2d}/{EPOCHS}", unit="batch")
        for idx in batches:
            index = cr.asarray(idx)
            logits = net(cr.take(xtr, index, axis=0))
            target = cr.take(ytr, index, axis=0)
            loss = F.cross_entropy(logits, target)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item() * len(idx)
            correct += int(np.sum(np.argmax(logits.numpy(), axis=1) == y_train[idx]))
            seen += len(idx)
            bar.set_postfix(loss=f"{total / seen:.4f}", acc=f"{correct / seen:.1%}", refresh=False)
            bar.update(1)
        sched.step()
        test_acc, predicted = accuracy(net, xte, y_test)
        history["loss"].append(total / seen)
        history["train"].append(correct / seen)
        history["test"].append(test_acc)
        bar.set_postfix(
            loss=f"{total / seen:.4f}", acc=f"{correct / seen:.1%}", held_out=f"{test_acc:.1%}"
        )
        bar.close()
    misread = int(np.sum(predicted != y_test))
    print(f"Held-out accuracy: {history['test'][-1]:.2%} ({misread} of {len(y_test)} misread)")

    plot_curves(history, out_dir / "curves.png")
    plot_misclassified(img_test, y_test, predicted, out_dir / "misclassified.png")

    # The graph of one training step: forward and loss of one batch.
    step_loss = F.cross_entropy(net(xtr[:BATCH]), ytr[:BATCH])
    dot = to_dot(
        step_loss, path=str(out_dir / "step_graph.dot"), params=dict(net.named_parameters())
    )
    written = ["curves.png", "misclassified.png", "step_graph.dot"]
    if shutil.which("dot"):
        subprocess.run(
            [
                "dot",
                "-Tsvg",
                str(out_dir / "step_graph.dot"),
                "-o",
                str(out_dir / "step_graph.svg"),
            ],
            check=True,
        )
        written.append("step_graph.svg")
    print(f"Wrote {', '.join(written)} to {out_dir}/ (graph of one step: {dot.count('->')} edges)")

    print("Hessian-vector product of the loss, by differentiating the gradient once more")
    net.eval()  # no dropout: the same function at every evaluation
    params = list(net.parameters())
    vec = [cr.random.randn(p.shape) for p in params]
    x, y = xtr[:256], ytr[:256]
    gs = grad(F.cross_entropy(net(x), y), params, create_graph=True)
    hv = grad(cr.sum(cr.stack([cr.sum(g * u) for g, u in zip(gs, vec)])), params)
    eps = 1e-5
    sides = []
    for sign in (1.0, -1.0):
        with cr.no_grad():
            for p, u in zip(params, vec):
                p += sign * eps * u
        sides.append(grad(F.cross_entropy(net(x), y), params))
        with cr.no_grad():
            for p, u in zip(params, vec):
                p -= sign * eps * u
    fd = [(a.numpy() - b.numpy()) / (2 * eps) for a, b in zip(*sides)]
    err = max(np.max(np.abs(h.numpy() - f)) for h, f in zip(hv, fd))
    scale = max(np.max(np.abs(f)) for f in fd)
    print(f"  |Hv| max {scale:.4f}; largest difference from finite differences {err:.2e}")
    print(f"Done in {time.perf_counter() - start:.1f} s")


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "demo-output"))
