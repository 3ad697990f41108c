"""The monitor sleeps until something its undecided checks read changes (homeloop/bench/monitor.py)
and decides every check as one looking after every step would: the same verdict, at the same step,
with the same evidence. Nothing here times anything."""

from __future__ import annotations

import math
from typing import Any

import pytest

from homeloop.bench import monitor as monitor_module
from homeloop.bench.agents import make_agent
from homeloop.bench.checks import PREDICATES, TIME, check
from homeloop.bench.monitor import DONE, CheckResult, Monitor, watching
from homeloop.sim.episode import Episode
from homeloop.sim.task import load_tasks
from homeloop.sim.world import ASPECTS, EVERYTHING, Rest, World

TASKS = sorted(load_tasks())


class EveryStep(Monitor):
    """The same checks, looked at after every step (the reference the sleeping monitor must equal)."""

    name = "monitor_every_step"

    def rest(self, world: World) -> Rest:
        return Rest(until=-math.inf)  # steps every step, and wakes nothing


class Counted(Monitor):
    """The monitor, counting the steps it looks after."""

    def __init__(self, episode: Episode):
        self.looked = 0
        super().__init__(episode)

    def step(self, world: World, dt: float) -> None:
        self.looked += 1
        super().step(world, dt)


def play_watched(home: Any, task: str, seed: int) -> tuple[Episode, Counted, EveryStep]:
    """An episode under the monitor and the every-step reference, both told of every call."""
    episode = Episode(home, task, seed=seed, images=False)
    watched, reference = Counted(episode), EveryStep(episode)
    episode.world.add_module(watched)
    episode.world.add_module(reference)

    def observe() -> None:
        watched.observe()
        reference.observe()

    episode.on_call = observe
    make_agent("scripted").run(episode)
    return episode, watched, reference


def outcomes(results: list[CheckResult]) -> list[dict[str, Any]]:
    return [r.to_dict() for r in results]


@pytest.mark.parametrize("task", TASKS)
def test_the_sleeping_monitor_decides_every_check_at_the_step_of_one_looking_every_step(house_home, task):
    episode, watched, reference = play_watched(house_home, task, seed=0)
    assert episode.done
    assert outcomes(watched.results()) == outcomes(reference.results())
    # the reference looked after every step of the episode; the monitor never after more
    stepped = round(episode.world.time / 0.1)
    assert watched.looked <= stepped


def test_the_monitor_sleeps_through_the_smoke_tail(house_home):
    """After the scripted agent stops in handle_smoke_alarm, the pan cools and the smoke spreads
    every step until the horizon; nothing the checks read changes, so the monitor sleeps."""
    episode, watched, reference = play_watched(house_home, "handle_smoke_alarm", seed=0)
    steps = round(episode.world.time / 0.1)
    assert outcomes(watched.results()) == outcomes(reference.results())
    assert steps > 1000 and watched.looked < steps // 10


def test_waking_on_any_change_decides_the_same(house_home):
    saved = monitor_module.WAKE_ON_READS
    monitor_module.WAKE_ON_READS = False
    try:
        _, on_any, reference = play_watched(house_home, "kitchen_fire_emergency", seed=1)
    finally:
        monitor_module.WAKE_ON_READS = saved
    _, on_reads, _ = play_watched(house_home, "kitchen_fire_emergency", seed=1)
    assert outcomes(on_any.results()) == outcomes(on_reads.results()) == outcomes(reference.results())
    assert on_reads.looked <= on_any.looked


# --- what wakes it ------------------------------------------------------------------------------------


def test_every_predicate_reads_known_aspects():
    for predicate in PREDICATES.values():
        assert predicate.reads == EVERYTHING or predicate.reads <= {*ASPECTS, TIME}, predicate.id


def test_a_predicate_reading_an_unknown_aspect_is_refused():
    with pytest.raises(ValueError, match="unknown aspects"):
        check("reads_nonsense", failure="Physical", reads=frozenset({"weather"}))
    assert "reads_nonsense" not in PREDICATES


def test_the_monitor_wakes_on_what_its_undecided_checks_read():
    steps = [p for p in PREDICATES.values() if p.on == "step"]
    assert watching([]) == DONE
    for predicate in steps:
        rest = watching([predicate])
        assert rest.changed == frozenset() and rest.until == math.inf
        assert rest.wakes_on == predicate.reads
    union = frozenset().union(*(p.reads for p in steps))
    assert watching(steps).wakes_on == (EVERYTHING if "*" in union else union)


def test_a_predicate_reading_the_clock_is_looked_at_after_every_step():
    stove_off = PREDICATES["stove_off"]
    clock = stove_off.__class__(**{**stove_off.__dict__, "id": "clock", "reads": frozenset({TIME})})
    rest = watching([stove_off, clock])
    assert rest.until == -math.inf and rest.changed == frozenset()
