"""The ``build-home-set`` and ``audit-source`` flows.

``homeloop build`` runs ``build-home-set`` in-process; ``make serve`` serves both as
deployments for ``prefect deployment run``. ``build-home-set`` takes one parameter, the
build's :class:`~homeloop.pipeline.config.BuildConfig` (its fields are the deployment's form)::

    prefect deployment run 'build-home-set/default' --param config='{"plans": 400, "homes": 100}'
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from homeloop.core.errors import HomeLoopError
from homeloop.flows.runtime import homeloop_flow, interrupted, run_stage, stopped
from homeloop.pipeline import stages
from homeloop.pipeline.config import OUTPUTS, BuildConfig
from prefect import get_run_logger


@homeloop_flow(name="build-home-set", description="Rebuild the home set: ingest, audit, select, furnish, export, screen.")
def build_home_set(config: BuildConfig = BuildConfig()) -> dict[str, Any]:
    """config: the build's parameters (each field's description says what it does); a field
    left out takes its default."""
    logger = get_run_logger()
    try:
        manifest = stages.run_build(config, runner=run_stage, log=logger.info)
    except HomeLoopError as exc:
        return stopped(exc)
    except KeyboardInterrupt:
        return interrupted()
    logger.info("build %s written to %s", manifest["build"], manifest["out"])
    return manifest


@homeloop_flow(name="audit-source", description="Audit a floor-plan source: ingest it, run every rule, write the report.")
def audit_source(source: str, out: str | None = None, all_usages: bool = False) -> dict[str, Any]:
    """source: a Swiss Dwellings geometries.csv; out: the report folder
    (default outputs/audit-<file name>)."""
    logger = get_run_logger()
    target = Path(out) if out else OUTPUTS / f"audit-{Path(source).stem}"
    try:
        outcome = run_stage(
            "audit-source", lambda: stages.run_audit_source(Path(source), target, all_usages=all_usages, progress=False)
        )
    except HomeLoopError as exc:
        return stopped(exc)
    except KeyboardInterrupt:
        return interrupted()
    for r in outcome.per_rule.itertuples(index=False):
        logger.info("%s: %d checked, %d passed, %d failed", r.rule, r.checked, r.passed, r.failed)
    logger.info("%d of %d plans passed; report: %s", outcome.plans_passed, outcome.plans_checked, outcome.html)
    return {"out": str(target), "plans_checked": outcome.plans_checked, "plans_passed": outcome.plans_passed}
