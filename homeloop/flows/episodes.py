"""The episodes of a benchmark run, on this machine's processes or on a running Dask cluster:
what ``homeloop bench run`` and the ``evaluate`` flow both run.

The benchmark's runner takes a Dask client; reaching a scheduler by its address, with one line
when it does not answer, is the pipeline's (:func:`homeloop.pipeline.parallel.dask_client`),
which the benchmark does not import. The two meet here, above both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

from homeloop.bench import runner


def run_episodes(specs: list[runner.EpisodeSpec], agent: str, out: Path, options: dict[str, Any] | None = None, *,
                 workers: int = 1, dask_address: str | None = None,
                 progress: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """:func:`homeloop.bench.runner.run` in ``workers`` processes, or on the workers of the Dask
    scheduler at ``dask_address`` when one is given."""
    if dask_address is None:
        return runner.run(specs, agent, out, agent_options=options, workers=workers, progress=progress)
    from homeloop.pipeline.parallel import dask_client

    with dask_client(dask_address) as client:
        return runner.run(specs, agent, out, agent_options=options, client=client, progress=progress)
