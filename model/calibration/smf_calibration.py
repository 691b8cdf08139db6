"""The channel initiator's SMF statistics as calibration input.

:func:`smf_summary` reduces the task statistics (SMF 115) and channel accounting (SMF 116)
that :func:`cryptoplan.model.site.smf.read_smf_folder` reads to a summary per queue
manager and task type, the SSL tasks' and dispatchers' elapsed time per CPU time, and
observations of the SSL tasks' CPU per message
(:class:`~cryptoplan.model.calibration.observations.Observation`);
:func:`smf_measured` turns the elapsed ratio into the parameter it measures directly
(``chin_task_elapsed_ratio``).
"""

from __future__ import annotations

import numpy as np

from ..params import normalize_cipher
from ..zos.tls import normalize_platform, tls_cost_parts_us
from .observations import MEASUREMENT_RTOL, CalibrationError, Observation, tls_parameters
from ..site.smf import TASK_FILES

__all__ = ["smf_summary", "smf_measured"]


def _records(t, c):
    """Index of each channel-accounting record's task-statistics interval (-1 when none)."""
    key_t = {k: i for i, k in enumerate(zip(t.lpar, t.qmgr, t.end))}
    return np.array([key_t.get(k, -1) for k in zip(c.lpar, c.qmgr, c.end)], dtype=int)


def _task_summary(t) -> list[dict]:
    """:func:`smf_summary`'s ``tasks``: one dict per queue manager and task type."""
    act = t.active
    summary = []
    for q in np.unique(t.qmgr):
        for kind in TASK_FILES.values():
            m = (t.qmgr == q) & (t.task == kind)
            if not m.any():
                continue
            a = m & act
            summary.append({
                "qmgr": str(q), "lpar": str(t.lpar[m][0]), "task": kind, "intervals": int(m.sum()),
                "active": int(a.sum()), "tasks": int(t.tasks[m].max()),
                "requests_per_s": float(np.mean(t.requests_per_s[m])),
                "cpu_us_per_request": float(t.cpu_s[a].sum() * 1e6 / t.requests[a].sum()) if a.any() else None,
                "busy_max": float(t.busy[m].max()),
                "elapsed_per_cpu": float(t.elapsed_s[a].sum() / t.cpu_s[a].sum()) if a.any() else None,
                "channels_per_dispatcher": (float(t.channels[m].max() / t.tasks[m].max())
                                            if kind == "dispatcher" else None)})
    return summary


def _elapsed_ratio(t) -> dict | None:
    """:func:`smf_summary`'s ``elapsed_ratio``: the SSL tasks' and dispatchers' elapsed per CPU time."""
    m = t.active & np.isin(t.task, ("SSL", "dispatcher"))
    if not m.any():
        return None
    r = t.elapsed_s[m].sum() / t.cpu_s[m].sum()
    per = t.elapsed_per_cpu[m]
    se = float(np.std(per, ddof=1) / np.sqrt(per.size)) if per.size > 1 else None
    return {"value": float(r), "stderr": se, "intervals": int(m.sum())}


def _task_cpu(t, q, lpar, end, kind):
    """(CPU seconds, requests) of the ``kind`` tasks of one SMF interval; None when it has none."""
    i = np.flatnonzero((t.qmgr == q) & (t.lpar == lpar) & (t.end == end) & (t.task == kind))
    return (float(t.cpu_s[i].sum()), float(t.requests[i].sum())) if i.size else None


def _dispatcher_check(t, c, key: tuple[str, str, str], here, plat, where) -> dict | None:
    """The dispatchers' and adapters' CPU per message of one interval against :math:`CHIN_{none}/4`.

    None when the interval's task statistics lack either task type.
    """
    msgs = float(c.messages[here & c.message_channel].sum())
    kb = float(c.bytes[here & c.message_channel].sum()) / msgs / 1024.0
    d, a = _task_cpu(t, *key, "dispatcher"), _task_cpu(t, *key, "adapter")
    if not (d and a):
        return None
    model = tls_cost_parts_us("none", None, kb, plat)["CHIN"] / 4.0
    return {"where": where, "messages": msgs, "kb": kb,
            "site_us": (d[0] + a[0]) * 1e6 / msgs, "model_us": float(model)}


def _ssl_observation(t, c, key: tuple[str, str, str], here, plat, path, where) -> tuple:
    """One interval's SSL-task CPU per message as an :class:`Observation`.

    Returns
    -------
    tuple
        ``(observation, note)``: the observation or None, and None or why there is none
        (both None: no SSL message channel moved messages).
    """
    ssl = here & c.message_channel & (c.cipher != "")
    if not ssl.any():
        return None, None
    ciphers = sorted(set(c.cipher[ssl]))
    if len(ciphers) > 1:
        return None, (f"{where}: SSL message channels with {len(ciphers)} ciphers ({', '.join(ciphers)}) share "
                      "the SSL tasks: no single cipher to calibrate")
    try:
        cipher = normalize_cipher(ciphers[0])
    except ValueError:
        return None, f"{where}: cipher {ciphers[0]!r} is not one the model knows"
    if np.any(here & ~c.message_channel & (c.cipher != "")):
        return None, f"{where}: SSL client (SvrConn) channels shared the SSL tasks"
    s = _task_cpu(t, *key, "SSL")
    if not s or s[1] == 0:
        return None, f"{where}: SSL message channels moved messages but no SSL task statistics show work"
    n_ssl = float(c.messages[ssl].sum())
    kb_ssl = float(c.bytes[ssl].sum()) / n_ssl / 1024.0

    def predict(cipher=cipher, kb=kb_ssl):
        return float((tls_cost_parts_us("SSLCIPH", cipher, kb, plat)["CHIN"]
                      - tls_cost_parts_us("none", None, kb, plat)["CHIN"]) / 4.0)
    return Observation(f"{path} {where}: SSL tasks, {cipher}, {kb_ssl:.3g} KB", s[0] * 1e6 / n_ssl,
                       MEASUREMENT_RTOL, predict, tls_parameters(), "SSL-task CPU per message, µs"), None


def _channel_intervals(t, c, plat, path, obs, checks, notes) -> None:
    """Append each SMF interval's observation, check and notes (channel accounting ``c``)."""
    rec = _records(t, c)
    if np.any(rec < 0):
        notes.append(f"{path}: {int(np.sum(rec < 0))} channel accounting record(s) have no task statistics of "
                     "the same SMF interval (matched on LPAR, queue manager, date and time): not used")
    for q, lpar, end in sorted({(str(a), str(b), str(e)) for a, b, e in zip(c.qmgr, c.lpar, c.end)}):
        here = (c.qmgr == q) & (c.lpar == lpar) & (c.end == end) & (c.messages > 0)
        if not here.any():
            continue
        where = f"{q} {end}"
        moving = c.message_channel[here]
        if not moving.any():
            notes.append(f"{where}: only client (SvrConn) channels moved messages; the channel model prices "
                         "message channels between queue managers")
            continue
        if moving.all():
            check = _dispatcher_check(t, c, (q, lpar, end), here, plat, where)
            if check is not None:
                checks.append(check)
        o, note = _ssl_observation(t, c, (q, lpar, end), here, plat, path, where)
        if note is not None:
            notes.append(note)
        if o is not None:
            obs.append(o)


def smf_summary(tasks, channels=None, platform: str = "z16", path: str = "the SMF folder") -> dict:
    """What a site's channel-initiator statistics say, and the observations they make.

    Returns a dict with

    ``tasks``
        per queue manager and task type: intervals (active of all), tasks, mean requests/s,
        CPU per request (µs), largest busy fraction, elapsed per CPU time (sums over active
        intervals), and for dispatchers the most channels on one;
    ``elapsed_ratio``
        the SSL tasks' and dispatchers' elapsed per CPU time, :math:`\\sum e / \\sum c` over
        their active intervals, with its standard error from the spread between intervals,
        or None when none was active: the channel model's ``chin_task_elapsed_ratio``;
    ``observations``
        SSL-task CPU per message on message channels, one per interval that allows it (see
        below), as :class:`Observation` of the model's SSL-task demand
        :math:`(CHIN_{SSLCIPH} - CHIN_{none})/4` per message (:mod:`cryptoplan.model.zos.channel`: a
        transaction is four message ends over two LPARs, each encrypted or decrypted once by
        an SSL task);
    ``checks``
        dispatchers' and adapters' CPU per message against the model's unprotected
        channel-initiator cost per message :math:`CHIN_{none}/4` (the model's upper bound of
        their share: the task statistics leave out the channel initiator's other TCBs, so
        this is a check, not an observation);
    ``notes``
        why intervals gave no observation.

    An interval gives an SSL observation when its SSL tasks served requests, channel
    accounting of the same SMF interval shows SSL message channels (:data:`cryptoplan.model.site.smf.
    MESSAGE_CHANNEL_TYPES`) that moved messages, all with one cipher the model knows, and no
    SSL client (SvrConn) channel shared the SSL tasks.
    """
    try:
        plat = normalize_platform(platform)
    except ValueError as exc:
        raise CalibrationError(str(exc)) from None
    summary = _task_summary(tasks)
    ratio = _elapsed_ratio(tasks)
    obs: list[Observation] = []
    checks: list[dict] = []
    notes: list[str] = []
    if channels is None:
        notes.append(f"{path}: no channel accounting ({'SMF-QCST.csv'}): CPU per message cannot be formed "
                     "(collect SMF 116 class 4 channel accounting, STATCHL on the channels)")
    else:
        _channel_intervals(tasks, channels, plat, path, obs, checks, notes)
    return {"tasks": summary, "elapsed_ratio": ratio, "observations": obs, "checks": checks, "notes": notes}


def smf_measured(summary: dict) -> dict:
    """The parameters the SMF task statistics measure directly, for
    :func:`~cryptoplan.model.calibration.calibrate.calibrate`'s ``measured``.

    ``chin_task_elapsed_ratio`` from :func:`smf_summary`'s elapsed ratio.  The channel model
    needs a ratio of at least 1 (a task cannot take less elapsed time than CPU); a measured
    ratio below 1 (SMF's task times are accumulated at different points of a request) stays
    at 1, and the report says so.

    Parameters
    ----------
    summary : dict
        A :func:`smf_summary` result.

    Returns
    -------
    dict
        name -> ``{"value", "stderr", "note"}`` (the ratio is dimensionless); empty when no
        SSL task or dispatcher was active.
    """
    r = summary.get("elapsed_ratio")
    if r is None:
        return {}
    value = max(r["value"], 1.0)
    note = (f"SSL tasks and dispatchers, {r['intervals']} active interval(s): elapsed / CPU = "
            f"{r['value']:.3f}" + (f" +- {r['stderr']:.2g}" if r["stderr"] is not None else ""))
    if r["value"] < 1.0:
        note += "; below 1, which one task cannot be, so the model's minimum 1 is kept"
    return {"chin_task_elapsed_ratio": {"value": value, "stderr": r["stderr"], "note": note}}
