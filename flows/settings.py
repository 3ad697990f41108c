"""Prefect and Dask settings for local use: state inside the project, quiet logs.

Set before Prefect is imported; a user's own environment variables win.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_ROOT = Path(__file__).resolve().parent.parent
#: Where a local Prefect server listens (loopback only) by default.
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 4200

LOCAL_DEFAULTS = {
    "PREFECT_HOME": str(PROJECT_ROOT / ".prefect"),
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    # A fresh SQLite database takes ~20 s to migrate on a small machine.
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_LOGGING_LEVEL": "INFO",
    "DASK_LOGGING__DISTRIBUTED": "warning",
}


def configure_prefect() -> None:
    for name, value in LOCAL_DEFAULTS.items():
        os.environ.setdefault(name, value)
