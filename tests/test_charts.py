"""workbook/report/charts.py: every chart cryptoplan draws, drawn without pyplot.

Expected values come from the plan the chart draws (its own utilizations) and from matplotlib's
list of image formats; the figure is caught where it is saved to read what it shows.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
from matplotlib.backend_bases import FigureCanvasBase
from matplotlib.figure import Figure

from cryptoplan.model import System, Workload, plan
from cryptoplan.workbook.report import charts

PNG = b"\x89PNG\r\n\x1a\n"
POOLS = {"processors": "General processors", "coprocessors": "Coprocessors (CEXnC)",
         "accelerators": "Accelerators (CEXnA)"}


@pytest.mark.parametrize("name, fmt", [("a.png", "png"), ("a", "png"), ("A.SVG", "svg"), ("a.pdf", "pdf")])
def test_plot_format_is_the_extension(name, fmt):
    assert fmt in FigureCanvasBase.get_supported_filetypes()
    assert charts.plot_format(name) == fmt


def test_plot_format_refuses_a_name_that_is_not_an_image():
    with pytest.raises(ValueError, match=r"--plot out\.txt: a plot is an image.*\.svg.*not \.txt"):
        charts.plot_format("out.txt")


@pytest.fixture
def saved(monkeypatch):
    """The figures charts.py saves, in order."""
    figures = []
    save = Figure.savefig

    def saving(fig, *args, **kwargs):
        figures.append(fig)
        return save(fig, *args, **kwargs)
    monkeypatch.setattr(Figure, "savefig", saving)
    return figures


def _plan(coprocessors):
    lpar = System(processors=8, coprocessors=coprocessors, accelerators=2)
    work = Workload("payments", "ams", 900, 0.25, {"policy": "privacy", "message_kb": 2})
    return lpar, [work], plan(lpar, [work])


@pytest.mark.parametrize("coprocessors", [1, 8])
def test_an_overloaded_pool_is_marked_on_the_utilization_chart(tmp_path, saved, coprocessors):
    _, _, result = _plan(coprocessors)
    util = {p: float(result.resources[p].utilization) for p in POOLS}
    charts.utilization_chart(result, POOLS, tmp_path / "u.png")
    assert (tmp_path / "u.png").read_bytes()[:8] == PNG
    marks = [t.get_text() for t in saved[-1].axes[0].texts if "overloaded" in t.get_text()]
    over = [p for p, u in util.items() if u >= 1.0]
    assert len(marks) == len(over)
    assert (coprocessors == 1) == ("coprocessors" in over)     # 900 txn/s: too much for one card


def test_the_growth_chart_crosses_the_target_where_the_plan_says(tmp_path, saved):
    import numpy as np
    from cryptoplan.workbook.report.plan import growth_curve
    lpar, work, result = _plan(8)
    months = np.linspace(0.0, 120.0, 121)
    charts.growth_chart(result, POOLS, months, growth_curve(lpar, work, months), tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes()[:8] == PNG
    ax = saved[-1].axes[0]
    assert [ln.get_label() for ln in ax.lines[:1]] == [POOLS["processors"]]
    assert ax.get_legend() is not None and ax.get_xlim() == (0.0, 120.0)


@pytest.mark.subprocess
def test_drawing_loads_no_pyplot():
    """The charts use a Figure and its canvas: no pyplot (no global figures, no backend switch)."""
    code = ("import sys\n"
            "from cryptoplan.model import System, Workload, plan\n"
            "from cryptoplan.workbook.report import charts\n"
            "r = plan(System(processors=8, coprocessors=2, accelerators=2),\n"
            "         [Workload('w', 'ams', 100, 0.1, {'policy': 'integrity', 'message_kb': 2})])\n"
            "charts.utilization_chart(r, {'processors': 'CP', 'coprocessors': 'C', 'accelerators': 'A'}, sys.argv[1])\n"
            "print('matplotlib.pyplot' in sys.modules, 'matplotlib.figure' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code, "/dev/null"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["False", "True"]
