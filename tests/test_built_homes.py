"""What a build leaves for its users: homes that pass the independent check,
USD files that reopen and validate, and applicability rows for every home."""

from __future__ import annotations

import random
from pathlib import Path

import pandas as pd
import pytest

from build_fixtures import SMALL, reference_build
from homeloop.sim.task import TASK_IDS
from homeloop.core.catalog import load_catalog
from homeloop.core.check import check_home
from homeloop.core.home import Home

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> Path:
    return Path(reference_build(tmp_path_factory)["out"])


def test_a_random_sample_of_built_homes_passes_check_home(build):
    homes = pd.read_parquet(build / "homes.parquet")
    kept = sorted(homes.loc[homes["kept"], "plan"])
    assert len(kept) == SMALL["homes"]
    catalog = load_catalog()
    for home_id in random.Random(0).sample(kept, 5):
        home = Home.read(build / "homes" / home_id / "home.json")
        assert check_home(home, catalog) == [], home_id
        assert home.agent_camera_count >= 1 and home.devices_of_type("smoke_sensor")


def test_built_homes_reopen_as_valid_usd(build):
    from pxr import Usd, UsdGeom

    from homeloop.pipeline.usd import validate_stage

    usd = pd.read_parquet(build / "usd.parquet")
    assert usd["valid"].all() and set(usd["home"]) >= {"house"}
    first = usd[usd["home"] != "house"].iloc[0]
    stage = Usd.Stage.Open(str(build / first["file"]))
    assert UsdGeom.GetStageMetersPerUnit(stage) == 1.0 and UsdGeom.GetStageUpAxis(stage) == UsdGeom.Tokens.z
    assert stage.GetDefaultPrim().GetPath() == "/Home"
    assert validate_stage(stage) == []
    home = Home.read(build / "homes" / first["home"] / "home.json")
    cameras = [p for p in stage.Traverse() if p.IsA(UsdGeom.Camera)]
    assert len(cameras) == len(home.cameras)


def test_applicability_covers_every_home_task_and_robot(build):
    table = pd.read_parquet(build / "applicability.parquet")
    homes = pd.read_parquet(build / "homes.parquet")
    expected_homes = {"house", *homes.loc[homes["kept"], "plan"]}
    assert set(table["home"]) == expected_homes
    assert len(table) == len(expected_homes) * len(TASK_IDS) * len(load_catalog().robots)
    # Every "not applicable" row says why; every applicable one says nothing.
    assert (table.loc[~table["applicable"], "reasons"].str.len() > 0).all()
    assert (table.loc[table["applicable"], "reasons"] == "").all()
    house = table[(table["home"] == "house") & (table["robot"] == "unitree_g1_d_ultimate")]
    assert house["applicable"].all() and len(house) == 24
