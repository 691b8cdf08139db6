#!/usr/bin/env python
"""Benchmark of :func:`model.erlang_c` against other Erlang C implementations.

Run as a script (pytest does not collect it: the name does not start with
``test_``)::

    python tests/bench_erlang.py            # full run, ~1-2 minutes
    python tests/bench_erlang.py --quick    # smoke run, a few seconds
    python tests/bench_erlang.py --json out.json   # also write raw results

For each case (servers c, traffic A = rho * c) it prints, side by side from
one run, the value returned, its relative error against a 50-digit mpmath
reference computed here, and the median time per call of

* ``cryptoplan scalar``   ``model.erlang_c(A, c)`` with Python scalars;
* ``cryptoplan vector``   ``model.erlang_c(a, c)`` on N-element arrays
  (traffic spread over [0.98 A, A], last element exactly A; the value and
  error shown are for that last element), time per element;
* ``pyworkforce``         ``pyworkforce.queuing.ErlangC(transactions=A,
  aht=1, asa=1, interval=1).waiting_probability(positions=c)``.  pyworkforce
  takes its load as intensity = transactions / interval * aht erlangs, so
  these arguments give intensity == A exactly (asa and shrinkage do not enter
  the waiting probability).  The object is built once, outside the timed loop;
  only ``waiting_probability`` is timed;
* ``line-solver qsys_mmk``  ``line_solver.api.qsys.qsys_mmk(A, 1.0, c)``, the
  M/M/c solver (lambda = A, mu = 1); it returns Lq and rho, and C is
  recovered as Lq (1 - rho) / rho (not timed).  The whole call is timed (it
  also computes P0);
* ``line-solver erlang_c`` ``line_solver.api.lossn.erlang_c(A, c)``;
* ``B recursion (py)``    plain Python Erlang B recursion
  B_k = A B_{k-1} / (k + A B_{k-1}), then C = B / (1 - rho (1 - B)).

"x ours" is peer time / cryptoplan scalar time.  Timing: time.perf_counter,
garbage collector off, one warm-up call, then ``repeats`` repeats of an inner
loop sized so one repeat lasts about ``--target-ms``; the median repeat is
reported.  A call slower than the target gets 1 loop per repeat (marked
"capped"), and fewer repeats if it would exceed ``--budget-s``.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import statistics
import sys
import time
import warnings

import mpmath as mp
import numpy as np

from cryptoplan.model import erlang_c

SERVERS = (10, 100, 1_000, 10_000, 100_000)
RHOS = (0.9, 0.5)
QUICK_SERVERS = (10, 1_000, 100_000)
QUICK_RHOS = (0.9,)
DBL_TINY = mp.mpf(2) ** -1075  # half the smallest subnormal: below it, 0 is correctly rounded


# ------------------------------------------------------------------ reference
def exact_erlang_c(a: float, c: int) -> mp.mpf:
    """Erlang C at 50 significant digits, for the double ``a`` exactly."""
    with mp.workdps(50):
        A = mp.mpf(a)
        b = mp.exp(c * mp.log(A) - A - mp.loggamma(c + 1)) / mp.gammainc(
            c + 1, A, mp.inf, regularized=True)
        rho = A / c
        return +(b / (1 - rho * (1 - b)))


def exact_erlang_c_recursion(a: float, c: int) -> mp.mpf:
    """Independent check of :func:`exact_erlang_c` (slow for large c)."""
    with mp.workdps(60):
        A = mp.mpf(a)
        b = mp.mpf(1)
        for k in range(1, c + 1):
            b = A * b / (k + A * b)
        rho = A / c
        return b / (1 - rho * (1 - b))


# ---------------------------------------------------------------------- peers
def erlang_c_recursion(a: float, c: int) -> float:
    """Plain Python Erlang B recursion, then Erlang C from B."""
    b = 1.0
    for k in range(1, c + 1):
        ab = a * b
        b = ab / (k + ab)
    rho = a / c
    return b / (1.0 - rho * (1.0 - b))


def load_peers():
    """Return {name: (make(a, c) -> (timed_fn, args, to_value) | None, why)}."""
    peers = {}
    try:
        from pyworkforce.queuing import ErlangC
        import pyworkforce
        ver = getattr(pyworkforce, "__version__", None) or _dist_version("pyworkforce")

        def make_pwf(a, c):
            obj = ErlangC(transactions=a, aht=1.0, asa=1.0, interval=1)
            assert obj.intensity == a
            return obj.waiting_probability, (c,), float

        peers["pyworkforce"] = (make_pwf, f"pyworkforce {ver}")
    except Exception as exc:  # noqa: BLE001 - report any import failure
        peers["pyworkforce"] = (None, f"import failed: {type(exc).__name__}: {exc}")

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            from line_solver.api.qsys import qsys_mmk
            from line_solver.api.lossn import erlang_c as ls_erlang_c
        ver = _dist_version("line-solver")

        def make_mmk(a, c):
            def to_value(d):
                return d["Lq"] * (1.0 - d["rho"]) / d["rho"]
            return qsys_mmk, (a, 1.0, c), to_value

        def make_ls_c(a, c):
            return ls_erlang_c, (a, c), float

        peers["line-solver qsys_mmk"] = (make_mmk, f"line-solver {ver}")
        peers["line-solver erlang_c"] = (make_ls_c, f"line-solver {ver}")
    except Exception as exc:  # noqa: BLE001
        why = f"import failed: {type(exc).__name__}: {exc}"
        peers["line-solver qsys_mmk"] = (None, why)
        peers["line-solver erlang_c"] = (None, why)

    peers["B recursion (py)"] = (lambda a, c: (erlang_c_recursion, (a, c), float),
                                 "plain Python, in this script")
    return peers


def _dist_version(name: str) -> str:
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:  # noqa: BLE001
        return "?"


# --------------------------------------------------------------------- timing
def bench(fn, args, *, target: float, repeats: int, budget: float, per: int = 1):
    """Median seconds per call (divided by ``per``), loops, repeats, note."""
    fn(*args)  # warm-up
    t0 = time.perf_counter()
    fn(*args)
    single = time.perf_counter() - t0
    note = ""
    loops = max(1, min(1_000_000, int(target / max(single, 1e-9))))
    if single >= target:
        note = "capped: 1 loop/rep"
        if single * repeats > budget:
            repeats = max(3, int(budget / single))
            note += f", {repeats} reps"
    gc_was = gc.isenabled()
    gc.disable()
    try:
        times = []
        for _ in range(repeats):
            t = time.perf_counter()
            for _ in range(loops):
                fn(*args)
            times.append((time.perf_counter() - t) / loops / per)
    finally:
        if gc_was:
            gc.enable()
    return statistics.median(times), loops, repeats, note, times


# ------------------------------------------------------------------- accuracy
def judge(value, exact: mp.mpf):
    """(value text, rel err text, rel err float or None, note)."""
    if isinstance(value, BaseException):
        return "EXCEPTION", "-", None, f"{type(value).__name__}: {value}"[:60]
    v = float(value)
    if math.isnan(v):
        return "nan", "nan", math.nan, "returned NaN"
    if math.isinf(v):
        return "inf", "inf", math.inf, "returned inf"
    if exact < DBL_TINY and v == 0.0:
        return "0", "(0 ok)", 0.0, "exact < 1e-323: 0 is the rounded value"
    with mp.workdps(50):
        err = float(abs(mp.mpf(v) - exact) / exact)
    note = ""
    if v == 0.0:
        note = "returned 0 (underflow)"
    elif v < 2.2250738585072014e-308:
        note = "subnormal result"
    return f"{v:.16g}", f"{err:.1e}", err, note


def explain(name: str, value, a: float, c: int, exact) -> str:
    """Why a peer's result is NaN/0, where the mechanism can be checked."""
    if isinstance(value, BaseException) or value is None:
        return ""
    v = float(value)
    log_max = math.log(2.0 ** 1023 * (2 - 2.0 ** -52))
    if name == "line-solver qsys_mmk" and math.isnan(v):
        # its sum of (k rho)^j / j! peaks near j = A at about e^A / sqrt(2 pi A)
        j = min(c, max(1, int(a)))
        peak = j * math.log(a) - math.lgamma(j + 1)
        if peak > log_max:
            return f"A^j/j! reaches 1e{peak / math.log(10):.0f}: inf/inf"
    if name == "pyworkforce" and v == 0.0:
        with mp.workdps(50):
            b = exact * (1 - (a / c)) / (1 - (a / c) * exact)  # B from C
            log10_inv_b = float(-mp.log10(b))
        if log10_inv_b > 308:
            return f"1/B = 1e{log10_inv_b:.0f} overflows to inf, B = 0"
    return ""


def _fmt_ratio(r: float) -> str:
    return f"{r:.0f}" if r >= 100 else f"{r:.3g}"


def fmt_time(s: float) -> str:
    if s < 1e-6:
        return f"{s * 1e9:.0f} ns"
    if s < 1e-3:
        return f"{s * 1e6:.2f} us"
    if s < 1.0:
        return f"{s * 1e3:.2f} ms"
    return f"{s:.2f} s"


# ----------------------------------------------------------------------- main
def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="smoke run: fewer cases, repeats and elements")
    p.add_argument("--json", metavar="PATH",
                   help="write all results as JSON to PATH ('-' for stdout)")
    p.add_argument("--repeats", type=int, help="repeats per measurement (median taken)")
    p.add_argument("--target-ms", type=float, help="approx. duration of one repeat")
    p.add_argument("--budget-s", type=float, default=1.5,
                   help="max time for the repeats of one slow call (default 1.5)")
    p.add_argument("--n-vector", type=int, help="elements in the vectorized call")
    args = p.parse_args(argv)

    servers = QUICK_SERVERS if args.quick else SERVERS
    rhos = QUICK_RHOS if args.quick else RHOS
    repeats = args.repeats or (3 if args.quick else 9)
    target = (args.target_ms or (5.0 if args.quick else 40.0)) / 1e3
    n_vec = args.n_vector or (1_000 if args.quick else 10_000)
    kw = dict(target=target, repeats=repeats, budget=args.budget_s)

    peers = load_peers()
    started = time.perf_counter()
    meta = {
        "python": platform.python_version(), "numpy": np.__version__,
        "scipy": _dist_version("scipy"), "mpmath": mp.__version__,
        "cpus": os.cpu_count(), "machine": platform.machine(),
        "repeats": repeats, "target_s": target, "n_vector": n_vec,
        "peers": {k: v[1] for k, v in peers.items()},
    }
    print(f"Erlang C benchmark: python {meta['python']}, numpy {meta['numpy']}, "
          f"scipy {meta['scipy']}, {meta['cpus']} cpus; median of {repeats} repeats, "
          f"~{target * 1e3:g} ms/repeat; vector N={n_vec}")
    for name, (_, desc) in peers.items():
        print(f"  {name:22s} {desc}")

    # Cross-check the mpmath reference against the exact recursion once.
    for c in (10, 1000):
        r1, r2 = exact_erlang_c(0.9 * c, c), exact_erlang_c_recursion(0.9 * c, c)
        if abs(r1 / r2 - 1) > mp.mpf(10) ** -40:
            raise SystemExit(f"mpmath reference disagrees with recursion at c={c}")

    header = (f"{'servers':>7} {'rho':>4} {'method':22s} {'C(A,c)':>23s} "
              f"{'rel.err':>8s} {'time/call':>10s} {'x ours':>8s} {'loops x reps':>12s}  note")
    rule = "-" * len(header)
    print()
    print(header)
    records = []
    for rho in rhos:
        for c in servers:
            a = rho * c
            exact = exact_erlang_c(a, c)
            print(rule)
            print(f"{c:>7} {rho:>4g} {'mpmath 50 digits':22s} {mp.nstr(exact, 16):>23s}")
            rows = []

            # ours, scalar
            t, lp, rp, note, times = bench(erlang_c, (a, c), **kw)
            t_ours = t
            rows.append(("cryptoplan scalar", erlang_c(a, c), t, lp, rp, note, times))

            # ours, vectorized (time per element)
            av = a * np.linspace(0.98, 1.0, n_vec)
            av[-1] = a
            cv = np.full(n_vec, float(c))
            t, lp, rp, note, times = bench(erlang_c, (av, cv), per=n_vec, **kw)
            note = (note + "; " if note else "") + "per element"
            rows.append(("cryptoplan vector", float(erlang_c(av, cv)[-1]), t, lp, rp, note, times))

            for name, (make, why) in peers.items():
                if make is None:
                    rows.append((name, None, None, 0, 0, f"NOT RUN: {why}", []))
                    continue
                try:
                    fn, fargs, to_value = make(a, c)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        value = to_value(fn(*fargs))
                        t, lp, rp, note, times = bench(fn, fargs, **kw)
                except Exception as exc:  # noqa: BLE001 - peers' errors are data
                    rows.append((name, exc, None, 0, 0, "", []))
                    continue
                rows.append((name, value, t, lp, rp, note, times))

            for name, value, t, lp, rp, note, times in rows:
                if value is None:
                    vtxt, etxt, err, jnote = "-", "-", None, ""
                else:
                    vtxt, etxt, err, jnote = judge(value, exact)
                why = explain(name, value, a, c, exact)
                notes = "; ".join(x for x in (jnote, why, note) if x)
                ttxt = fmt_time(t) if t is not None else "-"
                ratio = _fmt_ratio(t / t_ours) if t is not None else "-"
                lr = f"{lp}x{rp}" if t is not None else "-"
                print(f"{'':>7} {'':>4} {name:22s} {vtxt:>23s} {etxt:>8s} {ttxt:>10s} "
                      f"{ratio:>8s} {lr:>12s}  {notes}")
                records.append({
                    "servers": c, "rho": rho, "traffic": a, "method": name,
                    "exact": mp.nstr(exact, 20),
                    "value": (None if value is None or isinstance(value, BaseException)
                              else float(value)),
                    "error": (f"{type(value).__name__}: {value}"
                              if isinstance(value, BaseException) else None),
                    "rel_err": err, "time_s": t, "ratio_to_ours_scalar":
                        (t / t_ours if t is not None else None),
                    "loops": lp, "repeats": rp, "times_s": times, "note": notes,
                })
    print(rule)

    # Summary against the targets.
    def pick(method, **where):
        return [r for r in records if r["method"] == method
                and all(r[k] == v for k, v in where.items())]
    sc = pick("cryptoplan scalar")
    vc = pick("cryptoplan vector")
    worst_s = max(sc, key=lambda r: r["time_s"])
    worst_v = max(vc, key=lambda r: r["time_s"])
    print(f"targets: scalar <= 10 us: worst {fmt_time(worst_s['time_s'])} "
          f"(c={worst_s['servers']}, rho={worst_s['rho']}) "
          f"{'OK' if worst_s['time_s'] <= 10e-6 else 'MISSED'}; "
          f"vector <= 0.3 us/elem: worst {fmt_time(worst_v['time_s'])} "
          f"(c={worst_v['servers']}) {'OK' if worst_v['time_s'] <= 0.3e-6 else 'MISSED'}")
    pw = [r for r in pick("pyworkforce", servers=10_000) if r["time_s"]]
    if pw:
        ratios = ", ".join(f"rho={r['rho']}: {r['ratio_to_ours_scalar']:.0f}x" for r in pw)
        ok = all(r["ratio_to_ours_scalar"] >= 50 for r in pw)
        print(f"targets: >= 50x pyworkforce at c=10,000: {ratios} {'OK' if ok else 'MISSED'}")
    ours_err = max((r["rel_err"] or 0.0) for r in sc + vc)
    bad = sorted({(r["method"], r["servers"], r["rho"]) for r in records
                  if not r["method"].startswith("cryptoplan")
                  and (r["error"] or (r["rel_err"] is not None
                                      and not (r["rel_err"] <= 1e-6)))})
    print(f"accuracy: cryptoplan worst rel.err {ours_err:.1e}; peers failing "
          f"(NaN/inf/exception/rel.err > 1e-6): "
          + (", ".join(f"{m} c={c} rho={r}" for m, c, r in bad) or "none"))
    elapsed = time.perf_counter() - started
    print(f"total {elapsed:.0f} s")

    if args.json:
        out = json.dumps({"meta": meta, "elapsed_s": elapsed, "results": records},
                         indent=1, default=str)
        if args.json == "-":
            print(out)
        else:
            with open(args.json, "w", encoding="utf-8") as fh:
                fh.write(out + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
