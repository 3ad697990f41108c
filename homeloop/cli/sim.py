"""``homeloop sim`` and ``homeloop render``: an episode's timeline, and one camera's picture or a
contact sheet of every camera the agent may use."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.table import Table
from rich.text import Text

from homeloop.cli.common import fail, file_out, guard, read_home, say
from homeloop.core.progress import console

if TYPE_CHECKING:
    from homeloop.sim.episode import Episode
    from homeloop.sim.world import World

#: The default size of a contact sheet's tiles (homeloop.sim.render.sheet.TILE, which this module
#: does not import until a command runs).
SHEET_TILE = (320, 180)
#: The sizes ``render --size`` takes, in pixels per side.
MIN_SIZE_PX, MAX_SIZE_PX = 16, 4096

#: What a command says of a folder without a home file.
NO_HOME_FILE = "{path}: no home file; give a folder holding home.json, e.g. outputs/default/homes/house"


@guard
def sim(
    home_dir: Path = typer.Argument(..., help="A folder holding home.json, e.g. outputs/default/homes/house."),
    task: str = typer.Option(..., "--task", help="A task id (homeloop/bench/tasks/), e.g. handle_smoke_alarm."),
    robot: Optional[str] = typer.Option(None, "--robot", help="A robot body id (default: the experiments' body)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Episode seed; the same seed gives the same timeline."),
    seconds: Optional[float] = typer.Option(None, "--seconds",
                                            help="Simulated seconds after the wake event (default: the horizon)."),
) -> None:
    """Run an episode in which the agent only waits, and print its timeline: the events an agent is
    told of and the ground truth's milestones, in seconds from the wake event."""
    from homeloop.core.ids import DEFAULT_ROBOT
    from homeloop.sim.episode import Episode, EpisodeError

    check_within_horizon(task, seconds, "--seconds", above_zero=True)
    path = home_dir / "home.json"
    if not path.is_file():
        fail(NO_HOME_FILE.format(path=path))
    try:
        episode = Episode(read_home(path), task, robot or DEFAULT_ROBOT, seed, images=False)
    except EpisodeError as exc:
        fail(str(exc))
    episode.call("clock_wait", {"seconds": seconds if seconds is not None else episode.task.horizon_s})
    print_sim_timeline(episode)


def print_sim_timeline(episode: Episode) -> None:
    """The events (told to the agent) and milestones (ground truth) of an episode, then its final state."""
    world, wake = episode.world, episode.wake_time
    rows = sorted([(e.time, "event", e) for e in world.events] + [(e.time, "ground truth", e) for e in world.milestones],
                  key=lambda r: r[0])
    table = Table(title=f"{episode.task.id} in {episode.home.home_id}, seed {episode.seed}", header_style="bold")
    for col in ("t (s)", "seen as", "what", "source", "details"):
        table.add_column(col, justify="right" if col == "t (s)" else "left", overflow="fold")
    for time, seen_as, e in rows:
        details = ", ".join(f"{k}={v}" for k, v in e.data.items())
        table.add_row(f"{time - wake:+.1f}", seen_as, Text(e.kind), Text(e.source), Text(details))
    console.print(table)
    say(f"final state at {episode.now():+.1f} s: {final_state(world)}")


def final_state(world: World) -> str:
    """One line on the hazards' state: pan temperatures, burners lit, water spilled, the densest smoke."""
    parts = []
    snapshots = {m.name: m.snapshot() for m in world.modules}
    for pan, state in snapshots.get("cooking", {}).get("pans", {}).items():
        parts.append(f"{pan} {state['temperature_c']:.0f} °C" + (", burning" if state["burning"] else ""))
    lit = [f"{d.id}.{k}" for d in world.devices_of_type("stove") for k, v in d.values.items() if v is True]
    parts.append("burners lit: " + (", ".join(lit) or "none"))
    water = snapshots.get("water", {})
    if water.get("sources"):
        parts.append(f"water spilled {water['total_litres']:.1f} L")
    rooms = snapshots.get("smoke", {}).get("rooms", {})
    if rooms:
        room, density = max(rooms.items(), key=lambda kv: kv[1])
        parts.append(f"densest smoke {density:.2f} in {world.home.room(room).name}")
    return "; ".join(parts)


@guard
def render(
    home_dir: Path = typer.Argument(..., help="A folder holding home.json, e.g. outputs/default/homes/house."),
    camera: Optional[str] = typer.Option(None, "--camera", help="A camera id of the home file, or 'robot' (with "
                                         "--task)."),
    sheet: bool = typer.Option(False, "--sheet", help="Every camera the agent may use, as a grid of labelled tiles "
                               "(instead of --camera)."),
    out: Path = typer.Option(..., "--out", help="The PNG file to write."),
    task: Optional[str] = typer.Option(None, "--task", help="Render the task's scenario (default: the home as built)."),
    at: Optional[float] = typer.Option(None, "--at", help="With --task: simulated seconds after the task's wake "
                                       "event (default 0)."),
    seed: int = typer.Option(0, "--seed", min=0, help="Episode seed (with --task)."),
    robot: Optional[str] = typer.Option(None, "--robot", help="With --task: a robot body id (default: the "
                                        "experiments' body)."),
    size: Optional[str] = typer.Option(None, "--size", help="WIDTHxHEIGHT in pixels: the image (default: the "
                                       "camera's resolution), or each tile with --sheet (default "
                                       f"{SHEET_TILE[0]}x{SHEET_TILE[1]})."),
    no_privacy: bool = typer.Option(False, "--no-privacy", help="Ignore the cameras' privacy modes."),
) -> None:
    """Render one camera of a built home to a PNG: a dome camera, or the robot's head camera in a
    task's scenario, optionally some simulated seconds after the wake event. With --sheet, render
    every camera the agent may use there into one contact sheet, each tile labelled with its camera
    and room."""
    from homeloop.core.io import write_bytes

    pixels = check_render_options(camera, sheet, task, at, robot, size)
    file_out(out)
    path = home_dir / "home.json"
    if not path.is_file():
        fail(NO_HOME_FILE.format(path=path))
    home = read_home(path)
    from homeloop.core.visuals.library import library_for_home

    visuals = library_for_home(path)  # the assets its build mapped (docs/catalog.md, "Your own assets")
    if sheet:
        from homeloop.sim.render.sheet import render_sheet

        contact = render_sheet(home, task=task, at=at or 0.0, seed=seed, robot=robot, privacy=not no_privacy,
                               tile=pixels or SHEET_TILE, visuals=visuals)
        write_bytes(out, contact.png())
        height, width = contact.image.shape[:2]
        say(f"{out}: {len(contact.tiles)} cameras of {home.home_id} in {contact.columns}x{contact.rows} tiles, "
            f"{width}x{height}, t = {contact.t:+.1f} s")
        return
    import base64

    from homeloop.sim.render.still import render_still

    assert camera is not None  # check_render_options asks for --camera or --sheet
    still = render_still(home, camera, task=task, at=at or 0.0, seed=seed, robot=robot, privacy=not no_privacy,
                         size=pixels, visuals=visuals)
    write_bytes(out, base64.b64decode(still.png))
    height, width = still.image.shape[:2]
    hazards = ", ".join(sorted({h["kind"] for h in still.frame.hazards})) or "none"
    say(f"{out}: {camera}, {width}x{height}, t = {still.t:+.1f} s; hazards in view: {hazards}")


def check_render_options(camera: Optional[str], sheet: bool, task: Optional[str], at: Optional[float],
                         robot: Optional[str], size: Optional[str]) -> Optional[tuple[int, int]]:
    """One line for options of ``render`` that do not go together or out of range, before any work;
    the ``--size`` they give, as (width, height)."""
    if sheet and camera is not None:
        fail(f"--sheet with --camera {camera}: a sheet shows every camera the agent may use; give --sheet or "
             "--camera, not both")
    if not sheet and camera is None:
        fail("give --camera ID (one camera) or --sheet (every camera the agent may use)")
    if at is not None and task is None:
        fail(f"--at {at:g}: the seconds after a task's wake event; give --task too")
    if robot is not None and task is None:
        fail(f"--robot {robot}: the body a task's scenario places; give --task too")
    check_within_horizon(task, at, "--at")
    return None if size is None else parse_size(size)


def parse_size(text: str) -> tuple[int, int]:
    """``WIDTHxHEIGHT`` as (width, height), each from :data:`MIN_SIZE_PX` to :data:`MAX_SIZE_PX`;
    anything else is one line."""
    import re

    match = re.fullmatch(r"(\d{1,6})x(\d{1,6})", text.strip().lower())
    width, height = (int(match[1]), int(match[2])) if match else (0, 0)
    if not (MIN_SIZE_PX <= width <= MAX_SIZE_PX and MIN_SIZE_PX <= height <= MAX_SIZE_PX):
        fail(f"--size {text!r}: give WIDTHxHEIGHT in pixels, each from {MIN_SIZE_PX} to {MAX_SIZE_PX}, "
             f"e.g. {SHEET_TILE[0]}x{SHEET_TILE[1]}")
    return width, height


def check_within_horizon(task: Optional[str], seconds: Optional[float], flag: str, *, above_zero: bool = False) -> None:
    """One line for simulated seconds outside a task's episode: from its wake event (0, or just after
    with ``above_zero``) to its horizon. An unknown task is left to the episode to name."""
    from homeloop.sim.task import load_tasks

    known = load_tasks().get(task) if task is not None else None
    if seconds is None or known is None:
        return
    horizon = known.horizon_s
    inside = 0 < seconds <= horizon if above_zero else 0 <= seconds <= horizon  # False for nan
    if not inside:
        fail(f"{flag} {seconds:g}: outside the episode of {task}; give {'more than ' if above_zero else ''}0 "
             f"to {horizon:g} seconds after its wake event ({horizon:g} s is its horizon)")
