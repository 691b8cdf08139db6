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

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .ams import AMS_PLATFORMS, CARD_GENERATIONS, AmsWorkload, card_generation_factor
from .crypto import CARD_FUNCTIONS
from .domains import (GROWTH, GROWTH_PER_YEAR, HORIZON_MONTHS, MAX_UTILIZATION, MAX_WAIT_MS, MONTHS, OTHER_LPAR_UTIL,
                      POOL_CARDS, PROCESSORS, RESUMED_SHARE, WORKLOAD_RATE, WORKLOAD_UTIL, Domain)
from .figures import figure
from ._text import value_text
from ._validate import NotAvailableError, UnstableQueueError
from .mgc import mgc_wait_by_scv
from .params import CIPHERS, normalize_choice, normalize_cipher, normalize_mode
from .tls import channel_start_card_ms, channel_start_cost_us, handshake_cpu_factor, tls_cost_us

__all__ = ["System", "Workload", "PlanError", "PlanResult", "ResourceResult", "WorkloadResult",
           "plan", "read_plan", "plan_from_dict", "RATE_UNITS", "workloads_from_rows", "system_from_rows",
           "plan_resources", "plan_workloads", "plan_value", "RESOURCE_QUANTITIES", "WORKLOAD_QUANTITIES",
           "RESOURCE_COLUMNS", "WORKLOAD_COLUMNS", "KINDS", "KIND_ARGUMENTS", "POOLS", "MAX_MONTHS", "handshake_baseline_cpu_us"]

KINDS = ("ams", "channel", "handshakes", "channel_starts", "measured")
POOLS = ("processors", "coprocessors", "accelerators")
_CARD = {"coprocessors": "coprocessor", "accelerators": "accelerator"}
# Months searched for a crossing: beyond 100 years a plan says "never".
MAX_MONTHS = 1200.0
_FUNCTIONS = tuple(CARD_FUNCTIONS)

# Each kind's arguments and their defaults (None: required).  Names as the Python functions name them.
KIND_ARGUMENTS = {
    "ams": {"policy": None, "key_type": "RSA", "key_size": 2048, "message_kb": None, "key_reuse": None,
            "recipients": 1, "queue_manager": "QM1"},
    "channel": {"mode": None, "cipher": None, "message_kb": None, "sslrkeyc": 0},
    "handshakes": {"cipher": None, "resumed_share": 0.0, "fips": False, "card_mode": None,
                   "sysplex_tickets": False, "cpu_us": None, "address_space": "TCPIP"},
    "channel_starts": {"cipher": None, "mode": "SSLCIPH"},
    "measured": {"card": None, "exec_ms": None, "utilization": None, "cpu_us": None},
}
# What the rate counts, per kind (the unit of every "per unit" answer).
RATE_UNITS = {"ams": "transactions/s", "channel": "transactions/s", "handshakes": "handshakes/s",
              "channel_starts": "starts/s", "measured": "units/s"}
_DERIVED = {"key_exchange": "it follows from cipher", "certificate": "it follows from cipher",
            "protocol": "it follows from cipher", "platform": "set it in the system",
            "card_generation": "set it in the system", "cards": "set coprocessors/accelerators in the system",
            "other_lpar_util": "set other_coprocessor_util/other_accelerator_util in the system",
            "tx_rate": "the workload's rate is `rate`", "handshake_rate": "the workload's rate is `rate`",
            "start_rate": "the workload's rate is `rate`"}


class PlanError(ValueError):
    """A plan's input is wrong: the message names the workload (or the system), the key and the value."""


_ARGUMENT = object()        # _checked's "where" for a plain function argument: no prefix


def _where(workload) -> str:
    return "system" if workload is None else f"workload {workload!r}"


def _prefixed(workload, e) -> str:
    return str(e) if workload is _ARGUMENT else f"{_where(workload)}: {e}"


def _checked(domain: Domain, value, workload, key, *, scalar=True):
    """The value checked against its domain; the message (which names ``key``) says where."""
    try:
        return domain.check(value, key, scalar=scalar)
    except (ValueError, TypeError) as e:
        raise PlanError(_prefixed(workload, e)) from None


def _choice(value, allowed, workload, key, normalize=None):
    try:
        return normalize(value) if normalize else normalize_choice(key, value, allowed)
    except (ValueError, TypeError) as e:
        raise PlanError(f"{_where(workload)}: {e}") from None


# ----------------------------------------------------------------------------- inputs
@dataclass(frozen=True)
class System:
    """The LPAR the workloads share: its processors and Crypto Express pools, and the targets.

    Parameters
    ----------
    processors : int
        General processors of the LPAR, 1..256.
    coprocessors, accelerators : int
        Crypto Express cards in CCA coprocessor and in accelerator mode this LPAR uses, 0..64
        (0: none; a workload that sends the pool work then overloads it).
    platform : {"z13", "z14", "z15", "z16"}
        Machine generation (each kind's model accepts the generations it has figures for).
    card_generation : {"CEX6S", "CEX7S", "CEX8S"}
    max_utilization : float
        Utilization target of every resource, (0, 1): the counts required keep each at or below it.
    other_coprocessor_util, other_accelerator_util : float
        Fraction of each shared card other LPARs keep busy, [0, 1) (RMF's view from the other LPARs).
    horizon_months : float
        The horizon of the counts required as the workloads grow, 0..1200 months.
    max_wait_ms : float, optional
        Target on the mean queueing of one request at each card pool (ms, > 0): the counts
        required meet it as well as ``max_utilization``.  None: the utilization target only.
    """

    processors: int
    coprocessors: int
    accelerators: int
    platform: str = "z16"
    card_generation: str = "CEX8S"
    max_utilization: float = 0.7
    other_coprocessor_util: float = 0.0
    other_accelerator_util: float = 0.0
    horizon_months: float = 12.0
    max_wait_ms: float | None = None

    def __post_init__(self):
        set_ = object.__setattr__
        set_(self, "processors", int(_checked(PROCESSORS, self.processors, None, "processors")))
        for key in ("coprocessors", "accelerators"):
            set_(self, key, int(_checked(POOL_CARDS, getattr(self, key), None, key)))
        set_(self, "platform", _choice(self.platform, AMS_PLATFORMS, None, "platform"))
        set_(self, "card_generation", _choice(self.card_generation, CARD_GENERATIONS, None, "card_generation"))
        set_(self, "max_utilization", _checked(MAX_UTILIZATION, self.max_utilization, None, "max_utilization"))
        for key in ("other_coprocessor_util", "other_accelerator_util"):
            v = _checked(OTHER_LPAR_UTIL, getattr(self, key), None, key)
            if v >= self.max_utilization:
                raise PlanError(f"system: {key} ({v:g}) leaves no room below max_utilization "
                                f"({self.max_utilization:g}): no number of shared cards meets the target")
            set_(self, key, v)
        set_(self, "horizon_months", _checked(HORIZON_MONTHS, self.horizon_months, None, "horizon_months"))
        if self.max_wait_ms is not None:
            set_(self, "max_wait_ms", _checked(MAX_WAIT_MS, self.max_wait_ms, None, "max_wait_ms"))

    def installed(self, pool: str) -> int:
        """Servers of a pool: ``"processors"``, ``"coprocessors"`` or ``"accelerators"``."""
        return getattr(self, pool)

    def other(self, pool: str) -> float:
        """Fraction of each server of the pool other LPARs keep busy (0 for processors)."""
        return {"processors": 0.0, "coprocessors": self.other_coprocessor_util,
                "accelerators": self.other_accelerator_util}[pool]


@dataclass(frozen=True)
class Workload:
    """One workload of a plan: a name, a kind, a rate and its kind's arguments.

    Parameters
    ----------
    name : str
        Unique within the plan (non-empty).
    kind : {"ams", "channel", "handshakes", "channel_starts", "measured"}
    rate : float or array_like
        In the kind's unit (:data:`RATE_UNITS`): request/reply transactions per second for
        ``ams`` and ``channel`` (the unit the AMS and channel cost models use), handshakes
        per second (full and resumed), channel starts per second, or, for ``measured``,
        requests per second on its card (with ``exec_ms``) or units of work per second
        (with ``cpu_us``); >= 0.  ``measured`` with ``utilization`` takes no rate.
    growth_per_year : float
        Yearly growth of the rate as a fraction (0.2 = +20% a year), (-1, 100].
    args : dict
        The kind's arguments (:data:`KIND_ARGUMENTS`), named as the Python functions name
        them; an unknown one is an error.
    """

    name: str
    kind: str
    rate: object = None
    growth_per_year: float = 0.0
    args: dict = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name.strip():
            raise PlanError(f"a workload's name must be non-empty text (got {self.name!r})")
        object.__setattr__(self, "name", self.name.strip())
        object.__setattr__(self, "kind", _choice(self.kind, KINDS, self.name, "kind"))
        object.__setattr__(self, "growth_per_year",
                           _checked(GROWTH_PER_YEAR, self.growth_per_year, self.name, "growth_per_year"))
        allowed = KIND_ARGUMENTS[self.kind]
        for key in self.args:
            if key not in allowed:
                why = f" ({_DERIVED[key]})" if key in _DERIVED else ""
                raise PlanError(f"workload {self.name!r}: unknown key {key!r} for kind {self.kind}{why}; "
                                f"accepted: name, kind, rate, growth_per_year, {', '.join(allowed)}")
        missing = [k for k, v in allowed.items() if v is None and self.args.get(k) is None
                   and k not in _OPTIONAL_NONE.get(self.kind, ())]
        if missing:
            raise PlanError(f"workload {self.name!r}: {missing[0]} is required for kind {self.kind}")
        util_form = self.kind == "measured" and self.args.get("utilization") is not None
        if util_form:
            if self.rate is not None:
                raise PlanError(f"workload {self.name!r}: rate and utilization are two ways to give a measured "
                                "load: give one")
            return
        if self.rate is None:
            raise PlanError(f"workload {self.name!r}: rate is required ({RATE_UNITS[self.kind]})")
        object.__setattr__(self, "rate", _checked(WORKLOAD_RATE, self.rate, self.name, "rate", scalar=False))

    def arg(self, key: str):
        """The argument's value, or its default."""
        v = self.args.get(key)
        return KIND_ARGUMENTS[self.kind][key] if v is None else v


# Required-looking arguments a kind resolves itself (None means "derive it").
_OPTIONAL_NONE = {"ams": ("key_reuse",), "channel": ("cipher",), "handshakes": ("card_mode", "cpu_us"),
                  "measured": ("exec_ms", "utilization", "cpu_us")}


# ----------------------------------------------------------------------------- profiles
@dataclass(frozen=True)
class _Profile:
    """What one unit of a workload's rate puts on each station (scalars; card classes as arrays)."""

    cpu_us: dict             # address space -> CPU µs per unit
    classes: dict            # card pool -> (requests per unit, EXEC ms per request, function labels)
    busy: dict               # card pool -> cards' worth per unit with no request count (measured utilization)
    mstr_per_s: float = 0.0  # MSTR administration, CPU µs per second of the workload's queue manager
    queue_manager: str | None = None
    util_form: bool = False  # a measured utilization: the "rate" is 1 unit that is the load


def _no_cards():
    return {p: (np.zeros(0), np.zeros(0), ()) for p in _CARD}


def handshake_baseline_cpu_us() -> float:
    """CPU µs of the baseline full handshake :func:`~.tls.handshake_cpu_factor` is relative to.

    No published figure gives it directly.  Seed 002's AT-TLS channel start moves TCPIP's
    CPU per start from 30 to 210 µs with a TLS 1.2 TLS_RSA cipher (rows
    ``s002_start_cost_tcpip_none_us``, ``s002_start_cost_tcpip_attls_tls12_us``, z15): 180 µs of
    AT-TLS handshake with RSA key exchange.  The baseline (ECDHE-RSA) is that divided by the
    RSA key exchange's factor:

    .. math:: c_0 = \\frac{210 - 30}{f(\\text{RSA})} \\;\\mu s

    A site that measured its own (SMF 119, RMF workload activity) passes ``cpu_us``.
    """
    attls = figure("s002_start_cost_tcpip_attls_tls12_us").target()
    plain = figure("s002_start_cost_tcpip_none_us").target()
    return (attls - plain) / handshake_cpu_factor(key_exchange="RSA")


def _ams_profile(w: Workload, system: System) -> _Profile:
    a = {k: w.arg(k) for k in KIND_ARGUMENTS["ams"]}
    try:
        model = AmsWorkload(a["policy"], a["key_type"], a["key_size"], a["message_kb"], a["key_reuse"],
                            a["recipients"], system.platform, system.card_generation)
    except (ValueError, TypeError) as e:
        raise PlanError(f"workload {w.name!r}: {e}") from None
    if model.shape != ():
        raise PlanError(f"workload {w.name!r}: the kind's arguments take one value each (a scenario axis "
                        "is the rate, growth or months)")
    req, t = model.card_requests()
    parts = model.cpu_parts_us()
    classes = {}
    for pool, card in _CARD.items():
        on = np.array([CARD_FUNCTIONS[f][0] == card for f in _FUNCTIONS])
        classes[pool] = (req[on].astype(float), t[on].astype(float), tuple(f for f, o in zip(_FUNCTIONS, on) if o))
    qm = str(a["queue_manager"]).strip() or "QM1"
    return _Profile(cpu_us={"application": float(parts["application"]), "AMSM": float(parts["AMSM"])},
                    classes=classes, busy={p: 0.0 for p in _CARD}, mstr_per_s=float(parts["mstr_per_s"]),
                    queue_manager=qm)


def _channel_profile(w: Workload, system: System) -> _Profile:
    mode, cipher, kb, rk = (w.arg(k) for k in ("mode", "cipher", "message_kb", "sslrkeyc"))
    try:
        if cipher is None and normalize_mode(mode) != "none":
            raise PlanError(f"workload {w.name!r}: cipher is required for mode {normalize_mode(mode)}")
        cpu = {space: float(tls_cost_us(mode, cipher, kb, space, rk, system.platform))
               for space in ("MSTR", "CHIN", "TCPIP")}
    except PlanError:
        raise
    except (ValueError, TypeError) as e:
        raise PlanError(f"workload {w.name!r}: {e}") from None
    return _Profile(cpu_us=cpu, classes=_no_cards(), busy={p: 0.0 for p in _CARD})


def _cipher_handshake(cipher: str) -> tuple:
    """(key exchange, certificate, protocol) of an IBM cipher name."""
    protocol = CIPHERS[cipher][0]
    kx = "ECDHE" if protocol == "TLS1.3" or "ECDHE" in cipher else "RSA"
    return kx, "ECDSA" if "ECDSA" in cipher else "RSA", protocol


def _card_times(cipher, system: System) -> dict:
    gen = card_generation_factor(system.card_generation)
    return {p: channel_start_card_ms(cipher, card) * gen for p, card in _CARD.items()}


def _handshake_profile(w: Workload, system: System) -> _Profile:
    a = {k: w.arg(k) for k in KIND_ARGUMENTS["handshakes"]}
    try:
        cipher = normalize_cipher(a["cipher"])
        share = float(RESUMED_SHARE.check(a["resumed_share"], "resumed_share", scalar=True))
        card_mode = a["card_mode"] or ("coprocessor" if system.coprocessors > 0 else "accelerator")
        kx, cert, proto = _cipher_handshake(cipher)
        kw = dict(key_exchange=kx, certificate=cert, protocol=proto, fips=a["fips"], card_mode=card_mode,
                  sysplex_tickets=a["sysplex_tickets"])
        full = handshake_cpu_factor(resumption=False, **kw)
        resumed = handshake_cpu_factor(resumption=True, **kw) if share > 0 else 0.0
        base = handshake_baseline_cpu_us() if a["cpu_us"] is None else float(
            Domain("cpu_us", 0.0, unit="us").check(a["cpu_us"], "cpu_us", scalar=True))
        space = normalize_choice("address_space", a["address_space"], ("TCPIP", "application"))
        times = _card_times(cipher, system)
    except (ValueError, TypeError) as e:
        raise PlanError(f"workload {w.name!r}: {e}") from None
    cpu = base * ((1.0 - share) * full + share * resumed)
    classes = {p: (np.array([1.0 - share]) if times[p] > 0 else np.zeros(1), np.array([times[p]]),
                   ("handshake",)) for p in _CARD}
    return _Profile(cpu_us={space: cpu}, classes=classes, busy={p: 0.0 for p in _CARD})


def _start_profile(w: Workload, system: System) -> _Profile:
    mode, cipher = w.arg("mode"), w.arg("cipher")
    try:
        m = normalize_mode(mode)
        cpu = {space: float(channel_start_cost_us(m, cipher, space, system.platform)) for space in ("CHIN", "TCPIP")}
        # AT-TLS and unprotected starts use no Crypto Express (seed 002's AT-TLS certificates did not)
        times = _card_times(normalize_cipher(cipher), system) if m == "SSLCIPH" else {p: 0.0 for p in _CARD}
    except (ValueError, TypeError) as e:
        raise PlanError(f"workload {w.name!r}: {e}") from None
    classes = {p: (np.array([1.0 if times[p] > 0 else 0.0]), np.array([times[p]]), ("channel start",))
               for p in _CARD}
    return _Profile(cpu_us=cpu, classes=classes, busy={p: 0.0 for p in _CARD})


def _measured_profile(w: Workload, system: System) -> _Profile:
    card = _choice(w.arg("card"), ("coprocessors", "accelerators", "processors"), w.name, "card",
                   lambda v: normalize_choice("card", v, ("coprocessors", "accelerators", "processors"),
                                              {"coprocessor": "coprocessors", "accelerator": "accelerators",
                                               "processor": "processors", "cpu": "processors"}))
    exec_ms, util, cpu_us = (w.args.get(k) for k in ("exec_ms", "utilization", "cpu_us"))
    classes, busy, cpu = _no_cards(), {p: 0.0 for p in _CARD}, {}
    given = [k for k, v in (("exec_ms", exec_ms), ("utilization", util), ("cpu_us", cpu_us)) if v is not None]
    need = {"processors": ("utilization", "cpu_us")}.get(card, ("utilization", "exec_ms"))
    if len(given) != 1 or given[0] not in need:
        raise PlanError(f"workload {w.name!r}: a measured load on {card} takes exactly one of "
                        f"{' or '.join(need)} (got {', '.join(given) or 'neither'})")
    if util is not None:
        u = _checked(WORKLOAD_UTIL, util, w.name, "utilization")
        load = u * system.installed(card)   # RMF's utilization per server x servers = servers' worth
        if card == "processors":
            cpu = {"other": load * 1e6}
        else:
            busy[card] = load
        return _Profile(cpu_us=cpu, classes=classes, busy=busy, util_form=True)
    if cpu_us is not None:
        return _Profile(cpu_us={"other": _checked(Domain("cpu_us", 0.0, unit="us"), cpu_us, w.name, "cpu_us")},
                        classes=classes, busy=busy)
    t = _checked(Domain("exec_ms", 0.0, lo_open=True, unit="ms"), exec_ms, w.name, "exec_ms")
    classes[card] = (np.array([1.0]), np.array([t]), ("measured",))
    return _Profile(cpu_us=cpu, classes=classes, busy=busy)


_PROFILES = {"ams": _ams_profile, "channel": _channel_profile, "handshakes": _handshake_profile,
             "channel_starts": _start_profile, "measured": _measured_profile}


# ----------------------------------------------------------------------------- results
@dataclass(frozen=True)
class ResourceResult:
    """One pool at the planned rates (arrays shaped like the scenarios; floats for one).

    Attributes
    ----------
    installed : servers (processors or cards).
    utilization : RMF's summary utilization per server, other LPARs included (fraction; may exceed 1,
        see ``overloaded``; inf when the pool has no servers and gets work).
    busy : servers' worth of this LPAR's work (CPU seconds per second, or cards' worth).
    by_workload : workload name -> its share of the utilization (fraction of the pool).
    other : the share other LPARs keep busy (cards) or work that follows no rate (processors: MSTR
        administration), a fraction of the pool.
    rate : requests per second this LPAR sends (cards), or jobs per second (processors).
    exec_ms : mean service time per request or job (ms): RMF's average EXEC TIME for cards.
    scv : squared coefficient of variation of that service time (the pooled mix).
    wait_ms : mean queueing per request or job (ms); NaN where ``overloaded`` (see ``status``).
    required : smallest count keeping utilization <= the target at these rates.
    headroom : common growth factor of every rate that brings the pool to its target (inf: no
        load grows on it, or too little for the factor to be a float; below 1: over target now).
    months_to_target : months until the workloads' yearly growth brings it to its target (0: at or
        over it now; inf: not within :data:`MAX_MONTHS`).
    required_at_horizon : the count required at the system's ``horizon_months``.
    overloaded : utilization >= 1 (the rate cannot be carried).
    rows, row_rates : accelerators only: RMF's by-function rows ``{"ME", "CRT", "other"}`` -> utilization
        and requests per second
    row_shares : accelerators only: ``{"ME", "CRT"}`` -> workload name -> its part of that row
        (``other``: card time of handshakes, channel starts and measured requests, whose function no
        published figure names).
    status : one sentence per scenario: within target, over target, or overloaded and by how much.
    """

    installed: int
    utilization: object
    busy: object
    by_workload: dict
    other: object
    rate: object
    exec_ms: object
    scv: object
    wait_ms: object
    required: object
    headroom: object
    months_to_target: object
    required_at_horizon: object
    overloaded: object
    rows: dict
    row_rates: dict
    row_shares: dict
    status: object


@dataclass(frozen=True)
class WorkloadResult:
    """One workload at the planned rates.

    Attributes
    ----------
    kind, unit : the kind and what its rate counts.
    rate : the rate at the scenario (growth and months applied).
    cpu_us : CPU µs per unit by address space, and ``"total"``; an AMS workload's ``"MSTR"`` is its
        queue manager's administration per second spread over that queue manager's AMS rate.
    requests : card pool -> requests per unit.
    card_ms : card pool -> card time (EXEC TIME) per unit, ms.
    queueing_ms : queueing delay per unit (processor wait + each pool's wait x its requests), ms;
        NaN where a pool it uses is overloaded.
    processors_busy : processors' worth of its CPU (CPU seconds per second).
    """

    kind: str
    unit: str
    rate: object
    cpu_us: dict
    requests: dict
    card_ms: dict
    queueing_ms: object
    processors_busy: object


@dataclass(frozen=True)
class PlanResult:
    """A plan's answers: ``resources`` (pool -> :class:`ResourceResult`), ``workloads`` (name ->
    :class:`WorkloadResult`), ``bottleneck`` (the busiest pool) and ``binds_first`` (the pool whose
    target the workloads' growth reaches first), for ``system`` at ``growth`` and ``months``."""

    system: System
    resources: dict
    workloads: dict
    bottleneck: object
    binds_first: object
    growth: object
    months: object

    def to_dict(self) -> dict:
        """JSON-ready: numbers as floats or lists, inf and NaN as None (each pool's ``status`` says why)."""
        def num(x):
            a = np.asarray(x)
            if a.dtype.kind in "US":
                return a.tolist()
            a = a.astype(float)
            out = np.where(np.isfinite(a), a, np.nan).tolist()
            return (None if math.isnan(out) else out) if a.ndim == 0 else _nan_to_none(out)
        res = {}
        for pool, r in self.resources.items():
            d = {k: num(getattr(r, k)) for k in ("utilization", "busy", "other", "rate", "exec_ms", "scv", "wait_ms",
                                                 "required", "headroom", "months_to_target", "required_at_horizon")}
            d["installed"] = r.installed
            d["overloaded"] = np.asarray(r.overloaded).tolist()
            d["by_workload"] = {n: num(v) for n, v in r.by_workload.items()}
            d["status"] = np.asarray(r.status).tolist()
            if r.rows:
                d["rows"] = {n: num(v) for n, v in r.rows.items()}
                d["row_rates"] = {n: num(v) for n, v in r.row_rates.items()}
                d["row_shares"] = {row: {n: num(v) for n, v in by.items()} for row, by in r.row_shares.items()}
            res[pool] = d
        wl = {}
        for name, w in self.workloads.items():
            wl[name] = {"kind": w.kind, "unit": w.unit, "rate": num(w.rate),
                        "cpu_us": {k: num(v) for k, v in w.cpu_us.items()},
                        "requests": {k: num(v) for k, v in w.requests.items()},
                        "card_ms": {k: num(v) for k, v in w.card_ms.items()},
                        "queueing_ms": num(w.queueing_ms), "processors_busy": num(w.processors_busy)}
        return {"system": {k: getattr(self.system, k) for k in self.system.__dataclass_fields__},
                "growth": num(self.growth), "months": num(self.months),
                "bottleneck": np.asarray(self.bottleneck).tolist(),
                "binds_first": np.asarray(self.binds_first).tolist(),
                "resources": res, "workloads": wl}


def _nan_to_none(x):
    if isinstance(x, list):
        return [_nan_to_none(v) for v in x]
    return None if isinstance(x, float) and math.isnan(x) else x


# ----------------------------------------------------------------------------- the plan
def _out(x):
    x = np.asarray(x)
    return x.item() if x.ndim == 0 else x


def _counts(load, other, target):
    """Smallest whole k >= 1 with load / k + other <= target (0 where there is no load)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        k = np.ceil(load / (target - other) - 1e-12)
    return np.where(load > 0, np.maximum(k, 1.0), 0.0)


def _meet_wait(k0, r, m1, scv, unknown, other, target_ms):
    """Smallest counts k >= k0 whose M/G/c wait per request is at most ``target_ms``.

    ``k0`` already meets the utilization target (below 1), so every queue here is stable; each
    round adds a card where the wait is still over the target, all scenarios at once (a few
    rounds: the wait falls fast with c).  Other LPARs' share is per card, so their requests grow
    with k (at the pool's mean service time).
    """
    k = np.array(k0, dtype=float, copy=True)
    busy = (r > 0) & (m1 > 0)
    for _ in range(10_000):
        todo = busy & (k >= 1)
        if not todo.any():
            break
        kk, rr, mm = k[todo], r[todo], m1[todo] / 1000.0
        lam_tot = rr + (unknown[todo] + other * kk) / mm
        w = mgc_wait_by_scv(lam_tot, mm, kk, scv[todo]) * 1000.0
        over = np.zeros_like(busy)
        over[todo] = w > target_ms
        if not over.any():
            break
        k[over] += 1.0
        busy = over
    return k


def _months(loads, growth, fixed, capacity):
    """Months t >= 0 at which :math:`f(t) = \\sum_i L_i (1 + g_i)^{t/12} + B` first reaches capacity.

    ``loads`` (W, *S), ``growth`` (W,), ``fixed`` and ``capacity`` (*S).  :math:`f` is a sum of
    exponentials, convex, so it crosses the capacity from below once; Newton's method started
    to the right of the crossing (where :math:`f \\ge` capacity and, by convexity,
    :math:`f' > 0`) descends monotonically onto it.  The start is :data:`MAX_MONTHS`, or the
    crossing of the slowest-growing bound :math:`(\\sum_i L_i) e^{r_{min} t}` when every rate
    grows, which is never left of the root.  0 where already there, inf where not by
    :data:`MAX_MONTHS`.
    """
    r = np.log1p(np.asarray(growth, dtype=float)) / 12.0
    # workloads that grow alike add up first: fewer exponentials per step
    uniq, inv = np.unique(r, return_inverse=True)
    if uniq.size < r.size:
        loads = np.stack([loads[inv == j].sum(axis=0) for j in range(uniq.size)])
        r = uniq
    flat_l = loads.reshape(loads.shape[0], -1)
    cap = np.asarray(capacity, dtype=float).reshape(-1)
    fx = np.broadcast_to(np.asarray(fixed, dtype=float), capacity.shape).reshape(-1)
    rr = r.reshape(-1, 1)
    now = flat_l.sum(axis=0) + fx
    late = np.sum(flat_l * np.exp(rr * MAX_MONTHS), axis=0) + fx
    out = np.where(now >= cap, 0.0, np.inf)
    todo = np.flatnonzero((now < cap) & (late >= cap))
    if todo.size:
        ld, c, b = flat_l[:, todo], cap[todo], fx[todo]
        t = np.full(todo.size, MAX_MONTHS)
        if r.min() > 0:
            with np.errstate(divide="ignore", invalid="ignore"):
                bound = np.log((c - b) / ld.sum(axis=0)) / r.min()
            t = np.where(np.isfinite(bound), np.clip(bound, 0.0, MAX_MONTHS), t)
        for _ in range(100):
            e = ld * np.exp(rr * t)
            step = (e.sum(axis=0) + b - c) / np.maximum((e * rr).sum(axis=0), 1e-300)
            t = np.maximum(t - step, 0.0)
            if np.all(np.abs(step) <= 1e-9 * np.maximum(t, 1.0)):
                break
        out[todo] = t
    return out.reshape(capacity.shape)


def _status(pool, util, target, installed, required):
    """One sentence per scenario (the planner reads these before any number), each distinct one made once."""
    u, k, req = (np.asarray(a, dtype=float).ravel() for a in np.broadcast_arrays(util, installed, required))
    with np.errstate(invalid="ignore"):
        cat = np.select([(k == 0) & (req > 0), u >= 1.0, u > target], [0, 1, 2], 3)
        pct = np.where(np.isfinite(u), np.round(u * 100.0), -1.0)
    keys, first, inv = np.unique(np.stack([cat, pct, k, req]), axis=1, return_index=True, return_inverse=True)
    goal = f"{100 * target:.0f}%"

    def text(c, p, kk, n):
        busy = f"{p:.0f}% busy"
        return (f"{pool}: none installed and work sent to them: {n:.0f} needed" if c == 0 else
                f"{pool}: overloaded, {busy} with {kk:.0f}: the rate cannot be carried; {n:.0f} needed for the "
                f"{goal} target" if c == 1 else
                f"{pool}: {busy}, over the {goal} target: {n:.0f} needed" if c == 2 else
                f"{pool}: {busy}, within the {goal} target")
    texts = np.array([text(*col) for col in keys.T], dtype=object)
    out = texts[inv.reshape(-1)].reshape(np.shape(util))
    return out.item() if out.ndim == 0 else out


def plan(system: System, workloads, growth=1.0, months=0.0) -> PlanResult:
    """Every workload on the system's shared processors and Crypto Express pools.

    Parameters
    ----------
    system : System
    workloads : sequence of Workload
        Names unique.  Rates may be arrays (scenarios); they broadcast with ``growth`` and ``months``.
    growth : float or array_like
        A factor on every rate (a capacity curve), >= 0.
    months : float or array_like
        Months ahead, 0..1200: each rate times :math:`(1 + g_i)^{t/12}`.

    Returns
    -------
    PlanResult
        See the module documentation for the formulas.  Never raises for an overloaded resource:
        its ``status`` and ``overloaded`` say so and ``required`` gives the count that carries it.

    Raises
    ------
    PlanError
        For a bad argument, naming the workload (or system), the key, the value and the range.

    Examples
    --------
    >>> s = System(processors=4, coprocessors=2, accelerators=1)
    >>> r = plan(s, [Workload("payments", "ams", 300, args={"policy": "privacy", "message_kb": 2})])
    >>> r.resources["accelerators"].required >= 1
    True
    """
    if not isinstance(system, System):
        raise PlanError(f"system must be a System (got {value_text(system)})")
    if isinstance(workloads, Workload):
        workloads = [workloads]
    try:
        workloads = list(workloads)
    except TypeError:
        raise PlanError(f"workloads must be a sequence of Workload (got {value_text(workloads)})") from None
    if not workloads:
        raise PlanError("a plan needs at least one workload")
    seen = set()
    for w in workloads:
        if not isinstance(w, Workload):
            raise PlanError(f"workloads must hold Workload objects (got {value_text(w)})")
        if w.name in seen:
            raise PlanError(f"workload {w.name!r}: the name is used twice; names must be unique")
        seen.add(w.name)
    g = np.asarray(_checked(GROWTH, growth, _ARGUMENT, "growth", scalar=False), dtype=float)
    t = np.asarray(_checked(MONTHS, months, _ARGUMENT, "months", scalar=False), dtype=float)
    profiles = [_PROFILES[w.kind](w, system) for w in workloads]
    yearly = np.array([w.growth_per_year for w in workloads])
    base = [np.asarray(1.0 if p.util_form else w.rate, dtype=float) for w, p in zip(workloads, profiles)]
    try:
        shape = np.broadcast_shapes(g.shape, t.shape, *(b.shape for b in base))
    except ValueError:
        raise PlanError("the rates, growth and months are arrays of shapes that do not broadcast: "
                        + ", ".join(str(np.shape(b)) for b in (g, t, *base))) from None
    names = [w.name for w in workloads]
    target = system.max_utilization

    def rates_at(months_ahead):
        # (W, *shape): each workload's rate; a measured utilization grows like a rate of 1
        return np.stack([np.broadcast_to(b * g * (1.0 + yg) ** (months_ahead / 12.0), shape)
                         for b, yg in zip(base, yearly)])

    lam = rates_at(t)
    lam_h = rates_at(t + system.horizon_months)

    # ---- processors: CPU per unit, MSTR administration once per queue manager
    cpu_unit = np.array([sum(p.cpu_us.values()) for p in profiles])                 # µs per unit
    admin = {}
    for p in profiles:
        if p.queue_manager is not None:
            admin[p.queue_manager] = max(admin.get(p.queue_manager, 0.0), p.mstr_per_s)
    fixed_cpu = sum(admin.values()) / 1e6                                          # processors' worth
    cpu_load = lam * cpu_unit.reshape((-1,) + (1,) * len(shape)) / 1e6               # (W, *S)
    pools = {}
    pools["processors"] = _pool_cpu(system, lam, cpu_unit, cpu_load, fixed_cpu, names, target)
    for pool in _CARD:
        pools[pool] = _pool_card(system, pool, lam, profiles, names, target)

    # ---- growth answers, per pool
    resources = {}
    for pool, d in pools.items():
        k = system.installed(pool)
        other = system.other(pool)
        fixed = d["fixed"]
        var = d["loads"].sum(axis=0)
        # a load too small for its factor to be a float (subnormal rates) has unbounded headroom
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            room = (target - other) * k - fixed
            headroom = np.where(var > 0, np.maximum(room, 0.0) / np.where(var > 0, var, 1.0), np.inf)
            util = np.where(k > 0, (var + fixed) / max(k, 1) + other, np.where(var + fixed > 0, np.inf, 0.0))
        if k == 0:
            headroom = np.where(var > 0, 0.0, np.inf)
        months_to = _months(d["loads"], yearly, fixed, np.broadcast_to((target - other) * k, shape).astype(float))
        loads_h = d["loads_at"](lam_h)
        required = _counts(var + fixed, other, target)
        required_h = _counts(loads_h.sum(axis=0) + fixed, other, target)
        if pool in _CARD and system.max_wait_ms is not None:
            required = _meet_wait(required, *d["mix"](lam), other, system.max_wait_ms)
            required_h = _meet_wait(required_h, *d["mix"](lam_h), other, system.max_wait_ms)
        overloaded = util >= 1.0
        wait = np.where(overloaded, np.nan, d["wait_ms"])
        by = {n: _out(np.where(k > 0, ld / max(k, 1), np.where(ld > 0, np.inf, 0.0)))
              for n, ld in zip(names, d["loads"])}
        resources[pool] = ResourceResult(
            installed=k, utilization=_out(util), busy=_out(var + fixed), by_workload=by,
            other=_out(np.broadcast_to(other + (fixed / k if k else 0.0), shape)), rate=_out(d["rate"]),
            exec_ms=_out(d["exec_ms"]), scv=_out(d["scv"]), wait_ms=_out(wait),
            required=_out(required.astype(np.int64)), headroom=_out(headroom), months_to_target=_out(months_to),
            required_at_horizon=_out(required_h.astype(np.int64)),
            overloaded=_out(overloaded), rows={k_: _out(v) for k_, v in d.get("rows", {}).items()},
            row_rates={k_: _out(v) for k_, v in d.get("row_rates", {}).items()},
            row_shares={row: {w_: _out(v) for w_, v in by.items()} for row, by in d.get("row_shares", {}).items()},
            status=_status(pool, util, target, k, required))

    # ---- per workload
    wl = {}
    qm_rate = {}
    for p, l in zip(profiles, lam):
        if p.queue_manager is not None:
            qm_rate[p.queue_manager] = qm_rate.get(p.queue_manager, 0.0) + l
    for qm, rate in qm_rate.items():
        with np.errstate(divide="ignore", over="ignore"):
            tiny = (rate > 0) & ~np.isfinite(admin[qm] / np.where(rate > 0, rate, 1.0))
        if np.any(tiny):
            raise PlanError(f"the AMS rate of queue manager {qm} ({float(np.ravel(rate)[np.argmax(np.ravel(tiny))]):g}/s) "
                            f"is too small to spread its administration ({admin[qm]:g} µs/s) over: "
                            "give 0 or a rate of at least 1e-300 transactions/s")
    cpu_wait = np.where(resources["processors"].overloaded, np.nan, pools["processors"]["wait_ms"])
    for i, (w, p) in enumerate(zip(workloads, profiles)):
        cpu = {k_: _out(np.broadcast_to(v, shape)) for k_, v in p.cpu_us.items()}
        if p.queue_manager is not None:
            with np.errstate(divide="ignore", invalid="ignore"):
                cpu["MSTR"] = _out(np.where(qm_rate[p.queue_manager] > 0,
                                            admin[p.queue_manager] / qm_rate[p.queue_manager], 0.0))
        cpu["total"] = _out(sum(np.asarray(v) for v in cpu.values()))
        delay = np.where(cpu_unit[i] > 0, cpu_wait, 0.0)
        reqs, card_ms = {}, {}
        for pool in _CARD:
            n, tt, _ = p.classes[pool]
            reqs[pool] = float(n.sum())
            card_ms[pool] = float(np.dot(n, tt))
            pw = np.where(resources[pool].overloaded, np.nan, pools[pool]["wait_ms"])
            delay = delay + np.where(reqs[pool] > 0, reqs[pool] * pw, 0.0)
        wl[w.name] = WorkloadResult(kind=w.kind, unit=RATE_UNITS[w.kind], rate=_out(lam[i]), cpu_us=cpu,
                                    requests=reqs, card_ms=card_ms, queueing_ms=_out(delay),
                                    processors_busy=_out(cpu_load[i]))

    utils = np.stack([np.asarray(resources[pool].utilization, dtype=float) * np.ones(shape) for pool in POOLS])
    months_all = np.stack([np.asarray(resources[pool].months_to_target, dtype=float) * np.ones(shape)
                           for pool in POOLS])
    head_all = np.stack([np.asarray(resources[pool].headroom, dtype=float) * np.ones(shape) for pool in POOLS])
    bottleneck = np.asarray(POOLS)[np.argmax(utils, axis=0)]
    # the pool the growth reaches first; among pools never reached (or all at once), the least headroom
    first = np.lexsort((head_all, months_all), axis=0)[0]
    binds = np.asarray(POOLS)[first]
    return PlanResult(system=system, resources=resources, workloads=wl, bottleneck=_out(bottleneck),
                      binds_first=_out(binds), growth=_out(g), months=_out(t))


def _pool_cpu(system, lam, cpu_unit, cpu_load, fixed, names, target):
    """The processors as one M/G/c station: each unit of work one exponential job, the
    administration at the mean job."""
    shape = lam.shape[1:]
    k = system.processors
    s = (cpu_unit / 1e6).reshape((-1,) + (1,) * len(shape))                       # seconds per job
    jobs = np.where(s > 0, lam, 0.0)
    n = jobs.sum(axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        m1 = np.where(n > 0, (jobs * s).sum(axis=0) / np.where(n > 0, n, 1.0), 0.0)
        m2 = np.where(n > 0, (jobs * s * s).sum(axis=0) / np.where(n > 0, n, 1.0), 0.0)
        lam_bg = np.where(m1 > 0, fixed / np.where(m1 > 0, m1, 1.0), 0.0)
        lam_tot = n + lam_bg
        # the background jobs at the mean: E[S^2] of the mixture of exponentials, 2 s^2 per class
        es2 = np.where(lam_tot > 0, (2.0 * m2 * n + 2.0 * m1 * m1 * lam_bg) / np.where(lam_tot > 0, lam_tot, 1.0), 0.0)
        scv = np.where(m1 > 0, es2 / np.where(m1 > 0, m1 * m1, 1.0) - 1.0, 0.0)
    util = (cpu_load.sum(axis=0) + fixed) / k
    ok = util < 1.0
    wait = np.zeros(shape)
    if ok.any():
        wait[ok] = mgc_wait_by_scv(lam_tot[ok], m1[ok], k, scv[ok]) * 1000.0
    return {"loads": cpu_load, "fixed": fixed, "rate": n, "exec_ms": m1 * 1000.0, "scv": scv, "wait_ms": wait,
            "loads_at": lambda lam_h: lam_h * cpu_unit.reshape((-1,) + (1,) * len(shape)) / 1e6}


def _pool_card(system, pool, lam, profiles, names, target):
    """A Crypto Express pool as one M/G/c station: the mixture of every workload's requests."""
    shape = lam.shape[1:]
    k = system.installed(pool)
    other = system.other(pool)
    ns = [p.classes[pool][0] for p in profiles]
    ts = [p.classes[pool][1] for p in profiles]
    per_unit_ms = np.array([float(np.dot(n, tt)) for n, tt in zip(ns, ts)])        # card ms per unit
    busy_unit = np.array([p.busy[pool] for p in profiles])                          # cards' worth per unit
    expand = (-1,) + (1,) * len(shape)
    unit_load = (per_unit_ms / 1000.0 + busy_unit).reshape(expand)
    loads = lam * unit_load                                                        # (W, *S) cards' worth
    req_unit = np.array([float(n.sum()) for n in ns]).reshape(expand)
    t1 = np.array([float(np.dot(n, tt)) for n, tt in zip(ns, ts)]).reshape(expand)         # Σ n t
    t2 = np.array([float(np.dot(n, tt * tt)) for n, tt in zip(ns, ts)]).reshape(expand)    # Σ n t²

    def mix(rates):
        """(requests/s, mean EXEC ms, SCV, cards' worth with no request count) at these rates."""
        r = (rates * req_unit).sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            m1 = np.where(r > 0, (rates * t1).sum(axis=0) / np.where(r > 0, r, 1.0), 0.0)
            m2 = np.where(r > 0, (rates * t2).sum(axis=0) / np.where(r > 0, r, 1.0), 0.0)
            scv = np.where(m1 > 0, np.maximum(m2 / np.where(m1 > 0, m1 * m1, 1.0) - 1.0, 0.0), 0.0)
        return r, m1, scv, (rates * busy_unit.reshape(expand)).sum(axis=0)

    r, m1, scv, unknown = mix(lam)
    with np.errstate(divide="ignore", invalid="ignore"):
        lam_tot = r + np.where(m1 > 0, (unknown + other * k) / np.where(m1 > 0, m1 / 1000.0, 1.0), 0.0)
    util = np.where(k > 0, loads.sum(axis=0) / max(k, 1) + other, np.inf)
    ok = (util < 1.0) & (r > 0)
    wait = np.zeros(shape)
    if ok.any():
        wait[ok] = mgc_wait_by_scv(lam_tot[ok], m1[ok] / 1000.0, k, scv[ok]) * 1000.0
    out = {"loads": loads, "fixed": 0.0, "rate": r, "exec_ms": m1, "scv": scv, "wait_ms": wait,
           "loads_at": lambda lam_h: lam_h * unit_load, "mix": mix}
    if pool == "accelerators":
        # RMF's ME and CRT rows, and each workload's part of them (utilization of the pool)
        kk = max(k, 1)
        by_row = {"ME": {}, "CRT": {}}
        row_rates = {"ME": np.zeros(shape), "CRT": np.zeros(shape)}
        for name, p, l in zip(names, profiles, lam):
            n, tt, labels = p.classes[pool]
            for f, row in (("RSA_ME", "ME"), ("RSA_CRT", "CRT")):
                j = labels.index(f) if f in labels else None
                by_row[row][name] = np.zeros(shape) if j is None else l * n[j] * tt[j] / 1000.0 / kk
                if j is not None:
                    row_rates[row] = row_rates[row] + l * n[j]
        row_rates["other"] = np.maximum(r - row_rates["ME"] - row_rates["CRT"], 0.0)
        rows = {row: sum(by_row[row].values()) for row in ("ME", "CRT")}
        # rounding can leave -1e-17 where nothing else uses the card
        rows["other"] = np.maximum(loads.sum(axis=0) / kk - rows["ME"] - rows["CRT"], 0.0)
        out.update(rows=rows, row_rates=row_rates, row_shares=by_row)
    return out


# ----------------------------------------------------------------------------- plan files
_SYSTEM_KEYS = tuple(System.__dataclass_fields__)
_SYSTEM_REQUIRED = ("processors", "coprocessors", "accelerators")
_WORKLOAD_KEYS = ("name", "kind", "rate", "growth_per_year")


def plan_from_dict(doc: dict, source: str = "the plan") -> tuple:
    """A plan document (a ``[system]`` table and ``[[workload]]`` tables) as ``(System, [Workload])``.

    Every key is checked: an unknown one is an error naming ``source``, the workload, the key and
    what is accepted.  The format is the README's "Plan files" section.
    """
    def fail(msg):
        raise PlanError(f"{source}: {msg}") from None
    if not isinstance(doc, dict):
        fail("a plan is a table with [system] and [[workload]]")
    for key in doc:
        if key not in ("system", "workload"):
            fail(f"unknown table {key!r}: a plan has [system] and [[workload]] only")
    sysdoc = doc.get("system")
    if not isinstance(sysdoc, dict):
        fail("[system] is required (processors, coprocessors, accelerators, ...)")
    for key in sysdoc:
        if key not in _SYSTEM_KEYS:
            fail(f"system: unknown key {key!r}; accepted: {', '.join(_SYSTEM_KEYS)}")
    for key in _SYSTEM_REQUIRED:
        if key not in sysdoc:
            fail(f"system: {key} is required")
    try:
        system = System(**sysdoc)
    except PlanError as e:
        fail(str(e))
    wdocs = doc.get("workload")
    if not isinstance(wdocs, list) or not wdocs:
        fail("at least one [[workload]] table is required")
    workloads = []
    for n, wd in enumerate(wdocs, 1):
        if not isinstance(wd, dict):
            fail(f"workload {n} is not a table")
        for key in ("name", "kind"):
            if key not in wd:
                fail(f"workload {wd.get('name', n)!r}: {key} is required")
        args = {k: v for k, v in wd.items() if k not in _WORKLOAD_KEYS}
        try:
            workloads.append(Workload(wd["name"], wd["kind"], wd.get("rate"), wd.get("growth_per_year", 0.0),
                                      args))
        except PlanError as e:
            fail(str(e))
    names = [w.name for w in workloads]
    dup = next((x for x in names if names.count(x) > 1), None)
    if dup is not None:
        fail(f"workload {dup!r}: the name is used twice; names must be unique")
    for w in workloads:        # each kind's own model checks its arguments once, here
        try:
            _PROFILES[w.kind](w, system)
        except PlanError as e:
            fail(str(e))
    return system, workloads


# A plan file is a few kilobytes; anything this large is not one.
MAX_PLAN_BYTES = 1_000_000


def read_plan(path) -> tuple:
    """Read a TOML plan file: ``(System, [Workload])``; errors name the file (see :func:`plan_from_dict`)."""
    p = Path(path)
    try:
        data = p.read_bytes() if p.stat().st_size <= MAX_PLAN_BYTES else None
    except OSError as e:
        raise PlanError(f"{path}: cannot read the plan file ({e.strerror or e})") from None
    if data is None:
        raise PlanError(f"{path}: a plan file is at most {MAX_PLAN_BYTES:,} bytes")
    try:
        doc = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise PlanError(f"{path}: not UTF-8 text (a TOML plan file is)") from None
    except (tomllib.TOMLDecodeError, RecursionError) as e:
        raise PlanError(f"{path}: not a valid TOML plan: {e}") from None
    return plan_from_dict(doc, str(path))


# ----------------------------------------------------------------------------- spreadsheet tables
# A plan in a workbook: a Workloads table (a header row of keys, a row per workload) and a
# System block (a key and a value per row).  The catalog functions PLAN_RESOURCES,
# PLAN_WORKLOADS and PLAN_VALUE take the two ranges as they are.
RESOURCE_QUANTITIES = ("utilization", "required", "required_at_horizon", "headroom", "months_to_target",
                       "wait_ms", "busy", "installed")
WORKLOAD_QUANTITIES = ("rate", "cpu_us", "queueing_ms", "processors", "coprocessors", "accelerators")
RESOURCE_COLUMNS = ("resource", "installed", "utilization", "required", "required_at_horizon", "headroom",
                    "months_to_target", "wait_ms", "status")
WORKLOAD_COLUMNS = ("name", "kind", "rate", "unit", "cpu_us", "processors", "coprocessors", "accelerators",
                    "queueing_ms")


def _blank(v) -> bool:
    return v is None or (isinstance(v, str) and not v.strip())


def _cell(v):
    """A cell's value as the plan reads it: numbers stay numbers, text is stripped."""
    if isinstance(v, str):
        return v.strip()
    if isinstance(v, float) and v.is_integer() and abs(v) < 2**53:
        return int(v)
    return v


def _table_rows(rows, where: str) -> list:
    """A table as a list of row lists; anything else is refused naming ``where``."""
    if isinstance(rows, (str, bytes)):
        raise PlanError(f"{where} must be a table of rows (got {value_text(rows)})")
    try:
        out = [list(r) for r in rows]
    except TypeError:
        raise PlanError(f"{where} must be a table of rows (got {value_text(rows)})") from None
    for r in out:
        for v in r:
            if not (v is None or isinstance(v, (str, bool, int, float))) or (isinstance(v, int) and abs(v) > 2**63):
                raise PlanError(f"{where}: a cell holds {value_text(v)}; the table takes numbers, text and TRUE/FALSE")
    return out


def workloads_from_rows(rows, where: str = "the workloads table") -> list:
    """Workloads from a table: a header row of keys (``name``, ``kind``, ``rate``,
    ``growth_per_year`` and the kinds' arguments, :data:`KIND_ARGUMENTS`), then one row each.

    Empty rows are skipped (a table with room to add); an empty cell is a key not given.  A header
    that is no key is an error unless its whole column is empty (a column for notes would be
    silently ignored, so it is refused).
    """
    rows = _table_rows(rows, where)
    if not rows or not rows[0]:
        raise PlanError(f"{where}: the first row must name the columns (name, kind, rate, ...)")
    head = [_cell(h) if not _blank(h) else None for h in rows[0]]
    known = set(_WORKLOAD_KEYS) | {k for args in KIND_ARGUMENTS.values() for k in args}
    out = []
    for i, row in enumerate(rows[1:], 2):
        if all(_blank(v) for v in row):
            continue
        d = {}
        for h, v in zip(head, row):
            if _blank(v):
                continue
            if h is None or not isinstance(h, str) or h not in known:
                raise PlanError(f"{where}, row {i}: a value under the column {h!r}, which names no workload key; "
                                f"the keys: name, kind, rate, growth_per_year and each kind's arguments")
            d[h] = _cell(v)
        if "name" not in d:
            raise PlanError(f"{where}, row {i}: name is required")
        if "kind" not in d:
            raise PlanError(f"{where}, row {i} ({d['name']}): kind is required")
        args = {k: v for k, v in d.items() if k not in _WORKLOAD_KEYS}
        try:
            out.append(Workload(str(d["name"]), d["kind"], d.get("rate"), d.get("growth_per_year", 0.0), args))
        except PlanError as e:
            raise PlanError(f"{where}, row {i}: {e}") from None
    if not out:
        raise PlanError(f"{where}: no workload (every row under the header is empty)")
    return out


def system_from_rows(rows, where: str = "the system block") -> System:
    """A System from rows of (key, value): keys as :class:`System` names them; empty rows skipped."""
    d = {}
    for i, row in enumerate(_table_rows(rows, where), 1):
        if all(_blank(v) for v in row):
            continue
        if len(row) != 2:
            raise PlanError(f"{where}: two columns, a key and its value (got {len(row)})")
        key, value = _cell(row[0]), _cell(row[1])
        if key not in _SYSTEM_KEYS:
            raise PlanError(f"{where}, row {i}: {key!r} is no system key; the keys: {', '.join(_SYSTEM_KEYS)}")
        if _blank(value):
            if key in _SYSTEM_REQUIRED:
                raise PlanError(f"{where}, row {i}: {key} has no value")
            continue                      # an optional key left empty: its default
        d[key] = value
    for key in _SYSTEM_REQUIRED:
        if key not in d:
            raise PlanError(f"{where}: {key} is required")
    return System(**d)


def _tables(workloads, system):
    ws = workloads_from_rows(workloads, "workloads")
    names = [w.name for w in ws]
    dup = next((x for x in names if names.count(x) > 1), None)
    if dup is not None:
        raise PlanError(f"workloads: the name {dup!r} is used twice; names must be unique")
    return ws, system_from_rows(system, "system")


def _text(x, kind: str):
    x = float(x)
    if math.isnan(x):
        return "overloaded"
    if math.isinf(x):
        return {"months": "never", "headroom": "unbounded", "utilization": "none installed"}[kind]
    return x


def plan_resources(workloads, system, growth=1.0, months=0.0) -> list:
    """The plan's resources as table rows (the Plan sheet's first table), from the two ranges.

    Parameters
    ----------
    workloads : 2-D sequence
        The Workloads table (header row first), see :func:`workloads_from_rows`.
    system : 2-D sequence
        The System block, rows of (key, value), see :func:`system_from_rows`.
    growth, months : float
        As :func:`plan` (one scenario).

    Returns
    -------
    list of dict
        One per pool, keys :data:`RESOURCE_COLUMNS`; months never reached read ``"never"``, a
        wait of an overloaded pool ``"overloaded"``.
    """
    ws, s = _tables(workloads, system)
    r = plan(s, ws, growth, months)
    if np.ndim(r.bottleneck):
        raise PlanError("PLAN_RESOURCES shows one scenario: growth and months must be single numbers")
    rows = []
    for pool in POOLS:
        x = r.resources[pool]
        rows.append({"resource": pool, "installed": x.installed, "utilization": _text(x.utilization, "utilization"),
                     "required": x.required, "required_at_horizon": x.required_at_horizon,
                     "headroom": _text(x.headroom, "headroom"), "months_to_target": _text(x.months_to_target, "months"),
                     "wait_ms": _text(x.wait_ms, "wait"), "status": x.status})
    return rows


def plan_workloads(workloads, system, growth=1.0, months=0.0) -> list:
    """The plan's workloads as table rows (keys :data:`WORKLOAD_COLUMNS`): rate, CPU µs per unit,
    its share of each pool's utilization and its queueing delay per unit (``"overloaded"`` where a
    pool it uses is)."""
    ws, s = _tables(workloads, system)
    r = plan(s, ws, growth, months)
    if np.ndim(r.bottleneck):
        raise PlanError("PLAN_WORKLOADS shows one scenario: growth and months must be single numbers")
    out = []
    for name, w in r.workloads.items():
        out.append({"name": name, "kind": w.kind, "rate": float(w.rate), "unit": w.unit,
                    "cpu_us": float(w.cpu_us["total"]),
                    **{p: _text(r.resources[p].by_workload[name], "utilization") for p in POOLS},
                    "queueing_ms": _text(w.queueing_ms, "wait")})
    return out


def plan_value(workloads, system, resource, quantity, growth=1.0, months=0.0):
    """One number of the plan: a pool's or a workload's, over scenarios of growth and months.

    Parameters
    ----------
    workloads, system : 2-D sequences
        As :func:`plan_resources`.
    resource : str
        ``"processors"``, ``"coprocessors"``, ``"accelerators"``, or a workload's name.
    quantity : str
        For a pool, one of :data:`RESOURCE_QUANTITIES`; for a workload, one of
        :data:`WORKLOAD_QUANTITIES` (``processors`` etc.: its share of that pool's utilization;
        ``cpu_us``: CPU µs per unit in total).
    growth, months : float or array_like
        As :func:`plan`; arrays give a capacity curve.

    Returns
    -------
    float or ndarray

    Raises
    ------
    UnstableQueueError
        For the wait (or queueing) of an overloaded pool, or a pool with no cards that gets work.
    NotAvailableError
        For months to a target never reached within :data:`MAX_MONTHS`, or the headroom of a pool
        nothing grows on.
    PlanError
        For a bad table, resource or quantity.
    """
    if not isinstance(resource, str) or not resource.strip():
        raise PlanError(f"resource must be processors, coprocessors, accelerators or a workload's name "
                        f"(got {value_text(resource)})")
    res = resource.strip()
    ws, s = _tables(workloads, system)
    q = normalize_choice("quantity", quantity, RESOURCE_QUANTITIES if res in POOLS else WORKLOAD_QUANTITIES)
    r = plan(s, ws, growth, months)
    if res in POOLS:
        x = r.resources[res]
        out = np.asarray(getattr(x, q), dtype=float)
        status = np.broadcast_to(np.asarray(x.status, dtype=object), out.shape)
    elif res in r.workloads:
        w = r.workloads[res]
        out = np.asarray({"rate": w.rate, "cpu_us": w.cpu_us["total"], "queueing_ms": w.queueing_ms}.get(
            q, r.resources.get(q).by_workload[res] if q in POOLS else None), dtype=float)
        status = np.broadcast_to(np.asarray(r.resources[str(np.ravel(r.bottleneck)[0])].status, dtype=object),
                                 out.shape)
        if q == "queueing_ms":       # name the overloaded pool the workload uses
            used = [p for p in POOLS if (p == "processors" or w.requests[p] > 0)]
            status = np.broadcast_to(np.select([np.asarray(r.resources[p].overloaded) for p in used],
                                               [np.asarray(r.resources[p].status, dtype=object) for p in used],
                                               ""), out.shape)
    else:
        raise PlanError(f"resource must be processors, coprocessors, accelerators or a workload's name "
                        f"(got {value_text(resource)}; the workloads: {', '.join(r.workloads)})")
    bad = ~np.isfinite(out)
    if bad.any():
        never = q in ("months_to_target", "headroom")
        what = (f"{res} never reach the {s.max_utilization:.0%} target within {MAX_MONTHS:g} months at these "
                "growth rates" if q == "months_to_target" else f"no load on {res} grows: its headroom is unbounded")
        flat = np.ravel(status)

        def message(i: int) -> str:
            return what if never else str(flat[i])
        first = int(np.flatnonzero(np.ravel(bad))[0])
        err = NotAvailableError if never else UnstableQueueError
        raise err(message(first), mask=bad if out.ndim else np.asarray(True), element_message=message)
    return float(out) if out.ndim == 0 else out
