"""The drawing steps of an apartment, registered in the order they run (:data:`STEPS`), and
:func:`apartment`, which runs them over a fresh :class:`ApartmentDrawing`.

Every step draws from the drawing's generator, so the order of the steps is the order of the
draws: the same generator state gives the same apartment."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable

from homeloop.pipeline.sources.apartments.bands import balance_bands, place_rooms, settle_notch
from homeloop.pipeline.sources.apartments.doors import draw_doors, plan_links, split_corridor, through_doors
from homeloop.pipeline.sources.apartments.drawing import ApartmentDrawing
from homeloop.pipeline.sources.apartments.fit_out import fit_out
from homeloop.pipeline.sources.apartments.outdoor import living_outdoor
from homeloop.pipeline.sources.apartments.programme import draw_programme
from homeloop.pipeline.sources.apartments.rooms import _Apartment
from homeloop.pipeline.sources.apartments.spaces import draw_spaces
from homeloop.pipeline.sources.apartments.walls import draw_walls, split_long_walls
from homeloop.pipeline.sources.apartments.windows import extra_windows


@dataclass(frozen=True)
class DrawingStep:
    """One step of drawing an apartment: its id, what it draws, and the function that draws it."""

    id: str
    description: str
    run: Callable[[ApartmentDrawing], None]


#: The steps, in the order they run; each works on the drawing as the ones before left it.
STEPS: tuple[DrawingStep, ...] = (
    DrawingStep("programme", "wall thicknesses, shape, corridor, band depths and the rooms", draw_programme),
    DrawingStep("place_rooms", "each room's width and place in a band", place_rooms),
    DrawingStep("balance_bands", "the bands brought to one length", balance_bands),
    DrawingStep("settle_notch", "the recess of an L or U put in its place", settle_notch),
    DrawingStep("spaces", "the corridor, the living section and the rooms as spaces", draw_spaces),
    DrawingStep("plan_links", "which neighbours get a door between them", plan_links),
    DrawingStep("walls", "facades, end walls, corridor walls and partitions", draw_walls),
    DrawingStep("doors", "each room's door to the hall and the entrance door", draw_doors),
    DrawingStep("fit_out", "each room's fixtures and windows", fit_out),
    DrawingStep("outdoor", "the living room's outdoor space and windows", living_outdoor),
    DrawingStep("through_doors", "the doors between neighbours", through_doors),
    DrawingStep("split_corridor", "now and then a door across the corridor", split_corridor),
    DrawingStep("extra_windows", "windows in gables, recesses and a long unit's corridor", extra_windows),
    DrawingStep("split_long_walls", "long walls split in segments", split_long_walls),
)


def bedrooms(rng: random.Random) -> int:
    """A bedroom count, 1–5."""
    return rng.choices((1, 2, 3, 4, 5), (0.18, 0.3, 0.3, 0.16, 0.06))[0]


def apartment(rng: random.Random, ground: bool, corner: bool = False,
              steps: tuple[DrawingStep, ...] = STEPS) -> _Apartment:
    """One apartment; ``ground`` (on the ground floor: gardens, terraces), ``corner`` (at the end
    of a row: windows in the gable too)."""
    drawing = ApartmentDrawing(rng, bedrooms(rng), ground, corner)
    for step in steps:
        step.run(drawing)
    return drawing.apartment()
