"""The code blocks of a documentation page, for the tests that run them as printed."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

DOCS = Path(__file__).resolve().parents[1] / "docs"


def doc_block(page: str, after: str, lang: str = "sh", until: str = "\n## ") -> str:
    """The first ```lang block of ``docs/page`` after the text ``after`` (and before ``until``)."""
    text = (DOCS / page).read_text(encoding="utf-8")
    section = text.split(after, 1)[1].split(until, 1)[0]
    return re.findall(rf"```{lang}\n(.*?)```", section, re.S)[0]


def command_lines(block: str) -> list[list[str]]:
    """Each command of a shell block as its arguments after the program name, comments dropped."""
    return [shlex.split(ln.split("#")[0].strip())[1:] for ln in block.splitlines() if ln.split("#")[0].strip()]
