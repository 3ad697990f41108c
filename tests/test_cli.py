"""The ``homeloop`` command: what a user types and what they get back.

Happy paths of generate, ingest, show and audit run in this process; ``build``
with bad input runs as a subprocess (it starts Prefect), and every bad input
ends with exit code 2 and one line that says what is wrong and how to fix it.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest
from typer.testing import CliRunner

from build_fixtures import free_port, run_cli, small_build_args, subprocess_env
from homeloop.cli import app

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
    from homeloop.bench.tasks import load_tasks
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
    from homeloop.home import Home

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
    """Every atomic write (homeloop.io.atomic_path, wherever it was imported) fails as a
    full disk does: ENOSPC, with no file name."""
    import contextlib
    import errno
    import os
    import sys

    from homeloop import io

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
    from homeloop.errors import HomeLoopError
    from homeloop.pipeline.stages import BuildConfig, run_build

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
