"""Planner-facing tables and numbers that need the calibration: fitted parameters,
published-vs-model figures, measured defaults, a plan's answer at a quantile of its draws."""

from __future__ import annotations

from collections import OrderedDict

from ..domains import BAND_LEVEL
from ..figures import figure
from ..params import binding, load_params, params_path
from ..zos.plan.inputs import ARGUMENT, checked
from ..zos.plan.tables import plan_quantile
from .draws import parameter_draws
from .report import figure_table

__all__ = ["model_parameters", "model_figures", "defaults", "plan_band", "BAND_DRAWS", "BAND_SEED"]

#: Draws behind a spreadsheet's band (:func:`plan_band`), and their seed: every cell of a
#: workbook, and every recalculation, sees the same draws of the same parameter file.
BAND_DRAWS = 1000
BAND_SEED = 0

_DRAWN: OrderedDict = OrderedDict()


def _draws() -> dict:
    """:data:`BAND_DRAWS` draws of the parameters in force (seed :data:`BAND_SEED`), made once per
    parameter binding: the same dict object each time, so the plan cache knows it."""
    key = tuple(map(id, binding()))
    if key not in _DRAWN:
        _DRAWN[key] = (binding(), parameter_draws(BAND_DRAWS, seed=BAND_SEED))
        while len(_DRAWN) > 4:
            _DRAWN.popitem(last=False)
    _DRAWN.move_to_end(key)
    return _DRAWN[key][1]


def plan_band(workloads, system, resource, quantity, quantile, growth=1.0, months=0.0, profiles=None):
    """A plan's number at a quantile of the model's parameter draws (``PLAN_BAND``).

    :func:`~cryptoplan.model.zos.plan.tables.plan_value`'s number evaluated under
    :data:`BAND_DRAWS` draws of the parameters in force
    (:func:`~cryptoplan.model.calibration.draws.parameter_draws`, seed :data:`BAND_SEED`): at
    ``quantile`` 0.05 and 0.95 the ends of its 90% band, at 0.5 its median.

    Parameters
    ----------
    workloads, system, resource, quantity, growth, months, profiles
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
    return plan_quantile(workloads, system, resource, quantity, _draws(), q, growth, months, profiles)


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
