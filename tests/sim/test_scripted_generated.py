"""The scripted reference agent beyond the house: the entry tasks in generated homes, where the
parcel spot may lie outside every room of the plan and the robot reaches it from the doorway,
and closing up, where the window to shut may stand behind furniture."""

from __future__ import annotations

import pytest

from homeloop.bench import runner

#: The entry tasks, and closing up (a window to shut, wherever the home has one).
TASKS = ("bring_in_package", "answer_delivery", "doorbell_false_alarm", "close_up_after_leaving")


@pytest.mark.parametrize("task", TASKS)
def test_tasks_pass_in_generated_homes_where_they_apply(task, generated_homes, catalog):
    from homeloop.sim.task import load_tasks
    from homeloop.pipeline.applicability import screen

    robot, spec = catalog.robots["unitree_g1_d_ultimate"], load_tasks()[task]
    played = 0
    for home in generated_homes:
        if not screen(home, spec, robot, catalog).applicable:
            continue
        outcome = runner.play(home, task, robot.id, 0, runner.Flags(images=False), "scripted", {})
        assert outcome.passed, (home.home_id, [c.id for c in outcome.checks if not c.passed])
        played += 1
    assert played, f"{task} applies to none of the generated homes"
