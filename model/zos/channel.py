"""MQ channel throughput over SSL tasks and dispatchers (SSLCIPH) vs AT-TLS socket SRBs.

A request/reply workload between two queue managers on two LPARs runs over
channel pairs: per pair, each queue manager has the sender channel of its
requests (or replies) and the receiver channel of the other side's.  Every
transaction is one request and one reply of ``message_kb`` each.

Where the time of a transaction goes (seed 002 [1]_ and the reference facts):

* **SSLCIPH.**  "MQ has dedicated tasks for the network interaction
  (dispatchers) and separate tasks for the encryption workload (SSL tasks)";
  "each channel is tied to one SSL task, as to a dispatcher".  On each LPAR a
  transaction visits the SSL task of the outgoing channel (encrypt) and of
  the incoming one (decrypt), and the two channels' dispatchers.  Channels
  are spread round-robin over SSLTASKS and CHIDISPS, so channels share a
  task and queue for it.
* **AT-TLS.**  "an SRB per socket processes the request - this processing
  involves both the encryption and sending of the data": the protection
  runs on the socket's own SRB, which no other channel uses; dispatchers
  still do the network work.  The time the blocked socket then takes to
  send (seed 002's congestion-window effect) is in the fitted AT-TLS round
  trip, and so in the delay below, not on the SRB station: no published
  figure separates it.  With a task per channel, SSLCIPH and AT-TLS
  therefore differ only through their demands and fitted round trips; the
  model's own mechanism is the sharing of SSL tasks and dispatchers.
* Everything else (network, TCP/IP stack, queue manager) is a delay that
  no other channel queues for.

Service demands (µs per transaction and visit, :math:`\\rho` the task elapsed /
CPU ratio) come from the fitted CPU model :func:`cryptoplan.model.zos.tls.tls_cost_parts_us`
(both LPARs, so each of the four protection steps is a quarter of the
SSLCIPH increment and each of the four network steps a quarter of the
unprotected channel-initiator cost: an upper bound on the dispatchers' share,
as it includes the adapters' MQ API work, for which no separate figure is
published):

.. math::

    D_{ssl} &= \\rho\\,\\tfrac14\\,(CHIN_{SSLCIPH} - CHIN_{none}), \\qquad
    D_{disp} = \\rho\\,\\tfrac14\\,CHIN_{none}, \\\\
    D_{enc} &= \\tfrac12\\,(CHIN_{ATTLS} - CHIN_{none}), \\qquad
    D_{dec} = \\tfrac12\\,(TCPIP_{ATTLS} - TCPIP_{none}), \\\\
    Z &= RT_1 - 2 \\sum_{v} D_v \\;\\ge 0,

where :math:`RT_1` is the round trip of one transaction alone on one channel
pair (the fitted :func:`cryptoplan.model.zos.tls.tls_roundtrip_us`, or the user's own
measurement) and the sum runs over one LPAR's visits.  With one pair and one
requester the model returns :math:`1/RT_1` exactly; with more it solves the
closed network by Bard-Schweitzer MVA (:func:`cryptoplan.model.queueing.mva.mva_schweitzer`).

Assumptions a planner should know:

* seed 002 does not say how many requesters shared its channel pair (its
  XBATCHSZ of 5 at 1 MB says messages were at times queued behind each
  other), so :math:`RT_1` from the published table may include some
  queueing: the delay :math:`Z` is then over-stated and the gain from more
  tasks under-stated;
* the four protection steps of one transaction (encrypt and decrypt on
  each LPAR) are counted one after the other; for large messages MQ
  overlaps encrypting one chunk with sending another, so the delay is
  then under-stated;
* :math:`\\rho` is the parameter ``chin_task_elapsed_ratio``, 1 as published (task
  time = its CPU time): seed 002's runs were "neither CPU nor network constrained";
  IBM's own SMF 115 sample statistics (mq-smf-csv's test dumps) show dispatchers'
  elapsed within a few percent of their CPU.  The reference example of
  80 µs CPU and 364 µs elapsed per SSL-task request (a workload of unstated
  size and cipher) is inconsistent with this serial decomposition of seed
  002's 1 MB transaction (the task time would exceed the whole round trip);
  measure it with ``cryptoplan calibrate --smf`` or pass ``task_elapsed_ratio``;
* the LPARs are symmetric (same SSLTASKS, CHIDISPS and assignment on both).

References
----------
.. [1] A. Sharkey, "MQ for z/OS using AT-TLS to provide channel encryption", 2021 (seed 002).
.. [2] E. D. Lazowska et al., *Quantitative System Performance*, Prentice-Hall, 1984, §7.4.
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError

import numpy as np

from ..domains import (CHANNEL_PAIRS, CHANNEL_REQUESTERS, CPS, DISPATCHERS, IDLE_SSLTASKS, MESSAGE_KB,
                       ROUNDTRIP_MESSAGE_KB, ROUNDTRIP_US, SSLTASKS, TASK_ELAPSED_RATIO)
from ..figures import figure
from ..queueing.mva import mva_schweitzer
from ..remember import Remembered
from ..params import CIPHERS, binding, normalize_cipher, normalize_mode, param, parameter_sets, using_values
from .tls import normalize_platform, tls_cost_parts_us, tls_cost_us, tls_roundtrip_us

__all__ = ["channel_demands_us", "channel_pipeline", "channel_throughput"]


def _rt_measured(mode: str, cipher: str | None) -> bool:
    """Whether seed 002 published a round trip for this mode and cipher."""
    return mode != "none" and cipher is not None and not CIPHERS[cipher][1]


def channel_demands_us(mode, cipher, message_kb, roundtrip_us=None, task_elapsed_ratio=None,
                       platform="z16") -> dict:
    """Per-visit service demands and the delay of one transaction on one LPAR (µs).

    Parameters
    ----------
    mode : {"none", "SSLCIPH", "ATTLS"}
    cipher : str
        IBM cipher name (ignored for mode none).
    message_kb : float
        Request and reply size in KB: 0..1024 with the published round trip,
        0..102400 with ``roundtrip_us``.
    roundtrip_us : float, optional
        Round trip of one transaction alone on one channel pair (µs).  Default:
        the fitted seed 002 round trip, published for the software cipher
        TLS_CHACHA20_POLY1305_SHA256 only; other ciphers and mode none need it.
    task_elapsed_ratio : float, optional
        SSL-task and dispatcher elapsed time per unit of their CPU time, >= 1.  Default:
        the parameter ``chin_task_elapsed_ratio`` (1, or what ``cryptoplan calibrate
        --smf`` measured on the site's SMF 115 task statistics).
    platform : {"z14", "z15", "z16"}
        Machine of the CPU costs (z16 uses the z15 costs, see
        :func:`cryptoplan.model.zos.tls.tls_cost_parts_us`); the published round trip is seed
        002's z15, so on z14 the same round trip leaves less delay.

    Returns
    -------
    dict
        ``ssl_task`` (each of the 2 SSL-task visits per LPAR), ``dispatcher``
        (each of 2 visits), ``srb_encrypt`` and ``srb_decrypt`` (AT-TLS socket
        SRBs, 1 visit each per LPAR), ``delay`` and ``roundtrip`` (µs).  See the
        module docstring for the formulas.

    Raises
    ------
    ValueError
        If the demands of both LPARs exceed the round trip (then the round trip
        and the task statistics contradict each other).
    """
    sets = _parameter_sets()
    if sets is not None:      # k parameter sets in force: each set's demands, stacked (shape (k,))
        return _stacked(sets, channel_demands_us, (mode, cipher, message_kb, roundtrip_us, task_elapsed_ratio,
                                                   platform))
    m = normalize_mode(mode)
    c = None if m == "none" else normalize_cipher(cipher)
    plat = normalize_platform(platform)
    rho = TASK_ELAPSED_RATIO.check(param("chin_task_elapsed_ratio") if task_elapsed_ratio is None
                                   else task_elapsed_ratio, scalar=True)
    if roundtrip_us is None:
        if not _rt_measured(m, c):
            raise InputError(
                "roundtrip_us is required for this mode and cipher: Sharkey's AT-TLS channels blog (2021) published round trips "
                "only for mode SSLCIPH or ATTLS with TLS_CHACHA20_POLY1305_SHA256 (the software "
                f"cipher), got mode={m}, cipher={c}; pass the round trip of one transaction alone "
                "on one channel pair in µs")
        kb = ROUNDTRIP_MESSAGE_KB.check(message_kb, scalar=True)
        rt = float(tls_roundtrip_us(m, c, kb))
    else:
        kb = MESSAGE_KB.check(message_kb, scalar=True)
        rt = ROUNDTRIP_US.check(roundtrip_us, scalar=True)
    none = tls_cost_parts_us("none", None, kb, plat)
    out = {"ssl_task": 0.0, "dispatcher": rho * none["CHIN"] / 4.0, "srb_encrypt": 0.0, "srb_decrypt": 0.0}
    if m == "SSLCIPH":
        out["ssl_task"] = rho * (tls_cost_parts_us(m, c, kb, plat)["CHIN"] - none["CHIN"]) / 4.0
    elif m == "ATTLS":
        parts = tls_cost_parts_us(m, c, kb, plat)
        out["srb_encrypt"] = (parts["CHIN"] - none["CHIN"]) / 2.0
        out["srb_decrypt"] = (parts["TCPIP"] - none["TCPIP"]) / 2.0
    busy = 2.0 * (2.0 * out["ssl_task"] + 2.0 * out["dispatcher"] + out["srb_encrypt"] + out["srb_decrypt"])
    if busy > rt:
        raise InputError(
            f"the task and SRB time of one transaction ({busy:.0f} µs over both LPARs) exceeds the round "
            f"trip ({rt:.0f} µs): lower task_elapsed_ratio (got {rho:g}) or check roundtrip_us")
    out["delay"] = rt - busy
    out["roundtrip"] = rt
    return out


def _network(m, pairs, tasks, disps, dem):
    """Station index and demand of each pair's visits on both LPARs.

    Stations of one LPAR: dispatchers ``0..D-1``, then SSL tasks (SSLCIPH) or
    the socket SRBs, two per pair (AT-TLS); the second LPAR's are the same
    layout shifted by the first's count (the LPARs mirror each other).
    """
    # Tasks beyond the channels' count are never used (each channel is tied to one).
    tasks, disps = min(tasks, 2 * pairs), min(disps, 2 * pairs)
    p = np.arange(pairs)
    out_ch, in_ch = 2 * p, 2 * p + 1  # the pair's two channels on each LPAR
    cols_s = [out_ch % disps, in_ch % disps]
    cols_d = [dem["dispatcher"], dem["dispatcher"]]
    if m == "SSLCIPH":
        cols_s += [disps + out_ch % tasks, disps + in_ch % tasks]
        cols_d += [dem["ssl_task"], dem["ssl_task"]]
        per_lpar = disps + tasks
    elif m == "ATTLS":  # each socket's own SRB: stations no other pair visits
        cols_s += [disps + out_ch, disps + in_ch]
        cols_d += [dem["srb_encrypt"], dem["srb_decrypt"]]
        per_lpar = disps + 2 * pairs
    else:
        per_lpar = disps
    one = np.stack(cols_s, axis=1)
    station = np.concatenate([one, one + per_lpar], axis=1)
    demand = np.broadcast_to(np.asarray(cols_d + cols_d, dtype=float), station.shape)
    return station, demand, per_lpar, tasks, disps


# Answers remembered for the last argument sets under the same parameter values: a sweep under
# parameter draws asks each draw's throughput again in every chunk of scenarios (the channel's
# arguments rarely vary with a plan's growth), one Bard-Schweitzer MVA each time.
_ANSWERS = Remembered(4096)


def _answer_key(args: tuple):
    """The key of an argument set under the parameters in force: the values a
    :func:`~cryptoplan.model.params.using_values` block gives (floats, by their bits: its
    ``key()``), the parameter set (kept with the entry, so its id is no other object's); None when
    something is not a plain value."""
    over, params = binding()
    given = None if over is None else over.key()
    if over is not None and given is None:  # arrays of parameter sets
        return None
    try:
        # each argument with its type, a float by its bits: True and 1, or -0.0 and 0.0, are
        # other arguments (the checks may refuse one and take the other)
        key = (tuple((type(a), a.hex() if type(a) is float else a) for a in args), given, id(params))
        hash(key)
    except (TypeError, ValueError):         # arrays of parameter sets, unhashable arguments
        return None
    return key


def channel_pipeline(mode, cipher, message_kb, channel_pairs=1, requesters=1, ssltasks=None,
                     dispatchers=None, platform="z16", cps=None, roundtrip_us=None,
                     task_elapsed_ratio=None) -> dict:
    """Throughput, round trip and task utilizations of request/reply traffic over MQ channels.

    Parameters
    ----------
    mode, cipher, message_kb, platform, roundtrip_us, task_elapsed_ratio
        As in :func:`channel_demands_us`.
    channel_pairs : int
        Sender-receiver channel pairs between the two queue managers, 1..4999
        (each queue manager runs two channels per pair; MAXCHL allows 9999,
        ``ref_maxchl_range``).
    requesters : int
        Requesters per pair, each with one request in flight (a closed loop), 1..1e+12.
    ssltasks : int
        SSLTASKS on each queue manager, >= 1; required for SSLCIPH.
    dispatchers : int, optional
        CHIDISPS on each queue manager, 1..9999 (``ref_chidisps_range``);
        default 5 (``ref_chidisps_default``).
    cps : float, optional
        General CPs of each LPAR, > 0.  When given, the CPs are a station of
        the network (:func:`_with_cpus`: the transaction's CPU on each LPAR,
        half of :func:`cryptoplan.model.zos.tls.tls_cost_us`), so the throughput queues for
        them and never exceeds what they serve; without it, no CPU limit.

    Returns
    -------
    dict
        ``throughput`` (transactions/s, all pairs), ``roundtrip_us`` (mean per
        transaction, excluding nothing: requesters do not think),
        ``ssl_task_utilization``, ``dispatcher_utilization`` and
        ``srb_utilization`` (the busiest SSL task, dispatcher and AT-TLS
        socket SRB, 0..1), ``cpu_utilization`` (per LPAR, or None
        without ``cps``), ``demands`` (:func:`channel_demands_us`) and
        ``method`` ("exact" for one pair and one requester, else
        "Bard-Schweitzer MVA").
    """
    args = (mode, cipher, message_kb, channel_pairs, requesters, ssltasks, dispatchers, platform, cps,
            roundtrip_us, task_elapsed_ratio)
    sets = _parameter_sets()
    if sets is not None:      # k parameter sets in force: one MVA per set, each number stacked (shape (k,))
        return _stacked(sets, channel_pipeline, args)
    out = _ANSWERS.get(_answer_key(args), lambda: _pipeline(*args), keep=binding()[1])
    return {**out, "demands": dict(out["demands"])}     # the caller's own dicts


def _pipeline(mode, cipher, message_kb, channel_pairs, requesters, ssltasks, dispatchers, platform, cps,
              roundtrip_us, task_elapsed_ratio) -> dict:
    """:func:`channel_pipeline`, computed."""
    m = normalize_mode(mode)
    dem = channel_demands_us(m, cipher, message_kb, roundtrip_us, task_elapsed_ratio, platform)
    pairs = int(CHANNEL_PAIRS.check(channel_pairs, scalar=True))
    n = int(CHANNEL_REQUESTERS.check(requesters, scalar=True))
    if dispatchers is None:
        dispatchers = figure("ref_chidisps_default").value
    disps = int(DISPATCHERS.check(dispatchers, scalar=True))
    if m == "SSLCIPH":
        if ssltasks is None:
            raise InputError(f"ssltasks (SSLTASKS, a whole number {SSLTASKS.text()}) is required for mode SSLCIPH")
        tasks = int(SSLTASKS.check(ssltasks, scalar=True))
    else:
        tasks = 0
        if ssltasks is not None:
            IDLE_SSLTASKS.check(ssltasks, scalar=True)
    station, demand, per_lpar, used_tasks, used_disps = _network(m, pairs, max(tasks, 1), disps, dem)
    think = dem["delay"]
    n_stations = 2 * per_lpar
    cost = cp = None
    if cps is not None:
        cp = CPS.check(cps, scalar=True)
        cost = float(tls_cost_us(m, None if m == "none" else cipher, message_kb, platform=platform))
        station, demand, think = _with_cpus(station, demand, think, cost / 2.0, cp, n_stations, dem)
        n_stations += 2
    res = mva_schweitzer(np.full(pairs, n), station, demand, think_time=think, stations=n_stations)
    x_us = float(res.throughput.sum())                     # transactions per µs
    util = res.utilization[:per_lpar]                      # the LPARs mirror each other
    rest = util[used_disps:]
    out = {"throughput": x_us * 1e6, "roundtrip_us": pairs * n / x_us,
           "ssl_task_utilization": float(rest.max()) if m == "SSLCIPH" else 0.0,
           "srb_utilization": float(rest.max()) if m == "ATTLS" else 0.0,
           "dispatcher_utilization": float(util[:used_disps].max()),
           "cpu_utilization": None, "demands": dem,
           "method": "exact" if pairs * n == 1 else "Bard-Schweitzer MVA"}
    if cost is not None and cp is not None:      # both set when cps is given
        out["cpu_utilization"] = x_us * cost / 2.0 / cp
    return out


def _with_cpus(station, demand, think, cpu_us, cps, first, dem):
    """Add each LPAR's general CPs as a station every pair visits (Seidmann's multi-server split).

    A transaction uses ``cpu_us`` of CPU on each LPAR (half of
    :func:`cryptoplan.model.zos.tls.tls_cost_us`).  The CPs are ``cps`` servers: Seidmann's
    approximation replaces them by one server of demand :math:`D/c` and a
    delay :math:`D(1 - 1/c)` (for :math:`c \\ge 1`; below one CP, one server of
    demand :math:`D/c`).  The one-pair round trip already contains that CPU,
    so the delay loses :math:`2D` and one pair with one requester still
    takes the published round trip; under load, queueing for the CPs adds to
    it and the throughput cannot pass :math:`c/D` per LPAR.

    References
    ----------
    .. [1] A. Seidmann, P. J. Schweitzer, S. Shalev-Oren, "Computerized
       closed queueing network models of flexible manufacturing systems",
       Large Scale Systems 12, 1987.
    """
    rest = think - 2.0 * cpu_us
    if rest < 0.0:
        raise InputError(f"the round trip ({dem['roundtrip']:.0f} µs) is shorter than the task time and the "
                         f"CPU of one transaction on both LPARs ({dem['roundtrip'] - rest:.0f} µs): check "
                         "roundtrip_us and task_elapsed_ratio")
    q = cpu_us / cps
    split = cpu_us * (1.0 - 1.0 / cps) if cps >= 1.0 else 0.0
    pairs = station.shape[0]
    cpu_cols = np.column_stack([np.full(pairs, first), np.full(pairs, first + 1)])
    station = np.concatenate([station, cpu_cols], axis=1)
    demand = np.concatenate([np.asarray(demand, dtype=float), np.full((pairs, 2), q)], axis=1)
    return station, demand, rest + 2.0 * split


def channel_throughput(mode, cipher, message_kb, channel_pairs=1, requesters=1, ssltasks=None,
                       dispatchers=None, platform="z16", cps=None, roundtrip_us=None,
                       task_elapsed_ratio=None):
    """Request/reply transactions per second over MQ channel pairs (see :func:`channel_pipeline`).

    .. math:: X = \\sum_{pairs} \\frac{N}{Z + \\sum_v R_v}

    with residences :math:`R_v` at the SSL tasks, dispatchers and socket SRBs
    from Bard-Schweitzer MVA; :math:`1/RT_1` for one pair and one requester.  Inside a
    :func:`~cryptoplan.model.params.using_values` block that gives ``k`` values of some parameters
    (arrays), the ``k`` throughputs, shape ``(k,)``: one MVA per parameter set.

    Examples
    --------
    One pair, one requester, 32 KB with CHACHA20: the inverse of the fitted
    round trip; with 20 pairs on one SSL task, the task is the bottleneck.
    """
    args = (mode, cipher, message_kb, channel_pairs, requesters, ssltasks, dispatchers, platform, cps, roundtrip_us,
            task_elapsed_ratio)
    sets = _parameter_sets()
    if sets is None:
        return channel_pipeline(*args)["throughput"]
    out = np.empty(len(sets))
    for j, values in enumerate(sets):       # one MVA per parameter set (each remembered)
        with using_values(values):
            out[j] = channel_pipeline(*args)["throughput"]
    return out


def _stacked(sets, fn, args):
    """``fn(*args)`` under each parameter set of ``sets``, the answers stacked: a number becomes an
    array of ``k`` (one per set), a dict each of its values so, and text or None that every set
    agrees on stays as it is (a ``method`` that differs between sets is a list)."""
    outs = []
    for values in sets:
        with using_values(values):
            outs.append(fn(*args))

    def stack(xs):
        first = xs[0]
        if isinstance(first, dict):
            return {k: stack([x[k] for x in xs]) for k in first}
        if first is None or isinstance(first, str):
            return first if all(x == first for x in xs) else list(xs)
        return np.array([float(x) for x in xs])
    return stack(outs)


def _parameter_sets():
    """The parameter sets of the :func:`~cryptoplan.model.params.using_values` block in force
    (:func:`~cryptoplan.model.params.parameter_sets`); None without one, or with single values."""
    over, _ = binding()
    return None if over is None else parameter_sets(over)
