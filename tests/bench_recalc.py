"""Benchmark: ``cryptoplan recalc`` / ``sweep`` vs LibreOffice and the ``formulas`` package.

Run as a script (not collected by pytest)::

    python tests/bench_recalc.py [--runs 5] [--scenarios 10000] [--sample 20]

All timings are medians of ``--runs`` runs, side by side in one process on
the same machine, on the template workbook (``cryptoplan template``):

1. *recalc*: load + evaluate every formula + write the xlsx with cached
   values (in-process API, and the CLI in a fresh process), vs LibreOffice
   headless opening the same file with "recalculate on load: always" and
   saving it (``soffice --convert-to xlsx``; one process start per run).
2. *sweep* of N scenarios (TxRate x MessageKB grid, all Results outputs), vs
   - the ``formulas`` package's compiled model
     (``formulas.ExcelModel().loads(path).finish()``; ``.calculate(inputs=...,
     outputs=<the Results cells>)`` per scenario), with the cryptoplan UDFs
     registered through its custom-function API (``formulas.get_functions()``)
     as thin wrappers over :func:`addin.convert.call` (the add-in itself);
     timed on ``--sample`` scenarios and scaled to N;
   - LibreOffice per scenario: ``--sample`` files with the inputs set,
     converted with recalculation in *one* LibreOffice start, scaled to N.
     LibreOffice cannot run the Python UDFs (those cells become ``#NAME?``),
     so its figure is a lower bound of what a LibreOffice sweep would cost.

Targets: the template's recalculation by the CLI <= 0.35 s and >= 4x LibreOffice
without the add-in (issue 47); N = 10,000 scenarios in <= 5 s, and >= 100x faster than
the faster peer.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent


def _median(fn, runs, succeeded=lambda out: True):
    """Median wall time of ``runs`` calls of ``fn``, and the last result.

    ``succeeded(result)`` is checked after every run (untimed): a benchmark that times
    a failed run times nothing worth comparing, so it stops with the reason instead.
    """
    ts = []
    out = None
    for k in range(runs):
        t = time.perf_counter()
        out = fn()
        ts.append(time.perf_counter() - t)
        if not succeeded(out):
            raise SystemExit(f"bench_recalc: run {k + 1} of {getattr(fn, '__name__', fn)} failed: {out!r}"[:2000])
    return statistics.median(ts), out


def _cli_ok(proc, path):
    """``cryptoplan recalc`` succeeded: exit 0 (every output computed, none an error) and a file."""
    return proc.returncode == 0 and Path(path).is_file()


def _grid(n, top_rate):
    """A TxRate x MessageKB grid of about n scenarios, TxRate up to ``top_rate``."""
    from cryptoplan.workbook.sweeps import grid_values
    side = int(round(n ** 0.5))
    step = top_rate / side
    return {"TxRate": grid_values(step, step * side, step),
            "MessageKB": grid_values(1.0, float(side), 1.0)}


#: The two sweeps: within the cards' capacity at the template's defaults (two
#: coprocessors saturate near 2,200 txn/s), and up to twice that, where about
#: half the scenarios are saturated: each such element is an error that the
#: model's all-or-nothing validation makes the engine isolate and evaluate
#: alone (through the model's scalar path).
GRIDS = (("within capacity", 2000.0), ("half saturated", 4000.0))


def _formulas_setup(path):
    import formulas
    import schedula as sh
    from formulas.functions import XlError

    from cryptoplan.addin import convert
    from cryptoplan.addin.catalog import CATALOG

    def cell(x):
        if x is sh.EMPTY or (isinstance(x, str) and x == ""):
            return None
        if isinstance(x, XlError):
            return str(x)
        return x.item() if isinstance(x, np.generic) else x

    def unwrap(a):
        if type(a).__name__ == "Ranges":
            # formulas passes references unresolved; reading .value raises RangeValueError,
            # on which formulas resolves the references and calls again
            a = a.value
        if isinstance(a, np.ndarray):
            return [[cell(x) for x in row] for row in np.atleast_2d(a).tolist()]
        return cell(a)

    def make(spec):
        def udf(*args):
            return convert.call(spec, tuple(unwrap(a) for a in args))
        return udf

    funcs = formulas.get_functions()
    for spec in CATALOG:
        funcs[spec.name] = make(spec)
    t = time.perf_counter()
    model = formulas.ExcelModel().loads(str(path)).finish()
    return model, time.perf_counter() - t


def _bench_formulas(tpl, res, sample, idx, n, runs, rows):
    from cryptoplan.workbook.engine.parser import cell_name
    from cryptoplan.workbook.recalculation import load_engine
    try:
        fmodel, t_load = _formulas_setup(tpl)
        eng = load_engine(tpl)
        book = f"[{Path(tpl).name}]"

        def addr(key):
            si, r, c = key
            return f"'{book}{eng.sheets[si].name.upper()}'!{cell_name(r, c)}"
        a_rate, a_kb = addr(eng.locate("TxRate")), addr(eng.locate("MessageKB"))
        outs = [addr(eng.locate(res.cells[k])) for k in res.outputs]
        first = next(iter(res.outputs))
        mismatch = 0

        def one_each():
            nonlocal mismatch
            mismatch = 0
            for (rate, kb), i in zip(sample, idx):
                sol = fmodel.calculate(inputs={a_rate: rate, a_kb: kb}, outputs=outs)
                v = sol[outs[0]].value
                got = v[0, 0] if hasattr(v, "shape") else v
                want = res.outputs[first][i]
                if not (isinstance(got, float) and isinstance(want, float)
                        and abs(got - want) <= 1e-9 * abs(want)) and got != want:
                    mismatch += 1
        t_s, _ = _median(one_each, max(1, runs // 2))
        t = t_s / len(sample) * n
        rows.append((f"  formulas package, per scenario (x{n:,})", t,
                     f"{t_s / len(sample) * 1e3:.2f} ms/scenario; model load {t_load:.2f} s; "
                     f"first output differs in {mismatch}/{len(sample)}"))
        return t
    except Exception as exc:  # noqa: BLE001 - report, do not hide
        rows.append(("  formulas package", float("nan"), f"failed: {type(exc).__name__}: {exc}"))
        return None


def _bench_lo(tpl, sample, n, tmp, rows, label):
    from cryptoplan.workbook.libreoffice import convert
    from cryptoplan.workbook.recalculation import recalc_report
    folder = tmp / f"scenarios-{label.replace(' ', '-')}"
    folder.mkdir(exist_ok=True)
    files = []
    for j, (rate, kb) in enumerate(sample):
        f = folder / f"scenario{j:03d}.xlsx"
        recalc_report(tpl, {"TxRate": rate, "MessageKB": kb}, output=f)
        files.append(f)
    t0 = time.perf_counter()
    convert(files, folder / "lo", recalc=True, profile_dir=tmp / "lo-profile")
    t_batch = time.perf_counter() - t0
    t = t_batch / len(files) * n
    rows.append((f"  LibreOffice, per scenario (x{n:,})", t,
                 f"{t_batch / len(files) * 1e3:.0f} ms/scenario ({len(files)} files, one start); "
                 "lower bound: no UDFs"))
    return t


def _bench_lo_addin(tpl, tmp, runs, rec):
    """LibreOffice recalculating the template *with* the cryptoplan Calc add-in: the same work.

    The extension is built from this checkout and installed into a private profile; the
    template is retargeted to the add-in's names (LibreOffice 7.4 does not map compatibility
    names in files).  Every run must reproduce cryptoplan's Results to 1e-9 relative.
    """
    import openpyxl

    from cryptoplan.addin.calc import package
    from cryptoplan.workbook.libreoffice import convert, install_extension
    from cryptoplan.workbook.retarget import retarget
    prof = tmp / "lo-addin-profile"
    oxt = tmp / "cryptoplan.oxt"
    oxt.write_bytes(package())
    convert([tpl], tmp / "lo-addin-warm0", recalc=True, profile_dir=prof)   # builds the profile
    install_extension(prof, oxt)
    calc = tmp / "planner-calc.xlsx"
    retarget(tpl, calc, "calc")
    want = {(o.sheet, o.cell): o.value for o in rec.outputs if isinstance(o.value, float)}

    def same(outs):
        wb = openpyxl.load_workbook(outs[0], data_only=True)
        got = {k: wb[k[0]][k[1]].value for k in want}
        return all(isinstance(g, (int, float)) and abs(g - w) <= 1e-9 * abs(w) for g, w in
                   ((got[k], want[k]) for k in want))
    if not same(convert([calc], tmp / "lo-addin-warm", recalc=True, profile_dir=prof)):
        raise SystemExit("bench_recalc: LibreOffice with the add-in does not reproduce the Results")
    return _median(lambda: convert([calc], tmp / "lo-addin", recalc=True, profile_dir=prof),
                   max(3, runs // 2), same)[0]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scenarios", type=int, default=10_000)
    ap.add_argument("--sample", type=int, default=20, help="scenarios timed for the peers")
    ap.add_argument("--recalc-only", action="store_true", help="time the recalculation, not the sweeps")
    args = ap.parse_args(argv)

    from cryptoplan.workbook.libreoffice import convert, soffice
    from cryptoplan.workbook.recalculation import recalc_report
    from cryptoplan.workbook.sweeps import sweep
    from cryptoplan.workbook.template import write_template

    tmp = Path(tempfile.mkdtemp(prefix="bench-recalc-"))
    tpl = write_template(tmp / "planner.xlsx")
    rows = []

    # ---------------------------------------------------------------- recalc
    # every timed run must succeed: recalc exit code 0 (outputs computed, none an error) and
    # its file written; -o onto the previous run's file needs --force (exit 2 without it)
    t_api, rec = _median(lambda: recalc_report(tpl, output=tmp / "out.xlsx"), args.runs,
                         lambda r: r.exit_code == 0 and (tmp / "out.xlsx").is_file())
    exe = Path(sys.executable).with_name("cryptoplan")
    cli = [str(exe)] if exe.exists() else [sys.executable, "-m", "cryptoplan.cli"]
    # the CLI as an installed program starts: from compiled bytecode.  A shell that sets
    # PYTHONDONTWRITEBYTECODE (this machine's does) and puts the source tree on PYTHONPATH
    # would make every run compile cryptoplan's modules from source (+0.2 s); one untimed
    # run first writes the bytecode caches.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cli_run = [*cli, "recalc", str(tpl), "-o", str(tmp / "cli.xlsx"), "--force"]
    warm = subprocess.run(cli_run, capture_output=True, text=True, env=env)
    if not _cli_ok(warm, tmp / "cli.xlsx"):
        raise SystemExit(f"bench_recalc: cryptoplan recalc failed: {warm.stderr[-2000:]}")
    t_cli, _ = _median(lambda: subprocess.run(cli_run, capture_output=True, text=True, env=env), args.runs,
                       lambda p: _cli_ok(p, tmp / "cli.xlsx"))
    rows.append(("recalc template, API (load + evaluate + write)", t_api,
                 f"{len(rec.engine.formulas)} formulas"))
    rows.append(("recalc template, CLI (new process, imports)", t_cli, ""))
    t_lo = None
    if soffice():
        prof = tmp / "lo-profile"
        convert([tpl], tmp / "lo-warm", recalc=True, profile_dir=prof)  # first start builds the profile
        t_lo, _ = _median(lambda: convert([tpl], tmp / "lo", recalc=True, profile_dir=prof),
                          max(3, args.runs // 2))
        rows.append(("LibreOffice headless recalc, no add-in", t_lo, "UDF cells -> #NAME?: less work"))
        try:
            t_lo_addin = _bench_lo_addin(tpl, tmp, args.runs, rec)
            rows.append(("LibreOffice headless recalc with the Calc add-in", t_lo_addin,
                         "the same values (checked)"))
        except SystemExit as exc:   # a peer that fails is reported, not timed; the rest still runs
            t_lo_addin = None
            rows.append(("LibreOffice headless recalc with the Calc add-in", float("nan"), f"not timed: {exc}"))

    # ----------------------------------------------------------------- sweep
    summary = []
    for label, top in GRIDS if not args.recalc_only else ():
        vary = _grid(args.scenarios, top)
        n = len(vary["TxRate"]) * len(vary["MessageKB"])
        t_sweep, res = _median(lambda: sweep(tpl, vary), args.runs,
                               lambda r: len(r.inputs["TxRate"]) == n and all(len(c) == n for c in r.outputs.values()))
        n_err = sum(isinstance(v, str) and v.startswith("#")
                    for col in res.outputs.values() for v in col)
        rows.append((f"sweep {label}: {n:,} scenarios x {len(res.outputs)} outputs", t_sweep,
                     f"{t_sweep / n * 1e6:.1f} us/scenario; {n_err:,} error values"))
        rng = np.random.default_rng(1)
        idx = rng.choice(n, size=min(args.sample, n), replace=False)
        sample = [(res.inputs["TxRate"][i], res.inputs["MessageKB"][i]) for i in idx]
        t_formulas = _bench_formulas(tpl, res, sample, idx, n, args.runs, rows)
        t_lo_sweep = _bench_lo(tpl, sample, n, tmp, rows, label) if soffice() else None
        summary.append((label, n, t_sweep, t_formulas, t_lo_sweep))

    # ----------------------------------------------------------------- table
    print(f"\nbench_recalc: medians of {args.runs} runs, Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs\n")
    w = max(len(r[0]) for r in rows)
    print(f"{'what':<{w}}  {'seconds':>10}  notes")
    for name, t, note in rows:
        print(f"{name:<{w}}  {t:>10.3f}  {note}")
    print()
    if t_lo:
        # issue 47: the CLI (a fresh process, as LibreOffice's is) <= 0.35 s and >= 4x LibreOffice
        # without the add-in; the API (imports done) beside it
        print(f"recalc: LibreOffice without the add-in / cryptoplan CLI = {t_lo / t_cli:,.1f}x (target >= 4x: "
              f"{'met' if t_lo / t_cli >= 4 else 'MISSED'}); CLI {t_cli:.3f} s (target <= 0.35 s: "
              f"{'met' if t_cli <= 0.35 else 'MISSED'}); / API = {t_lo / t_api:,.1f}x, API {t_api:.3f} s")
        if t_lo_addin:
            print(f"recalc: LibreOffice with the add-in / cryptoplan CLI = {t_lo_addin / t_cli:,.1f}x, "
                  f"/ API = {t_lo_addin / t_api:,.1f}x")
    for label, n, t_sweep, t_formulas, t_lo_sweep in summary:
        parts = []
        if t_formulas:
            parts.append(f"formulas / cryptoplan = {t_formulas / t_sweep:,.0f}x")
        if t_lo_sweep:
            parts.append(f"LibreOffice / cryptoplan = {t_lo_sweep / t_sweep:,.0f}x")
        print(f"sweep {label}: " + "; ".join(parts))
        peers = [t for t in (t_formulas, t_lo_sweep) if t]
        if peers:
            ratio = min(peers) / t_sweep
            print(f"  targets: {n:,} scenarios in {t_sweep:.2f} s (<= 5 s: "
                  f"{'met' if t_sweep <= 5 else 'MISSED'}); {ratio:,.0f}x faster than the faster "
                  f"peer (>= 100x: {'met' if ratio >= 100 else 'MISSED'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
