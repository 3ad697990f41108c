"""The ``build-home-set`` and ``audit-source`` flows.

Prefect tasks are stages, not plans: thousands of task runs would cost more
than the work. Inside a stage, plans go to Dask in partitions. ``homeloop
build`` runs ``build-home-set`` in-process; ``make serve`` serves both as
deployments for ``prefect deployment run``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import flows  # noqa: F401  (local Prefect settings before Prefect loads)
from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from pipeline import stages


def _stage_runner(name: str, fn: Callable[[], Any]) -> Any:
    """Run one stage as a Prefect task. Stages cache themselves by inputs and code
    (pipeline.cache), so Prefect's own result cache stays off."""
    return task(fn, name=name, cache_policy=NO_CACHE, persist_result=False)()


@flow(name="build-home-set", description="Rebuild the home set: ingest, audit, select, furnish, export, screen.")
def build_home_set(
    source: str | None = None,
    plans: int = stages.DEFAULT_PLANS,
    sites: int = stages.DEFAULT_SITES,
    homes: int = stages.DEFAULT_HOMES,
    seed: int = 0,
    out: str | None = None,
    dask_address: str | None = None,
    workers: int | None = None,
    usda: bool = False,
) -> dict[str, Any]:
    """source: a Swiss Dwellings geometries.csv (default: generate `plans` plans on
    `sites` sites); out: the build folder (default outputs/<build name>);
    dask_address: a running Dask scheduler (default: a local cluster)."""
    logger = get_run_logger()
    config = stages.BuildConfig(
        source=Path(source) if source else None,
        plans=plans,
        sites=sites,
        homes=homes,
        seed=seed,
        out=Path(out) if out else None,
        dask_address=dask_address,
        workers=workers,
        usda=usda,
    )
    manifest = stages.run_build(config, runner=_stage_runner, log=logger.info)
    logger.info("build %s written to %s", manifest["build"], manifest["out"])
    return manifest


@flow(name="audit-source", description="Audit a floor-plan source: ingest it, run every rule, write the report.")
def audit_source(source: str, out: str | None = None, all_usages: bool = False) -> dict[str, Any]:
    """source: a Swiss Dwellings geometries.csv; out: the report folder
    (default outputs/audit-<file name>)."""
    logger = get_run_logger()
    target = Path(out) if out else stages.OUTPUTS / f"audit-{Path(source).stem}"
    outcome = _stage_runner(
        "audit-source", lambda: stages.run_audit_source(Path(source), target, all_usages=all_usages, progress=False)
    )
    for r in outcome.per_rule.itertuples(index=False):
        logger.info("%s: %d checked, %d passed, %d failed", r.rule, r.checked, r.passed, r.failed)
    logger.info("%d of %d plans passed; report: %s", outcome.plans_passed, outcome.plans_checked, outcome.html)
    return {"out": str(target), "plans_checked": outcome.plans_checked, "plans_passed": outcome.plans_passed}
