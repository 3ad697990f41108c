"""Agents as plug-ins (docs/agents.md, "Plug-ins"): ``--agent module.path:Name`` and entry points.

A module written into ``tmp_path`` and put on ``PYTHONPATH`` plays the scripted route of a task
through ``homeloop bench run`` in a subprocess and gives the built-in scripted agent's record, but
for who played it; the page's example agent runs the same way. Bad plug-ins get one error line
naming the path, or, raising mid-episode, end their episodes ``agent_error`` while the run goes on.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from homeloop.bench import runner
from homeloop.bench.agents import AGENTS, AgentError, find_agent, known_agents, make_agent
from homeloop.bench.records import read_records
from homeloop.core.ids import DEFAULT_ROBOT, HOUSE_ID

ROOT = Path(__file__).resolve().parent.parent
TASK = "kitchen_fire_emergency"

#: Plug-ins, good and bad, as a user would write them.
PLUGINS = textwrap.dedent('''
    """Agents from outside HomeLoop."""

    from homeloop.bench.agents.scripted import PLANS, Household


    class RouteFollower:
        """Follows the reference route of the task, as the scripted agent does."""

        name = "route-follower"
        model = None
        usage = None

        def __init__(self, **options):
            self.options = options

        def run(self, episode):
            household = Household(episode)
            PLANS[episode.task.id](household)
            episode.stop("; ".join(household.done) + ".")


    class NoRun:
        name, model, usage = "no-run", None, None

        def __init__(self, **options):
            pass


    class Unready(RouteFollower):
        def __init__(self, **options):
            raise RuntimeError("no model loaded")


    class Midway(RouteFollower):
        name = "midway"

        def run(self, episode):
            episode.call("hub_list_devices")
            raise KeyError("lost track of the stove")


    NOT_A_CLASS = 42
''')


def _error_line(output: str) -> str:
    lines = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and "Traceback" not in output, output[-3000:]
    return lines[0]


def _bench_run(agent: str, out: Path, folder: Path, *tasks: str) -> subprocess.CompletedProcess[str]:
    """``homeloop bench run`` in a subprocess with ``folder`` on PYTHONPATH."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]),
           "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "homeloop.cli", "bench", "run", "--agent", agent,
                           "--tasks", ",".join(tasks or (TASK,)), "--homes", HOUSE_ID, "--seeds", "0",
                           "--out", str(out)], cwd=folder, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The plug-in module in a folder on the import path (here and for subprocesses)."""
    folder = tmp_path / "plugins"
    folder.mkdir()
    (folder / "outside_agents.py").write_text(PLUGINS, encoding="utf-8")
    monkeypatch.syspath_prepend(str(folder))
    yield folder
    sys.modules.pop("outside_agents", None)


def test_a_plugin_by_path_gives_the_scripted_agents_record(plugins: Path, house_file: Path, tmp_path: Path) -> None:
    done = _bench_run("outside_agents:RouteFollower", tmp_path / "plugin", plugins)
    assert done.returncode == 0, done.stdout + done.stderr
    (played,) = read_records([tmp_path / "plugin"]).records
    runner.run(runner.plan({HOUSE_ID: house_file}, [TASK], DEFAULT_ROBOT, [0]), "scripted", tmp_path / "scripted")
    (reference,) = read_records([tmp_path / "scripted"]).records
    assert played["agent"] == {"name": "route-follower", "model": None}
    assert reference["passed"] and reference["calls"]
    assert {k: v for k, v in played.items() if k != "agent"} == {k: v for k, v in reference.items() if k != "agent"}
    again = _bench_run("outside_agents:RouteFollower", tmp_path / "plugin", plugins)  # resumes its own run
    assert again.returncode == 0, again.stdout + again.stderr
    assert read_records([tmp_path / "plugin"]).records == [played]


def test_the_pages_example_plugin_runs(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "agents.md").read_text(encoding="utf-8")
    (example,) = re.findall(r"<!-- example: plugin-agent -->\n```python\n(.*?)```", text, flags=re.S)
    folder = tmp_path / "plugin"
    folder.mkdir()
    (folder / "my_agent.py").write_text(example, encoding="utf-8")
    done = _bench_run("my_agent:CameraRound", tmp_path / "run", folder, "doorbell_false_alarm")
    assert done.returncode == 0, done.stdout + done.stderr
    (record,) = read_records([tmp_path / "run"]).records
    tools = [c["tool"] for c in record["calls"]]
    assert record["agent"]["name"] == "camera-round" and record["ended_by"] == "stop"
    assert tools[0] == "cameras_list_cameras" and "cameras_capture" in tools and tools[-1] == "messaging_send"
    cameras = len(record["calls"][0]["data"]["cameras"])
    assert record["summary"].startswith(f"I looked through {cameras} cameras: ")


@pytest.mark.parametrize(("agent", "says"), [
    ("nowhere_at_all:Agent", "agent nowhere_at_all:Agent: no module named 'nowhere_at_all' on the import path"),
    ("outside_agents:Missing", "agent outside_agents:Missing: no attribute 'Missing' in module outside_agents"),
    ("outside_agents:NOT_A_CLASS", "agent outside_agents:NOT_A_CLASS: a int, not an agent class or factory"),
    ("outside_agents:NoRun", "agent outside_agents:NoRun: a NoRun does not implement the Agent protocol "
                             "(docs/agents.md): it has no run(episode)"),
    ("outside_agents:Unready", "agent outside_agents:Unready: making it raised RuntimeError: no model loaded"),
    ("no-such-agent", "unknown agent 'no-such-agent'; agents: "),
])
def test_a_bad_plugin_is_one_line(plugins: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, agent: str,
                                  says: str) -> None:
    from homeloop.cli import app
    from homeloop.pipeline import houses

    monkeypatch.setattr(houses, "write_house_home", lambda folder: pytest.fail("the house is not needed"))
    result = CliRunner().invoke(app, ["bench", "run", "--agent", agent, "--tasks", TASK, "--homes", HOUSE_ID,
                                      "--seeds", "0", "--out", str(tmp_path / "run")],
                                env={"COLUMNS": "300", "NO_COLOR": "1"})
    assert result.exit_code == 2, result.output
    assert says in _error_line(result.output)
    assert not (tmp_path / "run").exists()  # refused before anything is written


def test_a_plugin_raising_mid_episode_ends_it_agent_error_and_the_run_goes_on(plugins: Path, house_file: Path,
                                                                              tmp_path: Path) -> None:
    tasks = [TASK, "handle_smoke_alarm"]
    done = runner.run(runner.plan({HOUSE_ID: house_file}, tasks, DEFAULT_ROBOT, [0]), "outside_agents:Midway",
                      tmp_path / "run")
    assert len(done) == len(tasks)
    records = read_records([tmp_path / "run"]).records
    assert sorted(r["world"]["task"] for r in records) == sorted(tasks)
    for record in records:
        assert (record["ended_by"], record["passed"]) == ("agent_error", False)
        assert record["agent"]["error"] == "KeyError: 'lost track of the stove'"
        assert [c["tool"] for c in record["calls"]] == ["hub_list_devices"]


def test_built_in_agents_are_entry_points_and_read_through_the_same_lookup() -> None:
    from homeloop.bench.agents.registry import entry_points, load_builtin_agents

    load_builtin_agents()
    declared = {name: point.value for name, point in entry_points().items() if point.module.startswith("homeloop.")}
    assert sorted(declared) == sorted(AGENTS) and set(declared) <= set(known_agents())
    for name, value in declared.items():  # the class registered by name is the entry point's, by path too
        module, _, attribute = value.partition(":")
        assert AGENTS[name] is getattr(sys.modules[module], attribute) is find_agent(value)
    with pytest.raises(AgentError, match="give a plug-in as module.path:Name"):
        make_agent(":Nothing")


def test_making_an_agent_imports_only_its_own_module() -> None:
    """The scripted agent does not load the model clients' modules (nor openai's SDK)."""
    probe = ("import sys; from homeloop.bench.agents import make_agent; make_agent('scripted'); "
             "print(sorted(m for m in ('openai', 'homeloop.bench.agents.openai_agent') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "[]", done.stdout + done.stderr


def test_a_plugin_lookup_leaves_no_trace_in_the_registry(plugins: Path) -> None:
    before = dict(AGENTS)
    agent = make_agent("outside_agents:RouteFollower", flag=1)
    assert agent.name == "route-follower" and agent.options == {"flag": 1}  # type: ignore[attr-defined]
    assert AGENTS == before
