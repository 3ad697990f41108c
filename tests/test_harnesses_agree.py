"""One policy, every harness (docs/agents.md): the same records and the same main table.

The calls the scripted agent makes in :data:`HARNESS_TASK` are played through each way in: ``bench
run`` with the scripted agent (the ``scripted`` fixture), ``bench run`` with a plug-in given as
``module.path:Name`` that follows the same route, Inspect (``mockllm/model`` replying with those
calls, then ``finish``), and MCP (the SDK's client over stdio to ``homeloop mcp``). Every record
is bench run's but for who played it and what a model's requests cost, and ``homeloop bench score``
gives the same main table from each run folder and from the Inspect log, but for the row's label.
The helpers are those of each harness's own tests.
"""

from __future__ import annotations

import asyncio
import csv
import io
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import StdioServerParameters
from typer.testing import CliRunner

from homeloop.bench.records import read_records
from homeloop.harness.inspect_logs import iter_log_records

from conftest import HARNESS_TASK as TASK
from test_agent_plugins import PLUGINS, _bench_run
from test_inspect import MODEL_FIELDS, Policy, house_task, play, scripted_replies
from test_mcp import _command, _env, _play

pytestmark = pytest.mark.slow

#: The column of the main table that names who played (agent, or model and prompt).
LABEL = "model"


def _main_table(source: Path, out: Path) -> list[dict[str, str]]:
    """``homeloop bench score SOURCE``'s main table, as the CSV it writes."""
    from homeloop.cli import app

    result = CliRunner().invoke(app, ["bench", "score", str(source), "--out", str(out)],
                                env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 0 and "skipped" not in result.output, result.output
    return list(csv.DictReader(io.StringIO((out / "main.csv").read_text(encoding="utf-8"))))


def _episode_part(record: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in record.items() if k not in MODEL_FIELDS}


def test_one_scripted_policy_gives_the_same_record_and_table_through_every_harness(
        scripted: tuple[dict[str, Any], Path], house_file: Path, tmp_path: Path) -> None:
    record, scripted_out = scripted
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "outside_agents.py").write_text(PLUGINS, encoding="utf-8")
    done = _bench_run("outside_agents:RouteFollower", tmp_path / "plugin", plugins, TASK)
    assert done.returncode == 0, done.stdout + done.stderr
    asyncio.run(_play(StdioServerParameters(command=sys.executable, args=_command(house_file, tmp_path / "mcp"),
                                            env=_env()), record))
    log = play(house_task(house_file, tmp_path / "inspect"), Policy(scripted_replies(record)), tmp_path / "logs")
    assert log.status == "success"

    sources = {"bench run": scripted_out, "plug-in": tmp_path / "plugin", "mcp": tmp_path / "mcp",
               "inspect": tmp_path / "logs"}
    records = {name: read_records([path]).records for name, path in sources.items() if name != "inspect"}
    records["inspect"] = [r for _, r, _ in iter_log_records([tmp_path / "logs"]) if r is not None]
    assert records["inspect"] == read_records([tmp_path / "inspect"]).records  # the log's is the run folder's
    for name, (played,) in records.items():
        assert _episode_part(played) == _episode_part(record), name
    assert {name: rs[0]["agent"]["name"] for name, rs in records.items()} == {
        "bench run": "scripted", "plug-in": "route-follower", "mcp": "mcp", "inspect": "inspect"}

    tables = {name: _main_table(path, tmp_path / "scores" / name.replace(" ", "-")) for name, path in sources.items()}
    assert {name: [row[LABEL] for row in rows] for name, rows in tables.items()} == {
        "bench run": ["scripted"], "plug-in": ["route-follower"], "mcp": ["mcp"],
        "inspect": ["mockllm/model (paper prompt)"]}
    unlabelled = {name: [{k: v for k, v in row.items() if k != LABEL} for row in rows] for name, rows in tables.items()}
    assert unlabelled["plug-in"] == unlabelled["mcp"] == unlabelled["inspect"] == unlabelled["bench run"]
    assert unlabelled["bench run"][0]["passed_seed0"] == "1"
