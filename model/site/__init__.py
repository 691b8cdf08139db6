"""A site's own measurements, read: RMF's printed Crypto Hardware Activity report, SMF type 70
subtype 2 records (with their HFP numbers), RMF's card lines as typed into a sheet, and the
MQ SMF 115/116 formatter's CSV files.

The readers stand below the models (NumPy and the standard library only): what they return
(:class:`~cryptoplan.model.site.rmf_records.CryptoActivity` records, SMF tables) is what the
plan (:mod:`cryptoplan.model.zos.plan`) and the calibration (:mod:`cryptoplan.model.calibration`)
read, and neither is needed to read a file.  Every reading error is a
:class:`~cryptoplan.model.site.errors.SiteFileError` naming the file and the line or byte.
"""

__all__: list[str] = []
