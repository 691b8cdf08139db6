"""The README's and the docs pages' examples run and print what they say (issues 15 and 33).

Every ```python block of README.md and docs/*.md is run as a doctest (in a folder holding the
template workbook the examples open, written by ``cryptoplan template``).  The README's
"How do I ..." section is a newcomer's path, run as printed: each ```sh block's commands run
through the installed ``cryptoplan`` in a fresh folder holding ``planner.xlsx`` (its Site RMF
sheet filled with the RMF example of docs/calibration.md, as the README tells the planner to do
first), and the ```text block after it must appear in the last command's output, line by line in
order (``...`` stands for lines left out).  Each spreadsheet formula the section quotes
(`` `=F(...)` shows `v` ``) is evaluated in a workbook and must show ``v``.  Expected values are
the pages' own text: a change of the models that moves them fails here until the pages say the
new numbers.
"""

from __future__ import annotations

import csv
import doctest
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from cryptoplan.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").glob("*.md"))
PAGES = [README, *DOCS]
CRYPTOPLAN = Path(sys.executable).with_name("cryptoplan")


def _blocks(lang: str, page: Path = README) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", page.read_text(encoding="utf-8"), re.S)


def _howto() -> str:
    m = re.search(r"\n## How do I \.\.\.\n(.*?)\n## ", README.read_text(encoding="utf-8"), re.S)
    assert m, "the README's 'How do I ...' section is missing"
    return m.group(1)


def _python_examples() -> list[tuple[Path, int]]:
    return [(page, i) for page in PAGES for i in range(len(_blocks("python", page)))]


def _shell_examples() -> list[tuple[str, str | None]]:
    """(commands, expected output or None) for each ```sh block of the How-do-I section."""
    return [(cmd, out or None) for cmd, out in
            re.findall(r"```sh\n(.*?)```(?:\n\n```text\n(.*?)```)?", _howto(), re.S)]


def test_readme_has_python_examples():
    assert len(_blocks("python")) >= 2
    for page, i in _python_examples():
        assert ">>>" in _blocks("python", page)[i], f"{page.name} python block {i} is not a doctest"


def test_the_readme_links_every_docs_page_and_no_link_is_broken():
    text = README.read_text(encoding="utf-8")
    for page in DOCS:
        assert f"(docs/{page.name})" in text, f"the README does not link {page.name}"
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#]+?)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" not in target:
                assert (page.parent / target).exists(), f"{page.name} links {target}, which does not exist"
        assert "../shared" not in page.read_text(encoding="utf-8"), page.name


def test_the_howto_answers_each_question_of_issue_33():
    titles = re.findall(r"^### \.\.\. (.*)$", _howto(), re.M)
    for words in ("CPU per transaction", "cards", "4096", "requesters", "SSLCIPH and AT-TLS",
                  "handshake storm", "RMF report", "whole system"):
        assert any(words in t for t in titles), words
    assert "Site RMF" in _howto() and ". .venv/bin/activate" in README.read_text(encoding="utf-8")


@pytest.mark.slow
@pytest.mark.parametrize(("page", "index"), _python_examples(),
                         ids=[f"{p.stem}-{i}" for p, i in _python_examples()])
def test_python_examples(page, index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CRYPTOPLAN_PARAMS", raising=False)
    res = CliRunner().invoke(main, ["template", "-o", "planner.xlsx"])
    assert res.exit_code == 0, res.output
    block = _blocks("python", page)[index]
    test = doctest.DocTestParser().get_doctest(block, {}, f"{page.name} python block {index}", str(page), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test)
    assert runner.summarize(verbose=False).failed == 0


def _fill_site_rmf(path: Path) -> None:
    """Type docs/calibration.md's RMF example lines into the Site RMF sheet, as a planner would."""
    from openpyxl import load_workbook

    from cryptoplan.workbook.site_rmf import HEADER_ROW, RMF_SHEET

    text = (ROOT / "docs" / "calibration.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- rmf-example:start -->\n```csv\n(.*?)```", text, re.S)
    assert m, "docs/calibration.md's RMF example is missing"
    wb = load_workbook(path)
    ws = wb[RMF_SHEET]
    for r, row in enumerate(list(csv.reader(m.group(1).strip().splitlines()))[1:], HEADER_ROW + 1):
        for c, value in enumerate(row, 1):
            ws.cell(r, c, (float(value) if c > 4 else value) if value != "" else None)
    wb.save(path)


def _contains_in_order(output: list[str], expected: list[str]) -> bool:
    at = 0
    for line in expected:
        if line.strip() == "...":
            continue
        try:
            at = output.index(line, at) + 1
        except ValueError:
            return False
    return True


@pytest.mark.parametrize(("commands", "expected"), _shell_examples())
@pytest.mark.subprocess
def test_howto_commands_print_what_the_readme_shows(commands, expected, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "CRYPTOPLAN_PARAMS"}
    subprocess.run([str(CRYPTOPLAN), "template", "-o", "planner.xlsx"], cwd=tmp_path, env=env, check=True,
                   capture_output=True)
    _fill_site_rmf(tmp_path / "planner.xlsx")
    lines = [ln.split("  #")[0].strip() for ln in commands.splitlines()]
    lines = [ln for ln in lines if ln and not ln.startswith("#")]
    assert lines and all(ln.startswith("cryptoplan ") for ln in lines), lines
    for line in lines:
        r = subprocess.run([str(CRYPTOPLAN), *shlex.split(line)[1:]], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode in (0, 1), (line, r.stdout, r.stderr)
    if expected:
        out = [ln.rstrip() for ln in r.stdout.splitlines()]
        want = [ln.rstrip() for ln in expected.strip().splitlines()]
        assert _contains_in_order(out, want), f"{line}\n--- printed:\n{r.stdout}\n--- README:\n{expected}"


def _formulas() -> list[tuple[str, str]]:
    return re.findall(r"`(=[A-Z][A-Z_.]*\(.*?)` shows `([^`]+)`", _howto().replace("\n", " "))


def test_howto_formulas_show_what_the_readme_says(tmp_path):
    from openpyxl import Workbook

    from cryptoplan.workbook import recalc

    formulas = _formulas()
    assert len(formulas) >= 6, formulas
    wb = Workbook()
    ws = wb.active
    ws.title = "Results"
    for i, (formula, _) in enumerate(formulas, 1):
        ws.cell(i, 1, f"formula {i}")
        ws.cell(i, 2, formula)
    wb.save(tmp_path / "formulas.xlsx")
    values = recalc(tmp_path / "formulas.xlsx")
    for i, (formula, shown) in enumerate(formulas, 1):
        value = values[f"formula {i}"]
        decimals = len(shown.partition(".")[2])
        assert isinstance(value, float) and round(value, decimals) == float(shown), (formula, value, shown)


def test_readme_capacity_example_prints_what_the_docs_show():
    text = (ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    m = re.search(r"```sh\ncryptoplan capacity (.*?)\n```\n\n```text\n(.*?)```", text, re.S)
    assert m, "docs/models.md's capacity example (command, then its output) is missing"
    res = CliRunner().invoke(main, ["capacity", *m.group(1).split()])
    assert res.exit_code == 0, res.output
    assert res.output.strip().splitlines() == m.group(2).strip().splitlines()


def _runnable_blocks() -> list[tuple[str, int, str]]:
    """(page, index, block) of every other ```sh block of README.md and docs/batch.md made only of
    ``cryptoplan`` commands (a newcomer's ``. .venv/bin/activate`` aside): the How-do-I
    section's are run above, with their output; blocks of make, apt or unopkg commands are not."""
    out = []
    howto = _howto()
    for page in (README, ROOT / "docs" / "batch.md"):
        for i, block in enumerate(_blocks("sh", page)):
            if page == README and block in howto:
                continue
            lines = _command_lines(block)
            if lines and all(ln.startswith("cryptoplan ") for ln in lines):
                out.append((page.name, i, block))
    return out


def _command_lines(block: str) -> list[str]:
    """The commands of a shell block: continuations joined, comments and the venv activation dropped."""
    joined = re.sub(r"\\\n\s*", " ", block)
    lines = [re.split(r"\s+#", ln)[0].strip() for ln in joined.splitlines()]
    return [ln for ln in lines if ln and not ln.startswith("#") and ln != ". .venv/bin/activate"]


@pytest.mark.parametrize(("page", "index", "block"), _runnable_blocks(),
                         ids=[f"{p}-{i}" for p, i, _ in _runnable_blocks()])
@pytest.mark.subprocess
def test_every_other_command_example_runs(page, index, block, tmp_path):
    from test_plan_report import readme_plan

    env = {k: v for k, v in os.environ.items() if k != "CRYPTOPLAN_PARAMS"}
    lines = _command_lines(block)
    if not any(ln.startswith("cryptoplan template ") for ln in lines):
        subprocess.run([str(CRYPTOPLAN), "template", "-o", "planner.xlsx"], cwd=tmp_path, env=env, check=True,
                       capture_output=True)
    (tmp_path / "site.toml").write_text(readme_plan(), encoding="utf-8")
    for line in lines:
        args, _, redirect = line.partition(" > ")
        r = subprocess.run([str(CRYPTOPLAN), *shlex.split(args)[1:]], cwd=tmp_path, env=env,
                           capture_output=True, text=True, timeout=300)
        assert r.returncode in (0, 1), (page, line, r.stdout[-2000:], r.stderr[-2000:])
        if redirect:
            (tmp_path / redirect.strip()).write_text(r.stdout, encoding="utf-8")
    written = re.findall(r"(?:-o|--plot|>)\s+(\S+\.(?:xlsx|csv|png|json))", " ".join(lines))
    for name in written:
        assert (tmp_path / name).stat().st_size > 0, name
