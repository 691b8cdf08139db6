"""Calibration: the least-squares path, the fit to the published figures, the site calibration
on RMF, CPU and SMF numbers, and the tables of parameters and figures the spreadsheets show.
"""

__all__: list[str] = []
