"""``cryptoplan plan FILE``: every workload of a TOML plan on the shared cards and processors.

Only click and the standard library load with this module; the model and the report are bound
at the top with :func:`~cryptoplan.model.lazy.lazy_module` and load when the command runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import contextlib
import json

import click

from cryptoplan.model.lazy import lazy_module

from .errors import Finite

if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    from cryptoplan.model.zos import plan as plans
    from cryptoplan.model.calibration import draws as draws_module
    from cryptoplan.model import errors
    from cryptoplan.model import params as model_params
    from cryptoplan.workbook.report import plan as plan_report
    from cryptoplan.workbook import plan_sheet
    from cryptoplan.workbook.engine import atomic
else:
    plans = lazy_module("cryptoplan.model.zos.plan")
    draws_module = lazy_module("cryptoplan.model.calibration.draws")
    errors = lazy_module("cryptoplan.model.errors")
    model_params = lazy_module("cryptoplan.model.params")
    plan_report = lazy_module("cryptoplan.workbook.report.plan")
    plan_sheet = lazy_module("cryptoplan.workbook.plan_sheet")
    atomic = lazy_module("cryptoplan.workbook.engine.atomic")   # file writes: tempfile, uuid on first use

__all__ = ["plan_command"]


@click.command("plan")
@click.argument("plan_file", metavar="FILE", type=click.Path(dir_okay=False))  # .toml, or .xlsx/.xlsm
@click.option("--json", "as_json", is_flag=True,
              help='Print JSON: {"resources": {pool: {...}}, "workloads": {name: {...}}, ...}.')
@click.option("--report", "report_dir", type=click.Path(file_okay=False), default=None,
              help="Write plan.html, utilization.png and growth.png into this folder.")
@click.option("--force", is_flag=True, help="Replace the report's files if they exist.")
@click.option("--growth", default=1.0, show_default=True, type=Finite(0, 1e6),
              help="A factor on every workload's rate (what-if).")
@click.option("--months", default=0.0, show_default=True, type=Finite(0, 1200),
              help="Evaluate this many months ahead, each workload at its growth_per_year.")
@click.option("--bands", is_flag=True,
              help="Give each answer with its band over draws of the model's parameters, and each pool's "
                   "chance of being overloaded.")
@click.option("--level", default=0.9, show_default=True, type=Finite(0, 1, min_open=True, max_open=True),
              help="With --bands: the central interval's probability (0.9: the 5% to 95% quantiles).")
@click.option("--draws", "n_draws", default=1000, show_default=True, type=click.IntRange(1, 1_000_000),
              help="With --bands: how many parameter sets to draw from the parameter file's covariance.")
@click.option("--seed", default=0, show_default=True, type=click.IntRange(0, 2**63 - 1),
              help="With --bands: the random seed of the draws (the same seed gives the same bands).")
def plan_command(plan_file, as_json, report_dir, force, growth, months, bands, level, n_draws, seed):
    """Plan every crypto workload in FILE on the shared cards and processors.

    FILE is a TOML plan, or a workbook made from the template (its Workloads sheet: the
    PlanSystem block and the PlanWorkloads table, evaluated as the Plan sheet evaluates them).

    Prints, per resource (general processors, coprocessors, accelerators): RMF utilization with
    each workload's share, the wait per request, the count required at the target, the headroom,
    the months until the workloads' growth reaches the target and the count required at the
    horizon; per workload: CPU per unit of its rate and its queueing delay.  The plan file's
    format: the README's section on ``cryptoplan plan``.

    With --bands, each answer also comes with its band: the plan evaluated under --draws sets of
    the model's parameters drawn from the parameter file's covariance (the published fit's, or a
    site calibration's where its file is in force), the median and central --level interval of
    each answer, and the share of draws that overload each pool now and at the horizon.
    """
    ctx = click.get_current_context()
    given = [f"--{n}" for n in ("level", "draws", "seed")
             if ctx.get_parameter_source("n_draws" if n == "draws" else n) == click.core.ParameterSource.COMMANDLINE]
    if given and not bands:
        raise click.UsageError(f"{', '.join(given)} {'is' if len(given) == 1 else 'are'} for --bands: "
                               "add --bands, or leave it out")
    read = None
    params = None
    try:
        if plan_file.lower().endswith((".xlsx", ".xlsm")):
            # the workbook's ParamsFile input: the parameters the Plan sheet itself plans with
            system, workloads, params, _ = plan_sheet.read_plan_inputs(plan_file)
        else:
            # the one reader of a plan (a submodule of plans: its package is loaded by plans' first use)
            read = plans.read.read_plan(plan_file)        # [system] rmf = "FILE": the cards from RMF's report
            system, workloads = read.system, read.workloads
    except (plans.PlanError, errors.InputError) as exc:
        raise click.UsageError(str(exc)) from None
    with model_params.using_parameters(params) if params is not None else contextlib.nullcontext():
        text, written, notes = _plan_and_report(system, workloads, read, plan_file, as_json, report_dir, force,
                                                growth, months, bands, level, n_draws, seed)
    click.echo(text, nl=False)
    for note in notes:
        click.echo(f"note: {note}", err=True)
    if written:
        click.echo(f"wrote {', '.join(written)}", err=as_json)


def _plan_and_report(system, workloads, read, plan_file, as_json, report_dir, force, growth, months, bands,
                     level, n_draws, seed) -> tuple:
    """``(text, files written, notes)``: the plan (and its bands), as text or JSON, and its report
    written if asked, all under the parameters in force."""
    try:
        result = plans.plan(system, workloads, growth=growth, months=months)
        banded = drawn = None
        if bands:
            drawn = draws_module.parameter_draws(n_draws, seed=seed)
            banded = plans.plan_bands(system, workloads, drawn, level=level, growth=growth, months=months)
    except (plans.PlanError, errors.InputError) as exc:
        raise click.UsageError(str(exc)) from None
    rmf_notes = read.notes if read is not None else ()
    text = (json.dumps(plan_report.plan_json(result, read, banded), indent=2, allow_nan=False) + "\n" if as_json
            else plan_report.plan_text(result, plan_file, rmf_notes, banded))
    written = None
    notes: list[str] = []
    if report_dir is not None:          # written first: a failing standard output does not lose it
        try:
            written = plan_report.write_plan_report(result, workloads, report_dir, plan_file, force=force,
                                                    notes=notes, rmf_notes=rmf_notes, bands=banded, draws=drawn)
        except atomic.OutputError as exc:
            raise click.UsageError(str(exc)) from None
    return text, written, notes
