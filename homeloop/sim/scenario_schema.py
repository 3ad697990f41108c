"""What a scenario file declares, and a task's ``scenario_additions`` with it: the people,
objects, hazards, faults, openings, devices and timeline of a scenario, as pydantic models
(the scenario files' schema; homeloop.sim.scenario sets a scenario up in a world and says
what each piece means). Apart from that module so that the task schema (homeloop.sim.task)
can validate a task's additions without importing the machinery that casts a scenario."""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, NonNegativeFloat, PositiveFloat, model_validator

from homeloop.core.catalog import FieldValue
from homeloop.core.errors import HomeLoopError
from homeloop.sim.dynamics.cooking import RECIPES
from homeloop.sim.dynamics.people import ACTIVITIES
from homeloop.sim.dynamics.timeline import HANDLERS


class ScenarioFileError(HomeLoopError):
    """A scenario file that cannot be read; each line names the file and the field."""


class ScenarioModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class PersonSpec(ScenarioModel):
    id: str
    catalog_id: str
    at: str | None = None
    activity: str = "standing"
    burner: str | None = None

    @model_validator(mode="after")
    def _known_activity(self) -> "PersonSpec":
        if self.activity not in ACTIVITIES:
            raise ValueError(f"unknown activity {self.activity!r}; activities: {', '.join(ACTIVITIES)}")
        return self


class ObjectSpec(ScenarioModel):
    id: str | None = None
    catalog_id: str | None = None
    object: str | None = Field(None, description="role of a home object to move, tip or remove")
    at: str | None = None
    onto_any: tuple[str, ...] = ()
    held_by: str | None = None
    remove: bool = False
    tipped: bool = False
    soil_moisture: tuple[Annotated[float, Field(ge=0.0, le=1.0)], ...] = Field(
        (), description="home objects of the role: the seed picks one for the first value (see the module docstring)")

    @model_validator(mode="after")
    def _one_kind(self) -> "ObjectSpec":
        new = self.id is not None or self.catalog_id is not None
        if new == (self.object is not None) or (new and (self.id is None or self.catalog_id is None)):
            raise ValueError("give either id and catalog_id (a new object) or object (a role of a home object)")
        places = (self.at is not None) + bool(self.onto_any) + (self.held_by is not None) + self.remove
        if places > 1 or (new and places == 0):
            raise ValueError("give at most one of at, onto_any, held_by and remove (a new object needs one)")
        if self.soil_moisture and (new or places):
            raise ValueError("soil_moisture sets the home's objects of a role: give it with object alone")
        return self

    @property
    def key(self) -> str:
        return self.id if self.id is not None else f"object:{self.object}"


class PanHazard(ScenarioModel):
    kind: Literal["pan"]
    pan: str = "pan"
    burner: str = "front_left_burner"
    recipe: str = Field(description="what is in the pan: a recipe of homeloop.sim.dynamics.cooking.RECIPES")

    @model_validator(mode="after")
    def _known_recipe(self) -> "PanHazard":
        if self.recipe not in RECIPES:
            raise ValueError(f"unknown recipe {self.recipe!r}; recipes: {', '.join(RECIPES)}")
        return self


class LeakHazard(ScenarioModel):
    kind: Literal["leak"]
    at: str
    valve: str = "water_main"


class CycleHazard(ScenarioModel):
    kind: Literal["appliance_cycle"]
    device: str
    seconds: PositiveFloat


Hazard = Annotated[Union[PanHazard, LeakHazard, CycleHazard], Field(discriminator="kind")]


class FaultSpec(ScenarioModel):
    device: str
    field: str
    value: FieldValue
    from_s: NonNegativeFloat = 0.0
    until_s: NonNegativeFloat | None = None


class OpeningSpec(ScenarioModel):
    opening: str
    open: bool | None = None
    locked: bool | None = None


class DeviceSpec(ScenarioModel):
    device: str
    values: dict[str, FieldValue] = Field(min_length=1)


#: Fields each timeline action needs.
ACTION_NEEDS: dict[str, tuple[str, ...]] = {
    "message": ("person", "text"), "activity": ("person", "activity"), "walk": ("person", "to"),
    "deliver": ("person",), "ring_and_leave": ("person",), "break_in": ("person", "to"),
    "leave_home": ("person",), "cook": ("person",), "fall": ("person",), "fall_alert_misfire": ("person",),
    "press_help": ("person",), "ring": (), "fault": ("device", "field", "value"),
    "clear_fault": ("device", "field"), "set_device": ("device", "field", "value"),
    "open": ("opening",), "close": ("opening",), "lock": ("opening",), "unlock": ("opening",),
}
assert set(ACTION_NEEDS) == set(HANDLERS), "every timeline action needs its fields listed"


class TimelineSpec(ScenarioModel):
    at_s: NonNegativeFloat
    action: str
    person: str | None = None
    text: str | None = None
    activity: str | None = None
    to: str | None = None
    object: str | None = None
    device: str | None = None
    field: str | None = None
    value: FieldValue = None
    opening: str | None = None
    burner: str | None = None

    @model_validator(mode="after")
    def _complete(self) -> "TimelineSpec":
        if self.action not in ACTION_NEEDS:
            raise ValueError(f"unknown action {self.action!r}; actions: {', '.join(ACTION_NEEDS)}")
        missing = [f for f in ACTION_NEEDS[self.action] if f not in self.model_fields_set]
        if missing:
            raise ValueError(f"action {self.action!r} needs {', '.join(missing)}")
        if self.activity is not None and self.activity not in ACTIVITIES:
            raise ValueError(f"unknown activity {self.activity!r}; activities: {', '.join(ACTIVITIES)}")
        return self


class ScenarioPieces(ScenarioModel):
    """What a scenario sets up; a task's ``scenario_additions`` has the same pieces."""

    people: tuple[PersonSpec, ...] = ()
    objects: tuple[ObjectSpec, ...] = ()
    hazards: tuple[Hazard, ...] = ()
    faults: tuple[FaultSpec, ...] = ()
    withheld_cameras: tuple[str, ...] = ()
    openings: tuple[OpeningSpec, ...] = ()
    devices: tuple[DeviceSpec, ...] = ()
    timeline: tuple[TimelineSpec, ...] = ()
