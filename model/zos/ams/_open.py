"""The open AMS network at a planned transaction rate (:func:`ams_plan`): CPU, utilizations,
waits and the counts needed.

Part of :mod:`cryptoplan.model.zos.ams` (the package documents the model).
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..._numeric import ratio
from ..._validate import index_text, UnstableQueueError
from ...domains import CARDS, MAX_UTILIZATION, PLANNED_TX_RATE, PROCESSORS, SERVICE_SCV
from ...queueing.mgc import mgc_wait_by_scv
from ..stations import count_needed, pooled_wait, request_mix
from ._closed import as_scalars, station_demands
from ._scenario import (AMS_ADDRESS_SPACES, FUNCTIONS, ON_CARD, other_utilization, resource_count, RESOURCES,
    validated_scenario)

__all__ = ["request_scv", "card_wait_ms", "AMSPlan", "MAX_REQUIRED", "whole_count", "count_needed",
           "overload_error", "ams_plan"]

def request_scv(req, t, card) -> np.ndarray:
    """Squared coefficient of variation of the service time of a card type's request mix.

    Each function's time is constant (seed 001: EXEC TIME "remains similar
    regardless of message size"), so the mix is a discrete distribution
    (:func:`~cryptoplan.model.zos.stations.request_mix`):

    .. math:: c_s^2 = \\frac{\\sum_f p_f t_f^2}{(\\sum_f p_f t_f)^2} - 1, \\qquad
              p_f = n_f / \\sum_g n_g
    """
    on = ON_CARD[card].astype(float).reshape((-1,) + (1,) * (np.ndim(req) - 1))
    return request_mix(on * req, t)[2]


def card_wait_ms(lam, per_txn, card_ms, other, cards, scv):
    """Mean queueing per transaction (ms) at one card type: M/G/c on this LPAR's requests and
    other LPARs' (taken at the same mean service time, so that their utilization is ``other``;
    :func:`~cryptoplan.model.zos.stations.pooled_wait`).

    .. math:: \\lambda_{tot} = \\lambda n + u_{other} c / s, \\qquad
              W = n\\, W_q^{M/G/c}(\\lambda_{tot}, s, c_s^2), \\qquad s = D / n
    """
    s_ms = ratio(card_ms, per_txn)
    own = np.where(card_ms > 0, lam * per_txn, 0.0)
    return pooled_wait(own, s_ms / 1000.0, scv, cards, np.where(card_ms > 0, other, 0.0)) * per_txn * 1000.0


@dataclass(frozen=True)
class AMSPlan:
    """The open network at a planned rate (arrays shaped like the broadcast inputs; ms, µs, fractions).

    Attributes
    ----------
    tx_rate : planned transactions per second.
    cost_us : CPU µs per transaction by address space ({"total", "application", "AMSM", "MSTR"}),
        MSTR's per-second cost spread over ``tx_rate``.
    processors_busy : general processors busy (CPU seconds per second), MSTR's administration included.
    processor_utilization : ``processors_busy / processors``.
    coprocessor_utilization, accelerator_utilization : RMF summary utilization per card
        (requests x EXEC TIME / cards), other LPARs' load included.
    accelerator_me_utilization, accelerator_crt_utilization : RMF's by-function rows (this LPAR).
    coprocessor_rate, accelerator_me_rate, accelerator_crt_rate : requests per second (this LPAR).
    coprocessor_exec_ms, accelerator_exec_ms : mean EXEC TIME per request, as RMF's average.
    coprocessor_scv, accelerator_scv : squared coefficient of variation of the request mix's service.
    processor_wait_ms, coprocessor_wait_ms, accelerator_wait_ms : queueing per transaction.
    response_ms : path + CPU + card time + waits, one transaction.
    processors_required, coprocessors_required, accelerators_required : smallest counts meeting
        ``max_utilization`` (0 cards when the workload sends none).
    bottleneck : the resource with the highest utilization.
    """

    tx_rate: np.ndarray
    cost_us: dict
    processors_busy: np.ndarray
    processor_utilization: np.ndarray
    coprocessor_utilization: np.ndarray
    accelerator_utilization: np.ndarray
    accelerator_me_utilization: np.ndarray
    accelerator_crt_utilization: np.ndarray
    coprocessor_rate: np.ndarray
    accelerator_me_rate: np.ndarray
    accelerator_crt_rate: np.ndarray
    coprocessor_exec_ms: np.ndarray
    accelerator_exec_ms: np.ndarray
    coprocessor_scv: np.ndarray
    accelerator_scv: np.ndarray
    processor_wait_ms: np.ndarray
    coprocessor_wait_ms: np.ndarray
    accelerator_wait_ms: np.ndarray
    response_ms: np.ndarray
    processors_required: np.ndarray
    coprocessors_required: np.ndarray
    accelerators_required: np.ndarray
    bottleneck: np.ndarray


MAX_REQUIRED = 10000


def whole_count(k, what, lam):
    """Required counts as integers; above MAX_REQUIRED (or overflowing) a ValueError naming tx_rate."""
    k = np.asarray(k, dtype=float)
    bad = ~(k <= MAX_REQUIRED)
    if bad.any():
        i = np.unravel_index(np.argmax(bad), bad.shape) if bad.ndim else ()
        lam = np.broadcast_to(np.asarray(lam, dtype=float), k.shape)
        raise InputError(f"more than {MAX_REQUIRED:,} {what} would be needed at tx_rate {float(lam[i]):g}/s"
                         f"{f' (at index {index_text(i)})' if bad.ndim else ''}: check tx_rate (transactions per "
                         "second) and the targets")
    out = k.astype(np.int64)
    return int(out) if out.ndim == 0 else out


def overload_error(name, util, count, needed, lam, unit, rate=("tx_rate", "transactions per second")) -> None:
    """Raise UnstableQueueError naming the resource, its utilization and how many are needed.

    ``rate`` is the rate argument's name and what it counts, as the message says them.  For
    arrays the error names the busiest element and carries the mask of overloaded elements and
    each one's own (scalar-call) message.
    """
    rate_name, rate_unit = rate
    bad = util >= 1.0
    if not bad.any():
        return
    util, count, needed, lam = np.broadcast_arrays(util, count, needed, lam)

    def message(u: float, c: float, k: float, rate: float, where: str = "") -> str:
        busy = f"{u:.0%} busy" if u < 100.0 else "more than 100 times as busy as they can be"
        more = (f"{int(k):,} {unit} needed to stay below 100%" if k <= MAX_REQUIRED
                else f"more than {MAX_REQUIRED:,} {unit} would be needed: check {rate_name} ({rate_unit})")
        one = unit[:-1] if c == 1 and unit.endswith("s") else unit
        return (f"{name} would be {busy} at {rate_name} {rate:g}/s with "
                f"{c:g} {one}{where}: the rate cannot be carried; {more}")
    # element values as Python floats, flat: a sweep asks for one message per failing element
    u, c, k, rate = (np.asarray(a, dtype=float).ravel().tolist() for a in (util, count, needed, lam))
    if util.ndim == 0:
        raise UnstableQueueError(message(u[0], c[0], k[0], rate[0]))
    i = int(np.argmax(np.where(bad, util, -1.0)))
    where = f" (at index {index_text(np.unravel_index(i, util.shape))})"
    said: dict = {}     # elements of a sweep repeat (u, c, k, rate): each message is made once

    def element_message(j: int) -> str:
        key = (u[j], c[j], k[j], rate[j])
        return said.get(key) or said.setdefault(key, message(*key))
    raise UnstableQueueError(message(u[i], c[i], k[i], rate[i], where), mask=bad,
                             element_message=element_message)


def _refuse_overload(lam, u_max, *pools) -> None:
    """Raise for a pool at or over 100% (:func:`overload_error`), or whose other LPARs' share
    leaves no room below ``u_max``.  ``pools``: (name, unit, utilization, count, load in
    servers' worth, other LPARs' utilization) per resource."""
    for name, unit, util, count, load, other in pools:
        unit_plural = unit if unit.endswith("s") else unit + "s"
        overload_error(name, util, count, count_needed(load, other, 1.0 - 1e-9), lam, unit_plural)
    for name, unit, _, _, _, other in pools[1:]:
        if np.any(other >= u_max):
            raise InputError(f"other_{unit}_util ({float(np.max(other)):g}) leaves no room below max_utilization "
                             f"({float(np.min(u_max)):g}): no number of shared {unit}s meets the target")


def _card_pool(card, lam, req, t, load_ms, other, cards, scv_in) -> tuple:
    """(requests per transaction, mean EXEC TIME ms, service SCV, queueing wait ms) of one card
    pool: the mix's SCV (:func:`request_scv`) unless ``scv_in`` is given."""
    n = np.tensordot(ON_CARD[card].astype(float), req, axes=1)
    s = ratio(load_ms, n)
    scv = request_scv(req, t, card) if scv_in is None else np.broadcast_to(scv_in, lam.shape)
    return n, s, scv, card_wait_ms(lam, n, load_ms, other, cards, scv)


def ams_plan(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None, recipients=1,
             processors=None, coprocessors=None, accelerators=None, platform="z16",
             other_coprocessor_util=0.0, other_accelerator_util=0.0, max_utilization=0.7,
             service_scv=None, card_generation="CEX8S") -> AMSPlan:
    """The AMS network at a planned transaction rate (open): CPU, utilizations, waits, counts needed.

    Per resource with :math:`m` servers and demand :math:`D` per transaction:

    .. math::

        U = \\frac{\\lambda D}{m} + u_{other}, \\qquad
        W_q = W_q^{M/G/m}(\\lambda_{total}, \\bar s, c_s^2), \\qquad
        m_{req} = \\min\\{k : \\lambda D / k + u_{other} \\le U_{max}\\}

    Processors carry the transactions' CPU and MSTR's administration
    (:math:`O_{MSTR}/10^6` processors); their wait is M/M/m on the CPU per
    transaction (a coarse view: a transaction's CPU is several dispatches).
    Cards are RMF's: utilization = requests x EXEC TIME per card; their wait
    is M/G/m with the service-time SCV of the request mix (:func:`request_scv`)
    unless ``service_scv`` is given, other LPARs' requests taken at the same
    mean service time.

    Parameters
    ----------
    tx_rate : float or array_like
        Planned transactions per second, > 0.
    processors, coprocessors, accelerators : int, optional
        As :func:`ams_throughput`.
    max_utilization : float
        Target ceiling for the ``*_required`` counts, (0, 1).
    service_scv : float, optional
        Card service-time SCV to use instead of the mix's, >= 0.
    Other parameters as :func:`ams_throughput`.

    Returns
    -------
    AMSPlan

    Raises
    ------
    UnstableQueueError
        If the processors or either card type would be 100% busy or more: the
        message names the resource and how many would carry the rate.
    """
    lam = np.asarray(PLANNED_TX_RATE.check(tx_rate), dtype=float)
    w = validated_scenario(policy, key_type, key_size, message_kb, key_reuse, recipients, platform, card_generation)
    procs = resource_count(PROCESSORS, "processors", processors, "processors")
    cops = resource_count(CARDS, "coprocessors", coprocessors, "coprocessors")
    accs = resource_count(CARDS, "accelerators", accelerators, "accelerators")
    cop_o = other_utilization("other_coprocessor_util", other_coprocessor_util)
    acc_o = other_utilization("other_accelerator_util", other_accelerator_util)
    u_max = np.asarray(MAX_UTILIZATION.check(max_utilization), dtype=float)
    scv_in = None if service_scv is None else np.asarray(SERVICE_SCV.check(service_scv), float)
    d = station_demands(w, procs, cop_o, acc_o)
    lam, procs, cops, accs, cop_o, acc_o, u_max = np.broadcast_arrays(
        lam, procs, cops, accs, cop_o, acc_o, u_max, np.empty(np.shape(d["cpu_ms"])))[:7]
    req, t = d["req"], d["t"]
    req, t = np.broadcast_to(req, (4, *lam.shape)), np.broadcast_to(t, (4, *lam.shape))

    busy = lam * d["cpu_ms"] / 1000.0 + d["background"]
    u_cpu = busy / procs
    load_cop = lam * d["cop_ms"] / 1000.0
    load_acc = lam * d["acc_ms"] / 1000.0
    u_cop = load_cop / cops + cop_o
    u_acc = load_acc / accs + acc_o
    _refuse_overload(lam, u_max, ("general processors", "processors", u_cpu, procs, busy, 0.0),
                     ("coprocessors", "coprocessor", u_cop, cops, load_cop, cop_o),
                     ("accelerators", "accelerator", u_acc, accs, load_acc, acc_o))
    n_cop, s_cop, scv_cop, w_cop = _card_pool("coprocessor", lam, req, t, d["cop_ms"], cop_o, cops, scv_in)
    n_acc, s_acc, scv_acc, w_acc = _card_pool("accelerator", lam, req, t, d["acc_ms"], acc_o, accs, scv_in)
    # processors: the transactions' CPU as one M/M/m job each, MSTR's load added at the same mean
    cpu_s = d["cpu_ms"] / 1000.0
    lam_cpu = ratio(busy, cpu_s)
    w_cpu = mgc_wait_by_scv(lam_cpu, cpu_s, procs, 1.0) * 1000.0

    fn = {f: i for i, f in enumerate(FUNCTIONS)}
    me_rate, crt_rate = lam * req[fn["RSA_ME"]], lam * req[fn["RSA_CRT"]]
    cost = {"application": d["cpu_us"]["application"], "AMSM": d["cpu_us"]["AMSM"],
            "MSTR": d["cpu_us"]["mstr_per_s"] / lam}
    cost["total"] = cost["application"] + cost["AMSM"] + cost["MSTR"]
    utils = np.stack([u_cpu, u_cop, u_acc])
    out = dict(
        tx_rate=lam, cost_us={k: cost[k] for k in AMS_ADDRESS_SPACES},
        processors_busy=busy, processor_utilization=u_cpu,
        coprocessor_utilization=u_cop, accelerator_utilization=u_acc,
        accelerator_me_utilization=me_rate * t[fn["RSA_ME"]] / 1000.0 / accs,
        accelerator_crt_utilization=crt_rate * t[fn["RSA_CRT"]] / 1000.0 / accs,
        coprocessor_rate=lam * n_cop, accelerator_me_rate=me_rate, accelerator_crt_rate=crt_rate,
        coprocessor_exec_ms=s_cop, accelerator_exec_ms=s_acc,
        coprocessor_scv=scv_cop, accelerator_scv=scv_acc,
        processor_wait_ms=w_cpu, coprocessor_wait_ms=w_cop, accelerator_wait_ms=w_acc,
        response_ms=d["path_ms"] + d["cpu_ms"] + w_cpu + d["cop_ms"] + d["acc_ms"] + w_cop + w_acc,
        processors_required=count_needed(busy, 0.0, u_max),
        coprocessors_required=count_needed(load_cop, cop_o, u_max),
        accelerators_required=count_needed(load_acc, acc_o, u_max),
        bottleneck=np.asarray(RESOURCES)[np.argmax(utils, axis=0)],
    )
    fields: dict[str, Any] = {k: (as_scalars(v) if k != "bottleneck" else (str(v) if np.ndim(v) == 0 else v))
                              for k, v in out.items()}
    return AMSPlan(**fields)
