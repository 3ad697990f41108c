"""SQL over a build's tables reads them and nothing else.

``homeloop applicability --sql`` runs user SQL in DuckDB. The build folder here
holds two small tables written with pandas; every statement that would write a
file, open another database, read another file, install an extension, change
a table or a setting is refused with one line, and the build is left as it was.
"""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from homeloop.bench.pairs import NOT_RUN_HOME, NOT_RUN_ROBOT
from homeloop.cli import app
from homeloop.core.errors import HomeLoopError
from homeloop.core.io import sha256_file
from homeloop.pipeline.queries import QueryError, run_sql, verification_line

STRETCH = "hello_robot_stretch_4"
TIAGO = "pal_tiago"


@pytest.fixture
def build_dir(tmp_path):
    """A build folder with an applicability table (2 homes × 2 robots × 2 tasks) and its summary."""
    out = tmp_path / "build"
    out.mkdir()
    rows = []
    for home in ("home_a", "home_b"):
        for robot in (STRETCH, TIAGO):
            for task in ("water_the_plants", "handle_smoke_alarm"):
                applicable = not (robot == STRETCH and task == "water_the_plants")
                reasons = "" if applicable else "reach: the pour is above its reach"
                rows.append({"home": home, "robot": robot, "task": task, "applicable": applicable,
                             "reasons": reasons, "extension": False})
    table = pd.DataFrame(rows)
    table.to_parquet(out / "applicability.parquet", index=False)
    summary = table.groupby(["home", "robot"], as_index=False)["applicable"].sum()
    summary.rename(columns={"applicable": "applicable_count"}).to_parquet(
        out / "applicability_summary.parquet", index=False)
    return out


def fingerprint(folder):
    return {p.name: sha256_file(p) for p in sorted(folder.iterdir())}


def refused(build_dir, sql: str) -> str:
    with pytest.raises(QueryError) as err:
        run_sql(build_dir, sql)
    message = str(err.value)
    assert isinstance(err.value, HomeLoopError)
    assert "\n" not in message
    assert message.startswith("query refused: "), message
    return message


# --- what still works ---------------------------------------------------------------


def test_readme_queries_still_answer(build_dir):
    why = run_sql(build_dir, f"select home, reasons from applicability where robot = '{STRETCH}' "
                             "and task = 'water_the_plants' limit 3")
    assert list(why["home"]) == ["home_a", "home_b"]
    assert set(why["reasons"]) == {"reach: the pour is above its reach"}
    share = run_sql(build_dir, "select robot, avg(applicable::int) as share from applicability "
                               "group by robot order by robot")
    assert dict(zip(share["robot"], share["share"])) == {STRETCH: 0.5, TIAGO: 1.0}


def test_tables_join_and_explain_runs(build_dir):
    joined = run_sql(build_dir, "select a.home, s.applicable_count from applicability a join "
                                "applicability_summary s using (home, robot) where a.robot = "
                                f"'{STRETCH}' and a.task = 'handle_smoke_alarm' order by 1")
    assert list(joined["applicable_count"]) == [1, 1]
    plan = run_sql(build_dir, "explain select count(*) from applicability")
    assert len(plan) >= 1


# --- what is refused --------------------------------------------------------------------


def test_copy_over_a_build_output_is_refused_and_the_file_is_untouched(build_dir):
    before = fingerprint(build_dir)
    target = build_dir / "applicability.parquet"
    message = refused(build_dir, f"copy (select 1 as x) to '{target}'")
    assert "COPY" in message
    assert fingerprint(build_dir) == before


@pytest.mark.parametrize("statement", [
    "copy applicability to '{elsewhere}/leak.csv'",
    "attach '{elsewhere}/new.duckdb' as other",
    "export database '{elsewhere}/dump'",
])
def test_statements_that_write_files_are_refused(build_dir, tmp_path, statement):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    refused(build_dir, statement.format(elsewhere=elsewhere))
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("sql", [
    "select * from read_text('/etc/hostname')",
    "select * from read_csv('/etc/passwd')",
    "select * from read_parquet('{other}')",
    "select * from glob('/etc/*')",
])
def test_reading_any_other_file_is_refused(build_dir, tmp_path, sql):
    other = tmp_path / "other.parquet"
    pd.DataFrame({"secret": [1]}).to_parquet(other)
    message = refused(build_dir, sql.format(other=other))
    assert "file system operations are disabled" in message


@pytest.mark.parametrize("sql, kind", [
    ("install httpfs", "INSTALL"),
    ("load httpfs", "LOAD"),
    ("insert into applicability select * from applicability", "INSERT"),
    ("delete from applicability", "DELETE"),
    ("drop table applicability", "DROP"),
    ("create table notes as select 1 as x", "CREATE"),
    ("set enable_external_access = true", "SET"),
    ("select 1; copy applicability to 'x.csv'", "COPY"),
])
def test_extensions_writes_and_settings_are_refused(build_dir, sql, kind):
    message = refused(build_dir, sql)
    assert kind in message
    # The tables are what they were: the next query sees every row.
    assert len(run_sql(build_dir, "select * from applicability")) == 8


def test_cli_refuses_with_one_line_and_exit_code_2(build_dir):
    before = fingerprint(build_dir)
    target = build_dir / "applicability.parquet"
    result = CliRunner().invoke(
        app, ["applicability", "--from", str(build_dir), "--sql", f"copy applicability to '{target}'"],
        env={"COLUMNS": "200", "NO_COLOR": "1"})
    assert result.exit_code == 2, result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "query refused" in errors[0]
    assert "Traceback" not in result.output
    assert fingerprint(build_dir) == before


# --- bounded queries ------------------------------------------------------------------------

ENDLESS = "select count(*) from range(1000000000000) t(x) where x % 7 = 3"


def cli(*args: str):
    return CliRunner().invoke(app, ["applicability", *map(str, args)], env={"COLUMNS": "200", "NO_COLOR": "1"})


def one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, result.output
    return errors[0]


def test_a_query_past_its_timeout_stops_with_one_line(build_dir):
    line = one_error_line(cli("--from", build_dir, "--sql", ENDLESS, "--timeout", "1"))
    assert line == "error: query stopped after 1 s (--timeout); narrow it, or give a longer --timeout"


@pytest.mark.parametrize("sql", ["", "   ", ";;"])
def test_an_empty_query_is_refused(build_dir, sql):
    line = one_error_line(cli("--from", build_dir, "--sql", sql))
    assert line == "error: query refused: no SQL statement given"


def test_a_query_over_its_memory_limit_stops_with_one_line_and_writes_nothing(build_dir, tmp_path, monkeypatch):
    here = tmp_path / "here"
    here.mkdir()
    monkeypatch.chdir(here)  # an in-memory DuckDB spills to .tmp/ of the working folder unless told not to
    result = cli("--from", build_dir, "--memory-limit", "20MB", "--sql",
                 "select x::varchar as v from range(3000000) t(x) order by 1 desc")
    assert one_error_line(result).startswith("error: query stopped: it needs more memory than --memory-limit 20MB")
    assert list(here.iterdir()) == []


@pytest.mark.parametrize("limit", ["", "-1", "lots"])
def test_a_bad_memory_limit_is_one_line(build_dir, limit):
    assert one_error_line(cli("--from", build_dir, "--memory-limit", limit, "--sql", "select 1")).startswith(
        f"error: --memory-limit {limit!r}: ")


def test_values_and_names_are_printed_as_they_are(build_dir):
    result = cli("--from", build_dir, "--sql", "select '[/]' as \"[bold]\", ':x: [red]y' as z")
    assert result.exit_code == 0, result.output
    assert "[bold]" in result.output and "[/]" in result.output and ":x: [red]y" in result.output


def test_ctrl_c_stops_a_running_query(build_dir, tmp_path, tmp_path_factory):
    """SIGINT to the command, as a terminal sends it, once the query says it is running."""
    import signal

    from build_fixtures import BIN, start_process, stop_process, subprocess_env, wait_for
    from homeloop.pipeline.queries import QUERY_INTERRUPTED

    log = tmp_path / "log.txt"
    proc = start_process([str(BIN / "homeloop"), "applicability", "--from", str(build_dir), "--sql", ENDLESS,
                          "--timeout", "600"], log=log, env=subprocess_env(tmp_path_factory))
    try:
        wait_for(lambda: "query running" in log.read_text(), timeout=120, what="the query to run", alive=proc,
                 log=log)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=60) == 130, log.read_text()
    finally:
        stop_process(proc)
    lines = log.read_text().splitlines()
    assert lines[-1] == QUERY_INTERRUPTED and "Traceback" not in log.read_text()


# --- what the verify stage made of the pairs a query reads ------------------------------------------


@pytest.fixture
def verified_build(build_dir):
    """The build above after a verify stage that played the TIAGo's pairs in home_a only: one passed,
    one failed; the rest were not played, for the reasons the stage gives."""
    table = pd.read_parquet(build_dir / "applicability.parquet")
    played = (table["home"] == "home_a") & (table["robot"] == TIAGO) & table["applicable"]
    table["verified"] = played & (table["task"] == "handle_smoke_alarm")
    table["verify_reason"] = ""
    table.loc[played & ~table["verified"], "verify_reason"] = "checks failed: plant_watered"
    table.loc[table["applicable"] & (table["robot"] != TIAGO), "verify_reason"] = NOT_RUN_ROBOT
    table.loc[table["applicable"] & (table["robot"] == TIAGO) & ~played, "verify_reason"] = NOT_RUN_HOME
    table.to_parquet(build_dir / "applicability.parquet", index=False)
    return build_dir


def test_a_query_says_which_of_its_pairs_are_verified_and_why_the_rest_are_not(verified_build):
    table = pd.read_parquet(verified_build / "applicability.parquet")
    tiago = table[(table["robot"] == TIAGO) & table["applicable"]]
    line = verification_line(verified_build, robot=TIAGO)
    assert line == (f"of the {len(tiago)} screened pairs these filters read: {int(tiago['verified'].sum())} verified, "
                    f"1 failed (verify_reason says why), {int((tiago['verify_reason'] == NOT_RUN_HOME).sum())} "
                    f"{NOT_RUN_HOME}")
    everything = verification_line(verified_build)
    assert f"{int((table['verify_reason'] == NOT_RUN_ROBOT).sum())} {NOT_RUN_ROBOT}" in everything
    assert everything.startswith(f"of the {int(table['applicable'].sum())} screened pairs")

    result = cli("--from", verified_build, "--verified", "--robot", TIAGO, "--task", "handle_smoke_alarm")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[-1] == verification_line(verified_build, robot=TIAGO, tasks="handle_smoke_alarm")


def test_a_build_from_before_the_verify_stage_says_nothing_of_it(build_dir):
    assert verification_line(build_dir) is None
    result = cli("--from", build_dir, "--robot", TIAGO)
    assert result.exit_code == 0, result.output
    assert "screened pairs" not in result.output
