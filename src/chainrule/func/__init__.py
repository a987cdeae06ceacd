"""chainrule.func: composable function transforms with torch.func's names and semantics,
over pytrees of tensors: grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd, hessian,
vmap, functionalize, and functional_call and stack_module_state for nn modules."""

from ._functional_call import functional_call, stack_module_state
from ._transforms import (
    functionalize,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    vjp,
)
from ._vmap import vmap

__all__ = [
    "functional_call",
    "functionalize",
    "grad",
    "grad_and_value",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linearize",
    "stack_module_state",
    "vjp",
    "vmap",
]
