"""The one bounded table every cache is made of (homeloop.core.kept)."""

from __future__ import annotations

import gc
import threading
import weakref

from hypothesis import given
from hypothesis import strategies as st

from homeloop.core.kept import Kept


class _Thing:
    """An object named by identity (as a home or a catalog is)."""


@given(st.integers(1, 4), st.lists(st.integers(0, 6), max_size=40))
def test_it_keeps_the_most_recently_used_and_makes_a_value_only_when_not_kept(size, keys):
    kept: Kept[str] = Kept(size)
    made: list[int] = []
    recent: list[int] = []  # a plain model of the table: its keys, most recently used last
    for key in keys:
        before = len(made)
        assert kept.get_or_make(key, lambda key=key: made.append(key) or f"v{key}") == f"v{key}"
        assert len(made) - before == (0 if key in recent else 1)
        if key in recent:
            recent.remove(key)
        recent = (recent + [key])[-size:]
        assert len(kept) == len(recent)
    assert all(kept.get(key) == f"v{key}" for key in recent)
    assert all(kept.get(key) is None for key in set(keys) - set(recent))


def test_an_entry_holds_its_objects_and_lets_them_go_when_it_goes():
    kept: Kept[str] = Kept(1)
    thing = _Thing()
    alive = weakref.ref(thing)
    kept.put("k", "first", (thing,))
    del thing
    gc.collect()
    assert alive() is not None  # held: its id cannot pass to another object while kept
    assert kept.get("k", (alive(),)) == "first"
    assert kept.get("k", (_Thing(),)) is None  # another object, even of equal content
    kept.put("other", "second")
    gc.collect()
    assert alive() is None


def test_an_entry_that_reads_otherwise_is_made_again_and_replaced():
    kept: Kept[int] = Kept(4)
    thing = _Thing()
    assert kept.get_or_make((), lambda: 1, (thing,), reads=("layout", 1)) == 1
    assert kept.get_or_make((), lambda: 2, (thing,), reads=("layout", 1)) == 1
    assert kept.get_or_make((), lambda: 3, (thing,), reads=("layout", 2)) == 3  # edited in place
    assert len(kept) == 1
    assert kept.get((), (thing,), reads=("layout", 1)) is None


def test_a_value_of_none_is_kept_like_any_other():
    kept: Kept[None] = Kept(2)
    calls: list[int] = []
    for _ in range(3):
        assert kept.get_or_make("nothing", lambda: calls.append(1)) is None
    assert calls == [1]


def test_threads_sharing_a_small_table_each_get_their_own_values():
    """Episodes of a harness session run in threads of one process: lookups, keeps and evictions
    of one table interleave, and every caller still gets the value of its own key."""
    kept: Kept[tuple[int, int]] = Kept(3)
    wrong: list[tuple[int, object]] = []

    def work(worker: int) -> None:
        for i in range(2000):
            key = (worker * 7 + i) % 11
            value = kept.get_or_make(key, lambda key=key: (key, key * key))
            if value != (key, key * key):
                wrong.append((key, value))

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert wrong == []
    assert len(kept) == 3
