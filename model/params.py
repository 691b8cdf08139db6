"""Fitted model parameters: loading, lookup, and the vocabularies the models accept.

Parameters live in ``data/params.json`` (written by ``cryptoplan fit``), or in
the file named by the environment variable ``CRYPTOPLAN_PARAMS`` so that a
site can calibrate on its own RMF/SMF measurements.  Each entry carries its
value, standard error, unit, sub-model and a description.  No published
number is written in code: the fit derives every parameter from the rows of
``data/figures.csv``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cryptoplan.model.errors import CryptoplanError, InputError, InputTypeError, UnknownName

import contextvars
import json
import math
import os
import sys
import re
import struct
import warnings
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from types import MappingProxyType


from .datafiles import data_path
from ._text import value_text
from .domains import KEY_REUSE, MAX_MESSAGE_KB
from .lazy import lazy_module


if TYPE_CHECKING:     # the real modules, for the type checker; lazy at run time
    import numpy as np
else:
    np = lazy_module("numpy")      # json_depth only: importing the parameters stays light

__all__ = [
    "Parameters", "ParameterFileError", "MissingParameterFile", "current_parameters", "using_parameters", "binding",
    "load_params", "param", "params_path", "clear_cache", "using_values", "using_params",
    "prepared_values", "parameter_sets", "normalize_choice", "validate_params",
    "POLICIES", "KEY_TYPES", "RSA_KEY_SIZES", "ECC_KEY_SIZES", "MODES", "CIPHERS",
    "ADDRESS_SPACES", "MAX_MESSAGE_KB", "normalize_policy", "normalize_key", "normalize_key_type", "normalize_mode",
    "normalize_cipher",
    "normalize_key_reuse", "normalize_address_space",
]

POLICIES = ("integrity", "privacy", "confidentiality")
KEY_TYPES = ("RSA", "NISTECC")
# RACDCERT GENCERT sizes the AMS models cover; the cards support RSA 57-4096 bits.
RSA_KEY_SIZES = (1024, 2048, 3072, 4096)
ECC_KEY_SIZES = (192, 224, 256, 384, 521)
MODES = ("none", "SSLCIPH", "ATTLS")
# Cipher families: name -> (protocol, hardware-accelerated symmetric cipher?)
CIPHERS = {
    "NULL_SHA": ("TLS1.2", True),
    "TLS_RSA_WITH_AES_256_CBC_SHA": ("TLS1.2", True),
    "TLS_RSA_WITH_AES_256_CBC_SHA256": ("TLS1.2", True),
    "TLS_RSA_WITH_AES_128_GCM_SHA256": ("TLS1.2", True),
    "TLS_RSA_WITH_AES_256_GCM_SHA384": ("TLS1.2", True),
    "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384": ("TLS1.2", True),
    "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384": ("TLS1.2", True),
    "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384": ("TLS1.2", True),
    "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384": ("TLS1.2", True),
    "TLS_AES_256_GCM_SHA384": ("TLS1.3", True),
    "TLS_AES_128_GCM_SHA256": ("TLS1.3", True),
    "TLS_CHACHA20_POLY1305_SHA256": ("TLS1.3", False),
}
# MQ's SSLCIPH short forms of the ECDHE suites ("ECDHE_RSA_AES_256_CBC_SHA384")
_CIPHER_NAMES = tuple(CIPHERS)
_CIPHER_ALIASES = {full[4:].replace("_WITH", "").lower(): full for full in CIPHERS if full.startswith("TLS_ECDHE_")}
ADDRESS_SPACES = ("total", "MSTR", "CHIN", "TCPIP")


def _fold(text) -> str:
    return str(text).strip().lower().replace("-", "_").replace(" ", "_")


@lru_cache(maxsize=256)
def _choice_table(allowed: tuple, aliases: tuple) -> dict:
    """Folded spelling -> canonical value, built once per vocabulary (the models ask millions of times)."""
    table = {_fold(a): a for a in allowed}
    table.update({_fold(k): v for k, v in aliases})
    return table


@lru_cache(maxsize=4096)
def _lookup(value: str, allowed: tuple, aliases: tuple):
    return _choice_table(allowed, aliases).get(_fold(value))


def normalize_choice(name: str, value, allowed, aliases=None):
    """One of ``allowed`` (case-insensitive; ``-``, ``_`` and spaces are alike), or an alias.

    The one place where text choices are checked: the error names the argument,
    lists the accepted values and shows what was given.  Look-ups are cached by
    (value, vocabulary); values that cannot be cached (unhashable) are folded afresh.
    """
    if value is None:
        raise InputError(f"{name} is required; accepted values: {', '.join(map(str, allowed))}")
    allowed = tuple(allowed)
    alias_items = tuple((aliases or {}).items())
    try:
        hit = _lookup(value if isinstance(value, str) else str(value), allowed, alias_items)
    except (TypeError, ValueError):  # an unhashable entry; an integer too long for str()
        hit = None
    if hit is None:
        raise InputError(f"{name} must be one of {', '.join(map(str, allowed))} (got {value_text(value)})")
    return hit


def normalize_policy(policy) -> str:
    """Case-insensitive AMS policy name: integrity, privacy or confidentiality."""
    return normalize_choice("policy", policy, POLICIES)


def normalize_mode(mode, name: str = "mode") -> str:
    """Channel protection: none, SSLCIPH or ATTLS (also AT-TLS, AT_TLS); an error names ``name``."""
    return normalize_choice(name, mode, MODES, {"at-tls": "ATTLS", "at_tls": "ATTLS", "": "none",
                                         "ssl": "SSLCIPH", "mq": "SSLCIPH"})


def normalize_cipher(cipher) -> str:
    """An IBM cipher name (case-insensitive); MQ's ``ECDHE_RSA_...`` short forms accepted."""
    return normalize_choice("cipher", cipher, _CIPHER_NAMES, _CIPHER_ALIASES)


def normalize_key_type(key_type) -> str:
    """RSA or NISTECC (case-insensitive; ECC, EC and "NIST ECC" mean NISTECC)."""
    return normalize_choice("key_type", key_type, KEY_TYPES, {"ecc": "NISTECC", "nist ecc": "NISTECC",
                                                     "ec": "NISTECC"})


def normalize_key(key_type, key_size) -> tuple[str, int]:
    """Validate a certificate key type and size as supported by Crypto Express and RACF."""
    kt = normalize_key_type(key_type)
    allowed = RSA_KEY_SIZES if kt == "RSA" else ECC_KEY_SIZES
    try:
        size = float(key_size)
    except (TypeError, ValueError, OverflowError):
        size = float("nan")
    if not (size == size and abs(size) != float("inf")) or size != int(size) or int(size) not in allowed:
        raise InputError(f"key_size for {kt} must be one of {', '.join(map(str, allowed))} "
                         f"bits (got {value_text(key_size)})")
    return kt, int(size)


def np_bool_types() -> tuple:
    """NumPy's boolean scalar type, if NumPy is loaded (this module does not load it)."""
    np = sys.modules.get("numpy")
    return (np.bool_,) if np is not None else ()


def normalize_key_reuse(key_reuse) -> float:
    """AMS Confidentiality key reuse: a whole number in :data:`~cryptoplan.model.domains.KEY_REUSE` or "unlimited" (inf).

    ``None`` means the policy does not reuse keys (1), as for Integrity and Privacy.
    """
    if key_reuse is None:
        return 1.0
    if isinstance(key_reuse, (bool, np_bool_types())) or not isinstance(key_reuse, (str, int, float)) and not hasattr(
            key_reuse, "__float__"):
        # TRUE is not 1 message per key, and a table or a list is no count at all
        raise InputError(f"key_reuse must be a whole number {KEY_REUSE.text()} or 'unlimited' "
                         f"(got {value_text(key_reuse)})")
    if isinstance(key_reuse, str):
        if key_reuse.strip().lower() in ("unlimited", "inf", "infinite"):
            return float("inf")
        if key_reuse.strip().lower() in ("disabled", ""):
            return 1.0
        try:
            key_reuse = float(key_reuse)
        except ValueError:
            raise InputError(f"key_reuse must be a whole number {KEY_REUSE.text()} or 'unlimited' "
                             f"(got {value_text(key_reuse)})") from None
    try:
        k = float(key_reuse)
    except OverflowError:       # an integer beyond the float range: beyond any KEYREUSE
        k = float("nan")
    if not (k == float("inf") or KEY_REUSE.contains(k)):     # the KEYREUSE range of the reference facts
        raise InputError(f"key_reuse must be a whole number {KEY_REUSE.text()} or 'unlimited' "
                         f"(got {value_text(key_reuse)})")
    return k


def normalize_address_space(address_space) -> str:
    """total, MSTR, CHIN or TCPIP (None means total)."""
    if address_space is None:
        return "total"
    return normalize_choice("address_space", address_space, ADDRESS_SPACES,
                   {"chinit": "CHIN", "channel initiator": "CHIN", "qmgr": "MSTR", "tcp/ip": "TCPIP",
                    "tcp": "TCPIP"})


class ParameterFileError(CryptoplanError, ValueError):
    """A parameter file the user named cannot be used: unreadable, too large, not JSON, invalid.

    A user error (a :class:`ValueError`), never an internal one: its message names the file
    and what is wrong with it.
    """


class MissingParameterFile(ParameterFileError, FileNotFoundError):
    """The path names no regular file (missing, a folder, a device or a FIFO)."""


# A parameter file is a few kilobytes (the packaged one about 10 KB) and three levels deep;
# anything far beyond is refused before it is parsed: a deeply nested array would otherwise
# exhaust the C stack of the JSON decoder under the formula engine's raised recursion limit.
MAX_PARAMS_BYTES = 16 * 2**20
MAX_PARAMS_DEPTH = 64
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)


def params_path() -> Path:
    """The parameter file selected by the environment: ``$CRYPTOPLAN_PARAMS`` or ``data/params.json``.

    Raises
    ------
    MissingParameterFile
        ``$CRYPTOPLAN_PARAMS`` names something that is not a regular file.
    """
    env = os.environ.get("CRYPTOPLAN_PARAMS")
    if env:
        p = Path(env).expanduser()
        if not _is_file(p):
            raise MissingParameterFile(f"CRYPTOPLAN_PARAMS names {p}, which is not a file")
        return p
    return data_path("params.json")


def _is_file(p: Path) -> bool:
    try:
        return p.is_file()
    except (OSError, ValueError):       # a name too long, a NUL byte
        return False


def json_depth(data: bytes) -> int:
    """Deepest nesting of arrays and objects in JSON text ``data`` (string contents not counted).

    Vectorized (one regular-expression pass and a cumulative sum), so a hostile file is
    measured in linear time without recursion.
    """
    a = np.frombuffer(_JSON_STRING.sub(b'""', data), dtype=np.uint8)
    opens = (a == 0x5B) | (a == 0x7B)
    closes = (a == 0x5D) | (a == 0x7D)
    if not opens.any():
        return 0
    return int(np.cumsum(opens.astype(np.int64) - closes).max())


def _read(path: str) -> dict:
    """Read, parse and validate a parameter file; every failure a :class:`ParameterFileError`."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_PARAMS_BYTES + 1)
    except OSError as exc:
        raise ParameterFileError(f"{path}: cannot read the parameter file ({exc.strerror or exc})") from None
    if len(data) > MAX_PARAMS_BYTES:
        raise ParameterFileError(f"{path}: not a cryptoplan parameter file (larger than "
                                 f"{MAX_PARAMS_BYTES // 2**20} MiB)")
    depth = json_depth(data)
    if depth > MAX_PARAMS_DEPTH:
        raise ParameterFileError(f"{path}: not a cryptoplan parameter file (nested {depth:,} levels "
                                 f"deep; at most {MAX_PARAMS_DEPTH} allowed)")
    try:
        doc = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as exc:   # not UTF-8, not JSON, an integer over 4,300 digits
        raise ParameterFileError(f"{path}: not a cryptoplan parameter file (not JSON: {exc})") from None
    validate_params(doc, path)
    return doc


def validate_params(doc, path="the parameter file", *, names: bool = True) -> None:
    """Check a parameter document: every parameter the models use, each a finite number >= 0.

    The names are the packaged ``data/params.json``'s (what ``cryptoplan fit`` writes): a file
    that lacks one or adds one is an error naming them, as is a value that is not a real
    number (text, true/false, null, a list), not finite, or negative (every parameter is a
    time, a CPU cost, a count, an exponent or a ratio; a few have a floor above 0), or one
    that breaks a relation between two parameters.  ``names=False`` skips the comparison of
    names (a fit writing the packaged file defines them: a parameter added to the fit is new).

    Raises
    ------
    ParameterFileError
        A :class:`ValueError` naming the file, the parameter and the value.
    """
    if not isinstance(doc, dict) or not isinstance(doc.get("parameters"), dict):
        raise ParameterFileError(f"{path}: not a cryptoplan parameter file (no 'parameters' object)")
    params = doc["parameters"]
    reference = _reference_names() if names else None
    if reference is not None:
        missing = sorted(reference - set(params))
        unknown = sorted(set(params) - reference)
        if missing:
            raise ParameterFileError(f"{path}: lacks the parameters {', '.join(missing)}; write the file with "
                             "cryptoplan fit --out")
        if unknown:
            raise ParameterFileError(f"{path}: unknown parameters {', '.join(unknown)}; accepted: "
                             f"{', '.join(sorted(reference))}")
    for name, entry in params.items():
        v = entry.get("value") if isinstance(entry, dict) else None
        lo = _MINIMUM.get(name, 0.0)
        ok = isinstance(v, (int, float)) and not isinstance(v, bool) and _finite(v) and v >= lo
        if not ok:
            raise ParameterFileError(f"{path}: parameter {name!r} must have a 'value' that is a finite "
                                     f"number >= {lo:g} (got {value_text(v)})")
    for name, (limit, why) in _BELOW.items():
        if name not in params:
            continue
        v = params[name]["value"]
        cap = params[limit]["value"] if isinstance(limit, str) and limit in params else limit
        if isinstance(cap, (int, float)) and not v < cap:
            what = f"{limit} ({value_text(cap)})" if isinstance(limit, str) else value_text(cap)
            raise ParameterFileError(f"{path}: parameter {name!r} must be less than {what} "
                                     f"(got {value_text(v)}): {why}")


def _finite(v) -> bool:
    """``v`` is finite as a float (an integer beyond the float range is not)."""
    try:
        return math.isfinite(v)
    except OverflowError:
        return False


# Parameters with a floor above 0: a task's elapsed time is at least its CPU time; a
# certificate takes at least one check.
_MINIMUM = {"chin_task_elapsed_ratio": 1.0, "ams_cert_checks": 1.0}
# Parameters bounded by another (or by a number): the part of a card time that does not grow
# with the modulus is less than the whole time at 2048 bits, else a card time would fall as
# keys grow (cryptoplan.model.zos.crypto.function_ms).
_BELOW = {
    "acc_fixed_ms": ("acc_me_ms_2048", "the accelerator's fixed time per request is part of "
                                       "its RSA-2048 ME time"),
    "cop_rsa_fixed_share": (1.0, "a share of the coprocessor's RSA-2048 sign time"),
}


@lru_cache(maxsize=1)
def _reference_names():
    """Parameter names of the packaged data/params.json."""
    ref = data_path("params.json")
    with open(ref, encoding="utf-8") as fh:
        doc = json.load(fh)
    return frozenset(doc.get("parameters", {}))


@dataclass(frozen=True)
class Parameters:
    """A validated parameter set: the calibration the models evaluate with.

    Loaded and checked once (:meth:`load`); the models look values up in :attr:`values`
    without touching the file again.  Select one for a block of code with
    :func:`using_parameters`; without one, the models use the file the environment selects
    (``$CRYPTOPLAN_PARAMS`` or the packaged ``data/params.json``), loaded once per process
    and per value of the variable (:func:`clear_cache` re-reads it).

    Examples
    --------
    >>> from cryptoplan.model.params import Parameters, using_parameters
    >>> site = Parameters.load()                      # or Parameters.load("site-params.json")
    >>> with using_parameters(site):
    ...     pass                                      # every model call here uses ``site``
    """

    path: str
    document: dict = field(repr=False)
    values: MappingProxyType = field(repr=False)

    @classmethod
    def load(cls, path=None) -> "Parameters":
        """Read and validate a parameter file (default: the one the environment selects).

        Raises
        ------
        ParameterFileError
            Naming the file, and for a bad entry the parameter and its value; a
            :class:`MissingParameterFile` (also a :class:`FileNotFoundError`) when the path
            names no regular file.
        """
        p = str(params_path() if path is None else Path(path).expanduser())
        if path is not None and not _is_file(Path(p)):
            raise MissingParameterFile(f"parameter file {p} is not a file")
        doc = _read(p)
        return cls.from_document(doc, p)

    @classmethod
    def load_cached(cls, path) -> "Parameters":
        """:meth:`load`, remembered while the file is unchanged (same size and modification time).

        For callers that name a file on every evaluation (a spreadsheet cell's ``params_file``):
        one ``stat`` per call instead of a read and a validation. A file that was invalid is read
        again on the next call, so fixing it takes effect at the next recalculation.

        Raises
        ------
        ParameterFileError
            As :meth:`load`.
        """
        p = Path(path).expanduser()
        try:
            st = p.stat()
        except (OSError, ValueError):
            raise MissingParameterFile(f"parameter file {p} is not a file") from None
        key = (str(p.resolve()), st.st_mtime_ns, st.st_size)
        got = _by_file.get(key)
        if got is None:
            got = cls.load(p)
            if len(_by_file) >= 32:
                _by_file.clear()
            _by_file[key] = got
        return got

    @classmethod
    def from_document(cls, doc: dict, path: str = "a parameter document") -> "Parameters":
        """A parameter set from a document as :func:`cryptoplan.model.calibration.fit.fit` or calibration writes it (validated)."""
        validate_params(doc, path)
        values = {n: float(e["value"]) for n, e in doc["parameters"].items()}
        return cls(path, doc, MappingProxyType(values))

    def __getitem__(self, name: str) -> float:
        try:
            return self.values[name]
        except KeyError:
            raise UnknownName(f"parameter {name!r} missing from {self.path}; re-run `cryptoplan fit`") from None


_default: dict = {}     # $CRYPTOPLAN_PARAMS (or None) -> Parameters
_by_file: dict = {}     # (resolved path, mtime_ns, size) -> Parameters (Parameters.load_cached)


def current_parameters() -> Parameters:
    """The parameter set in force: :func:`using_parameters`'s, else the environment's (loaded once)."""
    chosen = _active.get()
    if chosen is not None:
        return chosen
    env = os.environ.get("CRYPTOPLAN_PARAMS") or None
    got = _default.get(env)
    if got is None:
        got = _default[env] = Parameters.load()
    return got


def load_params() -> dict:
    """The parameter document in force (see :func:`current_parameters`)."""
    return current_parameters().document


def clear_cache() -> None:
    """Forget the parameter files loaded so far: the next model call reads the file again."""
    _default.clear()
    _by_file.clear()


_active: contextvars.ContextVar[Parameters | None] = contextvars.ContextVar("cryptoplan_parameters", default=None)
_override: contextvars.ContextVar[_Values | None] = contextvars.ContextVar("cryptoplan_params", default=None)


@contextmanager
def using_parameters(parameters: Parameters):
    """Evaluate the models with this :class:`Parameters` set inside the block."""
    if not isinstance(parameters, Parameters):
        raise InputTypeError(f"using_parameters takes a Parameters set (Parameters.load(path)), got "
                        f"{type(parameters).__name__}")
    token = _active.set(parameters)
    try:
        yield parameters
    finally:
        _active.reset(token)


@contextmanager
def using_values(values: dict):
    """Evaluate the models with these parameter values (name -> float) instead of the set's.

    Used by the fit, cross-validation and calibration; names not given fall back to the
    parameter set in force.  A value may be a 1-D array of k values: :func:`param` then
    returns it as is, and a model evaluated on scenarios shaped to broadcast against it
    (e.g. ``(n, 1)``) answers for k parameter sets at once, shape ``(n, k)``; the fit's
    finite differences evaluate all their columns in one call this way.  ``values`` may be what
    :func:`prepared_values` returned: the same object in several blocks is one binding.
    """
    token = _override.set(prepared_values(values))
    try:
        yield
    finally:
        _override.reset(token)


def using_params(values: dict):
    """Deprecated name of :func:`using_values` (until 0.2): beside :func:`using_parameters` (a
    :class:`Parameters` set) the two names did not say which takes plain values."""
    warnings.warn("using_params() is deprecated and will be removed in 0.2: use using_values() "
                  "(values by name), or using_parameters() for a Parameters set",
                  DeprecationWarning, stacklevel=2)
    return using_values(values)


def prepared_values(values: dict, shared: bool = False):
    """``values`` as :func:`using_values` keeps them, made once: the same object given to several
    :func:`using_values` blocks is the same :func:`binding`, so what is remembered per binding
    (a plan evaluated for one set of cells) is found again.  ``shared``: its maker hands the same
    object over again for the same values and never changes it (a sweep's draws,
    :meth:`cryptoplan.workbook.drawing.Drawing.at`), so what is made from arrays of parameter sets
    may be remembered by its identity too (a plan's workload profiles)."""
    if isinstance(values, _Values):
        return values
    out = _Values(values)
    out.shared = bool(shared)
    return out


def parameter_sets(values: dict) -> list | None:
    """The ``k`` parameter sets a :func:`using_values` dict gives with arrays of one length ``k``:
    set ``j`` holds each array's element ``j`` (a float) and every single value as it is, as
    :func:`prepared_values`.  None when no value is an array, or the arrays are not all 1-D of one
    length (what the models then broadcast, or refuse, themselves).

    Examples
    --------
    >>> [dict(s) for s in parameter_sets({"a": np.array([1.0, 2.0]), "b": 3.0})]
    [{'b': 3.0, 'a': 1.0}, {'b': 3.0, 'a': 2.0}]
    """
    arrays = {k: v for k, v in values.items() if getattr(v, "ndim", 0)}
    if not arrays or len({np.shape(v) for v in arrays.values()}) != 1 or np.ndim(next(iter(arrays.values()))) != 1:
        return None
    single = {k: v for k, v in values.items() if k not in arrays}
    names = list(arrays)
    rows = np.column_stack([np.asarray(arrays[k], dtype=float) for k in names]).tolist()
    return [prepared_values({**single, **dict(zip(names, row))}) for row in rows]


class _Values(dict):
    """A :func:`using_values` dict that knows whether it gives every parameter a value.

    Every valid parameter set has the packaged file's names (:func:`validate_params`), so
    values for all of them decide every :func:`param` whatever the set in force.
    """

    __slots__ = ("complete", "_key", "shared")

    def __init__(self, values):
        super().__init__(values)
        names = _reference_names_cached()
        self.complete = names is not None and names <= self.keys()
        self._key = _UNSET
        self.shared = False

    def key(self):
        """The values as a hashable key, each float by its bits (-0.0 is not 0.0), with their names
        in order; None unless every value is a Python float or int (an array of parameter sets, a
        NumPy scalar: no key, so nothing is remembered by it).  Made once."""
        if self._key is _UNSET:
            vals = list(self.values())
            ok = set(map(type, vals)) <= {float, int}
            self._key = (tuple(self), struct.pack(f"{len(vals)}d", *vals)) if ok else None
        return self._key


_UNSET = object()


@lru_cache(maxsize=1)
def _reference_names_cached():
    try:
        return _reference_names()
    except (OSError, ValueError):
        return None


def binding() -> tuple:
    """What decides the parameter values in force: compare two bindings with ``is`` element-wise.

    The same binding means the same values (the :func:`using_values` dict and the parameter
    set are not changed in place), so a caller may keep arrays computed from the parameters
    until the binding changes: the fit's target grids bind once per evaluation this way.
    """
    over = _override.get()
    if over is not None and over.complete:
        return (over, None)        # every parameter given: the set in force decides nothing
    return (over, current_parameters())


#: Parameters the models compute from others, never stored in a parameter file: name ->
#: ``(inputs, function)``.  NULL_SHA's and TLS 1.3 AES-GCM's CPU per KB per side are TLS 1.2
#: AES-CBC with HMAC's times a share of it (``tls_null_share``: the MAC alone; ``tls_gcm_share``:
#: the AES pass alone; each in [0, 1]), so neither exceeds it: in the fit, in every draw and in a
#: site's calibration (a MAC alone, or a cipher without the HMAC pass, cannot cost more than the
#: cipher and the MAC).  A :func:`using_values` block that gives the name itself wins (the fit's
#: linear cost table takes each cipher's column that way).
DERIVED = {"tls_sym_us_per_kb_null": (("tls_sym_us_per_kb_tls12", "tls_null_share"), lambda a, b: a * b),
           "tls_sym_us_per_kb_tls13hw": (("tls_sym_us_per_kb_tls12", "tls_gcm_share"), lambda a, b: a * b)}


def param(name: str) -> float:
    """Value of one parameter: a lookup in the parameter set in force, no file access (a
    :data:`DERIVED` one computed from its inputs)."""
    over = _override.get()
    if over is not None and name in over:
        v = over[name]
        return v if getattr(v, "ndim", 0) else float(v)   # an array: k parameter sets at once
    if name in DERIVED:
        inputs, f = DERIVED[name]
        return f(*(param(i) for i in inputs))
    return current_parameters()[name]
