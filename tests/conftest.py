"""Shared test fixtures: small hand-written Swiss Dwellings plans, the house, its home file, the catalog."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections import Counter
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import settings as hypothesis_settings

from homeloop.core.plan import Plan

FIXTURES = Path(__file__).parent / "fixtures"
_PREFECT_HOME = pytest.StashKey[Path]()

# Property tests draw the same examples on every run (CI never meets a new case by chance);
# HYPOTHESIS_PROFILE=explore searches afresh each run, to look for new counterexamples.
# No deadline: an example's wall time depends on the machine's load, never on the code's correctness.
hypothesis_settings.register_profile("repeatable", derandomize=True, deadline=None)
hypothesis_settings.register_profile("explore", derandomize=False, deadline=None)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "repeatable"))


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("homeloop")
    group.addoption("--shortcut-build", metavar="DIR", default=None,
                    help="a build folder: tests/sim/test_episode_cost.py also plays the screened pairs of a sample "
                         "of its homes with the simulator's shortcuts on and off")
    group.addoption("--shortcut-homes", metavar="N", type=int, default=100,
                    help="how many of that build's homes (drawn as the verify stage draws a sample; default 100)")


def pytest_configure(config: pytest.Config) -> None:
    """Flows the tests run in this process keep Prefect's state in a folder of this process's own:
    never the checkout's ``.prefect/``, and never a folder another test process (``make test``
    runs several) writes at the same time."""
    from build_fixtures import prefect_home

    folder = Path(tempfile.mkdtemp(prefix="homeloop-tests-prefect-"))
    config.stash[_PREFECT_HOME] = folder
    os.environ["PREFECT_HOME"] = str(prefect_home(folder))


def pytest_unconfigure(config: pytest.Config) -> None:
    folder = config.stash.get(_PREFECT_HOME, None)
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Modules with the most slow tests first, each module's tests in their own order: `make test`
    hands whole modules to its processes (``--dist loadfile``), and the longest started first end
    with the rest instead of after them."""
    def module(item: pytest.Item) -> str:
        return item.nodeid.split("::")[0]

    slow = Counter(module(item) for item in items if item.get_closest_marker("slow"))
    items.sort(key=lambda item: -slow[module(item)])


def load_fixture_plans(path: str | Path) -> list[Plan]:
    """Plans of a small fixture CSV (row = file line, header = line 1), by key.

    Lenient: fixtures keep invalid polygons on purpose, for the audit to find.
    """
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    df["row"] = range(2, len(df) + 2)
    ids = df.assign(site=df["site_id"].astype(float).astype(int), floor=df["floor_id"].astype(float).astype(int))
    groups = ids.groupby(["site", "floor", "apartment_id"], sort=True)
    return [Plan.from_rows(rows.drop(columns=["site", "floor"]), lenient=True) for _, rows in groups]


@pytest.fixture
def fixture_plan():
    """Load the single plan of ``tests/fixtures/<name>.csv``."""

    def load(name: str) -> Plan:
        plans = load_fixture_plans(FIXTURES / f"{name}.csv")
        assert len(plans) == 1, f"{name}.csv holds {len(plans)} plans, expected 1"
        return plans[0]

    return load


@pytest.fixture(scope="session")
def house_home():
    """The main benchmark house, furnished, equipped and checked as builds and runs make it
    (built once per test session)."""
    from homeloop.pipeline.houses import house_home as build_house

    return build_house()


@pytest.fixture(scope="session")
def house_file(house_home, tmp_path_factory):
    """The house's home file, written once per test session (read it; do not change it)."""
    return house_home.write(tmp_path_factory.mktemp("house") / "home.json")


#: A short house task whose scripted route captures a house camera (an image comes back) and passes:
#: the episode the harness tests (MCP, Gymnasium) replay.
HARNESS_TASK = "doorbell_false_alarm"


@pytest.fixture(scope="session")
def scripted(house_file, tmp_path_factory):
    """The scripted agent's record of :data:`HARNESS_TASK` in the house at seed 0 as ``bench run``
    writes it, and its run folder: what each harness must reproduce."""
    from homeloop.bench import runner
    from homeloop.bench.records import read_records
    from homeloop.core.ids import DEFAULT_ROBOT, HOUSE_ID

    out = tmp_path_factory.mktemp("scripted")
    runner.run(runner.plan({HOUSE_ID: house_file}, [HARNESS_TASK], DEFAULT_ROBOT, [0]), "scripted", out)
    (record,) = read_records([out]).records
    assert record["passed"]
    return record, out


@pytest.fixture(scope="session")
def make_serve(tmp_path_factory):
    """One Prefect server serving the deployments, as `make serve` starts it, for the session's
    deployment tests; stopped as `make stop` stops it (tests/prefect_server.py)."""
    from build_fixtures import prefect_home, subprocess_env
    from prefect_server import served_deployments

    folder = tmp_path_factory.mktemp("serve")
    env = subprocess_env(tmp_path_factory, PREFECT_HOME=str(prefect_home(folder / "prefect")), PREFECT_UI_ENABLED="false",
                         PREFECT_SERVER_LOGGING_LEVEL="WARNING")
    with served_deployments(folder, env) as served:
        yield served


@pytest.fixture(scope="session")
def catalog():
    from homeloop.core.catalog import load_catalog

    return load_catalog()


def equip_generated(folder, catalog, plans=6, seed=5):
    """The equip results (up to three, in plan order) of the furnished homes of ``plans`` generated plans
    of ``seed`` (written into ``folder``) that equip without a failure."""
    import numpy as np

    from homeloop.pipeline.devices import equip
    from homeloop.pipeline.furnish import furnish
    from homeloop.pipeline.sources.swiss_dwellings import read_plans
    from homeloop.pipeline.sources.synthetic import generate

    path = folder / "plans.csv"
    generate(path, plans=plans, sites=2, seed=seed, defect_rate=0.0)
    results = []
    for plan in read_plans(path)[0]:
        furnished = furnish(plan, catalog, np.random.default_rng(0))
        if furnished.ok:
            equipped = equip(furnished.home, catalog, np.random.default_rng(0))
            if not equipped.failures:
                results.append(equipped)
    assert len(results) >= 2
    return results[:3]


@pytest.fixture(scope="session")
def generated_homes(tmp_path_factory, catalog):
    """Up to three furnished, equipped homes from generated plans (built once per test session)."""
    return [r.home for r in equip_generated(tmp_path_factory.mktemp("plans"), catalog)]
