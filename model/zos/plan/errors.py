"""The one exception a plan's inputs raise: :class:`PlanError`."""

from __future__ import annotations

from cryptoplan.model.errors import CryptoplanError

__all__ = ["PlanError"]


class PlanError(CryptoplanError, ValueError):
    """A plan's input is wrong: the message names the workload (or the system), the key and the value."""
