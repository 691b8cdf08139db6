"""Planner-facing tables and numbers that need the calibration: fitted parameters,
published-vs-model figures, measured defaults, a plan's answer at a quantile of its draws, and
the cards or processors one workload needs at a confidence level."""

from __future__ import annotations

import numpy as np

from ..domains import BAND_LEVEL
from ..errors import InputError
from ..figures import figure
from ..params import binding, load_params, params_path, using_values
from ..remember import Remembered
from ..zos.ams import accelerators_required, coprocessors_required, processors_required
from ..zos.plan.inputs import ARGUMENT, checked
from ..zos.plan.tables import plan_quantile
from .draws import parameter_draws
from .report import figure_table

__all__ = ["model_parameters", "model_figures", "defaults", "plan_band", "accelerators_required_at_level",
           "coprocessors_required_at_level", "processors_required_at_level", "BAND_DRAWS", "BAND_SEED"]

#: Draws behind a spreadsheet's band (:func:`plan_band`), and their seed: every cell of a
#: workbook, and every recalculation, sees the same draws of the same parameter file.
BAND_DRAWS = 1000
BAND_SEED = 0

_DRAWN = Remembered(4)


def _draws() -> dict:
    """:data:`BAND_DRAWS` draws of the parameters in force (seed :data:`BAND_SEED`), made once per
    parameter binding: the same dict object each time, so the plan cache knows it."""
    bound = binding()
    return _DRAWN.get(tuple(map(id, bound)), lambda: parameter_draws(BAND_DRAWS, seed=BAND_SEED), keep=bound)


def plan_band(workloads, system, resource, quantity, quantile, growth=1.0, months=0.0, profiles=None, orders=None,
              migrations=None):
    """A plan's number at a quantile of the model's parameter draws (``PLAN_BAND``).

    :func:`~cryptoplan.model.zos.plan.tables.plan_value`'s number evaluated under
    :data:`BAND_DRAWS` draws of the parameters in force
    (:func:`~cryptoplan.model.calibration.draws.parameter_draws`, seed :data:`BAND_SEED`): at
    ``quantile`` 0.05 and 0.95 the ends of its 90% band, at 0.5 its median.

    Parameters
    ----------
    workloads, system, resource, quantity, growth, months, profiles, orders, migrations
        As :func:`~cryptoplan.model.zos.plan.tables.plan_value`.
    quantile : float
        In (0, 1).

    Returns
    -------
    float or ndarray
        The value of the draw at that quantile (one of the draws' values).

    Raises
    ------
    PlanError, UnstableQueueError, NotAvailableError
        As :func:`~cryptoplan.model.zos.plan.tables.plan_value`, for the draw at that quantile
        (the 95% quantile of a wait is an error where more than 5% of the draws overload the pool).
    """
    q = float(checked(BAND_LEVEL, quantile, ARGUMENT, "quantile"))
    return plan_quantile(workloads, system, resource, quantity, _draws(), q, growth, months, profiles, orders,
                         migrations)


def _count_at_level(count, args: tuple, level):
    """``count(*args)`` under the fitted parameters (``level`` None), else the count at the ``level``
    quantile of :data:`BAND_DRAWS` parameter draws: the fewest that suffice in that share of them."""
    if level is None:
        return count(*args)
    lv = np.asarray(BAND_LEVEL.check(level, "level", scalar=False), dtype=float)
    if lv.size == 0:
        raise InputError("level is empty: give a confidence in (0, 1), e.g. 0.9, or leave it out for the fitted "
                         "parameters' count")
    if lv.ndim and np.unique(lv).size > 1:     # several levels (a sweep): each one's own draws' answer
        out = np.zeros(np.broadcast_shapes(lv.shape, *(np.shape(a) for a in args)))
        for v in np.unique(lv):
            at = np.broadcast_to(lv == v, out.shape)
            out[at] = np.broadcast_to(_count_at_level(count, args, float(v)), out.shape)[at]
        return out
    q = float(lv.flat[0])
    # each array argument gets the draws' axis last; the parameters' arrays broadcast along it
    drawn = tuple(np.asarray(a)[..., None] if isinstance(a, np.ndarray) and a.ndim else a for a in args)
    with using_values(_draws()):
        counts = np.asarray(count(*drawn), dtype=float)
    counts = np.broadcast_to(counts, counts.shape[:-1] + (BAND_DRAWS,)) if counts.ndim else \
        np.full(BAND_DRAWS, float(counts))
    out = np.quantile(counts, q, axis=-1, method="inverted_cdf")
    return int(out) if np.ndim(out) == 0 else out


def accelerators_required_at_level(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None,
                                   max_utilization=0.7, max_wait_ms=None, recipients=1, service_scv=None,
                                   other_lpar_util=0.0, card_generation="CEX8S", level=None):
    r"""Accelerator cards one workload needs, at a confidence level of the model's parameters
    (``ACCELERATORS_REQUIRED``).

    :func:`~cryptoplan.model.zos.ams.accelerators_required` under the fitted parameters, or, with
    ``level``, its count at the ``level`` quantile of :data:`BAND_DRAWS` draws of the parameters
    in force (:func:`~cryptoplan.model.calibration.draws.parameter_draws`, seed
    :data:`BAND_SEED`, numpy's ``inverted_cdf``): the fewest cards that meet the targets in
    ``level`` of the draws.

    .. math:: k_q = \min\{k : \Pr_\theta[k^*(\theta) \le k] \ge q\}

    Parameters
    ----------
    level : float, optional
        In (0, 1), e.g. 0.9: the count that suffices in 90% of the draws.  None: the fitted
        parameters' count.
    Other parameters as :func:`~cryptoplan.model.zos.ams.accelerators_required`.

    Returns
    -------
    int or ndarray

    Raises
    ------
    InputError, NotAvailableError
        As :func:`~cryptoplan.model.zos.ams.accelerators_required` (for any draw), or ``level`` out
        of (0, 1).
    """
    return _count_at_level(accelerators_required, (
        tx_rate, policy, key_type, key_size, message_kb, key_reuse, max_utilization, max_wait_ms, recipients,
        service_scv, other_lpar_util, card_generation), level)


def coprocessors_required_at_level(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None,
                                   max_utilization=0.7, max_wait_ms=None, recipients=1, service_scv=None,
                                   other_lpar_util=0.0, card_generation="CEX8S", level=None):
    """Coprocessor cards one workload needs, at a confidence level (``COPROCESSORS_REQUIRED``).

    See :func:`accelerators_required_at_level`; the count is
    :func:`~cryptoplan.model.zos.ams.coprocessors_required`'s.
    """
    return _count_at_level(coprocessors_required, (
        tx_rate, policy, key_type, key_size, message_kb, key_reuse, max_utilization, max_wait_ms, recipients,
        service_scv, other_lpar_util, card_generation), level)


def processors_required_at_level(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None,
                                 max_utilization=0.7, recipients=1, platform="z16", level=None):
    """General processors one workload needs, at a confidence level (``PROCESSORS_REQUIRED``).

    See :func:`accelerators_required_at_level`; the count is
    :func:`~cryptoplan.model.zos.ams.processors_required`'s.
    """
    return _count_at_level(processors_required, (
        tx_rate, policy, key_type, key_size, message_kb, key_reuse, max_utilization, recipients, platform), level)


def model_parameters() -> list[dict]:
    """The parameters in force, one row each: name, value, stderr, unit, submodel, source, description.

    Returns
    -------
    list of dict
        One dict per parameter, sorted by name.  ``stderr`` is None for a parameter that is
        not fitted (a published value, a structural assumption, or a value a site measured
        directly): it has no standard error.  The spreadsheet table
        (``MODEL_PARAMETERS``) shows an absent value as the text ``n/a``, never a blank.
    """
    doc = load_params()["parameters"]
    rows = [{"name": name, **{k: p.get(k) for k in ("value", "stderr", "unit", "submodel", "source",
                                                     "description")}} for name, p in sorted(doc.items())]
    return rows


def model_figures() -> list[dict]:
    """Published vs model for every figure a model predicts (:func:`~cryptoplan.model.calibration.report.figure_table`).

    Returns
    -------
    list of dict
        One dict per figure.  ``low`` and ``high`` are None for a figure published as one
        value rather than a range; ``relative_error`` is None where the published value is
        0; ``reason`` is empty where the model meets the figure.  The spreadsheet table
        (``MODEL_FIGURES``) shows an absent value as the text ``n/a``, never a blank.
    """
    return figure_table({k: v["value"] for k, v in load_params()["parameters"].items()})


def defaults() -> dict:
    """Inputs that reproduce seed 001's measured configuration, and the channel initiator's
    documented task counts (values read from their rows)."""
    return {
        "Coprocessors": int(figure("s001_cfg_coprocessors_per_lpar").target()),
        "Accelerators": int(figure("s001_cfg_accelerators_shared").target()),
        "Processors": int(figure("ref_start_cfg_cps").target()),
        "KeyType": "RSA",
        "KeySize": int(figure("s001_cfg_rsa_key_2048").target()),
        "MessageKB": float(figure("s001_2k_integrity_tput_1024").conditions["message_kb"]),
        "Requesters": int(figure("s001_cfg_requester_tasks").target()),
        "Policy": "integrity",
        "SSLTASKS": int(figure("ref_ssltasks_example_count").target()),
        "CHIDISPS": int(figure("ref_chidisps_default").target()),
        "params_file": str(params_path()),
    }
