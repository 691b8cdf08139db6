"""The one error of the site-data readers: a file that cannot be read as what it claims to be."""

from __future__ import annotations

from cryptoplan.model.errors import CryptoplanError

__all__ = ["SiteFileError"]


class SiteFileError(CryptoplanError, ValueError):
    """A site's file (RMF's printed report, SMF records, the SMF formatter's CSV, RMF's lines)
    that cannot be read: the message names the file and the line or byte offset, and what was
    expected there.  A :class:`ValueError`: bad input, never a fault of cryptoplan."""
