"""The add-in's error text as a type: what a failed element returns, recognized without parsing.

A module of its own, importing nothing, so that the recalculation engine can recognize the
add-in's failures without loading the catalog and the models.
"""

from __future__ import annotations

__all__ = ["ErrorText"]


class ErrorText(str):
    """The add-in's error text for a failed element (``"#NUM! ERLANGC: ..."``), typed.

    A ``str`` (what xlwings delivers to the cell, see :mod:`cryptoplan.addin.convert`), that also says
    it is an error and which: :attr:`code` is the Excel error literal.  Whoever receives a
    result (the recalculation engine, the LibreOffice layer) recognizes a failure by its type;
    only text arriving from a spreadsheet, where the type is lost, is recognized by its prefix
    (:func:`cryptoplan.addin.convert.is_error_text`).
    """

    code: str

    def __new__(cls, text: str, code: str):
        obj = super().__new__(cls, text)
        obj.code = code
        return obj

    def __reduce__(self):
        return type(self), (str(self), self.code)
