"""Draws of the fitted parameters from the fit's covariance: how sure a planning answer is.

A fitted parameter has a standard error, and the parameters of one least-squares problem move
together (``cryptoplan fit`` names the pairs that trade off).  :func:`parameter_draws` gives
``n`` parameter sets as arrays, one value per draw, which the model functions read through
:func:`cryptoplan.model.params.using_values` as they read one set: an answer evaluated under the
draws is the distribution of that answer, from which a band (its quantiles) follows.

Each block of the parameter file's ``covariance`` section (one per least-squares problem:
:func:`cryptoplan.model.calibration.report.covariance_section`) is drawn from the multivariate
normal with the fitted values as mean, truncated to the parameters' bounds by rejection (a draw
with any parameter outside its bounds is drawn again, as a whole, so the correlations hold in
what is kept).  Where the file has a ``bootstrap`` block for a sub-model (``cryptoplan fit --out``
writes one where the normal is not to be trusted near the bounds:
:mod:`cryptoplan.model.calibration.bootstrap`) its parameters are drawn from the block's refits
instead, with replacement, each draw a whole row, the rows first moved so that each parameter's
median is its fitted value (:func:`recentred`).  Parameters outside every block (fixed, on a
bound, not identified) keep their value in every draw.

References
----------
.. [1] M. Newville et al., LMFIT: the covariance of a least-squares fit as the curvature of its
   cost (here, :mod:`cryptoplan.model.calibration.leastsq`'s convention: the robust fit's sandwich).
.. [2] C. P. Robert, "Simulation of truncated normal variables", Statistics and Computing 5
   (1995): rejection from the untruncated normal.
"""

from __future__ import annotations

import math

import numpy as np

from .._text import value_text
from ..domains import DRAWS
from ..errors import InputError
from ..params import load_params
from .free import FREE, free_bounds

__all__ = ["parameter_draws", "recentred", "MAX_REJECTED_SHARE"]

#: A block whose bounds reject more than this share of its normal draws is refused: its
#: normal approximation says little about where the parameters can be.
MAX_REJECTED_SHARE = 0.95


def _bounds(name: str) -> tuple[float, float]:
    return free_bounds(name) if name in FREE else (0.0, math.inf)


def parameter_draws(n: int, seed=None, doc: dict | None = None) -> dict:
    """``n`` draws of every parameter, as arrays the model functions broadcast over.

    Parameters
    ----------
    n : int
        Number of draws (:data:`cryptoplan.model.domains.DRAWS`: 1 to 1,000,000).
    seed : int or numpy.random.Generator, optional
        For reproducible draws.
    doc : dict, optional
        A parameter document with a ``covariance`` section (``cryptoplan fit --out`` writes
        one); default the parameters in force (:func:`cryptoplan.model.params.load_params`).

    Returns
    -------
    dict
        Parameter name -> ndarray of shape ``(n,)``, in the parameter's unit.

    Raises
    ------
    InputError
        ``n`` out of range, a document without a covariance section, a block that is not a
        covariance (not symmetric positive semi-definite), bounds that reject nearly every
        draw (:data:`MAX_REJECTED_SHARE`), or a bootstrap block that is not a table of draws
        within the bounds of parameters the file has.
    """
    n = int(DRAWS.check(n, scalar=True))
    doc = load_params() if doc is None else doc
    blocks = doc.get("covariance")
    if not isinstance(blocks, dict):
        raise InputError("the parameter file has no 'covariance' section: cryptoplan fit --out and "
                         "cryptoplan calibrate --out write one")
    rng = np.random.default_rng(seed)
    values = _values(doc)
    out = {name: np.full(n, v) for name, v in values.items()}
    boot = doc.get("bootstrap") or {}
    if not isinstance(boot, dict):
        raise InputError(f"the parameter file's 'bootstrap' section must be a table of blocks (got {value_text(boot)})")
    for group, block in blocks.items():
        if group in boot:
            continue
        names = _block_names(block, "covariance", group, values)
        try:
            cov = np.asarray(block.get("matrix"), dtype=float)
        except (TypeError, ValueError):
            cov = np.zeros((0, 0))
        if cov.shape != (len(names), len(names)) or not np.isfinite(cov).all() or not np.allclose(
                cov, cov.T, rtol=1e-9, atol=0.0):
            raise InputError(f"covariance block {group!r} is not a symmetric {len(names)} x {len(names)} matrix of "
                             "finite numbers (its 'matrix')")
        if np.linalg.eigvalsh(cov).min() < -1e-9 * max(np.abs(cov).max(), 1e-300):
            raise InputError(f"covariance block {group!r} is not positive semi-definite")
        mean = np.array([values[k] for k in names])
        lo, hi = np.array([_bounds(k) for k in names]).T
        out.update(zip(names, _truncated_normal(rng, mean, cov, lo, hi, n, group)))
    for group, block in boot.items():
        names = _block_names(block, "bootstrap", group, values)
        try:
            rows = np.asarray(block.get("draws"), dtype=float)
        except (TypeError, ValueError):
            rows = np.zeros((0, 0))
        if rows.ndim != 2 or rows.shape[1] != len(names) or not rows.shape[0] or not np.isfinite(rows).all():
            raise InputError(f"bootstrap block {group!r} is not a table of finite draws of {len(names)} parameters")
        lo, hi = np.array([_bounds(k) for k in names]).T
        if np.any((rows < lo) | (rows > hi)):
            raise InputError(f"bootstrap block {group!r} has draws outside its parameters' bounds")
        x_hat = np.array([values[k] for k in names])
        pick = recentred(rows, x_hat, lo, hi)[rng.integers(0, rows.shape[0], size=n)]
        out.update(zip(names, pick.T))
    _assumed(out, doc, n, rng)
    return out


def _assumed(out: dict, doc: dict, n: int, rng) -> None:
    """The assumed factors on quantum-safe card times drawn over their band, in place.

    Each of :data:`~cryptoplan.model.zos.quantum_safe.QS_FACTORS` the document still holds as
    the packaged assumption (source "assumption") is drawn by
    :func:`~cryptoplan.model.zos.quantum_safe.factor_draws`, times its value; a site that has
    measured its own times (another source) keeps its value, or its covariance block's draws.
    Drawn last, so the fitted parameters' draws are those of a document without them.
    """
    from ..zos.quantum_safe import QS_FACTORS, factor_draws
    params = doc.get("parameters", {})
    for name in QS_FACTORS.values():
        entry = params.get(name)
        if isinstance(entry, dict) and str(entry.get("source", "")).startswith("assumption"):
            out[name] = out[name] * factor_draws(n, rng)


def _values(doc: dict) -> dict:
    """The document's parameter values: ``{name: float}``, each a finite number."""
    params = doc.get("parameters")
    if not isinstance(params, dict):
        raise InputError("the parameter file has no 'parameters' section of name -> {value, ...}")
    out = {}
    for name, entry in params.items():
        v = entry.get("value") if isinstance(entry, dict) else None
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v):
            raise InputError(f"parameter {value_text(name)} has no finite value (got {value_text(v)})")
        out[name] = float(v)
    return out


def _block_names(block, section: str, group, values: dict) -> list:
    """A covariance or bootstrap block's ``names``: a list of distinct parameters the file has."""
    where = f"{section} block {value_text(group)}"
    if not isinstance(block, dict):
        raise InputError(f"{where} must be a table with names and {'matrix' if section == 'covariance' else 'draws'} "
                         f"(got {value_text(block)})")
    names = block.get("names")
    if not isinstance(names, list) or not names or not all(isinstance(k, str) for k in names):
        raise InputError(f"{where}: names must be a list of parameter names (got {value_text(names)})")
    twice = next((k for k in names if names.count(k) > 1), None)
    if twice is not None:
        raise InputError(f"{where}: the parameter {twice!r} is named twice")
    unknown = [k for k in names if k not in values]
    if unknown:
        raise InputError(f"{where} names parameters the file does not have: {', '.join(map(value_text, unknown))}")
    return names


def recentred(rows, x_hat, lo, hi) -> np.ndarray:
    """Bootstrap refits moved so that each parameter's median is its fitted value.

    A positive parameter (lower bound :math:`l_j \\ge 0`, fit and median above 0) is moved in
    logarithms, a scale; any other by a shift:

    .. math::

        \\theta^{**}_{b,j} = \\min\\Bigl(h_j, \\max\\Bigl(l_j, \\begin{cases}
            \\theta^*_{b,j}\\,\\hat\\theta_j / m_j & \\text{positive} \\\\
            \\theta^*_{b,j} - (m_j - \\hat\\theta_j) & \\text{otherwise}\\end{cases}\\Bigr)\\Bigr),
        \\qquad m_j = \\operatorname{median}_b \\theta^*_{b,j}

    with the median the refits' middle one (numpy's ``inverted_cdf`` quantile 0.5, the lower of the
    middle two for an even count, as the bands take their quantiles).  Either keeps the refits'
    order, and so the median where the move put it; a refit taken past a bound is held at it (the
    fitted value is inside the bounds).  Near a bound the refits are skewed and their median is
    not the fit; a plan's point answer (at the fitted values) then sat up to 13 percentiles from
    the median of its draws on the README's plan.  A cost is positive and its refits spread in
    ratios (a prior is a factor, a cost near 0 refits over decades): a shift in its own units
    moved the small refits onto the bound 0, a scale keeps each refit's ratio to the others.  On
    synthetic fits of the TLS block (``tests/test_bands_coverage.py``, 200 refits) the 90% band
    of the processors' utilization covered the truth 85.5% of the time scaled (88.5% scaled and
    85.5% shifted while the two forced 16KB misses were still fitted; 85.0% and 83.0% on two
    seeds since a figure's noise is its tolerance over the square root of 3; 89.0% and 90.0%
    since the synthetic problems keep the ranges the real one has, 88.0% over six seeds; 87.5%
    with the prior on TCPIP's cost per KB).

    Parameters
    ----------
    rows : ndarray, shape (refits, parameters)
    x_hat : ndarray, shape (parameters,)
        The fitted values, inside ``[lo, hi]``.
    lo, hi : ndarray, shape (parameters,)
        The parameters' bounds.

    Returns
    -------
    ndarray, shape (refits, parameters)
    """
    rows = np.asarray(rows, dtype=float)
    x_hat, lo, hi = (np.asarray(a, dtype=float) for a in (x_hat, lo, hi))
    median = np.quantile(rows, 0.5, axis=0, method="inverted_cdf")
    positive = (lo >= 0.0) & (x_hat > 0.0) & (median > 0.0)
    ratio = np.divide(x_hat, median, out=np.ones_like(x_hat), where=positive)
    moved = np.where(positive, rows * ratio, rows - (median - x_hat))
    # the median row scaled is x_hat up to one rounding: put it there exactly
    moved = np.where(positive & (rows == median), x_hat, moved)
    return np.clip(moved, lo, hi)


def _truncated_normal(rng, mean, cov, lo, hi, n: int, group: str) -> np.ndarray:
    """``n`` draws (columns) of N(mean, cov) inside [lo, hi], by rejection of whole draws."""
    kept: list[np.ndarray] = []
    drawn = 0
    while sum(k.shape[0] for k in kept) < n:
        want = n - sum(k.shape[0] for k in kept)
        batch = max(2 * want, 1000)
        x = rng.multivariate_normal(mean, cov, size=batch, method="eigh")
        drawn += batch
        kept.append(x[np.all((x >= lo) & (x <= hi), axis=1)])
        got = sum(k.shape[0] for k in kept)
        if drawn >= 10 * n + 10_000 and got < (1.0 - MAX_REJECTED_SHARE) * drawn:
            raise InputError(f"the bounds of block {group!r} reject {1 - got / drawn:.0%} of its normal draws: "
                             "its covariance says little about where the parameters can be")
    return np.concatenate(kept)[:n].T
