"""Ids that name files stay inside their folder; one writer per build or run folder (docs/episodes.md,
docs/pipeline.md)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from build_fixtures import lock_holder

from homeloop.bench import runner
from homeloop.bench.records import RUN_LOCK
from homeloop.sim.task import load_tasks
from homeloop.core.catalog import load_catalog
from homeloop.cli import app
from homeloop.core.errors import HomeLoopError
from homeloop.core.ids import MAX_ID_LENGTH, UnsafeId, safe_id

TASK = "fall_false_alarm"
ROBOT = "unitree_g1_d_ultimate"
TRAVERSING = "../../x"


def invoke(*args: object):
    return CliRunner().invoke(app, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})


def one_error_line(result) -> str:
    """Exit code 2, no traceback, one ``error:`` line: that line."""
    assert result.exit_code == 2, result.output[-3000:]
    assert "Traceback" not in result.output and result.exception is None or isinstance(result.exception, SystemExit)
    lines = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.output[-3000:]
    return lines[0]


def files_under(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in sorted(folder.rglob("*"))}


# --- safe ids -----------------------------------------------------------------------------------------------


def test_every_id_the_project_names_files_by_is_safe():
    ids = [*load_tasks(), *load_catalog().robots, "house", "1-1000-aaaa0000000000000000000000000001", "cap_12",
           runner.EpisodeSpec("house", "h.json", TASK, ROBOT, -1, runner.Flags(("hub",), True, False)).id]
    assert [safe_id(i, "some") for i in ids] == ids


@pytest.mark.parametrize("bad", [TRAVERSING, "..", "a/b", "a\\b", "/abs", "", ".hidden", "-option", "a..b",
                                 "a\x00b", "a b", "[/]", "x" * (MAX_ID_LENGTH + 1), None, 7])
def test_an_unsafe_id_is_one_line_naming_it(bad):
    with pytest.raises(UnsafeId) as caught:
        safe_id(bad, "home", where="b/applicability.parquet")
    line = str(caught.value)
    assert "\n" not in line and line.startswith(f"home id {bad!r} (in b/applicability.parquet) cannot name a file")
    assert isinstance(caught.value, HomeLoopError)


def crafted_build(tmp_path: Path, house_home) -> Path:
    """A build folder whose one verified pair is in a home with a traversing id, whose home file
    lies where ``BUILD/homes/<id>/home.json`` leads (outside the build)."""
    build = tmp_path / "build"
    (build / "homes").mkdir(parents=True)
    house_home.write(build / "homes" / TRAVERSING / "home.json")
    pd.DataFrame([{"home": TRAVERSING, "task": TASK, "family": load_tasks()[TASK].family, "robot": ROBOT,
                   "applicable": True, "verified": True, "verify_reason": "passed"}]).to_parquet(
        build / "applicability.parquet")
    return build


def test_a_build_with_a_traversing_home_id_makes_bench_run_write_nothing_outside_out(tmp_path, house_home):
    build = crafted_build(tmp_path, house_home)
    before = files_under(tmp_path)
    out = tmp_path / "runs" / "run"
    result = invoke("bench", "run", "--agent", "do-nothing", "--homes", build, "--tasks", TASK, "--seeds", "0",
                    "--out", out)
    line = one_error_line(result)
    assert f"home id {TRAVERSING!r} (in {build / 'applicability.parquet'}) cannot name a file" in line
    assert files_under(tmp_path) == before  # nothing outside --out, and no half-made run folder either
    assert not (tmp_path / "x.json").exists() and not (tmp_path / "runs").exists()


def test_sim_and_render_refuse_a_home_file_whose_id_traverses(tmp_path, house_home):
    folder = tmp_path / "home"
    house_home.write(folder / "home.json")
    data = json.loads((folder / "home.json").read_text())
    data["home_id"] = TRAVERSING
    (folder / "home.json").write_text(json.dumps(data))
    before = files_under(tmp_path)
    for args in (["sim", folder, "--task", TASK, "--seconds", "1"],
                 ["render", folder, "--camera", "robot", "--task", TASK, "--out", tmp_path / "still.png"]):
        line = one_error_line(invoke(*args))
        assert f"home id {TRAVERSING!r} (in {folder / 'home.json'}) cannot name a file" in line, args
    assert files_under(tmp_path) == before


def test_a_capture_id_that_traverses_names_no_file(tmp_path):
    png = base64.b64encode(b"\x89PNG not really").decode()
    trace = [{"kind": "call", "data": {"capture_id": "../../../evil", "image": png}}]
    with pytest.raises(UnsafeId, match="capture id '../../../evil'"):
        runner.write_capture_images(tmp_path / "run", "house__t__r__s0", trace)
    assert list(tmp_path.rglob("*")) == []


# --- run folders: a lock and an owner -----------------------------------------------------------------------

def bench_run(out: Path, *extra: object, agent: str = "do-nothing", task: str = TASK):
    return invoke("bench", "run", "--agent", agent, "--tasks", task, "--seeds", "0", "--homes", "house",
                  "--no-images", "--out", out, *extra)


def test_a_second_run_into_a_held_run_folder_stops_at_once_naming_the_holder(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    holder = lock_holder("homeloop.bench.records:run_lock", out)
    try:
        assert holder.stdout.readline().strip() == "held"
        line = one_error_line(bench_run(out))
        assert f"run folder {out.resolve()} is in use by another run (pid {holder.pid} on " in line
        assert f"kill {holder.pid}" in line
        assert sorted(p.name for p in out.iterdir()) == [RUN_LOCK]  # the second run wrote nothing
        assert json.loads((out / RUN_LOCK).read_text())["pid"] == holder.pid
    finally:
        holder.stdin.close()
        holder.wait(timeout=60)
    assert holder.returncode == 0 and not (out / RUN_LOCK).exists()


def test_a_run_folder_belongs_to_one_agent_and_one_set_of_flags(tmp_path):
    out = tmp_path / "run"
    assert bench_run(out).exit_code == 0
    owner = json.loads((out / "run.json").read_text())
    assert (owner["agent"], owner["flags"]) == ("do-nothing", {"withheld": [], "show_costs": False, "images": False})
    before = files_under(out)
    other_task = next(t for t in load_tasks() if t != TASK)
    for args, kwargs, mine in (([], {"agent": "over-reactor", "task": other_task}, "over-reactor, flags no-images"),
                               (["--show-costs"], {}, "do-nothing, flags costs+no-images")):
        line = one_error_line(bench_run(out, *args, **kwargs))
        assert line == (f"error: run folder {out.resolve()} holds the episodes of do-nothing, flags no-images "
                        f"(its run.json), not {mine}; give this run another --out folder")
        assert files_under(out) == before  # refused before it wrote anything
    assert bench_run(out).exit_code == 0  # its own agent resumes


# --- the build lock -----------------------------------------------------------------------------------------

def test_two_builds_meeting_a_dead_builds_lock_cannot_both_take_it(tmp_path):
    """One build takes over the lock file a dead build left; a second one that saw the dead build's
    pid in it at that same instant (written back here, as it read it) is still refused."""
    from homeloop.pipeline.lock import BuildFolderBusy, build_lock

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    lock = tmp_path / ".build.lock"
    left = json.dumps({"pid": dead.pid, "host": os.uname().nodename, "started": 0})
    lock.write_text(left)
    first = lock_holder("homeloop.pipeline.lock:build_lock", tmp_path)
    try:
        taken_over = first.stdout.readline()
        assert "no longer running" in taken_over and f"pid {dead.pid}" in taken_over
        assert first.stdout.readline().strip() == "held"
        lock.write_text(left)  # what the second build read an instant before the first wrote its own pid
        with pytest.raises(BuildFolderBusy, match="in use by another build"):
            with build_lock(tmp_path, warn=lambda line: None):
                pass
    finally:
        first.stdin.close()
        first.wait(timeout=60)
    assert first.returncode == 0 and not lock.exists()
