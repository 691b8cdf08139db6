"""A sweep under parameter draws (workbook/drawing.py, ``sweep(..., draws=)``, ``--draws``) and
through an executor.

Expected values, and where they come from:

* each draw of the draws-mode evaluation against the same workbook evaluated plainly, once per
  draw, under that draw's parameters as scalars (:func:`~cryptoplan.model.params.using_values`:
  the path every recalculation test checks), output by output;
* the band columns against ``numpy.quantile`` (``inverted_cdf``) of those per-draw values;
* a sweep through a thread pool, a process pool and dask.distributed's in-process cluster
  against the same sweep in one process, bit for bit.
"""

from __future__ import annotations

import concurrent.futures as cf
import math

import numpy as np
import pytest
from click.testing import CliRunner
from numpy.testing import assert_allclose

from cryptoplan.cli import main
from cryptoplan.model.params import using_values
from cryptoplan.workbook import drawing
from cryptoplan.workbook.engine.values import NUM
from cryptoplan.workbook.recalculation import find_outputs, load_engine
from cryptoplan.workbook.sweeps import _top_left, sweep

D = 12
GROWTH = [0.5, 2.0, 3.5]


@pytest.fixture(scope="module")
def planner(tmp_path_factory):
    folder = tmp_path_factory.mktemp("draws")
    res = CliRunner().invoke(main, ["template", "-o", str(folder / "planner.xlsx")])
    assert res.exit_code == 0, res.output
    return str(folder / "planner.xlsx")


def _results(engine, m):
    roots = [k for k in engine.formulas if engine.sheets[k[0]].name.lower() == "results"]
    engine.evaluate(roots)
    return {key: _top_left(engine.cell_value(*cell), m) for key, cell, _ in find_outputs(engine)}


@pytest.fixture(scope="module")
def per_draw(planner):
    """(draws-mode values (m, D) per output, plain values per draw (m,) per output, the draws)."""
    m = len(GROWTH)
    engine = load_engine(planner, n=m * D)
    engine.set_input("PlanGrowth", np.repeat(GROWTH, D).tolist())
    with drawing.drawing(D, seed=3):
        drawn = _results(engine, m * D)
        values = drawing.active().values()
    plain = []
    for j in range(D):
        e = load_engine(planner, n=m)
        e.set_input("PlanGrowth", GROWTH)
        with using_values({k: float(v[j]) for k, v in values.items()}):
            plain.append(_results(e, m))
    return drawn, plain


@pytest.mark.slow
def test_each_draw_is_the_workbook_evaluated_under_that_draw(per_draw):
    drawn, plain = per_draw
    m = len(GROWTH)
    compared = 0
    for key, (kind, num, text) in drawn.items():
        kind, num = kind.reshape(m, D), num.reshape(m, D)
        for j in range(D):
            pk, pn, pt = plain[j][key]
            assert np.array_equal(kind[:, j], pk), (key, j)
            ok = pk == NUM
            assert_allclose(num[ok, j], pn[ok], rtol=1e-12, err_msg=f"{key}, draw {j}")
            if text is not None and pt is not None:
                assert list(text.reshape(m, D)[:, j]) == list(pt), (key, j)
            compared += int(ok.sum())
    assert compared > 500
    # the draws move the answers: the coprocessors' utilization is not the same in every draw
    key = next(k for k in drawn if k.startswith("Coprocessor utilization (all workloads)"))
    assert np.ptp(drawn[key][1].reshape(m, D), axis=1).min() > 0


def test_the_band_columns_are_the_draws_quantiles(planner, per_draw):
    drawn, _ = per_draw
    m = len(GROWTH)
    r = sweep(planner, {"PlanGrowth": GROWTH}, draws=D, seed=3, level=0.8)
    key = next(k for k in drawn if k.startswith("Coprocessor utilization (all workloads)"))
    x = drawn[key][1].reshape(m, D)
    want = np.quantile(x, [0.1, 0.5, 0.9], axis=1, method="inverted_cdf")
    for name, w in zip(("p10", "median", "p90"), want):
        assert_allclose(r.column(f"{key} [{name}]"), w, rtol=0, atol=0)
    assert r.column(f"{key} [P(error)]") == [0.0] * m
    # the point column is the sweep without draws
    plain = sweep(planner, {"PlanGrowth": GROWTH})
    assert r.column(key) == plain.column(key)
    assert set(plain.output_keys()) < set(r.output_keys())


def test_an_output_that_errs_in_some_draws_gives_its_share(planner):
    # the queueing delay of an overloaded pool is an error: AMS privacy at 1,620 transactions/s
    # puts the two coprocessors at about 100%, over it in some draws and under it in others
    r = sweep(planner, {"TxRate": [1000, 1620, 3000]}, fixed={"Policy": "privacy"}, draws=40, seed=3)
    key = "Coprocessor queueing delay per transaction"
    share = r.column(f"{key} [P(error)]")
    assert share[0] == 0.0 and 0.0 < share[1] < 1.0 and share[2] == 1.0, share
    assert r.column(f"{key} [median]")[0] > 0
    # every draw an error: no quantile, and the cell says so (#N/A), never a number
    assert all(str(r.column(f"{key} [{q}]")[2]) == "#N/A" for q in ("p05", "median", "p95"))


def test_every_chunk_draws_under_one_drawing_and_text_outputs_get_no_band(planner, monkeypatch):
    """Issue 66: each chunk of a sweep made its own Drawing, so the draws, their picks and what is
    remembered by them (the channel's answer per draw, the workloads' per-unit costs) were made
    again in every chunk.  Three chunks now draw once; and an output that is text in every scenario
    (a scenario line, a verdict) is not evaluated again under the draws, nor banded: the numeric
    outputs' bands are those of one chunk of all the scenarios, to the bit."""
    from cryptoplan.model.calibration import draws as draws_module
    made = []
    real = draws_module.parameter_draws
    monkeypatch.setattr(draws_module, "parameter_draws", lambda *a, **k: made.append(a) or real(*a, **k))
    drawing._DRAWINGS.clear()
    chunked = sweep(planner, {"PlanGrowth": GROWTH}, draws=D, seed=5, chunk_size=D)
    assert len(made) == 1, made
    with drawing.drawing(D, 5) as _:
        first = drawing.active()
    with drawing.drawing(D, 5):
        assert drawing.active() is first
    with drawing.drawing(D, 6):
        assert drawing.active() is not first
    whole = sweep(planner, {"PlanGrowth": GROWTH}, draws=D, seed=5)
    _same(chunked, whole)
    texts = [k for k in whole.output_keys() if isinstance(whole.column(k)[0], str)
             and not k.endswith("]") and not str(whole.column(k)[0]).startswith("#")]
    assert "Bottleneck at TxRate (busiest card type)" in texts
    assert not any(f"{k} [median]" in whole.output_keys() for k in texts)


def _same(a, b):
    assert a.output_keys() == b.output_keys()
    for k in a.output_keys():
        x, y = a.column(k), b.column(k)
        assert all((isinstance(u, float) and isinstance(v, float) and (u == v or (math.isnan(u) and math.isnan(v))))
                   or u == v for u, v in zip(x, y)), k


@pytest.mark.slow        # over 1.3 s (docs/development.md, "Tiers")
@pytest.mark.parametrize("pool", ["threads", "processes"])
def test_an_executor_gives_the_one_process_numbers(planner, pool):
    vary = {"PlanGrowth": [0.5, 1.0, 1.5, 2.0, 2.5]}
    one = sweep(planner, vary, draws=4, seed=1, chunk_size=8)
    kind = cf.ThreadPoolExecutor if pool == "threads" else cf.ProcessPoolExecutor
    with kind(max_workers=2) as ex:
        many = sweep(planner, vary, draws=4, seed=1, chunk_size=8, executor=ex)
    _same(one, many)


@pytest.mark.subprocess          # distributed starts a helper process on its first cluster
def test_a_dask_local_cluster_gives_the_one_process_numbers(planner):
    distributed = pytest.importorskip("distributed")
    vary = {"PlanGrowth": [0.5, 1.0, 1.5, 2.0, 2.5]}
    one = sweep(planner, vary, draws=4, seed=1, chunk_size=8)
    with distributed.LocalCluster(n_workers=2, processes=False, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        many = sweep(planner, vary, draws=4, seed=1, chunk_size=8, executor=client.get_executor())
    _same(one, many)


@pytest.mark.slow
@pytest.mark.subprocess
def test_dask_worker_processes_give_the_one_process_numbers_with_their_heap_restored(planner):
    # issue 66: through worker *processes* (a nanny each, as `dask worker` starts them) a sweep is
    # the one process's to the bit, and each worker that ran a chunk has given malloc back its
    # large-allocation threshold: the nanny sets MALLOC_TRIM_THRESHOLD_, which alone made each
    # chunk's temporaries go through mmap (the speed is tests/bench_sweep_draws.py's to measure)
    distributed = pytest.importorskip("distributed")
    from cryptoplan.workbook import sweeps
    vary = {"PlanGrowth": [0.5, 1.0, 1.5, 2.0, 2.5]}
    one = sweep(planner, vary, draws=4, seed=1, chunk_size=8)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        env = client.run(lambda: __import__("os").environ.get("MALLOC_TRIM_THRESHOLD_"))
        many = sweep(planner, vary, draws=4, seed=1, chunk_size=8, executor=client.get_executor())
        tuned = client.run(lambda: list(sweeps._MALLOC_TUNED))
    _same(one, many)
    assert set(env.values()) == {"65536"}, env           # what dask's nanny sets (its default config)
    assert [True] in tuned.values() and all(t in ([], [True]) for t in tuned.values()), tuned
    assert sweeps._malloc_for_chunks() is False or "MALLOC_TRIM_THRESHOLD_" in __import__("os").environ


def test_the_cli_sweeps_with_draws_and_workers(planner, tmp_path):
    out = tmp_path / "curve.csv"
    res = CliRunner().invoke(main, ["sweep", planner, "--vary", "PlanGrowth=1,2", "--draws", "5", "--seed", "2",
                                    "--workers", "2", "--chunk-size", "5", "-o", str(out)])
    assert res.exit_code == 0, res.output
    head = out.read_text(encoding="utf-8").splitlines()[0]
    for col in ("Coprocessor utilization (all workloads) [p05]", "Coprocessor utilization (all workloads) [median]",
                "Coprocessor utilization (all workloads) [p95]", "Coprocessor utilization (all workloads) [P(error)]"):
        assert col in head, col
    one = sweep(planner, {"PlanGrowth": [1, 2]}, draws=5, seed=2)
    import csv
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    key = "Coprocessor utilization (all workloads) [p95]"
    assert [float(r[key]) for r in rows] == one.column(key)


@pytest.mark.parametrize("args, words", [
    (["--level", "0.8"], "--level is for --draws"),
    (["--seed", "3"], "--seed is for --draws"),
    (["--draws", "4", "--workers", "2", "--scheduler", "tcp://127.0.0.1:1"], "give one"),
    (["--draws", "0"], "--draws"),
    (["--draws", "4", "--level", "1"], "--level"),
])
def test_bad_draw_options_are_refused_by_name(planner, tmp_path, args, words):
    res = CliRunner().invoke(main, ["sweep", planner, "--vary", "PlanGrowth=1,2", "-o", str(tmp_path / "x.csv"), *args])
    assert res.exit_code == 2 and words in res.output, res.output
    assert not (tmp_path / "x.csv").exists()


def test_a_parameter_file_without_draws_is_refused_before_anything_is_written(planner, tmp_path, monkeypatch):
    import json
    from cryptoplan.model.params import clear_cache, load_params
    doc = {k: v for k, v in load_params().items() if k not in ("covariance", "bootstrap")}
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(doc), encoding="utf-8")
    monkeypatch.setenv("CRYPTOPLAN_PARAMS", str(bare))
    clear_cache()
    try:
        res = CliRunner().invoke(main, ["sweep", planner, "--vary", "PlanGrowth=1,2", "--draws", "5",
                                        "-o", str(tmp_path / "x.csv")])
    finally:
        monkeypatch.delenv("CRYPTOPLAN_PARAMS")
        clear_cache()
    assert res.exit_code == 4 and "--draws: the parameter file has no 'covariance' section" in res.output
    assert not (tmp_path / "x.csv").exists()


def test_a_band_with_no_draw_computed_is_an_error_the_exit_code_counts(planner):
    # 3,000 privacy transactions/s overload the two coprocessors in every draw: the queueing
    # delay's band is #N/A there, and the sweep says some values are errors (exit code 1)
    r = sweep(planner, {"TxRate": [1000, 3000]}, fixed={"Policy": "privacy"}, draws=10, seed=1)
    key = "Coprocessor queueing delay per transaction"
    assert r.column(f"{key} [P(error)]") == [0.0, 1.0]
    assert r.exit_code == 1 and f"{key} [median]" in r.error_counts()


def test_a_task_of_several_chunks_evaluates_its_scenarios_once_and_gives_each_chunks_result(planner, monkeypatch):
    """Issue 66: each chunk of a sweep with draws evaluated its few scenarios at the parameters on
    their own (a tenth of the chunk's time, the same for 20 scenarios as for 160).  A task now
    evaluates several chunks' scenarios at once, then each chunk under the draws.  Expected: the
    chunks a sweep yields, and every value in them, are those of tasks of one chunk each (the
    sweep before), and each task evaluated its scenarios at the parameters once."""
    from cryptoplan.workbook import sweeps
    vary = {"PlanGrowth": [0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]}
    calls = []
    real = sweeps._evaluated
    monkeypatch.setattr(sweeps, "_evaluated", lambda spec, engine, part, m, repeat, roots=None: calls.append(
        (m, repeat)) or real(spec, engine, part, m, repeat, roots))
    got = {}
    for per_task in (1, 3):
        monkeypatch.setattr(sweeps, "TASK_CHUNKS", per_task)
        calls.clear()
        got[per_task] = list(sweeps.iter_sweep(planner, vary, draws=4, seed=2, chunk_size=8))   # 2 scenarios a chunk
        assert [c.n for c in got[per_task]] == [2, 2, 2, 1]
        points = [m for m, repeat in calls if repeat == 1]
        assert points == ([2, 2, 2, 1] if per_task == 1 else [6, 1]), calls
        assert [m for m, repeat in calls if repeat == 4] == [2, 2, 2, 1], calls
    for a, b in zip(got[1], got[3]):
        _same(a, b)
        assert a.exit_code == b.exit_code and a.inputs == b.inputs

    class Counting:
        """An executor that runs the tasks here and counts them."""
        tasks: list = []

        def map(self, fn, window):
            self.tasks.extend(window)
            return map(fn, window)
    # an executor gets at least EXECUTOR_TASKS tasks where there are as many chunks (here 4 chunks,
    # 16 tasks asked: one chunk a task); with 2 asked, tasks of 2 chunks, the last one partial
    for least, tasks in ((sweeps.EXECUTOR_TASKS, [2, 2, 2, 1]), (2, [4, 3])):
        monkeypatch.setattr(sweeps, "EXECUTOR_TASKS", least)
        ex = Counting()
        ex.tasks = []
        mapped = list(sweeps.iter_sweep(planner, vary, draws=4, seed=2, chunk_size=8, executor=ex))
        assert [len(t[1][0]) for t in ex.tasks] == tasks and [c.n for c in mapped] == [2, 2, 2, 1]
        for a, b in zip(got[1], mapped):
            _same(a, b)
    # a task's scenarios are no more engine scenarios than a chunk's: 2 draws, chunks of 2
    # scenarios (chunk_size 4), so tasks of 2 chunks however many TASK_CHUNKS allows
    monkeypatch.setattr(sweeps, "TASK_CHUNKS", 8)
    calls.clear()
    list(sweeps.iter_sweep(planner, vary, draws=2, seed=2, chunk_size=4))
    assert [m for m, repeat in calls if repeat == 1] == [4, 3], calls
