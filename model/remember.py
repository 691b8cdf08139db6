"""The last few results of a computation, by key: :class:`Remembered`.

A workbook asks the same thing many times within one recalculation or sweep (a Plan sheet's
``PLAN_*`` cells the same plan, each chunk of a sweep the same draw's channel throughput), and
the answers depend on more than the arguments: on the parameters in force, which callers name by
the ids of their objects.  An id is only an object's while the object lives, so an entry keeps
the objects its key names (``keep``): no other object can take their ids while the entry lives.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any

from .errors import InputError

__all__ = ["Remembered"]


class Remembered:
    """The results of the last ``size`` keys (least recently used forgotten first).

    Parameters
    ----------
    size : int
        Entries kept, >= 1.

    Examples
    --------
    >>> squares = Remembered(2)
    >>> squares.get(3, lambda: 3 * 3)
    9
    >>> squares.get(3, lambda: -1)          # remembered: not made again
    9
    >>> squares.get(None, lambda: -1)       # no key: made, not remembered
    -1
    """

    __slots__ = ("size", "_entries")

    def __init__(self, size: int):
        if size < 1:
            raise InputError(f"size must be at least 1 (got {size})")
        self.size = size
        self._entries: OrderedDict = OrderedDict()

    def get(self, key: Hashable | None, make: Callable[[], Any], keep: object = None) -> Any:
        """``make()``, remembered under ``key``; None: made and not remembered.

        ``keep`` is held with the result: the objects whose ids ``key`` holds, so that those ids
        cannot become other objects' while the entry lives.
        """
        if key is None:
            return make()
        hit = self._entries.get(key)
        if hit is not None:
            try:
                self._entries.move_to_end(key)
            except KeyError:        # another thread's entry pushed it out meanwhile: the value stands
                pass
            return hit[1]
        out = make()
        self._entries[key] = (keep, out)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
        return out

    def clear(self) -> None:
        """Forget every entry."""
        self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
