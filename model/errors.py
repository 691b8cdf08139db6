"""The one base of every error cryptoplan raises for what a user gave it: :class:`CryptoplanError`.

A caller catches ``CryptoplanError`` to catch them all; each keeps the built-in class it was
before (``ValueError`` for a bad value, ``TypeError`` for a wrong kind of value, ``KeyError``
for an unknown name, ``FileExistsError`` for an output that exists), so ``except ValueError``
goes on working.  The specific classes (:class:`~cryptoplan.model.zos.plan.PlanError`,
:class:`~cryptoplan.model.calibration.observations.CalibrationError`, the engine's
``WorkbookFileError``, the add-in's ``CellError``, ...) subclass it; :class:`InputError`,
:class:`InputTypeError`, :class:`UnknownName` and :class:`OutputExists` are for the rest.

This module imports nothing: every layer, the formula engine included, may raise from it.
"""

from __future__ import annotations

__all__ = ["CryptoplanError", "InputError", "InputTypeError", "UnknownName", "OutputExists"]


class CryptoplanError(Exception):
    """Base class of the errors cryptoplan raises for bad input or an unusable file: the message
    names the argument (or file, cell, key), the value and what is accepted."""


class InputError(CryptoplanError, ValueError):
    """A value outside what the argument accepts."""


class InputTypeError(CryptoplanError, TypeError):
    """A value of a kind the argument does not take (text for a number, a date, a complex number)."""


class UnknownName(CryptoplanError, KeyError):
    """A name (a figure, a parameter, a function, an output) that is not one of those known."""

    def __str__(self) -> str:           # KeyError quotes its message: the sentence reads as written
        return str(self.args[0]) if self.args else ""


class OutputExists(CryptoplanError, FileExistsError):
    """An output file that exists, where the caller did not say to replace it."""
