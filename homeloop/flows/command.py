"""What ``homeloop build`` runs: the ``build-home-set`` flow, in this process.

Before anything else it checks its inputs (a ``--source`` the ingest would
refuse, an ``--out`` that is no build folder) and takes the build folder's
lock, so a bad input or a second build into the same folder stops at once
rather than after Prefect has started. Without
PREFECT_API_URL it starts its own temporary Prefect server, one that dies with
the build (:mod:`homeloop.flows.temporary_server`). Ctrl-C (or SIGTERM, or the
terminal closing) stops the build within seconds: the running stage and the
flow run are recorded as cancelled, the Dask cluster and the server are
stopped, the lock is given back, and ``KeyboardInterrupt`` reaches the caller
(the command line prints one line and exits with 130). A rerun resumes. See
docs/pipeline.md.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Callable, Iterator

from homeloop.pipeline import stages
from homeloop.pipeline.config import BuildConfig
from homeloop.pipeline.lock import build_lock

#: Signals that stop a build the way Ctrl-C does.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


@contextlib.contextmanager
def stop_signals_interrupt() -> Iterator[None]:
    """SIGTERM and SIGHUP raise KeyboardInterrupt for the block, so that they too run
    every clean-up (a plain SIGTERM would end the process on the spot)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, _interrupt) for sig in STOP_SIGNALS}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _import_stages() -> None:
    """Import what the build's own process runs between its stages' work on the workers: the
    audit report and the selection's diversity report (matplotlib, scikit-learn). Done while a
    temporary Prefect server starts, when this process only waits, it costs nothing."""
    from homeloop.pipeline import audit, diversity, select  # noqa: F401
    from homeloop.pipeline.previews import plan  # noqa: F401


def prefect_api() -> contextlib.AbstractContextManager[Any]:
    """The Prefect server the flow reports to: the one PREFECT_API_URL names (it must
    answer), else a temporary one started for this build."""
    from prefect.settings import get_current_settings

    from homeloop.flows.temporary_server import temporary_prefect_api

    settings = get_current_settings()
    if settings.api.url:
        from homeloop.flows.runtime import require_prefect_api

        require_prefect_api()
        return contextlib.nullcontext(settings.api.url)
    return temporary_prefect_api(settings.server.ephemeral.startup_timeout_seconds, while_starting=_import_stages)


def _unchanged(config: BuildConfig, say: Callable[[str], None]) -> dict[str, Any] | None:
    """The manifest of a finished build that running again would not change (same parameters,
    code, libraries, source and outputs: :func:`homeloop.pipeline.verify.up_to_date`); None when
    there is work to do. Checked before Prefect starts: its server alone takes seconds."""
    from homeloop.pipeline.verify import up_to_date

    folder = config.out_dir
    if not (folder / "manifest.json").is_file():
        return None
    with build_lock(folder, warn=say):
        manifest = up_to_date(config)
    if manifest is not None:
        say(f"build {manifest['build']} in {folder} is up to date ({len(manifest['outputs']):,} outputs as "
            "recorded; same parameters, code, libraries and source): nothing to run")
    return manifest


def build_command(config: BuildConfig, *, say: Callable[[str], None] = print) -> dict[str, Any]:
    """Run the build-home-set flow on ``config``; return its manifest."""
    config.verify_settings().check()  # a body the catalog lacks: one line before anything starts
    stages.check_inputs(config)  # a source the ingest refuses, an --out that is no build's: the same
    with stop_signals_interrupt():
        manifest = _unchanged(config, say)
        if manifest is not None:
            return manifest
        api = prefect_api()  # checks a configured server before the folder is created
        folder = stages.own_folder(config.out_dir)
        with build_lock(folder, warn=say), api:
            from homeloop.flows.build import build_home_set

            state = build_home_set(config, return_state=True)
            if state.is_cancelled():
                raise KeyboardInterrupt(state.message)
            return state.result()
