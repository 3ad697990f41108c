"""How a worker process's C allocator keeps memory: frame-sized arrays reuse pages already mapped.

glibc's malloc maps every block over its mmap threshold afresh (the threshold starts at 128 KiB
and rises only as such blocks are freed), and hands the free top of its heap back to the system
past its trim threshold. A process that renders frames allocates and frees arrays of a frame's
size many times a second, and each mapped or trimmed one is faulted in again page by page: system
CPU spent on memory the process had a moment before. :func:`keep_large_blocks` raises the mmap
threshold to its ceiling from the start and keeps the heap's free top, for processes of ours
alone (a run's pool workers), never a library user's.

Elsewhere (another C library, another system) it changes nothing and says so.
"""

from __future__ import annotations

import ctypes
import sys

#: ``mallopt`` parameters (glibc's malloc.h).
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
#: The mmap threshold: glibc's ceiling on 64-bit systems (a larger value is refused).
MMAP_THRESHOLD_BYTES = 32 * 2**20
#: Free memory at the top of the heap kept before any goes back to the system.
TRIM_THRESHOLD_BYTES = 2**30


def keep_large_blocks() -> bool:
    """Set this process's allocator as the module docstring says; whether it took the settings
    (False where the C library is not glibc)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    # mallopt answers 1 where it took a setting
    return all(mallopt(option, value) == 1 for option, value in
               ((M_MMAP_THRESHOLD, MMAP_THRESHOLD_BYTES), (M_TRIM_THRESHOLD, TRIM_THRESHOLD_BYTES)))
