"""Planner-facing tables: fitted parameters, published-vs-model figures, measured defaults."""

from __future__ import annotations

from ..figures import figure
from ..params import load_params, params_path
from .report import figure_table

__all__ = ["model_parameters", "model_figures", "defaults"]


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
