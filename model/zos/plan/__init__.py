"""The whole system: every crypto workload on the shared cards and processors, now and as it grows.

A planner's LPAR runs many workloads at once (AMS-protected applications, MQ
channel traffic, the TLS handshakes of CICS, z/OSMF or DRDA servers,
channel-start storms, and what other LPARs put on shared cards) and they meet
at the same three stations.  A plan composes the per-workload models; it
derives nothing again:

=================  ==============================================================  ==========================
kind               per unit of its ``rate``                                        from
=================  ==============================================================  ==========================
``ams``            card requests by function and CPU by address space per           :class:`~.ams.AmsWorkload`
                   request/reply transaction; MSTR's administration per second      (as :func:`~.ams.ams_plan`)
``channel``        CPU (MSTR, CHIN, TCPIP; both ends, as published) per            :func:`~.tls.tls_cost_us`
                   request/reply transaction; no card work (bulk ciphers run on
                   CPACF)
``handshakes``     card time per full handshake (resumed ones use none), CPU per   :func:`~.tls.handshake_card_utilization`,
                   handshake: a baseline times :func:`~.tls.handshake_cpu_factor`   :func:`~.tls.handshake_cpu_factor`
``channel_starts`` card time and CPU (CHIN, TCPIP) per MQ channel start             :func:`~.tls.channel_start_card_utilization`,
                                                                                   :func:`~.tls.channel_start_cost_us`
``measured``       what the planner measured and cannot attribute: requests on a   RMF
                   card at their EXEC TIME, a card or processor utilization, or
                   CPU µs per unit of work
=================  ==============================================================  ==========================

Per resource with :math:`k` installed servers, workloads :math:`i` at rates
:math:`\\lambda_i` with demand :math:`D_i` (cards' or processors' worth per
unit of rate) and the share :math:`u_o` other LPARs keep busy:

.. math::

    U = \\frac{\\sum_i \\lambda_i D_i + B}{k} + u_o, \\qquad
    k_{req} = \\min\\{k : U(k) \\le U_{max}\\}

with :math:`B` the load that does not follow a rate (MQ MSTR's administration,
once per queue manager).  Utilization is RMF's summary utilization: requests x
EXEC TIME per card for the Crypto Express pools (the accelerator's ME and CRT
rows likewise), CPU seconds per second per processor for the LPAR.

Waits: a pool serves one FCFS stream, the mixture of every workload's requests.
Each (workload, card function) is a class of constant service time :math:`t_j`
at request rate :math:`r_j`; the mixture's mean and SCV are

.. math:: \\bar s = \\frac{\\sum_j r_j t_j}{\\sum_j r_j}, \\qquad
          c_s^2 = \\frac{\\sum_j r_j t_j^2 / \\sum_j r_j}{\\bar s^2} - 1

and :func:`~.mgc.mgc_wait_by_scv` gives one wait per request :math:`W`
(other LPARs' load taken at the same mean service time).  A workload's
queueing delay per unit is :math:`\\sum_{pool} n_{i,pool} W_{pool}` plus one
processor wait (its CPU per unit as one job; the processors' jobs are a mixture
of exponentials, :math:`c_s^2 = 2 \\sum p_j s_j^2 / \\bar s^2 - 1`).  Alone, a
workload gives exactly its single-workload answers; together, loads add.

Growth: with a yearly growth :math:`g_i`, :math:`\\lambda_i(t) = \\lambda_i
(1 + g_i)^{t/12}` at :math:`t` months.  Each resource's utilization is then a
sum of exponentials in :math:`t`, convex, so the months until it reaches its
target is the one crossing from below, found by bisection (no stepping); the
*headroom* is the common growth factor of every rate that brings it to the
target.  An overloaded resource is not an error here: the plan still gives
the counts required and says which resource is over, and by how much.

References
----------
.. [1] A. Sharkey, "MQ for z/OS: Impact of key-size on Advanced Message
   Security performance", IBM, 2024 (the RMF Crypto Hardware Activity
   example and the rule to plan on the summary utilization).
.. [2] H. C. Tijms, *A First Course in Stochastic Models*, Wiley, 2003, §5.2
   (two-moment approximations for M/G/c).
"""

from .evaluate import FailoverResult, PlanResult, ResourceResult, WorkloadResult, plan
from .bands import Band, PlanBands, PoolBands, plan_bands
from .timeline import Purchase
from .daily import DailyProfile, Window
from .files import MAX_PLAN_BYTES, plan_from_dict, profiles_from_rows, system_from_rows, workloads_from_rows
from .read import PlanInputs, PlanTables, read_plan
from .inputs import KIND_ARGUMENTS, KINDS, MAX_MONTHS, POOLS, RATE_UNITS, Migration, Order, PlanError, System, Workload
from .profiles import handshake_baseline_cpu_us
from .tables import (RESOURCE_COLUMNS, RESOURCE_QUANTITIES, TEXT_COLUMNS, TIMELINE_COLUMNS, WORKLOAD_COLUMNS,
                     WORKLOAD_QUANTITIES, plan_resources, plan_text, plan_timeline, plan_value, plan_workloads)

__all__ = ["System", "Workload", "Order", "Migration", "PlanError", "PlanResult", "ResourceResult", "WorkloadResult",
           "FailoverResult", "Purchase", "plan", "plan_bands", "Band", "PlanBands", "PoolBands",
           "read_plan", "PlanInputs", "PlanTables", "plan_from_dict", "RATE_UNITS", "workloads_from_rows", "system_from_rows",
           "plan_resources", "plan_workloads", "plan_value", "plan_timeline", "plan_text", "RESOURCE_QUANTITIES",
           "WORKLOAD_QUANTITIES", "RESOURCE_COLUMNS", "WORKLOAD_COLUMNS", "TIMELINE_COLUMNS", "TEXT_COLUMNS", "KINDS",
           "KIND_ARGUMENTS", "POOLS", "MAX_MONTHS",
           "MAX_PLAN_BYTES", "handshake_baseline_cpu_us", "DailyProfile", "Window", "profiles_from_rows"]
