"""nn.functional's activations that need a derivative of their own: softplus (whose
composition through logaddexp had a NaN second derivative far to the left and the wrong one
at its threshold), log_sigmoid (a node of its own, PyTorch's LogSigmoidBackward0) and the elu
family (whose expm1 gave a first derivative of 0 far to the
left). Real values only; the derivatives are written with primitives, so they
differentiate again."""

from __future__ import annotations

from ._declare import unary

# softplus, p = (beta, threshold): log(1 + exp(beta x)) / beta, and x itself where
# beta x > threshold, as PyTorch. The derivative is sigmoid(beta x) (1 above the threshold),
# through the sigmoid rule, whose own derivative s (1 - s) stays finite at any x (logaddexp's
# 1 / (1 + exp(-x)), differentiated again, was inf / inf at x = -800 and -inf). Its argument
# is the constant threshold where beta x >= threshold: the second derivative is 0 from the
# threshold on, the threshold itself included, as PyTorch's (x < threshold there), while the
# first derivative there is still the smooth branch's. A NaN x gives NaN.


def _softplus(xp, x, p):
    beta, threshold = p
    bx = x * beta
    return xp.where(bx > threshold, x, xp.logaddexp(bx, 0.0) / beta)


def _softplus_vjp(xp, g, x, out, p):
    beta, threshold = p
    bx = x * beta
    slope = xp.primitive("sigmoid", xp.where(bx >= threshold, threshold, bx))
    return g * xp.where(bx > threshold, 1.0, slope)


unary("softplus", _softplus, _softplus_vjp, "x", jvp="symmetric")

# log_sigmoid: log(sigmoid(x)) = -softplus(-x), exact far out on both sides (x itself far to
# the left, -exp(-x) far to the right). The derivative is sigmoid(-x), through the sigmoid
# rule, so that the second derivative is -s (1 - s) with s = sigmoid(-x), finite at any x.


def _log_sigmoid(xp, x, p):
    return -xp.logaddexp(-x, 0.0)


def _log_sigmoid_vjp(xp, g, x, out, p):
    return g * xp.primitive("sigmoid", -x)


unary("log_sigmoid", _log_sigmoid, _log_sigmoid_vjp, "x", jvp="symmetric")

# elu, p = (alpha, scale, input_scale): scale x where x > 0, alpha scale expm1(input_scale x)
# elsewhere (PyTorch's elu; selu and celu are its special cases). The derivative left of 0 is
# alpha scale input_scale exp(input_scale x), exact everywhere (expm1's out + 1 was 0 from
# x ~ -37 on, where the exact one is 4e-17), and scale right of 0 and at a NaN x (x <= 0 is
# false there), as PyTorch's. expm1 and exp see min(x, 0) (written as a where, whose
# derivative at 0 is the left branch's): the dropped branch stays finite for large x.


def _elu(xp, x, p):
    alpha, scale, input_scale = p
    left = x <= 0
    below = xp.where(left, x, 0.0)
    return xp.where(left, (alpha * scale) * xp.expm1(below * input_scale), x * scale)


def _elu_vjp(xp, g, x, out, p):
    alpha, scale, input_scale = p
    left = x <= 0
    below = xp.where(left, x, 0.0)
    return g * xp.where(left, (alpha * scale * input_scale) * xp.exp(below * input_scale), scale)


unary("elu", _elu, _elu_vjp, "x", jvp="symmetric")
