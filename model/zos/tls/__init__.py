"""TLS on MQ channels and in handshakes, in three modules: the traffic a channel carries
(:mod:`.traffic`: CPU per transaction, renegotiation, round trips), its starts and stops
(:mod:`.starts`), and handshakes with OCSP (:mod:`.handshakes`).  This facade gathers their
public names; a module below imports from the one it needs.
"""

from __future__ import annotations

from .handshakes import (KEY_EXCHANGES, handshake_card_utilization, handshake_cpu_factor,
                         handshake_latency_factor, ocsp_cpu_us)
from .starts import (HANDSHAKE_FLIGHTS, START_PLATFORMS, channel_start_card_ms, channel_start_card_utilization,
                     channel_start_cost_us, channel_start_rate, channel_stop_cost_us)
from .traffic import (CHANGE_PLATFORMS, CHANNEL_COST_PARAMS, CIPHER_FAMILIES, PLATFORMS, ROUNDTRIP_PARAMS,
                      Z196_ANCHOR, Z196_OF, cipher_family, normalize_platform, renegotiation_cost_us,
                      roundtrip_figure_ids, roundtrip_points, tls_cost_change_pct, tls_cost_parts_us, tls_cost_us,
                      tls_roundtrip_us)

__all__ = ["roundtrip_points", "roundtrip_figure_ids", "ROUNDTRIP_PARAMS", "tls_roundtrip_us", "tls_cost_us",
           "tls_cost_parts_us", "tls_cost_change_pct", "normalize_platform", "renegotiation_cost_us",
           "Z196_ANCHOR", "Z196_OF", "CHANGE_PLATFORMS", "channel_start_rate",
           "channel_start_cost_us", "channel_stop_cost_us", "channel_start_card_ms",
           "channel_start_card_utilization", "handshake_card_utilization", "handshake_cpu_factor",
           "handshake_latency_factor",
           "ocsp_cpu_us", "KEY_EXCHANGES", "CIPHER_FAMILIES", "CHANNEL_COST_PARAMS", "PLATFORMS",
           "START_PLATFORMS", "HANDSHAKE_FLIGHTS", "cipher_family"]
