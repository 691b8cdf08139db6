"""Names a plan prints (workloads, profiles, queue managers): visible text of a bounded length."""

from __future__ import annotations

import unicodedata

from ..._text import value_text
from .errors import PlanError

__all__ = ["MAX_NAME", "name_text"]

#: The longest name a plan takes (a workload's, a profile's): a label that fits a report's column.
MAX_NAME = 100


def name_text(value, what: str, limit: int = MAX_NAME) -> str:
    """A name as the plan keeps it: text, stripped, in Unicode's NFC form, without control or
    invisible format characters (which would print as terminal escapes or make two names that look
    alike), 1..``limit`` characters; PlanError naming ``what`` otherwise."""
    if not isinstance(value, str):
        raise PlanError(f"{what} must be text (got {value_text(value)})")
    text = unicodedata.normalize("NFC", value.strip())
    if not text:
        raise PlanError(f"{what} must be non-empty text (got {value!r})")
    bad = next((ch for ch in text if unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Cn")), None)
    if bad is not None:
        raise PlanError(f"{what} holds the control or invisible character U+{ord(bad):04X} "
                        f"({unicodedata.name(bad, 'unnamed')}); names are printed, so they take visible "
                        f"characters only (got {ascii(value)[:80]})")
    if len(text) > limit:
        raise PlanError(f"{what} is {len(text):,} characters long; at most {limit} (got {text[:40]!r}...)")
    return text
