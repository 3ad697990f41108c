"""Queries over a build's tables: which tasks apply to which homes, and plain SQL.

``homeloop applicability`` calls these. A build folder (``outputs/<build>/``)
holds parquet tables; :func:`run_sql` loads each one that exists into an
in-memory DuckDB table of the same name (:data:`TABLES`), so a query can join
them::

    SELECT home, count(*) FROM applicability
    WHERE robot = 'hello_robot_stretch_4' AND applicable GROUP BY home

``applicability`` carries ``verified`` and ``verify_reason`` (the verify
stage, docs/pipeline.md), ``applicability_summary`` the verified counts per
home; given run folders (``--runs``), an ``episodes`` table holds one row per
episode record: home, task, robot, seed, agent, model, passed, units,
ended_by, episode_id (:func:`episodes_table`).

Queries only read those tables (docs/pipeline.md): once they are loaded the
connection loses access to files (``enable_external_access = false``) and its
settings are locked, and only SELECT (and EXPLAIN) statements run. COPY TO,
ATTACH, EXPORT, INSTALL/LOAD, ``read_*`` of any file, writes and SET are refused
with one line (``query refused: ...``), so a query can never change a build.

Queries are bounded (:func:`run_sql`): one stops on Ctrl-C and after a time
limit (``--timeout``, :data:`DEFAULT_TIMEOUT_S`), and may hold at most
:data:`DEFAULT_MEMORY_LIMIT` (``--memory-limit``); it never spills to disk.
Each ends with one line.

Bad input (an unknown task, robot, family, table or column) raises
:class:`QueryError` with one line that names it and the valid choices.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

import pandas as pd

from homeloop.core.errors import HomeLoopError
from homeloop.pipeline.query_limits import DEFAULT_MEMORY_LIMIT as DEFAULT_MEMORY_LIMIT
from homeloop.pipeline.query_limits import DEFAULT_TIMEOUT_S as DEFAULT_TIMEOUT_S

if TYPE_CHECKING:  # DuckDB loads with the first query
    import duckdb

#: Views :func:`run_sql` registers, each from ``<name>.parquet`` in the build folder.
TABLES: tuple[str, ...] = ("plans", "audit", "features", "selection", "applicability", "applicability_summary")


#: A query still running after this many seconds says how to stop it.
NOTICE_AFTER_S = 1.0
#: What a query stopped by Ctrl-C prints (exit code 130, as every command).
QUERY_INTERRUPTED = "interrupted; the query stopped, nothing was written"


class QueryError(HomeLoopError):
    """A query that names something the build does not have, or SQL DuckDB rejects."""


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _read_applicability(build_dir: str | Path) -> pd.DataFrame:
    path = Path(build_dir) / "applicability.parquet"
    if not path.is_file():
        raise QueryError(f"{path} not found: screen the build's homes first (the applicability stage)")
    return pd.read_parquet(path)


def _check(kind: str, given: Iterable[str], valid: Iterable[str]) -> None:
    valid = list(dict.fromkeys(valid))
    for value in given:
        if value not in valid:
            raise QueryError(f"unknown {kind} {value!r}; valid: {', '.join(valid)}")


def query_applicability(build_dir: str | Path, *, tasks: Iterable[str] | str | None = None,
                        robot: str | None = None, family: str | None = None,
                        min_applicable: int | None = None, all_tasks: bool = True,
                        verified: bool = False) -> pd.DataFrame:
    """Homes (per robot) where the given tasks apply.

    - ``tasks``: task ids; with ``all_tasks`` a home qualifies when every one of
      them applies, otherwise when any does. ``family``: restrict to the tasks of
      a family (with ``tasks`` too: both must hold).
    - ``robot``: one robot id (default: every robot screened).
    - ``min_applicable``: keep homes whose ``applicable_count`` (core tasks that
      apply for that robot) is at least this.
    - ``verified``: a task counts only where it is verified (the scripted
      reference agent passed it there, docs/pipeline.md): for ``matched`` and
      ``min_applicable`` alike, which then reads ``verified_count``.

    Returns one row per home and robot: home, robot, applicable_count (core
    tasks that apply), extension_count, with ``verified`` verified_count and
    verified_extension_count, then matched (the selected tasks that apply),
    selected (how many tasks were selected), sorted by home and robot.
    """
    table = _read_applicability(build_dir)
    from homeloop.sim.task import FAMILIES, TASK_IDS

    task_list = _task_list(tasks)
    _check("task", task_list, list(TASK_IDS) + sorted(set(table["task"]) - set(TASK_IDS)))
    if robot is not None:
        _check("robot", [robot], sorted(set(table["robot"])) or [robot])
    if family is not None:
        _check("family", [family], FAMILIES)
    if verified and "verified" not in table.columns:
        raise QueryError(f"{Path(build_dir) / 'applicability.parquet'} has no verified column (a build from "
                         "before the verify stage); rebuild it to query verified pairs")
    flag = "verified" if verified else "applicable"
    counts = _counts_per_home(table, verified)
    selected = _in_scope(table, task_list, robot, family)
    n_selected = selected["task"].nunique() if (task_list or family is not None) else 0
    if task_list or family is not None:
        matched = selected.groupby(["home", "robot"], sort=True)[flag].agg(["sum", "size"])
        keep = matched["sum"] == matched["size"] if all_tasks else matched["sum"] > 0
        out = counts.join(matched.rename(columns={"sum": "matched", "size": "selected"}), how="inner")[keep]
    else:
        out = counts if robot is None else counts[counts.index.get_level_values("robot") == robot]
        out = out.assign(matched=0, selected=n_selected)
    if min_applicable is not None:
        out = out[out["verified_count" if verified else "applicable_count"] >= min_applicable]
    out = out.reset_index()
    for c in out.columns[2:]:
        out[c] = out[c].astype("int64")
    return out[["home", "robot", *counts.columns, "matched", "selected"]]


def _task_list(tasks: Iterable[str] | str | None) -> list[str]:
    """The task ids a query names: one, several or none."""
    return [tasks] if isinstance(tasks, str) else list(tasks or [])


def _in_scope(table: pd.DataFrame, tasks: list[str], robot: str | None, family: str | None) -> pd.DataFrame:
    """The rows of the applicability table a query's filters read (every row where none is given)."""
    if robot is not None:
        table = table[table["robot"] == robot]
    if tasks:
        table = table[table["task"].isin(tasks)]
    if family is not None:
        table = table[table["family"] == family]
    return table


def verification_line(build_dir: str | Path, *, tasks: Iterable[str] | str | None = None,
                      robot: str | None = None, family: str | None = None) -> str | None:
    """What the verify stage made of the screened pairs a query reads (its filters as
    :func:`query_applicability` takes them): how many are verified, how many it played and
    failed, and how many it did not play and why. None for a build from before the stage."""
    from homeloop.bench.pairs import not_run
    from homeloop.pipeline.verify_pairs import played_pairs

    table = _read_applicability(build_dir)
    if "verified" not in table.columns:
        return None
    screened = _in_scope(table, _task_list(tasks), robot, family)
    screened = screened[screened["applicable"]]
    failed = int((~played_pairs(screened)["verified"]).sum())
    parts = [f"{int(screened['verified'].sum()):,} verified"]
    if failed:
        parts.append(f"{failed:,} failed (verify_reason says why)")
    left_out = screened.loc[not_run(screened), "verify_reason"].value_counts()
    parts += [f"{n:,} {reason}" for reason, n in sorted(left_out.items())]
    return f"of the {len(screened):,} screened pairs these filters read: {', '.join(parts)}"


def _counts_per_home(table: pd.DataFrame, verified: bool) -> pd.DataFrame:
    """Core and extension tasks that apply per home and robot (and, with ``verified``, that are
    verified), as applicability_summary.parquet counts them; indexed and sorted by home and robot."""
    from homeloop.pipeline.applicability import summary_per_home

    summary = summary_per_home(table).set_index(["home", "robot"]).sort_index()
    columns = ["applicable_count", "extension_count"]
    return summary[columns + (["verified_count", "verified_extension_count"] if verified else [])]


def available_tables(build_dir: str | Path) -> dict[str, Path]:
    """The tables of :data:`TABLES` present in the build folder."""
    root = Path(build_dir)
    return {name: root / f"{name}.parquet" for name in TABLES if (root / f"{name}.parquet").is_file()}


#: Statement types a query may hold: reading, and explaining a read.
READ_ONLY_STATEMENTS = frozenset({"SELECT", "EXPLAIN"})


#: Columns of the ``episodes`` table, one row per episode record.
EPISODE_COLUMNS = ("home", "task", "robot", "seed", "agent", "model", "passed", "units", "ended_by", "episode_id")


def episodes_table(run_dirs: Iterable[str | Path]) -> tuple[pd.DataFrame, list[str]]:
    """One row per readable episode record of the run folders (:data:`EPISODE_COLUMNS`),
    and one line per record that cannot be read."""
    from homeloop.bench.records import iter_records

    rows, unreadable = [], []
    for folder in run_dirs:
        if not (Path(folder) / "episodes").is_dir():
            raise QueryError(f"--runs {folder}: not a run folder (no episodes/); run `homeloop bench run --out "
                             f"{folder}` first")
    for _, record, why in iter_records(run_dirs):
        if record is None:
            unreadable.append(why)
            continue
        world = record["world"]
        rows.append((world["home"], record["task"]["id"], world["robot"], int(world["seed"]),
                     record["agent"].get("name"), record["agent"].get("model"), bool(record["passed"]),
                     record["units_spent"], record["ended_by"], record["episode_id"]))
    frame = pd.DataFrame.from_records(rows, columns=list(EPISODE_COLUMNS))
    return frame.astype({"seed": "int64", "passed": bool, "units": "int64"}), unreadable


def run_sql(build_dir: str | Path, sql: str, *, runs: Iterable[str | Path] = (),
            warn: Callable[[str], None] | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
            memory_limit: str = DEFAULT_MEMORY_LIMIT) -> pd.DataFrame:
    """Run DuckDB SQL over the build's tables, read-only and bounded (see the module doc); with
    run folders, over their ``episodes`` too. ``warn`` gets one line per unreadable record, and
    one when the query is still running after :data:`NOTICE_AFTER_S`."""
    root = Path(build_dir)
    if not root.is_dir():
        raise QueryError(f"build folder {root} not found")
    if not timeout_s > 0:
        raise QueryError(f"--timeout takes a number of seconds above 0, got {timeout_s:g}")
    tables: dict[str, Path | pd.DataFrame] = dict(available_tables(root))
    run_list = list(runs)
    say = warn or (lambda _: None)
    if run_list:
        tables["episodes"], unreadable = episodes_table(run_list)
        for line in unreadable:
            say(f"skipped: {line}")
    import duckdb

    con = duckdb.connect(database=":memory:")
    try:
        _limit_memory(con, memory_limit)
        try:
            _load_tables(con, tables)
            _refuse_writes(con, sql)
            return _run_bounded(con, sql, timeout_s, say)
        except duckdb.PermissionException as exc:
            raise QueryError(f"query refused: {_first_line(exc)}") from None
        except duckdb.OutOfMemoryException:
            raise QueryError(f"query stopped: it needs more memory than --memory-limit {memory_limit}; "
                             "ask for fewer rows (an aggregate, a LIMIT) or give a larger limit") from None
        except duckdb.Error as exc:
            have = ", ".join(tables) or "none"
            raise QueryError(f"{_first_line(exc)} (tables in {root}: {have})") from None
    finally:
        con.close()


def _run_bounded(con: duckdb.DuckDBPyConnection, sql: str, timeout_s: float,
                 say: Callable[[str], None]) -> pd.DataFrame:
    """The query's result, computed in a thread of its own. DuckDB holds the calling thread until a
    query ends, and a signal reaches Python only between bytecodes, so this thread waits instead:
    Ctrl-C (KeyboardInterrupt) and the time limit each interrupt DuckDB, which stops at once."""
    outcome: dict[str, object] = {}
    done = threading.Event()  # not Thread.join: one interrupted by Ctrl-C may return before the thread ends

    def work() -> None:
        try:
            outcome["frame"] = con.execute(sql).fetchdf()
        except BaseException as exc:  # handed to the waiting thread
            outcome["error"] = exc
        finally:
            done.set()

    threading.Thread(target=work, name="homeloop-query", daemon=True).start()
    try:
        if not done.wait(min(NOTICE_AFTER_S, timeout_s)) and timeout_s > NOTICE_AFTER_S:
            say(f"query running; it stops after {timeout_s:g} s (--timeout), or now on Ctrl-C")
            done.wait(max(timeout_s - NOTICE_AFTER_S, 0.0))
    except KeyboardInterrupt:
        con.interrupt()
        done.wait()
        raise
    if not done.is_set():
        con.interrupt()
        done.wait()
        raise QueryError(f"query stopped after {timeout_s:g} s (--timeout); narrow it, or give a longer --timeout")
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["frame"]  # type: ignore[return-value]


def _limit_memory(con: duckdb.DuckDBPyConnection, memory_limit: str) -> None:
    """Cap the memory the query may hold, and never spill to disk (an in-memory database would
    spill into ``.tmp`` of the working folder): past the cap a query stops with an error. No
    progress bar either: a long query says one line instead (:func:`_run_bounded`)."""
    import duckdb

    literal = str(memory_limit).replace("'", "''")
    hint = f"give a size such as {DEFAULT_MEMORY_LIMIT} or 512MB"
    if literal.strip().startswith("-"):  # DuckDB reads a negative size as no limit at all
        raise QueryError(f"--memory-limit {memory_limit!r}: a size cannot be negative; {hint}")
    try:
        con.execute(f"SET memory_limit = '{literal}'")
    except duckdb.Error as exc:
        raise QueryError(f"--memory-limit {memory_limit!r}: {_first_line(exc)}; {hint}") from None
    con.execute("SET temp_directory = ''")
    con.execute("SET enable_progress_bar = false")  # its bar would write over the command's own lines


def _load_tables(con: duckdb.DuckDBPyConnection, tables: dict[str, Path | pd.DataFrame]) -> None:
    """Copy the build's tables (parquet files, or frames) into the in-memory database, then
    cut it off from every file and lock its settings, so no statement can reach outside it."""
    for name, source in tables.items():
        if isinstance(source, pd.DataFrame):
            con.register("frame_to_copy", source)
            con.execute(f"CREATE TABLE {name} AS SELECT * FROM frame_to_copy")
            con.unregister("frame_to_copy")
            continue
        literal = str(source).replace("'", "''")
        con.execute(f"CREATE TABLE {name} AS SELECT * FROM read_parquet('{literal}')")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")


def _refuse_writes(con: duckdb.DuckDBPyConnection, sql: str) -> None:
    """Raise ``query refused`` unless every statement of ``sql`` only reads."""
    import duckdb

    try:
        statements = con.extract_statements(sql)
    except duckdb.Error as exc:
        raise QueryError(_first_line(exc)) from None
    if not statements:
        raise QueryError("query refused: no SQL statement given")
    for statement in statements:
        if statement.type.name not in READ_ONLY_STATEMENTS:
            # Named as written (DuckDB files INSTALL under LOAD, for one).
            words = statement.query.split()
            kind = words[0].upper() if words else statement.type.name
            raise QueryError(f"query refused: only SELECT queries run over the build's tables, not {kind}")


def _first_line(exc: BaseException) -> str:
    text = str(exc)
    return _one_line(text.splitlines()[0] if text else exc.__class__.__name__)
