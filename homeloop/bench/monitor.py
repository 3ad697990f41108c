"""A monitor that evaluates a task's checks over the finite trace of an episode (docs/tasks.md).

Each check in a task file names a predicate from :mod:`homeloop.bench.checks`
and a kind:

- ``final``: the predicate is read where the task is scored (when the agent
  stops, or at the horizon for tasks scored there);
- ``ever``: it held at some moment (a capture or a message "holds once it
  happened");
- ``never``: it held at no moment (the predicate names the forbidden thing:
  ``no_false_alarm`` is *never* "emergency services were messaged");
- ``always``: it held at every moment.

The monitor is added to the world as the last dynamics module, so it looks
after every simulated step, and the runner calls :meth:`Monitor.observe`
after every skill call. For each check it keeps the first witness (ever) or
the first violation (never, always) with its simulated time and evidence.

It sleeps as the world's modules do (homeloop/sim/world.py, "Sleeping
modules"): it looks after a step only where something changed that one of
its undecided step checks reads (each predicate declares its ``reads``), or
after every step while one reads the clock (:data:`homeloop.bench.checks.TIME`).
A predicate of the state alone answers as it did while nothing it reads
changes, so every check is decided at the step it would be decided at looking
after every step; :data:`WAKE_ON_READS` = False wakes it on any change, for
the tests that compare the two.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from homeloop.bench.checks import PREDICATES, TIME, Evidence, Predicate
from homeloop.sim.context import EpisodeView
from homeloop.sim.task import CheckRef
from homeloop.sim.world import EVERYTHING, NOTHING, Rest, World

#: Whether the monitor wakes only on what its undecided checks read (see the module docstring);
#: False wakes it on any change.
WAKE_ON_READS = True

#: The monitor's rest once no check looks after steps.
DONE = Rest(until=float("inf"))


@dataclass
class CheckResult:
    """A check's outcome: passed, and when and why (the witness or the violation)."""

    id: str
    kind: str
    passed: bool
    at: float | None = None
    evidence: Any = None
    failure_class: str = ""
    description: str = ""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class _Tracked:
    ref: CheckRef
    predicate: Predicate
    hit_at: float | None = None
    evidence: Evidence | None = None
    params: dict[str, Any] = field(default_factory=dict)


class Monitor:
    """Evaluates one episode's checks (see the module docstring)."""

    name = "monitor"

    def __init__(self, episode: EpisodeView):
        self.episode = episode
        self.tracked: list[_Tracked] = []
        for ref in episode.task.checks:
            if ref.id not in PREDICATES:
                raise KeyError(f"task {episode.task.id}: check {ref.id!r} has no predicate; "
                               f"known: {', '.join(sorted(PREDICATES))}")
            self.tracked.append(_Tracked(ref, PREDICATES[ref.id], params=dict(ref.params)))
        self._per_step = [t for t in self.tracked if t.ref.kind != "final" and t.predicate.on == "step"]
        self._per_call = [t for t in self.tracked if t.ref.kind != "final"]
        self._rest: Rest | None = None  # while the undecided step checks stay the same
        self.observe()

    # A dynamics module: looked at after every step it is woken for.
    def step(self, world: World, dt: float) -> None:
        for t in self._per_step:
            self._look(t)

    def rest(self, world: World) -> Rest:
        """It changes nothing: asleep until something an undecided step check reads changes (see
        the module docstring), or for good once none is left."""
        if self._rest is None:
            self._rest = watching([t.predicate for t in self._per_step if t.hit_at is None])
        return self._rest

    def snapshot(self) -> dict[str, Any]:
        return {t.ref.id: t.hit_at for t in self.tracked if t.ref.kind != "final"}

    def observe(self) -> None:
        """Look at every non-final check now (after a call)."""
        for t in self._per_call:
            self._look(t)

    def _look(self, t: _Tracked) -> None:
        if t.hit_at is not None:
            return  # the first witness or violation is kept
        value = t.predicate.function(self.episode, t.params)
        hit = (not value) if t.ref.kind == "always" else bool(value)
        if hit:
            t.hit_at = self.episode.now()
            t.evidence = value if value is not True else None
            self._rest = None  # a decided check reads nothing more

    def results(self) -> list[CheckResult]:
        """Every check's outcome now (final checks are read at this moment)."""
        out = []
        for t in self.tracked:
            kind = t.ref.kind
            at: float | None
            if kind == "final":
                value = t.predicate.function(self.episode, t.params)
                passed, at, evidence = bool(value), self.episode.now(), (value if value not in (True, False) else None)
            elif kind == "ever":
                passed, at, evidence = t.hit_at is not None, t.hit_at, t.evidence
            else:  # never / always: a hit is a violation
                passed, at, evidence = t.hit_at is None, t.hit_at, t.evidence
            out.append(CheckResult(t.ref.id, kind, passed, at, _plain(evidence), t.predicate.failure_class,
                                   t.ref.description or t.predicate.doc))
        return out


def watching(undecided: list[Predicate]) -> Rest:
    """The monitor's rest while ``undecided`` step predicates are open: woken by what they read,
    stepping every step while one reads the clock, done when none is left."""
    if not undecided:
        return DONE
    reads: frozenset[str] = frozenset().union(*(p.reads for p in undecided)) if WAKE_ON_READS else EVERYTHING
    if TIME in reads:
        return Rest(NOTHING, -float("inf"), EVERYTHING)
    return Rest(NOTHING, float("inf"), EVERYTHING if "*" in reads else reads)


def _plain(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set)):
        return [_plain(v) for v in value]
    return str(value)
