"""The runner: resume keeps finished episodes; no agent takes over another's records."""

from __future__ import annotations

import pytest

from homeloop.bench import runner
from homeloop.bench.records import read_records
from homeloop.core.errors import HomeLoopError


def test_a_rerun_keeps_finished_episodes_and_another_agent_needs_its_own_folder(house_file, tmp_path):
    specs = runner.plan({"house": house_file}, ["fall_false_alarm"], "unitree_g1_d_ultimate", [0, 1],
                        runner.Flags(images=False))
    out = tmp_path / "run"
    first = runner.run(specs, "do-nothing", out)
    assert sorted(s["id"] for s in first) == sorted(s.id for s in specs)
    assert runner.run(specs, "do-nothing", out) == []  # everything recorded: nothing runs again
    assert len(read_records([out]).records) == len(specs)
    with pytest.raises(HomeLoopError, match="holds the episodes of do-nothing, flags no-images"):
        runner.run(specs, "over-reactor", out)
    other = runner.plan({"house": house_file}, ["person_down_emergency"], "unitree_g1_d_ultimate", [0], runner.Flags(images=False))
    with pytest.raises(HomeLoopError, match="holds the episodes of do-nothing"):
        runner.run(other, "over-reactor", out)  # other episodes too: a run folder belongs to one agent
    (out / "run.json").unlink()  # a folder from before run.json named its owner: its records still do
    with pytest.raises(HomeLoopError, match="is recorded by do-nothing"):
        runner.run(specs, "over-reactor", out)
