"""The house's hand-written furnishing file (``homeloop/core/data/house_furnishing.yaml``) and its
schema: furniture at explicit poses, objects on it or on the floor, named points and which
windows open (homeloop.pipeline.furnish.house places it)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from homeloop.core.home import NamedPoint, Opening
from homeloop.core.house import HOUSE_CSV, HOUSE_PLAN_KEY
from homeloop.core.io import load_yaml


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FixedFurniture(_Strict):
    """A piece of furniture at an explicit pose (x, y in m, yaw in degrees)."""

    id: str | None = None
    catalog_id: str
    room: str
    x: float
    y: float
    yaw_deg: float = 0.0
    z: float = 0.0
    note: str | None = None


class FixedObject(_Strict):
    """An object on a surface or in a container of a fixed piece of furniture, or on a
    room's floor. Without ``x``/``y`` it is centred on its surface or container."""

    id: str | None = None
    catalog_id: str
    furniture: str | None = None
    surface: str | None = None
    container: str | None = None
    room: str | None = None
    x: float | None = None
    y: float | None = None
    yaw_deg: float | None = None
    note: str | None = None


class FixedPoint(_Strict):
    """A named spot on a room's floor (the parcel spot on the porch), written to the
    home file's ``points``."""

    name: str
    room: str
    x: float
    y: float
    note: str | None = None


class HouseFurnishing(_Strict):
    """Items placed verbatim before the room rules complete the home."""

    plan: str = HOUSE_PLAN_KEY
    furniture: list[FixedFurniture] = []
    objects: list[FixedObject] = []
    points: list[FixedPoint] = []
    openable_windows: list[str] | None = Field(
        None, description="if given, only these windows can be opened; the others are fixed glazing")
    note: str | None = None

    def named_points(self) -> list[NamedPoint]:
        """The points as the home file holds them."""
        return [NamedPoint(name=p.name, room=p.room, x=p.x, y=p.y) for p in self.points]

    def with_openable_windows(self, openings: list[Opening]) -> list[Opening]:
        """The openings, the windows not named in :attr:`openable_windows` made fixed glazing."""
        if self.openable_windows is None:
            return openings
        return [o.model_copy(update={"openable": o.id in self.openable_windows}) if o.kind == "window" else o
                for o in openings]


#: The house's furnishing file (package data beside the house's plan).
HOUSE_FURNISHING_YAML: Path = HOUSE_CSV.with_name("house_furnishing.yaml")


def load_house_furnishing(path: str | Path | None = None) -> HouseFurnishing:
    """The hand-written furnishing of the house (``homeloop/core/data/house_furnishing.yaml``)."""
    path = Path(path) if path is not None else HOUSE_FURNISHING_YAML
    data = load_yaml(path.read_text(encoding="utf-8")) or {}
    return HouseFurnishing.model_validate(data)
