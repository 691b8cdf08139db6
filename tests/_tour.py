"""A tour of every public model function over its choices, recording which rows of
data/figures.csv the models read (used by tests/test_coverage.py)."""

from __future__ import annotations

import itertools
from contextlib import contextmanager

from cryptoplan import model
import cryptoplan.model.figures as figures_module


@contextmanager
def recording():
    """Record the ids passed to model.figures.figure while the block runs."""
    seen: set[str] = set()
    modules = [m for m in (__import__(f"cryptoplan.model.{n}", fromlist=["_"]) for n in
                           ("figures", "calibration.free", "calibration.targets", "calibration.scoring",
                            "calibration.report", "calibration.fitting", "calibration.crossval",
                            "zos.tls.traffic", "zos.tls.starts", "zos.tls.handshakes", "zos.channel",
                            "zos.ams._scenario",
                            "zos.ams._operations", "zos.ams._cpu", "zos.crypto",
                            "calibration.planning", "params", "domains"))
               if hasattr(m, "figure")]
    originals = {m: m.figure for m in modules}

    def spy(fid, path=None):
        seen.add(fid)
        return originals[figures_module](fid, path)

    for m in modules:
        m.figure = spy
    from cryptoplan.model.calibration import targets
    from cryptoplan.model.zos.ams import _cpu, _operations
    _cpu._factor_table.cache_clear()   # cached per figures table: read them again, seen
    _operations._generation_table.cache_clear()
    targets._targets.cache_clear()    # built once per figures table, likewise
    try:
        yield seen
    finally:
        for m, f in originals.items():
            m.figure = f


def tour() -> set[str]:
    """Ids read by the fit, the figure table and every public planning function."""
    from cryptoplan.model.calibration import fit as F
    from cryptoplan.model.calibration.free import initial
    from cryptoplan.model.zos import tls as T
    from cryptoplan.model.params import CIPHERS, load_params
    with recording() as seen:
        values = {k: v["value"] for k, v in load_params()["parameters"].items()}
        F.derived_parameters()
        for name in F.FREE:  # bounds and starts of the fit (some from range rows)
            initial(name)
        F.figure_table(values)
        model.defaults()
        ciphers = (None, *CIPHERS)
        for mode in ("none", "SSLCIPH", "ATTLS"):
            for c in ciphers:
                for plat in T.START_PLATFORMS:
                    for space in ("total", "CHIN", "TCPIP"):
                        _try(T.channel_start_cost_us, mode, c, space, plat)
                    _try(T.channel_start_rate, mode, c, plat)
                if mode == "SSLCIPH" and c is not None:
                    for card in ("coprocessor", "accelerator"):
                        T.channel_start_card_ms(c, card)
                for plat in T.PLATFORMS:
                    _try(T.tls_cost_us, mode, c, 32.0, None, 1048576 if mode == "SSLCIPH" else 0, plat)
            for space in ("total", "CHIN", "TCPIP"):
                T.channel_stop_cost_us(mode, space)
        for args in itertools.product(T.KEY_EXCHANGES, ("RSA", "ECDSA"), ("TLS1.2", "TLS1.3"), (False, True),
                                      (False, True), (False, True), ("coprocessor", "accelerator")):
            _try(T.handshake_cpu_factor, *args)
            _try(T.handshake_latency_factor, *args)
        for space in ("total", "SSL_server", "TCPIP"):
            T.ocsp_cpu_us(1000.0, space)
        for pol, reuse in (("integrity", None), ("privacy", None), ("confidentiality", 32)):
            from cryptoplan.model.zos.ams import CARD_GENERATIONS
            for gen in CARD_GENERATIONS:
                model.ams_throughput(pol, "RSA", 2048, 2.0, reuse, card_generation=gen)
            model.ams_plan(100.0, pol, "RSA", 2048, 2.0, reuse)
            model.ams_cost_us(pol, "RSA", 2048, 2.0, reuse)
            from cryptoplan.model.zos.ams import AMS_PLATFORMS
            for plat in AMS_PLATFORMS:
                model.ams_message_cost_us(pol, 2.0, reuse, platform=plat)
            for card in ("accelerator", "coprocessor"):
                _try(model.card_utilization, 100.0, pol, "RSA", 2048, 2.0, reuse, card)
                _try(model.crypto_wait_ms, 100.0, pol, "RSA", 2048, 2.0, reuse, card)
            model.accelerators_required(100.0, pol, "RSA", 2048, 2.0, reuse, max_wait_ms=0.1)
            model.coprocessors_required(100.0, pol, "RSA", 2048, 2.0, reuse, max_wait_ms=0.1)
            model.processors_required(100.0, pol, "RSA", 2048, 2.0, reuse)
        for card in ("coprocessor", "accelerator"):
            model.handshake_card_utilization(10.0, "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", card)
        model.crypto_op_ms("sign", "NISTECC", 521)
        for mode in ("none", "SSLCIPH", "ATTLS"):
            model.channel_pipeline(mode, "TLS_CHACHA20_POLY1305_SHA256", 32.0, 3, 2, 2,
                                   roundtrip_us=None if mode != "none" else 2000.0, cps=3)
    return set(seen)


def _try(fn, *args):
    try:
        fn(*args)
    except ValueError:  # combinations the model refuses (e.g. TLS 1.3 with RSA key exchange)
        pass
