"""What a site calibration is made of: site numbers the model predicts, and their errors.

An :class:`Observation` is one number measured at a site (a card's EXEC TIME, an address
space's CPU per transaction, an SSL task's CPU per message) with the model's prediction of
it and its relative uncertainty; :class:`CalibrationError` names a site file's line that
cannot be used.  The readers (:mod:`~cryptoplan.model.calibration.rmf_crypto`,
:mod:`~cryptoplan.model.calibration.cpu_table`,
:mod:`~cryptoplan.model.calibration.smf_calibration`) build them;
:func:`cryptoplan.model.calibration.calibrate.calibrate` refits on them.
"""

from __future__ import annotations

from cryptoplan.model.errors import CryptoplanError

import math
from dataclasses import dataclass, field
from typing import Callable

from .free import FREE

__all__ = ["MEASUREMENT_RTOL", "CalibrationError", "Observation", "located", "parse_number", "tls_parameters"]

# A site number's smallest relative standard deviation: the variation between intervals.
MEASUREMENT_RTOL = 0.01


class CalibrationError(CryptoplanError, ValueError):
    """Site data that cannot be used: names the file, the line and what is accepted."""


@dataclass(frozen=True)
class Observation:
    """A site number the model predicts from parameters.

    ``predict`` evaluates the model under the parameters in force
    (:func:`cryptoplan.model.params.using_values`); ``params`` names the parameters it may depend
    on (the calibration's candidates); ``sigma`` is the number's relative (log-space)
    standard deviation; ``quantity`` says what it is, with its unit, for the report.
    """

    label: str
    value: float
    sigma: float
    predict: Callable[[], float] = field(compare=False)
    params: tuple = ()
    quantity: str = "EXEC TIME, ms"


def located(path, line) -> str:
    """Where a site number sits, for messages: ``"<path> line <n>"`` for a line number, else
    ``"<path> <line>"`` (``line`` a place in words, such as ``"byte 4096"`` of a binary file)."""
    return f"{path} line {line}" if isinstance(line, int) else f"{path} {line}"


def parse_number(path, line, column, text, lo=0.0, hi=None):
    """The number a site table's cell holds, checked to be finite and in ``[lo, hi]``.

    Parameters
    ----------
    path : str
        The source, named in messages.
    line : int or str
        The line of the source (or a place in words), named in messages (:func:`located`).
    column : str
        The column heading, named in messages.
    text : str
        The cell as typed.
    lo, hi : float, optional
        The bounds (``hi`` None: no upper bound), in the column's unit.

    Returns
    -------
    float

    Raises
    ------
    CalibrationError
        Naming the file, the line, the column and what is accepted.
    """
    try:
        v = float(text)
    except ValueError:
        raise CalibrationError(f"{located(path, line)}: {column} {text!r} is not a number") from None
    if not math.isfinite(v) or v < lo or (hi is not None and v > hi):
        allowed = f"in [{lo:g}, {hi:g}]" if hi is not None else f">= {lo:g}"
        raise CalibrationError(f"{located(path, line)}: {column} {text!r} must be a finite number {allowed}")
    return v


def tls_parameters() -> tuple:
    """The TLS sub-model's free parameters: what a channel CPU observation may depend on."""
    return tuple(n for n, spec in FREE.items() if spec.submodel == "tls")
