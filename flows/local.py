"""Start and stop a local Prefect server and the deployments it serves.

    python -m homeloop.flows.local start   # what `make serve` runs
    python -m homeloop.flows.local stop    # what `make stop` runs

The server listens on 127.0.0.1 and keeps its state in ``.prefect/`` inside
the project. Both processes run in the background; their pids and logs are
in ``.prefect/``, and ``.prefect/env.sh`` sets up a shell to talk to them.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from homeloop.flows.settings import DEFAULT_HOST, DEFAULT_PORT, PROJECT_ROOT, configure_prefect

STATE = PROJECT_ROOT / ".prefect"
SERVER_PID, SERVE_PID = STATE / "server.pid", STATE / "serve.pid"
#: A fresh server migrates its database first: give it time on a small machine.
STARTUP_TIMEOUT_S = 180
STOP_TIMEOUT_S = 30


def api_url(port: int = DEFAULT_PORT) -> str:
    return f"http://{DEFAULT_HOST}:{port}/api"


def healthy(url: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/health", timeout=timeout) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def _alive(pid_file: Path) -> int | None:
    try:
        pid = int(pid_file.read_text())
        os.kill(pid, 0)
        return pid
    except (OSError, ValueError):
        return None


def _spawn(args: list[str], log: Path, env: dict[str, str]) -> int:
    with open(log, "ab") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=PROJECT_ROOT,
                                start_new_session=True)
    return proc.pid


def start(port: int) -> int:
    configure_prefect()
    STATE.mkdir(exist_ok=True)
    url = api_url(port)
    env = dict(os.environ, PREFECT_API_URL=url)
    bin_dir = Path(sys.executable).parent
    if _alive(SERVER_PID) is None:
        pid = _spawn([str(bin_dir / "prefect"), "server", "start", "--host", DEFAULT_HOST, "--port", str(port)],
                     STATE / "server.log", env)
        SERVER_PID.write_text(str(pid))
        print(f"Prefect server starting on {url} (pid {pid}, log .prefect/server.log)")
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while not healthy(url):
        if _alive(SERVER_PID) is None:
            print(f"error: the Prefect server stopped; see {STATE / 'server.log'}", file=sys.stderr)
            return 2
        if time.monotonic() > deadline:
            print(f"error: the Prefect server did not answer at {url} within {STARTUP_TIMEOUT_S} s", file=sys.stderr)
            return 2
        time.sleep(1)
    if _alive(SERVE_PID) is None:
        pid = _spawn([sys.executable, "-m", "homeloop.flows.serve"], STATE / "serve.log", env)
        SERVE_PID.write_text(str(pid))
        print(f"serving deployments build-home-set/default and audit-source/default (pid {pid}, log .prefect/serve.log)")
    (STATE / "env.sh").write_text(
        f'export PREFECT_HOME="{STATE}"\nexport PREFECT_API_URL="{url}"\nexport PATH="{bin_dir}:$PATH"\n'
    )
    print(
        f"\nUI: http://{DEFAULT_HOST}:{port}\nIn a shell:\n  . .prefect/env.sh\n"
        "  prefect deployment run 'build-home-set/default'\n"
        "  prefect deployment run 'audit-source/default' --param source=path/to/geometries.csv\n"
        "Stop with: make stop"
    )
    return 0


def stop() -> int:
    for name, pid_file in (("serve", SERVE_PID), ("server", SERVER_PID)):
        pid = _alive(pid_file)
        if pid is None:
            pid_file.unlink(missing_ok=True)
            continue
        # SIGINT lets Prefect shut down cleanly (it ignores a polite SIGTERM for a while).
        os.killpg(pid, signal.SIGINT)
        deadline = time.monotonic() + STOP_TIMEOUT_S
        while _alive(pid_file) is not None and time.monotonic() < deadline:
            time.sleep(0.5)
        if _alive(pid_file) is not None:
            os.killpg(pid, signal.SIGKILL)
        pid_file.unlink(missing_ok=True)
        print(f"stopped {name} (pid {pid})")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["start", "stop"])
    parser.add_argument("--port", type=int, default=int(os.environ.get("PREFECT_PORT", DEFAULT_PORT)))
    args = parser.parse_args(argv)
    return start(args.port) if args.command == "start" else stop()


if __name__ == "__main__":
    sys.exit(main())
