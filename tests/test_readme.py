"""The README's examples run and print what the README says (issue 15: they went stale).

Every ```python block is run as a doctest (in a folder holding the template workbook the
examples open, written by ``cryptoplan template``); the ``cryptoplan capacity`` example's
printed table is compared with the command's output line by line.  Expected values are
the README's own text: a change of the models that moves them fails here until the README
says the new numbers.
"""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from cryptoplan.workbook.cli import main

README = Path(__file__).resolve().parents[1] / "README.md"


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README.read_text(encoding="utf-8"), re.S)


def test_readme_has_python_examples():
    assert len(_blocks("python")) >= 2
    assert all(">>>" in b for b in _blocks("python")), "every python example is a doctest"


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_readme_python_examples(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    res = CliRunner().invoke(main, ["template", "-o", "planner.xlsx"])
    assert res.exit_code == 0, res.output
    block = _blocks("python")[index]
    test = doctest.DocTestParser().get_doctest(block, {}, f"README python block {index}", str(README), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def test_readme_capacity_example_prints_what_the_readme_shows():
    text = README.read_text(encoding="utf-8")
    m = re.search(r"```sh\ncryptoplan capacity (.*?)\n```\n\n```text\n(.*?)```", text, re.S)
    assert m, "the README's capacity example (command, then its output) is missing"
    res = CliRunner().invoke(main, ["capacity", *m.group(1).split()])
    assert res.exit_code == 0, res.output
    assert res.output.strip().splitlines() == m.group(2).strip().splitlines()
