"""What every HomeLoop flow shares: a flow that first checks its Prefect API, a stage run as one
Prefect task, and the states a flow ends in when its input is refused or Ctrl-C stops it.

Prefect tasks are stages, not plans or episodes: thousands of task runs would cost more than
the work. Inside a stage the work goes to Dask in partitions.
"""

from __future__ import annotations

from typing import Any, Callable

from prefect import Flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.states import Cancelled, Failed, State

from homeloop.core.errors import INTERRUPTED, HomeLoopError, user_error

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
    """``@homeloop_flow(name=..., description=...)``: the function as a :class:`HomeLoopFlow`."""
    return lambda fn: HomeLoopFlow(fn, **options)


def run_stage(name: str, fn: Callable[[], Any]) -> Any:
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


def stopped(exc: HomeLoopError) -> State:
    """The failed state a flow returns for a problem with its input: the message,
    logged once, and the error raised to whoever called the flow."""
    get_run_logger().error(str(exc))
    return Failed(message=str(exc), data=exc)


def interrupted() -> State:
    """The state of a flow stopped by Ctrl-C, once its stages have cleaned up: cancelled.
    Called directly, the flow then raises prefect's CancelledRun; ``homeloop build``
    asks for the state and raises KeyboardInterrupt (homeloop.flows.command)."""
    get_run_logger().warning(INTERRUPTED)
    return Cancelled(message=INTERRUPTED)
