"""House cameras' static views kept on disk (homeloop/sim/static_visibility.py, "On disk"): a kept
file is read back only under its key, and one that is stale, cut short, damaged or from another home
is worked out again and written anew; the episode's record is the same either way.

The episodes are the scripted agent's in the house, through the benchmark's runner (the record file
it writes holds no wall-clock field), with the views kept in a scratch folder.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from homeloop.bench import runner
from homeloop.bench.records import record_path
from homeloop.pipeline.verify import bookkeeping
from homeloop.sim import static_visibility, visibility
from homeloop.sim.episode import DEFAULT_ROBOT
from homeloop.core.keyed_file import kept_on_disk
from homeloop.sim.static_visibility import BUILD_FOLDER, SUFFIX, KeptView, view_file, view_key

#: A house task whose scripted episode captures house cameras' frames.
TASK = "doorbell_false_alarm"


def record(house_file: Path, run_dir: Path, folder: Path | None) -> str:
    """The record the runner writes for the scripted episode of :data:`TASK`, views kept in ``folder``,
    in a process that has worked out no view yet (as a fresh worker: nothing kept in memory)."""
    visibility._PREPARED.clear()
    spec = runner.EpisodeSpec("house", str(house_file), TASK, DEFAULT_ROBOT, 0, runner.Flags(images=False))
    if folder is None:
        runner.run_episode(spec, "scripted", {}, str(run_dir))
    else:
        with kept_on_disk(folder):
            runner.run_episode(spec, "scripted", {}, str(run_dir))
    return record_path(run_dir, spec.id).read_text(encoding="utf-8")


def kept_files(folder: Path) -> list[Path]:
    return sorted(folder.rglob(f"*{SUFFIX}"))


@pytest.fixture(scope="module")
def reference(house_file, tmp_path_factory) -> tuple[str, Path, dict[Path, bytes]]:
    """The record without a disk cache, and the files a first run with one writes (their bytes)."""
    scratch = tmp_path_factory.mktemp("views")
    plain = record(house_file, scratch / "plain", None)
    folder = scratch / "cache"
    assert record(house_file, scratch / "first", folder) == plain
    files = {p: p.read_bytes() for p in kept_files(folder)}
    return plain, folder, files


def test_a_first_run_keeps_every_captured_cameras_view_and_a_second_reads_them(house_file, reference, tmp_path,
                                                                               monkeypatch):
    plain, folder, files = reference
    assert files, "the episode captured no house camera"
    for path, data in files.items():
        header = json.loads(data[:data.index(b"\n")])
        assert header["format"] == static_visibility.FORMAT_VERSION
        assert len(data) - data.index(b"\n") - 1 == (header["points"] + 7) // 8
        assert path.parent.name == "house"
    worked_out: list[int] = []
    real = static_visibility.blocked_in_chunks
    monkeypatch.setattr(static_visibility, "blocked_in_chunks",
                        lambda *a: worked_out.append(1) or real(*a))  # type: ignore[func-returns-value]
    calls_without_views, _ = _calls(lambda: record(house_file, tmp_path / "none", None), worked_out)
    calls_with_views, read_back = _calls(lambda: record(house_file, tmp_path / "kept", folder), worked_out)
    # every kept view read back: one fewer static pass per view than working them out
    assert calls_with_views == calls_without_views - len(files)
    assert read_back == plain
    assert {p: p.read_bytes() for p in kept_files(folder)} == files


def _calls(play: Callable[[], str], counter: list[int]) -> tuple[int, str]:
    counter.clear()
    text = play()
    return len(counter), text


def _truncate(path: Path, others: list[Path]) -> None:
    path.write_bytes(path.read_bytes()[:-3])


def _flip_a_bit(path: Path, others: list[Path]) -> None:
    data = bytearray(path.read_bytes())
    data[-1] ^= 0x01
    path.write_bytes(bytes(data))


def _header_only(path: Path, others: list[Path]) -> None:
    data = path.read_bytes()
    path.write_bytes(data[:data.index(b"\n") + 1])


def _stale_key(path: Path, others: list[Path]) -> None:
    data = path.read_bytes()
    header = json.loads(data[:data.index(b"\n")])
    header["key"] = "0" * 64  # made from another home, or older code's inputs
    path.write_bytes(json.dumps(header).encode() + data[data.index(b"\n"):])


def _older_format(path: Path, others: list[Path]) -> None:
    data = path.read_bytes()
    header = json.loads(data[:data.index(b"\n")])
    header["format"] = static_visibility.FORMAT_VERSION - 1
    path.write_bytes(json.dumps(header).encode() + data[data.index(b"\n"):])


def _another_homes(path: Path, others: list[Path]) -> None:
    """A whole, well-formed file, as another home's view with as many points writes it (its bits inverted)."""
    data = path.read_bytes()
    count = json.loads(data[:data.index(b"\n")])["points"]
    bits = ~np.unpackbits(np.frombuffer(data[data.index(b"\n") + 1:], dtype=np.uint8), count=count).astype(bool)
    KeptView(path, view_key("another home's hash", path.stem, [path.stem], [bits])).write(bits)


def _garbage(path: Path, others: list[Path]) -> None:
    path.write_bytes(b"\x00\xff not a view")


@pytest.mark.parametrize("spoil", [_truncate, _flip_a_bit, _header_only, _stale_key, _older_format,
                                   _another_homes, _garbage])
def test_a_spoilt_kept_view_is_worked_out_again_and_the_record_is_unchanged(house_file, reference, tmp_path, spoil):
    plain, folder, files = reference
    copy = tmp_path / "cache"
    shutil.copytree(folder, copy)
    kept = kept_files(copy)
    for path in kept:
        spoil(path, kept)
        assert path.read_bytes() != files[folder / path.relative_to(copy)]
    assert record(house_file, tmp_path / "run", copy) == plain
    # each file written anew, with the bytes a first run writes
    assert {p.relative_to(copy): p.read_bytes() for p in kept_files(copy)} == \
        {p.relative_to(folder): b for p, b in files.items()}


@settings(max_examples=40, deadline=None)
@given(bits=st.lists(st.booleans(), min_size=0, max_size=300), cut=st.integers(1, 40), flip=st.integers(0, 10_000))
def test_kept_bits_read_back_only_whole_and_under_their_key(tmp_path_factory, bits, cut, flip):
    folder = tmp_path_factory.mktemp("kept")
    path = view_file(folder, "home-1", "cam/with odd name", ["cam/with odd name"])
    assert path.parent.parent == folder and path.name.endswith(SUFFIX) and "/" not in path.name
    clear = np.array(bits, dtype=bool)
    key = view_key("hash", "cam", ["cam"], [clear])
    KeptView(path, key).write(clear)
    assert np.array_equal(KeptView(path, key).read(len(clear)), clear)
    assert KeptView(path, key + "0").read(len(clear)) is None
    assert KeptView(path, key).read(len(clear) + 1) is None
    data = path.read_bytes()
    path.write_bytes(data[:max(len(data) - cut, 0)])
    assert KeptView(path, key).read(len(clear)) is None
    damaged = bytearray(data)
    damaged[flip % len(damaged)] ^= 0x10
    path.write_bytes(bytes(damaged))
    assert KeptView(path, key).read(len(clear)) is None
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".")]  # no temporary file left


def test_kept_views_are_bookkeeping_of_a_build_folder():
    assert bookkeeping((BUILD_FOLDER / "some-home" / f"cam-0123abcd{SUFFIX}").as_posix())
    assert not bookkeeping((BUILD_FOLDER / "some-home" / f".cam-0123abcd{SUFFIX}.x.tmp").as_posix())
    assert not bookkeeping((BUILD_FOLDER / f"cam{SUFFIX}").as_posix())
