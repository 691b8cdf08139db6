"""MQ Advanced Message Security (AMS): one queueing network per workload.

A transaction is a request/reply: 2 MQPUTs that protect a message and 2
MQGETs that unprotect one.  Asymmetric operations per message (V901 p.3,
V913 p.5; rows ``ref_ams_ops_*``), with *r* recipients and key reuse *K*,
plus the certificate checks of AMS's certificate validation (IBM MQ
documentation: AMS "constructs a certificate chain that consists of the
signer's certificate and the CA's certificate chain up to a trust anchor"):
the getter validates the signer's certificate, the putter each recipient's
certificate before wrapping the key for it, with ``ams_cert_checks`` public-key
checks per certificate (1: a user certificate issued by the trust anchor, as
in the z/OS AMS examples; each intermediate CA adds one):

=================  ===============================================  =====================
policy             operations per message                           card functions
=================  ===============================================  =====================
Integrity          1 sign + 1 verify + 1 certificate check          CCA, ME, ME
Privacy            1 sign + r key_encrypt + 1 key_decrypt           CCA, ME, CRT, ME,
                   + 1 verify + (1 + r) certificate checks          ME
Confidentiality    (r key_encrypt + r certificate checks            ME, ME, CRT
                   + 1 key_decrypt) / K
=================  ===============================================  =====================

NISTECC keys sign, verify and check certificates on the coprocessor and
support Integrity only.  With one recipient Privacy sends 4 ME requests per
CRT request and as many coprocessor requests as CRT: the mix of seed 001's
RMF example (2706 ME/s, 676 CRT/s, about 705 coprocessor requests/s), which
the operations without certificate checks (2 ME per CRT) cannot give.

The network
-----------
=====================  ==============  ===============================================  =========================
station                servers         demand per transaction                           from
=====================  ==============  ===============================================  =========================
MQ path (delay)        infinite        :math:`z + n_{req}\\, t_{call}`                 fitted ``ams_fixed_ms``;
                                                                                        ``crypto_call_ms`` (0)
general processors     ``processors``  CPU per transaction without MSTR's per-second    :func:`ams_cost_us`'s
                                       administration, at the machine generation        CPU model
coprocessors           ``coprocessors``:math:`\\sum_f n_f t_f` over CCA functions,       :mod:`cryptoplan.model.zos.crypto`
                                       divided by :math:`1 - u_{other}`
accelerators           ``accelerators``:math:`\\sum_f n_f t_f` over ME and CRT,          :mod:`cryptoplan.model.zos.crypto`
                                       divided by :math:`1 - u_{other}`
=====================  ==============  ===============================================  =========================

:math:`n_{req}` is the transaction's crypto requests and :math:`t_{call}` the
elapsed time of one request beyond its card execution time (ICSF and
AP-queue handling): 0 as published (fitted, it went to its bound 0 once the
coprocessor's RSA sign has its fixed part, :mod:`cryptoplan.model.zos.crypto`), a
parameter a site may set.  A policy that sends few requests (Confidentiality
with key reuse) has a short path: the path is the work the policy does.
MQ MSTR's administration CPU per second runs beside the transactions: it
takes :math:`O_{MSTR}/10^6` of a processor from the processor station.

Two answers, never confused:

* **at the planned rate** (open network, :func:`ams_plan` and the functions
  taking ``tx_rate``): CPU per transaction with MSTR's per-second cost spread
  over *that* rate, processors busy, card utilizations as RMF prints them,
  waits (M/G/c with the service-time variability of the operation mix),
  response time, cards and processors required, the bottleneck; a rate the
  network cannot carry raises :class:`UnstableQueueError` naming the
  resource and how many are needed;
* **with N requesters** (closed network, :func:`ams_throughput`): the rate
  they reach (exact MVA; one requester in closed form) and the resource that
  caps it (:func:`ams_bottleneck`).

Each requester is served by its own server task (N request/reply pairs, as
seed 001's single pair multiplied).  Card utilization is RMF's summary
utilization, requests x EXEC TIME per card: seed 001 plans on that summary
and adds cards when it reaches 100%; its by-function sum past 100% (152.7%)
is a reporting effect, not extra capacity.  Other LPARs' use of shared cards
(``other_*_util``, the fraction of each card they keep busy) adds to the
summary; for the closed network it slows the cards by :math:`1/(1 -
u_{other})` (a reduced-capacity approximation: exact for the mean when the
other load is a preemptive-priority class, optimistic otherwise).

The model is one package of modules, bottom to top: ``_scenario`` (the inputs, validated and
broadcast once), ``_operations`` (operations and card requests per transaction), ``_cpu`` (CPU
by address space), ``_closed`` (the closed network of *N* requesters), ``_workload``
(:class:`AmsWorkload` and the closed network's public functions), ``_open`` (:func:`ams_plan`
at a planned rate) and ``_cards`` (the per-card functions); ``__all__`` below is the interface.

References
----------
.. [1] IBM MQ for z/OS performance reports V901 (p.3), V913 (p.5), "MQ for
   z/OS on z14" (pp.15-20); A. Sharkey, "MQ for z/OS: Impact of key-size on
   Advanced Message Security performance", IBM, 2024; IBM MQ documentation,
   "Certificate revocation lists (CRLs)" (AMS certificate validation).
.. [2] M. Reiser and S. S. Lavenberg, "Mean-value analysis of closed
   multichain queuing networks", J. ACM 27(2), 1980.

"""

from __future__ import annotations

from ._scenario import AMS_ADDRESS_SPACES, AMS_PLATFORMS, RESOURCES, RMF_EXAMPLE, CARD_GENERATIONS, SIZE_CLASSES_KB
from ._operations import card_generation_factor, ams_operations, ams_card_demands_ms
from ._cpu import ams_platform_factors
from ._workload import (AmsWorkload, ams_bottleneck, ams_cost_at_rate_us, ams_cost_us, ams_demands,
                        ams_message_cost_us, ams_throughput)
from ._open import ams_plan, AMSPlan
from ._cards import (accelerators_required, card_utilization, coprocessors_required, crypto_wait_ms,
                     processors_required)

__all__ = ["AmsWorkload", "card_generation_factor", "ams_operations", "ams_message_cost_us",
           "ams_card_demands_ms", "ams_demands", "ams_throughput", "ams_cost_us",
           "ams_cost_at_rate_us", "ams_plan", "AMSPlan", "ams_bottleneck", "card_utilization",
           "crypto_wait_ms", "accelerators_required", "coprocessors_required",
           "processors_required", "ams_platform_factors", "AMS_ADDRESS_SPACES", "AMS_PLATFORMS",
           "RESOURCES", "RMF_EXAMPLE", "CARD_GENERATIONS", "SIZE_CLASSES_KB"]
