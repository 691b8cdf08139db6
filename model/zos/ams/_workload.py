"""An AMS workload validated once (:class:`AmsWorkload`) and the public functions of the
closed network that evaluate one.

Part of :mod:`cryptoplan.model.zos.ams` (the package documents the model).
"""

from __future__ import annotations

import numpy as np

from ...domains import CARDS, PLANNED_TX_RATE, PROCESSORS, REQUESTERS
from ._closed import (as_scalars, closed_stations, closed_throughput, demand_table, server_counts, space_codes,
    station_demands, stations_to)
from ._cpu import cpu_parts, mq_us, workload_factors
from ._operations import requests_per_txn, times_per_request
from ._scenario import other_utilization, resource_count, RESOURCES, validated_scenario

__all__ = ["AmsWorkload", "ams_message_cost_us", "ams_demands", "ams_throughput", "ams_bottleneck",
           "ams_cost_us", "ams_cost_at_rate_us"]

class AmsWorkload:
    """AMS scenarios whose inputs are validated once and evaluated under any parameter set.

    The functions :func:`ams_throughput`, :func:`ams_cost_at_rate_us`,
    :func:`ams_demands` and :func:`ams_message_cost_us` build one of these and
    ask it one question.  A caller that asks the same scenarios many questions,
    or the same questions under many parameter sets (the fit, calibration),
    builds it once: the policies, keys, sizes and platforms are normalized and
    checked here, and the figures-only quantities (platform factors) are read
    once per figures table; each method reads the parameters in force when it
    is called (:func:`cryptoplan.model.params.param`).

    Parameters
    ----------
    policy, key_type, key_size, message_kb, key_reuse, recipients, platform, card_generation
        As :func:`ams_throughput`; arrays broadcast together.

    Examples
    --------
    >>> w = AmsWorkload(["integrity", "privacy"], "RSA", 2048, 2.0)
    >>> bool(np.all(w.throughput() > 0))
    True
    """

    def __init__(self, policy, key_type, key_size, message_kb, key_reuse=None, recipients=1, platform="z16",
                 card_generation="CEX8S"):
        self._w = validated_scenario(policy, key_type, key_size, message_kb, key_reuse, recipients, platform,
                                     card_generation)

    @property
    def shape(self) -> tuple:
        """Broadcast shape of the scenarios (``()`` for one)."""
        return self._w.policy.shape

    def demands(self) -> dict:
        """Per-transaction station demands, as :func:`ams_demands` returns them."""
        return as_scalars(demand_table(station_demands(self._w, None, 0.0, 0.0)))

    def _closed(self, requesters, coprocessors, accelerators, processors, other_cop, other_acc):
        """(demands dict, throughput array) of the closed network, arguments checked."""
        n = resource_count(REQUESTERS, "requesters", requesters, None)
        servers = server_counts(resource_count(PROCESSORS, "processors", processors, "processors"),
                                resource_count(CARDS, "coprocessors", coprocessors, "coprocessors"),
                                resource_count(CARDS, "accelerators", accelerators, "accelerators"))
        d = station_demands(self._w, servers[0], other_utilization("other_coprocessor_util", other_cop),
                            other_utilization("other_accelerator_util", other_acc))
        return d, closed_throughput(d, n, servers)

    def throughput(self, requesters=1, coprocessors=None, accelerators=None, processors=None,
                   other_coprocessor_util=0.0, other_accelerator_util=0.0):
        """Transactions per second of *N* requesters, as :func:`ams_throughput`."""
        _, x = self._closed(requesters, coprocessors, accelerators, processors, other_coprocessor_util,
                            other_accelerator_util)
        return float(x) if x.ndim == 0 else x

    def closed_loop(self, requesters=1, coprocessors=None, accelerators=None, processors=None,
                    other_coprocessor_util=0.0, other_accelerator_util=0.0) -> dict:
        """Throughput of *N* requesters, the total CPU per transaction at it, and the demands.

        One evaluation of the network for the three answers :func:`ams_throughput`,
        :func:`ams_cost_us` (``address_space="total"``) and :func:`ams_demands` give
        separately: ``{"throughput": txn/s, "cost_us": µs, "demands": dict}``.
        """
        d, x = self._closed(requesters, coprocessors, accelerators, processors, other_coprocessor_util,
                            other_accelerator_util)
        parts = d["cpu_us"]
        cost = parts["application"] + parts["AMSM"] + parts["mstr_per_s"] / x
        return as_scalars({"throughput": x, "cost_us": cost, "demands": demand_table(d)})

    def cost_at_rate_us(self, tx_rate, address_space="total"):
        """CPU µs per transaction at ``tx_rate`` (txn/s, > 0), as :func:`ams_cost_at_rate_us`."""
        lam = np.asarray(PLANNED_TX_RATE.check(tx_rate), dtype=float)
        parts = cpu_parts(self._w)
        mstr = parts["mstr_per_s"] / lam
        space = space_codes(address_space)
        table = np.stack(np.broadcast_arrays(parts["application"] + parts["AMSM"] + mstr,
                                             parts["application"], parts["AMSM"], mstr))
        space = np.broadcast_to(space, table.shape[1:])
        out = np.take_along_axis(table, space[None].astype(np.int64), axis=0)[0]
        return float(out) if out.ndim == 0 else out

    def card_requests(self) -> tuple:
        """Card requests per transaction and EXEC TIME per request (ms), by card function.

        Returns
        -------
        (requests, exec_ms) : tuple of ndarray
            Each shaped ``(4, *shape)``, rows in the order of
            :data:`cryptoplan.model.zos.crypto.CARD_FUNCTIONS` (CCA_RSA, RSA_ME, RSA_CRT,
            CCA_ECC); times on the workload's card generation.  What :func:`ams_plan`
            adds up per card type.
        """
        return requests_per_txn(self._w), times_per_request(self._w)

    def cpu_parts_us(self) -> dict:
        """CPU µs per transaction by address space, without MSTR's administration, and that (µs/s).

        ``{"application", "AMSM", "mstr_per_s"}``: what :func:`ams_plan` charges the
        processors (``mstr_per_s`` once per second, whatever the rate).
        """
        return cpu_parts(self._w)

    def message_cost_us(self):
        """AMS CPU µs to protect and unprotect one message, as :func:`ams_message_cost_us`."""
        parts = cpu_parts(self._w)
        g_mq, _ = workload_factors(self._w)
        out = (parts["application"] - g_mq * mq_us(self._w.kb) + parts["AMSM"]) / 2.0
        return float(out) if out.ndim == 0 else out


def ams_message_cost_us(policy, message_kb, key_reuse=None, recipients=1, platform="z16"):
    """AMS CPU to protect and unprotect one message (µs), excluding the MQPUT/MQGET itself.

    The quantity the MQ for z/OS on z14 report tabulates (``ref_ams_cost_*``):
    a fixed interception cost per message, the asymmetric operations of
    :func:`ams_operations` at a CPU cost that differs between signatures and
    key wrapping, and CPACF hashing / encryption per KB:

    .. math::

        c = f + (n_{sign} + n_{verify})\\,c_{sig} + (n_{enc} + n_{dec})\\,c_{key}
            + KB\\,(h\\,[\\text{signs}] + e\\,[\\text{encrypts}])

    Parameters
    ----------
    policy : {"integrity", "privacy", "confidentiality"}
    message_kb : float or array_like
        Message size in KB, 0..102400.
    key_reuse, recipients
        As :func:`ams_operations`.
    platform : {"z13", "z14", "z15", "z16"}
        Machine generation: the z14 cost times the AMS factor of
        :func:`ams_platform_factors` (z14 is what the parameters are fitted to).

    Returns
    -------
    float or ndarray
        CPU µs per message (a request/reply transaction has two).
    """
    return AmsWorkload(policy, "RSA", 2048, message_kb, key_reuse, recipients, platform).message_cost_us()


def ams_demands(policy, key_type, key_size, message_kb, key_reuse=None, recipients=1, platform="z16",
                card_generation="CEX8S") -> dict:
    """Per-transaction demands of the AMS network's stations (ms), vectorized.

    Returns
    -------
    dict
        ``path_ms`` (delay station: :math:`z + n_{req} t_{call}`), ``cpu_ms``
        (general-processor time without MSTR's per-second cost),
        ``coprocessor_ms`` and ``accelerator_ms`` (card EXEC TIME),
        ``mstr_us_per_s`` (MSTR administration CPU per second) and
        ``requests`` (``{function: requests per transaction}``); floats or
        arrays of the broadcast shape.
    """
    return AmsWorkload(policy, key_type, key_size, message_kb, key_reuse, recipients, platform,
                       card_generation).demands()


def ams_throughput(policy, key_type, key_size, message_kb, key_reuse=None, requesters=1,
                   coprocessors=None, accelerators=None, recipients=1, processors=None, platform="z16",
                   other_coprocessor_util=0.0, other_accelerator_util=0.0, card_generation="CEX8S"):
    """AMS request/reply transactions per second of *N* requesters (closed network).

    One requester waits for each reply before the next request, so

    .. math:: X(1) = \\frac{1}{z + n_{req} t_{call} + D_{cpu} + D_{cop} + D_{acc}}

    and for :math:`N > 1` exact MVA over the processors, coprocessors and
    accelerators as multi-server stations (Reiser and Lavenberg, load-dependent
    with marginal probabilities: :func:`cryptoplan.model.queueing.mva.mva`).  The rate never
    exceeds what the processors or cards can serve:
    :math:`X \\le \\min(P/D_{cpu}, c/D_{cop}, a/D_{acc})`.

    Parameters
    ----------
    policy : {"integrity", "privacy", "confidentiality"}
    key_type : {"RSA", "NISTECC"}
    key_size : int
        Certificate key size in bits (RSA 1024-4096, NISTECC 192-521).
    message_kb : float
        Message size in KB (1 MB = 1024), 0..102400.
    key_reuse : float or "unlimited", optional
        Confidentiality key reuse.
    requesters : int
        Parallel requesters, each with one request outstanding (1..100,000).
    coprocessors, accelerators : int, optional
        Crypto Express cards in each mode available to the LPAR (1..64).  None:
        the configuration seed 001 measured (2 and 1, ``data/figures.csv``).
    recipients : int
        Recipients per message (1..10,000).
    processors : int, optional
        General processors of the LPAR (1..256).  None: the 3 dedicated CPs of
        the MQ for z/OS performance reports' LPAR (row ``ref_start_cfg_cps``).
    platform : {"z13", "z14", "z15", "z16"}
        Machine generation of the processors (the CPU demand; card times are
        Crypto Express 8S's, seed 001's z16).
    other_coprocessor_util, other_accelerator_util : float
        Fraction of each shared card other LPARs keep busy, [0, 1).
    card_generation : {"CEX6S", "CEX7S", "CEX8S"}
        Crypto Express generation (:func:`_generation`): card times are CEX8S's.

    Returns
    -------
    float or ndarray
        Transactions per second.
    """
    return AmsWorkload(policy, key_type, key_size, message_kb, key_reuse, recipients, platform,
                       card_generation).throughput(requesters, coprocessors, accelerators, processors,
                                                   other_coprocessor_util, other_accelerator_util)


def ams_bottleneck(policy, key_type, key_size, message_kb, key_reuse=None, requesters=1,
                   coprocessors=None, accelerators=None, recipients=1, processors=None, platform="z16",
                   other_coprocessor_util=0.0, other_accelerator_util=0.0, card_generation="CEX8S"):
    """The resource that caps the closed network's throughput: the largest demand per server.

    .. math:: \\arg\\max_k D_k / m_k, \\qquad X(N) \\to \\min_k m_k / D_k \\; (N \\to \\infty)

    Returns ``"processors"``, ``"coprocessors"`` or ``"accelerators"`` (a str,
    or an array of them), whatever N: with few requesters the path, not a
    resource, limits the rate, but adding requesters meets this one first.
    Arguments as :func:`ams_throughput`.
    """
    w = validated_scenario(policy, key_type, key_size, message_kb, key_reuse, recipients, platform, card_generation)
    resource_count(REQUESTERS, "requesters", requesters, None)
    servers = server_counts(resource_count(PROCESSORS, "processors", processors, "processors"),
                            resource_count(CARDS, "coprocessors", coprocessors, "coprocessors"),
                            resource_count(CARDS, "accelerators", accelerators, "accelerators"))
    d = station_demands(w, servers[0], other_utilization("other_coprocessor_util", other_coprocessor_util),
                        other_utilization("other_accelerator_util", other_accelerator_util))
    _, dem = closed_stations(d)
    shape = np.broadcast_shapes(dem.shape[1:], servers.shape[1:])
    dem, servers = stations_to(dem, shape), stations_to(servers, shape)
    out = np.asarray(RESOURCES)[np.argmax(dem / servers, axis=0)]
    return str(out) if out.ndim == 0 else out


def ams_cost_us(policy, key_type, key_size, message_kb, key_reuse=None, requesters=1,
                coprocessors=None, accelerators=None, recipients=1, address_space="total",
                platform="z16", processors=None, other_coprocessor_util=0.0, other_accelerator_util=0.0,
                card_generation="CEX8S"):
    """CPU per AMS transaction (µs) at the rate *N* requesters reach (closed loop).

    What seed 001 measured: MSTR's administration CPU per second
    :math:`O_{MSTR}` spread over the closed-loop throughput
    :math:`X(N)` of :func:`ams_throughput`,

    .. math:: c = c_{app} + c_{AMSM} + O_{MSTR} / X(N)

    so it equals :func:`ams_cost_at_rate_us` at ``tx_rate`` = X(N) and differs
    from it at any other rate by :math:`O_{MSTR}(1/X(N) - 1/\\lambda)` only.

    Parameters
    ----------
    address_space : {"total", "application", "AMSM", "MSTR"}
        ``application``: MQ API work without AMS, AMS interception and
        symmetric hashing and encryption (CPACF); ``AMSM``: asymmetric-operation handling;
        ``MSTR``: the queue manager's administration cost per second spread
        over the transaction rate.
    platform : {"z13", "z14", "z15", "z16"}
        Machine generation.  The parameters are fitted to the z14 report's
        costs; the MQ part (MQ API work, MSTR) and the AMS part (interception,
        CPACF, AMSM) are multiplied by :func:`ams_platform_factors`.
    Other parameters as :func:`ams_throughput`.

    Returns
    -------
    float or ndarray
        CPU microseconds per transaction.
    """
    x = ams_throughput(policy, key_type, key_size, message_kb, key_reuse, requesters, coprocessors,
                       accelerators, recipients, processors, platform, other_coprocessor_util,
                       other_accelerator_util, card_generation)
    return ams_cost_at_rate_us(x, policy, key_type, key_size, message_kb, key_reuse, recipients,
                               address_space, platform)


def ams_cost_at_rate_us(tx_rate, policy, key_type, key_size, message_kb, key_reuse=None, recipients=1,
                        address_space="total", platform="z16"):
    """CPU per AMS transaction (µs) at a planned rate, in total or by address space.

    .. math:: c(\\lambda) = c_{app} + c_{AMSM} + O_{MSTR} / \\lambda

    Parameters
    ----------
    tx_rate : float or array_like
        Planned transactions (request/reply) per second, > 0.
    address_space : {"total", "application", "AMSM", "MSTR"}
        As :func:`ams_cost_us`.
    Other parameters as :func:`ams_throughput`.

    Returns
    -------
    float or ndarray
        CPU microseconds per transaction at ``tx_rate``.  Whether the
        processors can carry the rate is :func:`ams_plan`'s question.
    """
    lam = PLANNED_TX_RATE.check(tx_rate)
    return AmsWorkload(policy, key_type, key_size, message_kb, key_reuse, recipients,
                       platform).cost_at_rate_us(lam, address_space)
