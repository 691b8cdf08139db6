"""RMF's crypto records as a planner reads them: per card and interval, other LPARs' share, the peak.

From :class:`~.rmf_records.CryptoActivity` records (the printed report or SMF 70-2):

* :func:`card_lines` one line per card and interval, its LPAR, CPC or TOTAL numbers side by
  side and the share of the card **other LPARs** keep busy, :math:`U_{CPC} - U_{LPAR}` (the CPC
  columns count every LPAR sharing the card, the LPAR columns this system's requests);
* :func:`peak_intervals`: per card type, the interval in which this system's cards of that type
  are busiest (mean LPAR, or TOTAL, utilization over its cards; CPC-wide for a type RMF prints
  with CPC columns only) — the interval a plan is judged at.
"""

from __future__ import annotations

from dataclasses import dataclass

from .rmf_records import CryptoActivity

__all__ = ["CardLine", "card_lines", "peak_intervals"]


@dataclass(frozen=True)
class CardLine:
    """One card in one interval: its summary numbers by scope (``{"rate", "exec_ms", "util_pct"}``)."""

    system: str
    interval: str
    interval_s: float
    card_type: str
    card_id: int
    mode: str
    scopes: dict
    source: str

    @property
    def own_util_pct(self) -> float | None:
        """This system's utilization: the LPAR column, or TOTAL in the single-scope layout."""
        for s in ("LPAR", "TOTAL"):
            v = self.scopes.get(s, {}).get("util_pct")
            if v is not None:
                return v
        return None

    @property
    def other_lpars_util_pct(self) -> float | None:
        """CPC minus LPAR utilization, percent (None where the report has not both)."""
        lpar = self.scopes.get("LPAR", {}).get("util_pct")
        cpc = self.scopes.get("CPC", {}).get("util_pct")
        if lpar is None or cpc is None:
            return None
        return round(max(cpc - lpar, 0.0), 6)

    def to_dict(self) -> dict:
        """JSON-ready."""
        return {"system": self.system, "interval": self.interval, "interval_s": self.interval_s,
                "card_type": self.card_type, "card_id": self.card_id, "mode": self.mode,
                **{s.lower(): v for s, v in self.scopes.items()},
                "other_lpars_util_pct": self.other_lpars_util_pct, "source": self.source}


def card_lines(records) -> list[CardLine]:
    """Each card's summary line per (system, interval), in the order read."""
    out: dict = {}
    for r in records:
        if not isinstance(r, CryptoActivity) or r.function is not None:
            continue
        key = (r.system, r.interval, r.card_type, r.card_id)
        line = out.get(key)
        if line is None:
            line = out[key] = CardLine(r.system, r.interval, r.interval_s, r.card_type, r.card_id, r.mode, {},
                                       r.source)
        line.scopes[r.scope] = {"rate": r.rate, "exec_ms": r.exec_ms, "util_pct": r.util_pct}
    return list(out.values())


def peak_intervals(lines) -> dict:
    """Per card type: ``{"system", "interval", "util_pct", "cards", "scope"}`` of the interval whose
    mean utilization over the type's cards is highest: this system's own (``scope`` ``"LPAR"``: the
    LPAR, or TOTAL, columns), or, for a type RMF prints with CPC columns only, the CPC-wide one
    (``scope`` ``"CPC"``).  Every card type with a utilization is listed."""
    groups: dict = {}
    for ln in lines:
        u, scope = ln.own_util_pct, "LPAR"
        if u is None:
            u, scope = ln.scopes.get("CPC", {}).get("util_pct"), "CPC"
        if u is None:
            continue
        groups.setdefault(ln.card_type, {}).setdefault((ln.system, ln.interval), []).append((u, scope))
    out = {}
    for ctype, by in groups.items():
        # a type's own (LPAR) numbers rank before CPC-only ones of the same type, each interval by
        # the mean of the scope it is ranked on
        def key(kv):
            own = any(sc == "LPAR" for _, sc in kv[1])
            us = [u for u, sc in kv[1] if sc == ("LPAR" if own else "CPC")]
            return (own, sum(us) / len(us), kv[0][1])
        (system, interval), us = max(by.items(), key=key)
        scope = "LPAR" if any(sc == "LPAR" for _, sc in us) else "CPC"
        vals = [u for u, sc in us if sc == scope]
        out[ctype] = {"system": system, "interval": interval, "util_pct": round(sum(vals) / len(vals), 6),
                      "cards": len(vals), "scope": scope}
    return out
