"""The build report's task applicability: the share of homes each task applies to."""

from __future__ import annotations

import re

import pandas as pd

from homeloop.io import write_parquet
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
