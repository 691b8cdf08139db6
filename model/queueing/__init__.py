"""The queueing core: Erlang B and C, M/M/c, M/G/c and mean-value analysis.

Pure functions of rates, service times and server counts; nothing z/OS-specific.
"""

__all__: list[str] = []
