"""The model's commands: ``capacity``, ``fit``, ``calibrate``, ``crossval``.

Only click and the standard library load with this module; NumPy, the model, the fit and
matplotlib are bound at the top with :func:`~cryptoplan.model.lazy.lazy_module` and load when a command first
uses them, so ``cryptoplan --help`` starts in a blink (``tests/test_cli.py`` checks it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import contextlib
import csv
import json
import math
import os
import sys
from pathlib import Path

import click

from cryptoplan import model     # lazy: its functions import on first use

from .errors import Finite, check_output_file, report_folder, writing
from cryptoplan.model.lazy import lazy_module

if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    import numpy as np
    import tqdm
    from cryptoplan.model.calibration import calibrate as C
    from cryptoplan.model.calibration import fit as F
    from cryptoplan.model.site import smf as smf_reader
    from cryptoplan.model import datafiles
    from cryptoplan.model import figures
    from cryptoplan.model import params as model_params
    from cryptoplan.model.zos import tls
    from cryptoplan.workbook import site_rmf
    from cryptoplan.model.site import rmf_files
    from cryptoplan.model.site import errors as site_errors
    from cryptoplan.model.site import rmf_lines
    from cryptoplan.model.site import rmf_records
    from cryptoplan.workbook.engine import atomic
    from cryptoplan.workbook.report import charts
    from cryptoplan.model.calibration import card_speed
    from cryptoplan.model.calibration import qs_times as qs_site
    from cryptoplan.workbook import plan_sheet
else:
    np = lazy_module("numpy")
    tqdm = lazy_module("tqdm")
    C = lazy_module("cryptoplan.model.calibration.calibrate")
    F = lazy_module("cryptoplan.model.calibration.fit")
    smf_reader = lazy_module("cryptoplan.model.site.smf")
    datafiles = lazy_module("cryptoplan.model.datafiles")
    figures = lazy_module("cryptoplan.model.figures")
    model_params = lazy_module("cryptoplan.model.params")
    tls = lazy_module("cryptoplan.model.zos.tls")
    site_rmf = lazy_module("cryptoplan.workbook.site_rmf")
    rmf_files = lazy_module("cryptoplan.model.site.rmf_files")
    site_errors = lazy_module("cryptoplan.model.site.errors")
    rmf_lines = lazy_module("cryptoplan.model.site.rmf_lines")
    rmf_records = lazy_module("cryptoplan.model.site.rmf_records")
    atomic = lazy_module("cryptoplan.workbook.engine.atomic")
    charts = lazy_module("cryptoplan.workbook.report.charts")
    card_speed = lazy_module("cryptoplan.model.calibration.card_speed")
    qs_site = lazy_module("cryptoplan.model.calibration.qs_times")
    plan_sheet = lazy_module("cryptoplan.workbook.plan_sheet")

__all__ = ["capacity", "fit", "calibrate", "crossval"]


def _rates_text(rates) -> str:
    return ",".join(f"{r:g}" for r in rates)


def _rates(ctx, param, text: str) -> list[float]:
    try:
        values = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated numbers, got {text!r}") from None
    if not values:
        raise click.BadParameter(f"expected at least one rate, got {text!r}")
    bad = [v for v in values if not (math.isfinite(v) and v >= 0)]
    if bad:
        raise click.BadParameter(f"rates must be finite and >= 0 (got {bad[0]:g})")
    return values


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="cryptoplan")
def main() -> None:
    """cryptoplan: capacity planning for z/OS crypto workloads (Crypto Express, AT-TLS, MQ AMS)."""


@click.command()
@click.option("--service-ms", required=True, type=Finite(min=0, min_open=True),
              help="Mean service time per request on one server (ms), e.g. from RMF.")
@click.option("--rates", default="100,500,1000,2000,5000", show_default=True, callback=_rates,
              help="Comma-separated request rates (per second).")
@click.option("--max-utilization", default=0.7, show_default=True, type=Finite(0, 1, min_open=True),
              help="Planning ceiling on utilization per server (0-1].")
@click.option("--max-wait-ms", default=None, type=Finite(min=0, min_open=True),
              help="Ceiling on the mean queueing delay (ms).")
@click.option("--scv", default=0.0, show_default=True, type=Finite(min=0),
              help="Squared coefficient of variation of service (0 = constant, 1 = exponential).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def capacity(service_ms, rates, max_utilization, max_wait_ms, scv, as_json):
    """Servers needed for each request rate, and the queueing at that count (M/M/c sizing)."""
    lam = np.asarray(rates)
    s = service_ms / 1000.0
    try:
        # Allen-Cunneen with Poisson arrivals is the M/M/c wait times (1 + scv)/2, so the
        # M/M/c search on the scaled target sizes on exactly the wait printed below.
        target = None if max_wait_ms is None else max_wait_ms / 1000.0 * 2.0 / (1.0 + scv)
        n, m = model.mmc_servers(lam, s, max_utilization=max_utilization, max_wait=target,
                                 full_output=True)
        wq_mgc = model.mgc_wait(lam, s, n.astype(float), service_scv=scv)
    except ValueError as exc:
        raise click.UsageError(f"with --service-ms {service_ms:g} and --rates {_rates_text(rates)}: {exc}") from None
    rows = [dict(rate_per_s=float(r), servers=int(k), utilization=float(u),
                 wait_probability=float(pw), mean_wait_ms_mmc=float(w) * 1e3,
                 mean_wait_ms_mgc=float(g) * 1e3)
            for r, k, u, pw, w, g in zip(lam, n, m.utilization, m.wait_probability, m.mean_wait, wq_mgc)]
    if as_json:
        json.dump(rows, sys.stdout, indent=2)
        click.echo()
        return
    click.echo(f"service time {service_ms:g} ms, utilization ceiling {max_utilization:.0%}"
               + (f", mean wait ceiling {max_wait_ms:g} ms" if max_wait_ms else "")
               + f", service SCV {scv:g} (servers sized on the M/G/c Allen-Cunneen wait)")
    click.echo(f"{'rate/s':>10} {'servers':>8} {'util':>7} {'P(wait)':>8} {'Wq M/M/c ms':>12} {'Wq M/G/c ms':>12}")
    for r in rows:
        click.echo(f"{r['rate_per_s']:>10g} {r['servers']:>8d} {r['utilization']:>7.1%} "
                   f"{r['wait_probability']:>8.4f} {r['mean_wait_ms_mmc']:>12.4f} {r['mean_wait_ms_mgc']:>12.4f}")


def _refuse_outputs(out_path, report_dir, force) -> None:
    """Refuse, before any work, an ``--out`` file or ``--report`` folder the command may not write."""
    if out_path:
        check_output_file(out_path, "--out")
    if out_path and Path(out_path).exists() and not force:
        raise click.UsageError(f"{out_path} exists; use --force to overwrite it")
    if report_dir and os.path.lexists(report_dir) and not os.path.isdir(report_dir):
        raise click.UsageError(f"--report: {report_dir} exists and is not a folder")
    if report_dir and os.path.isdir(report_dir) and any(Path(report_dir).iterdir()) and not force:
        raise click.UsageError(f"{report_dir} is not empty; use --force to write the report into it")


_GROUP_TITLES = {"ams": "crypto + AMS", "tls": "TLS channel costs (z15 set: planning)",
                 "tls_z196": "TLS channel costs, seed 000's z196 (descriptive: no planning function reads it)",
                 "handshake": "TLS handshakes",
                 "roundtrip": "TLS round trips"}


def _figure_line(r: dict) -> list[str]:
    """A figure's line (published, model, accepted interval), and its miss's reason under it."""
    mark = "ok " if r["within_tolerance"] else "   "
    lo, hi = ("" if v is None else f"{v:.4g}" for v in (r["accepted_low"], r["accepted_high"]))
    out = [f"  {mark}{r['id']:44s} published {r['published']:>10.4g}  model {r['model']:>10.4g}"
           f"  accepts {lo:>9s} .. {hi:<9s} {r['kind']}"]
    if r["reason"]:
        out.append(f"       why: {r['reason']}")
    return out


def _fit_text(doc: dict, rows: list[dict], predicted: tuple | list = ()) -> str:
    """What ``cryptoplan fit`` prints: each group's fit report, the parameters read from the
    figures, the figures counted apart (fitted, predicted, echoes), every fitted figure with its
    model value, then every predicted one."""
    ok = sum(r["within_tolerance"] for r in rows)
    within10 = sum(abs(r["relative_error"] or 0) <= 0.10 for r in rows)
    n_free = sum(p["source"].startswith("fit") for p in doc["parameters"].values())
    out = [f"fit: {n_free} free parameters, {len(rows)} figures, {doc['nfev']} evaluations, {doc['seconds']:.2f} s"]
    units = {name: p["unit"] for name, p in doc["parameters"].items()}
    tags = F.parameter_roles(doc)
    out += [solution.report(_GROUP_TITLES.get(group, group), units, tags) for group, solution in doc["solutions"].items()]
    weak = F.weak_parameters(doc)
    if weak:
        out.append("[[standard error above the value: what bounds the parameter, which answers carry it]]")
        for name, (partner, r) in weak.items():
            moves = f"moves with {partner} (correlation {r:+.2f}); " if partner else ""
            out.append(f"    {name}: {moves}{F.FREE[name].weakly or 'NOT EXPLAINED'}")
    on_bound = [n for n in F.bound_parameters(doc) if n in F.FREE and F.FREE[n].weakly]
    if on_bound:
        out.append("[[on a bound: what holds the parameter there, which answers carry it]]")
        out += [f"    {name}: {F.FREE[name].weakly}" for name in on_bound]
    out.append("[[priors: a published source other than the figures]]")
    out += [f"    {name}: within a factor {p.factor:g} of {p.basis}" for name, p in F.PRIORS.items()]
    out.append("[[fixed: read from the figures or a structural assumption, not fitted]]")
    out += [f"    {name:22s} {p['value']:12.6g} {p['unit']:6s} {p['source']}"
            for name, p in doc["parameters"].items() if not p["source"].startswith("fit")]
    counts = F.figure_counts(rows, list(predicted))
    (d_ok, d_n), (p_ok, p_n) = counts["descriptive"], counts["predicted"]
    out.append("figures, counted apart:")
    out.append(f"  predicted (published, no fit uses them): {p_ok} of {p_n} within their tolerance (listed last)")
    out.append("  fitted, each predicted with it left out (the headline for the fitted figures): `cryptoplan crossval`")
    out.append(f"  fitted: {ok} of {len(rows)} within their tolerance, {within10}/{len(rows)} within 10% (figures the fit "
               f"was made to, not predictions; {d_n} of them seed 000's descriptive z196 set, {d_ok} within)")
    out.append(f"  echoes: {counts['echoes']} (the operation counts per message the AMS model is built from: returned, "
               "not predicted, not counted)")
    by_source: dict = {}
    for r in rows:
        if r["relative_error"] is not None:
            by_source.setdefault(r["source"], []).append(abs(r["relative_error"]))
    out.append("median absolute relative error by source:")
    out += [f"  {src:45s} {np.median(errs):7.1%}  ({len(errs)} figures)" for src, errs in sorted(by_source.items())]
    out.append("[[fitted: the figures the fit was made to]]")
    for r in rows:
        out += _figure_line(r)
    if predicted:
        out.append("[[predicted: published figures no fit uses, from the fitted parameters]]")
        for r in predicted:
            out += _figure_line(r)
    return "\n".join(out) + "\n"


def _check_parameter_file(doc: dict, table) -> None:
    """``fit --check``: exit 1, naming the differences, when the parameter file in force is not
    what this fit gives (within refitting's allowances)."""
    with table:
        diffs = F.fit_differences(doc, model_params.load_params())
    if diffs:
        click.echo(f"check: {model_params.params_path()} is not what this fit gives:")
        for d in diffs:
            click.echo(f"  {d}")
        click.echo("refit with `cryptoplan fit --out FILE --force` and commit the file")
        sys.exit(1)
    click.echo(f"check: {model_params.params_path()} is this fit's result (within refitting's allowances)")


@click.command()
@click.option("--figures", "figures_path", type=click.Path(exists=True, dir_okay=False),
              help="Figures table to fit (default: data/figures.csv).")
@click.option("--out", "out_path", type=click.Path(dir_okay=False), default=None,
              help="Parameter file to write (default: print only).")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              help="Folder for the fit report: figures.csv (published vs model) and one PNG per figure family.")
@click.option("--force", is_flag=True, help="Overwrite an existing --out file or report files.")
@click.option("--check", is_flag=True,
              help="Compare the fit with the parameter file in force (data/params.json or $CRYPTOPLAN_PARAMS) "
                   "and exit 1 if they differ by more than refitting explains.")
def fit(figures_path, out_path, report_dir, force, check):
    """Re-fit the crypto/AMS and TLS parameters to the published figures (or to --figures)."""
    _refuse_outputs(out_path, report_dir, force)
    if check:       # the file to compare with, refused (as recalc refuses it) before a fit is spent
        model_params.load_params()
    if figures_path:
        _check_figure_table(figures_path)
    table = figures.using_figures(figures_path) if figures_path else contextlib.nullcontext()
    with table:
        click.echo("fitting the crypto/AMS, TLS and round-trip models to the published figures "
                   "(a few seconds) ...", err=True)
        doc = F.fit()
        values = {k: v["value"] for k, v in doc["parameters"].items()}
        rows = F.figure_table(values)
        predicted = F.prediction_table(values)
    click.echo(_fit_text(doc, rows, predicted), nl=False)
    if report_dir:          # first: a fit refused below is one whose residuals a reader wants
        folder = report_folder(report_dir)
        try:
            _fit_report(folder, rows)
        except OSError as exc:
            raise click.ClickException(f"--report: cannot write into {folder} ({exc.strerror or exc})") from None
        click.echo(f"wrote report to {report_dir}")
    if out_path:
        written = {"parameters": doc["parameters"],
                   "fit": {"cost": doc["cost"], "roundtrip_cost": doc["roundtrip_cost"], "nfev": doc["nfev"]},
                   "covariance": F.covariance_section(doc)}
        # Everything that can refuse the file is checked before the bootstrap spends its half
        # minute: values the models would refuse to load (as calibrate does; validate_params
        # reads the parameters only, so the bootstrap drawn below needs no second check), and a
        # folder that cannot take a file (read-only, no permission) -- probed again, since a fit
        # takes seconds.
        try:
            model_params.validate_params(written, "the fitted parameters", names=False)
        except model_params.ParameterFileError as exc:
            raise click.ClickException(f"{exc}; {out_path} not written") from None
        check_output_file(out_path, "--out")
        click.echo(f"drawing the bootstrap of the sub-models whose covariance is not to be trusted "
                   f"({F.BOOTSTRAP_DRAWS} refits each, about two minutes) ...", err=True)
        written["bootstrap"] = F.bootstrap_section(doc)
        for group, block in written["bootstrap"].items():
            if block["stalled"]:
                click.echo(f"warning: {block['stalled']} of {len(block['draws'])} {group} refits stopped where "
                           "they started (a residual is not smooth at the fit): bands drawn from that block "
                           "are too narrow", err=True)
        text = F.params_text(written)
        with writing(out_path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        click.echo(f"wrote {out_path}")
    if check:
        _check_parameter_file(doc, table)


@click.command()
@click.option("--rmf", "rmf_path", type=click.Path(dir_okay=False),
              help="The RMF Crypto Hardware Activity report's lines: the template's Site RMF sheet "
                   "(an .xlsx), or a CSV with the columns TYPE,ID,FUNCTION,KEY,RATE,EXEC TIME,UTIL% "
                   "(see docs/calibration.md).")
@click.option("--cpu", "cpu_path", type=click.Path(dir_okay=False),
              help="CSV of measured CPU per transaction by address space (RMF Workload Activity APPL%), "
                   "columns WORKLOAD,SETTING,CIPHER,KEY,KEY REUSE,MESSAGE KB,ADDRESS SPACE,RATE,APPL%.")
@click.option("--rmf-report", "rmf_reports", multiple=True, type=click.Path(dir_okay=False),
              help="RMF's printed CRYPTO HARDWARE ACTIVITY report (ERBRMFPP REPORTS(CRYPTO) output, as text); "
                   "repeat for more. Its card lines are used as --rmf's typed lines are.")
@click.option("--smf", "smf_dir", type=click.Path(),
              help="A folder: IBM's mq-smf-csv output for a channel initiator (SMF-QCTDSP.csv, SMF-QCTADP.csv, "
                   "SMF-QCTSSL.csv, SMF-QCTDNS.csv from SMF 115, SMF-QCST.csv from SMF 116). A file: SMF type 70 "
                   "subtype 2 records (binary, as dumped), read as the report they make.")
@click.option("--platform", default="z16", show_default=True, type=click.Choice(["z14", "z15", "z16"]),
              help="Machine the --cpu and --smf numbers were measured on.")
@click.option("--plan", "plan_path", type=click.Path(dir_okay=False), default=None,
              help="A plan (TOML, or a workbook's Workloads and Plan sheets) whose workloads state the mix of "
                   "operations this LPAR sends its coprocessors: RMF's coprocessor lines (a mean over every CCA "
                   "service) then calibrate one speed factor on all coprocessor times. Without it they calibrate "
                   "nothing.")
@click.option("--qs-time", "qs_times", multiple=True, metavar="ALG:OP=MS[+-SD]",
              help="A quantum-safe operation's coprocessor time measured on site, ms (e.g. ML-DSA-65:sign=0.9, or "
                   "=0.9+-0.05 with its standard uncertainty; 10% where not given): replaces the assumed time of its "
                   "family (ML-DSA or ML-KEM), and bands draw the site's uncertainty instead of the assumption's "
                   "0.5-3. One per family; repeat for the other.")
@click.option("--qs-rmf", "qs_family", type=click.Choice(["ML-DSA", "ML-KEM"], case_sensitive=False), default=None,
              help="With --plan: RMF's coprocessor lines calibrate this quantum-safe family's time factor on the "
                   "plan's mix (every other coprocessor time held) instead of the coprocessors' speed. The plan "
                   "states the share migrated when RMF measured: a [[migration]] with start = 0 and months = 0.")
@click.option("--key-type", hidden=True, default=None)
@click.option("--key-size", hidden=True, default=None)
@click.option("--out", "out_path", required=True, type=click.Path(dir_okay=False),
              help="Parameter file to write: use it with CRYPTOPLAN_PARAMS.")
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              help="Folder for report.txt and calibration.png.")
@click.option("--force", is_flag=True, help="Overwrite an existing --out file or report files.")
def calibrate(rmf_path, rmf_reports, cpu_path, smf_dir, platform, plan_path, qs_times, qs_family, key_type, key_size,
              out_path, report_dir, force):
    """Calibrate the models on your own RMF and SMF numbers.

    Refits only the parameters the site numbers identify (the rest keep the published
    values, which also act as a weak prior: a factor of two at one standard deviation),
    sets the ones the SMF task statistics measure directly, and writes a parameter file
    for CRYPTOPLAN_PARAMS.
    """
    if key_type is not None or key_size is not None:
        raise click.UsageError("--key-type/--key-size are gone: RMF's CCA coprocessor line is the card's mean over "
                               "every service the LPAR sent, not one key's sign; give --plan with the workloads "
                               "that send that work, and the coprocessors' speed is calibrated on their mix")
    if not (rmf_path or rmf_reports or cpu_path or smf_dir or qs_times):
        raise click.UsageError("give at least one of --rmf, --rmf-report, --cpu, --smf and --qs-time: the site "
                               "numbers to calibrate on")
    if plan_path and not (rmf_path or rmf_reports or smf70_of(smf_dir)):
        raise click.UsageError("--plan states the mix for RMF's coprocessor lines: give it with --rmf, --rmf-report "
                               "or --smf (SMF 70 records)")
    if qs_family and not plan_path:
        raise click.UsageError(f"--qs-rmf {qs_family} calibrates on RMF's coprocessor lines over the plan's mix: give "
                               "--plan, whose migrations state the share migrated when RMF measured")
    _refuse_outputs(out_path, report_dir, force)
    smf70_path = smf70_of(smf_dir)
    if smf70_path:
        smf_dir = None
    obs, rows, smf, measured = [], [], None, {}
    try:
        sources = []       # (name, rows) of each RMF source, typed or read from RMF's own output
        if rmf_path:
            if rmf_path.lower().endswith((".xlsx", ".xlsm")):
                sources.append((rmf_path, site_rmf.read_rmf_sheet(rmf_path)))
            else:
                sources.append((rmf_path, C.read_rmf_crypto(rmf_path)))
        read: list = []                   # every file's records: a card's line once per interval across them
        for path, is_smf in [(p, False) for p in rmf_reports] + ([(smf70_path, True)] if smf70_path else []):
            sources.append((path, _rmf_rows_read(path, is_smf, read)))
        try:
            rmf_records.check_records(read)
        except ValueError as exc:
            raise C.CalibrationError(str(exc)) from None
        mix = None
        for path, r in sources:
            obs += C.rmf_observations(r, path=path)
            rows += r
        if plan_path:
            mix = _plan_mix(plan_path)
        cop = card_speed.coprocessor_lines(rows)
        if cop and mix is None:
            click.echo(f"not calibrated: {len(cop)} CCA coprocessor line(s) ({cop[0].type} {cop[0].id}"
                       f"{', ...' if len(cop) > 1 else ''}): RMF's coprocessor line is the card's mean EXEC TIME over "
                       "every service the LPAR sent, not one operation's time; give --plan with the workloads that "
                       "send that work to calibrate the coprocessors' speed on their mix", err=True)
        if cpu_path:
            obs += C.cpu_observations(C.read_cpu_table(cpu_path), platform, path=cpu_path)
        if smf_dir:
            tasks, channels, _ = smf_reader.read_smf_folder(smf_dir)
            smf = C.smf_summary(tasks, channels, platform, path=smf_dir)
            obs += smf["observations"]
            measured = C.smf_measured(smf)
        if qs_times:
            try:
                measured = {**measured, **qs_site.qs_measured(qs_times)}
            except ValueError as exc:
                raise C.CalibrationError(f"--qs-time: {exc}") from None
        if not obs and not measured and mix is None:
            why = ("its coprocessor lines need --plan (above)" if cop else
                   "no line observes one card function (accelerator ME/CRT rows, or coprocessor lines with --plan)")
            raise C.CalibrationError(f"nothing to calibrate on: {why}")
        cal = C.calibrate(obs, rows, measured, mix, qs_family)
    except (C.CalibrationError, site_errors.SiteFileError, model.PlanError) as exc:   # the fit's, a file's, a plan's
        raise click.UsageError(str(exc)) from None
    text = _calibration_text(cal, smf)
    click.echo(text, nl=False)
    for c in cal.consistency:
        if c.get("disagrees"):
            click.echo(C.consistency_warning(c, sources[0][0] if len(sources) == 1 else ""), err=True)
    # the parameter file and the report are written as one set: both or neither (a full disk
    # while drawing the chart left the parameter file written and a new report folder behind)
    targets = [Path(out_path)]
    made = False
    if report_dir:
        made = not os.path.lexists(report_dir)
        folder = report_folder(report_dir)
        targets += [folder / "report.txt"] + ([folder / "calibration.png"] if cal.residuals else [])
    try:
        with atomic.atomic_files(targets, replace=force) as tmps:
            Path(tmps[0]).write_text(F.params_text(cal.document()), encoding="utf-8")
            if report_dir:
                Path(tmps[1]).write_text(text, encoding="utf-8")
                if cal.residuals:
                    charts.calibration_chart(cal.residuals, tmps[2])
    except atomic.OutputError as exc:
        raise click.ClickException(f"{exc}; nothing was written") from None
    finally:
        if made and not any(t.exists() for t in targets[1:]):
            try:
                folder.rmdir()              # the folder this run made, only if empty
            except OSError:
                pass
    click.echo(f"wrote {out_path}  (use it: CRYPTOPLAN_PARAMS={out_path})")
    if report_dir:
        if cal.residuals:
            click.echo(f"wrote {folder / 'report.txt'} and {folder / 'calibration.png'}")
        else:
            click.echo(f"wrote {folder / 'report.txt'} (no site number the model predicts: no chart)")


def _pinned(m: dict) -> str:
    """Whether the site's numbers pin a refitted parameter better than the published fit did: its
    relative standard error against the published one."""
    pub = m.get("published_stderr")
    if not isinstance(pub, (int, float)) or not pub > 0 or not m["calibrated"]:
        return ""
    site, before = m["stderr"] / abs(m["calibrated"]), pub / abs(m["published"])
    verdict = "pinned, narrower than published" if site < before else "less certain than the published fit"
    return f" ({site:.1%} vs {before:.1%} published: {verdict})"


def smf70_of(smf_dir):
    """The SMF 70-2 file ``--smf`` names (a file, not a folder), or None."""
    return smf_dir if smf_dir and not Path(smf_dir).is_dir() else None


def _plan_mix(path: str) -> tuple:
    """``(system, workloads)`` of the plan ``--plan`` names: a TOML file or a workbook's tables."""
    if path.lower().endswith((".xlsx", ".xlsm")):
        got = plan_sheet.read_plan_inputs(path)
        return got.system, got.workloads
    return tuple(model.read_plan(path))


def _grouped(notes) -> list:
    """Notes "where: why" with the same why once, with how many places."""
    by: dict[str, list[str]] = {}
    for n in notes:
        where, _, why = n.partition(": ")
        by.setdefault(why, []).append(where)
    return [f"{why} ({len(w)} x: {w[0]}{', ...' if len(w) > 1 else ''})" if len(w) > 1 else f"{w[0]}: {why}"
            for why, w in by.items()]


def _rmf_rows_read(path: str, is_smf: bool, read: list | None = None) -> list:
    """The calibration lines of RMF's printed crypto report (or SMF 70-2 records) at ``path``.

    Every interval and card the models price is a line (:func:`~cryptoplan.model.site.rmf_lines.report_lines`:
    this LPAR's numbers, or the CPC's where RMF prints no LPAR columns); what is left out
    (PKCS11 cards, CEX5, key-generation rows) and the reader's warnings go to standard error.
    """
    try:
        records, warnings = rmf_files.read_activity(path, smf=is_smf)
    except ValueError as exc:        # RmfReportError, Smf70Error: the file, the line or byte, what was expected
        raise C.CalibrationError(str(exc)) from None
    if read is not None:
        read += records
    lines, notes = rmf_lines.report_lines(records)
    for w in warnings + notes:
        click.echo(f"{path}: {w}", err=True)
    if not lines:
        raise C.CalibrationError(f"{path}: no card line the models price (CCA coprocessors and accelerators, "
                                 "CEX6 to CEX8): " + "; ".join(notes or ["the report holds no card"]))
    return C.rmf_rows(lines, path)


def _calibration_text(cal, smf=None) -> str:
    out = []
    if cal.speed is not None:
        sp = cal.speed
        out.append(f"coprocessor speed on the plan's mix: RMF's mean EXEC TIME {sp.measured_ms:.4g} ms over "
                   f"{sp.measured_rate:,.0f} requests/s ({len(sp.lines)} line(s): {sp.lines[0]}"
                   f"{', ...' if len(sp.lines) > 1 else ''}); the plan's mix {sp.model_ms:.4g} ms before: factor "
                   f"{sp.factor:.4g} +- {sp.factor * sp.sigma_rel:.2g} on every coprocessor time parameter")
        out.append(f"  the plan's workloads send {sp.plan_rate:,.0f} coprocessor requests/s, {sp.coverage:.0%} of the "
                   "measured rate: the factor takes the plan's mix as the LPAR's"
                   + ("" if 0.8 <= sp.coverage <= 1.25 else
                      f" (its uncertainty counts the mismatch: +- {sp.sigma_rel:.0%})")
                   + (f"; measured workloads left out of the mix: {', '.join(sp.left_out)}" if sp.left_out else ""))
    if cal.moved:
        out.append("parameters the site data identify (refitted):")
        for m in cal.moved:
            err = (f"at its {'lower' if m['calibrated'] <= m['bounds'][0] * (1 + 1e-6) else 'upper'} bound: the site "
                   "numbers want beyond it" if m.get("at_bound") else f"+- {m['stderr']:.2g}" + _pinned(m))
            change = "from the fit's bound 0" if math.isinf(m["ratio"]) else f"{m['ratio'] - 1:+.1%}"
            out.append(f"  {m['name']:18s} published {m['published']:10.4g}  calibrated {m['calibrated']:10.4g} "
                       f"{m['unit']:3s} {err} ({change})")
    elif cal.residuals:
        out.append("no parameter is identified by the site data: nothing refitted")
    if cal.measured:
        out.append("parameters the site data set directly (measured, or the coprocessor speed factor):")
        for m in cal.measured:
            unit = "" if m["unit"] == "1" else " " + m["unit"]
            change = f" ({m['calibrated'] / m['published'] - 1:+.1%})" if m["published"] else ""
            out.append(f"  {m['name']:18s} published {m['published']:10.4g}  site {m['calibrated']:10.4g}"
                       f"{unit}{change}: {m['note']}")
    if cal.unidentified:
        out.append("parameters the site data cannot identify (kept at the published values):")
        by: dict[str, list[str]] = {}
        for n, why in cal.unidentified.items():
            head, sep, rest = why.partition(" (1 sd): ")
            if sep:   # "uncertain to a factor F (1 sd): why": the factor goes with the name
                by.setdefault("uncertain (factor at 1 sd): " + rest, []).append(f"{n} x{head.rsplit(' ', 1)[-1]}")
            else:
                by.setdefault(why, []).append(n)
        for why, names in by.items():
            out.append(f"  {', '.join(names)}: {why}")
    if cal.residuals:
        out.append("site numbers, the model before and after:")
        for r in cal.residuals:
            out.append(f"  {r['label']} ({r['quantity']}): site {r['site']:.4g}  before {r['before']:.4g} "
                       f"({r['before'] / r['site'] - 1:+.1%})  after {r['after']:.4g} "
                       f"({r['after'] / r['site'] - 1:+.1%})")
    if cal.consistency:
        out.append("RMF's own identity UTIL% = RATE x EXEC TIME (card lines):")
        for c in cal.consistency:
            out.append(f"  line {c['line']} {c['card']}: UTIL% {c['util_pct']:.1f}, RATE x EXEC TIME "
                       f"{c['rate_x_exec_pct']:.1f}%" + ("  <- disagree: check this line" if c.get("disagrees") else ""))
    if smf is not None:
        out.append("channel-initiator task statistics (SMF 115), per queue manager and task type:")
        out.append(f"  {'QMGR':5s} {'TASK':10s} {'INTERVALS':>9s} {'TASKS':>5s} {'REQ/S':>8s} {'CPU US/REQ':>10s} "
                   f"{'BUSY MAX':>8s} {'ELAPSED/CPU':>11s} {'CHL/DISP':>8s}")
        for t in smf["tasks"]:
            cpu = "idle" if t["cpu_us_per_request"] is None else f"{t['cpu_us_per_request']:.1f}"
            rho = "idle" if t["elapsed_per_cpu"] is None else f"{t['elapsed_per_cpu']:.2f}"
            chl = "" if t["channels_per_dispatcher"] is None else f"{t['channels_per_dispatcher']:.1f}"
            out.append(f"  {t['qmgr']:5s} {t['task']:10s} {t['active']:>4d}/{t['intervals']:<4d} {t['tasks']:>5d} "
                       f"{t['requests_per_s']:8.3g} {cpu:>10s} {t['busy_max']:8.2%} {rho:>11s} {chl:>8s}")
        for c in smf["checks"]:
            out.append(f"  {c['where']}: dispatchers + adapters {c['site_us']:.1f} CPU us per message "
                       f"({c['messages']:.0f} messages, {c['kb']:.3g} KB); the model's unprotected channel "
                       f"initiator {c['model_us']:.1f} (an upper bound: SMF 115 leaves out its other TCBs)")
        for n in _grouped(smf["notes"]):
            out.append(f"  not used: {n}")
    out.append(f"published figures the calibrated parameters now contradict: {len(cal.contradicted)} "
               f"(of {cal.reproduced_before} the published fit reproduces)")
    for r in cal.contradicted:
        off = f"{r['off']:+.1%}" if r["published"] else f"{r['off']:+.4g}"
        out.append(f"  {r['id']}: published {r['published']:.4g}, model {r['model']:.4g} ({off})")
    return "\n".join(out) + "\n"


def _check_figure_table(path) -> None:
    """A --figures table is the published table with values changed: same ids, nothing added."""
    try:
        mine = figures.load_figures(path)
    except figures.FigureTableError as exc:
        raise click.UsageError(str(exc)) from None
    packaged = datafiles.data_path("figures.csv")
    published = figures.load_figures(packaged)
    new = [i for i in mine if i not in published]
    gone = [i for i in published if i not in mine]
    if new:
        raise click.UsageError(
            f"{path}: {len(new)} row(s) are not published figures ({', '.join(new[:5])}"
            f"{', ...' if len(new) > 5 else ''}): fit re-fits the published figures by id and would "
            "ignore them, so it refuses them; change values of published rows, or remove these "
            "(to calibrate on your RMF report: cryptoplan calibrate --rmf)")
    if gone:
        raise click.UsageError(
            f"{path}: lacks {len(gone)} published figure(s) the fit uses ({', '.join(gone[:5])}"
            f"{', ...' if len(gone) > 5 else ''}); start from a copy of {packaged}")


def _fit_report(folder, rows):
    """The fit report: ``figures.csv`` (published against model) and one chart per figure family."""
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "figures.csv", "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    charts.figure_family_charts(folder, rows)


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def crossval(as_json):
    """Leave-one-out: each figure predicted by a fit made without it."""
    total = len(F.targets()) + len(tls.roundtrip_figure_ids())
    with tqdm.tqdm(total=total, desc="leave-one-out refits", unit="fit", file=sys.stderr,
              disable=None, leave=False) as bar:
        rows = F.crossvalidate(progress=bar.update)
    if as_json:
        # JSON has no infinity: a prediction resting on a parameter nothing identifies has no
        # standard error (null), and "unidentified" names the parameter
        json.dump([{**r, "prediction_se": r["prediction_se"] if math.isfinite(r["prediction_se"]) else None}
                   for r in rows], sys.stdout, indent=2, allow_nan=False)
        click.echo()
        return
    errs = [abs(r["relative_error"]) for r in rows if r["relative_error"] is not None]
    held = sum(r["within_tolerance"] for r in rows)
    click.echo(f"leave-one-out over {len(rows)} figures: {held} of {len(rows)} predicted within their tolerance "
               f"when left out; median |error| {np.median(errs):.1%}, 90th percentile {np.percentile(errs, 90):.1%}")
    click.echo(_loo_split(rows))
    for r in rows:
        err = "" if r["relative_error"] is None else f"{r['relative_error']:+.1%}"
        notes = ([] if r["within_tolerance"] else ["outside tolerance"]) + \
            ([] if r["determined"] else [f"not determined by the others ({_loo_spread(r)})"])
        click.echo(f"{r['id']:44s} published {r['published']:>10.4g}  left-out prediction "
                   f"{r['loo_prediction']:>10.4g}  {err:>7s}  {'; '.join(notes)}".rstrip())


def _loo_spread(r) -> str:
    """How uncertain a left-out prediction is: its standard error, or the parameters nothing else identifies."""
    if r["unidentified"]:
        return f"{', '.join(r['unidentified'])} not identified without it"
    return f"+- {r['prediction_se']:.3g}"


def _loo_split(rows) -> str:
    """The leave-one-out count split by whether the figures left in determine the left-out one
    (:mod:`cryptoplan.model.calibration.crossval`): the line ``cryptoplan crossval`` prints."""
    det = [r for r in rows if r["determined"]]
    rest = [r for r in rows if not r["determined"]]
    return (f"  {len(det)} of the {len(rows)} are determined by the others (the left-out prediction's standard error "
            f"within the figure's tolerance): {sum(r['within_tolerance'] for r in det)} of those {len(det)} predicted "
            f"within tolerance; {len(rest)} are not (each the main measurement of something the others leave "
            f"to bounds and priors): {sum(r['within_tolerance'] for r in rest)} of those {len(rest)} within")
