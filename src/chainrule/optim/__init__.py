"""Optimizers with PyTorch's names, hyperparameters and trajectories, and learning-rate
schedulers (`chainrule.optim.lr_scheduler`)."""

from . import lr_scheduler
from .adadelta import Adadelta
from .adam import Adam, AdamW
from .adaptive import Adagrad, Adamax, NAdam, RAdam
from .asgd import ASGD
from .lbfgs import LBFGS
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD

__all__ = [
    "Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adamax", "NAdam", "RAdam", "LBFGS",
    "Adadelta", "ASGD", "Rprop", "lr_scheduler",
]  # fmt: skip
