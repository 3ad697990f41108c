"""Small builds and background processes shared by the build, flow and CLI tests.

One small reference build per pytest run (plain ``run_build``, in this
process, no Prefect): the resume, Dask, flow and deployment tests each build
the same parameters another way and compare their output hashes with it.
Processes a test starts run in their own process group, on 127.0.0.1, and are
stopped by that group.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, TypeVar

import pytest

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
#: The small build every build test uses: ~60 plans, 10 homes, well under a minute.
#: The small build of the tests; its verify stage plays the house and two further homes (the
#: default plays a hundred, which would make every test build slow).
SMALL = {"plans": 60, "sites": 20, "homes": 10, "seed": 0, "verify_homes": 2}

T = TypeVar("T")
_shared: dict[str, Any] = {}


def small_build_args(out: Path, *extra: str) -> list[str]:
    """``homeloop build`` arguments for the small build into ``out``."""
    args = [str(BIN / "homeloop"), "build", "--out", str(out)]
    for name in ("plans", "sites", "homes", "seed", "verify_homes"):
        args += [f"--{name.replace('_', '-')}", str(SMALL[name])]
    return args + list(extra)


def read_manifest(out: Path) -> dict[str, Any]:
    return json.loads((Path(out) / "manifest.json").read_text())


def reference_build(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The manifest of the small build, built once per pytest run, without Prefect."""
    if "reference" not in _shared:
        from homeloop.pipeline.stages import BuildConfig, run_build

        out = tmp_path_factory.mktemp("reference-build")
        run_build(BuildConfig(**SMALL, out=out, workers=1, progress=False), log=lambda msg: None)
        _shared["reference"] = read_manifest(out)
    return _shared["reference"]


def prefect_home(folder: Path) -> Path:
    """``folder`` made a PREFECT_HOME holding a copy of the checkout's Prefect database, which
    `make` has migrated (``homeloop.flows.local init``), so a server started there need not
    migrate a new one; without that database, the server makes its own. Nothing a test runs
    writes to the checkout's ``.prefect/``."""
    import sqlite3

    folder.mkdir(parents=True, exist_ok=True)
    made = REPO / ".prefect" / "prefect.db"
    if made.is_file() and not (folder / "prefect.db").exists():
        # SQLite's backup API: a consistent copy even while a server there writes
        source, copy = sqlite3.connect(f"file:{made}?mode=ro", uri=True), sqlite3.connect(folder / "prefect.db")
        try:
            source.backup(copy)
        finally:
            source.close()
            copy.close()
    return folder


def subprocess_env(tmp_path_factory: pytest.TempPathFactory, **extra: str) -> dict[str, str]:
    """The environment for a ``homeloop`` subprocess: Prefect state in one temporary
    folder per pytest process (not the project's), no analytics, no PREFECT_API_URL unless given."""
    if "prefect_home" not in _shared:
        _shared["prefect_home"] = prefect_home(tmp_path_factory.mktemp("prefect-home"))
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.update({
        "PREFECT_HOME": str(_shared["prefect_home"]),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "180",
        "DASK_LOGGING__DISTRIBUTED": "warning",
        "NO_COLOR": "1",
        "COLUMNS": "200",
    })
    env.update(extra)
    return env


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (the OS just handed it out)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for(condition: Callable[[], T], *, timeout: float, what: str, interval: float = 0.1,
             alive: subprocess.Popen | None = None, log: Path | None = None) -> T:
    """Poll ``condition`` until it returns something truthy; fail after ``timeout`` seconds
    (or as soon as the process ``alive`` exits), showing the end of ``log``."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if alive is not None and alive.poll() is not None:
            pytest.fail(f"process exited ({alive.returncode}) while waiting for {what}{_tail(log)}")
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}{_tail(log)}")
        time.sleep(interval)


def _tail(log: Path | None, chars: int = 3000) -> str:
    if log is None or not Path(log).exists():
        return ""
    return "\n--- log ---\n" + Path(log).read_text(errors="replace")[-chars:]


#: Run a program as a terminal runs a job: SIGINT (Ctrl-C) and SIGQUIT at their defaults. A test
#: suite started in the background by a non-interactive shell ignores both, an exec'd program keeps
#: an ignored signal ignored, and Python then never turns SIGINT into KeyboardInterrupt.
_AS_A_TERMINAL_JOB = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); "
                      "signal.signal(signal.SIGQUIT, signal.SIG_DFL); os.execvp(sys.argv[1], sys.argv[1:])")


def start_process(args: list[str], *, log: Path, env: dict[str, str] | None = None,
                  cwd: Path | None = None) -> subprocess.Popen:
    """Start ``args`` in a new process group, as a terminal job (:data:`_AS_A_TERMINAL_JOB`), stdout
    and stderr to ``log``."""
    handle = open(log, "wb")
    try:
        return subprocess.Popen([sys.executable, "-c", _AS_A_TERMINAL_JOB, *args], stdout=handle,
                                stderr=subprocess.STDOUT, env=env, cwd=cwd or REPO, start_new_session=True)
    finally:
        handle.close()


def stop_process(proc: subprocess.Popen, *, first: int = signal.SIGINT, grace: float = 30.0) -> None:
    """Stop the process group of ``proc``: ``first`` (SIGINT lets Prefect and Dask shut
    down cleanly), then SIGKILL for whatever is left after ``grace`` seconds."""
    pgid = proc.pid  # start_new_session: the group id is the leader's pid
    if proc.poll() is None:
        _signal_group(pgid, first)
        try:
            proc.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    _signal_group(pgid, signal.SIGKILL)  # children that outlived the leader
    proc.wait(timeout=30)


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def run_cli(args: list[str], *, env: dict[str, str], timeout: float = 300, cwd: Path | None = None
            ) -> subprocess.CompletedProcess:
    """Run a command to completion in its own process group; kill the group on timeout."""
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            cwd=cwd or REPO, start_new_session=True, text=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _signal_group(proc.pid, signal.SIGKILL)
        out, _ = proc.communicate()
        pytest.fail(f"{' '.join(args[:2])} did not finish in {timeout:.0f} s:\n{out[-3000:]}")
    finally:
        _signal_group(proc.pid, signal.SIGKILL)  # helpers it may have left behind
    return subprocess.CompletedProcess(args, proc.returncode, out, "")


def partial_files(folder: Path) -> list[Path]:
    """Temporary files of an interrupted atomic write still lying in ``folder``."""
    from homeloop.pipeline.stages import PARTIAL_FILE

    return sorted(p for p in Path(folder).rglob("*") if p.is_file()
                  and (PARTIAL_FILE.match(p.name) or (p.name.startswith(".") and p.name.endswith(".tmp"))))


def lock_holder(lock: str, folder: Path) -> subprocess.Popen[str]:
    """A process that takes ``lock`` (``"module:function"``, a folder lock such as
    ``homeloop.pipeline.lock:build_lock``) on ``folder``, prints each warning the lock gives and
    then ``held``, and holds the lock until its stdin is closed."""
    module, function = lock.split(":")
    code = (f"import sys\nfrom pathlib import Path\nfrom {module} import {function}\n"
            f"with {function}(Path(sys.argv[1]), warn=lambda line: print(line, flush=True)):\n"
            "    print('held', flush=True)\n    sys.stdin.read()\n")
    return subprocess.Popen([sys.executable, "-c", code, str(folder)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
