"""``homeloop bench generate-control``: control episodes generated per home and verified (docs/tasks.md,
"Home control").

For each home of a build (``BUILD_DIR/homes/<home>/home.json``, in id order)
a generator seeded by the seed and the home's id draws the time of day the
request comes (:data:`CLOCK_STARTS_S`) and then goes round the twelve
categories (six query types, feasible and infeasible; :data:`CATEGORIES`),
starting at a drawn one: in each, it tries the category's templates in a
drawn order (those of the optional air devices only in a home that has one:
``Template.offered``) and keeps the first episode the scripted solver passes. A
template naming a device type the home lacks is dropped there and counted;
an episode the solver fails (for an infeasible one: whose constraint the
solver's rules do not find) is rejected and counted. It stops at ``per_home``
episodes, or when a round keeps none. The same build, ``per_home`` and seed
give the same file, byte for byte, however many workers generate it.

While it generates, what is alive at the start (the modules, the catalog) is
frozen out of the cyclic garbage collector's passes (:func:`_settled_heap`):
an episode makes many short-lived objects, and each pass of the older
generations would otherwise walk that large, lasting heap again.
"""

from __future__ import annotations

import concurrent.futures as cf
import contextlib
import gc
import multiprocessing
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from homeloop.bench.control.model import (QUERY_CODES, QUERY_TYPES, REQUEST_AT_S, ControlEpisode, horizon_for,
                                          write_episodes)
from homeloop.bench.control.play import play_control
from homeloop.bench.control.templates import TEMPLATES, Draft, HomeView, Template
from homeloop.core.catalog import load_catalog
from homeloop.core.errors import HomeLoopError
from homeloop.core.home import Home
from homeloop.core.ids import safe_id
from homeloop.sim.episode import EpisodeError
from homeloop.sim.roles import ScenarioError

#: The twelve categories, in score-table order: each query type, feasible then infeasible.
CATEGORIES: tuple[tuple[str, bool], ...] = tuple((q, f) for q in QUERY_TYPES for f in (True, False))
#: The times of day a request may come (s after midnight): morning, midday, evening, late evening.
CLOCK_STARTS_S = (7 * 3600 + 15 * 60, 12 * 3600 + 40 * 60, 18 * 3600 + 30 * 60, 21 * 3600 + 30 * 60)


@dataclass
class HomeOutcome:
    """What generating one home gave: its episodes and its counts."""

    home: str
    episodes: list[ControlEpisode] = field(default_factory=list)
    dropped: Counter[str] = field(default_factory=Counter)  # template -> times dropped
    dropped_types: Counter[str] = field(default_factory=Counter)  # device types the home lacked
    rejected: Counter[str] = field(default_factory=Counter)  # template -> episodes the solver failed
    error: str = ""  # why none of its episodes could be staged, if none was


@dataclass
class GenerateReport:
    """What a generation did, over every home."""

    homes: int = 0
    kept: Counter[str] = field(default_factory=Counter)  # category -> episodes kept
    dropped: Counter[str] = field(default_factory=Counter)
    dropped_types: Counter[str] = field(default_factory=Counter)
    rejected: Counter[str] = field(default_factory=Counter)
    homes_dropping: Counter[str] = field(default_factory=Counter)  # template -> homes where it was dropped
    failed_homes: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def add(self, outcome: HomeOutcome) -> None:
        self.homes += 1
        self.kept.update(e.category for e in outcome.episodes)
        self.dropped.update(outcome.dropped)
        self.dropped_types.update(outcome.dropped_types)
        self.rejected.update(outcome.rejected)
        self.homes_dropping.update(set(outcome.dropped))
        if outcome.error:
            self.failed_homes.append(f"{outcome.home}: {outcome.error}")

    def lines(self) -> list[str]:
        out = [f"{sum(self.kept.values()):,} episodes from {self.homes:,} homes in {self.seconds:.1f} s"]
        for q, f in CATEGORIES:
            cat = f"{q}/{'feasible' if f else 'infeasible'}"
            out.append(f"  {QUERY_CODES[q]:6s} {cat:36s} {self.kept[cat]:>7,}")
        for name in TEMPLATES:
            if self.dropped[name] or self.rejected[name]:
                every = " (in every home: it names a device type no home has)" \
                    if self.homes_dropping[name] == self.homes else ""
                out.append(f"  template {name}: dropped {self.dropped[name]:,} times in "
                           f"{self.homes_dropping[name]:,} homes{every}, "
                           f"rejected by the solver {self.rejected[name]:,}")
        if self.dropped_types:
            out.append("  device types homes lacked: " + ", ".join(f"{t} {n:,}" for t, n in
                                                                  sorted(self.dropped_types.items())))
        out += [f"  home not generated: {line}" for line in self.failed_homes]
        return out


def home_files(build_dir: str | Path) -> dict[str, Path]:
    """Every home file of a build, by home id (sorted)."""
    root = Path(build_dir) / "homes"
    if not root.is_dir():
        raise HomeLoopError(f"{build_dir}: no homes/ folder; run `homeloop build --out {build_dir}` first")
    files = {safe_id(p.parent.name, "home", root): p for p in sorted(root.glob("*/home.json"))}
    if not files:
        raise HomeLoopError(f"{root}: no home files (homes/<home>/home.json)")
    return dict(sorted(files.items()))


def episode_of(home: Home, template: Template, draft: Draft, number: int, clock: float, seed: int) -> ControlEpisode:
    return ControlEpisode(
        id=f"ctl_{home.home_id}_{number:03d}", home=home.home_id, query_type=template.query_type,
        feasible=template.feasible, request=draft.request, template=template.name, clock_start_s=clock, seed=seed,
        horizon_s=horizon_for(draft.goal, draft.events), intent=draft.intent, prerequisites=draft.prerequisites,
        goal=draft.goal, constraint=draft.constraint, events=draft.events)


def generate_home(home: Home, per_home: int, seed: int) -> HomeOutcome:
    """Up to ``per_home`` verified episodes of one home (see the module docstring)."""
    rng = random.Random(f"homeloop-control/{seed}/{home.home_id}")
    clock = float(rng.choice(CLOCK_STARTS_S))
    view = HomeView(home, clock + REQUEST_AT_S)
    start = rng.randrange(len(CATEGORIES))
    order = CATEGORIES[start:] + CATEGORIES[:start]
    outcome = HomeOutcome(home.home_id)
    while len(outcome.episodes) < per_home:
        before = len(outcome.episodes)
        for query_type, feasible in order:
            if len(outcome.episodes) >= per_home:
                break
            names = [t for t in TEMPLATES.values()
                     if t.query_type == query_type and t.feasible == feasible and t.offered(view)]
            rng.shuffle(names)
            for t in names:
                if _try(home, view, t, rng, clock, seed, outcome):
                    break
        if len(outcome.episodes) == before:
            break
    return outcome


def _try(home: Home, view: HomeView, template: Template, rng: random.Random, clock: float, seed: int,
         outcome: HomeOutcome) -> bool:
    """Draw the template in the home, verify it, keep it: whether it was kept."""
    draft = template.build(view, rng)
    if not isinstance(draft, Draft):
        outcome.dropped[template.name] += 1
        outcome.dropped_types.update(draft.types)
        return False
    episode = episode_of(home, template, draft, len(outcome.episodes) + 1, clock, seed)
    try:
        passed = play_control(home, episode).passed
    except (EpisodeError, ScenarioError) as exc:  # the home cannot stage it (a prerequisite it refuses)
        outcome.error = outcome.error or str(exc)
        passed = False
    if not passed:
        outcome.rejected[template.name] += 1
        return False
    outcome.episodes.append(episode)
    return True


def _generate_file(path: str, per_home: int, seed: int) -> HomeOutcome:
    home = Home.from_json(Path(path).read_text(encoding="utf-8"), where=path)
    outcome = generate_home(home, per_home, seed)
    if outcome.episodes:
        outcome.error = ""  # a problem of some episodes only: counted as rejected
    return outcome


@contextlib.contextmanager
def _settled_heap() -> Iterator[None]:
    """The catalog loaded and everything alive now kept out of the collector's passes, until the end."""
    load_catalog()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def start_worker() -> None:
    """A worker process's start: its heap settled for its life (see :func:`_settled_heap`)."""
    load_catalog()
    gc.freeze()


def generate(build_dir: str | Path, per_home: int, seed: int, workers: int = 1) -> tuple[list[ControlEpisode],
                                                                                       GenerateReport]:
    """Every home's episodes, in home order, and the report (see the module docstring)."""
    if per_home < 1:
        raise HomeLoopError(f"--per-home {per_home}: give 1 or more episodes per home")
    started = time.perf_counter()
    files = [str(p) for p in home_files(build_dir).values()]
    if workers > 1:
        with cf.ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"),
                                    initializer=start_worker) as pool:
            outcomes = list(pool.map(_generate_file, files, [per_home] * len(files), [seed] * len(files),
                                     chunksize=max(1, len(files) // (workers * 8))))
    else:
        with _settled_heap():
            outcomes = [_generate_file(f, per_home, seed) for f in files]
    report, episodes = GenerateReport(), []
    for outcome in outcomes:
        report.add(outcome)
        episodes.extend(outcome.episodes)
    report.seconds = time.perf_counter() - started
    return episodes, report


def generate_file(build_dir: str | Path, per_home: int, seed: int, out: str | Path,
                  workers: int = 1) -> GenerateReport:
    """Generate and write the episodes file (a temporary name, then renamed); returns the report."""
    episodes, report = generate(build_dir, per_home, seed, workers)
    write_episodes(out, episodes)
    return report
