"""The hand-designed house as a checked home file (docs/pipeline.md).

One function builds it for the build's house stage and for the benchmark
(``homeloop bench run --homes house``), so both run in the same house.
"""

from __future__ import annotations

from pathlib import Path

from homeloop.core.catalog import Catalog, load_catalog
from homeloop.core.check import check_home
from homeloop.core.errors import HomeLoopError
from homeloop.core.home import Home
from homeloop.core.house import HOUSE_ID


def house_home(catalog: Catalog | None = None) -> Home:
    """The house furnished from its own file, equipped and checked; a failing check stops with one line."""
    from homeloop.pipeline.devices import equip_house
    from homeloop.pipeline.furnish import furnish_house

    catalog = catalog or load_catalog()
    equipped = equip_house(furnish_house(catalog, seed=0), catalog)
    problems = [str(p) for p in check_home(equipped.home, catalog)] + list(equipped.failures)
    if problems:
        raise HomeLoopError("the house does not pass its checks: " + "; ".join(problems))
    return equipped.home.model_copy(update={"home_id": HOUSE_ID})


def write_house_home(folder: Path) -> Path:
    """``folder/home.json`` holding the house (rewritten only when its bytes change)."""
    path = Path(folder) / "home.json"
    text = house_home().to_json()
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        Home.from_json(text).write(path)
    return path
