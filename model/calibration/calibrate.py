"""Calibrate the card-time parameters on a site's own RMF Crypto Hardware Activity report.

The published fit (:mod:`cryptoplan.model.calibration.fit`) gives IBM's measured card times; every source ends
with "measure in your own environment".  A site's RMF Crypto Hardware Activity report
gives, per Crypto Express card, the request rate, the average execution time (RMF
"EXEC TIME", the card's service time per request, without queueing) and the
utilization, and for accelerators the ME- and CRT-format RSA rows by key length.  This
module turns those rows into site observations, finds which parameters they identify,
refits those (the others keep their published values) and reports what moved.

The statistical model, in log space (every parameter is positive):

.. math::

    r_i = \\frac{\\ln m_i(\\theta) - \\ln y_i}{\\sigma_i}, \\qquad
    r_{p,j} = \\frac{\\ln \\theta_j - \\ln \\theta_{0,j}}{\\sigma_p}

``y_i`` is a report's EXEC TIME, ``m_i`` the model's card time for that row's function,
key length and card generation (:func:`cryptoplan.model.zos.crypto.function_ms`), ``sigma_i`` its
relative uncertainty: RMF prints milliseconds to three decimals (half a unit, uniform:
:math:`0.0005/\\sqrt{3}` ms) with a floor of :data:`MEASUREMENT_RTOL` for the variation
between intervals.  The published values :math:`\\theta_0` enter as a weak prior,
:data:`PRIOR_SIGMA` = ln 2 (a factor of two at one standard deviation): it only keeps a
parameter the data barely see from wandering, it does not pull an identified one.

A parameter is *identified* when the site rows shrink its prior uncertainty at least
:data:`IDENTIFIED_SHRINK`-fold (posterior standard deviation from
:math:`(J^T J + I/\\sigma_p^2)^{-1}` at the published values, J the rows' Jacobian in log
parameters); only those are refitted, by :func:`cryptoplan.model.calibration.leastsq.solve` (the
fits' one least-squares path, with its one standard-error convention: the stated sigmas
are taken at their word unless the site rows scatter more than they allow).

References
----------
IBM, "z/OS RMF Report Analysis", Crypto Hardware Activity report (SC34-2665).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..zos.ams import card_generation_factor
from ..zos.crypto import CARD_FUNCTIONS, function_ms
from ..datafiles import read_csv_table
from ..domains import PROCESSORS
from .leastsq import jacobian, solve
from ..params import load_params, using_values

__all__ = ["RMF_COLUMNS", "RMF_FUNCTIONS", "rmf_rows", "PRIOR_SIGMA", "MEASUREMENT_RTOL", "IDENTIFIED_SHRINK",
           "CalibrationError", "RmfRow", "CpuRow", "Observation", "Calibration", "read_rmf_crypto",
           "rmf_observations", "read_cpu_table", "cpu_observations", "smf_summary", "smf_measured", "CPU_COLUMNS", "calibrate"]

# The report's column headings (RMF prints EXEC TIME in ms, UTIL% in percent, RATE per second).
RMF_COLUMNS = ("TYPE", "ID", "FUNCTION", "KEY", "RATE", "EXEC TIME", "UTIL%")
# FUNCTION: TOTAL for a card's summary line; ME and CRT for the accelerator's
# "ME-FORMAT RSA OPERATIONS" and "CRT-FORMAT RSA OPERATIONS" lines.
RMF_FUNCTIONS = ("TOTAL", "ME", "CRT")
# A site's measured CPU per transaction by address space (read_cpu_table).
CPU_COLUMNS = ("WORKLOAD", "SETTING", "CIPHER", "KEY", "KEY REUSE", "MESSAGE KB", "ADDRESS SPACE", "RATE",
               "APPL%")
_RSA_KEYS = (1024, 2048, 3072, 4096)
_ECC_KEYS = (192, 224, 256, 384, 521)
PRIOR_SIGMA = math.log(2.0)
MEASUREMENT_RTOL = 0.01
IDENTIFIED_SHRINK = 10.0
_TYPE = re.compile(r"CEX([5-8])([CAP])")


class CalibrationError(ValueError):
    """Site data that cannot be used: names the file, the line and what is accepted."""


@dataclass(frozen=True)
class RmfRow:
    """One line of the Crypto Hardware Activity report."""

    line: int
    type: str          # e.g. CEX8C
    id: str            # card (AP) number as printed
    function: str      # TOTAL, ME or CRT
    key: int | None    # key length (ME/CRT rows)
    rate: float        # requests per second
    exec_ms: float     # EXEC TIME, ms
    util_pct: float    # UTIL%

    @property
    def generation(self) -> str:
        return f"CEX{self.type[3]}S"

    @property
    def card(self) -> str:
        return {"C": "coprocessor", "A": "accelerator"}[self.type[4]]


@dataclass(frozen=True)
class Observation:
    """A site number the model predicts from parameters.

    ``predict`` evaluates the model under the parameters in force
    (:func:`cryptoplan.model.params.using_values`); ``params`` names the parameters it may depend
    on (the calibration's candidates); ``sigma`` is the number's relative (log-space)
    standard deviation; ``quantity`` says what it is, with its unit, for the report.
    """

    label: str
    value: float
    sigma: float
    predict: Callable[[], float] = field(compare=False)
    params: tuple = ()
    quantity: str = "EXEC TIME, ms"


@dataclass
class Calibration:
    """What :func:`calibrate` found; ``parameters`` is a parameter-file document's section."""

    parameters: dict
    identified: list
    unidentified: dict           # name -> why
    moved: list                  # dicts: name, published, calibrated, ratio, stderr
    residuals: list              # dicts: label, site, before, after
    consistency: list = field(default_factory=list)   # RMF UTIL% vs RATE x EXEC TIME
    contradicted: list = field(default_factory=list)  # published figures reproduced before, not now
    reproduced_before: int = 0                         # published figures within tolerance before
    cost: float = 0.0
    measured: list = field(default_factory=list)       # parameters set from direct site measurements
    solution: object = None                            # the leastsq.Solution (log parameters), if any refitted

    def document(self) -> dict:
        """A parameter file (``CRYPTOPLAN_PARAMS``) with the calibrated values."""
        return {"parameters": self.parameters,
                "calibration": {"identified": self.identified, "unidentified": self.unidentified,
                                "measured": [m["name"] for m in self.measured],
                                "prior_sigma": PRIOR_SIGMA, "cost": self.cost}}


def _number(path, line, column, text, lo=0.0, hi=None):
    try:
        v = float(text)
    except ValueError:
        raise CalibrationError(f"{path} line {line}: {column} {text!r} is not a number") from None
    if not math.isfinite(v) or v < lo or (hi is not None and v > hi):
        allowed = f"in [{lo:g}, {hi:g}]" if hi is not None else f">= {lo:g}"
        raise CalibrationError(f"{path} line {line}: {column} {text!r} must be a finite number {allowed}")
    return v


# What an RMF Crypto Hardware Activity line can hold: a card's summary line is busy at most 100% of
# the interval (RMF caps it there); its by-function rows may add up past 100% (concurrency inside
# the card: 152.7% in the second example of Sharkey's AMS key-size blog), so a row is held only to
# a hundred times that; an EXEC TIME over a second or a rate over ten million requests a second is a
# typing slip, not a Crypto Express (engineering limits of this tool, not published figures).
RMF_MAX_UTIL_PCT = 100.0
RMF_MAX_ROW_UTIL_PCT = 10_000.0
RMF_MAX_EXEC_MS = 1000.0
RMF_MAX_RATE = 1e7


def read_rmf_crypto(path) -> list[RmfRow]:
    """Read a CSV of the report's lines, with the columns :data:`RMF_COLUMNS`.

    Parameters
    ----------
    path : str or Path
        UTF-8 CSV.  One row per printed line: ``TYPE`` as RMF prints it (``CEX8C``
        coprocessor, ``CEX8A`` accelerator; CEX5 to CEX8), ``ID`` the card number,
        ``FUNCTION`` ``TOTAL`` (the card's line) or ``ME``/``CRT`` (accelerator RSA rows),
        ``KEY`` the key length of an ME/CRT row (empty on TOTAL lines), ``RATE`` per second,
        ``EXEC TIME`` in ms, ``UTIL%`` in percent.

    Raises
    ------
    CalibrationError
        For anything else, naming the file, the line and what is accepted.
    """
    path = str(path)
    return rmf_rows(read_csv_table(path, RMF_COLUMNS, "an RMF crypto table", CalibrationError, heading=str.upper),
                    path)


def rmf_rows(records, path: str) -> list[RmfRow]:
    """The report's lines from ``records``, ``[(line, {column: text})]`` with the columns
    :data:`RMF_COLUMNS`, wherever they were typed (a CSV file, the template's sheet).

    ``path`` names the source in messages ("<path> line <line>: ...").  Checks as
    :func:`read_rmf_crypto`.
    """
    rows = []
    for line, cells in records:
        r = {h: v.strip() for h, v in cells.items()}
        m = _TYPE.fullmatch(r["TYPE"].upper())
        if not m:
            raise CalibrationError(f"{path} line {line}: TYPE {r['TYPE']!r} is not a Crypto Express type as RMF "
                                   "prints it (CEX5C to CEX8C coprocessors, CEX5A to CEX8A accelerators)")
        if m.group(2) == "P":
            raise CalibrationError(f"{path} line {line}: TYPE {r['TYPE']} is an EP11 coprocessor, which the "
                                   "models do not cover (CCA coprocessors CEXnC, accelerators CEXnA)")
        if m.group(1) == "5":
            raise CalibrationError(f"{path} line {line}: TYPE {r['TYPE']}: the models know CEX6S to CEX8S "
                                   "card times; a CEX5S has no published comparison")
        func = r["FUNCTION"].upper()
        if func not in RMF_FUNCTIONS:
            raise CalibrationError(f"{path} line {line}: FUNCTION {r['FUNCTION']!r} is not one of "
                                   f"{', '.join(RMF_FUNCTIONS)}")
        if func != "TOTAL" and m.group(2) != "A":
            raise CalibrationError(f"{path} line {line}: {func} rows belong to accelerators (CEXnA), "
                                   f"not {r['TYPE']}")
        key = None
        if func == "TOTAL":
            if r["KEY"]:
                raise CalibrationError(f"{path} line {line}: a TOTAL line has no KEY (got {r['KEY']!r})")
        else:
            k = _number(path, line, "KEY", r["KEY"], 1)
            if k not in _RSA_KEYS:
                raise CalibrationError(f"{path} line {line}: KEY {r['KEY']!r} is not an RSA key length RMF "
                                       f"reports ({', '.join(map(str, _RSA_KEYS))})")
            key = int(k)
        rate = _number(path, line, "RATE", r["RATE"], hi=RMF_MAX_RATE)
        exec_ms = _number(path, line, "EXEC TIME", r["EXEC TIME"], hi=RMF_MAX_EXEC_MS)
        util = _number(path, line, "UTIL%", r["UTIL%"], hi=RMF_MAX_UTIL_PCT if func == "TOTAL" else RMF_MAX_ROW_UTIL_PCT)
        if exec_ms == 0 and rate > 0:
            raise CalibrationError(f"{path} line {line}: EXEC TIME 0 with RATE {rate:g}: a card that serves "
                                   "requests takes time")
        rows.append(RmfRow(line, r["TYPE"].upper(), r["ID"], func, key, rate, exec_ms, util))
    if not rows:
        raise CalibrationError(f"{path}: no report lines under the header")
    return rows


def rmf_observations(rows, key_type: str = "RSA", key_size: int = 2048, path: str = "the RMF table") -> list:
    """The rows the card-time parameters predict, as :class:`Observation`.

    ME and CRT rows are the accelerator's RSA public- and private-key functions at their key
    length.  A coprocessor's TOTAL line is its CCA private-key function at the workload's key
    (``key_type``/``key_size``: the model has no mix of CCA functions, so the site says which
    key its coprocessor work uses).  An accelerator's TOTAL line mixes ME and CRT and is not an
    observation of one function: it is checked for consistency instead.  Lines with RATE 0
    (an idle card) carry no time.
    """
    if key_type not in ("RSA", "NISTECC"):
        raise CalibrationError(f"key_type must be RSA or NISTECC (got {key_type!r})")
    keys = _RSA_KEYS if key_type == "RSA" else _ECC_KEYS
    if key_size not in keys:
        raise CalibrationError(f"key_size for {key_type} must be one of {', '.join(map(str, keys))} (got {key_size!r})")
    out = []
    for r in rows:
        if r.rate == 0 or (r.card == "accelerator" and r.function == "TOTAL"):
            continue
        if r.function == "TOTAL":
            function, bits = ("CCA_RSA" if key_type == "RSA" else "CCA_ECC"), key_size
        else:
            function, bits = ("RSA_ME" if r.function == "ME" else "RSA_CRT"), r.key
        sigma = max(MEASUREMENT_RTOL, 0.0005 / math.sqrt(3.0) / r.exec_ms)
        label = f"{path} line {r.line}: {r.type} {r.id} {r.function}{'' if r.key is None else ' ' + str(r.key)}"
        out.append(_card_observation(label, r.exec_ms, sigma, function, float(bits),
                                     card_generation_factor(r.generation)))
    if not out:
        raise CalibrationError(f"{path}: no line carries a card time (every RATE is 0, or only accelerator "
                               "TOTAL lines, which mix ME and CRT)")
    return out


@dataclass(frozen=True)
class CpuRow:
    """One line of a site's measured CPU table (:data:`CPU_COLUMNS`)."""

    line: int
    workload: str            # AMS or CHANNEL
    setting: str             # AMS policy, or channel mode
    cipher: str | None       # channel cipher (None for AMS and mode none)
    key_type: str | None     # AMS key
    key_size: int | None
    key_reuse: float | None  # AMS confidentiality key reuse
    message_kb: float
    address_space: str
    rate: float              # transactions per second
    appl_pct: float          # RMF APPL%, percent of one processor

    @property
    def cpu_us(self) -> float:
        """Measured CPU per transaction, µs: APPL% of one processor over the rate."""
        return self.appl_pct * 1e4 / self.rate


def _blank(path, line, column, text, why):
    if text:
        raise CalibrationError(f"{path} line {line}: {column} must be empty {why} (got {text!r})")


# A measured CPU table's limits: an address space's APPL% is at most 100% of each processor of
# the LPAR (PROCESSORS' 256 at most), and one transaction costing over 1,000 s of CPU is a
# unit mistake, not a measurement (the published costs are tens to thousands of us).
MAX_APPL_PCT = 100.0 * PROCESSORS.high
MAX_CPU_US = 1e9


def read_cpu_table(path) -> list[CpuRow]:
    """Read a site's measured CPU per transaction, by address space (:data:`CPU_COLUMNS`).

    One row per workload and address space, as RMF's Workload Activity report gives it
    for the address space's report class over an interval of steady load:

    * ``WORKLOAD`` ``AMS`` (request/reply through AMS-protected queues) or ``CHANNEL``
      (request/reply between two queue managers over channel pairs);
    * ``SETTING`` the AMS policy (integrity, privacy, confidentiality) or the channel's
      protection mode (none, SSLCIPH, ATTLS);
    * ``CIPHER`` the channel's cipher (empty for AMS and mode none);
    * ``KEY`` the AMS key, type and length (``RSA 2048``, ``NISTECC 256``; empty for
      channels); ``KEY REUSE`` the confidentiality policy's key reuse (a whole number or
      ``unlimited``; empty otherwise);
    * ``MESSAGE KB`` request and reply size;
    * ``ADDRESS SPACE``: AMS ``total``, ``application``, ``AMSM`` or ``MSTR`` (as
      :func:`cryptoplan.model.zos.ams.ams_cost_at_rate_us`); channels ``total``, ``MSTR``, ``CHIN`` or
      ``TCPIP`` summed over both LPARs (as :func:`cryptoplan.model.zos.tls.tls_cost_us`);
    * ``RATE`` transactions per second; ``APPL%`` the address space's CPU in percent of
      one processor (RMF's APPL%).

    Raises
    ------
    CalibrationError
        Naming the file, the line and what is accepted.
    """
    from ..zos.ams import AMS_ADDRESS_SPACES
    from ..params import (ADDRESS_SPACES, MODES, POLICIES, normalize_cipher, normalize_key,
                          normalize_key_reuse, normalize_mode, normalize_policy)
    path = str(path)
    rows = []
    for line, cells in read_csv_table(path, CPU_COLUMNS, "a measured CPU table", CalibrationError,
                                      heading=str.upper):
        r = {h: v.strip() for h, v in cells.items()}
        work = r["WORKLOAD"].upper()
        if work not in ("AMS", "CHANNEL"):
            raise CalibrationError(f"{path} line {line}: WORKLOAD {r['WORKLOAD']!r} is not AMS or CHANNEL")
        cipher = key_type = key_size = reuse = None
        try:
            if work == "AMS":
                try:
                    setting = normalize_policy(r["SETTING"])
                except ValueError:
                    raise CalibrationError(f"{path} line {line}: SETTING {r['SETTING']!r} is not an AMS "
                                           f"policy ({', '.join(POLICIES)})") from None
                _blank(path, line, "CIPHER", r["CIPHER"], "on an AMS line")
                parts = r["KEY"].split()
                if len(parts) != 2:
                    raise CalibrationError(f"{path} line {line}: KEY {r['KEY']!r} must be a key type and "
                                           "length, e.g. 'RSA 2048' or 'NISTECC 256'")
                key_type, key_size = normalize_key(parts[0], _number(path, line, "KEY", parts[1], 1))
                if setting == "confidentiality":
                    reuse = normalize_key_reuse(r["KEY REUSE"] or None)
                else:
                    _blank(path, line, "KEY REUSE", r["KEY REUSE"], f"under policy {setting}")
                spaces = AMS_ADDRESS_SPACES
            else:
                try:
                    setting = normalize_mode(r["SETTING"])
                except ValueError:
                    raise CalibrationError(f"{path} line {line}: SETTING {r['SETTING']!r} is not a channel "
                                           f"protection mode ({', '.join(MODES)})") from None
                if setting == "none":
                    _blank(path, line, "CIPHER", r["CIPHER"], "for mode none")
                else:
                    cipher = normalize_cipher(r["CIPHER"])
                _blank(path, line, "KEY", r["KEY"], "on a CHANNEL line")
                _blank(path, line, "KEY REUSE", r["KEY REUSE"], "on a CHANNEL line")
                spaces = ADDRESS_SPACES
        except CalibrationError:
            raise
        except ValueError as exc:   # the vocabularies' own messages (cipher, key, key reuse)
            raise CalibrationError(f"{path} line {line}: {exc}") from None
        space = {s.lower(): s for s in spaces}.get(r["ADDRESS SPACE"].lower())
        if space is None:
            raise CalibrationError(f"{path} line {line}: ADDRESS SPACE {r['ADDRESS SPACE']!r} is not one of "
                                   f"{', '.join(spaces)} for {work}")
        kb = _number(path, line, "MESSAGE KB", r["MESSAGE KB"])
        rate = _number(path, line, "RATE", r["RATE"])
        appl = _number(path, line, "APPL%", r["APPL%"])
        if rate == 0 or appl == 0:
            raise CalibrationError(f"{path} line {line}: RATE and APPL% must be > 0 (a measured load), got "
                                   f"RATE {r['RATE']}, APPL% {r['APPL%']}")
        if appl > MAX_APPL_PCT:
            raise CalibrationError(f"{path} line {line}: APPL% {r['APPL%']} must be at most {MAX_APPL_PCT:,.0f} "
                                   f"(100% of each of at most {PROCESSORS.bounds()[1]:.0f} processors)")
        row = CpuRow(line, work, setting, cipher, key_type, key_size, reuse, kb, space, rate, appl)
        if not row.cpu_us <= MAX_CPU_US:       # also an overflow to inf (RATE 1e-300)
            raise CalibrationError(f"{path} line {line}: APPL% {r['APPL%']} at RATE {r['RATE']} is "
                                   f"{row.cpu_us:.3g} CPU us per transaction, over {MAX_CPU_US:.0e}: check "
                                   "that RATE is transactions per second and APPL% percent of one processor")
        rows.append(row)
    if not rows:
        raise CalibrationError(f"{path}: no lines under the header")
    return rows


def _tls_params() -> tuple:
    from .fit import FREE
    return tuple(n for n, spec in FREE.items() if spec.submodel == "tls")


def _ams_cpu_params() -> tuple:
    from .fit import FREE, derived_parameters
    return tuple(n for n, spec in FREE.items() if spec.submodel == "ams") + tuple(
        n for n, spec in derived_parameters().items() if spec[1] != "structural assumption")


def cpu_observations(rows, platform: str = "z16", path: str = "the CPU table") -> list:
    """The measured CPU rows as :class:`Observation` (µs per transaction).

    The model's value is :func:`cryptoplan.model.zos.ams.ams_cost_at_rate_us` at the line's rate (AMS) or
    :func:`cryptoplan.model.zos.tls.tls_cost_us` (channels), on ``platform``.  Relative uncertainty: APPL%
    printed to two decimals, with the :data:`MEASUREMENT_RTOL` floor.

    Raises
    ------
    CalibrationError
        A line the model cannot price (e.g. a message size beyond its range), naming it.
    """
    from ..zos.ams import ams_cost_at_rate_us
    from ..zos.tls import normalize_platform, tls_cost_us
    try:
        plat = normalize_platform(platform)
    except ValueError as exc:
        raise CalibrationError(str(exc)) from None
    out = []
    for r in rows:
        if r.workload == "AMS":
            def predict(r=r):
                return float(ams_cost_at_rate_us(r.rate, r.setting, r.key_type, r.key_size, r.message_kb,
                                                 r.key_reuse, 1, r.address_space, plat))
            names = _ams_cpu_params()
            what = f"AMS {r.setting} {r.key_type} {r.key_size}"
        else:
            def predict(r=r):
                return float(tls_cost_us(r.setting, r.cipher, r.message_kb, r.address_space, platform=plat))
            names = _tls_params()
            what = f"channel {r.setting}{'' if r.cipher is None else ' ' + r.cipher}"
        try:
            m = predict()
        except ValueError as exc:
            raise CalibrationError(f"{path} line {r.line}: the model cannot price this line: {exc}") from None
        if not m > 0:
            raise CalibrationError(f"{path} line {r.line}: the model's CPU for {what} {r.address_space} is 0, "
                                   "so a measured value cannot calibrate it")
        sigma = max(MEASUREMENT_RTOL, 0.005 / math.sqrt(3.0) / r.appl_pct)
        label = f"{path} line {r.line}: {what}, {r.message_kb:g} KB, {r.address_space}"
        out.append(Observation(label, r.cpu_us, sigma, predict, names, "CPU per transaction, µs"))
    return out


def _records(t, c):
    """Index of each channel-accounting record's task-statistics interval (-1 when none)."""
    key_t = {k: i for i, k in enumerate(zip(t.lpar, t.qmgr, t.end))}
    return np.array([key_t.get(k, -1) for k in zip(c.lpar, c.qmgr, c.end)], dtype=int)


def smf_summary(tasks, channels=None, platform: str = "z16", path: str = "the SMF folder") -> dict:
    """What a site's channel-initiator statistics say, and the observations they make.

    Returns a dict with

    ``tasks``
        per queue manager and task type: intervals (active of all), tasks, mean requests/s,
        CPU per request (µs), largest busy fraction, elapsed per CPU time (sums over active
        intervals), and for dispatchers the most channels on one;
    ``elapsed_ratio``
        the SSL tasks' and dispatchers' elapsed per CPU time, :math:`\\sum e / \\sum c` over
        their active intervals, with its standard error from the spread between intervals,
        or None when none was active: the channel model's ``chin_task_elapsed_ratio``;
    ``observations``
        SSL-task CPU per message on message channels, one per interval that allows it (see
        below), as :class:`Observation` of the model's SSL-task demand
        :math:`(CHIN_{SSLCIPH} - CHIN_{none})/4` per message (:mod:`cryptoplan.model.zos.channel`: a
        transaction is four message ends over two LPARs, each encrypted or decrypted once by
        an SSL task);
    ``checks``
        dispatchers' and adapters' CPU per message against the model's unprotected
        channel-initiator cost per message :math:`CHIN_{none}/4` (the model's upper bound of
        their share: the task statistics leave out the channel initiator's other TCBs, so
        this is a check, not an observation);
    ``notes``
        why intervals gave no observation.

    An interval gives an SSL observation when its SSL tasks served requests, channel
    accounting of the same SMF interval shows SSL message channels (:data:`cryptoplan.model.calibration.smf.
    MESSAGE_CHANNEL_TYPES`) that moved messages, all with one cipher the model knows, and no
    SSL client (SvrConn) channel shared the SSL tasks.
    """
    from ..params import normalize_cipher
    from .smf import TASK_FILES
    from ..zos.tls import normalize_platform, tls_cost_parts_us
    try:
        plat = normalize_platform(platform)
    except ValueError as exc:
        raise CalibrationError(str(exc)) from None
    t = tasks
    act = t.active
    summary = []
    for q in np.unique(t.qmgr):
        for kind in TASK_FILES.values():
            m = (t.qmgr == q) & (t.task == kind)
            if not m.any():
                continue
            a = m & act
            summary.append({
                "qmgr": str(q), "lpar": str(t.lpar[m][0]), "task": kind, "intervals": int(m.sum()),
                "active": int(a.sum()), "tasks": int(t.tasks[m].max()),
                "requests_per_s": float(np.mean(t.requests_per_s[m])),
                "cpu_us_per_request": float(t.cpu_s[a].sum() * 1e6 / t.requests[a].sum()) if a.any() else None,
                "busy_max": float(t.busy[m].max()),
                "elapsed_per_cpu": float(t.elapsed_s[a].sum() / t.cpu_s[a].sum()) if a.any() else None,
                "channels_per_dispatcher": (float(t.channels[m].max() / t.tasks[m].max())
                                            if kind == "dispatcher" else None)})
    ratio = None
    m = act & np.isin(t.task, ("SSL", "dispatcher"))
    if m.any():
        r = t.elapsed_s[m].sum() / t.cpu_s[m].sum()
        per = t.elapsed_per_cpu[m]
        se = float(np.std(per, ddof=1) / np.sqrt(per.size)) if per.size > 1 else None
        ratio = {"value": float(r), "stderr": se, "intervals": int(m.sum())}
    obs, checks, notes = [], [], []
    if channels is None:
        notes.append(f"{path}: no channel accounting ({'SMF-QCST.csv'}): CPU per message cannot be formed "
                     "(collect SMF 116 class 4 channel accounting, STATCHL on the channels)")
        return {"tasks": summary, "elapsed_ratio": ratio, "observations": obs, "checks": checks, "notes": notes}
    c = channels
    rec = _records(t, c)
    if np.any(rec < 0):
        notes.append(f"{path}: {int(np.sum(rec < 0))} channel accounting record(s) have no task statistics of "
                     "the same SMF interval (matched on LPAR, queue manager, date and time): not used")
    for q, lpar, end in sorted({(str(a), str(b), str(e)) for a, b, e in zip(c.qmgr, c.lpar, c.end)}):
        here = (c.qmgr == q) & (c.lpar == lpar) & (c.end == end) & (c.messages > 0)
        if not here.any():
            continue
        where = f"{q} {end}"
        moving = c.message_channel[here]
        if not moving.any():
            notes.append(f"{where}: only client (SvrConn) channels moved messages; the channel model prices "
                         "message channels between queue managers")
            continue

        def task(kind, q=q, lpar=lpar, end=end):
            i = np.flatnonzero((t.qmgr == q) & (t.lpar == lpar) & (t.end == end) & (t.task == kind))
            return (float(t.cpu_s[i].sum()), float(t.requests[i].sum())) if i.size else None
        msgs = float(c.messages[here & c.message_channel].sum())
        kb = float(c.bytes[here & c.message_channel].sum()) / msgs / 1024.0
        if moving.all():
            d, a = task("dispatcher"), task("adapter")
            if d and a:
                model = tls_cost_parts_us("none", None, kb, plat)["CHIN"] / 4.0
                checks.append({"where": where, "messages": msgs, "kb": kb,
                               "site_us": (d[0] + a[0]) * 1e6 / msgs, "model_us": float(model)})
        ssl = here & c.message_channel & (c.cipher != "")
        if not ssl.any():
            continue
        ciphers = sorted(set(c.cipher[ssl]))
        if len(ciphers) > 1:
            notes.append(f"{where}: SSL message channels with {len(ciphers)} ciphers ({', '.join(ciphers)}) share "
                         "the SSL tasks: no single cipher to calibrate")
            continue
        try:
            cipher = normalize_cipher(ciphers[0])
        except ValueError:
            notes.append(f"{where}: cipher {ciphers[0]!r} is not one the model knows")
            continue
        if np.any(here & ~c.message_channel & (c.cipher != "")):
            notes.append(f"{where}: SSL client (SvrConn) channels shared the SSL tasks")
            continue
        s = task("SSL")
        if not s or s[1] == 0:
            notes.append(f"{where}: SSL message channels moved messages but no SSL task statistics show work")
            continue
        n_ssl = float(c.messages[ssl].sum())
        kb_ssl = float(c.bytes[ssl].sum()) / n_ssl / 1024.0

        def predict(cipher=cipher, kb=kb_ssl):
            return float((tls_cost_parts_us("SSLCIPH", cipher, kb, plat)["CHIN"]
                          - tls_cost_parts_us("none", None, kb, plat)["CHIN"]) / 4.0)
        obs.append(Observation(f"{path} {where}: SSL tasks, {cipher}, {kb_ssl:.3g} KB", s[0] * 1e6 / n_ssl,
                               MEASUREMENT_RTOL, predict, _tls_params(), "SSL-task CPU per message, µs"))
    return {"tasks": summary, "elapsed_ratio": ratio, "observations": obs, "checks": checks, "notes": notes}


def _card_observation(label, value, sigma, function, bits, factor) -> Observation:
    _, t0, alpha, fixed = CARD_FUNCTIONS[function]
    return Observation(label, value, sigma, lambda: float(function_ms(function, bits)) * factor,
                       (t0, alpha) + ((fixed,) if fixed else ()))


# A card line's UTIL% and RATE x EXEC TIME agree to RMF's printed rounding (UTIL% to 0.1, EXEC
# TIME to 0.001 ms: well under 1% at the report's magnitudes); beyond 5% (and half a point) the
# line is more likely mistyped, or its UTIL% counts work its RATE does not, and is named.
UTIL_DISAGREEMENT = 0.05
UTIL_DISAGREEMENT_POINTS = 0.5


def _consistency(rows) -> list:
    """RMF's UTIL% against RATE x EXEC TIME: how far the report's own identity holds.

    Parameters
    ----------
    rows : list of RmfRow
        The report's lines.

    Returns
    -------
    list of dict
        One per card line (FUNCTION TOTAL, RATE > 0): ``line``, ``card``, ``util_pct``,
        ``rate_x_exec_pct`` and ``disagrees`` (the two differ by more than
        :data:`UTIL_DISAGREEMENT` of RATE x EXEC TIME and :data:`UTIL_DISAGREEMENT_POINTS` points).
    """
    out = []
    for r in rows:
        if r.rate > 0 and r.function == "TOTAL":
            implied = r.rate * r.exec_ms / 10.0   # per s x ms -> percent
            gap = abs(r.util_pct - implied)
            out.append({"line": r.line, "card": f"{r.type} {r.id}", "util_pct": r.util_pct,
                        "rate_x_exec_pct": implied,
                        "disagrees": bool(gap > UTIL_DISAGREEMENT * implied and gap > UTIL_DISAGREEMENT_POINTS)})
    return out


def consistency_warning(c: dict, source: str = "") -> str:
    """The warning for a card line whose UTIL% disagrees with RATE x EXEC TIME.

    Parameters
    ----------
    c : dict
        One entry of :attr:`Calibration.consistency`.
    source : str, optional
        The report file, named in the warning.

    Returns
    -------
    str
        E.g. ``warning: rmf.csv line 2 (CEX8C 01): UTIL% 21.0 but RATE x EXEC TIME gives 24.7% ...``.
    """
    where = f"{source} line {c['line']}" if source else f"line {c['line']}"
    return (f"warning: {where} ({c['card']}): UTIL% {c['util_pct']:.1f} but RATE x EXEC TIME gives "
            f"{c['rate_x_exec_pct']:.1f}%: check the typed line (RMF's own figures agree to their rounding); "
            f"the calibration uses EXEC TIME, not UTIL%")


def _params_of(observations) -> list:
    names = []
    for o in observations:
        for n in o.params:
            if n not in names:
                names.append(n)
    return names


def _batch(names, base, observations, prior=True):
    """Residuals (k, m) of the log-parameter sets in the columns of ``logx`` (n, k).

    The site rows' :math:`r_i`, then (``prior``) the prior's :math:`r_{p,j}`: see the
    module docstring.  The observations' models are scalar: one evaluation per column.
    """
    y = np.array([o.value for o in observations])
    s = np.array([o.sigma for o in observations])
    x0 = np.log([base[n] for n in names])

    def batch(logx):
        logx = np.asarray(logx, dtype=float).reshape(len(names), -1)
        out = []
        for col in logx.T:
            values = dict(base)
            values.update({n: float(np.exp(v)) for n, v in zip(names, col)})
            with using_values(values):
                m = np.array([o.predict() for o in observations])
            r = (np.log(m) - np.log(y)) / s
            out.append(np.concatenate([r, (col - x0) / PRIOR_SIGMA]) if prior else r)
        return np.array(out)
    return batch


def smf_measured(summary: dict) -> dict:
    """The parameters the SMF task statistics measure directly, for :func:`calibrate`'s ``measured``.

    ``chin_task_elapsed_ratio`` from :func:`smf_summary`'s elapsed ratio.  The channel model
    needs a ratio of at least 1 (a task cannot take less elapsed time than CPU); a measured
    ratio below 1 (SMF's task times are accumulated at different points of a request) stays
    at 1, and the report says so.
    """
    r = summary.get("elapsed_ratio")
    if r is None:
        return {}
    value = max(r["value"], 1.0)
    note = (f"SSL tasks and dispatchers, {r['intervals']} active interval(s): elapsed / CPU = "
            f"{r['value']:.3f}" + (f" +- {r['stderr']:.2g}" if r["stderr"] is not None else ""))
    if r["value"] < 1.0:
        note += "; below 1, which one task cannot be, so the model's minimum 1 is kept"
    return {"chin_task_elapsed_ratio": {"value": value, "stderr": r["stderr"], "note": note}}


def calibrate(observations, rows=(), measured=None) -> Calibration:
    """Refit the parameters the site observations identify; keep the rest.

    Parameters
    ----------
    observations : list of Observation
        From :func:`rmf_observations`, :func:`cpu_observations` and :func:`smf_summary`;
        may be empty when ``measured`` is given.
    rows : list of RmfRow, optional
        The report's lines, for the UTIL% consistency check.
    measured : dict, optional
        Parameters the site measures directly (name -> {value, stderr, note}, e.g.
        :func:`smf_measured`): set, not fitted.

    Returns
    -------
    Calibration
    """
    doc = load_params()
    measured = dict(measured or {})
    if not observations and not measured:
        raise CalibrationError("no site number to calibrate on")
    published = {n: float(p["value"]) for n, p in doc["parameters"].items()}
    base = dict(published)
    base.update({n: float(m["value"]) for n, m in measured.items()})
    wanted = _params_of(observations)
    zero = [n for n in wanted if not base[n] > 0]
    candidates = [n for n in wanted if base[n] > 0]
    x0 = np.log([base[n] for n in candidates])
    J = (jacobian(_batch(candidates, base, observations, prior=False), x0,
                  np.full(x0.size, -np.inf), np.full(x0.size, np.inf)) if candidates
         else np.zeros((len(observations), 0)))
    post = np.linalg.pinv(J.T @ J + np.eye(len(candidates)) / PRIOR_SIGMA ** 2)
    sd = np.sqrt(np.clip(np.diag(post), 0.0, None))
    identified = [n for n, s in zip(candidates, sd) if s <= PRIOR_SIGMA / IDENTIFIED_SHRINK]
    unidentified = {}
    for n, s, col in zip(candidates, sd, J.T):
        if n in identified:
            continue
        if not np.any(np.abs(col) > 1e-9):
            why = "no site number depends on it"
            if n.startswith("exp_") or n == "cop_rsa_fixed_share":
                why += (" (a key-length exponent, or the share of a sign that does not grow with the key, "
                        "has no effect at the reference key length, RSA 2048 or ECC 192 bits)")
            elif n == "tls_z14_vs_z15":
                why += " (it scales z14 costs only)"
        else:
            why = (f"uncertain to a factor {math.exp(s):.2f} (1 sd): the site numbers move it only together "
                   "with other parameters (e.g. one key length cannot separate a time from its key-length "
                   "exponent, one message size a fixed cost from a per-KB one)")
        unidentified[n] = why
    for n in zero:
        unidentified[n] = ("its published value is 0 (at the fit's bound); the calibration works on "
                           "logarithms and keeps it")
    with using_values(published):
        before = [o.predict() for o in observations]
    values = dict(base)
    cost = 0.0
    stderr = {}
    solution = None
    if identified:
        import lmfit   # here: reading a report needs no optimizer
        start = lmfit.Parameters()
        for n in identified:
            start.add(n, value=math.log(base[n]))     # log space: unbounded
        solution = solve(_batch(identified, base, observations), start)
        values.update({n: float(np.exp(v)) for n, v in zip(identified, solution.x)})
        cost = solution.cost
        # the standard error of a log-parameter, carried to the parameter (delta method)
        stderr = {n: float(np.exp(v) * e) for n, v, e in zip(identified, solution.x, solution.stderr)}
    with using_values(values):
        after = [o.predict() for o in observations]
    parameters = {}
    for n, p in doc["parameters"].items():
        q = dict(p)
        if n in identified:
            q.update(value=values[n], stderr=stderr[n],
                     source=f"calibrated on site data (published {published[n]:.6g})")
        elif n in measured:
            q.update(value=values[n], stderr=measured[n]["stderr"],
                     source=f"measured on site data: {measured[n]['note']} (published {published[n]:.6g})")
        parameters[n] = q
    moved = [{"name": n, "published": published[n], "calibrated": values[n], "ratio": values[n] / published[n],
              "stderr": stderr[n], "unit": doc["parameters"][n].get("unit", "")} for n in identified]
    direct = [{"name": n, "published": published[n], "calibrated": values[n], "stderr": m["stderr"],
               "note": m["note"], "unit": doc["parameters"][n].get("unit", "")} for n, m in measured.items()]
    residuals = [{"label": o.label, "quantity": o.quantity, "site": o.value, "before": b, "after": a}
                 for o, b, a in zip(observations, before, after)]
    from .fit import figure_table
    table = {r["id"]: r for r in figure_table(published)}
    lost = [{"id": r["id"], "published": r["published"], "model": r["model"]}
            for r in figure_table(values) if not r["within_tolerance"] and table[r["id"]]["within_tolerance"]]
    return Calibration(parameters=parameters, identified=identified, unidentified=unidentified, moved=moved,
                       residuals=residuals, consistency=_consistency(rows), contradicted=lost,
                       reproduced_before=sum(r["within_tolerance"] for r in table.values()), cost=cost,
                       measured=direct, solution=solution)
