"""What the baseline agents score per task in the house (docs/scores.md, "What the baselines score").

The baselines are shortcuts (``homeloop/bench/agents/baselines.py``): none sends the robot anywhere
on purpose, so none may pass a task that needs the robot. The tasks that do not are those docs/agents.md
gives a route for without the robot (:func:`routes_without_robot`); every pass is shown beside that
route, and a pass of any other task is shown as a leak.

- :func:`played_passes` plays every baseline on every task at each seed in a home, in this process;
- :func:`passes_from_records` reads the same from run folders (``homeloop bench run``);
- :func:`baselines_table` writes the table, :func:`with_baselines_table` puts it between the markers
  docs/scores.md keeps it between.

The baselines read perception results, never pixels, so they are played with images off.

``python -m homeloop.bench.baseline_scores RUN_DIR...`` (from the project folder) rewrites the table of
docs/scores.md from the records of those run folders, with the routes of docs/agents.md.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from homeloop.bench.agents.baselines import BASELINES
from homeloop.sim.task import load_tasks
from homeloop.core.house import HOUSE_ID

if TYPE_CHECKING:
    from homeloop.core.home import Home

#: (agent, task) -> the seeds at which the agent passed the task (none: an empty tuple).
Passes = dict[tuple[str, str], tuple[int, ...]]

#: The markers docs/scores.md keeps :func:`baselines_table` between.
TABLE_MARKERS = ("<!-- baselines-table:start -->", "<!-- baselines-table:end -->")

#: The heading docs/agents.md lists the routes without the robot under.
WITHOUT_ROBOT = "Without the **robot**:"

#: A cell for a task an agent passed at no seed.
NO_PASS = "–"

#: The route column of a pass of a task that needs the robot: the goal forbids it.
LEAK = "**none without the robot**: the goal forbids this pass"
#: A pass of a task that needs the robot, by the random agent only: it drove there and its own camera saw.
BY_CHANCE = "with the robot, by chance: its own camera saw what the task asks to be seen, and nothing was overdone"


def played_passes(home: Home, seeds: Iterable[int], tasks: Iterable[str] | None = None) -> Passes:
    """Every baseline on every task (all tasks unless given) at each seed in ``home``, images off."""
    from homeloop.bench.runner import Flags, play
    from homeloop.core.catalog import DEFAULT_ROBOT

    seeds, tasks = list(seeds), sorted(tasks or load_tasks())
    return {(agent, task): tuple(s for s in seeds
                                 if play(home, task, DEFAULT_ROBOT, s, Flags(images=False), agent, {}).passed)
            for agent in BASELINES for task in tasks}


def passes_from_records(records: Iterable[dict[str, Any]]) -> Passes:
    """The baselines' passes in the house, with every service offered, from their episode records."""
    passes: dict[tuple[str, str], set[int]] = {(a, t): set() for a in BASELINES for t in load_tasks()}
    for record in records:
        world, agent = record["world"], record["agent"]["name"]
        if agent in BASELINES and world["home"] == HOUSE_ID and not world["withheld"]:
            if record["passed"]:
                passes[(agent, world["task"])].add(world["seed"])
    return {key: tuple(sorted(seeds)) for key, seeds in passes.items()}


def routes_without_robot(agents_page: str) -> dict[str, str]:
    """Task -> its route without the robot, as the list under :data:`WITHOUT_ROBOT` in docs/agents.md
    gives it (one ``- `task`: route`` item each, continued on indented lines)."""
    if agents_page.count(WITHOUT_ROBOT) != 1:
        raise ValueError(f"the page needs one line {WITHOUT_ROBOT!r}")
    routes: dict[str, str] = {}
    task = None
    for line in agents_page.split(WITHOUT_ROBOT)[1].strip("\n").splitlines():
        item = re.match(r"- `(\w+)`: (.*)", line)
        if item:
            task = item.group(1)
            routes[task] = item.group(2).strip()
        elif task is not None and line.startswith("  ") and line.strip():
            routes[task] += " " + line.strip()
        else:
            break
    return routes


def baselines_table(passes: Passes, routes: dict[str, str]) -> str:
    """The Markdown table: per task, the seeds each baseline passed at, and the route behind a pass."""
    tasks = sorted({task for _, task in passes})
    rows = ["| task | " + " | ".join(f"`{a}`" for a in BASELINES) + " | the route behind a pass |",
            "|---|" + "---|" * len(BASELINES) + "---|"]
    for task in tasks:
        seeds = [passes[(agent, task)] for agent in BASELINES]
        route = "" if not any(seeds) else _route(task, routes, {a for a, s in zip(BASELINES, seeds) if s})
        rows.append(f"| `{task}` | " + " | ".join(_seeds_cell(s) for s in seeds) + f" | {route} |")
    totals = [str(sum(len(passes[(agent, task)]) for task in tasks)) for agent in BASELINES]
    rows.append("| **episodes passed** | " + " | ".join(totals) + " | |")
    return "\n".join(rows)


def _route(task: str, routes: dict[str, str], passed_by: set[str]) -> str:
    """What lies behind the passes of ``task``: its route without the robot, the random agent's robot
    stumbling on a look-only route, or a leak (a shortcut passing a task that needs the robot)."""
    if task in routes:
        return f"without the robot: {routes[task]}"
    return BY_CHANCE if passed_by == {"random"} else LEAK


def _seeds_cell(seeds: tuple[int, ...]) -> str:
    return ", ".join(str(s) for s in seeds) if seeds else NO_PASS


def read_baselines_table(page: str) -> Passes:
    """The passes the table between the markers of ``page`` (docs/scores.md) states."""
    start, end = TABLE_MARKERS
    body = page.split(start)[1].split(end)[0]
    lines = [line for line in body.strip().splitlines() if line.startswith("| `")]
    passes: Passes = {}
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        task = cells[0].strip("`")
        for agent, cell in zip(BASELINES, cells[1:]):
            passes[(agent, task)] = () if cell == NO_PASS else tuple(int(s) for s in cell.split(","))
    return passes


def with_baselines_table(page: str, table: str) -> str:
    """``page`` (the text of docs/scores.md) with the table between its markers made ``table``."""
    start, end = TABLE_MARKERS
    if page.count(start) != 1 or page.count(end) != 1 or page.index(start) > page.index(end):
        raise ValueError(f"the page needs one {start} followed by one {end}")
    head, rest = page.split(start)
    return f"{head}{start}\n{table}\n{end}{rest.split(end)[1]}"


def main(run_dirs: list[str], scores_page: Path = Path("docs/scores.md"),
         agents_page: Path = Path("docs/agents.md")) -> str:
    """Rewrite the table of ``scores_page`` from the records of ``run_dirs``; says what it did."""
    from homeloop.bench.records import read_records
    from homeloop.core.io import write_text

    records = read_records(run_dirs)
    table = baselines_table(passes_from_records(records.records),
                            routes_without_robot(agents_page.read_text(encoding="utf-8")))
    old = scores_page.read_text(encoding="utf-8")
    new = with_baselines_table(old, table)
    if new != old:
        write_text(scores_page, new)
    return f"{scores_page}: {'table rewritten' if new != old else 'table already matches the records'}"


if __name__ == "__main__":  # python -m homeloop.bench.baseline_scores RUN_DIR...
    import sys

    print(main(sys.argv[1:]))
