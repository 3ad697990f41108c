"""Prefect flows over the pipeline stages, and their deployments.

Importing this package points Prefect at a home inside the project (unless
PREFECT_HOME is already set), so local runs keep their state in ``.prefect/``.
"""

from homeloop.flows.settings import configure_prefect

configure_prefect()
