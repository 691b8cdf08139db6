"""Figures the models predict without being fitted to them: evaluated, scored and counted apart.

A fitted figure says how well the fit follows what it was made to; a *prediction* is a published
figure no fit uses, compared with what the model computes from its fitted parameters: the test a
planner cares about.  The rows of ``data/coverage.csv`` marked ``checked`` are these; each is
evaluated here by the public function a user calls (or, for the two the fit leaves out, as the
fitted figures are), under the conditions its row gives, and
scored against its accepted interval (:meth:`cryptoplan.model.figures.Figure.bounds`), a miss
listed with its reason in ``data/misses.csv``.  ``cryptoplan fit`` prints
them under their own heading and counts them apart from the fitted figures and from the echoes
(``echo`` rows: operation counts the AMS model is built from, which no evaluation can miss).

The predicted figures:

* seed 002's "% increase in round-trip time" row (five cells): AT-TLS's round trip over
  SSLCIPH's, from the round-trip model fitted to the ten published times (a ratio of two
  fitted values, not itself fitted);
* the z16 report's large-message AMS throughput gains over z15 (three policies): one requester,
  4MB, RSA 2048, z15 with Crypto Express 7S against z16 with 8S (no AMS figure of z16 against
  z15 is fitted);
* the two *forced* misses the fit leaves out (:data:`~cryptoplan.model.calibration.targets.NOT_FITTED`:
  seed 000's and seed 002's 16KB total savings, each one of a series of sizes no cost linear in
  size can all meet), computed as the fitted figures are;
* seed 003's "up to 98% CPU savings" for DHE ciphers with the signature on a coprocessor rather
  than in software: the handshake model is fitted to the note beside it, which prints 53% for the
  DHE ciphers (and 98% for ECDHE), so the two sentences cannot both hold and this one is a miss.
"""

from __future__ import annotations

import contextlib
import csv
from typing import Callable

from ..datafiles import data_path
from ..errors import UnknownName
from ..figures import figure, load_figures
from ..params import using_values
from ..zos.ams import SIZE_CLASSES_KB, ams_throughput
from ..zos.tls import handshake_cpu_factor, tls_roundtrip_us
from .report import figure_row, known_misses
from .targets import NOT_FITTED, predict_all, scored_targets, targets

__all__ = ["PREDICTED", "predicted_ids", "predicted_value", "prediction_table", "figure_uses", "figure_counts"]

_CHACHA = "TLS_CHACHA20_POLY1305_SHA256"
_RT_TAGS = ("2k", "16k", "32k", "64k", "1m")        # the round-trip table's columns; sizes from the rows


def _roundtrip_gain(fid: str) -> Callable[[], float]:
    """AT-TLS's round trip over SSLCIPH's (%) at the size of row ``fid``, from the fitted round-trip model."""
    def of() -> float:
        kb = float(figure(fid).conditions["message_kb"])
        return 100.0 * (float(tls_roundtrip_us("ATTLS", _CHACHA, kb)) / float(tls_roundtrip_us("SSLCIPH", _CHACHA, kb))
                        - 1.0)
    return of


def _z16_gain(policy: str) -> Callable[[], float]:
    """z16 with Crypto Express 8S over z15 with 7S, AMS throughput (%): one requester, RSA 2048, a
    "large" message read as the z15 report's large size class (the row gives neither key nor size)."""
    def of() -> float:
        kb = SIZE_CLASSES_KB["large"]
        z15 = ams_throughput(policy, "RSA", 2048, kb, platform="z15", card_generation="CEX7S")
        z16 = ams_throughput(policy, "RSA", 2048, kb, platform="z16", card_generation="CEX8S")
        return 100.0 * (float(z16) / float(z15) - 1.0)
    return of


def _dhe_coprocessor_saving() -> float:
    """The DHE handshake's CPU with its signature on a coprocessor against in software (%)."""
    return -100.0 * (1.0 - float(handshake_cpu_factor("DHE")) / float(handshake_cpu_factor("DHE", card_mode="accelerator")))


#: Figure id -> how the model computes it (a function of the parameters in force).
PREDICTED: dict[str, Callable[[], float]] = {
    **{f"s002_rt_attls_vs_sslciph_{tag}_pct": _roundtrip_gain(f"s002_rt_attls_vs_sslciph_{tag}_pct") for tag in _RT_TAGS},
    **{f"ref_z16_vs_z15_tput_large_{p}": _z16_gain(p) for p in ("integrity", "privacy", "confidentiality")},
    "s003_coproc_vs_accel_dhe_cost": _dhe_coprocessor_saving,
}


def predicted_ids() -> list[str]:
    """The figures no fit uses that the models compute: :data:`PREDICTED`, then the fit's
    :data:`~cryptoplan.model.calibration.targets.NOT_FITTED` (forced misses, left out of the fit)."""
    return list(PREDICTED) + list(NOT_FITTED)


def predicted_value(fid: str, values: dict | None = None) -> float:
    """The model's value of the predicted figure ``fid``, under ``values`` (default: the parameters in force).

    Raises
    ------
    UnknownName
        (a KeyError) ``fid`` is not a predicted figure (:func:`predicted_ids`).
    """
    if fid not in predicted_ids():
        raise UnknownName(f"{fid!r} is not a predicted figure; the predicted ones are {', '.join(predicted_ids())}")
    with using_values(values) if values is not None else contextlib.nullcontext():
        if fid in PREDICTED:
            return float(PREDICTED[fid]())
        [t] = [t for t in scored_targets() if t.figure_id == fid]
        return float(t.predict())


def prediction_table(values: dict) -> list[dict]:
    """Published vs model for every predicted figure, in the rows of
    :func:`cryptoplan.model.calibration.report.figure_table` (each against its own accepted
    interval, :meth:`~cryptoplan.model.figures.Figure.bounds`; a miss with its reason from
    ``data/misses.csv``).

    Parameters
    ----------
    values : dict
        Parameter name -> value (a parameter file's values), each in its unit.
    """
    misses = known_misses()
    table = load_figures()
    rows = []
    scored = predict_all(values, scored_targets())
    with using_values(values):
        for fid in predicted_ids():
            if fid not in table:        # a figures table of the user's (fit --figures) without it
                continue
            f = table[fid]
            model = float(PREDICTED[fid]()) if fid in PREDICTED else scored[fid]
            rows.append(figure_row(f, model, misses))
    return rows


def figure_uses() -> dict:
    """What each published row is to the models: id -> use (``data/coverage.csv``: ``fitted``,
    ``checked`` (predicted), ``echo``, ``read``, ``input``, ``unmodelled``)."""
    with open(data_path("coverage.csv"), encoding="utf-8", newline="") as fh:
        return {r["id"]: r["use"] for r in csv.DictReader(fh)}


def figure_counts(fitted_rows: list[dict], predicted_rows: list[dict]) -> dict:
    """The figures counted apart, as ``cryptoplan fit`` prints them.

    Parameters
    ----------
    fitted_rows : list of dict
        :func:`cryptoplan.model.calibration.report.figure_table`'s rows (the figures a fit uses).
    predicted_rows : list of dict
        :func:`prediction_table`'s rows.

    Returns
    -------
    dict
        ``fitted`` and ``predicted``: ``(within tolerance, scored)``; ``descriptive``: the same for
        the fitted figures of seed 000's descriptive z196 set (among ``fitted``); ``echoes``: the
        number of ``echo`` rows (operation counts the AMS model is built from: returned, not
        predicted, so never counted as within tolerance).
    """
    group = {t.figure_id: t.group for t in targets()}
    descriptive = [r for r in fitted_rows if group.get(r["id"]) == "tls_z196"]

    def tally(rows):
        return sum(bool(r["within_tolerance"]) for r in rows), len(rows)
    echoes = sum(use == "echo" for use in figure_uses().values())
    return {"fitted": tally(fitted_rows), "descriptive": tally(descriptive), "predicted": tally(predicted_rows),
            "echoes": echoes}
