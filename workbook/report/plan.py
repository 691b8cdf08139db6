"""A plan's answers as a planner reads them: a text report, JSON, and an HTML page with its charts.

``cryptoplan plan FILE`` prints :func:`plan_text` (or :func:`plan_json`); ``--report DIR`` writes
:func:`write_plan_report`'s page: the scenario restated, a stacked utilization chart of each
resource by workload, the growth chart with the target line, and the counts required now and at
the horizon (one printed page).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cryptoplan.model.errors import InputError

import html
import math
import os
from pathlib import Path

import numpy as np

from cryptoplan.model.zos.plan import MAX_MONTHS, POOLS, PlanResult, plan
from cryptoplan.model.zos.plan.evaluate import count_text, plan_with_loads
from cryptoplan.model.zos.plan.tables import params_in_force, scenario_lines
from cryptoplan.workbook.engine.atomic import OutputError, atomic_files
from cryptoplan.model.lazy import lazy_module

if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    from cryptoplan.workbook.report import charts
else:
    charts = lazy_module("cryptoplan.workbook.report.charts")   # matplotlib: on first chart

__all__ = ["plan_text", "plan_json", "write_plan_report", "growth_curve", "timeline_lines", "verdict_lines",
           "band_lines", "params_source", "REPORT_FILES"]

REPORT_FILES = ("plan.html", "utilization.png", "growth.png")
_LABEL = {"processors": "General processors", "coprocessors": "Coprocessors (CEXnC)",
          "accelerators": "Accelerators (CEXnA)"}


def _shown(x, infinite: str, fmt) -> str:
    """A number as the report prints it; an infinite one as the word that says why."""
    x = float(x)
    return infinite if math.isinf(x) else fmt(x)


def _pct(x) -> str:
    return _shown(x, "none installed", lambda v: f"{100 * v:.1f}%")


def _months(x) -> str:
    return _shown(x, f"never (within {MAX_MONTHS / 12:.0f} years)", lambda v: "now" if v == 0 else f"{v:.1f}")


def _headroom(x) -> str:
    return _shown(x, "unbounded", lambda v: f"x{v:.2f}")


def _ms(x) -> str:
    x = float(x)
    if math.isnan(x):
        return "overloaded"
    return "0" if x == 0 else "<0.001" if x < 0.001 else f"{x:.3g}"


def params_source() -> str:
    """Which parameter file the models use (the scenario's last line names it)."""
    return params_in_force()


def _scenario(result: PlanResult) -> list[str]:
    """What the answers are for (CLI header, HTML, and the Plan sheet's PLAN_TEXT: one function)."""
    return scenario_lines(result)


def _count(x, pool) -> str:
    return str(count_text(x, pool))


def _resource_rows(result: PlanResult) -> list[list[str]]:
    rows = []
    for pool in POOLS:
        r = result.resources[pool]
        f = r.failover
        rows.append([_LABEL[pool], f"{r.installed}", _pct(r.utilization), str(r.peak_interval),
                     _pct(r.average_utilization), _ms(r.wait_ms), _count(r.required, pool), _headroom(r.headroom),
                     _months(r.months_to_target), _count(r.required_at_horizon, pool),
                     "-" if f is None else _shown(f.utilization, "none left", lambda v: f"{100 * v:.1f}%"),
                     "-" if f is None else _count(f.required, pool),
                     "-" if f is None else _months(f.months_to_limit)])
    return rows


_RESOURCE_HEAD = ["resource", "installed", "peak", "at", "day average", "wait ms", "required", "headroom",
                  "months to target", "at horizon", "one card out", "required", "months to limit"]
_WORKLOAD_HEAD = ["workload", "kind", "rate", "CPU µs/unit", "processors", "coprocessors", "accelerators",
                  "queueing ms/unit"]


# the page says in its header what the text report says under its table: an AMS workload's CPU per
# unit holds its share of MQ MSTR administration, its processors share does not (counted once)
_HTML_WORKLOAD_HEAD = ["workload", "kind", "rate", "CPU µs/unit (MSTR share in)", "processors (MSTR apart)",
                       *_WORKLOAD_HEAD[5:]]


def _workload_rows(result: PlanResult) -> list[list[str]]:
    rows = []
    for name, w in result.workloads.items():
        shares = [_pct(result.resources[p].by_workload[name]) for p in POOLS]
        rows.append([name, w.kind, f"{float(w.rate):,.6g} {w.unit}", f"{float(w.cpu_us['total']):.1f}", *shares,
                     _ms(w.queueing_ms)])
    return rows


def _table(head, rows, text_columns=1) -> list[str]:
    widths = [max(len(str(c)) for c in col) for col in zip(head, *rows)]
    fmt = "  ".join(f"{{:<{w}}}" if i < text_columns else f"{{:>{w}}}" for i, w in enumerate(widths))
    return [fmt.format(*head), fmt.format(*("-" * w for w in widths))] + [fmt.format(*r) for r in rows]


def _check_scalar(result: PlanResult) -> None:
    if np.ndim(result.bottleneck) != 0:
        raise InputError("a report describes one scenario: evaluate the plan with scalar rates, growth and months")


def timeline_lines(result: PlanResult) -> list[str]:
    """The purchase timeline as sentences, earliest order first."""
    if not result.timeline:
        return [f"nothing to add within the {result.system.horizon_months:g}-month horizon"]
    return [p.text(result.system.start) for p in result.timeline]


def verdict_lines(result: PlanResult) -> list[str]:
    """Each pool's status, then each card pool's with one card failed."""
    out = [str(result.resources[p].status) for p in POOLS]
    out += [str(result.resources[p].failover.status) for p in POOLS if result.resources[p].failover is not None]
    return out


def _in_band(b, fmt) -> str:
    """"20.6% (19.3% to 22.2%)": a band's point answer and its interval."""
    def f(x):
        return str(count_text(x, b.pool)) if b.pool is not None else fmt(x)
    point, low, high = f(b.point), f(b.low), f(b.high)
    if point == low == high and not any(c.isdigit() for c in point):
        return point                        # "none left" in every draw, not "none left (none left to none left)"
    return f"{point} ({low} to {high})"


_BAND_HEAD = ["resource", "peak", "at horizon", "P(over) now", "at horizon", "required", "at horizon",
              "months to target", "one card out: required"]


def band_lines(bands) -> list[str]:
    """How sure the answers are (:class:`~cryptoplan.model.zos.plan.PlanBands`): a table of each pool's
    answers with their central intervals and its chance of being overloaded, then the timeline's
    install months with theirs."""
    lvl = f"{100 * bands.level:.0f}%"
    rows = []
    for pool in POOLS:
        b = bands.resources[pool]
        rows.append([_LABEL[pool], _in_band(b.utilization, _pct), _in_band(b.utilization_at_horizon, _pct),
                     f"{100 * b.p_overloaded:.0f}%", f"{100 * b.p_overloaded_at_horizon:.0f}%",
                     _in_band(b.required, str), _in_band(b.required_at_horizon, str),
                     _in_band(b.months_to_target, _months),
                     "-" if b.failover is None else _in_band(b.failover["required"], str)])
    return [f"How sure: each answer and its {lvl} band, over {bands.draws:,} draws of {_drawn(bands)}; "
            "P(over): the share of draws in which the installed servers are overloaded", f"  {bands.holds}",
            *_table(_BAND_HEAD, rows)]


def _drawn(bands) -> str:
    """What was drawn, in words."""
    return "the model's parameters and the forecast's ranges" if bands.forecast else "the model's parameters"


def _timeline_band(t, level) -> str:
    """A purchase's band: when it is needed, and how often it must be ordered now."""
    b = t["install_by_month"]
    # (a band's high end can be never: a migration's assumed times may be low enough that the
    # count lasts in some draws)
    high = f"{b.high:.1f}" if math.isfinite(b.high) else "never (within 100 years)"
    when = ("needed now in every draw" if b.high <= 0.0 else
            f"needed between now and month {high}" if b.low <= 0.0 else
            f"needed by month {b.low:.1f} to {high}")
    return f"    {100 * level:.0f}%: {when}; order now in {100 * t['p_order_now']:.0f}% of draws"


def plan_text(result: PlanResult, source: str = "", rmf_notes=(), bands=None) -> str:
    """The report ``cryptoplan plan`` prints: scenario, what was taken from RMF's report
    (``rmf_notes``, :attr:`cryptoplan.model.zos.plan.read.PlanInputs.notes`), resources,
    verdicts, the bands (``bands``: :class:`~cryptoplan.model.zos.plan.PlanBands`), the purchase
    timeline, warnings, workloads, RMF rows."""
    _check_scalar(result)
    acc = result.resources["accelerators"]
    out = [f"Plan{f' {source}' if source else ''}", *("  " + line for line in _scenario(result)), ""]
    if rmf_notes:
        out += ["From RMF's report:", *(f"  {n}" for n in rmf_notes), ""]
    out += _table(_RESOURCE_HEAD, _resource_rows(result)) + [""]
    out += [f"  {line}" for line in verdict_lines(result)] + [""]
    if bands is not None:
        out += band_lines(bands) + [""]
    out.append(f"Purchase timeline (order {result.system.lead_time_months:g} months before each is needed; months "
               "from the scenario):")
    for i, line in enumerate(timeline_lines(result)):
        out.append(f"  {line}")
        if bands is not None and i < len(bands.timeline):
            out.append(_timeline_band(bands.timeline[i], bands.level))
    out.append("")
    if result.warnings:
        out.append("Warnings:")
        out += [f"  {w}" for w in result.warnings] + [""]
    out.append("Each workload's share of each resource's utilization (at that resource's peak):")
    out += _table(_WORKLOAD_HEAD, _workload_rows(result), text_columns=2) + [""]
    out += [f"  {name}: {w.meaning}" for name, w in result.workloads.items()] + [""]
    other = {p: result.resources[p].other for p in POOLS}
    out.append("Not from these workloads: processors " + _pct(other["processors"])
               + " (MQ MSTR administration), coprocessors " + _pct(other["coprocessors"])
               + ", accelerators " + _pct(other["accelerators"]) + " (other LPARs)")
    if any(w.kind == "ams" for w in result.workloads.values()):
        out.append("CPU µs/unit includes an AMS workload's share of its queue manager's MSTR administration (as the "
                   "AMS functions' cost per transaction does); the processors column does not: MSTR is counted once, "
                   "above")
    cpu = result.resources["processors"]
    if cpu.msu is not None:
        out.append(f"Processors at the peak: {float(cpu.busy):.2f} CPs busy = {float(cpu.msu):,.0f} MSU "
                   f"({result.system.msu_per_processor:g} MSU per processor)")
    out.append(f"Accelerator RMF rows (this LPAR): ME {_pct(acc.rows['ME'])}, CRT {_pct(acc.rows['CRT'])}, "
               f"other functions {_pct(acc.rows['other'])}; mean EXEC TIME {float(acc.exec_ms):.3f} ms")
    cop = result.resources["coprocessors"]
    out.append(f"Coprocessor: {float(cop.rate):,.0f} requests/s, mean EXEC TIME {float(cop.exec_ms):.3f} ms")
    out.append("")
    first = float(result.resources[str(result.binds_first)].months_to_target)
    when = ("already at or over it" if first == 0 else f"never within {MAX_MONTHS / 12:.0f} years"
            if math.isinf(first) else f"in {first:.1f} months")
    out.append(f"Busiest: {result.bottleneck}.  First to reach its target as the workloads grow: "
               f"{result.binds_first} ({when}).")
    return "\n".join(out) + "\n"


def plan_json(result: PlanResult, rmf=None, bands=None) -> dict:
    """The ``--json`` document: ``{"scenario", "resources": {pool: {...}}, "workloads": {name: {...}},
    "timeline", "warnings", ...}``, and ``"rmf"`` when the plan took values from RMF's report
    (``rmf``: :class:`~cryptoplan.model.zos.plan.read.PlanInputs`).  With ``bands``
    (:class:`~cryptoplan.model.zos.plan.PlanBands` of ``result``) every banded answer is an object
    ``{"point", "p05", "median", "p95"}`` and each pool carries ``p_overloaded``
    (:meth:`~cryptoplan.model.zos.plan.PlanBands.to_dict`)."""
    doc = result.to_dict() if bands is None else bands.to_dict()
    doc["scenario"]["params"] = params_source()
    if rmf is not None and rmf.pools is not None:
        p = rmf.pools
        doc["rmf"] = {"file": p.file, "system": p.system, "cards": p.cards, "peak_interval": p.peak,
                      "busy": p.busy, "rate": p.rate, "other_lpars": p.other, "other_lpars_work": p.work,
                      "idle": p.idle, "hot_cpc": [list(h) for h in p.hot], "notes": list(rmf.notes)}
    return doc


def growth_curve(system, workloads, months) -> dict:
    """Each resource's utilization at each of ``months`` (one vectorized plan evaluation)."""
    r = plan(system, workloads, months=np.asarray(months, dtype=float))
    return {p: np.asarray(r.resources[p].utilization, dtype=float) for p in POOLS}


def growth_band(system, workloads, months, draws: dict, level: float) -> dict:
    """Each resource's central ``level`` interval of utilization at each of ``months`` over the
    parameter ``draws``: pool -> ``(low, high)`` arrays (fractions; inf where none are installed).

    One plan under the draws gives each workload's load in each interval of the busiest day
    (:func:`~cryptoplan.model.zos.plan.evaluate.plan_with_loads`); a load grows with its workload's
    rate, :math:`L_{wj}(t) = L_{wj} (1 + g_w)^{t/12}` (:math:`g_w` drawn too where the workload gives a
    growth range), so the peak utilization at month :math:`t` is
    :math:`\\max_j (\\sum_w L_{wj}(t) + B)/k + u_o`, the plan's own formula, for every month and
    draw at once (months taken a few at a time: arrays of megabytes, not gigabytes).
    """
    months = np.asarray(months, dtype=float)
    result, loads, fixed, yearly = plan_with_loads(system, workloads, draws=draws)
    # each workload's growth, per draw where a forecast's growth range is drawn: (W, D, M); a
    # migration's parts (more rows than the workloads given) times their shares at each month
    n_draws = len(next(iter(draws.values())))
    w = len(yearly)
    g = np.broadcast_to(np.reshape(yearly, (w, -1)), (w, n_draws))
    factors = (1.0 + g[..., None]) ** (months / 12.0)
    if result.schedule is not None:
        loads = result.growth_loads
        factors = factors * result.schedule.at(result.schedule.start + months)[:, None, :]
    q = [(1.0 - level) / 2.0, (1.0 + level) / 2.0]
    out = {}
    for p in POOLS:
        k, other = system.installed(p), system.other(p)
        L = np.asarray(loads[p], dtype=float)                                  # (W, D, I)
        step = max(1, 4_000_000 // max(L.size, 1))
        lo, hi = [], []
        for i in range(0, months.size, step):
            peak = (np.einsum("wdi,wdm->mdi", L, factors[..., i:i + step]) + fixed[p][None, :, None]).max(axis=-1)
            with np.errstate(divide="ignore", invalid="ignore"):
                util = peak / k + other if k else np.where(peak > 0, np.inf, 0.0)
            a, b = np.quantile(util, q, axis=-1, method="inverted_cdf")
            lo.append(a)
            hi.append(b)
        out[p] = (np.concatenate(lo), np.concatenate(hi))
    return out


def _growth_months(result: PlanResult) -> np.ndarray:
    """The growth chart's months: past the horizon and the first crossing, if it comes within 10 years."""
    h = result.system.horizon_months
    first = min((float(result.resources[p].months_to_target) for p in POOLS), default=math.inf)
    end = float(np.clip(1.2 * first if math.isfinite(first) else 0.0, max(1.25 * h, 24.0), max(120.0, 1.25 * h)))
    # (never past the months a plan looks at: a horizon of 1,000 months charts to 1,200, not 1,250)
    return np.linspace(0.0, min(end, MAX_MONTHS), 121)


_CSS = """body{font-family:DejaVu Sans,Arial,sans-serif;max-width:64em;margin:1.5em auto;color:#222;font-size:11pt}
h1{font-size:16pt;margin-bottom:.2em}h2{font-size:12.5pt;margin:1.1em 0 .3em}
table{border-collapse:collapse;font-size:9.5pt;width:100%}th,td{border-bottom:1px solid #ccc;padding:3px 6px}
th{background:#eef;text-align:left}td.n{text-align:right}p.s{margin:.2em 0}p.r{margin:.05em 0;font-size:8.5pt;color:#444}
.charts{display:flex;gap:1%}.charts img{width:49.5%}.cols{display:flex;gap:2%}.cols>div{flex:1}
ul{margin:.2em 0;padding-left:1.2em}li{margin:.1em 0}.scn{background:#f4f4fa;padding:2px 6px}
.bad{color:#b00;font-weight:bold}.ok{color:#070}
@page{size:A4 landscape;margin:8mm}
@media print{body{margin:0;max-width:none;font-size:8.5pt}h1{font-size:13pt}h2{font-size:10pt;margin:.5em 0 .2em;
page-break-after:avoid}table{font-size:7.5pt}th,td{padding:0 4px}td.n,td:first-child{white-space:nowrap}.charts{page-break-inside:avoid;
justify-content:center}.charts img{width:auto;max-width:49.5%;max-height:45mm}p.s{margin:.1em 0}}"""


def _html_table(head, rows, text_columns=1) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td{' class=n' if i >= text_columns else ''}>{html.escape(str(c))}</td>"
                                    for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><tr>{th}</tr>{body}</table>"


def _bad(text: str) -> bool:
    return any(w in text for w in ("overloaded", "over the", "none is left", "none installed"))


def _banded_rows(result: PlanResult, bands) -> tuple[list, list]:
    """The page's resource table with each banded answer as "point (low to high)" and each pool's
    chance of being overloaded: (head, rows)."""
    head = ["resource", "installed", "peak", "at", "day average", "required", "months to target", "at horizon",
            "P(over) now", "P(over) at horizon", "one card out", "required"]
    rows = []
    for pool in POOLS:
        r, b = result.resources[pool], bands.resources[pool]
        f = b.failover
        rows.append([_LABEL[pool], f"{r.installed}", _in_band(b.utilization, _pct), str(r.peak_interval),
                     _in_band(b.average_utilization, _pct), _in_band(b.required, str),
                     _in_band(b.months_to_target, _months), _in_band(b.required_at_horizon, str),
                     f"{100 * b.p_overloaded:.0f}%", f"{100 * b.p_overloaded_at_horizon:.0f}%",
                     "-" if f is None else _in_band(f["utilization"], lambda v: _shown(v, "none left", lambda x: f"{100 * x:.1f}%")),
                     "-" if f is None else _in_band(f["required"], str)])
    return head, rows


def _resources_html(result: PlanResult, bands) -> str:
    if bands is None:
        return _html_table(_RESOURCE_HEAD, _resource_rows(result))
    head, rows = _banded_rows(result, bands)
    lvl = f"{100 * bands.level:.0f}%"
    return (_html_table(head, rows)
            + f"<p class=s>In brackets: the {lvl} band over {bands.draws:,} draws. P(over): the share of draws in "
              f"which the installed servers are overloaded, at the peak now and at the horizon. "
              f"{html.escape(bands.holds)}</p>")


def _plan_html(result: PlanResult, source: str, rmf_notes=(), bands=None) -> str:
    status = []
    for line in verdict_lines(result):
        bad = _bad(line)
        status.append(f"<p class=s><span class={'bad' if bad else 'ok'}>{'&#9888;' if bad else '&#10003;'}</span> "
                      f"{html.escape(line)}</p>")
    lines = [html.escape(p.text(result.system.start)) for p in result.timeline or ()]
    if bands is not None:
        lines = [f"{line}<br><small>{html.escape(_timeline_band(t, bands.level).strip())}</small>"
                 for line, t in zip(lines, bands.timeline)]
    buy = "".join(f"<li class={'bad' if p.order_now else ''}>{line}</li>"
                  for p, line in zip(result.timeline or (), lines))
    buy = f"<ul>{buy}</ul>" if buy else f"<p class=s>{html.escape(timeline_lines(result)[0])}</p>"
    warn = ("<h2>Warnings</h2>" + "".join(f"<p class=s>&#9888; {html.escape(w)}</p>" for w in result.warnings)
            if result.warnings else "")
    acc = result.resources["accelerators"]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>cryptoplan: {html.escape(source)}</title>
<style>{_CSS}</style></head><body>
<h1>Crypto capacity plan{': ' + html.escape(source) if source else ''}</h1>
<div class=scn>{''.join(f'<p class=s>{html.escape(line)}</p>' for line in _scenario(result))}{
f'<p class=r>From {html.escape(" · ".join(rmf_notes))}</p>' if rmf_notes else ''}</div>
<div class=cols><div>
<h2>Verdict (peak interval)</h2>
{''.join(status)}
<p class=s>Busiest: <b>{html.escape(str(result.bottleneck))}</b>; reaches its target first as the workloads grow:
<b>{html.escape(str(result.binds_first))}</b>.</p>
</div><div>
<h2>What to buy, by when (lead time {result.system.lead_time_months:g} months)</h2>
{buy}
{warn}
</div></div>
<h2>Resources</h2>
{_resources_html(result, bands)}
<p class=s>Peak: the busiest interval of the busiest day; day average: the average day. Headroom: the factor on
every rate that brings the peak to its target. One card out: the pool with one card failed (its load and other
LPARs' share on the others). Accelerator RMF rows (this LPAR): ME {_pct(acc.rows['ME'])}, CRT {_pct(acc.rows['CRT'])},
other functions {_pct(acc.rows['other'])}.</p>
<h2>Workloads</h2>
{_html_table(_HTML_WORKLOAD_HEAD, _workload_rows(result), text_columns=2)}
<div class=charts><img src="utilization.png" alt="stacked utilization by workload at each resource's peak">
<img src="growth.png" alt="utilization over the months ahead, with the target line, horizon and order dates"></div>
<p class=s style="font-size:8.5pt;color:#555">Utilization is RMF's: requests x EXEC TIME per card (summary row),
CPU seconds per second per processor. Waits: M/G/c on each pool's mixture of requests. Made by cryptoplan.</p>
</body></html>
"""


def write_plan_report(result: PlanResult, workloads, folder, source: str = "", force: bool = False,
                      notes: list | None = None, rmf_notes=(), bands=None, draws: dict | None = None) -> list:
    """Write ``plan.html``, ``utilization.png`` and ``growth.png`` into ``folder`` (created if missing).

    The three are written as one (:func:`~cryptoplan.workbook.engine.atomic.atomic_files`): every
    target is checked first, all are drawn into temporary files, and only then renamed into
    place, so a failure leaves the folder as it was (a folder this call created is removed).
    An existing file is replaced only with ``force``.  What matplotlib would have warned about (a
    glyph the font lacks) is appended to ``notes`` as a sentence.  ``rmf_notes``: where the values
    taken from RMF's report came from, printed under the scenario.  ``bands``
    (:class:`~cryptoplan.model.zos.plan.PlanBands`) and the ``draws`` it was made from add the bands:
    a table of them on the page and each pool's shaded band on the growth chart.

    Raises
    ------
    OutputError
        If a file exists (without ``force``), a target is not a regular file, or the folder cannot
        be written.
    """
    _check_scalar(result)
    if not os.fspath(folder).strip():            # Path("") would be the current folder
        raise OutputError("--report needs a folder name (got an empty one)")
    folder = Path(folder)
    try:
        if folder.exists() and not folder.is_dir():
            raise OutputError(f"cannot write the report into {folder}: it is not a folder")
        targets = [folder / n for n in REPORT_FILES]
        if not force:
            there = [str(t) for t in targets if t.exists() or t.is_symlink()]
            if there:
                raise OutputError(f"{there[0]} exists; use --force to replace the report's files")
        made = not folder.exists()
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OutputError(f"cannot create the report folder {str(folder)[:80]}: {e.strerror or e}") from None
    try:
        with atomic_files(targets, replace=force) as (page, bars, growth), charts.quiet_drawing(notes):
            charts.utilization_chart(result, _LABEL, bars)
            months = _growth_months(result)
            shaded = (growth_band(result.system, workloads, months, draws, bands.level)
                      if bands is not None and draws is not None else None)
            charts.growth_chart(result, _LABEL, months, growth_curve(result.system, workloads, months), growth,
                                orders=result.timeline or (), bands=shaded,
                                level=None if bands is None else bands.level)
            Path(page).write_text(_plan_html(result, source, rmf_notes, bands), encoding="utf-8")
    except BaseException:
        if made:
            try:
                folder.rmdir()              # only if empty: nothing of the user's is removed
            except OSError:
                pass
        raise
    return [str(t) for t in targets]
