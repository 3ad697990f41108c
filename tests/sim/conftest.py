"""Fixtures for the simulator tests: the house, built once per test session."""

from __future__ import annotations

import pytest

from homeloop.catalog import load_catalog
from homeloop.home import Home


def build_house() -> Home:
    """The main benchmark house, furnished and equipped as the build makes it."""
    from homeloop.pipeline.devices import equip_house
    from homeloop.pipeline.furnish import furnish_house

    catalog = load_catalog()
    return equip_house(furnish_house(catalog), catalog).home


@pytest.fixture(scope="session")
def house_home() -> Home:
    return build_house()


@pytest.fixture(scope="session")
def catalog():
    return load_catalog()
