"""The Prefect flows: build-home-set and audit-source under a test harness, and the
served deployment run end to end against a real Prefect server on loopback."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path

import pytest

from build_fixtures import (
    BIN,
    SMALL,
    partial_files,
    prefect_home,
    read_manifest,
    reference_build,
    run_cli,
    subprocess_env,
)

pytestmark = pytest.mark.slow

TABLES = ("plans.parquet", "elements.parquet", "rejected.parquet", "audit.parquet", "audit.html",
          "features.parquet", "selection.parquet", "selection_report.json", "homes.parquet",
          "usd.parquet", "applicability.parquet", "applicability_summary.parquet", "report.html",
          "manifest.json")


@pytest.fixture(scope="module")
def harness(tmp_path_factory):
    """A temporary Prefect server and database for the flows run in this process."""
    from prefect.settings import PREFECT_HOME, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    with temporary_settings(updates={PREFECT_HOME: prefect_home(tmp_path_factory.mktemp("prefect-harness"))}):
        with prefect_test_harness(server_startup_timeout=180):
            yield


@pytest.fixture(scope="module")
def flow_build(harness, tmp_path_factory):
    """The small build, run by the build-home-set flow."""
    from homeloop.flows.build import build_home_set
    from homeloop.pipeline.config import BuildConfig

    out = tmp_path_factory.mktemp("flow-build")
    manifest = build_home_set(BuildConfig(**SMALL, out=out, workers=1))
    return out, manifest


def test_the_build_flow_takes_the_build_config_whole():
    """The deployment's form is BuildConfig: one parameter whose fields, defaults and descriptions
    are the model's, so a field added to the model reaches the flow without another line."""
    from homeloop.flows.build import build_home_set
    from homeloop.pipeline.config import BuildConfig

    schema = build_home_set.parameters.model_dump()
    assert list(schema["properties"]) == ["config"]
    fields = schema["definitions"]["BuildConfig"]["properties"]
    assert list(fields) == list(BuildConfig.model_fields)
    for name, field in BuildConfig.model_fields.items():
        assert fields[name]["description"] == field.description, name
    assert schema["properties"]["config"]["default"] == BuildConfig().model_dump(mode="json")


def kept_home_ids(out: Path) -> list[str]:
    return sorted(p.name for p in (out / "homes").iterdir() if p.is_dir() and p.name not in (".outcomes", "house"))


def test_build_flow_writes_every_artifact(flow_build):
    out, manifest = flow_build
    for name in TABLES:
        assert (out / name).is_file(), name
    homes = kept_home_ids(out)
    assert len(homes) == SMALL["homes"]
    for home_id in ["house", *homes]:
        for name in ("home.json", "preview.png", "home.usdc"):
            path = out / "homes" / home_id / name
            assert path.is_file() and path.stat().st_size > 0, path
    # The manifest lists every output file with its hash, and only those.
    listed = set(manifest["outputs"])
    assert {"report.html", "selection.parquet", f"homes/{homes[0]}/home.usdc"} <= listed
    assert all((out / rel).is_file() for rel in listed)
    assert not any(rel.startswith((".stages", "source/")) or rel == "manifest.json" for rel in listed)
    assert read_manifest(out) == manifest
    assert partial_files(out) == []


def test_build_flow_counts_reconcile(flow_build):
    import pandas as pd

    out, manifest = flow_build
    counts = manifest["counts"]
    assert {"rows", "plans", "audit", "select", "homes", "usd"} <= set(counts)
    for stage, c in counts.items():
        assert c["in"] == c["kept"] + c["rejected"], stage
        if stage in ("rows", "homes"):  # one reason per rejected row or plan
            assert sum(c.get("by_reason", {}).values()) == c["rejected"], stage
    assert counts["homes"]["kept"] == SMALL["homes"]
    assert counts["usd"] == {"in": SMALL["homes"] + 1, "kept": SMALL["homes"] + 1, "rejected": 0}
    assert counts["plans"]["in"] == SMALL["plans"]
    # The tables agree with the counts.
    homes = pd.read_parquet(out / "homes.parquet")
    assert len(homes) == counts["homes"]["in"] and int(homes["kept"].sum()) == SMALL["homes"]
    assert sorted(homes.loc[homes["kept"], "plan"]) == kept_home_ids(out)
    assert len(pd.read_parquet(out / "selection.parquet")) == counts["select"]["kept"]
    applicability = pd.read_parquet(out / "applicability.parquet")
    assert applicability["home"].nunique() == SMALL["homes"] + 1


def test_build_flow_is_deterministic(flow_build, tmp_path_factory):
    """The same parameters into another folder (here: without Prefect) give the same bytes."""
    out, manifest = flow_build
    reference = reference_build(tmp_path_factory)
    assert reference["out"] != manifest["out"]
    assert manifest["outputs"] == reference["outputs"]
    assert manifest["counts"] == reference["counts"]
    assert manifest["inputs"] == reference["inputs"]


def test_unchanged_rerun_reuses_every_stage(flow_build):
    from homeloop.core.io import owner_token
    from homeloop.flows.build import build_home_set
    from homeloop.pipeline.config import BuildConfig
    from homeloop.pipeline.stages import STAGES

    out, manifest = flow_build
    records = {stage: out / ".stages" / f"{stage}.json" for stage in STAGES}
    assert all(p.is_file() for p in records.values())
    before = {stage: (p.read_bytes(), p.stat().st_mtime_ns) for stage, p in records.items()}
    written = {rel: (out / rel).stat().st_mtime_ns for rel in manifest["outputs"]}
    # What writes cut short by a kill leave behind, named with the folder's token (see
    # homeloop.core.io.atomic_path): cleared by the next run.
    token = owner_token(out)
    home_id = kept_home_ids(out)[0]
    leftovers = [out / f".selection.parquet.{token}.a1b2c3d4.tmp",
                 out / "homes" / home_id / f".home.usdc.{token}.x_y9z8w7.usdc",
                 out / "homes" / ".outcomes" / f".{home_id}.json.{token}.qwerty12.tmp"]
    for path in leftovers:
        path.write_bytes(b"half a file")
    assert partial_files(out) == sorted(leftovers)

    again = build_home_set(BuildConfig(**SMALL, out=out, workers=1))

    # No stage ran: no record and no output file was written again.
    assert {stage: (p.read_bytes(), p.stat().st_mtime_ns) for stage, p in records.items()} == before
    assert {rel: (out / rel).stat().st_mtime_ns for rel in manifest["outputs"]} == written
    assert again["outputs"] == manifest["outputs"]
    assert again["counts"] == manifest["counts"]
    assert partial_files(out) == []


def test_audit_source_flow_audits_a_generated_csv(flow_build, tmp_path):
    import pandas as pd

    from homeloop.flows.build import audit_source

    out, manifest = flow_build
    source = out / "source" / "geometries.csv"
    report = audit_source(source=str(source), out=str(tmp_path / "audit"))
    assert report["out"] == str(tmp_path / "audit")
    # The same plans, the same rules: the stand-alone audit agrees with the build's.
    assert (report["plans_checked"], report["plans_passed"]) == (
        manifest["counts"]["audit"]["in"], manifest["counts"]["audit"]["kept"])
    assert report["plans_checked"] > report["plans_passed"] > 0
    for name in ("audit.parquet", "audit.html", "plans.parquet"):
        assert (tmp_path / "audit" / name).is_file(), name
    table = pd.read_parquet(tmp_path / "audit" / "audit.parquet")
    assert {"plan", "rule", "passed", "message"} <= set(table.columns)
    assert (~table["passed"]).any()


def test_audit_source_flow_reports_a_missing_file_in_one_line(harness, tmp_path):
    from homeloop.flows.build import audit_source
    from homeloop.core.errors import HomeLoopError

    with pytest.raises(HomeLoopError, match="does not exist"):
        audit_source(source=str(tmp_path / "missing.csv"), out=str(tmp_path / "audit"))


def test_deployment_run_right_after_make_serve_returns(make_serve, tmp_path, tmp_path_factory):
    """What `make serve` runs (`python -m homeloop.flows.local start`) returns only once the
    server answers and the deployments are registered: `prefect deployment run --watch`
    right after it runs the build. `make stop` then stops both processes (the fixture's end)."""
    reference = reference_build(tmp_path_factory)
    assert "serving deployments build-home-set/default and audit-source/default" in make_serve.said
    assert (make_serve.state / "env.sh").read_text().count(make_serve.api) == 1
    out = tmp_path / "build"
    config = {**SMALL, "workers": 1, "out": str(out)}  # the flow's one parameter: a BuildConfig
    args = [str(BIN / "prefect"), "deployment", "run", "build-home-set/default", "--watch",
            "--watch-timeout", "480", "--param", f"config={json.dumps(config)}"]
    result = run_cli(args, env={**make_serve.env, "PREFECT_API_URL": make_serve.api}, timeout=540, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + make_serve.log()[-3000:]
    assert "Completed" in result.stdout

    manifest = read_manifest(out)
    assert manifest["outputs"] == reference["outputs"]
    assert manifest["counts"]["homes"]["kept"] == SMALL["homes"]
    assert not (make_serve.folder / "outputs").exists() and not (tmp_path / "outputs").exists()


def test_make_prepares_the_prefect_database_before_the_first_build(tmp_path, tmp_path_factory):
    """`make` runs `python -m homeloop.flows.local init` once it has installed the environment:
    the first build's temporary server then finds its tables made instead of migrating them
    during its start-up. A second init finds nothing to do."""
    import sqlite3

    env = subprocess_env(tmp_path_factory, PREFECT_HOME=str(tmp_path / "prefect"))
    local = [str(BIN / "python"), "-m", "homeloop.flows.local", "init"]
    versions = []
    for _ in range(2):
        done = run_cli(local, env=env, timeout=300, cwd=tmp_path)
        assert done.returncode == 0, done.stdout[-3000:]
        with contextlib.closing(sqlite3.connect(tmp_path / "prefect" / "prefect.db")) as db:
            versions.append(db.execute("select version_num from alembic_version").fetchall())
            tables = {row[0] for row in db.execute("select name from sqlite_master where type = 'table'")}
    assert len(versions[0]) == 1 and versions[1] == versions[0]
    assert {"flow", "flow_run", "task_run", "deployment"} <= tables
    assert "-m homeloop.flows.local init" in (Path(__file__).parents[1] / "Makefile").read_text()


def test_an_installed_package_keeps_its_state_in_the_current_folder(tmp_path):
    """From a source checkout, Prefect state and outputs go under the checkout (as
    `make` expects); from an installed package, under the folder it is run in."""
    from homeloop.flows.settings import PROJECT_ROOT

    from test_cache import install_like_a_wheel, run_installed

    assert PROJECT_ROOT == Path(__file__).resolve().parent.parent
    site = install_like_a_wheel(tmp_path / "site-packages")
    work = tmp_path / "work"
    work.mkdir()
    found = run_installed(site, "import json, os; os.environ.pop('PREFECT_HOME', None); "
                          "from homeloop.flows import settings, local; "
                          "print(json.dumps({'root': str(settings.PROJECT_ROOT), 'state': str(local.STATE), "
                          "'home': os.environ['PREFECT_HOME']}))", cwd=work)
    assert found == {"root": str(work), "state": str(work / ".prefect"), "home": str(work / ".prefect")}
