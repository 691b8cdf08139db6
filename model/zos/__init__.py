"""The z/OS domain models: Crypto Express card times, AMS, TLS channels, handshakes and the
whole-system plan, built on :mod:`cryptoplan.model.queueing` and the published figures and
parameters in force (:mod:`cryptoplan.model.figures`, :mod:`cryptoplan.model.params`).
"""

__all__: list[str] = []
