"""The xlwings UDF layer: thin Excel wrappers over :mod:`model`."""

__all__: list[str] = []
