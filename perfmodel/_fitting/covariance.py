"""Gauss-Newton (Laplace) covariance from a Jacobian of residuals, and fit quality.

One helper for every fit: step times, nccl-tests groups, joint fits and the ensembles
behind intervals.
"""

from jaxtyping import Float
import numpy as np

NULL_SHARE = 1e-7  # singular values of J below this share of the largest span no data


def gauss_newton_inverse(
    jacobian: Float[np.ndarray, "n k"],
) -> tuple[Float[np.ndarray, "k k"], Float[np.ndarray, "r k"]]:
    """``(inverse, null)``: ``(JᵀJ)⁺`` on the directions the data determine, and the rows
    of Vᵀ (from the SVD ``J = U·S·Vᵀ``) they leave undetermined.

    A direction is undetermined when its singular value is at most `NULL_SHARE` of the
    largest; a ``k``-column J with fewer rows has ``k − rows`` further null directions.
    """
    _, singular, vt = np.linalg.svd(jacobian, full_matrices=False)
    null = singular <= NULL_SHARE * max(float(singular.max(initial=0.0)), 1e-300)
    inverse = np.where(null, 0.0, 1.0 / np.where(null, 1.0, singular) ** 2)
    rows, k = jacobian.shape
    extra = np.zeros((0, k))
    if rows < k:  # only then does Vᵀ have more rows (U stays rows × rows: small)
        extra = np.linalg.svd(jacobian, full_matrices=True)[2][len(singular) :]
    return (vt.T * inverse) @ vt, np.concatenate([vt[null], extra])


def unconstrained(null: Float[np.ndarray, "r k"]) -> np.ndarray:
    """True for each parameter with weight on an undetermined direction."""
    return np.abs(null).max(axis=0, initial=0.0) > 1e-3


def laplace_covariance(
    jacobian: Float[np.ndarray, "rows k"], residuals: Float[np.ndarray, " n"]
) -> Float[np.ndarray, "k k"] | None:
    """Gauss-Newton (Laplace) covariance ``σ²·(JᵀJ)⁻¹`` of stored parameters.

    ``σ² = Σr²/(n − k)`` over the n `residuals`; the rows of `jacobian` may be fewer
    (one per distinct configuration, each scaled by the root of its weight, as
    `assemble` builds them). A parameter with weight on a direction the data cannot tell
    (`gauss_newton_inverse`) gets infinite variance rather than the zero a
    pseudo-inverse would give. None when there are no more residuals than parameters.
    """
    n, k = residuals.size, jacobian.shape[1]
    if n <= k:
        return None
    sigma2 = float(np.sum(residuals**2)) / (n - k)
    inverse, null = gauss_newton_inverse(jacobian)
    cov = sigma2 * inverse
    open_ = unconstrained(null)
    cov[open_, :] = np.inf
    cov[:, open_] = np.inf
    return cov


def fit_quality(measured: np.ndarray, predicted: np.ndarray) -> tuple[float, float]:
    """R² and MAPE in percent, computed on values divided by their mean so that
    measurements of 1e±300 stay finite. Measurements that do not vary leave R²
    undefined: it is then 1 for an exact fit and 0 otherwise, never NaN."""
    scale = float(np.mean(np.abs(measured)))
    m, p = measured / scale, predicted / scale
    with np.errstate(over="ignore", invalid="ignore"):  # a wild prediction: R² -inf
        ss_res = float(np.sum((p - m) ** 2))
    ss_tot = float(np.sum((m - m.mean()) ** 2))
    if ss_tot > 1e-24 * m.size:
        r2 = 1.0 - ss_res / ss_tot
    else:
        r2 = 1.0 if ss_res <= 1e-24 * m.size else 0.0
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        mape = float(np.mean(np.abs(p - m) / np.abs(m)) * 100.0)
    return r2, mape
