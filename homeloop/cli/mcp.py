"""``homeloop mcp``: serve one episode to an MCP client, over stdio or streamable HTTP (docs/agents.md, "MCP").

The episode is planned as ``homeloop bench run`` plans one (a home, a task, a robot, a seed and the
run's flags), played by :mod:`homeloop.harness.session` and served by
:mod:`homeloop.harness.mcp_server`; its record goes to ``--out`` in bench run's format. Everything
the command prints goes to stderr (stdout is the stdio transport's): over HTTP first the line
``serving episode <id> at http://127.0.0.1:<port>/mcp``, and at the end the verdict.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, Optional

import typer

from homeloop.cli.common import fail
from homeloop.core.errors import HomeLoopError
from homeloop.core.ids import DEFAULT_ROBOT, HOUSE_ID
from homeloop.core.progress import console


def mcp(
    home: str = typer.Option(..., "--home", help="A home folder holding home.json (a build's homes/<id>/), or "
                             "house."),
    task: str = typer.Option(..., "--task", help="The task id."),
    seed: int = typer.Option(0, "--seed", min=0, help="The episode's seed."),
    robot: str = typer.Option(DEFAULT_ROBOT, "--robot", help="Robot body (catalog id)."),
    out: Path = typer.Option(Path("outputs/runs/mcp"), "--out", help="Run folder: the record goes to "
                             "OUT/episodes/, as bench run writes it."),
    http: Optional[int] = typer.Option(None, "--http", min=0, max=65535, help="Serve streamable HTTP on "
                                       "127.0.0.1:PORT (0: a free port) instead of stdio."),
    withhold: list[str] = typer.Option([], "--withhold", help="Withhold a service (repeatable)."),
    show_costs: bool = typer.Option(False, "--show-costs", help="Skill costs in the tool descriptions."),
    no_images: bool = typer.Option(False, "--no-images", help="Captures return no pixels."),
    max_requests: int = typer.Option(100, "--max-requests", min=1, help="Tool calls (finish included) before "
                                     "the episode ends."),
    prompt: Optional[str] = typer.Option(None, "--prompt", help="The role prompt served (docs/agents.md)."),
    max_image_side: Optional[int] = typer.Option(None, "--max-image-side", min=1, help="Send images with their "
                                                 "longer side at most N pixels."),
) -> None:
    """Serve one episode to an MCP client: the skills as tools, the wake event as a prompt and resources."""
    from homeloop.bench.agents.conversation import DEFAULT_PROMPT, check_prompt
    from homeloop.bench.runner import Flags
    from homeloop.harness import mcp_server, session

    flags = Flags(tuple(sorted(withhold)), show_costs, not no_images)
    sock = None
    try:
        chosen = check_prompt(prompt or DEFAULT_PROMPT)
        spec = _plan(home, task, robot, seed, out, flags)
        sock = mcp_server.listen(http) if http is not None else None
        played = session.start(spec, out, max_requests)
    except (HomeLoopError, ValueError, OSError) as exc:
        fail(str(exc).strip("'\""))
    if played.episode is None:
        fail(played.failure or f"episode {spec.id} was not played")
    server = mcp_server.build_server(played, chosen, max_image_side)
    try:
        if sock is not None:
            console.print(f"serving episode {spec.id} at http://127.0.0.1:{sock.getsockname()[1]}/mcp",
                          highlight=False, soft_wrap=True)
            asyncio.run(mcp_server.serve_http(server, played, sock))
        else:
            asyncio.run(mcp_server.serve_stdio(server, played))
    except KeyboardInterrupt:
        played.close()
    played.finished.wait()
    if played.failure:
        fail(played.failure)
    console.print(_verdict(played.summary, out), highlight=False, soft_wrap=True)


def _plan(home: str, task: str, robot: str, seed: int, out: Path, flags: Any) -> Any:
    """The one episode: the home file of ``home`` (the house is written into the run folder)."""
    from homeloop.bench import run_plan, runner
    from homeloop.core.catalog import load_catalog
    from homeloop.core.home import Home

    if robot not in load_catalog().robots:
        raise HomeLoopError(f"unknown robot {robot!r}; bodies: {', '.join(load_catalog().robots)}")
    from homeloop.sim.skills import SERVICES

    bad = [s for s in flags.withheld if s not in SERVICES]
    if bad:
        raise HomeLoopError(f"unknown service(s) {', '.join(bad)}; services: {', '.join(SERVICES)}")
    tasks = run_plan.parse_tasks(task)
    if len(tasks) != 1:
        raise HomeLoopError(f"--task {task}: give one task id")
    task_id = tasks[0]
    if home == HOUSE_ID:
        from homeloop.pipeline.houses import write_house_home

        return runner.plan({HOUSE_ID: write_house_home(out / "homes" / HOUSE_ID)}, [task_id], robot, [seed], flags)[0]
    path = Path(home) / "home.json" if Path(home).is_dir() else Path(home)
    if not path.is_file():
        raise HomeLoopError(f"{home}: no home.json there; give a home folder (a build's homes/<id>/) or house")
    home_id = Home.from_json(path.read_text(encoding="utf-8"), where=str(path)).home_id
    return runner.plan({home_id: path}, [task_id], robot, [seed], flags)[0]


def _verdict(summary: Optional[dict[str, Any]], out: Path) -> str:
    if summary is None:
        return f"no episode was played; records: {out / 'episodes'}"
    result = "passed" if summary["passed"] else "failed"
    return f"episode {summary['id']}: {result} (ended by {summary['ended_by']}); record: {out / 'episodes'}"
