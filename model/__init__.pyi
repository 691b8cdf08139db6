"""The public names of cryptoplan.model, each from the module that defines it (lazy_loader reads
this stub to bind them on first use; type checkers and IDEs read it to find them)."""

from ._validate import (
    UnstableQueueError as UnstableQueueError,
    ArgumentError as ArgumentError,
    NotAvailableError as NotAvailableError,
)
from .params import (
    Parameters as Parameters,
    using_parameters as using_parameters,
)
from .queueing.erlang import (
    erlang_b as erlang_b,
    erlang_c as erlang_c,
    poisson_pmf as poisson_pmf,
)
from .queueing.mmc import (
    MMCMetrics as MMCMetrics,
    mmc_metrics as mmc_metrics,
    mmc_utilization as mmc_utilization,
    mmc_wait_probability as mmc_wait_probability,
    mmc_wait as mmc_wait,
    mmc_response as mmc_response,
    mmc_queue_length as mmc_queue_length,
    mmc_number_in_system as mmc_number_in_system,
    mmc_wait_exceeds as mmc_wait_exceeds,
    mmc_wait_percentile as mmc_wait_percentile,
    mmc_response_percentile as mmc_response_percentile,
    mmc_servers as mmc_servers,
)
from .queueing.mgc import (
    MGC_METHODS as MGC_METHODS,
    mgc_wait as mgc_wait,
    mgc_response as mgc_response,
)
from .queueing.mva import (
    MVAResult as MVAResult,
    mva as mva,
    mva_throughput as mva_throughput,
    mva_response as mva_response,
    SchweitzerResult as SchweitzerResult,
    mva_schweitzer as mva_schweitzer,
)
from .zos.crypto import (
    crypto_op_ms as crypto_op_ms,
)
from .zos.quantum_safe import (
    qs_op_ms as qs_op_ms,
    migrated_card_utilization as migrated_card_utilization,
    migrated_cards_required as migrated_cards_required,
    migrated_handshake_card_utilization as migrated_handshake_card_utilization,
)
from .zos.ams import (
    AmsWorkload as AmsWorkload,
    ams_throughput as ams_throughput,
    ams_cost_us as ams_cost_us,
    ams_message_cost_us as ams_message_cost_us,
    ams_platform_factors as ams_platform_factors,
    ams_demands as ams_demands,
    ams_bottleneck as ams_bottleneck,
    ams_cost_at_rate_us as ams_cost_at_rate_us,
    ams_plan as ams_plan,
    AMSPlan as AMSPlan,
    card_utilization as card_utilization,
    crypto_wait_ms as crypto_wait_ms,
    accelerators_required as accelerators_required,
    coprocessors_required as coprocessors_required,
    processors_required as processors_required,
)
from .zos.tls.traffic import (
    tls_cost_us as tls_cost_us,
    tls_cost_change_pct as tls_cost_change_pct,
    renegotiation_cost_us as renegotiation_cost_us,
    tls_roundtrip_us as tls_roundtrip_us,
)
from .zos.tls.starts import (
    channel_start_rate as channel_start_rate,
    channel_start_cost_us as channel_start_cost_us,
    channel_stop_cost_us as channel_stop_cost_us,
    channel_start_card_ms as channel_start_card_ms,
    channel_start_card_utilization as channel_start_card_utilization,
)
from .zos.tls.handshakes import (
    handshake_cpu_factor as handshake_cpu_factor,
    handshake_latency_factor as handshake_latency_factor,
    handshake_card_utilization as handshake_card_utilization,
    ocsp_cpu_us as ocsp_cpu_us,
)
from .zos.channel import (
    channel_throughput as channel_throughput,
    channel_pipeline as channel_pipeline,
    channel_demands_us as channel_demands_us,
)
from .zos.plan import (
    System as System,
    Workload as Workload,
    Order as Order,
    Migration as Migration,
    PlanError as PlanError,
    PlanResult as PlanResult,
    DailyProfile as DailyProfile,
    Window as Window,
    plan as plan,
    plan_resources as plan_resources,
    plan_workloads as plan_workloads,
    plan_value as plan_value,
    plan_timeline as plan_timeline,
    plan_text as plan_text,
)
from .zos.plan.read import (
    read_plan as read_plan,
    PlanInputs as PlanInputs,
    PlanTables as PlanTables,
)
from .calibration.planning import (
    model_parameters as model_parameters,
    model_figures as model_figures,
    defaults as defaults,
    plan_band as plan_band,
    accelerators_required_at_level as accelerators_required_at_level,
    coprocessors_required_at_level as coprocessors_required_at_level,
    processors_required_at_level as processors_required_at_level,
)
