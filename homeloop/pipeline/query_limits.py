"""How long a query over a build may run and how much memory it may hold, unless told otherwise
(:func:`homeloop.pipeline.queries.run_sql`). This module imports nothing, so the command line
can show the limits in its help."""

from __future__ import annotations

#: Seconds a query may run (``--timeout``), and the memory it may hold (``--memory-limit``, DuckDB's size syntax).
DEFAULT_TIMEOUT_S = 60.0
DEFAULT_MEMORY_LIMIT = "2GB"
