"""What one unit of each kind of workload puts on each station, from the single-workload models.

A profile is the per-unit demand of a workload (CPU µs by address space, card requests and their
EXEC TIME by pool, MQ MSTR's administration): taken from :class:`~cryptoplan.model.zos.ams.AmsWorkload`,
:func:`~cryptoplan.model.zos.tls.tls_cost_us`, :func:`~cryptoplan.model.zos.tls.channel_start_card_ms`,
:func:`~cryptoplan.model.zos.tls.channel_start_cost_us` and :func:`~cryptoplan.model.zos.tls.handshake_cpu_factor`,
never derived again.  :data:`PROFILES` maps each kind to its builder.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ams import AmsWorkload, card_generation_factor
from ..crypto import CARD_FUNCTIONS
from ...domains import RESUMED_SHARE, WORKLOAD_UTIL, Domain
from ...figures import figure, table_in_force
from ...params import CIPHERS, binding, normalize_choice, normalize_cipher, normalize_mode
from ...remember import Remembered
from ..tls import channel_start_card_ms, channel_start_cost_us, handshake_cpu_factor, ocsp_cpu_us, tls_cost_us
from .inputs import CARD_POOLS, KIND_ARGUMENTS, PlanError, System, Workload, checked, choice

__all__ = ["Profile", "PROFILES", "END_SHARE", "handshake_baseline_cpu_us", "workload_profile"]

_FUNCTIONS = tuple(CARD_FUNCTIONS)

# A measured CPU time per unit of work or per handshake, and a card request's EXEC TIME: engineering
# limits of this tool far past any z/OS measurement (a second of CPU per unit, a minute per card
# request), so that no product of a rate and a time overflows.
MEASURED_CPU_US = Domain("cpu_us", 0.0, 1e6, unit="us")
MEASURED_EXEC_MS = Domain("exec_ms", 0.0, 60_000.0, lo_open=True, unit="ms")


# ----------------------------------------------------------------------------- profiles
@dataclass(frozen=True)
class Profile:
    """What one unit of a workload's rate puts on each station.

    Each number is a float, or, where the model is evaluated under parameter draws
    (:func:`cryptoplan.model.params.using_values` with arrays of ``D`` values), an array of shape
    ``(D,)``; a card pool's classes are arrays with the function axis first, ``(F,)`` or ``(F, D)``.
    """

    cpu_us: dict             # address space -> CPU µs per unit
    classes: dict            # card pool -> (requests per unit, EXEC ms per request, function labels)
    busy: dict               # card pool -> cards' worth per unit with no request count (measured utilization)
    mstr_per_s: float = 0.0  # MSTR administration, CPU µs per second of the workload's queue manager
    queue_manager: str | None = None
    util_form: bool = False  # a measured utilization: the "rate" is 1 unit that is the load
    unit: str | None = None  # what the rate counts, where not the kind's (RATE_UNITS)
    txn_per_unit: float = 1.0  # request/reply transactions per unit (a one-way message: half of one)
    notes: tuple = ()        # what the plan assumed for this workload that a planner must read


def _value(x):
    """A model's answer as a profile keeps it: a float, or the array of its draws."""
    a = np.asarray(x, dtype=float)
    return float(a) if a.ndim == 0 else a


def _no_cards():
    return {p: (np.zeros(0), np.zeros(0), ()) for p in CARD_POOLS}


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


def _ams_profile(w: Workload, system: System) -> Profile:
    a = {k: w.arg(k) for k in KIND_ARGUMENTS["ams"]}
    try:
        model = AmsWorkload(a["policy"], a["key_type"], a["key_size"], a["message_kb"], a["key_reuse"],
                            a["recipients"], system.platform, system.card_generation)
    except (ValueError, TypeError) as e:
        raise PlanError(f"workload {w.name!r}: {e}") from None
    if model.shape != ():
        raise PlanError(f"workload {w.name!r}: the kind's arguments take one value each (a scenario axis "
                        "is the rate, growth or months)")
    # a one-way message is put (protected) once and got (unprotected) once: half a request/reply
    # transaction of the model, whose two messages each have one put and one get
    flow = choice(a["flow"], ("request_reply", "one_way"), w.name, "flow")
    half = 0.5 if flow == "one_way" else 1.0
    req, t = model.card_requests()
    parts = model.cpu_parts_us()
    classes = {}
    for pool, card in CARD_POOLS.items():
        on = np.array([CARD_FUNCTIONS[f].card == card for f in _FUNCTIONS])
        classes[pool] = (half * req[on].astype(float), t[on].astype(float),
                         tuple(f for f, o in zip(_FUNCTIONS, on) if o))
    qm = str(a["queue_manager"]).strip() or "QM1"
    return Profile(cpu_us={"application": half * _value(parts["application"]), "AMSM": half * _value(parts["AMSM"])},
                   classes=classes, busy={p: 0.0 for p in CARD_POOLS}, mstr_per_s=_value(parts["mstr_per_s"]),
                   queue_manager=qm, unit="messages/s" if half < 1 else None, txn_per_unit=half)


#: Share of a channel's published CPU (both queue managers' ends) that one end carries: the
#: sending and receiving ends each put and get one message of a request/reply pair and encrypt
#: or decrypt the same bytes; no published figure splits them, so each end is taken as half.
END_SHARE = {"both": 1.0, "local": 0.5}


def _channel_profile(w: Workload, system: System) -> Profile:
    mode, cipher, kb, rk = (w.arg(k) for k in ("mode", "cipher", "message_kb", "sslrkeyc"))
    flow = choice(w.arg("flow"), ("request_reply", "one_way"), w.name, "flow")
    ends = choice(w.arg("ends"), tuple(END_SHARE), w.name, "ends")
    try:
        if cipher is None and normalize_mode(mode) != "none":
            raise PlanError(f"workload {w.name!r}: cipher is required for mode {normalize_mode(mode)}")
        cpu = {space: _value(tls_cost_us(mode, cipher, kb, space, rk, system.platform))
               for space in ("MSTR", "CHIN", "TCPIP")}
    except PlanError:
        raise
    except (ValueError, TypeError) as e:
        raise PlanError(f"workload {w.name!r}: {e}") from None
    # a one-way message is half a request/reply transaction; this LPAR's end is half of both
    half = 0.5 if flow == "one_way" else 1.0
    share = half * END_SHARE[ends]
    return Profile(cpu_us={k: share * v for k, v in cpu.items()}, classes=_no_cards(),
                   busy={p: 0.0 for p in CARD_POOLS}, unit="messages/s" if half < 1 else None, txn_per_unit=half)


def _cipher_handshake(cipher: str) -> tuple:
    """(key exchange, certificate, protocol) of an IBM cipher name."""
    protocol = CIPHERS[cipher][0]
    kx = "ECDHE" if protocol == "TLS1.3" or "ECDHE" in cipher else "RSA"
    return kx, "ECDSA" if "ECDSA" in cipher else "RSA", protocol


def _card_times(cipher, system: System) -> dict:
    gen = card_generation_factor(system.card_generation)
    return {p: channel_start_card_ms(cipher, card) * gen for p, card in CARD_POOLS.items()}


def _handshake_profile(w: Workload, system: System) -> Profile:
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
            MEASURED_CPU_US.check(a["cpu_us"], "cpu_us", scalar=True))
        space = normalize_choice("address_space", a["address_space"], ("TCPIP", "application"))
        times = _card_times(cipher, system)
    except (ValueError, TypeError) as e:
        raise PlanError(f"workload {w.name!r}: {e}") from None
    cpu = base * ((1.0 - share) * full + share * resumed)
    classes = {p: (np.array([1.0 - share]) if times[p] > 0 else np.zeros(1), np.array([times[p]]),
                   ("handshake",)) for p in CARD_POOLS}
    notes: tuple[str, ...] = ()
    if a["card_mode"] is None and card_mode == "accelerator":
        on_cop = handshake_cpu_factor(resumption=False, **{**kw, "card_mode": "coprocessor"})
        notes = (f"no coprocessors installed, so its handshakes use the accelerators (card_mode); "
                 f"a full handshake then costs {full / on_cop:.3g} times the CPU it costs with a coprocessor"
                 + (" (the (EC)DHE server's RSA signature runs in software)" if full > on_cop else ""),)
    return Profile(cpu_us={space: cpu}, classes=classes, busy={p: 0.0 for p in CARD_POOLS}, notes=notes)


def _start_profile(w: Workload, system: System) -> Profile:
    mode, cipher = w.arg("mode"), w.arg("cipher")
    try:
        m = normalize_mode(mode)
        cpu = {space: _value(channel_start_cost_us(m, cipher, space, system.platform)) for space in ("CHIN", "TCPIP")}
        # AT-TLS and unprotected starts use no Crypto Express (seed 002's AT-TLS certificates did not)
        times = _card_times(normalize_cipher(cipher), system) if m == "SSLCIPH" else {p: 0.0 for p in CARD_POOLS}
    except (ValueError, TypeError) as e:
        raise PlanError(f"workload {w.name!r}: {e}") from None
    classes = {p: (np.array([1.0 if times[p] > 0 else 0.0]), np.array([times[p]]), ("channel start",))
               for p in CARD_POOLS}
    return Profile(cpu_us=cpu, classes=classes, busy={p: 0.0 for p in CARD_POOLS})


def _measured_profile(w: Workload, system: System) -> Profile:
    card = choice(w.arg("card"), ("coprocessors", "accelerators", "processors"), w.name, "card",
                   lambda v: normalize_choice("card", v, ("coprocessors", "accelerators", "processors"),
                                              {"coprocessor": "coprocessors", "accelerator": "accelerators",
                                               "processor": "processors", "cpu": "processors"}))
    exec_ms, util, cpu_us = (w.args.get(k) for k in ("exec_ms", "utilization", "cpu_us"))
    classes, busy, cpu = _no_cards(), {p: 0.0 for p in CARD_POOLS}, {}
    given = [k for k, v in (("exec_ms", exec_ms), ("utilization", util), ("cpu_us", cpu_us)) if v is not None]
    need = {"processors": ("utilization", "cpu_us")}.get(card, ("utilization", "exec_ms"))
    if len(given) != 1 or given[0] not in need:
        raise PlanError(f"workload {w.name!r}: a measured load on {card} takes exactly one of "
                        f"{' or '.join(need)} (got {', '.join(given) or 'neither'})")
    if util is not None:
        u = checked(WORKLOAD_UTIL, util, w.name, "utilization")
        load = u * system.installed(card)   # RMF's utilization per server x servers = servers' worth
        if card == "processors":
            cpu = {"other": load * 1e6}
        else:
            busy[card] = load
        return Profile(cpu_us=cpu, classes=classes, busy=busy, util_form=True)
    if cpu_us is not None:
        return Profile(cpu_us={"other": checked(MEASURED_CPU_US, cpu_us, w.name, "cpu_us")},
                        classes=classes, busy=busy)
    t = checked(MEASURED_EXEC_MS, exec_ms, w.name, "exec_ms")
    classes[card] = (np.array([1.0]), np.array([t]), ("measured",))
    return Profile(cpu_us=cpu, classes=classes, busy=busy, unit=f"{card[:-1]} requests/s")


def _ocsp_profile(w: Workload, system: System) -> Profile:
    """New TLS connections checked by an OCSP responder: the site's CPU per connection without OCSP
    (``connection_cpu_us``, SSL server and TCPIP together) times seed 004's total change with it
    (:func:`~cryptoplan.model.zos.tls.ocsp_cpu_us`: the validation moves to the responder, on
    another system, so the cards see nothing of it)."""
    try:
        cpu = _value(ocsp_cpu_us(w.arg("connection_cpu_us"), "total"))
    except (ValueError, TypeError) as e:
        raise PlanError(f"workload {w.name!r}: {e}") from None
    return Profile(cpu_us={"connection": cpu}, classes=_no_cards(), busy={p: 0.0 for p in CARD_POOLS})


PROFILES = {"ams": _ams_profile, "channel": _channel_profile, "handshakes": _handshake_profile,
             "channel_starts": _start_profile, "measured": _measured_profile, "ocsp": _ocsp_profile}


#: The profiles built for the last workloads, systems, parameters and figures met: a plan's
#: workloads are checked when they are read (:func:`~.read.read_plan`), planned, and planned again
#: for a report.
_BUILT = Remembered(64)
#: Those built under a shared block of arrays of parameter sets (a sweep's draws), apart and
#: fewer: each entry keeps its block, the draws, alive.
_DRAWN = Remembered(32)
_BLOCK = "a block of arrays of parameter sets, by identity"


def _profile_key(w: Workload, system: System):
    """The key a profile is remembered by, or None (not remembered): the workload's name, kind and
    arguments (each with its type, a float by its bits: True and 1, or -0.0 and 0.0, are other
    arguments, which a builder may refuse or take), the system, the figures table in force, and the
    parameters in force (a :func:`~cryptoplan.model.params.using_values` block by its values, the
    parameter set by identity; a block of arrays of parameter sets, a sweep's draws, by identity
    too where its maker shares it, as :func:`~.tables.plan_value` remembers its plans: a sweep's
    chunks plan under the same draws, the same object, again and again).  None for an argument
    that is not a plain value, or under arrays of parameter sets not shared (a dict of draws given
    to :func:`~.evaluate.plan` is a block of its own each call: nothing would be found again)."""
    over, params = binding()
    given = None if over is None else over.key()
    if over is not None and given is None:
        if not over.shared:
            return None
        given = (_BLOCK, id(over))
    try:
        args = tuple((k, type(v), v.hex() if type(v) is float else v) for k, v in sorted(w.args.items()))
        key = (given, id(params), table_in_force(), w.name, w.kind, args, system)
        hash(key)
    except (TypeError, ValueError):
        return None
    return key


def workload_profile(w: Workload, system: System) -> Profile:
    """``w``'s :class:`Profile` on ``system`` under the parameters and figures in force:
    ``PROFILES[w.kind]``, built once for the same :func:`_profile_key` and shared after that, so a
    caller must not change it.

    Raises
    ------
    PlanError
        As the kind's builder: its model refuses the arguments (never remembered).
    """
    key = _profile_key(w, system)
    # the entry keeps the parameter set and the values block whose ids its key holds
    over = binding()[0]
    kept = _DRAWN if over is not None and over.key() is None else _BUILT     # (key() is made once)
    return kept.get(key, lambda: PROFILES[w.kind](w, system), keep=binding())
