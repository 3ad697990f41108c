"""Start and stop a local Prefect server and the deployments it serves.

    python -m homeloop.flows.local start   # what `make serve` runs
    python -m homeloop.flows.local stop    # what `make stop` runs
    python -m homeloop.flows.local init    # what `make` runs once it has installed the environment

The server listens on 127.0.0.1 and keeps its state in ``.prefect/`` inside
the project (``--state`` picks another folder). Both processes run in the
background; their pids and logs are in that folder, and its ``env.sh`` sets up
a shell to talk to them. ``start`` returns once the server answers and every
deployment is registered, so ``prefect deployment run`` works right after
it; otherwise it stops with one line. See docs/pipeline.md.
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from homeloop.flows.settings import DEFAULT_HOST, DEFAULT_PORT, PROJECT_ROOT, configure_prefect
from homeloop.pipeline.lock import pid_running

STATE = PROJECT_ROOT / ".prefect"
#: The deployments ``homeloop.flows.serve`` registers (flow name / deployment name).
DEPLOYMENTS = ("build-home-set/default", "audit-source/default", "evaluate/default")
#: A fresh server migrates its database first: give it time on a small machine.
STARTUP_TIMEOUT_S = 180
#: Serving imports the pipeline and registers every deployment.
DEPLOYMENTS_TIMEOUT_S = 180
STOP_TIMEOUT_S = 30


@dataclass(frozen=True)
class ServeState:
    """Where the pids, logs and env.sh of the local server and serve process live."""

    folder: Path

    @property
    def server_pid(self) -> Path:
        return self.folder / "server.pid"

    @property
    def serve_pid(self) -> Path:
        return self.folder / "serve.pid"

    def log(self, name: str) -> Path:
        return self.folder / f"{name}.log"


def api_url(port: int = DEFAULT_PORT) -> str:
    return f"http://{DEFAULT_HOST}:{port}/api"


def answers(url: str, timeout: float = 2.0) -> bool:
    """Whether ``url`` answers a GET with 200."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status == 200
    except (urllib.error.URLError, OSError):
        return False


def healthy(url: str, timeout: float = 2.0) -> bool:
    return answers(f"{url}/health", timeout)


def deployment_registered(url: str, name: str) -> bool:
    """Whether the server knows deployment ``flow/deployment``."""
    return answers(f"{url}/deployments/name/{urllib.parse.quote(name)}")


def _alive(pid_file: Path) -> int | None:
    try:
        pid = int(pid_file.read_text())
    except (OSError, ValueError):
        return None
    return pid if pid_running(pid) else None


def _spawn(args: list[str], log: Path, env: dict[str, str]) -> int:
    with open(log, "ab") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=PROJECT_ROOT,
                                start_new_session=True)
    return proc.pid


def _wait(ready, pid_file: Path, what: str, log: Path, timeout_s: float) -> str | None:
    """Poll ``ready()`` until true; the error line when the process dies or time runs out."""
    deadline = time.monotonic() + timeout_s
    while not ready():
        if _alive(pid_file) is None:
            return f"error: {what}: the process stopped; see {log}"
        if time.monotonic() > deadline:
            return f"error: {what}: no answer within {timeout_s} s; see {log}"
        time.sleep(0.5)
    return None


def start(port: int, state: ServeState = ServeState(STATE)) -> int:
    configure_prefect()
    state.folder.mkdir(parents=True, exist_ok=True)
    url = api_url(port)
    env = dict(os.environ, PREFECT_API_URL=url)
    bin_dir = Path(sys.executable).parent
    if _alive(state.server_pid) is None:
        pid = _spawn([str(bin_dir / "prefect"), "server", "start", "--host", DEFAULT_HOST, "--port", str(port)],
                     state.log("server"), env)
        state.server_pid.write_text(str(pid))
        print(f"Prefect server starting on {url} (pid {pid}, log {state.log('server')})")
    error = _wait(lambda: healthy(url), state.server_pid, f"the Prefect server at {url}", state.log("server"),
                  STARTUP_TIMEOUT_S)
    if error is None and _alive(state.serve_pid) is None:
        pid = _spawn([sys.executable, "-m", "homeloop.flows.serve"], state.log("serve"), env)
        state.serve_pid.write_text(str(pid))
        print(f"serving deployments {' and '.join(DEPLOYMENTS)} (pid {pid}, log {state.log('serve')})")
    for name in DEPLOYMENTS if error is None else ():
        error = _wait(lambda: deployment_registered(url, name), state.serve_pid, f"deployment {name}",
                      state.log("serve"), DEPLOYMENTS_TIMEOUT_S)
        if error is not None:
            break
    if error is not None:
        print(error, file=sys.stderr)
        return 2
    (state.folder / "env.sh").write_text(
        f'export PREFECT_HOME="{os.environ["PREFECT_HOME"]}"\nexport PREFECT_API_URL="{url}"\n'
        f'export PATH="{bin_dir}:$PATH"\n'
    )
    print(
        f"\nUI: http://{DEFAULT_HOST}:{port}\nIn a shell:\n  . {state.folder / 'env.sh'}\n"
        "  prefect deployment run 'build-home-set/default'\n"
        "  prefect deployment run 'audit-source/default' --param source=path/to/geometries.csv\n"
        "  prefect deployment run 'evaluate/default' --param agent=scripted --param sample=5\n"
        "Stop with: make stop"
    )
    return 0


def init() -> int:
    """Create the Prefect database of ``.prefect/`` (or bring it up to date), as a server's first
    start would: ``make`` does it when it installs the environment, so the first build's
    temporary server does not spend its start-up migrating."""
    configure_prefect()
    import asyncio

    from prefect.server.database import provide_database_interface

    asyncio.run(provide_database_interface().create_db())
    print(f"Prefect database ready in {os.environ['PREFECT_HOME']}")
    return 0


def stop(state: ServeState = ServeState(STATE)) -> int:
    for name, pid_file in (("serve", state.serve_pid), ("server", state.server_pid)):
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
    parser.add_argument("command", choices=["start", "stop", "init"])
    parser.add_argument("--port", type=int, default=int(os.environ.get("PREFECT_PORT", DEFAULT_PORT)))
    parser.add_argument("--state", type=Path, default=STATE, help="folder for pids, logs and env.sh")
    args = parser.parse_args(argv)
    state = ServeState(args.state.resolve())
    if args.command == "init":
        return init()
    return start(args.port, state) if args.command == "start" else stop(state)


if __name__ == "__main__":
    sys.exit(main())
