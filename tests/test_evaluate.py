"""Evaluation over a build: the pairs a run takes from the build's tables, a sample of homes,
episodes on a Dask cluster, the evaluate deployment on a real Prefect server, and the
episodes table of the queries (docs/scores.md, docs/pipeline.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from homeloop.bench.pairs import HOUSE, NOT_RUN_NO_VERIFY, NOT_RUN_ROBOT, sample_homes, select_pairs
from homeloop.cli import app
from homeloop.core.errors import HomeLoopError
from homeloop.sim.episode import DEFAULT_ROBOT

#: Quick tasks (a few calls each) for the runs below.
TASKS = ("kitchen_fire_emergency", "smoke_sensor_fault", "fall_false_alarm")


def fake_build(folder: Path, rows: list[dict], parameters: dict | None = None) -> Path:
    """A build folder with an applicability table and (empty) home files for its homes."""
    table = pd.DataFrame(rows)
    table.to_parquet(folder / "applicability.parquet", index=False)
    for home in set(table["home"]):
        (folder / "homes" / home).mkdir(parents=True, exist_ok=True)
        (folder / "homes" / home / "home.json").write_text("{}")
    if parameters is not None:
        (folder / "manifest.json").write_text(json.dumps({"parameters": parameters}))
    return folder


def row(home: str, task: str, verified: bool, reason: str = "", robot: str = DEFAULT_ROBOT,
        applicable: bool = True) -> dict:
    return {"home": home, "task": task, "family": "hazards", "robot": robot, "applicable": applicable,
            "verified": verified, "verify_reason": reason}


def test_the_flows_and_the_command_line_import_no_private_name_of_another_module():
    """The evaluate flow and ``homeloop bench run`` share how a run is planned and run through public
    functions (homeloop.bench.run_plan, homeloop.flows.episodes, homeloop.flows.runtime)."""
    import ast

    root = Path(__file__).resolve().parents[1]
    private = []
    for path in sorted([*(root / "homeloop" / "flows").rglob("*.py"), *(root / "homeloop" / "cli").rglob("*.py")]):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("homeloop"):
                private += [f"{path.name}: {node.module}.{a.name}" for a in node.names if a.name.startswith("_")]
    assert private == []


def test_a_run_over_a_build_takes_its_verified_pairs(tmp_path):
    build = fake_build(tmp_path, [
        row(HOUSE, "t1", True), row(HOUSE, "t2", True),
        row("h1", "t1", True), row("h1", "t2", False, "checks failed: stove_off"),
        row("h2", "t1", False, applicable=False), row("h2", "t2", True, robot="other_body"),
    ])
    chosen = select_pairs(build, DEFAULT_ROBOT, ["t1", "t2"])
    assert chosen.pairs == [("h1", "t1"), (HOUSE, "t1"), (HOUSE, "t2")]
    assert set(chosen.home_files) == {"h1", HOUSE}
    assert any("1 screened pairs skipped as not verified (1 failed" in n for n in chosen.notes)
    screened = select_pairs(build, DEFAULT_ROBOT, ["t1", "t2"], verified_only=False)
    assert screened.pairs == [("h1", "t1"), ("h1", "t2"), (HOUSE, "t1"), (HOUSE, "t2")]
    assert select_pairs(build, DEFAULT_ROBOT, ["t2"], homes=[HOUSE]).pairs == [(HOUSE, "t2")]


def test_a_build_made_without_verification_says_so_in_one_line(tmp_path):
    build = fake_build(tmp_path, [row(HOUSE, "t1", False, NOT_RUN_NO_VERIFY), row("h1", "t1", False, NOT_RUN_NO_VERIFY)])
    with pytest.raises(HomeLoopError, match="built with --no-verify") as caught:
        select_pairs(build, DEFAULT_ROBOT, ["t1"])
    assert "\n" not in str(caught.value)
    assert len(select_pairs(build, DEFAULT_ROBOT, ["t1"], verified_only=False).pairs) == 2


def test_a_body_not_verified_is_named_with_those_that_were(tmp_path):
    build = fake_build(tmp_path, [row(HOUSE, "t1", False, NOT_RUN_ROBOT, robot="pal_tiago")],
                       {"verify": {"robots": [DEFAULT_ROBOT], "seeds": [0]}})
    with pytest.raises(HomeLoopError, match=f"robot pal_tiago was not verified \\(verified: {DEFAULT_ROBOT}\\)"):
        select_pairs(build, "pal_tiago", ["t1"])


def test_a_sample_adds_the_house_and_is_drawn_from_the_verified_pairs(tmp_path):
    rows = [row(HOUSE, "t1", True)]
    for i in range(8):
        rows += [row(f"h{i}", "t1", i % 2 == 0), row(f"h{i}", "t2", True)]
    build = fake_build(tmp_path, rows)
    chosen = select_pairs(build, DEFAULT_ROBOT, ["t1", "t2"], sample=3, seed=5)
    table = pd.DataFrame(rows)
    verified = table[table["verified"]]
    drawn = sample_homes(verified, 3, "task", 5)
    assert set(chosen.home_files) == {*drawn, HOUSE}
    kept = verified[verified["home"].isin([*drawn, HOUSE])]
    assert chosen.pairs == sorted(zip(kept["home"], kept["task"]))
    assert any("sample of 3 homes (stratified by task, seed 5) and the house" in n for n in chosen.notes)
    assert select_pairs(build, DEFAULT_ROBOT, ["t1", "t2"], sample=3, seed=5).pairs == chosen.pairs
    with pytest.raises(HomeLoopError, match="--stratify"):
        select_pairs(build, DEFAULT_ROBOT, ["t1"], sample=3, stratify="room")


def test_bench_run_over_a_build_without_verification_stops_with_one_line(tmp_path):
    (tmp_path / "build").mkdir()
    build = fake_build(tmp_path / "build", [row(HOUSE, t, False, NOT_RUN_NO_VERIFY) for t in TASKS])
    result = CliRunner().invoke(app, ["bench", "run", "--agent", "scripted", "--homes", str(build), "--tasks",
                                      ",".join(TASKS), "--out", str(tmp_path / "run")])
    assert result.exit_code == 2
    assert "built with --no-verify" in result.output and "Traceback" not in result.output


# --- runs over the small build ------------------------------------------------------------------


@pytest.fixture(scope="module")
def small_build(tmp_path_factory) -> Path:
    from build_fixtures import reference_build

    return Path(reference_build(tmp_path_factory)["out"])


def expected_pairs(build: Path, sample: int) -> set[tuple[str, str]]:
    """The verified pairs of the quick tasks in the house and the sampled homes, from the tables."""
    table = pd.read_parquet(build / "applicability.parquet")
    verified = table[table["verified"] & (table["robot"] == DEFAULT_ROBOT) & table["task"].isin(TASKS)]
    kept = verified[verified["home"].isin({*sample_homes(verified, sample, "task", 0), HOUSE})]
    return set(zip(kept["home"], kept["task"]))


def run_records(run_dir: Path) -> dict[tuple[str, str], dict]:
    from homeloop.bench.records import read_records

    return {(r["world"]["home"], r["task"]["id"]): r for r in read_records([run_dir]).records}


@pytest.mark.slow
def test_bench_run_over_a_sample_of_the_build_and_on_a_dask_cluster(small_build, tmp_path):
    """The verified pairs of a sample pass for the scripted agent (as they did when the build
    verified them), the further-homes table compares them with the house, and the same run on a
    Dask cluster started apart writes the same outcomes."""
    from distributed import Client

    from dask_cluster import running_cluster
    from homeloop.bench import scoring

    args = ["bench", "run", "--agent", "scripted", "--homes", str(small_build), "--sample", "2", "--tasks",
            ",".join(TASKS), "--seeds", "0", "--no-images"]
    local = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "local")])
    assert local.exit_code == 0, local.output
    records = run_records(tmp_path / "local")
    assert set(records) == expected_pairs(small_build, 2)
    assert all(r["passed"] for r in records.values())
    assert re.search(r"\d+ verified pairs in 3 homes × 1 seeds", local.output)
    further = scoring.further_homes(scoring.outcomes_from_run_dirs([tmp_path / "local"]).frame)
    assert not further.empty and set(further["other_homes"]) == {100.0}

    with running_cluster(tmp_path, workers=2) as address, Client(address, timeout=60) as client:
        on_dask = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "dask"), "--dask-address", address])
        prefixes = client.run_on_scheduler(lambda dask_scheduler: sorted(dask_scheduler.task_prefixes))
    assert on_dask.exit_code == 0, on_dask.output
    assert "run_seeds" in prefixes
    again = run_records(tmp_path / "dask")
    assert {k: (r["passed"], r["units_spent"], r["ended_by"]) for k, r in again.items()} == \
        {k: (r["passed"], r["units_spent"], r["ended_by"]) for k, r in records.items()}


@pytest.mark.slow
def test_the_episodes_table_joins_the_build(small_build, tmp_path):
    CliRunner().invoke(app, ["bench", "run", "--agent", "scripted", "--homes", f"{small_build}:{HOUSE}", "--tasks",
                             TASKS[0], "--seeds", "0,1", "--no-images", "--out", str(tmp_path / "run")])
    from homeloop.pipeline.queries import run_sql

    (tmp_path / "run" / "episodes" / "broken.json").write_text("{")
    warned: list[str] = []
    frame = run_sql(small_build, "select e.home, e.seed, e.agent, e.passed, a.verified from episodes e join "
                    "applicability a using (home, task, robot) order by e.seed", runs=[tmp_path / "run"],
                    warn=warned.append)
    assert frame.to_dict("records") == [{"home": HOUSE, "seed": s, "agent": "scripted", "passed": True,
                                         "verified": True} for s in (0, 1)]
    assert len(warned) == 1 and "broken.json" in warned[0]


# --- the evaluate deployment ----------------------------------------------------------------------


@pytest.mark.slow
def test_the_evaluate_deployment_runs_a_sample_and_logs_pass_counts(make_serve, small_build, tmp_path):
    """What `make serve` runs serves evaluate/default beside the build deployments; a run of it
    over a sample of the small build writes the records and logs each task's pass count."""
    from build_fixtures import BIN, run_cli

    assert "evaluate/default" in make_serve.said
    out = tmp_path / "run"
    params = {"agent": "scripted", "homes": str(small_build), "sample": 2, "tasks": ",".join(TASKS), "seeds": 0,
              "images": False, "out": str(out)}
    args = [str(BIN / "prefect"), "deployment", "run", "evaluate/default", "--watch", "--watch-timeout", "480"]
    for name, value in params.items():
        args += ["--param", f"{name}={json.dumps(value)}"]
    result = run_cli(args, env={**make_serve.env, "PREFECT_API_URL": make_serve.api}, timeout=540, cwd=tmp_path)
    log = make_serve.log()
    assert result.returncode == 0, result.stdout[-3000:] + log[-3000:]
    assert "Completed" in result.stdout
    records = run_records(out)
    assert set(records) == expected_pairs(small_build, 2)
    for task in TASKS:
        runs = [r for (_, t), r in records.items() if t == task]
        assert f"{task}: {sum(r['passed'] for r in runs)}/{len(runs)} passed" in log
    assert not (tmp_path / "outputs").exists()
