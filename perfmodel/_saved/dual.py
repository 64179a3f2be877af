"""Forward-mode derivatives in NumPy: dual numbers ``a + b·ε`` (ε² = 0) that the closed
forms of `perfmodel._closed` evaluate unchanged (`xp` is this module).

A `Dual` carries a value and its derivative along one direction; a dual whose parts are
duals carries mixed second derivatives (used for the derivative in N of a Laplace
member's parameter derivatives). At kinks the derivative follows JAX's rules, so that
both paths give the same marginal speedups: ``maximum``/``minimum`` split a tie evenly
(½ to each side, as `jax.lax.max`) and a maximum over an axis averages its tied
elements. Comparisons of duals compare their values (`where` masks).
"""

import numpy as np


class Dual:
    """``val + tan·ε``: a value and its derivative (arrays, or duals when nested)."""

    __slots__ = ("val", "tan")
    __array_ufunc__ = None  # NumPy arrays defer to the reflected operators below

    def __init__(self, val, tan):
        self.val, self.tan = val, tan

    def __add__(self, other):
        if isinstance(other, Dual):
            return Dual(self.val + other.val, self.tan + other.tan)
        return Dual(self.val + other, self.tan)

    __radd__ = __add__

    def __neg__(self):
        return Dual(-self.val, -self.tan)

    def __sub__(self, other):
        return self + (-other)

    def __rsub__(self, other):
        return (-self) + other

    def __mul__(self, other):
        if isinstance(other, Dual):
            return Dual(self.val * other.val, self.tan * other.val + self.val * other.tan)
        return Dual(self.val * other, self.tan * other)

    __rmul__ = __mul__

    def __truediv__(self, other):
        if isinstance(other, Dual):
            value = self.val / other.val
            return Dual(value, (self.tan - value * other.tan) / other.val)
        return Dual(self.val / other, self.tan / other)

    def __rtruediv__(self, other):
        value = other / self.val
        return Dual(value, -value * self.tan / self.val)

    def __pow__(self, exponent):
        if isinstance(exponent, Dual):
            raise TypeError("dual exponents are not needed by the closed forms")
        exponent = np.asarray(exponent)
        slope = np.where(exponent == 0, 0.0, exponent) * self.val ** (exponent - 1.0)
        return Dual(self.val**exponent, slope * self.tan)

    # Comparisons are of the values (for `where` masks).
    def __lt__(self, other):
        return primal(self) < primal(other)

    def __le__(self, other):
        return primal(self) <= primal(other)

    def __gt__(self, other):
        return primal(self) > primal(other)

    def __ge__(self, other):
        return primal(self) >= primal(other)

    @property
    def shape(self):
        return np.shape(primal(self))


def primal(x):
    """The innermost value of `x` (an array for a dual of duals)."""
    while isinstance(x, Dual):
        x = x.val
    return x


def value(x):
    """`x` without its outermost derivative."""
    return x.val if isinstance(x, Dual) else x


def derivative(x):
    """The outermost derivative of `x` (0 for a constant)."""
    return x.tan if isinstance(x, Dual) else np.zeros_like(primal(x))


def seed(x):
    """`x` as a dual of derivative 1 (the variable differentiated along)."""
    return Dual(x, np.ones_like(primal(x)))


def ones_like(x):
    return np.ones_like(primal(x))


def exp(x):
    if isinstance(x, Dual):
        e = exp(x.val)
        return Dual(e, e * x.tan)
    return np.exp(x)


def log(x):
    if isinstance(x, Dual):
        return Dual(log(x.val), x.tan / x.val)
    return np.log(x)


def log2(x):
    if isinstance(x, Dual):
        return Dual(log2(x.val), x.tan / (x.val * np.log(2.0)))
    return np.log2(x)


def where(mask, a, b):
    mask = primal(mask)
    if isinstance(a, Dual) or isinstance(b, Dual):
        return Dual(where(mask, value(a), value(b)), where(mask, derivative(a), derivative(b)))
    return np.where(mask, a, b)


def _chooser(pick, a, b):
    """`pick` (np.maximum/np.minimum) of a and b; a tie gives each side half the slope."""
    if not (isinstance(a, Dual) or isinstance(b, Dual)):
        return pick(a, b)
    pa, pb = primal(a), primal(b)
    chosen = pick(pa, pb)
    wa = np.where(pa == chosen, np.where(pb == chosen, 0.5, 1.0), 0.0)
    wb = np.where(pb == chosen, np.where(pa == chosen, 0.5, 1.0), 0.0)
    return Dual(_chooser(pick, value(a), value(b)), derivative(a) * wa + derivative(b) * wb)


def maximum(a, b):
    return _chooser(np.maximum, a, b)


def minimum(a, b):
    return _chooser(np.minimum, a, b)


def _reduce(pick, items):
    """Elementwise `pick` over `items` (a list of arrays or duals): ties share the slope
    evenly, as a JAX reduction over a stacked axis does."""
    values = [primal(x) for x in items]
    chosen = pick(np.stack(values), axis=0)
    if not any(isinstance(x, Dual) for x in items):
        return chosen
    hits = [v == chosen for v in values]
    count = sum(h.astype(np.float64) for h in hits)
    inner = _reduce(pick, [value(x) for x in items])
    slope = sum(derivative(x) * h for x, h in zip(items, hits)) / count
    return Dual(inner, slope)


def amax(items):
    return _reduce(np.max, items)


def amin(items):
    return _reduce(np.min, items)
