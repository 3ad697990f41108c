"""The build's temporary Prefect server (homeloop.flows.temporary_server), started for real on
loopback in a child process with its own Prefect home; every process it starts is stopped."""

from __future__ import annotations

import json

import psutil
import pytest

from build_fixtures import BIN, run_cli, subprocess_env

pytestmark = pytest.mark.slow

#: Starts a server with a ``while_starting`` that records whether the server answered yet, or
#: raises; prints what happened as JSON, and the server's pid.
_START = """
import json, sys
from homeloop.flows.temporary_server import healthy, start, stop
seen = []
def while_starting():
    seen.append("called")
    if sys.argv[1] == "raise":
        raise RuntimeError("stopped while the server started")
try:
    proc, url = start(180, while_starting)
except RuntimeError as exc:
    print(json.dumps({"error": str(exc), "seen": seen}))
    sys.exit(0)
print(json.dumps({"answers": healthy(url), "seen": seen, "pid": proc.pid}))
stop(proc)
"""


def _start(mode: str, tmp_path, tmp_path_factory) -> dict:
    env = subprocess_env(tmp_path_factory, PREFECT_HOME=str(tmp_path / "prefect"))
    done = run_cli([str(BIN / "python"), "-c", _START, mode], env=env, timeout=300, cwd=tmp_path)
    assert done.returncode == 0, done.stdout[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_the_build_works_once_while_the_server_loads(tmp_path, tmp_path_factory):
    """The build imports its report modules while the server loads (1 s it would otherwise
    wait): the work runs once, and the server still answers when start returns."""
    result = _start("ok", tmp_path, tmp_path_factory)
    assert result["seen"] == ["called"] and result["answers"] is True
    assert not psutil.pid_exists(result["pid"]) or psutil.Process(result["pid"]).status() == psutil.STATUS_ZOMBIE


def test_a_failure_while_the_server_loads_stops_the_server(tmp_path, tmp_path_factory):
    """Ctrl-C or an error in that work: the error reaches the caller and no server is left."""
    before = {p.pid for p in psutil.process_iter()}
    result = _start("raise", tmp_path, tmp_path_factory)
    assert result == {"error": "stopped while the server started", "seen": ["called"]}
    left = [p for p in psutil.process_iter(["cmdline"]) if p.pid not in before
            and "homeloop.flows.temporary_server" in " ".join(p.info["cmdline"] or [])]
    assert left == []
