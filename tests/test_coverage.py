"""data/coverage.csv: what the models do with every row of data/figures.csv.

Each row's ``use`` is one of: ``fitted`` (a fit target, compared with its tolerance),
``read`` (a model function reads the value: a factor, cost, bound or default),
``checked`` (a test compares a model output with it, a prediction no fit uses; the test is
named in ``why``), ``echo`` (a count the model is built from, which a named test finds returned
as it is: not a prediction, counted apart), ``input`` (configuration of a measurement) or
``unmodelled`` (with the reason).
The fitted and read sets are recomputed here, so the file cannot drift from the code:
``read`` is what a tour of every public model function (tests/_tour.py) reads.
"""

from __future__ import annotations

import csv
from collections import Counter

import pytest

import cryptoplan.model.calibration.fit as F
from cryptoplan.model.datafiles import data_path
from cryptoplan.model.figures import load_figures
from cryptoplan.model.zos.tls import roundtrip_figure_ids

USES = ("fitted", "read", "checked", "echo", "input", "unmodelled")


@pytest.fixture(scope="module")
def coverage():
    with open(data_path("coverage.csv"), encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def test_every_row_once_with_a_use_and_a_why(coverage):
    ids = [r["id"] for r in coverage]
    assert Counter(ids).most_common(1)[0][1] == 1
    assert set(ids) == set(load_figures())
    for r in coverage:
        assert r["use"] in USES, r["id"]
        assert len(r["why"]) > 20, r["id"]


def test_fitted_rows_are_the_fit_targets(coverage):
    fitted = {r["id"] for r in coverage if r["use"] == "fitted"}
    assert fitted == {t.figure_id for t in F.targets()} | set(roundtrip_figure_ids())


def test_read_rows_are_what_the_models_read(coverage):
    from _tour import tour
    read = {r["id"] for r in coverage if r["use"] == "read"}
    fitted = {r["id"] for r in coverage if r["use"] == "fitted"}
    assert read == tour() - fitted


def test_checked_rows_name_a_test_that_exists(coverage):
    import re
    from pathlib import Path
    here = Path(__file__).parent
    for r in coverage:
        if r["use"] in ("checked", "echo"):
            m = re.match(r"tests/(test_\w+\.py)::(test_\w+)", r["why"])
            assert m, r["id"]
            assert f"def {m[2]}(" in (here / m[1]).read_text(encoding="utf-8"), r["id"]


def test_readme_counts_are_the_files(coverage):
    # the README's sentence on coverage quotes the counts: they must be this file's
    import re
    from pathlib import Path
    text = " ".join((Path(__file__).resolve().parents[1] / "docs" / "models.md").read_text(encoding="utf-8").split())
    m = re.search(r"each of the (\d+) rows: (\d+) fitted, (\d+) read directly .*?, (\d+) checked by a "
                  r"named test .*?, (\d+) echoes .*?, (\d+) configuration inputs, and (\d+) not modelled", text)
    assert m, "README no longer states the coverage counts"
    counts = Counter(r["use"] for r in coverage)
    assert [int(g) for g in m.groups()] == [len(coverage), counts["fitted"], counts["read"], counts["checked"],
                                            counts["echo"], counts["input"], counts["unmodelled"]]
