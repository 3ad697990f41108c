"""Prefect and Dask settings for local use: state inside the project, quiet logs.

Set before Prefect is imported; a user's own environment variables win.
"""

from __future__ import annotations

import os
from pathlib import Path


def project_root() -> Path:
    """Where ``.prefect/`` and ``outputs/`` go: the source checkout this package runs
    from (the folder holding pyproject.toml, two above ``homeloop/flows/``), or, for a package
    installed from a wheel, the current working directory."""
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file() and (checkout / "homeloop" / "flows").is_dir():
        return checkout
    return Path.cwd()


PROJECT_ROOT = project_root()

#: Where a local Prefect server listens (loopback only) by default.
DEFAULT_HOST, DEFAULT_PORT = "127.0.0.1", 4200

LOCAL_DEFAULTS = {
    "PREFECT_HOME": str(PROJECT_ROOT / ".prefect"),
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    # A server answers only once a fresh SQLite database is migrated, which on a small
    # machine takes longer than Prefect's default wait.
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "120",
    "PREFECT_LOGGING_LEVEL": "INFO",
    "DASK_LOGGING__DISTRIBUTED": "warning",
}


def configure_prefect() -> None:
    for name, value in LOCAL_DEFAULTS.items():
        os.environ.setdefault(name, value)
