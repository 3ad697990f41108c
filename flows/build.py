"""The ``build-home-set`` and ``audit-source`` flows.

Prefect tasks are stages, not plans: thousands of task runs would cost more
than the work. Inside a stage, plans go to Dask in partitions. ``homeloop
build`` runs ``build-home-set`` in-process; ``make serve`` serves both as
deployments for ``prefect deployment run``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from homeloop import flows  # noqa: F401  (local Prefect settings before Prefect loads)
from prefect import Flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.states import Cancelled, Failed

from homeloop.errors import INTERRUPTED, HomeLoopError, user_error
from homeloop.pipeline import stages

#: Seconds to wait for the Prefect server named by PREFECT_API_URL to answer.
API_TIMEOUT_S = 5.0


def require_prefect_api(timeout_s: float = API_TIMEOUT_S) -> None:
    """Stop with one line when PREFECT_API_URL names a server that does not answer.

    Without PREFECT_API_URL, Prefect starts a temporary local server for the run."""
    import httpx
    from prefect.settings import PREFECT_API_URL

    url = PREFECT_API_URL.value()
    if not url:
        return
    try:
        httpx.get(f"{url.rstrip('/')}/health", timeout=timeout_s)
    except httpx.TransportError as exc:
        raise HomeLoopError(
            f"no Prefect server answers at PREFECT_API_URL={url} ({exc.__class__.__name__}); "
            "start it (`make serve`) or unset PREFECT_API_URL to run with a temporary local server"
        ) from None


class HomeLoopFlow(Flow):
    """A flow that, called directly, first checks that its Prefect API answers, so a
    server that is down is one clear line rather than a traceback from the engine."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        require_prefect_api()
        return super().__call__(*args, **kwargs)


def homeloop_flow(**options: Any) -> Callable[[Callable[..., Any]], HomeLoopFlow]:
    return lambda fn: HomeLoopFlow(fn, **options)


def _stage_runner(name: str, fn: Callable[[], Any]) -> Any:
    """Run one stage as a Prefect task. Stages cache themselves by inputs and code
    (homeloop.pipeline.cache), so Prefect's own result cache stays off.

    A problem with the input (:class:`HomeLoopError`) fails the task with its
    message, not a traceback, and is raised again here for the flow to report.
    Ctrl-C cancels the task and is raised again here, to stop the flow."""

    def stage() -> Any:
        try:
            return fn()
        except (HomeLoopError, OSError) as exc:
            error = user_error(exc)  # a full disk, a folder without permission: one line too
            if error is None:
                raise
            return Failed(message=str(error), data=error)
        except KeyboardInterrupt:
            return Cancelled(message=INTERRUPTED)

    state = task(stage, name=name, cache_policy=NO_CACHE, persist_result=False)(return_state=True)
    if state.is_cancelled():
        # Raised here, in this thread: Prefect resolves results on an event loop of its
        # own, which an interrupt raised there would bring down.
        raise KeyboardInterrupt(INTERRUPTED)
    return state.result()


def _stopped(exc: HomeLoopError) -> Failed:
    """The failed state a flow returns for a problem with its input: the message,
    logged once, and the error raised to whoever called the flow."""
    get_run_logger().error(str(exc))
    return Failed(message=str(exc), data=exc)


def _interrupted() -> Cancelled:
    """The state of a flow stopped by Ctrl-C, once its stages have cleaned up: cancelled.
    Called directly, the flow then raises prefect's CancelledRun; ``homeloop build``
    asks for the state and raises KeyboardInterrupt (homeloop.flows.command)."""
    get_run_logger().warning(INTERRUPTED)
    return Cancelled(message=INTERRUPTED)


@homeloop_flow(name="build-home-set", description="Rebuild the home set: ingest, audit, select, furnish, export, screen.")
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
    verify: bool = True,
    verify_robots: list[str] | None = None,
    verify_seeds: list[int] | None = None,
    verify_homes: int | None = stages.DEFAULT_VERIFY_HOMES,
) -> dict[str, Any]:
    """source: a Swiss Dwellings geometries.csv (default: generate `plans` plans on
    `sites` sites); out: the build folder (default outputs/<build name>);
    dask_address: a running Dask scheduler (default: a local cluster);
    verify: play the screened pairs with the scripted reference agent, for the bodies
    `verify_robots` at `verify_seeds` in the house and `verify_homes` further homes
    (null: every home)."""
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
        verify=verify,
        verify_robots=tuple(verify_robots) if verify_robots is not None else None,
        verify_seeds=tuple(verify_seeds) if verify_seeds is not None else None,
        verify_homes=verify_homes,
    )
    try:
        manifest = stages.run_build(config, runner=_stage_runner, log=logger.info)
    except HomeLoopError as exc:
        return _stopped(exc)
    except KeyboardInterrupt:
        return _interrupted()
    logger.info("build %s written to %s", manifest["build"], manifest["out"])
    return manifest


@homeloop_flow(name="audit-source", description="Audit a floor-plan source: ingest it, run every rule, write the report.")
def audit_source(source: str, out: str | None = None, all_usages: bool = False) -> dict[str, Any]:
    """source: a Swiss Dwellings geometries.csv; out: the report folder
    (default outputs/audit-<file name>)."""
    logger = get_run_logger()
    target = Path(out) if out else stages.OUTPUTS / f"audit-{Path(source).stem}"
    try:
        outcome = _stage_runner(
            "audit-source", lambda: stages.run_audit_source(Path(source), target, all_usages=all_usages, progress=False)
        )
    except HomeLoopError as exc:
        return _stopped(exc)
    except KeyboardInterrupt:
        return _interrupted()
    for r in outcome.per_rule.itertuples(index=False):
        logger.info("%s: %d checked, %d passed, %d failed", r.rule, r.checked, r.passed, r.failed)
    logger.info("%d of %d plans passed; report: %s", outcome.plans_passed, outcome.plans_checked, outcome.html)
    return {"out": str(target), "plans_checked": outcome.plans_checked, "plans_passed": outcome.plans_passed}
