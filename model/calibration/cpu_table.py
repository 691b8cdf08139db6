"""A site's measured CPU per transaction by address space, and the costs it observes.

RMF's Workload Activity report gives an address space's CPU (APPL%, percent of one
processor) over an interval of steady load; divided by the transaction rate it is the CPU
per transaction, µs, the quantity :func:`cryptoplan.model.zos.ams.ams_cost_at_rate_us` (AMS)
and :func:`cryptoplan.model.zos.tls.tls_cost_us` (channels) predict.  :func:`read_cpu_table`
reads and checks a table of such lines (:data:`CPU_COLUMNS`); :func:`cpu_observations` turns
them into :class:`~cryptoplan.model.calibration.observations.Observation`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..datafiles import read_csv_table
from ..domains import PROCESSORS
from ..params import (ADDRESS_SPACES, MODES, POLICIES, normalize_cipher, normalize_key, normalize_key_reuse,
                      normalize_mode, normalize_policy)
from ..zos.ams import AMS_ADDRESS_SPACES, ams_cost_at_rate_us
from ..zos.tls import normalize_platform, tls_cost_us
from .free import FREE, derived_parameters
from .observations import MEASUREMENT_RTOL, CalibrationError, Observation, parse_number, tls_parameters

__all__ = ["CPU_COLUMNS", "CpuRow", "MAX_APPL_PCT", "MAX_CPU_US", "read_cpu_table", "cpu_observations"]

# A site's measured CPU per transaction by address space (read_cpu_table).
CPU_COLUMNS = ("WORKLOAD", "SETTING", "CIPHER", "KEY", "KEY REUSE", "MESSAGE KB", "ADDRESS SPACE", "RATE",
               "APPL%")


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
    """Raise :class:`CalibrationError` unless the cell ``text`` is empty."""
    if text:
        raise CalibrationError(f"{path} line {line}: {column} must be empty {why} (got {text!r})")


# A measured CPU table's limits: an address space's APPL% is at most 100% of each processor of
# the LPAR (PROCESSORS' 256 at most), and one transaction costing over 1,000 s of CPU is a
# unit mistake, not a measurement (the published costs are tens to thousands of us).
MAX_APPL_PCT = 100.0 * PROCESSORS.bounds()[1]
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
    path = str(path)
    rows = []
    for line, cells in read_csv_table(path, CPU_COLUMNS, "a measured CPU table", CalibrationError,
                                      heading=str.upper):
        rows.append(_cpu_row(path, line, {h: v.strip() for h, v in cells.items()}))
    if not rows:
        raise CalibrationError(f"{path}: no lines under the header")
    return rows


def _ams_setting(path, line, r) -> tuple:
    """An AMS line's (policy, cipher None, key type, key size, key reuse), checked."""
    reuse = None
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
    key_type, key_size = normalize_key(parts[0], parse_number(path, line, "KEY", parts[1], 1))
    if setting == "confidentiality":
        reuse = normalize_key_reuse(r["KEY REUSE"] or None)
    else:
        _blank(path, line, "KEY REUSE", r["KEY REUSE"], f"under policy {setting}")
    return setting, None, key_type, key_size, reuse


def _channel_setting(path, line, r) -> tuple:
    """A CHANNEL line's (mode, cipher, key type None, key size None, key reuse None), checked."""
    cipher = None
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
    return setting, cipher, None, None, None


def _cpu_row(path, line, r) -> CpuRow:
    """One line of the table, ``r`` its cells (column -> text, stripped), as :class:`CpuRow`.

    Raises
    ------
    CalibrationError
        Naming the file, the line and what is accepted.
    """
    work = r["WORKLOAD"].upper()
    if work not in ("AMS", "CHANNEL"):
        raise CalibrationError(f"{path} line {line}: WORKLOAD {r['WORKLOAD']!r} is not AMS or CHANNEL")
    try:
        if work == "AMS":
            setting, cipher, key_type, key_size, reuse = _ams_setting(path, line, r)
            spaces = AMS_ADDRESS_SPACES
        else:
            setting, cipher, key_type, key_size, reuse = _channel_setting(path, line, r)
            spaces = ADDRESS_SPACES
    except CalibrationError:
        raise
    except ValueError as exc:   # the vocabularies' own messages (cipher, key, key reuse)
        raise CalibrationError(f"{path} line {line}: {exc}") from None
    space = {s.lower(): s for s in spaces}.get(r["ADDRESS SPACE"].lower())
    if space is None:
        raise CalibrationError(f"{path} line {line}: ADDRESS SPACE {r['ADDRESS SPACE']!r} is not one of "
                               f"{', '.join(spaces)} for {work}")
    kb = parse_number(path, line, "MESSAGE KB", r["MESSAGE KB"])
    rate = parse_number(path, line, "RATE", r["RATE"])
    appl = parse_number(path, line, "APPL%", r["APPL%"])
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
    return row


def _ams_cpu_params() -> tuple:
    """The AMS sub-model's free parameters and the ones read from rows: what an AMS CPU
    observation may depend on."""
    return tuple(n for n, spec in FREE.items() if spec.submodel == "ams") + tuple(
        n for n, spec in derived_parameters().items() if "assumption" not in spec[1])


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
            names = tls_parameters()
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
