"""The Inputs sheet's cells: names, labels, formats, defaults and data validation.

Shared by the builder (the default values, the inputs a formula may pass empty), the Inputs
sheet (:mod:`.inputs`) and the package's public interface (:data:`INPUTS`,
:data:`TEMPLATE_DEFAULTS`, :func:`input_defaults`, :func:`excel_validation`).  Nothing here
writes a workbook.
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError, UnknownName

import math
from dataclasses import dataclass

from cryptoplan import model
from cryptoplan.model import domains as D
from cryptoplan.model.domains import Domain, number_text
from cryptoplan.model.params import CIPHERS, ECC_KEY_SIZES, KEY_TYPES, MODES, POLICIES, RSA_KEY_SIZES
from cryptoplan.model.zos.tls import PLATFORMS as TLS_PLATFORMS

__all__ = ["TEMPLATE_DEFAULTS", "MAY_BE_EMPTY", "excel_validation", "MAX_UTILIZATION_CELL", "INPUTS",
           "input_defaults"]

# Inputs that the source documents' measured configuration does not fix (the
# rest -- cards, key, message size, requesters, policy -- come from
# model.defaults(), which reads them from data/figures.csv).  Replace an entry
# here when model.defaults() starts providing it.
TEMPLATE_DEFAULTS = {
    "TxRate": 1000.0,          # transactions/s: a planning target, not a measurement
    "KeyReuse": None,          # empty: integrity and privacy do not reuse keys
    "Recipients": 1,
    "Mode": "ATTLS",           # channel results: the cipher with the most published
    "Cipher": "TLS_CHACHA20_POLY1305_SHA256",  # measurements (round trips, CPU) in data/
    "SSLRKEYC": 0,             # as measured: no secret-key renegotiation
    "Platform": "z16",         # the newest machine with published TLS figures
    "ChannelPairs": 10,        # channel pairs between the two queue managers: a planning input
    "MaxUtilization": 0.7,     # common planning ceiling for Crypto Express
    "MaxWaitMs": None,         # empty: no queueing-delay target
    "ParamsFile": None,        # empty: the packaged fit (or $CRYPTOPLAN_PARAMS's file)
}

#: Inputs a planner may leave empty (their functions' defaults apply).
MAY_BE_EMPTY = frozenset(k for k, v in TEMPLATE_DEFAULTS.items() if v is None)

_KEY_SIZES = tuple(RSA_KEY_SIZES) + tuple(ECC_KEY_SIZES)


def excel_validation(domain: Domain) -> tuple:
    """``(type, operator, formula1, formula2)`` of the Excel data validation stating ``domain``.

    ``whole`` for whole-number domains, else ``decimal``; ``between`` for two bounds (Excel
    includes both), ``greaterThan(OrEqual)`` or ``lessThan(OrEqual)`` for one.  A decimal
    domain with two bounds of which one is excluded has no Excel form: narrow it to a closed
    one first (:meth:`cryptoplan.model.domains.Domain.narrowed`), saying why.
    """
    lo, hi = domain.bounds()
    kind = "whole" if domain.integer else "decimal"
    lo_open, hi_open = domain.lo_open, domain.hi_open
    if domain.integer:              # an excluded bound of whole numbers is the next whole number
        if lo is not None:
            lo, lo_open = (math.floor(lo) + 1.0 if lo_open else math.ceil(lo)), False
        if hi is not None:
            hi, hi_open = (math.ceil(hi) - 1.0 if hi_open else math.floor(hi)), False
    if lo is not None and hi is not None:
        if lo_open or hi_open:
            raise InputError(f"{domain.name} {domain.text()}: Excel's between includes both bounds; "
                             "narrow the domain to a closed one for the data validation")
        return kind, "between", number_text(lo), number_text(hi)
    if hi is None:
        return kind, "greaterThan" if lo_open else "greaterThanOrEqual", number_text(lo), None
    return kind, "lessThan" if hi_open else "lessThanOrEqual", number_text(hi), None


@dataclass(frozen=True)
class _Input:
    """One input cell of the Inputs sheet: its defined name, label, unit, format, note and validation."""

    name: str                  # defined name
    label: str
    unit: str
    number_format: str
    note: str
    choices: tuple = ()        # drop-down list (Lists sheet)
    domain: Domain | None = None   # numbers: what the cell's data validation accepts

    @property
    def validation(self) -> tuple:
        """(type, operator, formula1, formula2) of the cell's data validation; () for none."""
        return () if self.domain is None else excel_validation(self.domain)


# The model's planning ceiling is the open (0, 1), which Excel's inclusive "between" cannot
# state; the cell shows whole percents, so it accepts the whole percents inside: 1%..99%.
MAX_UTILIZATION_CELL = D.MAX_UTILIZATION.narrowed(0.01, 0.99, lo_open=False, hi_open=False)

INPUTS = (
    _Input("TxRate", "Transaction rate (request/reply)", "transactions/s", "#,##0.0",
           "Planned peak rate of AMS request/reply transactions.", domain=D.PLANNED_TX_RATE),
    _Input("MessageKB", "Message size", "KB", "#,##0.0",
           f"1 MB = 1024 KB; {D.MESSAGE_KB.text()}; round trip and channel throughput: "
           f"{D.ROUNDTRIP_MESSAGE_KB.text()} (the published sizes).", domain=D.MESSAGE_KB),
    _Input("Policy", "AMS policy", "", "@", "integrity: sign; privacy: sign + encrypt; "
           "confidentiality: encrypt (with key reuse).", choices=tuple(POLICIES)),
    _Input("KeyType", "Certificate key type", "", "@",
           "NISTECC supports the integrity policy only.", choices=tuple(KEY_TYPES)),
    _Input("KeySize", "Certificate key size", "bits", "0",
           "RSA 1024-4096, NISTECC 192-521.", choices=tuple(str(s) for s in _KEY_SIZES)),
    _Input("KeyReuse", "Key reuse (confidentiality only)", "messages", "#,##0",
           "Leave empty for integrity and privacy; a whole number or the text unlimited."),
    _Input("Recipients", "Recipients per message", "recipients", "0",
           "One key_encrypt per recipient (privacy, confidentiality).", domain=D.RECIPIENTS),
    _Input("Requesters", "Parallel requesters", "requesters", "0",
           "Each has one request outstanding (closed loop): drives the throughput result.",
           domain=D.REQUESTERS),
    _Input("Coprocessors", "Crypto Express coprocessors (CCA mode)", "cards", "0",
           "Cards in coprocessor mode available to the LPAR.", domain=D.CARDS),
    _Input("Accelerators", "Crypto Express accelerators", "cards", "0",
           "Cards in accelerator mode available to the LPAR.", domain=D.CARDS),
    _Input("Processors", "General processors (CPs) of the LPAR", "processors", "0",
           "CPs serving the AMS work: they carry its CPU at TxRate and bound the closed-loop rate.",
           domain=D.PROCESSORS),
    _Input("MaxUtilization", "Utilization ceiling per card", "%", "0%",
           "Target for the cards-required results, e.g. 70%.", domain=MAX_UTILIZATION_CELL),
    _Input("MaxWaitMs", "Queueing-delay ceiling per transaction", "ms", "0.000",
           "Optional target for the cards-required results; empty for none.", domain=D.MAX_WAIT_MS),
    _Input("Mode", "MQ channel protection", "", "@",
           "none, SSLCIPH (MQ TLS) or ATTLS (AT-TLS).", choices=tuple(MODES)),
    _Input("Cipher", "Cipher (IBM name)", "", "@",
           "Used with Mode for the channel results.", choices=tuple(CIPHERS)),
    _Input("SSLRKEYC", "SSLCIPH secret-key reset (SSLRKEYC)", "bytes", "#,##0",
           "0 = never (as measured); SSLCIPH only: renegotiation CPU is added to CHIN.",
           domain=D.SSLRKEYC),
    _Input("Platform", "Machine generation (AMS CPU, channel results)", "", "@",
           "z14, z15 or z16. AMS CPU: the published z14->z15 cost ratios; channels: the z15 "
           "costs (z16 uses z15's for both, none being published for z16); channel starts: "
           "the z15 or z16 column of the start table (none for z14).",
           choices=tuple(TLS_PLATFORMS)),
    _Input("ChannelPairs", "Channel pairs (request/reply)", "pairs", "#,##0",
           "Sender-receiver channel pairs between the two queue managers, each with one "
           "requester: drives the channel throughput.", domain=D.CHANNEL_PAIRS),
    _Input("SSLTASKS", "SSL tasks per channel initiator (SSLTASKS)", "tasks", "0",
           "SSLCIPH encryption runs on these; channels are spread over them.", domain=D.SSLTASKS),
    _Input("CHIDISPS", "Dispatchers per channel initiator (CHIDISPS)", "tasks", "0",
           "Network sends and receives run on these; channels are spread over them.", domain=D.DISPATCHERS),
    _Input("ParamsFile", "Parameter file (calibration)", "", "@",
           "Empty: the packaged fit. A file written by cryptoplan calibrate or fit: full path, "
           "or relative to this workbook's folder. Every result and the Calibration sheet use it."),
)


def input_defaults() -> dict:
    """Default input values: ``model.defaults()`` (measured configuration) + :data:`TEMPLATE_DEFAULTS`."""
    values = dict(TEMPLATE_DEFAULTS)
    measured = model.defaults()
    values.update({k: v for k, v in measured.items() if k in {i.name for i in INPUTS}})
    missing = [i.name for i in INPUTS if i.name not in values]
    if missing:  # pragma: no cover - guarded by tests
        raise UnknownName(f"no default for inputs {missing}")
    return values

