"""cryptoplan models: queueing formulas and fitted z/OS crypto domain models.

Everything here is a pure function over floats or NumPy arrays.  Arguments are
validated in :mod:`model._validate`; bad input raises :class:`ValueError`
naming the argument, the value and the allowed range.
"""

from ._validate import UnstableQueueError
from .erlang import erlang_b, erlang_c, poisson_pmf
from .mgc import MGC_METHODS, mgc_response, mgc_wait
from .mmc import (
    MMCMetrics, mmc_metrics, mmc_number_in_system, mmc_queue_length, mmc_response,
    mmc_response_percentile, mmc_servers, mmc_utilization, mmc_wait, mmc_wait_exceeds,
    mmc_wait_percentile, mmc_wait_probability,
)
from .mva import MVAResult, SchweitzerResult, mva, mva_response, mva_schweitzer, mva_throughput
from .ams import (
    AMSPlan, accelerators_required, ams_bottleneck, ams_cost_at_rate_us, ams_cost_us, ams_demands,
    ams_message_cost_us, ams_plan, ams_platform_factors, ams_throughput, card_utilization,
    coprocessors_required, crypto_wait_ms, processors_required,
)
from .channel import channel_demands_us, channel_pipeline, channel_throughput
from .crypto import crypto_op_ms
from .params import Parameters, using_parameters
from .planning import defaults, model_figures, model_parameters
from .tls import (
    channel_start_card_ms, channel_start_card_utilization, channel_start_cost_us, channel_start_rate,
    channel_stop_cost_us, handshake_card_utilization, handshake_cpu_factor,
    handshake_latency_factor, ocsp_cpu_us, renegotiation_cost_us, tls_cost_us, tls_roundtrip_us,
)

__all__ = [
    "UnstableQueueError", "Parameters", "using_parameters",
    "erlang_b", "erlang_c", "poisson_pmf",
    "MMCMetrics", "mmc_metrics", "mmc_utilization", "mmc_wait_probability", "mmc_wait",
    "mmc_response", "mmc_queue_length", "mmc_number_in_system", "mmc_wait_exceeds",
    "mmc_wait_percentile", "mmc_response_percentile", "mmc_servers",
    "MGC_METHODS", "mgc_wait", "mgc_response",
    "MVAResult", "mva", "mva_throughput", "mva_response", "SchweitzerResult", "mva_schweitzer",
    "crypto_op_ms", "ams_throughput", "ams_cost_us", "ams_message_cost_us", "ams_platform_factors",
    "ams_demands", "ams_bottleneck", "ams_cost_at_rate_us", "ams_plan", "AMSPlan",
    "card_utilization",
    "crypto_wait_ms",
    "accelerators_required", "coprocessors_required", "processors_required",
    "tls_cost_us", "renegotiation_cost_us", "tls_roundtrip_us", "channel_start_rate",
    "channel_start_cost_us", "channel_stop_cost_us", "channel_start_card_ms",
    "channel_start_card_utilization", "channel_throughput", "channel_pipeline", "channel_demands_us",
    "handshake_cpu_factor", "handshake_latency_factor", "handshake_card_utilization", "ocsp_cpu_us",
    "model_parameters", "model_figures", "defaults",
]
