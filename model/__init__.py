"""cryptoplan models: queueing formulas and fitted z/OS crypto domain models.

Everything here is a pure function over floats or NumPy arrays.  Arguments are
validated against their ranges, declared once in :mod:`cryptoplan.model.domains`, by
:mod:`cryptoplan.model._validate`; bad input raises :class:`ValueError` naming the
argument, the value and the allowed range.
"""

import importlib
import sys
import types

# public name -> the module defining it.  Imported on first use (PEP 562), so that
# ``import cryptoplan.model.params`` or a command line's ``--help`` does not load NumPy and SciPy.
_EXPORTS = {
    "UnstableQueueError": "_validate", "ArgumentError": "_validate", "NotAvailableError": "_validate",
    "Parameters": "params",
    "using_parameters": "params",
    "erlang_b": "erlang",
    "erlang_c": "erlang",
    "poisson_pmf": "erlang",
    "MMCMetrics": "mmc",
    "mmc_metrics": "mmc",
    "mmc_utilization": "mmc",
    "mmc_wait_probability": "mmc",
    "mmc_wait": "mmc",
    "mmc_response": "mmc",
    "mmc_queue_length": "mmc",
    "mmc_number_in_system": "mmc",
    "mmc_wait_exceeds": "mmc",
    "mmc_wait_percentile": "mmc",
    "mmc_response_percentile": "mmc",
    "mmc_servers": "mmc",
    "MGC_METHODS": "mgc",
    "mgc_wait": "mgc",
    "mgc_response": "mgc",
    "MVAResult": "mva",
    "mva": "mva",
    "mva_throughput": "mva",
    "mva_response": "mva",
    "SchweitzerResult": "mva",
    "mva_schweitzer": "mva",
    "crypto_op_ms": "crypto",
    "AmsWorkload": "ams",
    "ams_throughput": "ams",
    "ams_cost_us": "ams",
    "ams_message_cost_us": "ams",
    "ams_platform_factors": "ams",
    "ams_demands": "ams",
    "ams_bottleneck": "ams",
    "ams_cost_at_rate_us": "ams",
    "ams_plan": "ams",
    "AMSPlan": "ams",
    "card_utilization": "ams",
    "crypto_wait_ms": "ams",
    "accelerators_required": "ams",
    "coprocessors_required": "ams",
    "processors_required": "ams",
    "tls_cost_us": "tls",
    "renegotiation_cost_us": "tls",
    "tls_roundtrip_us": "tls",
    "channel_start_rate": "tls",
    "channel_start_cost_us": "tls",
    "channel_stop_cost_us": "tls",
    "channel_start_card_ms": "tls",
    "channel_start_card_utilization": "tls",
    "channel_throughput": "channel",
    "channel_pipeline": "channel",
    "channel_demands_us": "channel",
    "handshake_cpu_factor": "tls",
    "handshake_latency_factor": "tls",
    "handshake_card_utilization": "tls",
    "ocsp_cpu_us": "tls",
    "System": "plan",
    "Workload": "plan",
    "PlanError": "plan",
    "PlanResult": "plan",
    "plan": "plan",
    "plan_resources": "plan",
    "plan_workloads": "plan",
    "plan_value": "plan",
    "model_parameters": "planning",
    "model_figures": "planning",
    "defaults": "planning",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    try:
        module = _EXPORTS[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Package(types.ModuleType):
    """This package, keeping a public function whose name is also a module's (``mva``).

    Importing ``model.mva`` binds the module as the package's attribute ``mva``; the
    public name is the function, as ``from cryptoplan.model import mva`` has always given.
    """

    def __setattr__(self, name, value):
        if isinstance(value, types.ModuleType) and name in _EXPORTS:
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
