"""A site's measured quantum-safe card time, in place of the assumption.

The quantum-safe card times of :mod:`cryptoplan.model.zos.quantum_safe` are assumed: a software
ratio times the coprocessor's RSA-2048 sign time, with a factor per family (ML-DSA, ML-KEM), 1 as
shipped and drawn from 0.5 to 3 by ``--bands``.  A site that has measured one operation's
coprocessor time (RMF's Crypto Hardware Activity: the coprocessors' busy time over a run of the
quantum-safe work alone, or with and without it, over the signatures RMF counts in SMF 70-2's
R702DQGC / R702DQVC) types it: ``ML-DSA-65:sign=0.9`` (ms per operation), optionally with its
standard uncertainty, ``ML-DSA-65:sign=0.9+-0.05``.  :func:`qs_measured` turns it into the family's
factor, :math:`f = t_{measured} / t_{assumed}(f = 1)`, with standard error
:math:`\\sigma_t / t_{assumed}(f = 1)`, for :func:`~cryptoplan.model.calibration.calibrate.calibrate`'s
``measured`` parameters: set, not fitted, and drawn by ``--bands`` from the site's uncertainty
instead of the assumption's band.  The other operations of the family scale with it (the
software ratios between them stand).
"""

from __future__ import annotations

import math
import re

from ..domains import Domain
from ..errors import InputError
from ..params import normalize_choice, param
from ..zos.quantum_safe import QS_ALGORITHMS, QS_FACTORS, QS_OPERATIONS, qs_op_ms

__all__ = ["QS_TIME", "DEFAULT_RTOL", "parse_qs_time", "qs_measured"]

#: A typed time per operation (ms): above nothing, at most a minute (an engineering limit far past
#: any card operation, which catches a time typed in µs as ms).
QS_TIME = Domain("ms", 0.0, 60_000.0, lo_open=True, unit="ms")

#: The standard uncertainty of a typed time given without one: 10% of it (RMF's EXEC TIME is a mean
#: over an interval; a planner who knows better says so with ``+-``).
DEFAULT_RTOL = 0.1

_FORM = re.compile(r"^\s*([A-Za-z0-9_-]+)\s*:\s*([A-Za-z_]+)\s*=\s*([^+]+?)\s*(?:\+-\s*(.+?))?\s*$")


def parse_qs_time(text: str) -> tuple:
    """``"ML-DSA-65:sign=0.9+-0.05"`` as ``(algorithm, operation, ms, sd_ms)`` (sd 10% where not given).

    Raises
    ------
    InputError
        Naming the text and the form it takes, an unknown algorithm or operation, or a time out
        of :data:`QS_TIME`'s range.
    """
    m = _FORM.match(str(text))
    if not m:
        raise InputError(f"a quantum-safe time is ALGORITHM:OPERATION=MS or ALGORITHM:OPERATION=MS+-SD, e.g. "
                         f"ML-DSA-65:sign=0.9 (got {text!r})")
    alg = normalize_choice("algorithm", m.group(1), QS_ALGORITHMS)
    op = normalize_choice(f"operation (of {alg})", m.group(2), QS_OPERATIONS[alg])
    try:
        ms = float(m.group(3))
        sd = float(m.group(4)) if m.group(4) is not None else None
    except ValueError:
        raise InputError(f"a quantum-safe time's MS and SD are numbers of milliseconds (got {text!r})") from None
    ms = float(QS_TIME.check(ms, f"{alg} {op} time", scalar=True))
    if sd is None:
        sd = DEFAULT_RTOL * ms
    elif not (math.isfinite(sd) and 0.0 < sd < ms):
        raise InputError(f"{alg} {op}: the standard uncertainty must be above 0 and below the time "
                         f"({ms:g} ms; got {sd:g})")
    return alg, op, ms, sd


def qs_measured(texts) -> dict:
    """The family factors the typed times measure: name -> ``{"value", "stderr", "note"}``.

    Parameters
    ----------
    texts : iterable of str
        :func:`parse_qs_time`'s form, one per family at most (the factor is the family's).

    Raises
    ------
    InputError
        A text :func:`parse_qs_time` refuses, or two times of one family.
    """
    out: dict = {}
    given: dict = {}
    for text in texts:
        alg, op, ms, sd = parse_qs_time(text)
        name = QS_FACTORS[alg.rsplit("-", 1)[0]]
        if name in out:
            raise InputError(f"two measured times of one family ({given[name]!r} and {text!r}): {name} is one "
                             "factor for the whole family; give the one you trust")
        given[name] = text
        assumed = qs_op_ms(alg, op) / param(name)       # the assumption's time, at factor 1
        out[name] = {"value": ms / assumed, "stderr": sd / assumed,
                     "note": f"{alg} {op} {ms:g} ms +- {sd:g} ms typed, against the assumed {assumed:.4g} ms"}
    return out
