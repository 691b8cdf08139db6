"""cryptoplan models: queueing formulas and fitted z/OS crypto domain models.

The package reads bottom to top: the published figures, the parameters in force and the
argument domains (:mod:`~cryptoplan.model.figures`, :mod:`~cryptoplan.model.params`,
:mod:`~cryptoplan.model.domains`); :mod:`cryptoplan.model.queueing` (Erlang, M/M/c, M/G/c, MVA);
:mod:`cryptoplan.model.zos` (card times, AMS, TLS, channels, the whole-system plan); and
:mod:`cryptoplan.model.calibration` (the least-squares path, the fit, the site calibration).
Each layer imports only the ones below it (tests/test_layers.py).

Everything here is a pure function over floats or NumPy arrays.  Arguments are
validated against their ranges, declared once in :mod:`cryptoplan.model.domains`, by
:mod:`cryptoplan.model._validate`; bad input raises :class:`ValueError` naming the
argument, the value and the allowed range.
"""

import lazy_loader

# public name -> the module defining it.  Imported on first use (PEP 562), so that
# ``import cryptoplan.model.params`` or a command line's ``--help`` does not load NumPy and SciPy.
_EXPORTS = {
    "UnstableQueueError": "_validate", "ArgumentError": "_validate", "NotAvailableError": "_validate",
    "Parameters": "params",
    "using_parameters": "params",
    "erlang_b": "queueing.erlang",
    "erlang_c": "queueing.erlang",
    "poisson_pmf": "queueing.erlang",
    "MMCMetrics": "queueing.mmc",
    "mmc_metrics": "queueing.mmc",
    "mmc_utilization": "queueing.mmc",
    "mmc_wait_probability": "queueing.mmc",
    "mmc_wait": "queueing.mmc",
    "mmc_response": "queueing.mmc",
    "mmc_queue_length": "queueing.mmc",
    "mmc_number_in_system": "queueing.mmc",
    "mmc_wait_exceeds": "queueing.mmc",
    "mmc_wait_percentile": "queueing.mmc",
    "mmc_response_percentile": "queueing.mmc",
    "mmc_servers": "queueing.mmc",
    "MGC_METHODS": "queueing.mgc",
    "mgc_wait": "queueing.mgc",
    "mgc_response": "queueing.mgc",
    "MVAResult": "queueing.mva",
    "mva": "queueing.mva",
    "mva_throughput": "queueing.mva",
    "mva_response": "queueing.mva",
    "SchweitzerResult": "queueing.mva",
    "mva_schweitzer": "queueing.mva",
    "crypto_op_ms": "zos.crypto",
    "AmsWorkload": "zos.ams",
    "ams_throughput": "zos.ams",
    "ams_cost_us": "zos.ams",
    "ams_message_cost_us": "zos.ams",
    "ams_platform_factors": "zos.ams",
    "ams_demands": "zos.ams",
    "ams_bottleneck": "zos.ams",
    "ams_cost_at_rate_us": "zos.ams",
    "ams_plan": "zos.ams",
    "AMSPlan": "zos.ams",
    "card_utilization": "zos.ams",
    "crypto_wait_ms": "zos.ams",
    "accelerators_required": "zos.ams",
    "coprocessors_required": "zos.ams",
    "processors_required": "zos.ams",
    "tls_cost_us": "zos.tls",
    "renegotiation_cost_us": "zos.tls",
    "tls_roundtrip_us": "zos.tls",
    "channel_start_rate": "zos.tls",
    "channel_start_cost_us": "zos.tls",
    "channel_stop_cost_us": "zos.tls",
    "channel_start_card_ms": "zos.tls",
    "channel_start_card_utilization": "zos.tls",
    "channel_throughput": "zos.channel",
    "channel_pipeline": "zos.channel",
    "channel_demands_us": "zos.channel",
    "handshake_cpu_factor": "zos.tls",
    "handshake_latency_factor": "zos.tls",
    "handshake_card_utilization": "zos.tls",
    "ocsp_cpu_us": "zos.tls",
    "System": "zos.plan",
    "Workload": "zos.plan",
    "PlanError": "zos.plan",
    "PlanResult": "zos.plan",
    "DailyProfile": "zos.plan",
    "Window": "zos.plan",
    "plan": "zos.plan",
    "plan_resources": "zos.plan",
    "plan_workloads": "zos.plan",
    "plan_value": "zos.plan",
    "plan_timeline": "zos.plan",
    "plan_text": "zos.plan",
    "read_plan": "calibration.rmf_plan",
    "model_parameters": "calibration.planning",
    "model_figures": "calibration.planning",
    "defaults": "calibration.planning",
}

# lazy_loader (scientific-python SPEC 1) imports a name's module on first use and caches it on
# the package; it also keeps a function whose name is its module's from being shadowed by it.
__getattr__, __dir__, __all__ = lazy_loader.attach(
    __name__, submod_attrs={m: [n for n, where in _EXPORTS.items() if where == m] for m in set(_EXPORTS.values())})
