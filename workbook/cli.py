"""Deprecated alias of :mod:`cryptoplan.cli`, kept for one release (0.1 -> 0.2).

The command line moved from ``cryptoplan.workbook.cli`` to ``cryptoplan.cli``: it sits above
the model, the add-in and the workbook, so it is a package of its own.  Importing this module
(or ``python -m cryptoplan.workbook.cli``) still works and warns.
"""

import warnings

from cryptoplan.cli import main

__all__ = ["main"]

warnings.warn("cryptoplan.workbook.cli is deprecated and will be removed in 0.2: use cryptoplan.cli "
              "(the `cryptoplan` command is unchanged)", DeprecationWarning, stacklevel=2)

if __name__ == "__main__":
    main()
