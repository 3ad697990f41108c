"""``homeloop verify``: a finished build checks out; a deleted, edited or truncated
output, counts that do not add up and missing applicability rows are each named
on a line of their own (docs/pipeline.md)."""

from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest
from typer.testing import CliRunner

from homeloop.cli import app
from homeloop.core.io import sha256_file

pytestmark = pytest.mark.slow

runner = CliRunner()
TINY = {"plans": 40, "sites": 10, "homes": 4, "seed": 0, "verify_homes": 1}


def verify(folder):
    return runner.invoke(app, ["verify", str(folder)], env={"COLUMNS": "200", "NO_COLOR": "1"})


def problem_lines(output: str, folder) -> list[str]:
    """Every line but the closing summary."""
    return [line for line in output.splitlines() if line and not line.startswith(f"{folder}:")]


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    from homeloop.pipeline.stages import BuildConfig, run_build

    out = tmp_path_factory.mktemp("verify") / "build"
    manifest = run_build(BuildConfig(**TINY, out=out, workers=1, progress=False), log=lambda line: None)
    return out, manifest


@pytest.fixture
def build(finished, tmp_path):
    out, manifest = finished
    copy = tmp_path / "build"
    shutil.copytree(out, copy)
    homes = pd.read_parquet(copy / "homes.parquet")
    return copy, manifest, sorted(homes.loc[homes["kept"], "plan"])


def test_a_finished_build_verifies(build):
    out, manifest, _ = build
    result = verify(out)
    assert result.exit_code == 0, result.output
    assert problem_lines(result.output, out) == []
    assert f"{len(manifest['outputs'])} files checked, all as in manifest.json" in result.output


def test_a_deleted_usd_file_is_named(build):
    out, _, homes = build
    (out / "homes" / homes[0] / "home.usdc").unlink()
    result = verify(out)
    assert result.exit_code == 1
    assert problem_lines(result.output, out) == [f"missing: homes/{homes[0]}/home.usdc"]


def test_an_edited_home_file_is_named(build):
    out, _, homes = build
    path = out / "homes" / homes[1] / "home.json"
    home = json.loads(path.read_text())
    home["home_id"] = "someone-else"
    path.write_text(json.dumps(home))
    result = verify(out)
    assert result.exit_code == 1
    assert problem_lines(result.output, out) == [
        f"changed: homes/{homes[1]}/home.json (its sha256 differs from manifest.json)"]


def test_a_truncated_applicability_table_is_named(build):
    out, _, _ = build
    path = out / "applicability.parquet"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    result = verify(out)
    assert result.exit_code == 1
    lines = problem_lines(result.output, out)
    assert lines[0] == "changed: applicability.parquet (its sha256 differs from manifest.json)"
    assert lines[1].startswith("unreadable: applicability.parquet (")
    assert len(lines) == 2


def test_missing_applicability_rows_are_counted(build):
    """Rows of one robot body dropped, the manifest's hash updated to match: only the
    coverage check can see it."""
    out, _, homes = build
    table = pd.read_parquet(out / "applicability.parquet")
    robot = sorted(table["robot"].unique())[0]
    kept = table[~((table["robot"] == robot) & (table["home"] == homes[0]))]
    kept.to_parquet(out / "applicability.parquet", index=False)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["outputs"]["applicability.parquet"] = sha256_file(out / "applicability.parquet")
    (out / "manifest.json").write_text(json.dumps(manifest))
    result = verify(out)
    assert result.exit_code == 1
    missing = len(table) - len(kept)
    assert problem_lines(result.output, out) == [
        f"applicability: applicability.parquet lacks {missing} of {len(table)} home × task × robot rows "
        f"(e.g. home {homes[0]}, task {sorted(table['task'].unique())[0]}, robot {robot})"]


def test_counts_that_do_not_reconcile_are_named(build):
    out, manifest, homes = build
    edited = json.loads((out / "manifest.json").read_text())
    edited["counts"]["homes"]["kept"] += 1
    (out / "manifest.json").write_text(json.dumps(edited))
    result = verify(out)
    assert result.exit_code == 1
    c = edited["counts"]["homes"]
    assert problem_lines(result.output, out) == [
        f"counts: homes: {c['in']} in != {c['kept']} kept + {c['rejected']} rejected",
        f"counts: homes kept is {c['kept']} in manifest.json, but homes.parquet has {len(homes)}",
    ]


def test_an_extra_file_is_named(build):
    out, _, _ = build
    (out / "notes.txt").write_text("not from the build")
    result = verify(out)
    assert result.exit_code == 1
    assert problem_lines(result.output, out) == ["extra: notes.txt (not in manifest.json)"]


def test_a_folder_that_is_no_build_is_unusable(build, tmp_path):
    out, _, _ = build
    (out / "manifest.json").write_text("{ half a manifest")
    for folder, phrase in ((tmp_path / "nothing-here", "is not a folder"), (out, "cannot be read"),
                           (tmp_path, "has no manifest.json")):
        result = verify(folder)
        assert result.exit_code == 2, result.output
        lines = [line for line in result.output.splitlines() if line]
        assert len(lines) == 1 and lines[0].startswith("error:") and phrase in lines[0], result.output
