"""The ``homeloop`` command: what a user types and what they get back.

Happy paths of generate, ingest, show and audit run in this process; ``build``
with bad input runs as a subprocess (it starts Prefect), and every bad input
ends with exit code 2 and one line that says what is wrong and how to fix it.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest
from typer.main import get_command
from typer.testing import CliRunner

from build_fixtures import free_port, run_cli, small_build_args, subprocess_env
from homeloop.cli import COMMANDS, app
from homeloop.cli.common import every_command

runner = CliRunner()

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def invoke(*args: str):
    return runner.invoke(app, [str(a) for a in args], env={"COLUMNS": "200", "NO_COLOR": "1"})


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


def assert_one_line_error(exit_code: int, output: str, *phrases: str) -> str:
    """Exit code 2, no traceback, and exactly one ``error:`` line holding ``phrases``."""
    assert exit_code == 2, output[-3000:]
    assert "Traceback" not in output, output[-3000:]
    lines = error_lines(output)
    assert len(lines) == 1, output[-3000:]
    for phrase in phrases:
        assert phrase in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def generated_csv(tmp_path_factory):
    """A small generated source with injected defects (so some rows and plans are rejected)."""
    path = tmp_path_factory.mktemp("cli") / "geometries.csv"
    result = invoke("generate", "--out", path, "--plans", "30", "--sites", "10", "--seed", "3", "--defect-rate", "0.5")
    assert result.exit_code == 0, result.output
    return path


@pytest.fixture(scope="module")
def no_geometry_csv(generated_csv):
    path = generated_csv.with_name("no-geometry.csv")
    pd.read_csv(generated_csv, dtype=str).drop(columns=["geometry"]).to_csv(path, index=False)
    return path


def test_generate_writes_a_swiss_dwellings_csv(generated_csv):
    table = pd.read_csv(generated_csv, dtype=str)
    assert {"apartment_id", "site_id", "plan_id", "entity_type", "geometry"} <= set(table.columns)
    assert set(table["entity_type"]) == {"area", "separator", "opening", "feature"}
    # 30 plans (apartments on the lowest floor of a layout), plus the repeats of some upper floors.
    assert table["apartment_id"].nunique() >= 30
    assert table["site_id"].nunique() <= 10


def test_generate_is_reproducible(generated_csv, tmp_path):
    again = tmp_path / "again.csv"
    result = invoke("generate", "--out", again, "--plans", "30", "--sites", "10", "--seed", "3", "--defect-rate", "0.5")
    assert result.exit_code == 0, result.output
    assert "30 plans on" in result.output
    assert again.read_bytes() == generated_csv.read_bytes()


def test_ingest_prints_a_summary_that_reconciles(generated_csv, tmp_path):
    result = invoke("ingest", generated_csv, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    match = re.search(r"rows in = used \+ rejected: ([\d,]+) = ([\d,]+) \+ ([\d,]+) → reconciled", result.output)
    assert match, result.output
    rows_in, used, rejected = (int(g.replace(",", "")) for g in match.groups())
    assert rows_in == used + rejected == len(pd.read_csv(generated_csv, dtype=str))
    assert rejected > 0  # the injected defects
    assert len(pd.read_parquet(tmp_path / "elements.parquet")) == used
    assert len(pd.read_parquet(tmp_path / "rejected.parquet")) >= 1
    # The summary row: rows in, used, rejected, plans, plans rejected; every generated plan is accounted for.
    row = next(line for line in result.output.splitlines() if line.count("│") == 6 and re.search(r"\d", line))
    numbers = [int(cell.strip().replace(",", "")) for cell in row.split("│")[1:-1]]
    assert numbers[:3] == [rows_in, used, rejected]
    plans = pd.read_parquet(tmp_path / "plans.parquet")
    assert plans["plan"].is_unique and numbers[3] == len(plans)
    assert numbers[3] + numbers[4] == 30


def test_show_draws_a_plan(generated_csv, tmp_path):
    assert invoke("ingest", generated_csv, "--out", tmp_path / "ingest").exit_code == 0
    plan = pd.read_parquet(tmp_path / "ingest" / "plans.parquet")["plan"].iloc[0]
    result = invoke("show", plan, "--from", tmp_path / "ingest", "--out", tmp_path / "plan.png")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "plan.png").read_bytes()[:8] == PNG_MAGIC


def test_show_an_unknown_plan(generated_csv, tmp_path):
    assert invoke("ingest", generated_csv, "--out", tmp_path).exit_code == 0
    result = invoke("show", "no-such-plan", "--from", tmp_path, "--out", tmp_path / "plan.png")
    assert_one_line_error(result.exit_code, result.output, "no-such-plan", "plans.parquet")
    assert not (tmp_path / "plan.png").exists()


def test_audit_prints_the_rule_table_and_writes_the_report(generated_csv, tmp_path):
    result = invoke("audit", generated_csv, "--out", tmp_path)
    assert result.exit_code == 0, result.output
    table = pd.read_parquet(tmp_path / "audit.parquet")
    assert (tmp_path / "audit.html").read_text().lstrip().startswith("<")
    for rule in table["rule"].unique():
        assert rule in result.output
    for rule in ("unreachable_space", "no_kitchen", "invalid_geometry"):
        assert rule in result.output
    match = re.search(r"plans: ([\d,]+) checked, ([\d,]+) passed", result.output)
    assert match, result.output
    checked, passed = (int(g.replace(",", "")) for g in match.groups())
    assert checked == table["plan"].nunique() and 0 < passed < checked


# --- bad input --------------------------------------------------------------------


def test_ingest_a_missing_source_file(tmp_path):
    result = invoke("ingest", tmp_path / "missing.csv", "--out", tmp_path / "out")
    assert_one_line_error(result.exit_code, result.output, "missing.csv", "does not exist")


def test_ingest_and_audit_a_csv_without_geometry(no_geometry_csv, tmp_path):
    for command in ("ingest", "audit"):
        result = invoke(command, no_geometry_csv, "--out", tmp_path / command)
        assert_one_line_error(result.exit_code, result.output, "no-geometry.csv", "missing column(s) geometry",
                              "geometries.csv")


def test_ingest_into_an_unwritable_folder(generated_csv, tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    result = invoke("ingest", generated_csv, "--out", blocker / "out")
    assert_one_line_error(result.exit_code, result.output, str(blocker / "out"), "choose another --out")


@pytest.mark.slow
def test_build_with_a_source_without_geometry(no_geometry_csv, tmp_path, tmp_path_factory):
    result = run_cli(small_build_args(tmp_path / "out", "--source", str(no_geometry_csv), "--workers", "1"),
                     env=subprocess_env(tmp_path_factory))
    assert_one_line_error(result.returncode, result.stdout, "missing column(s) geometry")
    assert not (tmp_path / "out" / "manifest.json").exists()


@pytest.mark.slow
def test_build_into_a_folder_under_a_file(tmp_path, tmp_path_factory):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    result = run_cli(small_build_args(blocker / "out", "--workers", "1"), env=subprocess_env(tmp_path_factory))
    assert_one_line_error(result.returncode, result.stdout, str(blocker / "out"), "choose another --out")


@pytest.mark.slow
def test_build_with_a_dask_scheduler_that_does_not_answer(tmp_path, tmp_path_factory):
    address = f"tcp://127.0.0.1:{free_port()}"
    result = run_cli(small_build_args(tmp_path / "out", "--dask-address", address),
                     env=subprocess_env(tmp_path_factory))
    assert_one_line_error(result.returncode, result.stdout, address, "leave out --dask-address")


def test_build_with_a_prefect_server_that_is_down(tmp_path, tmp_path_factory):
    url = f"http://127.0.0.1:{free_port()}/api"
    result = run_cli(small_build_args(tmp_path / "out"), env=subprocess_env(tmp_path_factory, PREFECT_API_URL=url),
                     timeout=120)
    line = assert_one_line_error(result.returncode, result.stdout, url, "make serve", "unset PREFECT_API_URL")
    assert line.startswith("error: no Prefect server answers")
    assert not (tmp_path / "out").exists()


# --- homeloop sim ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def house_dir(tmp_path_factory):
    """A folder holding the house's home.json, as a build writes it."""
    from homeloop.pipeline.houses import write_house_home

    folder = tmp_path_factory.mktemp("house")
    write_house_home(folder)
    return folder


def test_sim_prints_the_timeline_of_an_episode_where_nobody_acts(house_dir):
    from homeloop.sim.task import load_tasks
    from homeloop.sim.wake import WAKE_EVENT_NAMES

    task = load_tasks()["handle_smoke_alarm"]
    result = invoke("sim", house_dir, "--task", task.id)
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("│")]
    wake = next(r for r in rows if WAKE_EVENT_NAMES[task.wake.kind] in r)
    assert "+0.0" in wake and "event" in wake
    ignition = next(r for r in rows if "ignition" in r)  # a pan left on a lit burner ignites
    assert "ground truth" in ignition and float(ignition.split("│")[1]) > 0
    assert f"final state at +{task.horizon_s:.1f} s" in result.output and "burning" in result.output


def test_sim_stops_after_the_seconds_asked(house_dir):
    result = invoke("sim", house_dir, "--task", "handle_smoke_alarm", "--seconds", "30")
    assert result.exit_code == 0, result.output
    assert "final state at +30.0 s" in result.output and "ignition" not in result.output


@pytest.mark.parametrize("args,phrases", [
    (("--task", "make_tea"), ("unknown task 'make_tea'", "handle_smoke_alarm")),
    (("--task", "handle_smoke_alarm", "--robot", "r2d2"), ("unknown robot body 'r2d2'", "unitree_g1_d_ultimate")),
])
def test_sim_with_an_unknown_task_or_robot(house_dir, args, phrases):
    assert_one_line_error(*_exit_and_output(invoke("sim", house_dir, *args)), *phrases)


def test_sim_without_a_home_file(tmp_path):
    assert_one_line_error(*_exit_and_output(invoke("sim", tmp_path, "--task", "handle_smoke_alarm")),
                          str(tmp_path / "home.json"), "no home file")


def test_sim_in_a_home_that_lacks_a_role(house_dir, tmp_path):
    from homeloop.core.home import Home

    home = Home.read(house_dir / "home.json")
    gone = {f.id for f in home.furniture if f.semantic_class == "dishwasher"}
    kept = [d for d in home.devices if not gone & {d.mounted_on, *d.monitors, *d.controls}]
    home.model_copy(update={"furniture": [f for f in home.furniture if f.id not in gone], "devices": kept}).write(
        tmp_path / "home.json")
    assert_one_line_error(*_exit_and_output(invoke("sim", tmp_path, "--task", "water_leak_response")),
                          "role 'dishwasher'", home.home_id)


def _exit_and_output(result):
    return result.exit_code, result.output


# --- file-system errors and empty sources -------------------------------------------


def test_generate_onto_an_existing_folder(tmp_path):
    result = invoke("generate", "--out", tmp_path, "--plans", "3", "--sites", "1")
    assert_one_line_error(result.exit_code, result.output, f"{tmp_path} is a folder", "give a file name")


def test_generate_under_a_file(tmp_path):
    """A path through a regular file: unwritable even for root (chmod is not)."""
    blocker = tmp_path / "somefile"
    blocker.write_text("not a folder")
    for out in (blocker / "x.csv", blocker / "deeper" / "x.csv"):
        result = invoke("generate", "--out", out, "--plans", "3", "--sites", "1")
        assert_one_line_error(result.exit_code, result.output, f"cannot write {out}", f"{blocker} is a file")


@pytest.fixture
def full_disk(monkeypatch):
    """Every atomic write (homeloop.core.io.atomic_path, wherever it was imported) fails as a
    full disk does: ENOSPC, with no file name."""
    import contextlib
    import errno
    import os
    import sys

    from homeloop.core import io

    @contextlib.contextmanager
    def no_space(path):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        yield  # pragma: no cover

    original = io.atomic_path
    for module in list(sys.modules.values()):
        if getattr(module, "atomic_path", None) is original:
            monkeypatch.setattr(module, "atomic_path", no_space)


def test_generate_on_a_full_disk(tmp_path, full_disk):
    import shutil

    result = invoke("generate", "--out", tmp_path / "plans.csv", "--plans", "3", "--sites", "1")
    line = assert_one_line_error(result.exit_code, result.output, f"no space left on the disk of {tmp_path}",
                                 "free some space")
    free = shutil.disk_usage(tmp_path).free
    assert re.search(r"\((\d+(\.\d)?) (B|KB|MB|GB|TB) free", line), line
    assert free > 0


def test_a_build_on_a_full_disk_stops_with_one_line(tmp_path, full_disk):
    from homeloop.core.errors import HomeLoopError
    from homeloop.pipeline.config import BuildConfig
    from homeloop.pipeline.stages import run_build

    out = tmp_path / "build"
    with pytest.raises(HomeLoopError, match=re.escape(f"no space left on the disk of {out} (")):
        run_build(BuildConfig(plans=3, sites=1, homes=1, out=out, workers=1, progress=False), log=lambda line: None)
    assert not (out / ".build.lock").exists()


@pytest.mark.slow
def test_build_with_a_header_only_source(generated_csv, tmp_path, tmp_path_factory):
    header = tmp_path / "header-only.csv"
    header.write_text(generated_csv.read_text().splitlines()[0] + "\n")
    result = run_cli(small_build_args(tmp_path / "out", "--source", str(header), "--workers", "1"),
                     env=subprocess_env(tmp_path_factory))
    assert_one_line_error(result.returncode, result.stdout, f"no plans in {header}", "0 rows read")
    assert "KeyError" not in result.stdout
    assert not (tmp_path / "out" / "manifest.json").exists()


# --- bench run: a model's prompt and image size -------------------------------------------------------


def _bench_run_openai(tmp_path, *extra: str):
    """``bench run`` of the openai agent at an endpoint nobody serves: bad options stop it before any request."""
    return invoke("bench", "run", "--agent", "openai", "--model", "m", "--base-url", "http://127.0.0.1:9/v1",
                  "--tasks", "handle_smoke_alarm", "--seeds", "0", "--out", tmp_path / "run", *extra)


def test_bench_run_with_an_unknown_prompt(tmp_path):
    from homeloop.bench.agents.conversation import PROMPTS

    result = _bench_run_openai(tmp_path, "--prompt", "terse")
    assert_one_line_error(result.exit_code, result.output, "unknown prompt 'terse'", *PROMPTS)
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("side", ["0", "-2"])
def test_bench_run_with_a_max_image_side_below_one(tmp_path, side):
    result = _bench_run_openai(tmp_path, "--max-image-side", side)
    assert_one_line_error(result.exit_code, result.output, "--max-image-side", "at least 1", f"got {side}")
    assert not (tmp_path / "run").exists()


def test_bench_run_of_an_agent_without_a_prompt_refuses_one(tmp_path):
    result = invoke("bench", "run", "--agent", "scripted", "--prompt", "calibrated", "--out", tmp_path / "run")
    assert_one_line_error(result.exit_code, result.output, "--prompt", "scripted", "only of: openai")


# --- bench replay-latency ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def latency_run(house_home, tmp_path_factory):
    """A run folder: a model's replies (with their latency) closing the water main in the leak, a
    transcript without latency in the smoke sensor fault, and a do-nothing episode without a model."""
    import json

    from homeloop.bench import runner as bench_runner
    from homeloop.sim.episode import Episode

    base = tmp_path_factory.mktemp("latency")
    homes = {"house": house_home.write(base / "house.json")}
    main = next(d.id for d in Episode(house_home, "water_leak_response", seed=0, images=False).world.devices.values()
                if d.type == "water_main")
    close = {"content": None, "latency_s": 40.0, "tool_calls": [{"id": "c1", "type": "function", "function": {
        "name": "hub_set_state", "arguments": {"device_id": main, "field": "state", "value": "closed"}}}]}
    with_latency, without = base / "with.jsonl", base / "without.jsonl"
    with_latency.write_text(json.dumps(close) + "\n" + json.dumps({"content": "Closed.", "latency_s": 5.0}) + "\n")
    without.write_text(json.dumps({"content": "Nothing to do."}) + "\n")
    out, flags = base / "run", bench_runner.Flags(images=False)
    for task, replies in (("water_leak_response", with_latency), ("smoke_sensor_fault", without)):
        bench_runner.run(bench_runner.plan(homes, [task], "unitree_g1_d_ultimate", [0], flags), "replay", out,
                         agent_options={"replies": str(replies), "model": "m"})
    # A run folder belongs to one agent: the episode without a model is run apart and its record put beside.
    bench_runner.run(bench_runner.plan(homes, ["leak_sensor_fault"], "unitree_g1_d_ultimate", [0], flags),
                     "do-nothing", base / "other")
    for record in (base / "other" / "episodes").glob("*.json"):
        (out / "episodes" / record.name).write_bytes(record.read_bytes())
    return out


def test_bench_replay_latency_adds_each_requests_latency_as_simulated_time(latency_run, tmp_path):
    from homeloop.bench.records import read_records

    result = invoke("bench", "replay-latency", latency_run, "--out", tmp_path / "replayed")
    assert result.exit_code == 0, result.output
    before = {r["world"]["task"]: r for r in read_records([latency_run]).records}
    after = {r["world"]["task"]: r for r in read_records([tmp_path / "replayed"]).records}
    flat = " ".join(result.output.split())
    assert f"skipped, no model replies to replay: {before['leak_sensor_fault']['episode_id']}" in flat
    assert f"replayed without added time, a request's latency is unknown: " \
           f"{before['smoke_sensor_fault']['episode_id']}" in flat
    assert sorted(after) == ["smoke_sensor_fault", "water_leak_response"]
    leak, latency = after["water_leak_response"], before["water_leak_response"]["model_calls"][0]["latency_s"]
    assert leak["calls"][0]["tool"] == "clock_wait" and leak["calls"][0]["data"]["waited_s"] == latency
    assert leak["acted_at"] == pytest.approx(before["water_leak_response"]["acted_at"] + latency)
    assert after["smoke_sensor_fault"]["calls"] == before["smoke_sensor_fault"]["calls"]
    assert "time_to_act" in result.output and "core tasks in the house" in flat


def test_bench_replay_latency_of_a_folder_that_is_no_run(tmp_path):
    result = invoke("bench", "replay-latency", tmp_path / "nowhere", "--out", tmp_path / "replayed")
    assert_one_line_error(result.exit_code, result.output, "nowhere", "not a run folder")


# --- values printed as they are, seeds, counts and times out of range ------------------------------


def test_markup_in_a_path_or_task_name_is_printed_as_it_is(house_dir, tmp_path):
    folder = tmp_path / "[bold]home[/]"
    line = assert_one_line_error(*_exit_and_output(invoke("sim", folder, "--task", "handle_smoke_alarm")))
    assert line == f"error: {folder / 'home.json'}: no home file; give a folder holding home.json, e.g. " \
                   "outputs/default/homes/house"
    line = assert_one_line_error(*_exit_and_output(invoke("sim", house_dir, "--task", "[bold]tea[/]")))
    assert line.startswith("error: unknown task '[bold]tea[/]'; ")
    result = invoke("bench", "view", tmp_path / "[/]")
    assert_one_line_error(result.exit_code, result.output, f"{tmp_path / '[/]'}: not a run folder")


def _usage_error(result, *phrases: str) -> str:
    """Exit code 2 and the one message line of the command line's usage error box."""
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output[-3000:]
    boxed = [line for line in result.output.splitlines() if line.startswith("│")]
    assert len(boxed) == 1, result.output
    for phrase in phrases:
        assert phrase in boxed[0], boxed[0]
    return boxed[0]


@pytest.mark.parametrize("command", [
    ("sim", "{house}", "--task", "handle_smoke_alarm"),
    ("render", "{house}", "--camera", "robot", "--task", "handle_smoke_alarm", "--out", "{tmp}/r.png"),
    ("build", "--out", "{tmp}/build"),
    ("generate", "--out", "{tmp}/g.csv", "--plans", "2", "--sites", "1"),
    ("bench", "run", "--agent", "scripted", "--out", "{tmp}/run"),
])
def test_a_negative_seed_is_one_line(command, house_dir, tmp_path):
    args = [a.format(house=house_dir, tmp=tmp_path) for a in command]
    _usage_error(invoke(*args, "--seed", "-1"), "'--seed'", "greater than or equal to 0")
    assert list(tmp_path.iterdir()) == []


def test_bench_run_with_a_negative_seed_makes_no_run_folder(tmp_path):
    result = invoke("bench", "run", "--agent", "scripted", "--seeds", "0,-1", "--out", tmp_path / "run")
    assert_one_line_error(result.exit_code, result.output, "--seeds 0,-1", "from 0 up", "got -1")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("command", ["generate", "build"])
def test_more_sites_than_plans_is_one_line_before_any_work(command, tmp_path):
    out = tmp_path / ("g.csv" if command == "generate" else "build")
    result = invoke(command, "--out", out, "--plans", "3", "--sites", "10")
    line = assert_one_line_error(result.exit_code, result.output, "--sites 10 with --plans 3", "from 1 to 3")
    assert len(result.output.splitlines()) == 1, result.output
    assert line and list(tmp_path.iterdir()) == []


def test_render_at_without_a_task_is_one_line(house_dir, tmp_path):
    result = invoke("render", house_dir, "--camera", "robot", "--at", "10", "--out", tmp_path / "r.png")
    assert_one_line_error(result.exit_code, result.output, "--at 10", "give --task too")
    assert not (tmp_path / "r.png").exists()


@pytest.mark.parametrize("seconds", ["99999", "nan", "-5"])
def test_times_outside_a_tasks_episode_are_one_line(house_dir, tmp_path, seconds):
    from homeloop.sim.task import load_tasks

    horizon = f"{load_tasks()['handle_smoke_alarm'].horizon_s:g}"
    result = invoke("render", house_dir, "--camera", "robot", "--task", "handle_smoke_alarm", "--at", seconds,
                    "--out", tmp_path / "r.png")
    assert_one_line_error(result.exit_code, result.output, f"--at {float(seconds):g}", f"0 to {horizon} seconds")
    result = invoke("sim", house_dir, "--task", "handle_smoke_alarm", "--seconds", seconds)
    assert_one_line_error(result.exit_code, result.output, f"--seconds {float(seconds):g}",
                          f"more than 0 to {horizon} seconds")
    assert not (tmp_path / "r.png").exists()


def _broken_house(house_dir, folder, edit):
    """The house's home file with ``edit`` applied to its JSON, in ``folder``; returns the folder."""
    import json

    data = json.loads((house_dir / "home.json").read_text(encoding="utf-8"))
    edit(data)
    (folder / "home.json").write_text(json.dumps(data), encoding="utf-8")
    return folder


def _kitchen(data):
    return next(r for r in data["rooms"] if r["type"] == "KITCHEN")


def _bow_tie(data):
    (x0, y0, x1, y1) = __import__("shapely").Polygon(_kitchen(data)["polygon"][0]).bounds
    _kitchen(data)["polygon"] = [[[x0, y0], [x1, y1], [x1, y0], [x0, y1]]]


def _postage_stamp(data):
    x, y = _kitchen(data)["polygon"][0][0]
    _kitchen(data)["polygon"] = [[[x, y], [x + 0.1, y], [x + 0.1, y + 0.1], [x, y + 0.1]]]


def _far_away(data):
    next(d for d in data["devices"] if d["type"] == "smoke_sensor")["pose"]["x"] = 1e308


@pytest.mark.parametrize("command", ["sim", "render"])
@pytest.mark.parametrize("edit, phrases", [
    (_bow_tie, ["room ", "(kitchen)", "Self-intersection"]),
    (_postage_stamp, ["room ", "(kitchen)", "0.01 m² of floor", "m² a room of type KITCHEN (indoor) needs"]),
    (_far_away, ["device 'smoke_", "1e+308 m is beyond"]),
])
def test_a_home_file_with_bad_geometry_is_one_line_naming_the_room_or_device(house_dir, tmp_path, command,
                                                                             edit, phrases):
    folder = _broken_house(house_dir, tmp_path, edit)
    args = ["--task", "handle_smoke_alarm"] if command == "sim" else ["--camera", "robot", "--task",
                                                                       "handle_smoke_alarm", "--out", tmp_path / "r.png"]
    result = invoke(command, folder, *args)
    assert_one_line_error(result.exit_code, result.output, str(folder / "home.json"), *phrases)
    assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "r.png").exists()


def test_bench_score_names_unscorable_outcome_rows_and_marks_missing_tasks(tmp_path):
    from homeloop.bench.scoring import INCOMPLETE
    from homeloop.sim.task import load_tasks

    core = [t for t, task in load_tasks().items() if task.core]
    rows = [f"m,{t},0,true,5,200" for t in core[1:]] + [f"m,{core[0]},0,true,-5,200", f"m,{core[0]},1,true,5,0"]
    path = tmp_path / "o.csv"
    path.write_text("model,task,seed,passed,units,budget\n" + "\n".join(rows) + "\n", encoding="utf-8")
    result = invoke("bench", "score", "--outcomes", path, "--out", tmp_path / "tables")
    assert result.exit_code == 0, result.output
    n = len(core) + 1  # the header is line 1
    assert f"skipped: {path}: row {n}: units must be a number 0 or more, got '-5'" in result.output
    assert f"skipped: {path}: row {n + 1}: budget must be a number above 0, got '0'" in result.output
    main = pd.read_csv(tmp_path / "tables" / "main.csv", keep_default_na=False).set_index("model").loc["m"]
    assert main["balanced"] == INCOMPLETE and main[load_tasks()[core[0]].family] == INCOMPLETE
    assert core[0] in main["missing"]
    assert "inf" not in (tmp_path / "tables" / "skill_cost.csv").read_text()


# --- the command line itself: light to load, the build's options from BuildConfig ---------------------

#: What neither ``import homeloop.cli`` nor any command's ``--help`` may load: each command imports
#: what it runs when it runs.
HEAVY = ("pandas", "numpy", "prefect", "dask", "distributed", "homeloop.sim")


def test_the_command_line_and_every_help_load_no_heavy_module():
    import json
    import subprocess
    import sys

    script = ("import json, sys\n"
              "import homeloop.cli\n"
              "imported = sorted(sys.modules)\n"
              "from typer.main import get_command\n"
              "from typer.testing import CliRunner\n"
              "CliRunner().invoke(homeloop.cli.app, ['--help'])\n"
              "listed = sorted(sys.modules)\n"
              "from homeloop.cli.common import every_command\n"
              "codes = [CliRunner().invoke(homeloop.cli.app, [*p, '--help']).exit_code\n"
              "         for p in [(), *dict(every_command(get_command(homeloop.cli.app)))]]\n"
              "print(json.dumps({'import': imported, 'listed': listed, 'help': sorted(sys.modules), 'codes': codes}))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    found = json.loads(done.stdout)
    assert len(found["codes"]) > 10 and set(found["codes"]) == {0}
    for when in ("import", "help"):
        loaded = [m for m in found[when] if any(m == h or m.startswith(h + ".") for h in HEAVY)]
        assert loaded == [], f"{when}: {loaded[:5]}"
    # ``homeloop --help`` lists the commands without loading one of their modules (nor pydantic)
    command_modules = {f"homeloop.cli.{entry.module}" for entry in COMMANDS.values()}
    loaded = [m for m in found["listed"] if m in command_modules or m == "pydantic" or m.startswith("pydantic.")]
    assert loaded == []


def test_the_list_of_commands_shows_each_commands_own_summary():
    """``homeloop --help`` lists each command by its entry's summary, without loading it; loaded, the
    command is the function or group the entry names, under its name."""
    result = CliRunner().invoke(app, ["--help"], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    top = get_command(app)
    ctx = top.context_class(top)
    assert top.list_commands(ctx) == list(COMMANDS)
    for name, entry in COMMANDS.items():
        assert entry.summary in result.output, name
        command = top.get_command(ctx, name)
        assert command.name == name and command.get_short_help_str(limit=300) == entry.summary
    assert top.get_command(ctx, "nope") is None


def test_every_build_parameter_is_an_option_of_build_with_its_default_and_help():
    from homeloop.cli.build import BUILD_OPTIONS
    from homeloop.pipeline.config import BuildConfig

    assert set(BuildConfig.model_fields) - {"progress"} == set(BUILD_OPTIONS)
    params = {p.name: p for p in dict(every_command(get_command(app)))[("build",)].params}
    assert list(params) == list(BUILD_OPTIONS)
    for name, field in BuildConfig.model_fields.items():
        if name in params:
            default = params[name].default
            assert default == (field.default if BUILD_OPTIONS[name].read is None or field.default is None
                               else str(field.default)), name
            assert params[name].help == field.description, name
    bounds = {name: params[name].min for name in ("plans", "sites", "homes", "seed", "workers")}
    assert bounds == {"plans": 1, "sites": 1, "homes": 1, "seed": 0, "workers": 1}  # the fields' ge


def test_the_build_command_hands_the_flow_one_build_config(monkeypatch, tmp_path):
    from homeloop.flows import command
    from homeloop.pipeline.config import BuildConfig

    handed = []

    def build_command(config, say):
        handed.append(config)
        return {"build": "b", "out": str(config.out_dir), "counts": {}, "outputs": {}}

    monkeypatch.setattr(command, "build_command", build_command)
    result = invoke("build", "--plans", "7", "--sites", "3", "--homes", "2", "--seed", "4", "--out", tmp_path,
                    "--usda", "--no-verify", "--verify-robots", "a, b", "--verify-seeds", "1,0,1",
                    "--verify-homes", "all", "--workers", "1")
    assert result.exit_code == 0, result.output
    assert handed == [BuildConfig(plans=7, sites=3, homes=2, seed=4, out=tmp_path, usda=True, verify=False,
                                  verify_robots=("a", "b"), verify_seeds=(0, 1), verify_homes=None, workers=1)]
    result = invoke("build", "--plans", "7", "--sites", "3", "--out", tmp_path)
    assert handed[-1] == BuildConfig(plans=7, sites=3, out=tmp_path)
