"""Stage cache keys: exact inputs (path in the build folder + content), every
parameter, and the code of the installed packages; a rerun redoes exactly the
stages whose key or outputs changed (docs/pipeline.md)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from homeloop.core.io import sha256_file, write_text
from homeloop.pipeline import cache as cache_module
from homeloop.pipeline.cache import (CODE_PACKAGES, FileDigests, StageCache, code_files, code_hash, package_dirs,
                                     stage_key)

# --- keys -------------------------------------------------------------------------------


def test_a_build_reads_each_version_of_a_file_once_to_hash_it(tmp_path, monkeypatch):
    path = tmp_path / "home.json"
    write_text(path, '{"rooms": []}\n')
    reads = []
    monkeypatch.setattr(cache_module, "sha256_file", lambda p: reads.append(p) or sha256_file(p))
    digest = FileDigests()
    first = digest(path)
    assert digest(path) == first == sha256_file(path) and len(reads) == 1
    write_text(path, '{"rooms": [1]}\n')  # written as every output is: a new file renamed into place
    assert digest(path) == sha256_file(path) != first and len(reads) == 2
    path.write_text('{"rooms": [2]}\n')  # edited in place: another size
    assert digest(path) == sha256_file(path) and len(reads) == 3


@pytest.fixture
def build(tmp_path):
    """A build folder with two homes whose home.json files have the same name and bytes."""
    for home in ("a", "b"):
        (tmp_path / "homes" / home).mkdir(parents=True)
        (tmp_path / "homes" / home / "home.json").write_text('{"rooms": []}\n')
    return tmp_path


def home_json(build: Path, home: str) -> Path:
    return build / "homes" / home / "home.json"


def test_inputs_are_named_by_their_path_in_the_build(build):
    one = stage_key("usd", {}, [home_json(build, "a")], build)
    assert stage_key("usd", {}, [home_json(build, "b")], build) != one
    assert stage_key("usd", {}, [home_json(build, "a"), home_json(build, "b")], build) != one


def test_the_same_build_in_another_folder_has_the_same_keys(build, tmp_path_factory):
    copy = tmp_path_factory.mktemp("moved") / "build"
    shutil.copytree(build, copy)
    inputs = ["a", "b"]
    assert (stage_key("usd", {"usda": False}, [home_json(copy, h) for h in inputs], copy)
            == stage_key("usd", {"usda": False}, [home_json(build, h) for h in inputs], build))


def test_a_changed_or_deleted_input_changes_the_key(build):
    inputs = [home_json(build, "a"), home_json(build, "b")]
    before = stage_key("usd", {}, inputs, build)
    home_json(build, "b").write_text('{"rooms": [1]}\n')
    edited = stage_key("usd", {}, inputs, build)
    home_json(build, "b").unlink()
    deleted = stage_key("usd", {}, inputs, build)  # no error: the stage decides what a missing input means
    assert len({before, edited, deleted}) == 3


def test_every_parameter_is_part_of_the_key(build):
    inputs = [home_json(build, "a")]
    keys = {stage_key("select", params, inputs, build)
            for params in ({"seed": 0, "homes": 4}, {"seed": 1, "homes": 4}, {"seed": 0, "homes": 6})}
    assert len(keys) == 3
    assert stage_key("select", {"seed": 0, "homes": 4}, inputs, build) in keys


def test_a_tampered_or_deleted_output_is_not_reused(build):
    cache = StageCache(build)
    key = cache.key("homes", {"homes": 2}, [])
    outputs = [home_json(build, "a"), home_json(build, "b")]
    cache.store("homes", key, outputs, {"homes": ["a", "b"]})
    assert cache.lookup("homes", key) == {"homes": ["a", "b"]}
    assert cache.lookup("homes", cache.key("homes", {"homes": 3}, [])) is None
    home_json(build, "a").write_text('{"rooms": ["edited"]}\n')
    assert cache.lookup("homes", key) is None
    cache.store("homes", key, outputs, {"homes": ["a", "b"]})
    home_json(build, "b").unlink()
    assert cache.lookup("homes", key) is None


# --- the code hash ----------------------------------------------------------------------


def test_the_code_hash_covers_every_package_of_the_project():
    names = code_files()
    for package in CODE_PACKAGES:
        assert any(name.startswith(f"{package}/") for name in names), package
    assert "homeloop/pipeline/cache.py" in names and "homeloop/catalog/robots.yaml" in names
    assert all(path.is_file() for path in names.values())


def install_like_a_wheel(site: Path) -> Path:
    """Copy the project's packages into ``site`` the way a wheel installs them
    (homeloop/ with its subpackages and package data), whatever layout they are
    imported from here."""
    for package, (source,) in package_dirs().items():
        target = site.joinpath(*package.split("."))
        shutil.copytree(source, target, ignore=shutil.ignore_patterns("__pycache__"), dirs_exist_ok=True)
    return site


def run_installed(site: Path, code: str, cwd: Path) -> dict:
    """Run ``code`` (which prints JSON) in a Python that imports homeloop from ``site``."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=cwd)
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout)


def test_the_code_hash_is_the_same_for_a_package_installed_from_a_wheel(tmp_path):
    """Import the packages from a wheel's layout: the same files, the same names, the same hash."""
    site = install_like_a_wheel(tmp_path / "site-packages")
    installed = run_installed(site, "import json, homeloop.pipeline.cache as c; print(json.dumps("
                                    "{'file': c.__file__, 'hash': c.code_hash(), 'names': sorted(c.code_files())}))",
                              cwd=tmp_path)
    assert installed["file"].startswith(str(site))
    assert installed["names"] == sorted(code_files())
    assert installed["hash"] == code_hash()


# --- builds -----------------------------------------------------------------------------

TINY = {"plans": 40, "sites": 10, "homes": 4, "seed": 0, "verify_homes": 1}


def run_tiny(out: Path, **changes) -> tuple[dict, dict[str, str]]:
    """Build into ``out``; return the manifest and, per stage, its log line."""
    from homeloop.pipeline.stages import BuildConfig, run_build

    lines: list[str] = []
    manifest = run_build(BuildConfig(**{**TINY, **changes}, out=out, workers=1, progress=False), log=lines.append)
    return manifest, {line.split(":", 1)[0]: line for line in lines if ":" in line}


def reused(log: dict[str, str]) -> set[str]:
    return {stage for stage, line in log.items() if ": unchanged, reused" in line}


@pytest.fixture(scope="module")
def tiny_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("tiny") / "build"
    manifest, _ = run_tiny(out)
    return out, manifest


@pytest.fixture
def copy_of(tiny_build, tmp_path):
    out, manifest = tiny_build
    copy = tmp_path / "build"
    shutil.copytree(out, copy)
    return copy, manifest


def kept_homes(out: Path) -> list[str]:
    homes = pd.read_parquet(out / "homes.parquet")
    return sorted(homes.loc[homes["kept"], "plan"])


def assert_coherent(out: Path, homes: int) -> None:
    """Every kept home has its USD file and its applicability rows, and nothing else has."""
    kept = kept_homes(out)
    assert len(kept) == homes
    usd = pd.read_parquet(out / "usd.parquet")
    assert sorted(usd["home"]) == sorted(["house", *kept])
    for home in ["house", *kept]:
        assert (out / "homes" / home / "home.usdc").is_file(), home
    applicability = pd.read_parquet(out / "applicability.parquet")
    assert sorted(applicability["home"].unique()) == sorted(["house", *kept])
    folders = sorted(p.name for p in (out / "homes").iterdir() if p.is_dir() and not p.name.startswith("."))
    assert folders == sorted(["house", *kept])


@pytest.mark.slow
def test_an_unchanged_rerun_reuses_every_stage(copy_of):
    from homeloop.pipeline.stages import STAGES

    out, manifest = copy_of
    again, log = run_tiny(out)
    assert reused(log) == set(STAGES)
    assert again["outputs"] == manifest["outputs"]


@pytest.mark.slow
def test_more_homes_rerun_the_stages_that_depend_on_them(copy_of):
    out, manifest = copy_of
    again, log = run_tiny(out, homes=TINY["homes"] + 2)
    assert reused(log) == {"source", "ingest", "audit", "features", "house"}
    assert_coherent(out, TINY["homes"] + 2)
    assert again["counts"]["usd"]["in"] == TINY["homes"] + 2 + 1


@pytest.mark.slow
def test_another_seed_builds_and_screens_its_own_homes(copy_of):
    out, manifest = copy_of
    before = set(kept_homes(out))
    again, log = run_tiny(out, seed=1)
    assert reused(log) == {"house"}
    assert_coherent(out, TINY["homes"])
    assert not before & set(kept_homes(out))


@pytest.mark.slow
def test_a_tampered_home_is_built_again(copy_of):
    out, manifest = copy_of
    home = kept_homes(out)[0]
    path = out / "homes" / home / "home.json"
    original = path.read_bytes()
    path.write_bytes(original.replace(b'"rooms"', b'"rooms" ', 1))
    again, log = run_tiny(out)
    assert "homes" not in reused(log)
    assert path.read_bytes() == original
    # The restored file is the one the later stages were built from: they are reused.
    assert {"usd", "applicability"} <= reused(log)
    assert again["outputs"] == manifest["outputs"]


@pytest.mark.slow
def test_a_deleted_input_is_rebuilt_and_the_build_ends_as_before(copy_of):
    out, manifest = copy_of
    home = kept_homes(out)[-1]
    (out / "homes" / home / "home.json").unlink()
    (out / "selection.parquet").unlink()
    again, log = run_tiny(out)
    assert {"select", "homes"}.isdisjoint(reused(log))
    assert again["outputs"] == manifest["outputs"]
    assert_coherent(out, TINY["homes"])


def _stage_hashes():
    from homeloop.pipeline import cache, stages

    for f in (cache.code_files, cache._module_files, cache._module_imports, cache._code_hash_of):
        f.cache_clear()
    names = [n for n in dir(stages) if n.startswith("stage_") and callable(getattr(stages, n))]
    return {n: cache.stage_code_hash(getattr(stages, n)) for n in names}


def _edited(monkeypatch, tmp_path, module_file: str):
    """Pretend ``module_file`` (a code-file name such as ``homeloop/cli/build.py``) was edited."""
    from homeloop.pipeline import cache

    files = dict(cache.code_files())
    copy = tmp_path / Path(module_file).name
    copy.write_bytes(files[module_file].read_bytes() + b"\n# edited\n")
    files[module_file] = copy
    monkeypatch.setattr(cache, "code_files", lambda names=CODE_PACKAGES: files)
    for f in (cache._module_files, cache._module_imports, cache._code_hash_of):
        f.cache_clear()


def test_editing_the_command_line_reruns_no_stage(monkeypatch, tmp_path):
    from homeloop.pipeline import cache, stages

    before = _stage_hashes()
    whole_build = cache.build_code_hash()
    _edited(monkeypatch, tmp_path, "homeloop/cli/build.py")
    after = {n: cache.stage_code_hash(getattr(stages, n)) for n in before}
    assert after == before
    assert cache.build_code_hash() == whole_build  # an unchanged build stays up to date


def test_editing_a_stage_changes_the_code_an_up_to_date_build_is_checked_against(monkeypatch, tmp_path):
    from homeloop.pipeline import cache

    _stage_hashes()
    whole_build = cache.build_code_hash()
    _edited(monkeypatch, tmp_path, "homeloop/pipeline/furnish/objects.py")
    assert cache.build_code_hash() != whole_build


def test_editing_the_report_reruns_only_the_stages_that_reach_it(monkeypatch, tmp_path):
    from homeloop.pipeline import cache, stages

    before = _stage_hashes()
    reach = {n for n in before
             if "homeloop.pipeline.report" in cache.module_closure(cache._stage_reach(stages, getattr(stages, n)))}
    assert "stage_report" in reach and len(reach) < len(before)
    _edited(monkeypatch, tmp_path, "homeloop/pipeline/report.py")
    after = {n: cache.stage_code_hash(getattr(stages, n)) for n in before}
    assert {n for n in before if after[n] != before[n]} == reach


def test_editing_the_reference_agent_reruns_only_the_verify_stage_and_the_report(monkeypatch, tmp_path):
    """The build's parameters read the verify stage's settings; those lived beside the code that
    plays the pairs, so every stage reached the agent through them and an edited agent rebuilt
    every home."""
    from homeloop.pipeline import cache, stages

    before = _stage_hashes()
    _edited(monkeypatch, tmp_path, "homeloop/bench/agents/scripted.py")
    after = {n: cache.stage_code_hash(getattr(stages, n)) for n in before}
    assert {n for n in before if after[n] != before[n]} == {"stage_verify", "stage_report"}


def test_editing_a_process_of_the_simulator_spares_the_homes_and_their_usd(monkeypatch, tmp_path):
    """The homes and USD stages read a few simulator facts (the smoke's spread, the lights' lumens,
    the renderer's colours); the packages holding them no longer import every module in their
    ``__init__``, so an edit to the pan's cooking reruns only the stages that play or screen tasks."""
    from homeloop.pipeline import cache, stages

    before = _stage_hashes()
    _edited(monkeypatch, tmp_path, "homeloop/sim/dynamics/cooking.py")
    after = {n: cache.stage_code_hash(getattr(stages, n)) for n in before}
    assert {n for n in before if after[n] != before[n]} == {"stage_applicability", "stage_verify", "stage_report"}


# --- an unchanged rerun stops before any stage ------------------------------------------------------


def tiny_config(out: Path, **changes):
    from homeloop.pipeline.stages import BuildConfig

    return BuildConfig(**{**TINY, **changes}, out=out, workers=1, progress=False)


@pytest.mark.slow
def test_a_finished_build_is_up_to_date_and_a_rerun_says_so_without_running_a_stage(copy_of):
    from homeloop.flows.command import build_command
    from homeloop.pipeline.verify import up_to_date

    from homeloop.core.io import owner_token

    out, manifest = copy_of
    leftover = out / "homes" / f".home.json.{owner_token(out)}.a1b2c3d4.tmp"  # a write the build's kill cut short
    leftover.write_bytes(b"half a file")
    assert up_to_date(tiny_config(out)) == json.loads((out / "manifest.json").read_text())
    assert not leftover.exists()
    said: list[str] = []
    again = build_command(tiny_config(out), say=said.append)
    assert len(said) == 1 and said[0].endswith("is up to date (" + f"{len(manifest['outputs']):,}" + " outputs "
                                               "as recorded; same parameters, code, libraries and source): "
                                               "nothing to run")
    assert again["outputs"] == manifest["outputs"]
    assert not (out / ".build.lock").exists()


@pytest.mark.slow
@pytest.mark.parametrize("change", ["parameter", "tampered", "extra", "deleted", "source", "code", "no manifest"])
def test_a_build_with_anything_changed_is_not_up_to_date(copy_of, monkeypatch, change):
    from homeloop.pipeline import cache
    from homeloop.pipeline.verify import up_to_date

    out, manifest = copy_of
    config = tiny_config(out)
    home = kept_homes(out)[0]
    if change == "parameter":
        config = tiny_config(out, homes=TINY["homes"] + 1)
    elif change == "tampered":
        (out / "homes" / home / "preview.png").write_bytes(b"not a picture")
    elif change == "extra":
        (out / "homes" / home / "notes.txt").write_text("mine")
    elif change == "deleted":
        (out / "usd.parquet").unlink()
    elif change == "source":
        # The generated source's defects list is no output of the manifest, but its stage wrote it.
        sidecars = list((out / "source").glob("*.defects.csv"))
        target = sidecars[0] if sidecars else out / "source" / "geometries.csv"
        target.write_bytes(target.read_bytes() + b"\n")
    elif change == "code":
        monkeypatch.setattr(cache, "build_code_hash", lambda: "0" * 64)
    else:
        (out / "manifest.json").unlink()
    assert up_to_date(config) is None
