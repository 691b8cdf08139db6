"""The workbook's commands: ``template``, ``recalc``, ``sweep``, ``functions``, ``calc-addin``, ``retarget``.

Only click, the standard library and the engine's constants load with this module; the
formula engine, openpyxl and the model are bound at the top with :func:`~cryptoplan.model.lazy.lazy_module` and
load when a command first uses them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from cryptoplan.model.errors import OutputExists

import json
import os
import sys
from pathlib import Path

import click

from cryptoplan.model.lazy import lazy_module
from cryptoplan.workbook.engine import DEFAULT_CHUNK, MAX_CELLS
from . import collector
from .errors import Finished, Finite, UnusableInput

if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    from cryptoplan.workbook.engine import atomic
    from cryptoplan.addin import calc
    from cryptoplan.addin import catalog
    from cryptoplan.workbook import recalculation
    from cryptoplan.workbook import retarget as retargeting
    from cryptoplan.workbook import site_rmf
    from cryptoplan.workbook import sweeps
    from cryptoplan.workbook import template
    import tempfile
else:
    atomic = lazy_module("cryptoplan.workbook.engine.atomic")   # file writes: tempfile, uuid on first use
    calc = lazy_module("cryptoplan.addin.calc")
    catalog = lazy_module("cryptoplan.addin.catalog")
    recalculation = lazy_module("cryptoplan.workbook.recalculation")
    retargeting = lazy_module("cryptoplan.workbook.retarget")
    site_rmf = lazy_module("cryptoplan.workbook.site_rmf")
    sweeps = lazy_module("cryptoplan.workbook.sweeps")
    template = lazy_module("cryptoplan.workbook.template")
    tempfile = lazy_module("tempfile")

__all__ = ["template_command", "recalc_command", "sweep_command", "functions_command",
           "calc_addin_command", "retarget_command"]


def _rmf_options(command):
    """``--rmf REPORT``, ``--smf70``, ``--rmf-system``, ``--rmf-interval``: the Site RMF sheet filled from RMF."""
    for option in reversed((
            click.option("--rmf", "rmf_report", type=click.Path(dir_okay=False), default=None,
                         help="Fill the Site RMF sheet with the lines of RMF's CRYPTO HARDWARE ACTIVITY report "
                              "(ERBRMFPP REPORTS(CRYPTO) output, as text): one system's peak interval, "
                              "replacing the lines typed there."),
            click.option("--smf70", is_flag=True,
                         help="The --rmf file holds SMF type 70 subtype 2 records (binary, with record "
                              "descriptor words), not report text."),
            click.option("--rmf-system", metavar="SYSID", default=None,
                         help="The system whose lines to take, when the --rmf file holds several."),
            click.option("--rmf-interval", metavar="'YYYY-MM-DD HH:MM:SS'", default=None,
                         help="Take this interval of --rmf (its start) instead of the peak one."))):
        command = option(command)
    return command


def _rmf_fill(rmf_report, smf70, rmf_system, rmf_interval):
    """The Site RMF lines of the --rmf file (None without --rmf); a file that cannot be used is a
    usage error naming it (exit 2), before anything is written."""
    if rmf_report is None:
        given = [n for n, v in (("--smf70", smf70), ("--rmf-system", rmf_system), ("--rmf-interval", rmf_interval))
                 if v]
        if given:
            raise click.UsageError(f"{', '.join(given)} describe{'s' if len(given) == 1 else ''} the --rmf file: "
                                   "give --rmf REPORT too")
        return None
    try:
        return site_rmf.report_fill(rmf_report, smf70=smf70, system=rmf_system, interval=rmf_interval)
    except ValueError as exc:        # CalibrationError: the file, the line or byte, what was expected
        raise click.UsageError(str(exc)) from None


def _echo_fill(fill) -> None:
    """Which lines filled the Site RMF sheet, and what the report had that the sheet has not."""
    click.echo(f"Site RMF filled from {fill.summary()}", err=True)
    for w in fill.warnings + fill.notes:
        click.echo(f"  {fill.source}: {w}", err=True)


@click.command("template")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Workbook to write (.xlsx).")
@click.option("--force", is_flag=True, help="Overwrite an existing file.")
@click.option("--png", "png_dir", type=click.Path(file_okay=False), default=None,
              help="Also render each chart sheet's pages with charts to DIR/<sheet>.png (and the Plan "
                   "sheet's second page to DIR/plan-2.png; needs LibreOffice and pdftoppm; default inputs).")
@_rmf_options
def template_command(output, force, png_dir, rmf_report, smf70, rmf_system, rmf_interval):
    """Write the template planning workbook (Excel functions over named inputs).

    With --rmf REPORT its Site RMF sheet holds the report's lines (one system's peak
    interval), ready for cryptoplan calibrate --rmf OUTPUT.  Missing folders in OUTPUT's
    path are created.  Exit codes: 1 it cannot be written; 2 bad usage or an --rmf file
    that cannot be used (nothing written).
    """
    fill = _rmf_fill(rmf_report, smf70, rmf_system, rmf_interval)
    try:
        if fill is None:
            dest = template.write_template(output, force=force)
        else:
            dest = _template_with_rmf(output, force, fill)
    except (FileExistsError, atomic.OutputError) as exc:
        raise click.ClickException(str(exc)) from None
    except ValueError as exc:        # the filled sheet (CalibrationError): the template's own, not expected
        raise click.ClickException(str(exc)) from None
    if fill is not None:
        _echo_fill(fill)
    click.echo(f"wrote {dest}")
    if png_dir:
        click.echo(f"rendering {', '.join(template.CHART_SHEETS)} with headless LibreOffice "
                   "(about 10-20 s: it starts, lays out the sheet, prints it)...", err=True)
        try:
            for png in template.render_pngs(png_dir):
                click.echo(f"wrote {png}")
        except RuntimeError as exc:
            raise click.ClickException(str(exc)) from None


def _template_with_rmf(output, force, fill):
    """The template written to a scratch folder, then copied to OUTPUT with its Site RMF sheet
    filled (atomically: OUTPUT is the whole filled workbook or is as it was)."""
    dest = Path(output)
    atomic.check_destination(dest)
    if dest.exists() and not force:
        raise OutputExists(f"{dest} exists; use --force to overwrite it")
    try:
        dest.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise atomic.OutputError(f"cannot write {dest}: cannot create the folder {dest.parent} "
                                 f"({exc.strerror or exc})") from None
    with tempfile.TemporaryDirectory(prefix="cryptoplan-") as folder:
        blank = template.write_template(Path(folder) / "template.xlsx")
        site_rmf.fill_rmf_sheet(blank, dest, fill.lines)
    return dest


def _print_table(rec) -> None:
    if not rec.outputs:
        click.echo("(no formula cells to show)")
        return
    sheet = rec.outputs[0].sheet
    click.echo(f"{sheet} of {os.path.basename(rec.path)}")
    w = min(max(len(o.key) for o in rec.outputs), 60)
    for o in rec.outputs:
        text = o.text()
        if len(text) > 100:
            text = text[:97] + "..."
        click.echo(f"  {o.key[:w]:<{w}}  {text:<20}  {o.address}")


@click.command("recalc")
@click.argument("workbook", type=click.Path(dir_okay=False))
@click.option("-o", "--output", type=click.Path(dir_okay=False),
              help="Write the recalculated workbook (formulas and their values) here.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="Change a named input (or Sheet!A1) first; numeric values become numbers, "
                   "others text. Repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Print the outputs and problems as JSON.")
@click.option("--in-place", is_flag=True, help="Overwrite WORKBOOK itself (atomic rename).")
@click.option("--force", is_flag=True, help="Overwrite an existing -o/--output file.")
@click.option("--max-cells", type=click.IntRange(1), default=MAX_CELLS, show_default=True,
              help="Refuse workbooks with more cells than this.")
@_rmf_options
def recalc_command(workbook, output, sets, as_json, in_place, max_cells, force, rmf_report, smf70, rmf_system,
                   rmf_interval):
    """Evaluate every formula of WORKBOOK without Excel, print the Results sheet, save the values.

    The output file keeps every formula and gets each formula's computed value
    as its cached value, so Excel, LibreOffice and viewers show numbers.
    WORKBOOK is never modified unless --in-place.  With --rmf REPORT the Site RMF
    sheet of the workbook written (-o or --in-place) gets the report's lines
    first (one system's peak interval), replacing those typed there.  Exit codes:
    0 all outputs computed; 1 some output is an Excel error or the add-in's error
    text; 2 bad usage, or an --rmf file that cannot be used; 3 some output could
    not be computed (unsupported function, circular reference); 4 unusable file
    or input name (nothing written).
    """
    collector.no_passes()
    if in_place and output:
        raise click.UsageError("give either -o/--output or --in-place, not both")
    if output and os.path.exists(output) and not force and not (
            os.path.exists(workbook) and os.path.samefile(output, workbook)):
        raise click.UsageError(f"{output} exists; use --force to overwrite it")
    if rmf_report is not None and not (output or in_place):
        raise click.UsageError("--rmf fills the Site RMF sheet of the workbook written: give -o/--output FILE "
                               "or --in-place")
    try:
        inputs = dict(recalculation.parse_assignment(s) for s in sets)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    fill = _rmf_fill(rmf_report, smf70, rmf_system, rmf_interval)
    try:
        engine = None
        if fill is not None:
            engine = recalculation.load_engine(workbook, max_cells=max_cells)
            inputs.update(_rmf_inputs(engine, workbook, fill))
        rec = recalculation.recalc_report(workbook, inputs, output=output, in_place=in_place, max_cells=max_cells,
                                          engine=engine)
    except recalculation.RecalcError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(recalculation.EXIT_BAD_FILE)
    if fill is not None:
        _echo_fill(fill)
    if as_json:
        click.echo(json.dumps(rec.to_json(), indent=2))
    else:
        _print_table(rec)
        for p in rec.problems:
            mark = "!" if p.affects_output else "-"
            click.echo(f"{mark} {p.text()}", err=True)
        if rec.written:
            click.echo(f"wrote {rec.written}", err=True)
    raise Finished(rec.exit_code)       # the file is written and closed, the answers printed


def _rmf_inputs(engine, workbook, fill) -> dict:
    """The Site RMF cells the --rmf lines set, as recalc's inputs ``{(sheet, row, col): value}``
    (written as constants with the other --set cells, after them).

    Raises
    ------
    RecalcError
        The workbook has no Site RMF sheet or no header row in it, or a cell to write holds a
        formula (exit 4, as a --set on a formula cell).
    """
    sheet = next((sh for sh in engine.sheets if sh.name == site_rmf.RMF_SHEET and sh.kind == "worksheet"), None)
    if sheet is None:
        raise recalculation.RecalcError(
            f"{workbook}: no sheet {site_rmf.RMF_SHEET!r} to fill with --rmf (it has "
            f"{', '.join(sh.name for sh in engine.sheets)}); write a workbook that has it with "
            f"`cryptoplan template -o FILE --rmf REPORT`")
    try:
        writes = site_rmf.rmf_sheet_writes(sheet, fill.lines, workbook)
    except ValueError as exc:        # CalibrationError: no header row
        raise recalculation.RecalcError(str(exc)) from None
    si = next(i for i, sh in enumerate(engine.sheets) if sh is sheet)
    cells = {(si, r, c): v for (r, c), v in sorted(writes.items())}
    for key in cells:
        if key in engine.formulas or key in engine.spill_owner:
            raise recalculation.RecalcError(
                f"{workbook}: {engine.where(key)} holds a formula; --rmf writes the report's lines over the "
                f"table of sheet {site_rmf.RMF_SHEET} as constants: clear the formula first")
    return cells


@click.command("sweep")
@click.argument("workbook", type=click.Path(dir_okay=False))
@click.option("--vary", "varies", multiple=True, required=True, metavar="NAME=VALUES",
              help="Input to vary: NAME=v1,v2,... or NAME=start:stop:step (stop included when "
                   "on the grid). Repeatable; scenarios are the Cartesian product.")
@click.option("--set", "sets", multiple=True, metavar="NAME=VALUE",
              help="Input set to VALUE in every scenario (as recalc --set; repeatable). "
                   "Written as a column of the results.")
@click.option("--zip", "zip_inputs", is_flag=True,
              help="Pair the --vary lists element by element instead of the product.")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False),
              help="Results file: .csv or .xlsx (one row per scenario).")
@click.option("--plot", type=click.Path(dir_okay=False), help="Also draw a PNG line plot.")
@click.option("--y", "ys", multiple=True, metavar="OUTPUT",
              help="Output(s) to plot against the first varied input (label, name or cell).")
@click.option("--max-cells", type=click.IntRange(1), default=MAX_CELLS, show_default=True,
              help="Refuse workbooks with more cells than this.")
@click.option("--progress/--no-progress", default=None,
              help="Progress bar counting scenarios (default: on for 100,000+ scenarios on a terminal).")
@click.option("--chunk-size", type=click.IntRange(1), default=DEFAULT_CHUNK, show_default=True,
              help="Scenarios evaluated together: memory grows with it, not with the sweep.")
@click.option("--force", is_flag=True, help="Overwrite existing -o/--plot files.")
@click.option("--draws", type=click.IntRange(1, 1_000_000), default=None,
              help="Also evaluate each scenario under N draws of the model's parameters: each numeric output "
                   "gets its [p05], [median], [p95] and [P(error)] columns.  The parameters only: a Workloads "
                   "row's rate or growth range stays at its median here (PLAN_BAND draws it).")
@click.option("--level", type=Finite(0, 1, min_open=True, max_open=True), default=0.9, show_default=True,
              help="With --draws: the central interval's probability.")
@click.option("--seed", type=click.IntRange(0, 2**63 - 1), default=0, show_default=True,
              help="With --draws: the draws' random seed.")
@click.option("--workers", type=click.IntRange(1, 1024), default=1, show_default=True,
              help="Evaluate the chunks in this many processes of this machine.")
@click.option("--scheduler", metavar="tcp://HOST:PORT", default=None,
              help="Evaluate the chunks on a dask.distributed cluster (pip install 'cryptoplan[cluster]').")
def sweep_command(workbook, varies, sets, zip_inputs, output, plot, ys, max_cells, progress, chunk_size, force,
                  draws, level, seed, workers, scheduler):
    """Evaluate every Results output of WORKBOOK for each scenario of the --vary inputs.

    The workbook is read once; scenarios are computed in vectorized chunks of
    --chunk-size and written to -o as they are done (a --plot keeps them).  With
    --draws N each scenario is also evaluated under N draws of the model's
    parameters (from each cell's parameter file), and each numeric output gets
    its median, central --level interval and the share of draws in which it is
    an error.  --workers or --scheduler spread the chunks over processes or a
    dask cluster; the numbers are the same.  Exit codes as cryptoplan recalc: 0
    all computed, 1 some values are errors, 2 usage, 3 some output could not be
    computed, 4 unusable file/name.
    """
    ctx = click.get_current_context()
    loose = [f"--{n}" for n in ("level", "seed")
             if ctx.get_parameter_source(n) == click.core.ParameterSource.COMMANDLINE]
    if loose and draws is None:
        raise click.UsageError(f"{' and '.join(loose)} {'is' if len(loose) == 1 else 'are'} for --draws: "
                               "add --draws N, or leave it out")
    if scheduler is not None and not scheduler.strip():
        raise click.UsageError("--scheduler is empty: give the dask scheduler's address, tcp://HOST:PORT, or leave "
                               "it out to run here")
    if workers > 1 and scheduler:
        raise click.UsageError("--workers and --scheduler both say where the chunks run: give one")
    if plot and not ys:
        raise click.UsageError("--plot needs at least one --y OUTPUT")
    if not output.lower().endswith((".csv", ".xlsx")):
        raise click.UsageError("-o must end in .csv or .xlsx")
    for target in filter(None, (output, plot)):
        if os.path.exists(target) and os.path.exists(workbook) and os.path.samefile(target, workbook):
            raise click.UsageError(f"{target} is the input workbook; choose another file")
        if os.path.exists(target) and not force:
            raise click.UsageError(f"{target} exists; use --force to overwrite it")
    try:
        pairs = [sweeps.parse_vary(v) for v in varies]
        fixed = dict(recalculation.parse_assignment(a) for a in sets)
        if plot:
            sweeps.plot_format(plot)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    if len(fixed) != len(sets):
        raise click.UsageError("--set gives the same input twice")
    seen: dict[str, str] = {}
    for name, _ in pairs:
        if name.lower() in seen:
            raise click.UsageError(f"--vary {name} is given twice ({seen[name.lower()]} and {name}): "
                                   "give all its values in one --vary")
        seen[name.lower()] = name
    vary = dict(pairs)
    for target in filter(None, (output, plot)):   # before minutes of computing, not after
        folder = os.path.dirname(os.path.abspath(target))
        if not os.path.isdir(folder):
            raise click.UsageError(f"cannot write {target}: the folder {folder} does not exist")
        try:
            atomic.check_destination(target)
        except atomic.OutputError as exc:
            raise click.UsageError(str(exc)) from None
    total = sweeps.count_scenarios(vary, zip_inputs)
    if progress is None:
        progress = total >= 100_000 and sys.stderr.isatty()

    def checked(chunks):
        """The chunks, with the --y outputs checked against the first (before any row is kept)."""
        for i, part in enumerate(chunks):
            if i == 0 and plot:
                for y in ys:
                    part.resolve(y)
            yield part
    try:
        with _executor(workers, scheduler) as executor:
            chunks = checked(sweeps.iter_sweep(workbook, vary, zip_inputs=zip_inputs, max_cells=max_cells, fixed=fixed,
                                               chunk_size=chunk_size, draws=draws, seed=seed, level=level,
                                               executor=executor))
            if progress:
                chunks = sweeps.with_progress(chunks, total)
            written = sweeps.write_sweep(chunks, output, keep=bool(plot))
        if plot:
            written.result.plot(plot, list(ys))
    except recalculation.RecalcError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(recalculation.EXIT_BAD_FILE)
    except KeyError as exc:
        raise click.UsageError(str(exc.args[0])) from None
    except atomic.OutputError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(recalculation.EXIT_BAD_FILE)
    click.echo(f"{written.scenarios:,} scenarios x {written.outputs} outputs -> {output}", err=True)
    if plot:
        click.echo(f"plot -> {plot}", err=True)
    code = written.exit_code
    if written.errors:
        click.echo(sweeps.error_summary(written.errors, written.scenarios) + f" (their text is in {output})", err=True)
    if code == recalculation.EXIT_NOT_COMPUTED:
        click.echo("some outputs could not be computed (see cryptoplan recalc on one scenario)",
                   err=True)
    sys.exit(code)


#: Seconds to wait for a scheduler to open the conversation (dask's answers at once).
SCHEDULER_PROBE_S = 5.0
#: The most a dask handshake's first frame holds, bytes (a few hundred in practice).
_HANDSHAKE_MAX = 1 << 20


def _probe_scheduler(address: str, timeout: float = SCHEDULER_PROBE_S) -> None:
    """Refuse, with a usage error naming it, an address that is no dask scheduler, before dask's
    client is given it: a listener that never answers made the client wait for ever, an HTTP
    server's reply was read as a frame length (3 EiB), a refused port waited 30 s.

    A dask scheduler speaks first: on a new TCP connection it sends its handshake, one message
    whose 8-byte little-endian length comes first (``distributed.comm.tcp``).  So a ``tcp://``
    address must accept the connection and send, within ``timeout``, a length that is a small
    message.  Other schemes (``tls://``...) are left to dask, its own 30-s timeout."""
    import socket
    import struct
    scheme, sep, rest = address.strip().rpartition("://")
    if sep and scheme != "tcp":
        return
    host, _, port = rest.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise click.UsageError(f"--scheduler {address!r}: give the address as tcp://HOST:PORT")
    what = f"--scheduler {address if address.isprintable() else repr(address)}"
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as sock:
            sock.settimeout(timeout)
            head = b""
            while len(head) < 8:
                chunk = sock.recv(8 - len(head))
                if not chunk:
                    raise click.UsageError(f"{what}: the connection was closed without a word: not a dask scheduler")
                head += chunk
    except TimeoutError:
        raise click.UsageError(f"{what}: nothing answered within {timeout:g} s (a dask scheduler greets at once): "
                               "not a dask scheduler, or not reachable") from None
    except OSError as exc:
        raise click.UsageError(f"{what}: cannot connect ({exc.strerror or exc})") from None
    (n,) = struct.unpack("=Q", head)        # as dask packs it: native byte order ("Q")
    if not 0 < n <= _HANDSHAKE_MAX:
        raise click.UsageError(f"{what}: what answered is not a dask scheduler (its first bytes {head!r} are no "
                               "dask message)")


class _executor:
    """The executor of ``--workers``/``--scheduler`` (None: this process), shut down on exit."""

    def __init__(self, workers: int, scheduler: str | None):
        self.workers, self.scheduler = workers, scheduler
        self.close: Callable[..., object] | None = None

    def __enter__(self):
        if self.scheduler:
            try:
                import distributed
            except ImportError:
                raise click.UsageError("--scheduler needs dask.distributed: pip install 'cryptoplan[cluster]'") from None
            _probe_scheduler(self.scheduler)
            try:
                client = distributed.Client(self.scheduler, timeout="30s")
            except (OSError, ValueError, TimeoutError) as exc:
                raise click.UsageError(f"--scheduler {self.scheduler}: cannot connect ({exc})") from None
            self.close = client.close
            return client.get_executor()
        if self.workers > 1:
            import concurrent.futures
            pool = concurrent.futures.ProcessPoolExecutor(self.workers)
            self.close = pool.shutdown
            return pool
        return None

    def __exit__(self, *exc):
        if self.close is not None:
            self.close()
        return False


@click.command("functions")
@click.option("--json", "as_json", is_flag=True, help="Print the catalog as JSON.")
@click.option("--markdown", is_flag=True, help="Print the README's function table.")
def functions_command(as_json: bool, markdown: bool) -> None:
    """List the Excel functions: arguments with help and defaults, unit of the result."""

    if as_json:
        json.dump(catalog.as_dicts(), sys.stdout, indent=2)
        click.echo()
    elif markdown:
        click.echo(catalog.markdown_table())
    else:
        click.echo(catalog.text_listing())


@click.command("calc-addin")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Also write the extension package to FILE (.oxt).")
@click.option("--install/--no-install", default=True, show_default=True,
              help="Install the package into LibreOffice with unopkg.")
@click.option("--shared", is_flag=True,
              help="Install for every user of this LibreOffice (unopkg --shared; needed as root).")
@click.option("--force", is_flag=True, help="Overwrite an existing -o/--output file.")
def calc_addin_command(output, install, shared, force):
    """Build cryptoplan's LibreOffice Calc add-in from the function catalog and install it.

    The same functions as in Excel, with real Calc errors (#VALUE!, #NUM!) whose
    messages =EXPLAIN("FUNCTION"; arguments...) shows.  Needs unoidl-write
    (Debian: libreoffice-dev), and LibreOffice's Python (Debian: python3-uno,
    libreoffice-script-provider-python) of this Python's version.  Restart
    LibreOffice after installing.
    """


    if not install and not output:
        raise click.UsageError("nothing to do: give -o/--output FILE, or leave --install on")
    if output and not output.lower().endswith(".oxt"):
        raise click.UsageError(f"-o/--output must be an .oxt file (got {output!r})")
    if output and os.path.exists(output) and not force:
        raise click.UsageError(f"{output} exists; use --force to overwrite it")
    if install and not shared and hasattr(os, "geteuid") and os.geteuid() == 0:
        raise click.UsageError("as root, unopkg installs only for every user: add --shared "
                               "(or run as the user who runs LibreOffice)")
    try:
        data = calc.package()
    except (FileNotFoundError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from None
    try:
        if output:
            with atomic.atomic_target(output) as tmp:
                with open(tmp, "wb") as fh:
                    fh.write(data)
            click.echo(f"wrote {output}")
        if install:
            with tempfile.TemporaryDirectory(prefix="cryptoplan-") as folder:
                oxt = os.path.join(folder, "cryptoplan.oxt")
                with open(oxt, "wb") as fh:
                    fh.write(data)
                calc.install(oxt, shared=shared)
            click.echo("installed the cryptoplan add-in " + ("for every user" if shared else "for you")
                       + "; restart LibreOffice, then try =ERLANGC(9;10) in Calc (0.6687...)")
    except (atomic.OutputError, FileNotFoundError, RuntimeError) as exc:
        raise click.ClickException(str(exc)) from None


@click.command("retarget")
@click.argument("workbook", type=click.Path(exists=True, dir_okay=False))
@click.option("--to", "to", required=True, type=click.Choice(["calc", "excel"]),
              help="The application the copy is for.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Workbook to write (.xlsx).")
@click.option("--in-place", is_flag=True, help="Rewrite WORKBOOK itself (atomic rename).")
@click.option("--force", is_flag=True, help="Overwrite an existing -o/--output file.")
def retarget_command(workbook, to, output, in_place, force):
    """Spell WORKBOOK's cryptoplan calls for Excel or for LibreOffice Calc.

    Calc saves ORG.CRYPTOPLAN.FUNCTIONS.ERLANGC( where Excel has ERLANGC(, and
    LibreOffice 7.4 reads only its own spelling from .xlsx files.  Every formula
    is rewritten, everything else copied unchanged.  cryptoplan recalc reads both.
    """
    if bool(output) == bool(in_place):
        raise click.UsageError("give exactly one of -o/--output FILE and --in-place")
    dest = workbook if in_place else output
    try:
        n = retargeting.retarget(workbook, dest, to, force=force or in_place)
    except FileExistsError as exc:
        raise click.UsageError(str(exc)) from None
    except atomic.OutputError as exc:
        raise click.ClickException(str(exc)) from None
    except ValueError as exc:        # the workbook itself: unusable input, as recalc's exit code 4
        raise UnusableInput(str(exc)) from None
    click.echo(f"wrote {dest}: {n} formula{'s' if n != 1 else ''} spelt for "
               f"{'LibreOffice Calc' if to == 'calc' else 'Excel'}")
