"""model/remember.py: the last few results by key, each kept with the objects its key names.

Expected values: counts of calls to ``make`` (a result made once per key while it is remembered)
and the lifetime of a ``keep`` object seen through a weak reference.
"""

from __future__ import annotations

import gc
import weakref

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cryptoplan.model.remember import Remembered


@settings(max_examples=100, deadline=None)
@given(size=st.integers(1, 5), keys=st.lists(st.integers(0, 8), max_size=40))
def test_it_makes_a_result_again_exactly_when_a_plain_lru_has_forgotten_it(size, keys):
    """Against a list kept in least-recently-used order by hand: ``make`` runs when, and only
    when, the key is not among the last ``size`` distinct keys used."""
    memo, recent = Remembered(size), []
    for k in keys:
        made = []
        assert memo.get(k, lambda k=k: made.append(k) or k * 10) == k * 10
        assert made == ([] if k in recent else [k])
        if k in recent:
            recent.remove(k)
        recent.append(k)
        del recent[:-size]
        assert len(memo) == len(recent)


def test_no_key_is_made_every_time_and_never_remembered():
    memo, calls = Remembered(3), []
    for _ in range(3):
        assert memo.get(None, lambda: calls.append(1) or 7) == 7
    assert len(calls) == 3 and len(memo) == 0


def test_what_the_key_names_lives_as_long_as_its_entry():
    """An entry keeps ``keep`` alive (so an id in its key cannot become another object's), and
    lets it go once the entry is forgotten."""
    class Token:
        pass
    memo = Remembered(1)
    t = Token()
    ref = weakref.ref(t)
    memo.get(id(t), lambda: "a", keep=t)
    del t
    gc.collect()
    assert ref() is not None
    memo.get("other", lambda: "b")
    gc.collect()
    assert ref() is None


def test_a_size_below_one_is_refused():
    from cryptoplan.model.errors import InputError
    with pytest.raises(InputError, match="size must be at least 1"):
        Remembered(0)
