"""The build report's task applicability: the share of homes each task applies to."""

from __future__ import annotations

import re

import pandas as pd

from homeloop.core.io import write_parquet
from homeloop.pipeline.report import _task_share_section


def _cells(html_text: str) -> list[list[str]]:
    return [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", html_text) if "<td>" in row]


def test_each_tasks_share_of_homes_per_body_leaves_the_house_out(tmp_path):
    rows = []
    for home, plants in (("house", True), ("a", True), ("b", False), ("c", False), ("d", False)):
        for robot in ("pal_tiago", "unitree_g1_d_ultimate"):
            rows.append((home, "water_the_plants", "requests", False, robot, plants and robot != "pal_tiago"))
            rows.append((home, "housemate_down_emergency", "wellbeing", True, robot, True))
    table = pd.DataFrame(rows, columns=["home", "task", "family", "extension", "robot", "applicable"])
    write_parquet(tmp_path / "applicability.parquet", table.assign(reasons=""))
    heading, body = _task_share_section(tmp_path)
    assert "4 homes" in heading
    assert re.findall(r"<th>(.*?)</th>", body) == ["task", "family", "pal_tiago", "unitree_g1_d_ultimate"]
    assert _cells(body) == [["water_the_plants", "requests", "0%", "25%"],
                            ["housemate_down_emergency", "wellbeing (extension)", "100%", "100%"]]


def test_no_applicability_table_no_section(tmp_path):
    assert _task_share_section(tmp_path) == []


def test_screened_against_verified_per_task_shows_each_gap_and_why_over_the_goal():
    from homeloop.bench.pairs import NOT_RUN_HOME
    from homeloop.pipeline.report import _gap_section
    from homeloop.pipeline.verify_pairs import GAP_GOAL

    rows = []
    # handle_smoke_alarm: 20 homes screened, one fails its checks (a 5 % gap, at the goal);
    # water_the_plants: 10 screened, 3 fail (30 %), two of them for the same reason in their homes.
    for i in range(20):
        rows.append((f"h{i}", "handle_smoke_alarm", "hazards", True, i != 3,
                     "" if i != 3 else "checks failed: stove_off"))
    for i in range(10):
        reason = {0: f"scenario: no plant in h{i}", 1: f"scenario: no plant in h{i}", 2: "checks failed: plant_watered"}
        rows.append((f"h{i}", "water_the_plants", "requests", True, i not in reason, reason.get(i, "")))
    rows.append(("h99", "water_the_plants", "requests", True, False, NOT_RUN_HOME))  # not played
    rows.append(("h98", "water_the_plants", "requests", False, False, ""))  # not screened
    table = pd.DataFrame(rows, columns=["home", "task", "family", "applicable", "verified", "verify_reason"])
    heading, body, note = _gap_section(table)
    assert _cells(body) == [
        ["handle_smoke_alarm", "hazards", "20", "19", "1", "5.0%", ""],
        ["water_the_plants", "requests", "10", "7", "3", "30.0%", "scenario: no plant in &lt;home&gt;"]]
    assert f"1 task(s) fail more than {GAP_GOAL:.0%}" in note


def test_a_verified_share_is_shown_to_a_tenth_and_never_higher_than_it_is():
    from homeloop.pipeline.report import _share

    assert _share(pd.Series([True] * 39_507 + [False] * 179)) == "99.5%"
    assert _share(pd.Series([True] * 9_999 + [False])) == "99.9%"
    assert _share(pd.Series([True, True])) == "100.0%"
    assert _share(pd.Series([], dtype=bool)) == ""
