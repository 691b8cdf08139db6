"""The closed network of an AMS workload: station demands, servers and the mean-value
analysis of N requesters.

Part of :mod:`cryptoplan.model.zos.ams` (the package documents the model).
"""

from __future__ import annotations

import numpy as np

from ..._validate import UnstableQueueError
from ...params import normalize_choice, param
from ...queueing.mva import mva_throughput
from ._cpu import cpu_parts
from ._operations import card_ms_per_txn, requests_per_txn, times_per_request
from ._scenario import AMS_ADDRESS_SPACES, choice_codes, FUNCTIONS, Scenario

__all__ = ["station_demands", "demand_table", "as_scalars", "closed_stations", "stations_to",
           "closed_throughput", "server_counts", "space_codes"]

def station_demands(w: Scenario, processors, cop_other, acc_other) -> dict:
    """Station demands (ms per transaction) and what the open and closed answers need."""
    req, t = requests_per_txn(w), times_per_request(w)
    parts = cpu_parts(w)
    cpu_ms = (parts["application"] + parts["AMSM"]) / 1000.0
    background = parts["mstr_per_s"] / 1e6        # processors kept busy by MSTR administration
    return {"req": req, "t": t, "cpu_us": parts, "cpu_ms": cpu_ms, "background": background,
            "cop_ms": card_ms_per_txn(req, t, "coprocessor"), "acc_ms": card_ms_per_txn(req, t, "accelerator"),
            "path_ms": param("ams_fixed_ms") + req.sum(axis=0) * param("crypto_call_ms"),
            "processors": processors, "cop_other": cop_other, "acc_other": acc_other}


def demand_table(d) -> dict:
    """The public view (:func:`ams_demands`) of :func:`station_demands`' dict."""
    return {"path_ms": d["path_ms"], "cpu_ms": d["cpu_ms"], "coprocessor_ms": d["cop_ms"],
            "accelerator_ms": d["acc_ms"], "mstr_us_per_s": d["cpu_us"]["mstr_per_s"],
            "requests": {f: d["req"][i] for i, f in enumerate(FUNCTIONS)}}


def as_scalars(obj):
    """``obj`` (an array, or a dict of them, nested) with 0-d arrays as Python scalars."""
    if isinstance(obj, dict):
        return {k: as_scalars(v) for k, v in obj.items()}
    a = np.asarray(obj)
    return float(a) if a.ndim == 0 and a.dtype.kind == "f" else (a.item() if a.ndim == 0 else a)


def closed_stations(d):
    """(think ms, demands (3, ...), servers (3, ...)) of the closed network, capacity-adjusted."""
    p = d["processors"]
    if np.any(d["background"] >= p):
        raise UnstableQueueError("general processors: MQ MSTR administration alone needs "
                                 f"{float(np.max(d['background'])):.2f} processors; give more processors")
    cpu = d["cpu_ms"] / (1.0 - d["background"] / p)
    cop = d["cop_ms"] / (1.0 - d["cop_other"])
    acc = d["acc_ms"] / (1.0 - d["acc_other"])
    return d["path_ms"], np.stack(np.broadcast_arrays(cpu, cop, acc))


def stations_to(a, shape):
    """Broadcast a (3, *s) per-station array to (3, *shape), aligning the scenario axes on the right."""
    a = np.asarray(a, dtype=float)
    return np.broadcast_to(a.reshape((3,) + (1,) * (len(shape) - (a.ndim - 1)) + a.shape[1:]), (3, *shape))


def closed_throughput(d, n, servers) -> np.ndarray:
    """Throughput (txn/s) of ``n`` requesters: closed form at 1, exact MVA per distinct network above."""
    z, dem = closed_stations(d)
    shape = np.broadcast_shapes(np.shape(z), np.shape(n), dem.shape[1:], servers.shape[1:])
    z, n = np.broadcast_to(z, shape), np.broadcast_to(n, shape)
    dem, servers = stations_to(dem, shape), stations_to(servers, shape)
    x = np.array(1000.0 / (z + dem.sum(axis=0)), dtype=float, ndmin=1).reshape(shape)
    many = n > 1
    if many.any():
        rows = np.column_stack([n[many], z[many], *dem[:, many], *servers[:, many]])
        uniq, inv = np.unique(rows, axis=0, return_inverse=True)
        xs = np.empty(len(uniq))
        for i, row in enumerate(uniq):           # one exact MVA per distinct network
            # exact MVA, stopped once saturated, within its cost budget (model.mva.mva_throughput)
            xs[i] = 1000.0 * mva_throughput(int(row[0]), row[2:5], row[5:8], float(row[1]))
        x = np.array(x, dtype=float)
        x[many] = xs[inv.ravel()]
    return x


def server_counts(processors, coprocessors, accelerators):
    """Servers of the three stations, stacked: shape (3, *broadcast shape)."""
    return np.stack(np.broadcast_arrays(processors, coprocessors, accelerators))


def space_codes(address_space):
    """Codes into :data:`AMS_ADDRESS_SPACES` of ``address_space`` (a name or an array of them), checked."""
    return choice_codes("address_space", address_space,
                        lambda v: normalize_choice("address_space", v, AMS_ADDRESS_SPACES), AMS_ADDRESS_SPACES)
