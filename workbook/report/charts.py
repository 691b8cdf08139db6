"""Every chart cryptoplan draws: the sweep plot, the plan report's two charts, the site
calibration's before/after chart and the fit report's charts.

Drawn with matplotlib's object-oriented API (a :class:`~matplotlib.figure.Figure` saved by
its own canvas), never pyplot: no global figure registry to close, no backend switch in a
user's session.  The modules that draw bind this one with :func:`cryptoplan.model.lazy.lazy_module`, so
matplotlib (about 0.1 s) loads when a chart is drawn, not when the command line starts.
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError

import os
import re
import textwrap
import warnings
from contextlib import contextmanager

import matplotlib
import numpy as np
from matplotlib.backend_bases import FigureCanvasBase
from matplotlib.figure import Figure
from matplotlib.ticker import PercentFormatter

__all__ = ["plot_format", "sweep_chart", "utilization_chart", "growth_chart", "calibration_chart",
           "figure_family_charts", "plain_text", "quiet_drawing", "MAX_LEGEND"]


def plot_format(path) -> str:
    """The image format a ``--plot`` file name asks for (its extension; none: png).

    Checked before a sweep is computed, so a name matplotlib cannot write (``out.txt``)
    is refused at once, not after minutes.

    Raises
    ------
    ValueError
        Naming the file and the formats accepted.
    """
    suffix = os.path.splitext(os.fspath(path))[1].lstrip(".").lower() or "png"
    supported = FigureCanvasBase.get_supported_filetypes()
    if suffix not in supported:
        raise InputError(f"--plot {os.fspath(path)}: a plot is an image; end the name in .png (or "
                         f"{', '.join('.' + f for f in sorted(supported) if f != 'png')}), not .{suffix}")
    return suffix


def sweep_chart(sweep, path, ys: list[str], x: str, units: dict, image_format: str) -> None:
    """Line plot of a sweep's outputs ``ys`` against its input ``x``, one panel per output.

    ``sweep`` is a :class:`~cryptoplan.workbook.sweeps.SweepResult` (its ``inputs``,
    ``outputs``, ``n``, ``path``, ``resolve`` and ``params_source``); ``units`` maps an input
    or output key to its unit.  Panels share the x axis; outputs in different units never
    share a scale.  Error values are gaps; whole-number outputs (counts) are steps; each
    line has its own marker and dash, so coinciding lines stay visible.  An output swept with
    ``--draws`` has its band (its ``[pNN]`` columns) shaded behind its line.
    """
    xs = sweep.inputs[x]
    others = [k for k in sweep.inputs if k != x and len(set(map(str, sweep.inputs[k]))) > 1]
    groups: dict = {}
    for i in range(sweep.n):
        groups.setdefault(tuple(sweep.inputs[o][i] for o in others), []).append(i)
    fig = Figure(figsize=(8, 1.9 + 2.6 * len(ys)))
    axes = fig.subplots(len(ys), 1, sharex=True, squeeze=False)
    markers, dashes = "os^Dv<>p", ("-", "--", ":", "-.")
    for ax, yk in zip(axes[:, 0], ys):
        k = sweep.resolve(yk)
        col = sweep.outputs[k]
        for g, (gkey, idx) in enumerate(groups.items()):
            px = [float(xs[i]) if isinstance(xs[i], (int, float)) else np.nan for i in idx]
            # error values and error text are gaps, never plotted as numbers
            py = [float(col[i]) if isinstance(col[i], (int, float)) and not isinstance(col[i], bool)
                  else np.nan for i in idx]
            label = ", ".join(f"{o}={v}" for o, v in zip(others, gkey)) or None
            finite = [v for v in py if np.isfinite(v)]
            counts = bool(finite) and all(float(v).is_integer() for v in finite)
            # the first line filled and wider, the others hollow and thinner: a line that
            # coincides with another shows through it
            line, = ax.plot(px, py, marker=markers[g % len(markers)], ms=6 if g == 0 else 5, label=label,
                            linestyle=dashes[g % len(dashes)], drawstyle="steps-post" if counts else "default",
                            linewidth=2.6 if g == 0 else 1.3, markerfacecolor=None if g == 0 else "none",
                            zorder=2 + g)
            ends = _band_keys(sweep, k)
            if ends:
                lo, hi = ([float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else np.nan
                           for v in (sweep.outputs[e][i] for i in idx)] for e in ends)
                ax.fill_between(px, lo, hi, color=line.get_color(), alpha=0.2, lw=0, zorder=1,
                                step="post" if counts else None,
                                label=f"{ends[0].rsplit('[', 1)[1][:-1]} to {ends[1].rsplit('[', 1)[1][:-1]} of the draws"
                                if g == 0 else None)
        unit = units.get(k)
        if unit == "%":
            ax.yaxis.set_major_formatter(PercentFormatter(xmax=1.0))
        ax.set_ylabel("\n".join(textwrap.wrap(k + (f" ({unit})" if unit else ""), 28)), fontsize=8)
        ax.grid(True, alpha=0.3)
        if (others and len(ax.lines) <= 12) or _band_keys(sweep, k):
            ax.legend(fontsize=7)
    axes[-1, 0].set_xlabel(x + (f" ({units[x]})" if units.get(x) else ""))
    axes[0, 0].set_title(f"{os.path.basename(sweep.path)}: sweep over {x}")
    fig.text(0.01, 0.005, f"model parameters: {sweep.params_source()}", fontsize=7, color="0.3")
    fig.tight_layout(rect=(0, 0.02, 1, 1))
    fig.savefig(path, dpi=110, format=image_format)


def _band_keys(sweep, key: str):
    """The ``(low, high)`` band columns of output ``key`` (``KEY [p05]``, ``KEY [p95]``), or None."""
    ends = [k for k in sweep.output_keys() if k.startswith(key + " [p") and k.endswith("]")]
    if len(ends) != 2:
        return None
    return tuple(sorted(ends, key=lambda k: float(k.rsplit("[p", 1)[1][:-1])))


#: Most entries in a chart's legend: beyond it the smallest workloads are one entry.
MAX_LEGEND = 12


def plain_text(name: str) -> str:
    """A user's name as matplotlib shows it literally: ``$`` never starts mathtext, a leading ``_``
    is not the "hide from the legend" mark (the legends here take explicit labels)."""
    return str(name).replace("$", r"\$")


@contextmanager
def quiet_drawing(notes: list | None):
    """Draw without matplotlib's warnings reaching the terminal as tracebacks of its own paths:
    a glyph the font lacks becomes one note in ``notes`` (shown as a box in the image)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    if notes is not None:
        glyphs = sorted({m.group(1) for w in caught for m in [re.search(r"Glyph (\d+)", str(w.message))] if m})
        if glyphs:
            notes.append("the chart font has no glyph for some characters of the names "
                         f"({', '.join('U+%04X' % int(g) for g in glyphs[:5])}{'...' if len(glyphs) > 5 else ''}): "
                         "they show as boxes in the images")
        other = [str(w.message) for w in caught if not re.search(r"Glyph \d+", str(w.message))]
        notes.extend(f"chart: {m.splitlines()[0][:120]}" for m in sorted(set(other)))


def utilization_chart(result, labels: dict, path) -> None:
    """Stacked bars: each pool's utilization by workload at the planned rates (PNG).

    ``result`` is a :class:`~cryptoplan.model.zos.plan.PlanResult`; ``labels`` maps a pool
    to its axis label.  The target and 100% are vertical lines; a pool at or over 100% says
    "overloaded" at the end of its bar (bars are drawn up to 200%).
    """
    pools = list(labels)
    shares = {n: np.array([float(result.resources[p].by_workload[n]) for p in pools]) for n in result.workloads}
    # the largest workloads by name, the rest as one bar: a legend of 2,000 names is no legend
    ranked = sorted(shares, key=lambda n: -shares[n].max())
    shown, folded = ranked[:MAX_LEGEND - 1] if len(ranked) > MAX_LEGEND else ranked, ranked[MAX_LEGEND - 1:]
    if len(ranked) <= MAX_LEGEND:
        folded = []
    shown = [n for n in result.workloads if n in set(shown)]
    fig = Figure(figsize=(7.5, 3.4))
    ax = fig.subplots()
    y = np.arange(len(pools))[::-1]
    left = np.zeros(len(pools))
    colors = matplotlib.colormaps["tab10"]
    handles, names = [], []
    parts: list[tuple[str, np.ndarray | float]] = [(n, shares[n]) for n in shown]   # float: sum() starts at 0
    if folded:
        parts.append((f"{len(folded)} other workloads", sum(shares[n] for n in folded)))
    for i, (n, share) in enumerate(parts):
        v = np.minimum(share, 2.0) * 100
        handles.append(ax.barh(y, v, left=left, color=colors(i % 10), edgecolor="white", linewidth=0.5))
        names.append(plain_text(n))
        left += v
    rest = np.array([float(result.resources[p].other) for p in pools]) * 100
    handles.append(ax.barh(y, rest, left=left, color="0.75", hatch="//", edgecolor="white", linewidth=0.5))
    names.append("other LPARs / MSTR admin.")
    total = left + rest
    target = result.system.max_utilization * 100
    ax.axvline(target, color="black", ls="--", lw=1)
    ax.text(target, y[0] + 0.45, f" target {target:.0f}%", va="bottom", fontsize=8)
    ax.axvline(100, color="tab:red", lw=1)
    for yi, u in zip(y, total):
        if u >= 100.0:
            ax.text(u, yi, f" {u:.0f}%: overloaded", va="center", fontsize=8, color="tab:red",
                    fontweight="bold")
    ax.set_yticks(y, [labels[p] for p in pools])
    ax.set_xlabel("utilization (% of the installed pool, RMF summary)")
    over = bool((total >= 100.0).any())
    ax.set_xlim(0, max(105.0, float(total.max()) * (1.3 if over else 1.05)))
    ax.set_title("Utilization by workload, at each resource's peak interval", fontsize=11)
    ax.legend(handles, names, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=min(4, len(names)),
              fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")


_SHORT = {"processors": "CP", "coprocessors": "CEXnC", "accelerators": "CEXnA"}


def growth_chart(result, labels: dict, months, curves: dict, path, orders=(), bands=None, level=None) -> None:
    """Each pool's utilization at its peak as the workloads grow, with the month it reaches its
    target, the horizon and the purchase timeline's order dates (PNG).

    ``months`` (the x axis) and ``curves`` (pool -> utilization fraction at each month) come
    from :func:`~cryptoplan.workbook.report.plan.growth_curve`; ``orders`` are the plan's
    :class:`~cryptoplan.model.zos.plan.Purchase` list (a triangle on the axis at each order month,
    in the pool's colour).  ``bands`` (pool -> ``(low, high)`` fractions at each month:
    :func:`~cryptoplan.workbook.report.plan.growth_band`) shades each pool's central ``level`` band.
    The legend sits below the axes, where no line runs.
    """
    h = result.system.horizon_months
    end = float(months[-1])
    target = result.system.max_utilization * 100
    fig = Figure(figsize=(7.5, 3.8))
    ax = fig.subplots()
    colour = {}
    for p in labels:
        u = np.where(np.isfinite(curves[p]), curves[p], np.nan) * 100
        line, = ax.plot(months, u, label=labels[p], lw=2)
        colour[p] = line.get_color()
        if bands is not None:
            lo, hi = (np.where(np.isfinite(b), b, np.nan) * 100 for b in bands[p])
            ax.fill_between(months, lo, hi, color=line.get_color(), alpha=0.18, lw=0,
                            label=f"{100 * level:.0f}% band" if p == next(iter(labels)) else None)
        cross = float(result.resources[p].months_to_target)
        if 0 < cross <= end:
            ax.plot([cross], [target], "o", color=line.get_color())
            ax.annotate(f"{cross:.0f} mo", (cross, target), textcoords="offset points",
                        xytext=(4, -12), fontsize=8, color=line.get_color())
    ax.axhline(target, color="black", ls="--", lw=1, label=f"target {target:.0f}%")
    ax.axvline(h, color="0.3", ls="-.", lw=1.5)
    top = max(105.0, ax.get_ylim()[1])
    ax.text(h, top * 0.97, f" horizon {h:g} months", va="top", fontsize=8, color="0.2")
    # orders whose months are closer than their labels are wide are one marker with one label, a
    # line per order (three month-0 orders drew one triangle and overprinted "ordrder 1")
    shown = sorted((o for o in orders if o.order_by_month <= end), key=lambda o: o.order_by_month)
    groups: list[list] = []
    for o in shown:
        if groups and o.order_by_month - groups[-1][0].order_by_month <= 0.06 * end:
            groups[-1].append(o)
        else:
            groups.append([o])
    for i, group in enumerate(groups):
        kinds = {o.resource for o in group}
        c = colour.get(group[0].resource, "black") if len(kinds) == 1 else "black"
        ax.plot([group[0].order_by_month], [0], marker="^", ms=10, color=c, clip_on=False, zorder=5,
                label=None if i else "order by (timeline)")
        text = "\n".join(f"order {o.add} {_SHORT[o.resource]}" for o in group)
        ax.annotate(text, (group[0].order_by_month, 0), textcoords="offset points", xytext=(3, 8),
                    fontsize=7, color=c, va="bottom")
    ax.set_xlabel("months ahead (each workload at its yearly growth)")
    ax.set_ylabel("utilization (%)")
    ax.set_xlim(0, end)
    ax.set_ylim(0, top)
    ax.set_title("Growth: when each resource's peak reaches its target", fontsize=11)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=3, frameon=False)
    fig.tight_layout()
    fig.savefig(path, dpi=110, format="png")


def calibration_chart(residuals: list[dict], path) -> None:
    """Site numbers against the model before and after calibration, in % of the site's value (PNG).

    ``residuals``: one dict per site number with ``label``, ``site``, ``quantity``, ``before``
    and ``after`` (a :class:`~cryptoplan.model.calibration.calibrate.Calibration`'s rows).
    """
    labels = [f"{r['label'].split(': ', 1)[-1]}  ({r['site']:.3g} {r['quantity'].rsplit(', ', 1)[-1]})"
              for r in residuals]
    # the labels' width (about 0.075 inch a character at 10 pt) beside a 5-inch plot
    fig = Figure(figsize=(5.5 + 0.075 * max(len(x) for x in labels), 0.45 * len(residuals) + 2.4))
    ax = fig.subplots()
    y = np.arange(len(residuals))[::-1]
    before = [100 * (r["before"] / r["site"] - 1) for r in residuals]
    after = [100 * (r["after"] / r["site"] - 1) for r in residuals]
    ax.axvline(0, color="black", lw=1)
    ax.hlines(y, before, after, color="0.7", lw=1)
    ax.scatter(before, y, marker="x", s=50, color="tab:orange", label="published parameters", zorder=3)
    ax.scatter(after, y, marker="o", s=40, color="tab:blue", label="calibrated parameters", zorder=3)
    ax.set_yticks(y, labels)
    ax.set_ylim(-0.6, len(residuals) - 0.4)
    ax.set_xlabel("model vs the site's value (%)")
    fig.suptitle("Site numbers (RMF, SMF, measured CPU): the model before and after calibration", fontsize=11)
    fig.legend(*ax.get_legend_handles_labels(), loc="lower center", ncol=2, fontsize=8, frameon=False)
    ax.grid(True, axis="x", alpha=0.3)
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    fig.savefig(path, dpi=110, format="png")     # the path may be a temporary file's (.tmp)


def figure_family_charts(folder, rows: list[dict]) -> None:
    """One bar chart per quantity and unit of the fit report: published against model, by figure id.

    ``rows``: the report's rows (``id``, ``quantity``, ``unit``, ``published``, ``model``);
    each family's chart is ``folder/<quantity_unit>.png``.
    """
    families: dict = {}
    for r in rows:
        families.setdefault(f"{r['quantity']} [{r['unit']}]", []).append(r)
    for fam, rs in families.items():
        fig = Figure(figsize=(7, 0.4 * len(rs) + 1.5))
        ax = fig.subplots()
        y = np.arange(len(rs))
        ax.barh(y - 0.2, [r["published"] for r in rs], 0.4, label="published")
        ax.barh(y + 0.2, [r["model"] for r in rs], 0.4, label="model")
        ax.set_yticks(y, [r["id"] for r in rs], fontsize=7)
        ax.set_title(fam)
        ax.legend()
        fig.tight_layout()
        name = "".join(ch if ch.isalnum() else "_" for ch in fam).strip("_")
        fig.savefig(os.path.join(folder, f"{name}.png"), dpi=100)
