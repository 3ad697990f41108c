"""Fixtures for the simulator tests: the house, built once per test session."""

from __future__ import annotations

import inspect

import pytest

from homeloop.catalog import load_catalog
from homeloop.home import Home


def build_house() -> Home:
    """The main benchmark house, furnished and equipped as the build makes it."""
    from homeloop.house import load_house
    from homeloop.pipeline.devices import equip_house
    from homeloop.pipeline.furnish import furnish_house

    catalog = load_catalog()
    home = furnish_house(catalog)
    if "plan" in inspect.signature(equip_house).parameters:
        return equip_house(home, load_house(), catalog).home
    return equip_house(home, catalog).home


@pytest.fixture(scope="session")
def house_home() -> Home:
    return build_house()


@pytest.fixture(scope="session")
def catalog():
    return load_catalog()
