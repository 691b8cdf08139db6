"""Published figures (with provenance) and fitted parameters, shipped as package data.

Installed as the package ``cryptoplan.data``; use :func:`cryptoplan.model.datafiles.data_path`
to locate a file whether cryptoplan runs from a checkout or an installed wheel.
"""
