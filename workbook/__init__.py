"""The template planning workbook, batch recalculation, and the ``cryptoplan`` command line."""

import lazy_loader


# recalc() and sweep(), from modules whose names differ from theirs (a submodule named like the
# function would replace it as the package attribute once imported directly), listed in
# __init__.pyi: lazy_loader binds them on first use, type checkers read the stub.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
