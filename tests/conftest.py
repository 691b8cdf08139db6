"""Shared test helpers."""

from __future__ import annotations

import csv

import pytest

from model.datafiles import data_path


@pytest.fixture
def scaled_figures(tmp_path):
    """Write a copy of data/figures.csv with the values of chosen rows multiplied.

    ``scaled_figures(predicate, factor)`` scales every row whose id satisfies
    ``predicate`` (a function of the id) and returns the new file's path: a
    site's own table for ``using_figures`` / ``cryptoplan fit --figures``.
    """
    counter = iter(range(1000))

    def make(predicate, factor):
        with open(data_path("figures.csv"), newline="", encoding="utf-8") as fh:
            rows = list(csv.DictReader(fh))
        for r in rows:
            if predicate(r["id"]):
                r["value"] = str(factor * float(r["value"]))
        path = tmp_path / f"figures-{next(counter)}.csv"
        with open(path, "w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)
        return path

    return make
