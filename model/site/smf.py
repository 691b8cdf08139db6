"""MQ channel-initiator statistics (SMF 115 and 116) as IBM's mq-smf-csv formatter writes them.

The channel initiator writes, per statistics interval, one SMF 115 record section per
task: adapters (``SMF-QCTADP.csv``), dispatchers (``SMF-QCTDSP.csv``), SSL tasks
(``SMF-QCTSSL.csv``) and the DNS task (``SMF-QCTDNS.csv``), each with the requests it
served and its CPU, elapsed and wait times; channel accounting (SMF 116,
``SMF-QCST.csv``) gives per channel the messages and bytes it moved, its type, its SSL
cipher and its dispatcher.  This module reads those files, checks they are the
formatter's, and reduces them per queue manager, interval and task type:

.. math::

    \\text{requests/s} = \\frac{\\sum_k n_k}{T}, \\qquad
    \\text{CPU per request} = \\frac{\\sum_k c_k}{\\sum_k n_k}, \\qquad
    \\text{busy} = \\frac{\\sum_k e_k}{K\\,T}, \\qquad
    \\rho = \\frac{\\sum_k e_k}{\\sum_k c_k}

over the interval's :math:`K` tasks of that type (:math:`n_k` requests, :math:`c_k` CPU,
:math:`e_k` elapsed time serving requests, :math:`T` the interval).  :math:`\\rho` is the
elapsed time per CPU time of :mod:`cryptoplan.model.zos.channel` (``task_elapsed_ratio``).

Formatter quirks handled: every line ends with a comma (an empty last column); numbers
the formatter wants kept as text are written ``="800"``; strings are padded with blanks;
times are ``HH:MM:SS,ffffff``; CPU and elapsed times are two columns, seconds and
microseconds (``Task_CPU_Time(S)``, ``Task_CPU_Time(US)``).

References
----------
.. [1] IBM, mq-smf-csv, "MQ SMF data formatter" (github.com/ibm-messaging/mq-smf-csv).
.. [2] IBM MQ for z/OS, "Channel initiator statistics" and "Channel accounting data"
   (SMF 115 subtype 231, SMF 116 subtype 10).
"""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..datafiles import read_text
from .errors import SiteFileError

__all__ = ["SmfError", "TASK_FILES", "CHANNEL_FILE", "TASK_COLUMNS", "CHANNEL_COLUMNS", "MESSAGE_CHANNEL_TYPES",
           "TaskStatistics", "ChannelAccounting", "read_task_statistics", "read_channel_accounting",
           "read_smf_folder"]

# file name -> task type
TASK_FILES = {"SMF-QCTADP.csv": "adapter", "SMF-QCTDSP.csv": "dispatcher", "SMF-QCTSSL.csv": "SSL",
              "SMF-QCTDNS.csv": "DNS"}
CHANNEL_FILE = "SMF-QCST.csv"
# Every formatter file starts with these columns.
_COMMON = ("Date", "Time", "LPAR", "QMgr", "QSG", "MQ_Version")
TASK_COLUMNS = _COMMON + ("Interval_Duration", "Task_Index", "Request_Count", "Task_CPU_Time(S)",
                          "Task_CPU_Time(US)", "Task_Elapsed_Time(S)", "Task_Elapsed_Time(US)")
CHANNEL_COLUMNS = _COMMON + ("Chl_Name", "Type", "Msg_All_Count", "Number_Bytes", "SSL_CipherSuite",
                             "Dispatcher_Number")
# SMF 116 channel types that move messages between queue managers (what model.channel prices);
# SvrConn channels carry MQI calls of clients, not messages of a channel pair.
MESSAGE_CHANNEL_TYPES = ("Sender", "Receiver", "Server", "Requester", "ClusSdr", "ClusRcvr")


class SmfError(SiteFileError):
    """A file that is not the formatter's output, or a value that cannot be one: names file and line."""


def _cell(text: str) -> str:
    text = text.strip()
    if text.startswith('="') and text.endswith('"'):   # the formatter's keep-as-text form
        text = text[2:-1]
    return text.strip()


def _read(path, columns, what) -> tuple[list, dict]:
    """(line numbers, {column: [text]}) of a formatter CSV holding ``columns``."""
    path = Path(path)
    text = read_text(path, SmfError, "not mq-smf-csv output",
                     "run the formatter with its CSV output; SMF dumps themselves are binary")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    if not rows:
        raise SmfError(f"{path}: the file is empty; mq-smf-csv writes a header line first")
    header = [h.strip() for h in rows[0]]
    if tuple(header[:len(_COMMON)]) != _COMMON or header[-1] != "":
        raise SmfError(f"{path} line 1: not mq-smf-csv output ({what}): the formatter's files start with the "
                       f"columns {','.join(_COMMON)} and end every line with a comma")
    missing = [c for c in columns if c not in header]
    if missing:
        raise SmfError(f"{path} line 1: not {what} as mq-smf-csv writes it: missing columns {', '.join(missing)}")
    index = {c: header.index(c) for c in columns}
    lines: list[int] = []
    out: dict[str, list[str]] = {c: [] for c in columns}
    for n, values in enumerate(rows[1:], 2):
        if not any(v.strip() for v in values):
            continue
        if len(values) != len(header):
            raise SmfError(f"{path} line {n}: {len(values)} fields, the header has {len(header)} (a truncated "
                           "or edited line?)")
        lines.append(n)
        for c, i in index.items():
            out[c].append(_cell(values[i]))
    return lines, out


def _numbers(path, lines, cells, column, integer=True) -> np.ndarray:
    try:
        v = np.array([float(x) for x in cells[column]], dtype=float)
    except ValueError:
        bad = next(i for i, x in enumerate(cells[column]) if not _is_number(x))
        raise SmfError(f"{path} line {lines[bad]}: {column} {cells[column][bad]!r} is not a number") from None
    wrong = ~np.isfinite(v) | (v < 0) | ((v != np.round(v)) if integer else False)
    if np.any(wrong):
        i = int(np.flatnonzero(wrong)[0])
        raise SmfError(f"{path} line {lines[i]}: {column} {cells[column][i]!r} must be a "
                       f"{'whole ' if integer else ''}number >= 0")
    return v


def _is_number(x: str) -> bool:
    try:
        float(x)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class TaskStatistics:
    """Channel-initiator task statistics, one entry per queue manager, interval and task type.

    Arrays of equal length.  ``end`` is the SMF record's date and time (the interval's end as
    the formatter prints it); ``interval_s`` the interval; ``tasks`` how many tasks of that type
    reported; ``requests``, ``cpu_s``, ``elapsed_s`` their sums; ``channels`` the channels
    assigned to the dispatchers (dispatcher entries; 0 otherwise).
    """

    lpar: np.ndarray
    qmgr: np.ndarray
    end: np.ndarray
    task: np.ndarray
    interval_s: np.ndarray
    tasks: np.ndarray
    requests: np.ndarray
    cpu_s: np.ndarray
    elapsed_s: np.ndarray
    channels: np.ndarray

    def __len__(self) -> int:
        return self.task.size

    @property
    def busy(self) -> np.ndarray:
        """Fraction of the interval the tasks of this type spent serving requests (0..1)."""
        return self.elapsed_s / (self.tasks * self.interval_s)

    @property
    def requests_per_s(self) -> np.ndarray:
        """Requests served per second of the interval, all tasks of this type together."""
        return self.requests / self.interval_s

    @property
    def active(self) -> np.ndarray:
        """Entries whose tasks served at least one request and used CPU."""
        return (self.requests > 0) & (self.cpu_s > 0)

    @property
    def cpu_us_per_request(self) -> np.ndarray:
        """CPU per request, µs (0 for an idle entry: see :attr:`active`)."""
        return np.divide(self.cpu_s * 1e6, self.requests, out=np.zeros_like(self.cpu_s), where=self.active)

    @property
    def elapsed_per_cpu(self) -> np.ndarray:
        """Elapsed time per CPU time (0 for an idle entry: see :attr:`active`)."""
        return np.divide(self.elapsed_s, self.cpu_s, out=np.zeros_like(self.cpu_s), where=self.active)


def read_task_statistics(path, task: str | None = None) -> TaskStatistics:
    """Read one of the formatter's task files (:data:`TASK_FILES`) and reduce it per interval.

    Parameters
    ----------
    path : str or Path
        ``SMF-QCTADP.csv``, ``SMF-QCTDSP.csv``, ``SMF-QCTSSL.csv`` or ``SMF-QCTDNS.csv``.
    task : str, optional
        The task type; by default from the file name.

    Raises
    ------
    SmfError
        A file that is not the formatter's, or a value that is not a count or a time.
    """
    path = Path(path)
    if task is None:
        task = TASK_FILES.get(path.name)
        if task is None:
            raise SmfError(f"{path}: not a channel-initiator task file the formatter writes "
                           f"({', '.join(TASK_FILES)})")
    columns = TASK_COLUMNS + (("Task_Channel_Count",) if task == "dispatcher" else ())
    lines, c = _read(path, columns, f"{task} task statistics")
    num = {k: _numbers(path, lines, c, k) for k in columns[len(_COMMON):]}
    us_over = [k for k in ("Task_CPU_Time(US)", "Task_Elapsed_Time(US)") if np.any(num[k] >= 1e6)]
    if us_over:
        i = int(np.flatnonzero(num[us_over[0]] >= 1e6)[0])
        raise SmfError(f"{path} line {lines[i]}: {us_over[0]} {c[us_over[0]][i]} is not a microsecond part "
                       "(0..999999)")
    if np.any(num["Interval_Duration"] == 0):
        i = int(np.flatnonzero(num["Interval_Duration"] == 0)[0])
        raise SmfError(f"{path} line {lines[i]}: Interval_Duration 0: a statistics interval lasts")
    cpu = num["Task_CPU_Time(S)"] + num["Task_CPU_Time(US)"] * 1e-6
    elapsed = num["Task_Elapsed_Time(S)"] + num["Task_Elapsed_Time(US)"] * 1e-6
    key = np.array([f"{a}\0{b}\0{d} {t}" for a, b, d, t in zip(c["LPAR"], c["QMgr"], c["Date"], c["Time"])])
    uniq, first, inv = np.unique(key, return_index=True, return_inverse=True)
    dur = num["Interval_Duration"]
    if np.any(dur != dur[first][inv]):
        i = int(np.flatnonzero(dur != dur[first][inv])[0])
        raise SmfError(f"{path} line {lines[i]}: Interval_Duration {c['Interval_Duration'][i]} differs from "
                       "the other tasks of the same record")
    n = uniq.size
    return TaskStatistics(
        lpar=np.array(c["LPAR"])[first], qmgr=np.array(c["QMgr"])[first],
        end=np.array([f"{d} {t}" for d, t in zip(c["Date"], c["Time"])])[first],
        task=np.full(n, task), interval_s=dur[first],
        tasks=np.bincount(inv, minlength=n).astype(float),
        requests=np.bincount(inv, num["Request_Count"], n), cpu_s=np.bincount(inv, cpu, n),
        elapsed_s=np.bincount(inv, elapsed, n),
        channels=np.bincount(inv, num["Task_Channel_Count"], n) if task == "dispatcher" else np.zeros(n))


@dataclass(frozen=True)
class ChannelAccounting:
    """SMF 116 channel accounting, one entry per record (a channel instance's interval)."""

    lpar: np.ndarray
    qmgr: np.ndarray
    end: np.ndarray
    name: np.ndarray
    type: np.ndarray
    messages: np.ndarray
    bytes: np.ndarray
    cipher: np.ndarray        # "" without SSL
    dispatcher: np.ndarray

    def __len__(self) -> int:
        return self.name.size

    @property
    def message_channel(self) -> np.ndarray:
        """Channels between queue managers (:data:`MESSAGE_CHANNEL_TYPES`), not client connections."""
        return np.isin(self.type, MESSAGE_CHANNEL_TYPES)


def read_channel_accounting(path) -> ChannelAccounting:
    """Read the formatter's ``SMF-QCST.csv`` (SMF 116 channel accounting).

    Raises
    ------
    SmfError
        A file that is not the formatter's, or a count that is not one.
    """
    path = Path(path)
    lines, c = _read(path, CHANNEL_COLUMNS, "channel accounting (SMF-QCST)")
    cipher = np.array(["" if x in ("", "0") else x for x in c["SSL_CipherSuite"]])
    return ChannelAccounting(
        lpar=np.array(c["LPAR"]), qmgr=np.array(c["QMgr"]),
        end=np.array([f"{d} {t}" for d, t in zip(c["Date"], c["Time"])]),
        name=np.array(c["Chl_Name"]), type=np.array(c["Type"]),
        messages=_numbers(path, lines, c, "Msg_All_Count"), bytes=_numbers(path, lines, c, "Number_Bytes"),
        cipher=cipher, dispatcher=_numbers(path, lines, c, "Dispatcher_Number"))


def read_smf_folder(folder) -> tuple[TaskStatistics, ChannelAccounting | None, list]:
    """The task statistics of every task file in a formatter output folder, and its channel accounting.

    Returns
    -------
    tasks : TaskStatistics
        All task types together.
    channels : ChannelAccounting or None
        None when the folder has no ``SMF-QCST.csv``.
    files : list of str
        The files read.

    Raises
    ------
    SmfError
        A folder without any task file, or a file that is not the formatter's.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise SmfError(f"{folder}: not a folder (give the folder mq-smf-csv wrote its files into)")
    found = [folder / f for f in TASK_FILES if (folder / f).is_file()]
    if not found:
        raise SmfError(f"{folder}: holds none of the formatter's channel-initiator task files "
                       f"({', '.join(TASK_FILES)}); run mqsmfcsv on SMF 115 records of a channel initiator")
    parts = [read_task_statistics(p) for p in found]
    tasks = TaskStatistics(*(np.concatenate([getattr(p, f) for p in parts])
                             for f in TaskStatistics.__dataclass_fields__))
    chl = read_channel_accounting(folder / CHANNEL_FILE) if (folder / CHANNEL_FILE).is_file() else None
    return tasks, chl, [p.name for p in found] + ([CHANNEL_FILE] if chl is not None else [])
