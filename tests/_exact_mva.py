"""Exact multi-class MVA: the reference for model.mva.mva_schweitzer (tests only)."""

from __future__ import annotations

import itertools

import numpy as np


def exact_multiclass(pops, demands, think):
    """Exact multi-class MVA (Reiser and Lavenberg 1980) over every population vector.

    The reference for the approximation: single-server FCFS stations with a
    class-independent service time per visit are product-form, and this
    recursion is exact for them.  ``demands`` is (C, K).
    """
    n_cls, k = demands.shape
    q = {}
    x = np.zeros(n_cls)
    for n in itertools.product(*[range(p + 1) for p in pops]):
        if sum(n) == 0:
            q[n] = np.zeros(k)
            continue
        r = np.zeros((n_cls, k))
        x = np.zeros(n_cls)
        for c in range(n_cls):
            if n[c]:
                less = list(n)
                less[c] -= 1
                r[c] = demands[c] * (1.0 + q[tuple(less)])
                x[c] = n[c] / (think[c] + r[c].sum())
        q[n] = (x[:, None] * r).sum(axis=0)
    return x


def dense_demands(station, demand, k):
    """(C, K) demand matrix from per-visit station indices and demands."""
    out = np.zeros((station.shape[0], k))
    for c in range(station.shape[0]):
        np.add.at(out[c], station[c], demand[c])
    return out
