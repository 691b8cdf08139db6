"""The fit's targets: each published figure paired with the model's prediction of it.

A :class:`Target` reads its value from arrays a *source* computes once per parameter set:
seed 001's AMS scenarios and the z14 report's message costs (:class:`_AmsGrid`), the channel
CPU costs of seeds 000 and 002 and the 32 KB reference (:class:`_TlsTable`, one matrix
product, and the ratios, changes and ranges the figures state of them, :class:`_TlsTerms`, a
dozen array operations for all), and seed 003's handshake statements (three scalar calls).
:func:`targets` lists them per figures table in force; :func:`predictions` evaluates each
source once for all its targets, :class:`Stacker` stacks them as
the fit scores them, :func:`predict_all` under given parameter values.

Parameters may be given as arrays of *k* values (:func:`cryptoplan.model.params.using_values`,
the fit's finite differences): a prediction is then an array of *k* values, one per set.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from types import SimpleNamespace
from typing import Callable, NamedTuple

import numpy as np

from ..errors import InputError
from ..figures import figure, table_in_force
from ..params import binding, param, using_values
from ..zos import ams, tls
from .free import Z196_ANCHOR, Z196_OF

__all__ = ["NOT_FITTED", "scored_targets", "Target", "targets", "scored", "predictions", "Stacker", "predict_all"]


@dataclass(frozen=True)
class Target:
    """A published figure and the model's prediction of it: ``of(source())``.

    ``source`` computes the arrays a group of targets reads (the AMS grid, the TLS cost
    table) under the parameters in force; ``of`` reads this target's value from them.  A
    fit evaluation calls each source once for all its targets (:func:`predictions`).
    When :func:`cryptoplan.model.params.using_values` gives parameters as arrays of *k* values (the
    fit's finite differences), ``of`` returns *k* predictions, one per parameter set.

    ``ends``, for a range figure said of several conditions, are what the fit scores in place
    of ``of`` (:func:`scored`): the highest condition, raised to the range's low end, and the
    lowest, lowered to its high end.  ``of`` itself, the condition farthest from the middle
    of the range, is what a report shows; as a residual it jumps where the farthest
    condition changes side (two conditions straddling the range), and a fit that ends
    there stalls (:func:`cryptoplan.model.calibration.bootstrap.stalled`).  Each end is
    continuous: the high one is 0 unless a condition is above the range, the low one unless
    a condition is below it.
    """

    figure_id: str
    source: Callable[[], object]
    of: Callable[[object], float]
    how: str  # what the prediction computes, for the report
    group: str = "ams"  # the sub-model whose parameters it constrains
    ends: tuple[Callable[[object], float], ...] = ()

    def predict(self):
        """The model's value of the figure under the parameters in force.

        A float; an array of *k* values when the parameters in force are arrays of *k*.
        """
        v = np.asarray(self.of(self.source()), dtype=float)
        return float(v.reshape(-1)[0]) if v.size == 1 else v


# ----------------------------------------------------------------- targets
class _AmsGrid:
    """Seed 001's measured scenarios and the z14 report's message costs, in one vectorized pass.

    The AMS targets ask for throughput and cost of about forty (policy, key,
    size, reuse) scenarios, the RMF example's demands and seven message costs.
    The scenarios are validated once (:class:`cryptoplan.model.zos.ams.AmsWorkload`); each
    parameter set in force (:func:`cryptoplan.model.params.binding`) is evaluated with a
    few array calls, and the targets read from those arrays.  The values are
    those of the scalar calls (tests/test_fit.py compares them).
    """

    _POLICIES = (("integrity", None), ("privacy", None), ("confidentiality", 1), ("confidentiality", 32))
    _MESSAGES = tuple((p, kb, r) for p, r in (("integrity", None), ("privacy", None), ("confidentiality", 32))
                      for kb in (2.0, 4096.0))

    def __init__(self):
        rows = [(p, "RSA", n, kb, r) for p, r in self._POLICIES for n in (1024, 2048, 4096)
                for kb in (2.0, 64.0, 4096.0)]
        rows += [("integrity", "NISTECC", n, kb, None) for n in (192, 224, 521) for kb in (2.0, 64.0, 4096.0)]
        self.index = {r: i for i, r in enumerate(rows)}
        # scenarios down a column, (n, 1): parameters given as arrays of k values (the fit's
        # finite differences) broadcast along the trailing axis, so results are (n, k)
        cols = [[[v] for v in c] for c in zip(*rows)]
        reuse = [[1 if r is None else r] for [r] in cols[4]]
        self.grid = ams.AmsWorkload(cols[0], cols[1], cols[2], cols[3], reuse)
        # seed 001's RMF example (model.ams.RMF_EXAMPLE): a named configuration, one of the grid's
        cfg = ams.RMF_EXAMPLE
        if cfg["recipients"] != 1:
            raise RuntimeError("the RMF example is not one of the fit's scenarios (one recipient each)")
        self.rmf = self.index[(cfg["policy"], cfg["key_type"], cfg["key_size"], float(cfg["message_kb"]), None)]
        self.rmf_cards = (cfg["coprocessors"], cfg["accelerators"])
        self.msg_index = {m: i for i, m in enumerate(self._MESSAGES)}
        pol, kb, r = zip(*self._MESSAGES)
        self.messages = ams.AmsWorkload([[v] for v in pol], "RSA", 2048, [[v] for v in kb],
                                        [[1 if v is None else v] for v in r], platform="z14")
        self.bound = None

    def _refresh(self):
        bound = binding()
        if self.bound is not None and bound[0] is self.bound[0] and bound[1] is self.bound[1]:
            return       # same parameters as the last call of this evaluation
        got = self.grid.closed_loop()
        self.x, self.cost = got["throughput"], got["cost_us"]
        self.cards = got["demands"]
        self.msg = self.messages.message_cost_us()
        # the RMF example at the rate that sends the report's ME requests: CRT rate, utilizations
        # and mean EXEC TIME are predictions.  The quantities of ams.ams_plan, computed here without
        # its overload check: the fit may try parameters under which the example's one accelerator
        # would be saturated.  Its workload is one of the grid's scenarios.
        d = {k: v[self.rmf] for k, v in got["demands"].items() if k != "requests"}
        req = {f: v[self.rmf] for f, v in got["demands"]["requests"].items()}
        cop, acc = self.rmf_cards
        tx = figure("s001_rmf_me2048_rate").target() / req["RSA_ME"]
        self.plan = SimpleNamespace(
            accelerator_crt_rate=tx * req["RSA_CRT"],
            accelerator_utilization=tx * d["accelerator_ms"] / 1000.0 / acc,
            coprocessor_utilization=tx * d["coprocessor_ms"] / 1000.0 / cop,
            accelerator_exec_ms=d["accelerator_ms"] / (req["RSA_ME"] + req["RSA_CRT"]))
        self.bound = bound

    def current(self):
        """The arrays (``x``, ``cost``, ``msg``, ``plan``) under the parameters in force."""
        self._refresh()
        return self


#: Figures the models compute as they compute the fitted ones, scored and reported but left out of
#: the fit: each is a *forced* miss (data/misses.csv proves that no cost linear in size meets it
#: together with the other sizes of its series), and a row one of a series must miss would pull
#: the fit away from the rows it can meet.  :func:`scored_targets` gives them;
#: :func:`cryptoplan.model.calibration.predictions.prediction_table` scores them with the other
#: figures no fit uses.
NOT_FITTED = ("s000_16k_total_cost", "s002_16k_total_cost")


def targets() -> list[Target]:
    """Every figure the crypto and AMS models are fitted to, with how (not :data:`NOT_FITTED`).

    Built once per figures table in force (:func:`cryptoplan.model.figures.table_in_force`): the
    targets keep arrays computed under one parameter set until the parameters change.
    """
    return [t for t in _targets(table_in_force()) if t.figure_id not in NOT_FITTED]


def scored_targets() -> list[Target]:
    """The figures of :data:`NOT_FITTED`, as targets: computed as the fitted ones are, fitted to by none."""
    return [t for t in _targets(table_in_force()) if t.figure_id in NOT_FITTED]


@lru_cache(maxsize=4)
def _targets(table: str) -> tuple[Target, ...]:
    """The targets under the figures table ``table`` (the caller's, in force).

    The AMS targets are built as functions of :class:`_AmsGrid`'s arrays ``g``
    (scenario indices resolved once, here) and evaluated on :meth:`_AmsGrid.current`.
    """
    grid = _AmsGrid()

    def tput(pol, kt, n, kb, reuse=None):
        i = grid.index[(pol, kt, n, float(kb), reuse)]
        return lambda g: g.x[i]

    def cost(pol, kt, n, kb, reuse=None):
        i = grid.index[(pol, kt, n, float(kb), reuse)]
        return lambda g: g.cost[i]

    def msg_us(pol, kb, reuse=None):
        i = grid.msg_index[(pol, float(kb), reuse)]
        return lambda g: g.msg[i]

    def pct(a, b):
        return lambda g: 100.0 * (a(g) / b(g) - 1.0)

    def share(a, b):
        return lambda g: 100.0 * a(g) / b(g)

    def accelerator_share(pol, kt, n, kb, reuse=None):
        i = grid.index[(pol, kt, n, float(kb), reuse)]
        return lambda g: g.cards["accelerator_ms"][i] / (g.cards["accelerator_ms"][i] + g.cards["coprocessor_ms"][i])

    def farthest(fs, value):
        """The prediction farthest from ``value`` in log ratio: a figure that holds over several conditions."""
        def of(g):
            v = np.array([f(g) for f in fs])
            return np.take_along_axis(v, np.abs(np.log(v / value)).argmax(axis=0)[None], axis=0)[0]
        return of

    def rmf(attr, scale=1.0):
        return lambda g: scale * getattr(g.plan, attr)

    def of_param(name):
        return lambda g: param(name)

    def largest(fs):
        return lambda g: np.maximum.reduce([f(g) for f in fs])

    def smallest(fs):
        return lambda g: np.minimum.reduce([f(g) for f in fs])

    rsa_policies = [("integrity", None), ("privacy", None), ("confidentiality", 1)]

    def worst_cost_change(kb, n_from, n_to):
        return largest([pct(cost(p, "RSA", n_to, kb, r), cost(p, "RSA", n_from, kb, r)) for p, r in rsa_policies])

    def base_plus_two(m):
        return lambda g: param("mq_base_us") + 2 * m(g)

    spec = [
        ("s001_rmf_cex8c_exec_ms", of_param("cop_rsa_ms_2048"), "coprocessor sign time, RSA 2048"),
        ("s001_rmf_me2048_exec_ms", of_param("acc_me_ms_2048"), "ME time, RSA 2048"),
        ("s001_rmf_crt2048_exec_ms", of_param("acc_crt_ms_2048"), "CRT time, RSA 2048"),
        ("s001_rmf_cex8a_exec_ms", rmf("accelerator_exec_ms"),
         "mean EXEC TIME of the accelerator's request mix, RMF example configuration"),
        ("s001_rmf_crt2048_rate", rmf("accelerator_crt_rate"),
         "CRT requests/s, RMF example configuration at the report's ME rate"),
        ("s001_rmf_cex8a_util", rmf("accelerator_utilization", 100.0),
         "accelerator summary utilization, RMF example configuration"),
        ("s001_rmf_cex8c_util", rmf("coprocessor_utilization", 100.0),
         "coprocessor utilization per card, RMF example configuration"),
        ("s001_privacy_accelerator_share",
         farthest([accelerator_share("privacy", "RSA", n, 2) for n in (1024, 2048, 4096)], 0.5),
         "accelerator's share of the EXEC TIME per transaction, Privacy, farthest from a half over 1024-4096 bits"),
        ("s001_2k_integrity_tput_1024", tput("integrity", "RSA", 1024, 2), "X, 1 requester"),
        ("s001_2k_integrity_tput_4096", tput("integrity", "RSA", 4096, 2), "X, 1 requester"),
        ("s001_2k_integrity_tput_change",
         pct(tput("integrity", "RSA", 4096, 2), tput("integrity", "RSA", 1024, 2)), "X(4096)/X(1024)"),
        ("s001_2k_conf32_tput_4096",
         share(tput("confidentiality", "RSA", 4096, 2, 32), tput("confidentiality", "RSA", 1024, 2, 32)),
         "X(4096)/X(1024), reuse 32"),
        ("s001_64k_conf32_tput_4096",
         share(tput("confidentiality", "RSA", 4096, 64, 32), tput("confidentiality", "RSA", 1024, 64, 32)),
         "X(4096)/X(1024), reuse 32"),
        ("s001_4m_tput_keysize",
         smallest([pct(tput(p, "RSA", n, 4096, r), tput(p, "RSA", 1024, 4096, r))
                   for p, r in rsa_policies for n in (2048, 4096)]),
         "largest drop over the policies and 2048/4096 vs 1024, 4MB"),
        ("s001_2k_tput_rsa1024_vs_ecc192",
         pct(tput("integrity", "RSA", 1024, 2), tput("integrity", "NISTECC", 192, 2)), "2KB"),
        ("s001_tput_ecc521_vs_rsa4096",
         largest([pct(tput("integrity", "NISTECC", 521, kb), tput("integrity", "RSA", 4096, kb))
                  for kb in (2, 64, 4096)]), "max over 2KB, 64KB, 4MB"),
        ("s001_2k_cost_1024_to_2048", worst_cost_change(2, 1024, 2048), "max over policies"),
        ("s001_2k_cost_2048_to_4096", worst_cost_change(2, 2048, 4096), "max over policies"),
        ("s001_64k_cost_1024_to_2048", worst_cost_change(64, 1024, 2048), "max over policies"),
        ("s001_64k_cost_2048_to_4096", worst_cost_change(64, 2048, 4096), "max over policies"),
        ("s001_4m_cost_keysize", largest([worst_cost_change(4096, 1024, n) for n in (2048, 4096)]),
         "max over policies and 2048/4096 vs 1024"),
        ("ref_ams_txn_cost_2k_confidentiality_z14", base_plus_two(msg_us("confidentiality", 2, 32)),
         "base + 2 messages"),
    ]
    for pol, reuse in (("integrity", None), ("privacy", None), ("confidentiality", 32)):
        for kb, tag in ((2, "2k"), (4096, "4m")):
            spec.append((f"ref_ams_cost_{tag}_{pol}_z14", msg_us(pol, kb, reuse),
                         "asymmetric ops x cost + per-KB hashing/encryption"))
    t = [Target(fid, grid.current, fn, how) for fid, fn, how in spec]
    return tuple(t + _tls_targets() + _handshake_targets())


def _handshake_targets() -> list[Target]:
    """Seed 003's three statements on the key exchange and the card that signs, which
    :func:`cryptoplan.model.zos.tls.handshake_cpu_factor` composes from two parameters: DHE vs ECDHE
    ("up to 97% reduction"), and the coprocessor's savings over accelerators for ECDHE (98%)
    and for DHE (53%) from the same note.  Read directly, the first two put the third at 59.5%."""
    def change(a: dict, b: dict):
        return lambda _: 100.0 * (tls.handshake_cpu_factor(**a) / tls.handshake_cpu_factor(**b) - 1.0)

    acc = {"card_mode": "accelerator"}
    spec = [
        ("s003_ecdhe_vs_dhe_cost", change({}, {"key_exchange": "DHE"}), "ECDHE vs DHE, full handshakes"),
        ("s003_coproc_vs_accel_ecdhe_cost_note", change({}, acc), "coprocessor vs accelerators, ECDHE"),
        ("s003_coproc_vs_accel_dhe_cost_note", change({"key_exchange": "DHE"}, {"key_exchange": "DHE", **acc}),
         "coprocessor vs accelerators, DHE"),
    ]
    return [Target(fid, _nothing, fn, how, group="handshake") for fid, fn, how in spec]


def _nothing() -> None:
    """The handshake targets' source: they call the model function itself (three scalar calls)."""
    return None


def _extreme(values, fid):
    """The value farthest from the middle of a range figure (inside iff all are)."""
    v = np.asarray(values, dtype=float)          # (conditions, ...)
    far = np.argmax(np.abs(v - figure(fid).target()), axis=0)
    return np.take_along_axis(v, np.expand_dims(far, 0), axis=0)[0]


def _ends(fs, lo: float, hi: float) -> tuple[Callable, Callable]:
    r"""The two values the fit scores for a range :math:`[a, b]` = [``lo``, ``hi``] said of the
    conditions ``fs`` (in the figure's unit).

    The highest condition, at least the range's low end, and the lowest, at most its high
    end: :math:`\max(\max_i v_i, a)` and :math:`\min(\min_i v_i, b)`.  Both are inside the
    range iff every condition is; the first leaves it only upwards, the second only
    downwards, so each scores one side (see :class:`Target`).
    """

    def high(v):
        return np.maximum(np.maximum.reduce([f(v) for f in fs]), lo)

    def low(v):
        return np.minimum(np.minimum.reduce([f(v) for f in fs]), hi)
    return high, low


def scored(tlist) -> list[Target]:
    """The terms the fit scores: each target, or its two :attr:`Target.ends` in its place.

    Parameters
    ----------
    tlist : iterable of Target

    Returns
    -------
    list of Target
        In order; a target with ends becomes two targets of the same figure and source whose
        ``of`` is the high end, then the low end.
    """
    out = []
    for t in tlist:
        if not t.ends:
            out.append(t)
            continue
        high, low = t.ends
        out.append(Target(t.figure_id, t.source, high, t.how + " (highest condition)", t.group))
        out.append(Target(t.figure_id, t.source, low, t.how + " (lowest condition)", t.group))
    return out


class _TlsTable:
    """The channel CPU costs the TLS targets ask for, as one matrix product per parameter set.

    :func:`cryptoplan.model.zos.tls.tls_cost_us` is, for a given mode, cipher, size, address space and
    platform, linear in the TLS parameters other than the z14/z15 ratio ``g``, which
    multiplies it on z14, plus a renegotiation cost that depends on published figures only:

    .. math:: c_k(\\theta) = g_k\\,(A\\theta)_k + R_k .

    Each condition's row of :math:`A` is taken once from the model itself (the model at the
    unit vectors); the values are recomputed only when the parameters in force change
    (:func:`cryptoplan.model.params.binding`), so an evaluation of the fit costs one product instead of
    sixty scalar model calls.  tests/test_fit.py compares it with the scalar calls.
    """

    def __init__(self, theta=None):
        self.linear = tls.CHANNEL_COST_PARAMS
        # what each linear parameter is under the parameters in force: its own name, another
        # parameter's (the z196 set), or a constant (the z196 anchor 1, an unused cipher 0)
        self.theta = tuple(theta) if theta is not None else self.linear
        self.index, self.rows, self.reneg, self.z14 = {}, [], [], []
        self.arrays = None          # (A, R, z14) as arrays: made on first use after a registration
        self.bound, self.values = None, None

    def _register(self, k) -> int:
        mode, cipher, kb, space, plat, rk = k
        # the model at every unit vector at once: parameter j is row j of the identity
        unit = np.eye(len(self.linear))
        with using_values({**dict(zip(self.linear, unit)), "tls_z14_vs_z15": 1.0}):
            parts = tls.tls_cost_parts_us(mode, cipher, kb, "z15")
        row = list(np.broadcast_to(parts["MSTR"] + parts["CHIN"] + parts["TCPIP"] if space == "total"
                                   else parts[space], (len(self.linear),)))
        reneg = (float(tls.renegotiation_cost_us(cipher, kb, rk, plat))
                 if mode == "SSLCIPH" and space in ("total", "CHIN") else 0.0)
        self.index[k] = len(self.rows)
        self.rows.append(row)
        self.reneg.append(reneg)
        self.z14.append(plat == "z14")
        self.arrays, self.bound = None, None
        return self.index[k]

    def at(self, mode, cipher, kb, space=None, platform="z15", sslrkeyc=0) -> int:
        """Index of a condition's cost in :meth:`current` (registered on first use)."""
        k = (mode, cipher, float(kb), "total" if space is None else space, platform, sslrkeyc)
        i = self.index.get(k)
        return self._register(k) if i is None else i

    def current(self) -> np.ndarray:
        """Every registered condition's cost (µs) under the parameters in force.

        Shape (conditions,), or (conditions, k) when the parameters are arrays of k sets.
        """
        bound = binding()
        if self.bound is None or bound[0] is not self.bound[0] or bound[1] is not self.bound[1]:
            if self.arrays is None:
                self.arrays = (np.asarray(self.rows), np.asarray(self.reneg), np.asarray(self.z14))
            rows, reneg, z14 = self.arrays
            theta = _stacked([param(n) if isinstance(n, str) else float(n) for n in self.theta])
            g14 = param("tls_z14_vs_z15")
            z14 = np.reshape(z14, (-1,) + (1,) * (theta.ndim - 1))
            reneg = np.reshape(reneg, z14.shape)
            self.values = np.where(z14, g14, 1.0) * (rows @ theta) + reneg
            self.bound = bound
        return self.values

    def cost(self, mode, cipher, kb, space=None, platform="z15", sslrkeyc=0) -> float:
        """One condition's cost (µs) under the parameters in force."""
        i = self.at(mode, cipher, kb, space, platform, sslrkeyc)
        return self.current()[i]


class _TlsValues(NamedTuple):
    """What :meth:`_TlsTerms.current` gives under one parameter set (or *k*, along a last axis)."""

    terms: np.ndarray       #: each term, in the order registered: (terms,) or (terms, k)
    columns: np.ndarray     #: each column, in the order registered: (columns,) or (columns, k)


@dataclass(frozen=True)
class _Column:
    """A TLS target's value (its ``of``, or one of its ``ends``): column ``index`` of :class:`_TlsTerms`."""

    index: int

    def __call__(self, values: _TlsValues):
        return values.columns[self.index]


@dataclass(frozen=True)
class _Farthest:
    """A range figure's condition farthest from its middle (:func:`_extreme`), the conditions being
    the terms ``start:stop`` of :class:`_TlsTerms`: what a report shows of a range target."""

    start: int
    stop: int
    figure_id: str

    def __call__(self, values: _TlsValues):
        return _extreme(values.terms[self.start:self.stop], self.figure_id)


class _TlsTerms:
    """The TLS targets' values under the parameters in force, all of them in a dozen array operations
    on one :class:`_TlsTable`'s costs :math:`v`.

    A *term* is one quantity of the costs, :math:`s\\,(v_a / d - o)`, the divisor :math:`d` another
    cost :math:`v_b` or a constant: a cost (:math:`v_a`), a cost in ms (:math:`v_a / 1000`), a ratio
    (:math:`v_a / v_b`), a change in percent (:math:`100\\,(v_a / v_b - 1)`).  The terms come in
    *groups* (a target's conditions), and a target reads a *column*: the lowest term of a group, at
    most a cap, or its highest, at least a floor.  A group of one term is the term; the lowest of
    several conditions is ``np.minimum.reduce`` of them; a range's ends are :func:`_ends`'.  Each
    group's terms are contiguous, so the lowest and the highest of every group are one ``reduceat``
    each; a range's farthest condition (:class:`_Farthest`) is read from the terms when asked.

    The arithmetic is that of the definitions, element by element (a division by 1, a subtraction of
    0, a product by 1 and the minimum with infinity leave a number as it is, and the lowest and the
    highest of a group are taken over its terms in the order the definitions took them), so the
    values are theirs to the bit; tests/test_fit.py
    compares them.  As :class:`_TlsTable`'s, they are recomputed only when the parameters in force
    change (:func:`cryptoplan.model.params.binding`).
    """

    def __init__(self, table: _TlsTable):
        self.table = table
        self.terms: list[tuple] = []        # (a, b, divisor, scale, offset); b None: divide by divisor
        self.starts: list[int] = []         # each group's first term
        self.columns: list[tuple] = []      # (group, "low" or "high", cap or floor)
        self.arrays: tuple | None = None    # the above as index and constant arrays (_arrays)
        self.bound: tuple | None = None
        self.values: _TlsValues | None = None

    @staticmethod
    def term(a: int, b: int | None = None, *, divisor: float = 1.0, scale: float = 1.0,
             offset: float = 0.0) -> tuple:
        """The term :math:`s\\,(v_a / v_b - o)` of the table's conditions ``a`` and ``b``
        (:meth:`_TlsTable.at`), or :math:`s\\,(v_a / d - o)` without ``b``, for :meth:`group`."""
        return (a, b, float(divisor), float(scale), float(offset))

    def group(self, terms) -> int:
        """Register a group of terms (:meth:`term`); its number, for :meth:`lowest`, :meth:`highest`
        and :meth:`farthest`."""
        terms = list(terms)
        if not terms:               # reduceat would give a neighbour's value for an empty group
            raise InputError("a group of TLS terms needs at least one term")
        self.starts.append(len(self.terms))
        self.terms.extend(terms)
        self.arrays, self.bound = None, None
        return len(self.starts) - 1

    def _span(self, g: int) -> tuple[int, int]:
        return self.starts[g], self.starts[g + 1] if g + 1 < len(self.starts) else len(self.terms)

    def _column(self, g: int, side: str, limit: float) -> _Column:
        self.columns.append((g, side, float(limit)))
        self.arrays, self.bound = None, None
        return _Column(len(self.columns) - 1)

    def lowest(self, g: int, cap: float = np.inf) -> _Column:
        """The column of group ``g``'s lowest term, at most ``cap``."""
        return self._column(g, "low", cap)

    def highest(self, g: int, floor: float = -np.inf) -> _Column:
        """The column of group ``g``'s highest term, at least ``floor``."""
        return self._column(g, "high", floor)

    def only(self, term: tuple) -> _Column:
        """The column of one term (a group of one)."""
        return self.lowest(self.group([term]))

    def farthest(self, g: int, figure_id: str) -> _Farthest:
        """Group ``g``'s term farthest from the middle of range figure ``figure_id`` (:func:`_extreme`)."""
        return _Farthest(*self._span(g), figure_id)

    def _arrays(self) -> tuple:
        """The terms and columns as arrays: made once after the last registration."""
        a, b, divisor, scale, offset = zip(*self.terms)
        by_side = {side: [(i, g, limit) for i, (g, s, limit) in enumerate(self.columns) if s == side]
                   for side in ("low", "high")}
        low, high = by_side["low"], by_side["high"]
        # the columns come out lows first, then highs: ``pick`` puts them back in registration order
        pick = np.argsort([i for i, _, _ in low + high], kind="stable")
        return (np.array(a), np.array([0 if j is None else j for j in b]), np.array([j is not None for j in b]),
                np.array(divisor), np.array(scale), np.array(offset), np.array(self.starts),
                np.array([g for _, g, _ in low], dtype=int), np.array([x for _, _, x in low], dtype=float),
                np.array([g for _, g, _ in high], dtype=int), np.array([x for _, _, x in high], dtype=float), pick)

    def current(self) -> _TlsValues:
        """Every term and column under the parameters in force (:class:`_TlsValues`)."""
        bound = binding()
        if self.bound is None or bound[0] is not self.bound[0] or bound[1] is not self.bound[1]:
            if self.arrays is None:
                self.arrays = self._arrays()
            self.values = _tls_values(self.table.current(), *self.arrays)
            self.bound = bound
        assert self.values is not None          # made above under this binding
        return self.values


def _tls_values(v, a, b, has_b, divisor, scale, offset, starts, low_g, cap, high_g, floor, pick) -> _TlsValues:
    """:class:`_TlsTerms`'s terms and columns of the costs ``v`` (conditions,) or (conditions, k).

    Parameters
    ----------
    v : ndarray
        The table's costs (:meth:`_TlsTable.current`).
    a, b, has_b, divisor, scale, offset : ndarray, shape (terms,)
        Each term :math:`s\\,(v_a / d - o)`: :math:`d = v_b` where ``has_b``, else ``divisor``.
    starts : ndarray of int
        Each group's first term (the groups tile the terms, in order).
    low_g, cap, high_g, floor : ndarray
        The lowest-term columns' groups and caps, the highest-term columns' groups and floors.
    pick : ndarray of int
        The columns' order among the lows then the highs.

    Returns
    -------
    _TlsValues
        ``terms`` (terms,) or (terms, k), each :math:`s\\,(v_a / d - o)`; ``columns`` (columns,) or
        (columns, k), in the order the columns were registered.
    """
    col = (slice(None),) + (None,) * (np.ndim(v) - 1)        # a constant per term, along the sets
    terms = scale[col] * (v[a] / np.where(has_b[col], v[b], divisor[col]) - offset[col])
    lows = np.minimum(np.minimum.reduceat(terms, starts, axis=0)[low_g], cap[col])
    highs = np.maximum(np.maximum.reduceat(terms, starts, axis=0)[high_g], floor[col])
    return _TlsValues(terms, np.concatenate([lows, highs])[pick])


def _stacked(values) -> np.ndarray:
    """``np.stack(np.broadcast_arrays(*values))`` of floats and float arrays, written row by row
    into one array (the same array, in a third of the time for the table's dozen parameters)."""
    out = np.empty((len(values),) + np.broadcast_shapes(*[np.shape(v) for v in values]))
    for i, v in enumerate(values):
        out[i] = v
    return out


def _tls_targets() -> list[Target]:
    """The TLS figures' targets.  Each reads a column of a :class:`_TlsTerms` of the table's
    conditions (indices resolved once, here), evaluated on :meth:`_TlsTerms.current`."""
    table = _TlsTable()
    # seed 000's z196: the same cost model with the descriptive set (free.Z196_OF, in units of the
    # anchor, the unprotected CHIN cost per transaction)
    z196 = _TlsTable([("z196_" + n if n in Z196_OF else 1.0 if n == Z196_ANCHOR else 0.0) for n in table.linear])
    terms, terms196 = _TlsTerms(table), _TlsTerms(z196)
    source, source196 = terms.current, terms196.current        # one bound method each: one source

    def cost(mode, cipher, kb, space=None, platform="z15", sslrkeyc=0, divisor=1.0):
        return terms.term(table.at(mode, cipher, kb, space, platform, sslrkeyc), divisor=divisor)

    def change(pair, kb, space=None, platform="z15", tab=table):
        ssl, at = pair
        a, b = tab.at("ATTLS", at, kb, space, platform), tab.at("SSLCIPH", ssl, kb, space, platform)
        return _TlsTerms.term(a, b, scale=100.0, offset=1.0)

    def ratio(pair, kb, space, platform="z15", tab=table):
        ssl, at = pair
        a, b = tab.at("ATTLS", at, kb, space, platform), tab.at("SSLCIPH", ssl, kb, space, platform)
        return _TlsTerms.term(a, b)

    def lowest(ts):
        return terms.lowest(terms.group(ts))

    def add_range(fid, ts, how):
        """A figure said of several conditions: scored by its ends while it is a range with two
        (a figures table given to ``cryptoplan fit --figures`` may make it another kind)."""
        fig = figure(fid)
        g = terms.group(ts)
        ends = ((terms.highest(g, fig.low), terms.lowest(g, fig.high))
                if fig.kind == "range" and fig.low is not None and fig.high is not None else ())
        add(fid, terms.farthest(g, fid), how, ends)

    # seed 002's cipher table: (MQ SSLCIPH cipher, AT-TLS cipher) per type
    tls12 = ("TLS_RSA_WITH_AES_256_CBC_SHA256", "TLS_RSA_WITH_AES_256_CBC_SHA")
    tls13hw = ("TLS_AES_256_GCM_SHA384",) * 2
    tls13sw = ("TLS_CHACHA20_POLY1305_SHA256",) * 2
    pairs = (tls12, tls13hw, tls13sw)
    # seed 000 names NULL_SHA and TLS_RSA_WITH_AES_256_CBC_SHA, for both modes
    aes0 = ("TLS_RSA_WITH_AES_256_CBC_SHA",) * 2
    null0 = ("NULL_SHA",) * 2
    t = []

    def add(fid, of, how, ends=()):
        t.append(Target(fid, source, of, how, group="tls", ends=ends))

    def add0(fid, term, how):              # seed 000: the descriptive z196 set, its own fit
        t.append(Target(fid, source196, terms196.only(term), how, group="tls_z196"))

    for tag, kb in (("2k", 2.0), ("16k", 16.0), ("64k", 64.0), ("1m", 1024.0)):
        add0(f"s000_{tag}_total_cost", change(aes0, kb, tab=z196), "AT-TLS vs SSLCIPH, AES-256-CBC (z196 set)")
        add0(f"s000_{tag}_chin_cost", change(aes0, kb, "CHIN", tab=z196), "CHIN, AES-256-CBC (z196 set)")
        if tag == "2k":
            add0("s000_2k_tcpip_cost", ratio(aes0, 2.0, "TCPIP", tab=z196), "TCPIP ratio, AES-256-CBC (z196 set)")
        else:
            add0(f"s000_{tag}_tcpip_cost_nullsha", ratio(null0, kb, "TCPIP", tab=z196),
                 "TCPIP ratio, NULL_SHA (z196 set)")
            add0(f"s000_{tag}_tcpip_cost_aes256", ratio(aes0, kb, "TCPIP", tab=z196), "TCPIP ratio, AES (z196 set)")
    sizes = (("2k", 2.0), ("16k", 16.0), ("32k", 32.0), ("64k", 64.0), ("1m", 1024.0))
    for tag, kb in sizes:
        add(f"s002_{tag}_total_cost", lowest([change(p, kb) for p in pairs]),
            "largest reduction over the three cipher types")
        add(f"s002_{tag}_chin_cost", lowest([change(p, kb, "CHIN") for p in pairs]),
            "largest CHIN reduction over the three cipher types")
        if tag != "2k":
            for space in ("chin", "tcpip"):
                add(f"s002_{tag}_chacha_attls_{space}_ms",
                    terms.only(cost("ATTLS", tls13sw[1], kb, space.upper(), divisor=1000.0)),
                    "AT-TLS CHACHA20 CPU in that address space")
    add_range("s002_2k_tcpip_cost_hw", [ratio(tls12, 2.0, "TCPIP"), ratio(tls13hw, 2.0, "TCPIP")],
              "TCPIP ratio, both hardware ciphers")
    add("s002_2k_tcpip_cost_chacha", terms.only(ratio(tls13sw, 2.0, "TCPIP")), "TCPIP ratio, CHACHA20")
    for fid, pair in (("s002_cost_range_tls12hw", tls12), ("s002_cost_range_tls13hw", tls13hw),
                      ("s002_cost_range_tls13sw", tls13sw)):
        add_range(fid, [change(pair, kb) for _, kb in sizes], "every size inside the published range")
    ciphers32 = ("TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA384", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA384",
                 "TLS_RSA_WITH_AES_128_GCM_SHA256", "TLS_RSA_WITH_AES_256_CBC_SHA256")
    add_range("ref_32k_no_reneg_range_us", [cost("SSLCIPH", c, 32.0, platform=p) for c in ciphers32 for p in ("z14", "z15")],
              "SSLCIPH total at 32KB, four ciphers on z14 and z15, no renegotiation")
    rkeyc = figure("ref_32k_cfg_sslrkeyc_mb").target() * 1024 * 1024
    for stem, c in (("ecdhe_ecdsa", ciphers32[0]), ("ecdhe_rsa", ciphers32[1]),
                    ("rsa_aes128gcm", ciphers32[2]), ("rsa_aes256cbc", ciphers32[3])):
        for plat in ("z14", "z15"):
            add(f"ref_32k_{stem}_{plat}_us", terms.only(cost("SSLCIPH", c, 32.0, sslrkeyc=rkeyc, platform=plat)),
                "SSLCIPH total at 32KB with SSLRKEYC 1MB renegotiation")
    return t


def predict_all(values: dict, tlist=None) -> dict:
    """Model prediction of every target under the given parameter values.

    Parameters
    ----------
    values : dict
        Parameter name -> value (:func:`cryptoplan.model.params.using_values`).
    tlist : list of Target, optional
        The targets to predict; default every one (:func:`targets`).

    Returns
    -------
    dict
        Figure id -> the model's value, a float in the figure's unit.
    """
    out = {}
    with using_values(values):
        for t in tlist or targets():
            out[t.figure_id] = float(t.predict())
    return out


def predictions(tlist):
    """Each target's prediction under the parameters in force, each source evaluated once.

    Parameters
    ----------
    tlist : iterable of Target

    Yields
    ------
    numpy.ndarray
        One per target, in order, in the figure's unit: a 0-d array, or *k* values when the
        parameters in force are arrays of *k*.
    """
    arrays = {}
    for t in tlist:
        if t.source not in arrays:
            arrays[t.source] = t.source()
        yield np.asarray(t.of(arrays[t.source]), dtype=float)


class Stacker:
    """The predictions of a fixed list of targets under the parameters in force, stacked along a
    last axis, as a callable: ``np.stack(np.broadcast_arrays(*predictions(tlist)), axis=-1)`` to
    the bit, shape (targets,) or (k, targets) in C order, made for a caller that evaluates the same
    targets many times (the fit's residuals).

    When every target reads a column of one source (the TLS targets of one table:
    :class:`_TlsTerms`), the predictions are one ``take`` of those columns, their indices found
    once here, instead of a Python call per target; otherwise :func:`predictions`, stacked.
    """

    __slots__ = ("tlist", "source", "columns")

    def __init__(self, tlist):
        self.tlist = list(tlist)
        first = self.tlist[0].source if self.tlist else None
        one = first is not None and all(isinstance(t.of, _Column) and t.source == first for t in self.tlist)
        self.source = first if one else None
        self.columns = np.array([t.of.index for t in self.tlist], dtype=int) if one else None

    def __call__(self) -> np.ndarray:
        """The predictions under the parameters in force: (targets,) or (k, targets), C order."""
        if self.source is None:
            return np.stack(np.broadcast_arrays(*predictions(self.tlist)), axis=-1)
        got = self.source().columns[self.columns]                    # (targets, ...)
        return np.ascontiguousarray(got.transpose(tuple(range(1, got.ndim)) + (0,)))
