"""A site's RMF Crypto Hardware Activity report: its lines, and the card times they observe.

RMF's Crypto Hardware Activity report gives, per Crypto Express card, the request rate, the
average execution time (RMF "EXEC TIME", the card's service time per request, without
queueing) and the utilization, and for accelerators the ME- and CRT-format RSA rows by key
length.  :func:`read_rmf_crypto` and :func:`rmf_rows` read and check those lines;
:func:`rmf_observations` turns the rows that observe one card function (the accelerator's ME and
CRT rows) into :class:`~cryptoplan.model.calibration.observations.Observation` of the card-time
parameters (:func:`cryptoplan.model.zos.crypto.function_ms`); a card's TOTAL line, its mean over
every request, observes no one function (:mod:`~cryptoplan.model.calibration.card_speed`);
:func:`util_consistency` checks the report's own identity UTIL% = RATE x EXEC TIME.

References
----------
IBM, "z/OS RMF Report Analysis", Crypto Hardware Activity report (SC34-2665).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from ..datafiles import read_csv_table
from ..zos.ams import card_generation_factor
from ..zos.crypto import CARD_FUNCTIONS, function_ms
from .observations import MEASUREMENT_RTOL, CalibrationError, Observation, located, parse_number

__all__ = ["RMF_COLUMNS", "RMF_FUNCTIONS", "RmfRow", "RMF_MAX_UTIL_PCT", "RMF_MAX_ROW_UTIL_PCT", "RMF_MAX_EXEC_MS",
           "RMF_MAX_RATE", "read_rmf_crypto", "rmf_rows", "rmf_observations", "UTIL_DISAGREEMENT",
           "UTIL_DISAGREEMENT_POINTS", "util_consistency", "consistency_warning"]

# The report's column headings (RMF prints EXEC TIME in ms, UTIL% in percent, RATE per second).
RMF_COLUMNS = ("TYPE", "ID", "FUNCTION", "KEY", "RATE", "EXEC TIME", "UTIL%")
# FUNCTION: TOTAL for a card's summary line; ME and CRT for the accelerator's
# "ME-FORMAT RSA OPERATIONS" and "CRT-FORMAT RSA OPERATIONS" lines.
RMF_FUNCTIONS = ("TOTAL", "ME", "CRT")
_RSA_KEYS = (1024, 2048, 3072, 4096)
_TYPE = re.compile(r"CEX([5-8])([CAP])")


@dataclass(frozen=True)
class RmfRow:
    """One line of the Crypto Hardware Activity report."""

    line: int | str    # the line number, or a place in words ("byte 4096" of an SMF 70-2 file)
    type: str          # e.g. CEX8C
    id: str            # card (AP) number as printed
    function: str      # TOTAL, ME or CRT
    key: int | None    # key length (ME/CRT rows)
    rate: float        # requests per second
    exec_ms: float     # EXEC TIME, ms
    util_pct: float    # UTIL%
    system: str | None = None     # the SMF system id, the interval and whose numbers (LPAR, TOTAL or
    interval: str | None = None   # CPC) where the line was read from RMF's own output; None where typed
    scope: str | None = None
    source: str | None = None     # the file or sheet the line is in

    @property
    def generation(self) -> str:
        """The card generation as the models name it, e.g. ``CEX8S``."""
        return f"CEX{self.type[3]}S"

    @property
    def card(self) -> str:
        """``coprocessor`` or ``accelerator``."""
        return {"C": "coprocessor", "A": "accelerator"}[self.type[4]]


# What an RMF Crypto Hardware Activity line can hold: a card's summary line is busy at most 100% of
# the interval (RMF caps it there); its by-function rows may add up past 100% (concurrency inside
# the card: 152.7% in the second example of Sharkey's AMS key-size blog), so a row is held only to
# a hundred times that; an EXEC TIME over a second or a rate over ten million requests a second is a
# typing slip, not a Crypto Express (engineering limits of this tool, not published figures).
RMF_MAX_UTIL_PCT = 100.0
RMF_MAX_ROW_UTIL_PCT = 10_000.0
RMF_MAX_EXEC_MS = 1000.0
RMF_MAX_RATE = 1e7


def read_rmf_crypto(path) -> list[RmfRow]:
    """Read a CSV of the report's lines, with the columns :data:`RMF_COLUMNS`.

    Parameters
    ----------
    path : str or Path
        UTF-8 CSV.  One row per printed line: ``TYPE`` as RMF prints it (``CEX8C``
        coprocessor, ``CEX8A`` accelerator; CEX5 to CEX8), ``ID`` the card number,
        ``FUNCTION`` ``TOTAL`` (the card's line) or ``ME``/``CRT`` (accelerator RSA rows),
        ``KEY`` the key length of an ME/CRT row (empty on TOTAL lines), ``RATE`` per second,
        ``EXEC TIME`` in ms, ``UTIL%`` in percent.

    Raises
    ------
    CalibrationError
        For anything else, naming the file, the line and what is accepted.
    """
    path = str(path)
    return rmf_rows(read_csv_table(path, RMF_COLUMNS, "an RMF crypto table", CalibrationError, heading=str.upper),
                    path)


def rmf_rows(records, path: str) -> list[RmfRow]:
    """The report's lines from ``records``, ``[(line, {column: text})]`` with the columns
    :data:`RMF_COLUMNS`, wherever they were typed (a CSV file, the template's sheet).

    ``path`` names the source in messages ("<path> line <line>: ...").  Checks as
    :func:`read_rmf_crypto`.
    """
    rows = []
    for line, cells in records:
        r = {h: v.strip() for h, v in cells.items()}
        m = _TYPE.fullmatch(r["TYPE"].upper())
        if not m:
            raise CalibrationError(f"{located(path, line)}: TYPE {r['TYPE']!r} is not a Crypto Express type as RMF "
                                   "prints it (CEX5C to CEX8C coprocessors, CEX5A to CEX8A accelerators)")
        if m.group(2) == "P":
            raise CalibrationError(f"{located(path, line)}: TYPE {r['TYPE']} is an EP11 coprocessor, which the "
                                   "models do not cover (CCA coprocessors CEXnC, accelerators CEXnA)")
        if m.group(1) == "5":
            raise CalibrationError(f"{located(path, line)}: TYPE {r['TYPE']}: the models know CEX6S to CEX8S "
                                   "card times; a CEX5S has no published comparison")
        func = r["FUNCTION"].upper()
        if func not in RMF_FUNCTIONS:
            raise CalibrationError(f"{located(path, line)}: FUNCTION {r['FUNCTION']!r} is not one of "
                                   f"{', '.join(RMF_FUNCTIONS)}")
        if func != "TOTAL" and m.group(2) != "A":
            raise CalibrationError(f"{located(path, line)}: {func} rows belong to accelerators (CEXnA), "
                                   f"not {r['TYPE']}")
        key = None
        if func == "TOTAL":
            if r["KEY"]:
                raise CalibrationError(f"{located(path, line)}: a TOTAL line has no KEY (got {r['KEY']!r})")
        else:
            k = parse_number(path, line, "KEY", r["KEY"], 1)
            if k not in _RSA_KEYS:
                raise CalibrationError(f"{located(path, line)}: KEY {r['KEY']!r} is not an RSA key length RMF "
                                       f"reports ({', '.join(map(str, _RSA_KEYS))})")
            key = int(k)
        rate = parse_number(path, line, "RATE", r["RATE"], hi=RMF_MAX_RATE)
        exec_ms = parse_number(path, line, "EXEC TIME", r["EXEC TIME"], hi=RMF_MAX_EXEC_MS)
        util = parse_number(path, line, "UTIL%", r["UTIL%"], hi=RMF_MAX_UTIL_PCT if func == "TOTAL" else RMF_MAX_ROW_UTIL_PCT)
        if exec_ms == 0 and rate > 0:
            raise CalibrationError(f"{located(path, line)}: EXEC TIME 0 with RATE {rate:g}: a card that serves "
                                   "requests takes time")
        rows.append(RmfRow(line, r["TYPE"].upper(), r["ID"], func, key, rate, exec_ms, util,
                           r.get("SYSTEM") or None, r.get("INTERVAL") or None, r.get("SCOPE") or None, path))
    if not rows:
        raise CalibrationError(f"{path}: no report lines under the header")
    return rows


def rmf_observations(rows, path: str = "the RMF table") -> list:
    """The rows that observe one card function, as :class:`Observation`.

    ME and CRT rows are the accelerator's RSA public- and private-key functions at their key
    length.  A card's TOTAL line is the card's mean over every request it was sent, whatever the
    function: RMF's CCA coprocessor section prints nothing finer, and an accelerator's TOTAL line
    mixes ME and CRT.  It observes no one function and is not an observation here: a coprocessor's
    calibrates the coprocessors' speed on a plan's mix instead
    (:func:`~cryptoplan.model.calibration.card_speed.coprocessor_speed`), an accelerator's is
    checked for consistency (:func:`util_consistency`).  Lines with RATE 0 (an idle card) carry
    no time.  Returns an empty list when no row observes one function.
    """
    out = []
    for r in rows:
        if r.rate == 0 or r.function == "TOTAL":
            continue
        function = "RSA_ME" if r.function == "ME" else "RSA_CRT"
        sigma = max(MEASUREMENT_RTOL, 0.0005 / math.sqrt(3.0) / r.exec_ms)
        label = f"{located(path, r.line)}: {r.type} {r.id} {r.function} {r.key}"
        out.append(_card_observation(label, r.exec_ms, sigma, function, float(r.key),
                                     card_generation_factor(r.generation)))
    return out


def _card_observation(label, value, sigma, function, bits, factor) -> Observation:
    """A card time (ms) observed on a card of generation ``factor``: ``function`` at ``bits``."""
    law = CARD_FUNCTIONS[function]
    fixed = tuple(p for p in (law.fixed_share, law.fixed_ms) if p)
    return Observation(label, value, sigma, lambda: float(function_ms(function, bits)) * factor,
                       (law.time, law.exponent) + fixed)


# A card line's UTIL% and RATE x EXEC TIME agree to RMF's printed rounding (UTIL% to 0.1, EXEC
# TIME to 0.001 ms: well under 1% at the report's magnitudes); beyond 5% (and half a point) the
# line is more likely mistyped, or its UTIL% counts work its RATE does not, and is named.
UTIL_DISAGREEMENT = 0.05
UTIL_DISAGREEMENT_POINTS = 0.5


def util_consistency(rows) -> list:
    """RMF's UTIL% against RATE x EXEC TIME: how far the report's own identity holds.

    Parameters
    ----------
    rows : list of RmfRow
        The report's lines.

    Returns
    -------
    list of dict
        One per card line (FUNCTION TOTAL, RATE > 0): ``line``, ``card``, ``util_pct``,
        ``rate_x_exec_pct`` and ``disagrees`` (the two differ by more than
        :data:`UTIL_DISAGREEMENT` of RATE x EXEC TIME and :data:`UTIL_DISAGREEMENT_POINTS` points).
    """
    out = []
    for r in rows:
        if r.rate > 0 and r.function == "TOTAL":
            implied = r.rate * r.exec_ms / 10.0   # per s x ms -> percent
            gap = abs(r.util_pct - implied)
            out.append({"line": r.line, "card": f"{r.type} {r.id}", "util_pct": r.util_pct,
                        "rate_x_exec_pct": implied,
                        "disagrees": bool(gap > UTIL_DISAGREEMENT * implied and gap > UTIL_DISAGREEMENT_POINTS)})
    return out


def consistency_warning(c: dict, source: str = "") -> str:
    """The warning for a card line whose UTIL% disagrees with RATE x EXEC TIME.

    Parameters
    ----------
    c : dict
        One entry of :attr:`Calibration.consistency`.
    source : str, optional
        The report file, named in the warning.

    Returns
    -------
    str
        E.g. ``warning: rmf.csv line 2 (CEX8C 01): UTIL% 21.0 but RATE x EXEC TIME gives 24.7% ...``.
    """
    where = located(source, c["line"]) if source else located("", c["line"]).lstrip()
    return (f"warning: {where} ({c['card']}): UTIL% {c['util_pct']:.1f} but RATE x EXEC TIME gives "
            f"{c['rate_x_exec_pct']:.1f}%: check the typed line (RMF's own figures agree to their rounding); "
            f"the calibration uses EXEC TIME, not UTIL%")
