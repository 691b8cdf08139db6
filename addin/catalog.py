"""The declarative catalog of cryptoplan's Excel functions.

One :class:`Function` entry per Excel function: its name, the :mod:`cryptoplan.model`
function it wraps, its Excel function-wizard category, its arguments (name,
kind, help, unit, default, allowed values) and the unit of its result.
Everything else is derived from this table:

* :mod:`cryptoplan.addin.udfs` generates the xlwings functions from it (names,
  signatures, ``@xw.func(category=...)``, ``@xw.arg(..., doc=...)``);
* :mod:`cryptoplan.addin.convert` converts Excel cells to Python values by argument kind;
* ``cryptoplan functions`` prints it, ``--json`` as JSON, ``--markdown`` as the
  table in docs/spreadsheets.md, section "Excel functions";
* ``tests/test_catalog.py`` checks that the catalog, the xlwings metadata, the
  docs/spreadsheets.md table and the signatures of the wrapped model functions agree.

A numeric argument declares its :class:`cryptoplan.model.domains.Domain`: the range
part of its help is that domain's text (the help is written with a ``{range}``
placeholder), and ``tests/test_catalog.py`` calls the wrapped model function at and
just beyond each bound to show that the declaration is what the model accepts.

Argument kinds (what a cell may hold; see :mod:`cryptoplan.addin.convert`):

``number``
    A number (numeric text such as ``"2048"`` is accepted).
``integer``
    A whole number (``2048.0`` from Excel is accepted).
``text``
    Text; ``choices`` lists the accepted values (case-insensitive; the model
    function also accepts the aliases it documents).
``bool``
    TRUE/FALSE, 1/0, or the text true/false/yes/no.
``number_or_text``
    A number or a keyword (key reuse: a count or ``unlimited``).
``vector``
    A whole row or column of numbers passed as one list (MVA stations); not
    broadcast.
``range``
    A whole range passed as one table of cells (a plan's Workloads table, its System
    block); not broadcast.
``params_file``
    One cell naming a parameter file (:class:`cryptoplan.model.params.Parameters`) the
    function evaluates with; empty for the one the environment selects.  Not
    broadcast, not passed to the model function: the call runs inside
    :func:`cryptoplan.model.params.using_parameters`.  Every function whose result depends
    on the fitted parameters ends with it (``tests/test_catalog.py`` checks
    both ways).

Every argument except ``vector`` and ``range`` ones is *broadcast*: give a range instead of
a single cell and the function is evaluated element by element.
"""

from __future__ import annotations

from cryptoplan.model.errors import InputError, UnknownName

from dataclasses import dataclass
from typing import Any


from cryptoplan import model      # lazy: a function's module loads on first use
from cryptoplan.model import domains as D
from cryptoplan.model.zos.ams import AMS_ADDRESS_SPACES, AMS_PLATFORMS
from cryptoplan.model.zos.crypto import OPERATIONS
from cryptoplan.model.zos.quantum_safe import QS_ALGORITHMS, QS_TARGETS
from cryptoplan.model.domains import Domain
from cryptoplan.model.figures import figure
from cryptoplan.model.queueing.mgc import MGC_METHODS
from cryptoplan.model.zos.plan import (
    RESOURCE_COLUMNS, RESOURCE_QUANTITIES, TEXT_COLUMNS, TIMELINE_COLUMNS, WORKLOAD_COLUMNS, WORKLOAD_QUANTITIES,
)
from cryptoplan.model.params import (
    ADDRESS_SPACES, CIPHERS, ECC_KEY_SIZES, KEY_TYPES, MODES, POLICIES, RSA_KEY_SIZES,
)
from cryptoplan.model.zos.tls import PLATFORMS as TLS_PLATFORMS
from cryptoplan.model.zos.tls import START_PLATFORMS

__all__ = [
    "CALC_SERVICE", "CALC_PREFIX",
    "REQUIRED", "KINDS", "CATEGORIES", "Arg", "Function", "CATALOG", "get", "as_dicts",
    "markdown_table", "text_listing",
]

#: The UNO service of the LibreOffice Calc add-in (:mod:`cryptoplan.addin.calc`).  Calc writes a call to
#: an add-in function that maps no compatibility name as ``ORG.CRYPTOPLAN.FUNCTIONS.NAME(...)``;
#: the formula engine reads that spelling too, so it is declared here, beside the names.
CALC_SERVICE = "org.cryptoplan.Functions"
CALC_PREFIX = CALC_SERVICE.upper() + "."

KINDS = ("number", "integer", "text", "bool", "number_or_text", "vector", "range", "params_file")
QUEUEING = "cryptoplan queueing"
PLANNING = "cryptoplan planning"
CATEGORIES = (QUEUEING, PLANNING)
# Excel's function wizard (Application.MacroOptions) accepts at most 255
# characters per description; xlwings truncates longer ones silently.
WIZARD_LIMIT = 255


class _Required:
    """Sentinel: the argument has no default."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED: Any = _Required()


def _fmt(value) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@dataclass(frozen=True)
class Arg:
    """One argument of an Excel function.

    Parameters
    ----------
    name : str
        Argument name, identical to the wrapped model function's parameter.
    kind : str
        One of :data:`KINDS`: how a cell is converted (see module docstring).
    help : str
        What the argument means and the allowed range, for the function wizard.
    unit : str
        Unit of the value ("" for dimensionless or text).
    default : object
        Value used for an omitted argument or an empty cell; :data:`REQUIRED`
        if there is none.  ``None`` means "not given" to the model function.
    choices : tuple of str
        Accepted values of a ``text`` argument (drop-down lists use them).
    domain : Domain or None
        The numbers a numeric argument accepts (:mod:`cryptoplan.model.domains`); the
        help states its :meth:`~cryptoplan.model.domains.Domain.text`.
    """

    name: str
    kind: str
    help: str
    unit: str = ""
    default: Any = REQUIRED
    choices: tuple = ()
    domain: Domain | None = None

    @property
    def required(self) -> bool:
        """True if the argument has no default."""
        return self.default is REQUIRED

    def wizard_text(self) -> str:
        """Help shown by Excel's function wizard (help, unit, default), <= 255 chars."""
        text = self.help
        if self.unit:
            text += f" Unit: {self.unit}."
        if not self.required:
            text += f" Optional (default {_fmt(self.default)})."
        return text

    def signature_text(self) -> str:
        """``name`` or ``[name=default]`` for tables and the CLI."""
        return self.name if self.required else f"[{self.name}={_fmt(self.default)}]"

    def as_dict(self) -> dict:
        """JSON-ready description."""
        return {"name": self.name, "kind": self.kind, "help": self.help, "unit": self.unit,
                "required": self.required,
                "default": None if self.required else self.default,
                "choices": list(self.choices),
                "range": None if self.domain is None else self.domain.text()}


@dataclass(frozen=True)
class Function:
    """One Excel function: a thin wrapper over ``cryptoplan.model.<model>``.

    Parameters
    ----------
    name : str
        Excel name (upper case).
    model : str
        Name of the wrapped function in :mod:`cryptoplan.model` (looked up at call time).
    category : str
        Function-wizard category, one of :data:`CATEGORIES`.
    help : str
        One-sentence description for the function wizard (<= 255 chars).
    args : tuple of Arg
        In the order of the model function's parameters (a prefix of them).
    unit : str
        Unit of the result.
    result : {"number", "integer", "table"}
        ``table`` returns a 2-D array with a header row (``columns``).
    columns : tuple of str
        Column keys of a ``table`` result, in order.
    """

    name: str
    model: str
    category: str
    help: str
    args: tuple
    unit: str
    result: str = "number"
    columns: tuple = ()

    @property
    def params_arg(self) -> int | None:
        """Position of the ``params_file`` argument, or None if the result needs no parameters."""
        for i, a in enumerate(self.args):
            if a.kind == "params_file":
                return i
        return None

    @property
    def model_args(self) -> tuple:
        """The arguments passed on to the model function (all but ``params_file``)."""
        return tuple(a for a in self.args if a.kind != "params_file")

    def signature_text(self) -> str:
        """``NAME(a, b, [c=1])``."""
        return f"{self.name}({', '.join(a.signature_text() for a in self.args)})"

    def model_function(self):
        """The wrapped :mod:`cryptoplan.model` function (raises AttributeError if absent)."""
        return getattr(model, self.model)

    def as_dict(self) -> dict:
        """JSON-ready description."""
        return {"name": self.name, "model": f"cryptoplan.model.{self.model}", "category": self.category,
                "help": self.help, "arguments": [a.as_dict() for a in self.args],
                "result": self.result, "unit": self.unit, "columns": list(self.columns)}


# ----------------------------------------------------------------- arguments
def _a(name, kind, help, unit="", default=REQUIRED, choices=(), domain=None):
    """An argument; ``{range}`` in ``help`` becomes the text of ``domain`` (exactly one of both or neither)."""
    if (domain is None) != ("{range}" not in help) or help.count("{range}") > 1:
        raise InputError(f"argument {name}: give a domain and one {{range}} in its help, or neither")
    text = help if domain is None else help.replace("{range}", domain.text())
    return Arg(name, kind, text, unit, default, tuple(choices), domain)


# the smallest SSLRKEYC that counts (below it the threshold is this many bytes)
_SSLRKEYC_FLOOR = int(figure("ref_sslrkeyc_min_effective").target() * 1024)


# queueing
TRAFFIC = _a("traffic", "number", "Offered load A = arrival rate x mean service time; {range} "
             "(ERLANGC: < servers).", "erlangs", domain=D.TRAFFIC)
SERVERS = _a("servers", "number", "Number of servers c; {range} (fractional values use the "
             "continuous extension).", "servers", domain=D.SERVERS)
ARRIVAL_RATE = _a("arrival_rate", "number", "Arrival rate lambda per time unit of service_time; "
                  "{range}.", "1/time unit", domain=D.ARRIVAL_RATE)
SERVICE_TIME = _a("service_time", "number", "Mean service time of one request; {range}. Results "
                  "are in the same time unit.", "time unit", domain=D.SERVICE_TIME)
SERVERS_Q = _a("servers", "number", "Number of servers c; {range}; arrival_rate x service_time "
               "must be below it (stable queue).", "servers", domain=D.SERVERS)
P = _a("p", "number", "Probability of the percentile, {range}, e.g. 0.95.", domain=D.PERCENTILE)
SERVICE_SCV = _a("service_scv", "number", "Squared coefficient of variation of service time; "
                 "{range}: 0 constant (crypto operations), 1 exponential; cosmetatos: "
                 f"{D.COSMETATOS_SERVICE_SCV.text()}.", "", 0.0, domain=D.SERVICE_SCV)
ARRIVAL_SCV = _a("arrival_scv", "number", "Squared coefficient of variation of inter-arrival "
                 "times; {range}: 1 Poisson (cosmetatos requires 1).", "", 1.0, domain=D.ARRIVAL_SCV)
METHOD = _a("method", "text", "Approximation: allen-cunneen (G/G/c) or cosmetatos (M/G/c, "
            f"service_scv {D.COSMETATOS_SERVICE_SCV.text()}).", "", "allen-cunneen", MGC_METHODS)
MAX_UTIL_Q = _a("max_utilization", "number", "Ceiling on utilization per server, {range}; "
                "empty for none.", "fraction", None, domain=D.MAX_SERVER_UTILIZATION)
MAX_WAIT_Q = _a("max_wait", "number", "Ceiling on the mean wait in queue; {range}; empty for none.",
                "time unit of service_time", None, domain=D.MAX_WAIT)
WAIT_PCT = _a("wait_percentile", "number", "Percentile p {range} of a wait-time target; "
              "give with max_percentile_wait.", "", None, domain=D.PERCENTILE)
MAX_PCT_WAIT = _a("max_percentile_wait", "number", "Ceiling on the wait_percentile quantile of "
                  "the wait; {range}.", "time unit of service_time", None, domain=D.MAX_PERCENTILE_WAIT)
POPULATION = _a("population", "integer", "Customers in the closed network (requesters, "
                "connections); whole number {range}.", "customers", domain=D.POPULATION)
DEMANDS = _a("demands", "vector", "Service demand per transaction at each station: a row or "
             "column of numbers {range}, one per station.", "time unit", domain=D.DEMAND)
SERVERS_V = _a("servers", "vector", "Servers per station, same length as demands: whole "
               "numbers >= 1, or inf for a delay station. Empty: all 1.", "servers", None)
THINK_TIME = _a("think_time", "number", "Think time per cycle; {range}.", "time unit of demands",
                0.0, domain=D.THINK_TIME)

# planning
_KEY_SIZES = tuple(str(s) for s in RSA_KEY_SIZES + ECC_KEY_SIZES)
OPERATION = _a("operation", "text", "Asymmetric operation: sign, verify, key_encrypt or "
               "key_decrypt.", "", REQUIRED, OPERATIONS)
POLICY = _a("policy", "text", "AMS policy: integrity, privacy or confidentiality.", "",
            REQUIRED, POLICIES)
KEY_TYPE = _a("key_type", "text", "Certificate key type: RSA or NISTECC (NISTECC: integrity "
              "only).", "", REQUIRED, KEY_TYPES)
KEY_SIZE = _a("key_size", "integer", "Certificate key size: RSA 1024, 2048, 3072, 4096; "
              "NISTECC 192, 224, 256, 384, 521.", "bits", REQUIRED, _KEY_SIZES)
MESSAGE_KB = _a("message_kb", "number", "Message size; {range} (1 MB = 1024 KB).", "KB",
                domain=D.MESSAGE_KB)
RT_MESSAGE_KB = _a("message_kb", "number", "Message size; {range}: the sizes round trips are "
                   "published for (1 MB = 1024 KB).", "KB", domain=D.ROUNDTRIP_MESSAGE_KB)
KEY_REUSE = _a("key_reuse", "number_or_text", "Confidentiality key reuse: whole number "
               "{range} or unlimited; leave empty for integrity and privacy.", "messages",
               None, domain=D.KEY_REUSE)
REQUESTERS = _a("requesters", "integer", "Parallel requesters, one request outstanding each; "
                "{range}.", "requesters", 1, domain=D.REQUESTERS)
COPROCESSORS = _a("coprocessors", "integer", "Crypto Express cards in coprocessor (CCA) mode "
                  "for the LPAR; {range}. Empty: the measured configuration (model.defaults()).",
                  "cards", None, domain=D.CARDS)
ACCELERATORS = _a("accelerators", "integer", "Crypto Express cards in accelerator mode for the "
                  "LPAR; {range}. Empty: the measured configuration (model.defaults()).", "cards",
                  None, domain=D.CARDS)
CARD_GEN = _a("card_generation", "text", "Crypto Express generation: CEX6S, CEX7S or CEX8S (card "
              "times are fitted to CEX8S; CEX7S the same; CEX6S up to 13% slower).", "", "CEX8S",
              ("CEX6S", "CEX7S", "CEX8S"))
OTHER_COP = _a("other_coprocessor_util", "number", "Fraction of each coprocessor other LPARs keep busy; "
               "{range}.", "fraction", 0.0, domain=D.OTHER_LPAR_UTIL)
OTHER_ACC = _a("other_accelerator_util", "number", "Fraction of each accelerator other LPARs keep busy; "
               "{range}.", "fraction", 0.0, domain=D.OTHER_LPAR_UTIL)
OTHER_LPAR = _a("other_lpar_util", "number", "Fraction of each card other LPARs keep busy; {range}.",
                "fraction", 0.0, domain=D.OTHER_LPAR_UTIL)
RMF_FUNCTION = _a("rmf_row", "text", "RMF row: summary, or the accelerator's ME or CRT row.", "", "summary",
                  ("summary", "ME", "CRT"))
SERVICE_SCV_CARD = _a("service_scv", "number", "Service-time SCV to use instead of the request mix's; "
                      "{range}; empty for the mix's.", "", None, domain=D.SERVICE_SCV)
PROCESSORS = _a("processors", "integer", "General processors (CPs) of the LPAR; {range}. Empty: the "
                f"{int(figure('ref_start_cfg_cps').target())} dedicated CPs of the MQ for z/OS performance "
                "reports' LPAR.", "processors", None, domain=D.PROCESSORS)
RECIPIENTS = _a("recipients", "integer", "Recipients per message (one key_encrypt each); {range}.",
                "recipients", 1, domain=D.RECIPIENTS)
AMS_SPACE = _a("address_space", "text", "CPU part: total, application, AMSM or MSTR.", "",
               "total", AMS_ADDRESS_SPACES)
TX_RATE = _a("tx_rate", "number", "Transaction (request/reply) rate; {range}.",
             "transactions/s", domain=D.TX_RATE)
CARD = _a("card", "text", "Card type: accelerator or coprocessor.", "", "accelerator",
          ("accelerator", "coprocessor"))
CARDS = _a("cards", "integer", "Cards of that type; {range}.", "cards", 1, domain=D.CARDS)
MAX_UTIL = _a("max_utilization", "number", "Ceiling on utilization (cards: RMF's summary, "
              "requests x EXEC TIME per card), {range}.", "fraction", 0.7, domain=D.MAX_UTILIZATION)
MAX_WAIT_MS = _a("max_wait_ms", "number", "Ceiling on the mean queueing delay per transaction "
                 "at the cards; {range}; empty for none.", "ms", None, domain=D.MAX_WAIT_MS)
MODE = _a("mode", "text", "Channel protection: none, SSLCIPH (MQ TLS) or ATTLS (AT-TLS).", "",
          REQUIRED, MODES)
CIPHER = _a("cipher", "text", "IBM cipher name, e.g. TLS_RSA_WITH_AES_256_CBC_SHA256 or "
            "TLS_AES_256_GCM_SHA384 (list: cryptoplan functions).", "", REQUIRED, tuple(CIPHERS))
TLS_SPACE = _a("address_space", "text", "CPU part: total (MSTR+CHIN+TCPIP), MSTR, CHIN or "
               "TCPIP.", "", None, ADDRESS_SPACES)
KEY_EXCHANGE = _a("key_exchange", "text", "Key exchange: RSA, ECDHE or DHE.", "", "ECDHE",
                  ("RSA", "ECDHE", "DHE"))
CERTIFICATE = _a("certificate", "text", "Server certificate key type: RSA or ECDSA.", "",
                 "RSA", ("RSA", "ECDSA"))
PROTOCOL = _a("protocol", "text", "Protocol version: TLS1.2 or TLS1.3.", "", "TLS1.2",
              ("TLS1.2", "TLS1.3"))
RESUMPTION = _a("resumption", "bool", "TRUE for an abbreviated (resumed) handshake.", "", False)
SYSPLEX_TICKETS = _a("sysplex_tickets", "bool", "TRUE if session tickets are shared across the "
                     "sysplex.", "", False)
FIPS = _a("fips", "bool", "TRUE for System SSL in FIPS 140 mode.", "", False)
CARD_MODE = _a("card_mode", "text", "Crypto Express mode serving the handshake: "
               "coprocessor or accelerator.", "", "coprocessor", ("coprocessor", "accelerator"))
HEAPPOOLS64 = _a("heappools64", "bool", "TRUE if the LE runtime option HEAPPOOLS64 is on.", "",
                 True)
CONNECTION_CPU = _a("connection_cpu_us", "number", "Measured CPU per new connection without "
                    "OCSP offload; {range}.", "us", domain=D.CONNECTION_CPU_US)
OCSP_SPACE = _a("address_space", "text", "CPU part, e.g. total.", "", "total")
SSLRKEYC = _a("sslrkeyc", "integer", "SSLCIPH secret-key reset threshold; {range}: 0 never (as "
              f"measured), below {_SSLRKEYC_FLOOR} counts as {_SSLRKEYC_FLOOR}.", "bytes", 0, domain=D.SSLRKEYC)
PLATFORM = _a("platform", "text", "Machine: z14, z15 or z16 (z16 uses the z15 channel costs and "
              "its own renegotiation costs).", "", "z16", TLS_PLATFORMS)
AMS_PLATFORM = _a("platform", "text", "Machine: z13, z14, z15 or z16; the published z13/z14 "
                  "and z14/z15 AMS cost ratios (z16 uses z15's, none being published).", "",
                  "z16", AMS_PLATFORMS)
START_PLATFORM = _a("platform", "text", "Machine: z15 or z16, the columns of the published "
                    "channel-start table.", "", "z16", START_PLATFORMS)
START_RATE = _a("start_rate", "number", "Channel starts per second; {range}.", "starts/s",
                domain=D.START_RATE)
CARD_START = _a("card", "text", "Card type: coprocessor or accelerator.", "", "coprocessor",
                ("coprocessor", "accelerator"))
# Channel start functions take no cipher for unprotected channels (mode none).
CIPHER_OPT = _a("cipher", "text", CIPHER.help + " Leave empty only with mode none.", "", None,
                tuple(CIPHERS))

CHANNEL_PAIRS = _a("channel_pairs", "integer", "Sender-receiver channel pairs between the two "
                   "queue managers; {range} (two channels per pair on each).", "pairs", 1,
                   domain=D.CHANNEL_PAIRS)
CHANNEL_REQUESTERS = _a("requesters", "integer", "Requesters per channel pair, one request in "
                        "flight each; {range}.", "requesters", 1, domain=D.CHANNEL_REQUESTERS)
SSLTASKS = _a("ssltasks", "integer", "SSLTASKS on each queue manager; {range}; required for SSLCIPH.",
              "tasks", None, domain=D.SSLTASKS)
DISPATCHERS = _a("dispatchers", "integer", "CHIDISPS on each queue manager; {range}; empty for the "
                 f"default {int(figure('ref_chidisps_default').target())}.", "tasks", None, domain=D.DISPATCHERS)
ROUNDTRIP = _a("roundtrip_us", "number", "Round trip of one transaction alone on one channel pair; "
               "{range}; empty for the published ones (Sharkey's AT-TLS channels blog, 2021: CHACHA20 only, "
               f"{D.ROUNDTRIP_MESSAGE_KB.text()} KB).", "us", None, domain=D.ROUNDTRIP_US)
TASK_RATIO = _a("task_elapsed_ratio", "number", "SSL-task/dispatcher elapsed time per CPU time "
                "(SMF 115 task statistics); {range}; empty for the parameter file's (1 unless calibrated).",
                "ratio", None, domain=D.TASK_ELAPSED_RATIO)
CPS = _a("cps", "number", "General CPs of each LPAR, {range}: a station of the network, so they cap the "
         "rate; empty for no CPU limit.", "CPs", None, domain=D.CPS)
CH_MESSAGE_KB = _a("message_kb", "number", "Request and reply size; {range} with the published "
                   f"round trip, {D.MESSAGE_KB.text()} with roundtrip_us.", "KB", domain=D.ROUNDTRIP_MESSAGE_KB)

PARAMS_FILE = _a("params_file", "params_file", "Parameter file to evaluate with (JSON written by "
                 "cryptoplan fit or calibrate), one cell; empty: CRYPTOPLAN_PARAMS's file, else the "
                 "packaged fit.", "", None)

# after params_file (a formula without it means what it meant): the confidence a count is wanted at
COUNT_LEVEL = _a("level", "number", "Confidence that the count suffices: the count at this quantile of the "
                 "model's 1,000 parameter draws (0.9: enough in 90% of them); {range}; empty: the count "
                 "under the fitted parameters.", "fraction", None, domain=D.BAND_LEVEL)

# a plan: the Workloads table and the System block, passed whole
PLAN_WORKLOADS_RANGE = _a("workloads", "range", "The Workloads table: a header row (name, kind, rate, "
                          "growth_per_year and the kinds' keys), then a row per workload; empty rows skipped.")
PLAN_SYSTEM_RANGE = _a("system", "range", "The System block: rows of a key (processors, coprocessors, "
                       "accelerators, platform, card_generation, max_utilization, ...) and its value.")
PLAN_GROWTH = _a("growth", "number", "A factor on every workload's rate (what-if); {range}.", "factor", 1.0,
                 domain=D.GROWTH)
PLAN_MONTHS = _a("months", "number", "Months ahead, each workload at its growth_per_year; {range}.", "months",
                 0.0, domain=D.MONTHS)
# after params_file: a formula of an older template, without it, means what it meant
PLAN_PROFILES_RANGE = _a("profiles", "range", "The Profiles table: a header row of profile names, under each "
                         "its 24, 48 or 96 factors from 00:00; empty: no daily profiles.", "", None)
# after the profiles: servers already ordered (issue 63), a formula without it means what it meant
PLAN_ORDERS_RANGE = _a("orders", "range", "The Orders table: a header row (resource, count, arrives), then "
                       "servers already ordered, one order a row (arrives: months from the scenario, or YYYY-MM "
                       "with the System block's start); empty: none on order.", "", None)
# after the orders: quantum-safe migrations (issue 65), a formula without it means what it meant
PLAN_MIGRATIONS_RANGE = _a("migrations", "range", "The Migrations table: a header row (workload, to, start, months, "
                           "share), then one quantum-safe migration a row: share of an AMS workload moved to ML-DSA or "
                           "ML-KEM from month start over months; empty: none.", "", None)
_PLAN_ARGS = (PLAN_WORKLOADS_RANGE, PLAN_SYSTEM_RANGE, PLAN_GROWTH, PLAN_MONTHS, PARAMS_FILE, PLAN_PROFILES_RANGE,
              PLAN_ORDERS_RANGE, PLAN_MIGRATIONS_RANGE)
# PLAN_VALUE's and PLAN_BAND's first arguments: the tables, and which number of the plan
_PLAN_NUMBER = (PLAN_WORKLOADS_RANGE, PLAN_SYSTEM_RANGE,
                _a("resource", "text", "processors, coprocessors, accelerators, or a workload's name."),
                _a("quantity", "text", "Resource: " + ",".join(RESOURCE_QUANTITIES) + ". Workload: "
                   + ",".join(WORKLOAD_QUANTITIES) + ".", "", REQUIRED,
                   tuple(dict.fromkeys(RESOURCE_QUANTITIES + WORKLOAD_QUANTITIES))))


_HANDSHAKE_ARGS = (KEY_EXCHANGE, CERTIFICATE, PROTOCOL, RESUMPTION, SYSPLEX_TICKETS, FIPS,
                   CARD_MODE, HEAPPOOLS64)
_AMS_ARGS = (POLICY, KEY_TYPE, KEY_SIZE, MESSAGE_KB, KEY_REUSE)
# a quantum-safe migration's arguments (issue 65)
QS_ALGORITHM = _a("algorithm", "text", "The algorithm the share moves to: ML-DSA-44/65/87 (signatures) or "
                  "ML-KEM-512/768/1024 (key transport), or both joined by + (ML-DSA-65+ML-KEM-768).", "",
                  "ML-DSA-65", QS_ALGORITHMS)
QS_TLS_ALGORITHM = _a("algorithm", "text", "What the share moves to: ML-DSA-44/65/87 (its certificates), "
                      "ML-KEM-512/768/1024 or a hybrid group X25519MLKEM768, SecP256r1MLKEM768, SecP384r1MLKEM1024 "
                      "(its key exchange), or both joined by + (ML-DSA-65+X25519MLKEM768).", "", "ML-DSA-65",
                      QS_TARGETS)
QS_SHARE = _a("share", "number", "Share of the transactions migrated; {range}.", "fraction", 0.0,
              domain=D.MIGRATED_SHARE)
QS_GENERATION = _a("card_generation", "text", "Crypto Express generation of the coprocessors: CEX8S (CCA 8.4 or "
                   "later); an earlier one is an error naming it.", "", "CEX8S", ("CEX6S", "CEX7S", "CEX8S"))


def _f(name, model_name, category, help, args, unit, result="number", columns=()):
    return Function(name, model_name, category, help, tuple(args), unit, result, tuple(columns))


CATALOG: tuple = (
    # ------------------------------------------------------------ queueing
    _f("ERLANGB", "erlang_b", QUEUEING, "Erlang B: probability that an arrival finds all "
       "servers busy and is lost (M/M/c/c).", [TRAFFIC, SERVERS], "probability (0..1)"),
    _f("ERLANGC", "erlang_c", QUEUEING, "Erlang C: probability that an arrival has to wait "
       "(M/M/c).", [TRAFFIC, SERVERS], "probability (0..1)"),
    _f("MMC_UTILIZATION", "mmc_utilization", QUEUEING, "M/M/c utilization per server, "
       "arrival_rate x service_time / servers.", [ARRIVAL_RATE, SERVICE_TIME, SERVERS_Q],
       "fraction (0..1)"),
    _f("MMC_WAIT", "mmc_wait", QUEUEING, "M/M/c mean wait in queue.",
       [ARRIVAL_RATE, SERVICE_TIME, SERVERS_Q], "time unit of service_time"),
    _f("MMC_RESPONSE", "mmc_response", QUEUEING, "M/M/c mean response time (wait + service).",
       [ARRIVAL_RATE, SERVICE_TIME, SERVERS_Q], "time unit of service_time"),
    _f("MMC_WAIT_PERCENTILE", "mmc_wait_percentile", QUEUEING, "M/M/c p-quantile of the wait "
       "in queue (0 if at least a fraction p do not wait).",
       [ARRIVAL_RATE, SERVICE_TIME, SERVERS_Q, P], "time unit of service_time"),
    _f("MGC_WAIT", "mgc_wait", QUEUEING, "M/G/c (G/G/c) approximate mean wait in queue for "
       "general service (and arrival) variability.",
       [ARRIVAL_RATE, SERVICE_TIME, SERVERS_Q, SERVICE_SCV, ARRIVAL_SCV, METHOD],
       "time unit of service_time"),
    _f("MMC_SERVERS", "mmc_servers", QUEUEING, "Smallest number of M/M/c servers meeting every "
       "target given (utilization, mean wait, wait percentile).",
       [ARRIVAL_RATE, SERVICE_TIME, MAX_UTIL_Q, MAX_WAIT_Q, WAIT_PCT, MAX_PCT_WAIT],
       "servers", "integer"),
    _f("MVA_THROUGHPUT", "mva_throughput", QUEUEING, "Throughput of a closed network "
       "(exact mean value analysis) at the given population.",
       [POPULATION, DEMANDS, SERVERS_V, THINK_TIME], "transactions per time unit of demands"),
    # ------------------------------------------------------------ planning
    _f("CRYPTO_OP_MS", "crypto_op_ms", PLANNING, "Crypto Express execution time of one "
       "asymmetric operation on its card, excluding queueing.",
       [OPERATION, _a("key_type", "text", KEY_TYPE.help, "", "RSA", KEY_TYPES),
        _a("key_size", "integer", KEY_SIZE.help, "bits", 2048, _KEY_SIZES), PARAMS_FILE], "ms"),
    _f("QS_OP_MS", "qs_op_ms", PLANNING, "Assumed Crypto Express coprocessor execution time of one "
       "quantum-safe operation (ML-DSA, ML-KEM): its software cost relative to an RSA-2048 sign applied "
       "to the coprocessor's RSA-2048 sign time; no card time is published.",
       [_a("algorithm", "text", "ML-DSA-44, ML-DSA-65, ML-DSA-87, ML-KEM-512, ML-KEM-768 or ML-KEM-1024.", "",
           REQUIRED, QS_ALGORITHMS),
        _a("operation", "text", "sign or verify (ML-DSA); encapsulate or decapsulate (ML-KEM).", "", REQUIRED,
           ("sign", "verify", "encapsulate", "decapsulate")),
        _a("card_generation", "text", "Crypto Express generation of the coprocessors: CEX8S (CCA 8.4 or later); "
           "an earlier one is an error naming it.", "", "CEX8S", ("CEX6S", "CEX7S", "CEX8S")), PARAMS_FILE], "ms"),
    _f("QS_CARD_UTILIZATION", "migrated_card_utilization", PLANNING, "Utilization of the Crypto Express "
       "cards of one type at an AMS rate with a share of its transactions moved to a quantum-safe algorithm "
       "(ML-DSA signatures or ML-KEM key transport, on coprocessors at QS_OP_MS's assumed times); "
       "#NUM! if overloaded.",
       [TX_RATE, *_AMS_ARGS, QS_ALGORITHM, QS_SHARE,
        _a("card", "text", "Card type: coprocessor or accelerator.", "", "coprocessor", ("accelerator", "coprocessor")),
        CARDS, RECIPIENTS, OTHER_LPAR, QS_GENERATION, PARAMS_FILE],
       "fraction (0..1)"),
    _f("QS_HANDSHAKE_CARD_UTILIZATION", "migrated_handshake_card_utilization", PLANNING, "Utilization of the "
       "Crypto Express cards of one type at a TLS handshake rate with a share moved to TLS 1.3 with ML-DSA "
       "certificates and/or an ML-KEM key exchange (coprocessors, QS_OP_MS's assumed times); #NUM! if overloaded.",
       [_a("handshake_rate", "number", "TLS handshakes (new connections) per second; {range}.",
           "handshakes/s", domain=D.HANDSHAKE_RATE), CIPHER, QS_TLS_ALGORITHM, QS_SHARE, CARD_START, CARDS,
        _a("resumed_share", "number", "Fraction of handshakes resumed (session ID or ticket); {range}.",
           "fraction", 0.0, domain=D.RESUMED_SHARE),
        OTHER_LPAR, QS_GENERATION, PARAMS_FILE], "fraction (0..1)"),
    _f("QS_CARDS_REQUIRED", "migrated_cards_required", PLANNING, "Fewest Crypto Express cards of one type "
       "keeping their utilization within max_utilization at an AMS rate with a share of its transactions "
       "moved to a quantum-safe algorithm (0 if none are used).",
       [TX_RATE, *_AMS_ARGS, QS_ALGORITHM, QS_SHARE,
        _a("card", "text", "Card type: coprocessor or accelerator.", "", "coprocessor", ("accelerator", "coprocessor")),
        MAX_UTIL, RECIPIENTS, OTHER_LPAR, QS_GENERATION, PARAMS_FILE], "cards", "integer"),
    _f("AMS_THROUGHPUT", "ams_throughput", PLANNING, "The most MQ AMS request/reply transactions "
       "per second N requesters reach (closed loop, exact MVA over processors, coprocessors and "
       "accelerators).",
       [*_AMS_ARGS, REQUESTERS, COPROCESSORS, ACCELERATORS, RECIPIENTS, PROCESSORS, AMS_PLATFORM,
        OTHER_COP, OTHER_ACC, CARD_GEN, PARAMS_FILE], "transactions/s"),
    _f("AMS_COST_US", "ams_cost_us", PLANNING, "General-CP CPU per MQ AMS transaction at the rate "
       "N requesters reach (AMS_THROUGHPUT), in total or for one address space.",
       [*_AMS_ARGS, REQUESTERS, COPROCESSORS, ACCELERATORS, RECIPIENTS, AMS_SPACE, AMS_PLATFORM,
        PROCESSORS, PARAMS_FILE], "CPU us per transaction"),
    _f("AMS_COST_AT_RATE_US", "ams_cost_at_rate_us", PLANNING, "General-CP CPU per MQ AMS "
       "transaction at a planned rate (MSTR's per-second cost spread over that rate), in total or "
       "for one address space.",
       [_a("tx_rate", "number", "Planned transaction (request/reply) rate; {range}.", "transactions/s",
           domain=D.PLANNED_TX_RATE),
        *_AMS_ARGS, RECIPIENTS, AMS_SPACE, AMS_PLATFORM, PARAMS_FILE], "CPU us per transaction"),
    _f("PROCESSORS_REQUIRED", "processors_required_at_level", PLANNING, "Fewest general processors keeping "
       "their utilization within max_utilization at a planned MQ AMS rate (MSTR administration "
       "included); with a level, the number that suffices in that share of the model's parameter draws.",
       [TX_RATE, *_AMS_ARGS, MAX_UTIL, RECIPIENTS, AMS_PLATFORM, PARAMS_FILE, COUNT_LEVEL], "processors",
       "integer"),
    _f("AMS_MESSAGE_COST_US", "ams_message_cost_us", PLANNING, "AMS CPU to protect and "
       "unprotect one message (interception, asymmetric operations, hashing and encryption), "
       "excluding the MQPUT/MQGET itself.",
       [POLICY, MESSAGE_KB, KEY_REUSE, RECIPIENTS, AMS_PLATFORM, PARAMS_FILE], "CPU us per message"),
    _f("CARD_UTILIZATION", "card_utilization", PLANNING, "Utilization of the Crypto Express "
       "cards of one type at a transaction rate as RMF prints it (requests x EXEC TIME per card); "
       "#NUM! if they cannot keep up.",
       [TX_RATE, *_AMS_ARGS, CARD, CARDS, RECIPIENTS, RMF_FUNCTION, OTHER_LPAR, CARD_GEN, PARAMS_FILE], "fraction (0..1)"),
    _f("CRYPTO_WAIT_MS", "crypto_wait_ms", PLANNING, "Mean queueing delay per transaction at "
       "the cards of one type (M/G/c with the request mix's service variability).",
       [TX_RATE, *_AMS_ARGS, CARD, CARDS, RECIPIENTS, SERVICE_SCV_CARD, OTHER_LPAR, CARD_GEN, PARAMS_FILE],
       "ms per transaction"),
    _f("ACCELERATORS_REQUIRED", "accelerators_required_at_level", PLANNING, "Smallest number of "
       "accelerator cards meeting the utilization and wait targets (0 if none are used); with a level, "
       "the number that suffices in that share of the model's parameter draws.",
       [TX_RATE, *_AMS_ARGS, MAX_UTIL, MAX_WAIT_MS, RECIPIENTS, SERVICE_SCV_CARD, OTHER_LPAR, CARD_GEN, PARAMS_FILE,
        COUNT_LEVEL], "cards", "integer"),
    _f("COPROCESSORS_REQUIRED", "coprocessors_required_at_level", PLANNING, "Smallest number of "
       "coprocessor cards meeting the utilization and wait targets (0 if none are used); with a level, "
       "the number that suffices in that share of the model's parameter draws.",
       [TX_RATE, *_AMS_ARGS, MAX_UTIL, MAX_WAIT_MS, RECIPIENTS, SERVICE_SCV_CARD, OTHER_LPAR, CARD_GEN, PARAMS_FILE,
        COUNT_LEVEL], "cards", "integer"),
    _f("TLS_COST_US", "tls_cost_us", PLANNING, "CPU per MQ channel transaction with the given "
       "channel protection and cipher, in total or for one address space.",
       [MODE, CIPHER, MESSAGE_KB, TLS_SPACE, SSLRKEYC, PLATFORM, PARAMS_FILE], "CPU us per transaction"),
    _f("TLS_ROUNDTRIP_US", "tls_roundtrip_us", PLANNING, "Round-trip time of an MQ channel "
       "transaction with the given channel protection and cipher.",
       [MODE, CIPHER, RT_MESSAGE_KB, PARAMS_FILE], "us"),
    _f("CHANNEL_THROUGHPUT", "channel_throughput", PLANNING, "Request/reply transactions per "
       "second over MQ channel pairs: SSL tasks and dispatchers shared (SSLCIPH) or an SRB per "
       "socket (AT-TLS), by mean value analysis.",
       [MODE, _a("cipher", "text", CIPHER.help + " With mode none give any listed cipher: "
                 "it is not used.", "", REQUIRED,
                 tuple(CIPHERS)), CH_MESSAGE_KB, CHANNEL_PAIRS, CHANNEL_REQUESTERS, SSLTASKS, DISPATCHERS,
        PLATFORM, CPS, ROUNDTRIP, TASK_RATIO, PARAMS_FILE], "transactions/s"),
    _f("CHANNEL_START_RATE", "channel_start_rate", PLANNING, "Channel starts per second one "
       "channel initiator sustains with the given protection and cipher.",
       [MODE, CIPHER_OPT, START_PLATFORM],
       "channel starts/s"),
    _f("CHANNEL_START_COST_US", "channel_start_cost_us", PLANNING, "CPU per channel start "
       "(including the TLS handshake), in total or for one address space.",
       [MODE, CIPHER_OPT, TLS_SPACE, START_PLATFORM, PARAMS_FILE], "CPU us per channel start"),
    _f("CHANNEL_START_CARD_UTILIZATION", "channel_start_card_utilization", PLANNING, "Utilization "
       "of the Crypto Express cards of one mode by MQ (SSLCIPH) channel starts at a start rate; "
       "#NUM! if they cannot keep up.", [START_RATE, CIPHER, CARD_START, CARDS], "fraction (0..1)"),
    _f("HANDSHAKE_CARD_UTILIZATION", "handshake_card_utilization", PLANNING, "Utilization of the "
       "Crypto Express cards of one mode by TLS handshakes at a rate (full handshakes use the card "
       "time of an MQ channel start; resumed ones none); #NUM! if they cannot keep up.",
       [_a("handshake_rate", "number", "TLS handshakes (new connections) per second; {range}.",
           "handshakes/s", domain=D.HANDSHAKE_RATE), CIPHER, CARD_START, CARDS,
        _a("resumed_share", "number", "Fraction of handshakes resumed (session ID or ticket); {range}.",
           "fraction", 0.0, domain=D.RESUMED_SHARE),
        OTHER_LPAR], "fraction (0..1)"),
    _f("CHANNEL_STOP_COST_US", "channel_stop_cost_us", PLANNING, "CPU per channel stop, in "
       "total or for one address space.", [MODE, TLS_SPACE], "CPU us per channel stop"),
    _f("HANDSHAKE_CPU_FACTOR", "handshake_cpu_factor", PLANNING, "TLS handshake CPU relative to "
       "a full ECDHE-RSA TLS 1.2 handshake on a coprocessor, no FIPS, HEAPPOOLS64 on.",
       _HANDSHAKE_ARGS, "ratio to baseline"),
    _f("HANDSHAKE_LATENCY_FACTOR", "handshake_latency_factor", PLANNING, "TLS handshake latency "
       "relative to a full ECDHE-RSA TLS 1.2 handshake on a coprocessor, no FIPS, HEAPPOOLS64 "
       "on.", _HANDSHAKE_ARGS, "ratio to baseline"),
    _f("OCSP_CPU_US", "ocsp_cpu_us", PLANNING, "CPU per new connection with OCSP certificate "
       "checking offloaded, given the measured cost without it.",
       [CONNECTION_CPU, OCSP_SPACE], "CPU us per connection"),
    _f("PLAN_RESOURCES", "plan_resources", PLANNING, "Every workload of the Workloads table on the "
       "shared processors, coprocessors and accelerators at each one's peak interval: utilization, counts "
       "required, headroom, months to target, wait, one card failed (spills).",
       _PLAN_ARGS, "table", "table", RESOURCE_COLUMNS),
    _f("PLAN_WORKLOADS", "plan_workloads", PLANNING, "Each workload of the Workloads table in the plan: "
       "rate, CPU per unit, its share of each resource's utilization, queueing delay, peak rate (spills).",
       _PLAN_ARGS, "table", "table", WORKLOAD_COLUMNS),
    _f("PLAN_TIMELINE", "plan_timeline", PLANNING, "What to buy by when: each purchase of processors or "
       "cards up to the horizon, installed by and ordered by which month, and why (spills; no row: "
       "nothing to add).", _PLAN_ARGS, "table", "table", TIMELINE_COLUMNS),
    _f("PLAN_TEXT", "plan_text", PLANNING, "The plan's sentences: the scenario (growth, months, intervals, "
       "failover, lead time, parameter file), each resource's verdict, one card failed, and the "
       "warnings (spills, one column).", _PLAN_ARGS, "table", "table", TEXT_COLUMNS),
    _f("PLAN_VALUE", "plan_value", PLANNING, "One number of the plan: a resource's (utilization, required, "
       "months_to_target, ...) or a workload's (cpu_us, queueing_ms, share of a resource).",
       [*_PLAN_NUMBER, PLAN_GROWTH, PLAN_MONTHS, PARAMS_FILE, PLAN_PROFILES_RANGE, PLAN_ORDERS_RANGE,
        PLAN_MIGRATIONS_RANGE],
       "as the quantity (fraction, count, months, ms, µs)"),
    _f("PLAN_BAND", "plan_band", PLANNING, "A number of the plan at a quantile of its 1,000 draws of the "
       "model's parameters: 0.05 and 0.95 give the ends of its 90% band, 0.5 its median.",
       [*_PLAN_NUMBER,
        _a("quantile", "number", "The quantile of the draws; {range} (0.05 and 0.95: a 90% band).", "fraction",
           domain=D.BAND_LEVEL),
        PLAN_GROWTH, PLAN_MONTHS, PARAMS_FILE, PLAN_PROFILES_RANGE, PLAN_ORDERS_RANGE, PLAN_MIGRATIONS_RANGE],
       "as the quantity (fraction, count, months, ms, µs)"),
    _f("MODEL_PARAMETERS", "model_parameters", PLANNING, "The fitted model parameters as a table "
       "with a header row (spills).", [PARAMS_FILE], "table", "table",
       ("name", "value", "stderr", "unit", "submodel", "description")),
    # columns are only ever appended: a workbook holds the table in a fixed-width range and its
    # sheets refer to the cells by position (kind and the accepted interval came after id)
    _f("MODEL_FIGURES", "model_figures", PLANNING, "Published measurements beside the model's "
       "values, as a table with a header row (spills).", [PARAMS_FILE], "table", "table",
       ("source", "quantity", "conditions", "unit", "published", "model", "relative_error",
        "within_tolerance", "reason", "id", "kind", "accepted_low", "accepted_high")),
)

_BY_NAME = {f.name: f for f in CATALOG}


def get(name: str) -> Function:
    """The catalog entry of an Excel function (case-insensitive)."""
    try:
        return _BY_NAME[name.upper()]
    except KeyError:
        raise UnknownName(f"no cryptoplan function {name!r}; known: {', '.join(_BY_NAME)}") from None


def as_dicts() -> list[dict]:
    """The whole catalog as JSON-ready dicts."""
    return [f.as_dict() for f in CATALOG]


def _md(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_table() -> str:
    """docs/spreadsheets.md's function table (``cryptoplan functions --markdown``)."""
    lines = ["| Function | Category | Result unit | What |", "|---|---|---|---|"]
    for f in CATALOG:
        lines.append(f"| `{_md(f.signature_text())}` | {f.category.split()[-1]} | "
                     f"{_md(f.unit)} | {_md(f.help)} |")
    return "\n".join(lines)


def text_listing() -> str:
    """The catalog as plain text: each function's signature, category, unit, help and arguments (``cryptoplan functions``)."""
    out = []
    for f in CATALOG:
        out.append(f"{f.signature_text()}  [{f.category}]  -> {f.unit}")
        out.append(f"    {f.help}")
        for a in f.args:
            req = "required" if a.required else f"default {_fmt(a.default)}"
            unit = f" ({a.unit})" if a.unit else ""
            out.append(f"    {a.name}{unit}, {a.kind}, {req}: {a.help}")
            if a.choices and a.kind == "text":
                out.append(f"        accepted: {', '.join(a.choices)}")
        out.append("")
    return "\n".join(out)
