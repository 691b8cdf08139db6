"""RMF activity records as the report lines calibration reads: :func:`report_lines`.

The calibration route (:func:`~.rmf_crypto.rmf_rows`, :func:`~.rmf_crypto.rmf_observations`)
reads the Crypto Hardware Activity report's lines in the columns
:data:`~.rmf_crypto.RMF_COLUMNS` (TYPE, ID, FUNCTION, KEY, RATE, EXEC TIME, UTIL%), as a
planner would type them.  :func:`report_lines` makes those lines from the
:class:`~.rmf_records.CryptoActivity` records of the printed report (:mod:`.rmf_report`) or of
SMF 70-2 (:mod:`.smf70`), so that ``cryptoplan calibrate --rmf-report`` and the Site RMF sheet
filled from a report check and use exactly what the typed route does.

Which numbers are a line's:

* **scope**: this system's (the LPAR columns) where they are printed, else TOTAL (the
  single-scope layout), else the CPC columns (an accelerator whose LPAR columns RMF leaves
  blank).  EXEC TIME is the card's service time per request whichever LPAR sent it, so a CPC
  EXEC TIME observes the same card time;
* **rows**: a CCA coprocessor's summary (FUNCTION ``TOTAL``); an accelerator's summary and its
  ``RSA ME`` / ``RSA CRT`` rows by key length (FUNCTION ``ME`` / ``CRT``).

Left out, each with a note saying why: PKCS11 (EP11) coprocessors (the models price CCA and
accelerator work), card generations the models have no card times for (CEX5 and unknown
types), CCA by-function rows (key generation: no function the models price), and lines RMF
did not print a number for.
"""

from __future__ import annotations

from cryptoplan.model.errors import InputTypeError

from .rmf_records import CryptoActivity, card_generation

__all__ = ["report_lines", "MODELLED_GENERATIONS"]

#: Card generations whose card times the models have (CEX6S to CEX8S).
MODELLED_GENERATIONS = (6, 7, 8)

_SCOPE_ORDER = ("LPAR", "TOTAL", "CPC")


def _fmt(v: float) -> str:
    return repr(float(v))


def _line_of(source: str):
    """``file:12`` -> 12; ``file@4096`` -> ``"byte 4096"``; else the source as it is."""
    for sep, word in ((":", None), ("@", "byte")):
        head, _, tail = source.rpartition(sep)
        if head and tail.isdigit():
            return int(tail) if word is None else f"{word} {tail}"
    return source


def report_lines(records, interval: str | None = None, system: str | None = None) -> tuple[list, list[str]]:
    """The report lines of ``records`` in the calibration columns, and what was left out.

    Parameters
    ----------
    records : iterable of CryptoActivity
    interval : str, optional
        Only this interval (``"YYYY-MM-DD HH:MM:SS"``, :attr:`CryptoActivity.interval`); None: all.
    system : str, optional
        Only this SMF system id; None: all.

    Returns
    -------
    lines : list of (int or str, dict)
        ``(line, {column: text})`` as :func:`~.rmf_crypto.rmf_rows` reads them: ``line`` the
        report's line number (a record read from ``file:line``) or ``"byte N"`` (an SMF 70-2
        record read from ``file@N``); columns :data:`~.rmf_crypto.RMF_COLUMNS`, numbers as
        exact decimal text, and ``SYSTEM``, ``INTERVAL`` and ``SCOPE`` (``LPAR``, ``TOTAL`` or
        ``CPC``: whose numbers the line is).
    notes : list of str
        One sentence per kind of line left out, with the cards it concerns.
    """
    chosen: dict = {}
    skipped: dict = {}

    def skip(why, r):
        skipped.setdefault(why, [])
        label = f"{r.card_type} {r.card_id}"
        if label not in skipped[why]:
            skipped[why].append(label)

    for r in records:
        if not isinstance(r, CryptoActivity):
            raise InputTypeError(f"report_lines takes CryptoActivity records (got {type(r).__name__})")
        if (interval is not None and r.interval != interval) or (system is not None and r.system != system):
            continue
        if r.section == "PKCS11":
            skip("PKCS11 (EP11) coprocessors: the models price CCA coprocessor and accelerator work", r)
            continue
        gen = card_generation(r.card_type)
        if gen not in MODELLED_GENERATIONS:
            skip("card generations without published card times in the models (CEX6 to CEX8 have them)", r)
            continue
        if r.function is None:
            func, key = "TOTAL", None
        elif r.section == "ACCELERATOR" and r.function in ("RSA ME", "RSA CRT") and r.key_size is not None:
            func, key = r.function[4:], r.key_size
        else:
            skip(f"{r.function} rows: no function the models price", r)
            continue
        if r.rate is None or r.exec_ms is None or r.util_pct is None:
            continue                      # a blank scope (an accelerator's LPAR columns): the next scope serves
        k = (r.system, r.interval, r.card_type, r.card_id, func, key)
        prev = chosen.get(k)
        if prev is None or _SCOPE_ORDER.index(r.scope) < _SCOPE_ORDER.index(prev.scope):
            chosen[k] = r
    lines = []
    for (_, _, ctype, cid, func, key), r in chosen.items():
        lines.append((_line_of(r.source), {"TYPE": ctype, "ID": str(cid), "FUNCTION": func, "KEY": "" if key is None else str(key),
                                 "RATE": _fmt(r.rate), "EXEC TIME": _fmt(r.exec_ms), "UTIL%": _fmt(r.util_pct),
                                 "SYSTEM": r.system, "INTERVAL": r.interval, "SCOPE": r.scope}))
    notes = [f"left out {', '.join(cards)}: {why}" for why, cards in skipped.items()]
    return lines, notes
