"""The furnishing stage: :func:`furnish` builds a plan's home shell, then runs the registered
steps (:data:`STEPS`) over one :class:`~homeloop.pipeline.furnish.context.FurnishContext`, in
order, and assembles the home from what they placed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from homeloop.core.catalog import Catalog
from homeloop.core.home import Home
from homeloop.core.house import load_house
from homeloop.core.plan import Plan
from homeloop.pipeline.furnish.context import FurnishContext, lacking_items
from homeloop.pipeline.furnish.house import place_fixed_furniture, place_fixed_objects
from homeloop.pipeline.furnish.house_file import HouseFurnishing, load_house_furnishing
from homeloop.pipeline.furnish.objects import place_task_objects
from homeloop.pipeline.furnish.results import FurnishFailure, FurnishResult
from homeloop.pipeline.furnish.rooms import furnish_rooms
from homeloop.pipeline.furnish.shell import home_shell


@dataclass(frozen=True)
class FurnishStep:
    """One step of furnishing: its id, what it places, and the function that places it."""

    id: str
    description: str
    run: Callable[[FurnishContext], None]


#: The steps of furnishing a home, in the order they run; each places on what the ones before
#: left (the room rules count the house's hand-written furniture, task objects go on furniture).
STEPS: tuple[FurnishStep, ...] = (
    FurnishStep("house_furniture", "the house's hand-written furniture, at its poses", place_fixed_furniture),
    FurnishStep("house_objects", "the house's hand-written objects, on its furniture or floor", place_fixed_objects),
    FurnishStep("rooms", "each room's furniture (and objects) by the catalog's room rule", furnish_rooms),
    FurnishStep("task_objects", "the carryable objects the tasks need, on their hosts", place_task_objects),
)


def furnish(plan: Plan, catalog: Catalog, rng: np.random.Generator, *, fixed: HouseFurnishing | None = None,
            source_kind: str = "swiss_dwellings", seed: int | None = None,
            lacking: frozenset[str] | None = None, steps: tuple[FurnishStep, ...] = STEPS) -> FurnishResult:
    """Furnish a plan: rooms, walls and openings from the plan, furniture by the
    catalog's room rules, then the objects the tasks need.

    ``rng`` is the only source of randomness (seed it from the build seed, the
    plan key and "furnish"); its first draws say what the household lacks
    (:func:`lacking_items`), unless ``lacking`` names the catalog ids to leave out.
    ``fixed`` items are placed first, verbatim; the rules complete the rest.
    ``source_kind`` and ``seed`` are recorded in the home's ``source``.
    """
    try:
        home = home_shell(plan, source_kind=source_kind, seed=seed, catalog_hash=catalog.version_hash)
    except ValueError as exc:
        return FurnishResult(None, [FurnishFailure("", "", "", f"plan cannot become a home: {exc}")])
    ctx = FurnishContext(catalog, rng, home, lacking_items(catalog, rng) if lacking is None else lacking, fixed)
    for step in steps:
        step.run(ctx)
    return _assembled(ctx)


def _assembled(ctx: FurnishContext) -> FurnishResult:
    """The home with what the steps placed, or the failures (with the home as far as it got)."""
    home, fixed, failures = ctx.home, ctx.fixed, list(ctx.failures)
    points = fixed.named_points() if fixed is not None else []
    openings = fixed.with_openable_windows(home.openings) if fixed is not None else home.openings
    try:
        # The parts are validated models already: the home checks how they refer to each other.
        built = Home(**{**dict(home), "furniture": ctx.furniture(), "objects": list(ctx.objects), "points": points,
                        "openings": openings})
    except ValueError as exc:
        return FurnishResult(None, failures + [FurnishFailure("", "", "", f"home does not validate: {exc}")])
    if failures:
        return FurnishResult(None, failures, partial=built)
    return FurnishResult(built, [], partial=built)


def furnish_house(catalog: Catalog, seed: int = 0) -> Home:
    """The house, furnished: its hand-written items first, the room rules after.

    Raises ``ValueError`` listing the failures if it cannot be furnished.
    """
    plan = load_house()
    rng = np.random.default_rng(seed)
    result = furnish(plan, catalog, rng, fixed=load_house_furnishing(), source_kind="house", seed=seed,
                     lacking=frozenset())
    if not result.ok:
        raise ValueError("the house does not furnish: " + "; ".join(str(f) for f in result.failures))
    return result.home  # type: ignore[return-value]
