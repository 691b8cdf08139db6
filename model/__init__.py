"""cryptoplan models: queueing formulas and fitted z/OS crypto domain models.

The package reads bottom to top: the published figures, the parameters in force and the
argument domains (:mod:`~cryptoplan.model.figures`, :mod:`~cryptoplan.model.params`,
:mod:`~cryptoplan.model.domains`); :mod:`cryptoplan.model.queueing` (Erlang, M/M/c, M/G/c, MVA);
:mod:`cryptoplan.model.zos` (card times, AMS, TLS, channels, the whole-system plan); and
:mod:`cryptoplan.model.calibration` (the least-squares path, the fit, the site calibration).
Each layer imports only the ones below it (tests/test_layers.py).

Everything here is a pure function over floats or NumPy arrays.  Arguments are
validated against their ranges, declared once in :mod:`cryptoplan.model.domains`, by
:mod:`cryptoplan.model._validate`; bad input raises :class:`ValueError` naming the
argument, the value and the allowed range.
"""

import lazy_loader


# The public names, each from the module that defines it, are listed in __init__.pyi: lazy_loader
# (scientific-python SPEC 1) reads that stub and imports a name's module on first use (PEP 562),
# so that ``import cryptoplan.model.params`` or a command line's ``--help`` does not load NumPy
# and SciPy; type checkers and IDEs read the same stub to go to each definition.
__getattr__, __dir__, __all__ = lazy_loader.attach_stub(__name__, __file__)
