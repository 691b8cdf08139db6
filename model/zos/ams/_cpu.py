"""CPU per AMS transaction by address space: MQ's own path, AMS's per-message and per-operation
work, and the platform (z13 to z16) factors.

Part of :mod:`cryptoplan.model.zos.ams` (the package documents the model).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ...domains import MESSAGE_KB
from ...figures import figure, table_in_force
from ...params import normalize_choice, normalize_policy, param, POLICIES
from ._operations import operation_counts
from ._scenario import AMS_PLATFORMS, choice_codes, Scenario, SIZE_CLASSES_KB

__all__ = ["ams_platform_factors", "factor_arrays", "workload_factors", "mq_us", "cpu_parts"]

def ams_platform_factors(policy, message_kb, platform="z16") -> dict:
    """CPU of an AMS transaction on a machine generation relative to z14, read from the reports.

    The AMS CPU model is calibrated on the z14 report's absolute costs
    (``ref_ams_cost_*_z14``).  Other generations differ by CPU speed and by
    CPACF hashing and encryption speed, in proportions the model has no
    mechanism for (z13 -> z14: -3% for 4MB Integrity, which is mostly SHA-256,
    -42% for 4MB Confidentiality, mostly AES), so it applies the published
    ratios, as an LSPR table of processor ratios by workload is applied:

    * **z13**: the z14 report's z13 (CEX5S) and z14 (CEX6S) columns.  The AMS
      part is :math:`c_{z13}/c_{z14}` of the policy's message-cost cells at 2KB
      and 4MB (``ref_ams_cost_{2k,4m}_<policy>_z13`` / ``_z14``), the MQ part
      the ratio of the 2KB costs without AMS (``ref_ams_txn_cost_2k_none_*``,
      the only size published).
    * **z15**: the z15 report's change of the whole transaction cost from z14,
      per policy, for small, medium and large messages
      (``ref_z15_vs_z14_cost_<size>_<policy>``): :math:`1 + \\Delta/100` for
      both parts.  The report does not give the sizes in KB; they are read as
      :data:`SIZE_CLASSES_KB` (2KB, 64KB and 4MB, the sizes of the z14 report
      and seed 001).
    * **z16**: no AMS CPU comparison with z15 is published (only throughput of
      large messages, ``ref_z16_vs_z15_tput_large_*``), so z16 uses the z15
      factors: an upper estimate on a faster machine, as for the TLS channel
      costs.

    Between the published sizes a factor is interpolated linearly in
    :math:`\\log KB`; below the smallest and above the largest it is held at the
    end value:

    .. math::

        r(KB) = r_i + (r_{i+1} - r_i)\\,
                \\frac{\\ln \\mathrm{clip}(KB) - \\ln KB_i}{\\ln KB_{i+1} - \\ln KB_i}

    The 2KB Confidentiality cells (16 -> 13 µs, printed to the microsecond)
    fix their ratio only to about ±7%.

    Parameters
    ----------
    policy : {"integrity", "privacy", "confidentiality"} or array_like
    message_kb : float or array_like
        Message size in KB, 0..102400.
    platform : {"z13", "z14", "z15", "z16"} or array_like

    Returns
    -------
    dict
        ``{"mq": r, "ams": r}``: the factor for the MQ work without AMS (and
        the queue manager's MSTR cost) and for the AMS work (interception,
        hashing, encryption, asymmetric-operation handling); floats, or
        arrays of the broadcast shape.

    References
    ----------
    .. [1] IBM, "MQ for z/OS on z14", pp.15-20; "MQ for z/OS on z15", p.25;
       "MQ for z/OS on z16", p.34 (github.com/ibm-messaging/mqperf).
    """
    pol = choice_codes("policy", policy, normalize_policy, POLICIES)
    kb = np.asarray(MESSAGE_KB.check(message_kb), dtype=float)
    plat = choice_codes("platform", platform, lambda v: normalize_choice("platform", v, AMS_PLATFORMS),
                        AMS_PLATFORMS)
    mq, ams = factor_arrays(pol, kb, plat)
    return {"mq": float(mq) if mq.ndim == 0 else mq, "ams": float(ams) if ams.ndim == 0 else ams}


@lru_cache(maxsize=8)
def _factor_table(table: str) -> dict:
    """(policy code, platform code) -> (sizes KB, mq factors, ams factors), read once per figures table."""
    out = {}
    for p_i, p in enumerate(POLICIES):
        for g_i, g in enumerate(AMS_PLATFORMS):
            if g == "z14":
                out[p_i, g_i] = (np.array([2.0]), np.array([1.0]), np.array([1.0]))
            elif g == "z13":
                sizes = np.array([2.0, 4096.0])
                cells = np.array([figure(f"ref_ams_cost_{t}_{p}_z13").target()
                                  / figure(f"ref_ams_cost_{t}_{p}_z14").target() for t in ("2k", "4m")])
                mq = (figure("ref_ams_txn_cost_2k_none_z13").target()
                      / figure("ref_ams_txn_cost_2k_none_z14").target())
                out[p_i, g_i] = (sizes, np.full(2, mq), cells)
            else:
                sizes = np.array(list(SIZE_CLASSES_KB.values()))
                change = np.array([figure(f"ref_z15_vs_z14_cost_{c}_{p}").target() for c in SIZE_CLASSES_KB])
                out[p_i, g_i] = (sizes, 1.0 + change / 100.0, 1.0 + change / 100.0)
    return out


def factor_arrays(pol, kb, plat):
    """(mq, ams) platform factor arrays for policy codes, sizes and platform codes."""
    table = _factor_table(table_in_force())
    pol, kb, plat = np.broadcast_arrays(pol, kb, plat)
    if pol.ndim == 0:
        sizes, mq, ams = table[int(pol), int(plat)]
        return _log_interp(kb, sizes, mq), _log_interp(kb, sizes, ams)
    mq, ams = np.ones(kb.shape), np.ones(kb.shape)
    combo = pol * len(AMS_PLATFORMS) + plat
    # at most 12 (policy, platform) pairs; bincount over the small codes (np.unique would
    # import numpy.ma on first use, 6 ms of a recalc's start)
    for c in np.flatnonzero(np.bincount(combo.ravel())).tolist():
        sel = combo == c
        sizes, f_mq, f_ams = table[divmod(int(c), len(AMS_PLATFORMS))]
        mq[sel], ams[sel] = _log_interp(kb[sel], sizes, f_mq), _log_interp(kb[sel], sizes, f_ams)
    return mq, ams


def workload_factors(w) -> tuple:
    """(mq, ams) platform factors of a :class:`Scenario`, read from the figures once per figures table."""
    key = ("factors", table_in_force())
    got = w.cache.get(key)
    if got is None:
        got = w.cache[key] = factor_arrays(w.policy, w.kb, w.platform)
    return got


def _log_interp(kb, sizes, values):
    """Piecewise-linear in log size between the published sizes, constant outside them."""
    if sizes.size == 1:
        return np.full(np.shape(kb), float(values[0]))
    x = np.log(np.clip(kb, sizes[0], sizes[-1]))
    return np.interp(x, np.log(sizes), values)


def mq_us(kb):
    """MQ's own CPU per request/reply transaction without AMS (µs): the measured 2 KB baseline
    plus the copying of the request and reply, per KB beyond the baseline's size.

    .. math:: c_{MQ} = c_{2K} + k\\,(KB - KB_{2K})

    :math:`c_{2K}` is ``mq_base_us`` (row ``ref_ams_txn_cost_2k_none_z14``, 2 KB), :math:`k` the
    fitted ``mq_us_per_kb``: a 4 MB message is moved and copied 2,000 times the bytes of a 2 KB
    one, and the key-size effects at 64 KB and 4 MB (seed 001) are diluted by it.
    """
    kb0 = float(figure("ref_ams_txn_cost_2k_none_z14").conditions["message_kb"])
    return param("mq_base_us") + param("mq_us_per_kb") * (kb - kb0)


def cpu_parts(w: Scenario) -> dict:
    """CPU µs per transaction by address space, without MSTR's per-second cost; and that cost (µs/s)."""
    o = operation_counts(w)
    integ = w.policy == POLICIES.index("integrity")
    priv = w.policy == POLICIES.index("privacy")
    sign = (integ | priv).astype(float)
    enc = (~integ).astype(float)
    g_mq, g_ams = workload_factors(w)
    per_msg = param("ams_msg_us") + w.kb * (sign * param("ams_hash_us_per_kb") + enc * param("ams_enc_us_per_kb"))
    amsm = (o["sign"] + o["verify"]) * param("ams_sig_op_us") + (o["key_encrypt"] + o["key_decrypt"]) * param("ams_key_op_us")
    mq = mq_us(w.kb)                                              # the MQPUTs and MQGETs themselves
    return {"application": g_mq * mq + g_ams * 2.0 * per_msg,
            "AMSM": g_ams * 2.0 * amsm,
            "mstr_per_s": g_mq * param("mstr_admin_us_per_s")}
