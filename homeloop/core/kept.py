"""What is worked out once and kept: a bounded table, the least recently used entry going first.

Every cache of the project is one of these, so each says only what it keys by and how many it keeps.

- **By identity.** A home, a catalog or a list of shapes is named by the objects themselves
  (``held``): hashing them by value would cost more than the entry saves. An object's ``id`` is its
  own only while it lives, so an entry holds the objects it was keyed by; none of them can die, and
  no other object take their ids, while the entry is kept.
- **Read the same.** A home may be edited in place between two episodes. Where that matters the
  caller passes ``reads``, a cheap description of what the value was worked out from (ids, poses,
  first corners), compared by value: an entry that reads otherwise is worked out again.
- **Threads.** Episodes may run in threads of one process (the harnesses' sessions), so a table is
  read and written under a lock. The value is worked out outside it: two threads may both work one
  out, and the later is kept; values are worked out from their key alone, so either serves.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Callable, Generic, Hashable, TypeVar

V = TypeVar("V")


class Kept(Generic[V]):
    """At most ``size`` values, by key, the objects they are held by, and what they read."""

    def __init__(self, size: int) -> None:
        self.size = size
        #: By the key and the ids of the objects held: what the value reads, those objects, the value.
        self._table: OrderedDict[Hashable, tuple[object, tuple[object, ...], V]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable, held: tuple[object, ...] = (), reads: object = None) -> V | None:
        """The value kept for ``key`` and the objects ``held`` that reads as ``reads``, else None."""
        entry = self._find((key, *map(id, held)) if held else key, reads)
        return None if entry is None else entry[2]

    def put(self, key: Hashable, value: V, held: tuple[object, ...] = (), reads: object = None) -> V:
        """Keep ``value`` for ``key`` and ``held`` (held with it), dropping the least recently used
        entries beyond the size; returns ``value``."""
        full = (key, *map(id, held)) if held else key
        with self._lock:
            self._table[full] = (reads, held, value)
            self._table.move_to_end(full)
            while len(self._table) > self.size:
                self._table.popitem(last=False)
        return value

    def get_or_make(self, key: Hashable, make: Callable[[], V], held: tuple[object, ...] = (),
                    reads: object = None) -> V:
        """The value kept for ``key``, ``held`` and ``reads``, else ``make()``'s, kept."""
        full = (key, *map(id, held)) if held else key
        entry = self._find(full, reads)
        return entry[2] if entry is not None else self.put(key, make(), held, reads)

    def clear(self) -> None:
        with self._lock:
            self._table.clear()

    def __len__(self) -> int:
        return len(self._table)

    def _find(self, full: Hashable, reads: object) -> tuple[object, tuple[object, ...], V] | None:
        with self._lock:
            entry = self._table.get(full)
            if entry is None or entry[0] != reads:
                return None
            self._table.move_to_end(full)
            return entry
