"""Run agents on tasks in homes and keep one record per episode (docs/episodes.md, docs/scores.md).

:func:`plan` lists the episodes (home × task × robot × seed, with the run's
flags); :func:`run` carries them out in parallel worker processes, writing
each record atomically as it finishes. A rerun into the same folder resumes:
an episode whose record is complete is not run again (one that ended
without a verdict on the agent, :data:`~homeloop.bench.records.UNSCORED_ENDINGS`,
is). Ctrl-C stops the
workers and leaves only complete records.

Each run folder belongs to one agent, model, prompt and set of flags, and to one run at a time
(:func:`run_folder`). It holds ``run.json`` (the parameters and that owner), ``homes/<home>.json``
(a copy of each home file, for the viewer) and ``episodes/<id>.json``.

Episodes run in this process (``workers=1``), in a pool of worker processes,
or on a Dask cluster (``client``: a ``distributed.Client``; its workers need
HomeLoop installed and the run folder and home files at the same absolute
paths). :func:`play` is one episode without a record: the build's verify
stage calls it for every pair it checks.
"""

from __future__ import annotations

import base64
import concurrent.futures as cf
import contextlib
import hashlib
import json
import multiprocessing
import subprocess
import tempfile
from dataclasses import asdict, dataclass, field, fields
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator, Mapping

from homeloop.bench.control.judge import JUDGE_OPTION
from homeloop.bench.records import (UNSCORED_ENDINGS, RecordError, capture_image_name, episode_id,
                                    home_copy_path, read_record, record_path, run_lock, write_record)
from homeloop.core.allocator import keep_large_blocks
from homeloop.core.errors import HomeLoopError
from homeloop.core.home import Home
from homeloop.core.ids import safe_id
from homeloop.core.io import write_bytes, write_json, write_text
from homeloop.core.keyed_file import kept_on_disk
from homeloop.core.visuals.library import VisualLibrary, library_digest, library_folder, load_library
from homeloop.sim.task import load_tasks

if TYPE_CHECKING:
    from distributed import Client

    from homeloop.bench.agents.protocol import Agent
    from homeloop.bench.monitor import CheckResult
    from homeloop.sim.episode import Episode

#: Endings that are limits of the run rather than a verdict on the agent's actions (docs/scores.md).
LIMIT_ENDINGS = frozenset({"budget", "horizon", "request_limit", "malformed_limit", "incomplete_reply"})

#: Hub settings that count as an intervention on a hazard (time to act, docs/scores.md): device type ->
#: (field, or None for any field, and the value). Setting one counts only where it changes the setting.
INTERVENTIONS: dict[str, tuple[str | None, object]] = {"stove": (None, False), "water_main": ("state", "closed")}


class SettingsWatch:
    """The settings of the devices :data:`INTERVENTIONS` names before every call of an episode.

    The world stands still between calls, so the settings after one call (read when the episode
    reports the call to ``on_call``) are those the next call finds. ``before[k]`` is what call ``k``
    of the trace found."""

    def __init__(self, episode: Episode, then: Callable[[], None] | None = None):
        self.episode, self.then = episode, then
        # the world's devices are those of its home: the ones watched are found once
        self._watched = [d for d in episode.world.devices.values() if d.type in INTERVENTIONS]
        self.before: list[dict[str, dict[str, Any]]] = [self._now()]

    def _now(self) -> dict[str, dict[str, Any]]:
        return {d.id: dict(d.values) for d in self._watched}

    def __call__(self) -> None:
        if self.then is not None:
            self.then()
        self.before.append(self._now())


@dataclass(frozen=True)
class Flags:
    """Runtime arguments recorded with every episode (docs/episodes.md)."""

    withheld: tuple[str, ...] = ()
    show_costs: bool = False
    images: bool = True

    @classmethod
    def from_recorded(cls, recorded: Mapping[str, Any]) -> Flags:
        """The flags a record or ``run.json`` holds (JSON: lists for tuples); names this HomeLoop
        does not know are left out."""
        known = {f.name for f in fields(cls)}
        values: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in recorded.items() if k in known}
        return cls(**values)

    def label(self) -> str:
        parts = [f"no-{s}" for s in self.withheld]
        if self.show_costs:
            parts.append("costs")
        if not self.images:
            parts.append("no-images")
        return "+".join(parts)


@dataclass(frozen=True)
class EpisodeSpec:
    home: str  # home id
    home_file: str
    task: str
    robot: str
    seed: int
    flags: Flags = field(default_factory=Flags)
    #: A home-control episode's JSON line (docs/tasks.md, "Home control"); ``task`` is then its id.
    control: str = ""

    @property
    def id(self) -> str:
        return episode_id(self.home, self.task, self.robot, self.seed, self.flags.label())


def plan(homes: dict[str, Path], tasks: Iterable[str], robot: str, seeds: Iterable[int],
         flags: Flags = Flags()) -> list[EpisodeSpec]:
    """Every episode of a run, in a stable order (home, task, seed)."""
    task_list = list(tasks)
    return plan_pairs([(h, t) for h in sorted(homes) for t in task_list], homes, robot, seeds, flags)


def plan_pairs(pairs: Iterable[tuple[str, str]], home_files: dict[str, Path], robot: str, seeds: Iterable[int],
               flags: Flags = Flags()) -> list[EpisodeSpec]:
    """The episodes of some (home, task) pairs at every seed, in a stable order (home, task, seed).

    Home files are named by absolute path, so a worker elsewhere finds the same file. Every home and
    task id is a safe id (:func:`homeloop.core.ids.safe_id`) before any file is named by it."""
    seed_list, pair_list = list(seeds), sorted(pairs)
    files = {safe_id(h, "home"): str(Path(p).resolve()) for h, p in home_files.items()}
    for _, task in pair_list:
        safe_id(task, "task")
    return [EpisodeSpec(h, files[h], t, robot, s, flags) for h, t in pair_list for s in seed_list]


@lru_cache(maxsize=1)
def source_revision() -> str:
    """The project's git revision where it runs from a checkout, else the package version."""
    from importlib import metadata

    here = Path(__file__).resolve().parent
    try:
        rev = subprocess.run(["git", "rev-parse", "HEAD"], cwd=here, capture_output=True, text=True, timeout=10)
        if rev.returncode == 0:
            return rev.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    try:
        return f"homeloop {metadata.version('homeloop')}"
    except metadata.PackageNotFoundError:
        return "unknown"


@lru_cache(maxsize=16)
def _home(path: str) -> tuple[Home, str]:
    data = Path(path).read_bytes()
    return Home.from_json(data.decode("utf-8"), where=path), hashlib.sha256(data).hexdigest()


@lru_cache(maxsize=4)
def _visuals(build_dir: str, digest: str) -> VisualLibrary:
    """The own assets of a build (:mod:`homeloop.core.visuals.library`), read once per build and
    index (``digest``: the index's sha256, so a rebuilt library is read again)."""
    return load_library(library_folder(Path(build_dir)))


@dataclass
class Played:
    """An episode an agent has played: the episode, the agent, the checks' outcomes and the
    error the agent raised, if it did."""

    episode: Episode
    agent: Agent
    checks: list[CheckResult]
    error: str = ""
    settings: SettingsWatch | None = None
    #: What a record adds (a control episode's ``query_type``, ``feasible`` and the episode itself).
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return episode_passed(self.checks, self.episode.ended_by)


def episode_passed(checks: Iterable[CheckResult], ended_by: str | None) -> bool:
    """A run passes when every check holds (docs/scores.md) and the agent did not fail, nor did
    the episode end without a verdict on it (the model's endpoint lost, a capture not drawn)."""
    return all(c.passed for c in checks) and ended_by != "agent_error" and ended_by not in UNSCORED_ENDINGS


def play(home: Home, task: str, robot: str, seed: int, flags: Flags, agent_name: str,
         agent_options: dict[str, Any], visuals: VisualLibrary | None = None) -> Played:
    """Set up an episode, let the agent play it under the task's monitor, and read the checks.
    ``visuals``: the own assets of the build the home belongs to (its cameras draw them).

    A home where the scenario cannot be set up raises the simulator's EpisodeError or
    ScenarioError before any agent runs."""
    from homeloop.bench.agents import make_agent
    from homeloop.bench.agents.protocol import play as play_agent
    from homeloop.bench.monitor import Monitor
    from homeloop.sim.episode import Episode

    agent = make_agent(agent_name, **agent_options)
    ep = Episode(home, task, robot, seed, withheld=flags.withheld, show_costs=flags.show_costs, images=flags.images,
                 visuals=visuals)
    monitor = Monitor(ep)
    ep.world.add_module(monitor)
    settings = SettingsWatch(ep, monitor.observe)
    ep.on_call = settings
    error = play_agent(agent, ep)
    return Played(ep, agent, monitor.results(), error, settings)


#: ``ended_by`` of a summary for an episode that could not be set up (no record is written).
NOT_SET_UP = "not_set_up"


def run_episode(spec: EpisodeSpec, agent_name: str, agent_options: dict[str, Any], run_dir: str) -> dict[str, Any]:
    """Run one episode and write its record; returns a short summary for the progress display.

    An episode whose scenario cannot be set up in its home gets no record (a rerun tries it
    again); its summary says why."""
    from homeloop.sim.episode import EpisodeError
    from homeloop.sim.roles import ScenarioError

    home, home_hash = _home(spec.home_file)
    visuals = _visuals(str(Path(spec.home_file).resolve().parent.parent.parent), library_digest(Path(spec.home_file)))
    try:
        if spec.control:
            played = _play_control(home, spec, agent_name, agent_options, visuals)
        else:
            played = play(home, spec.task, spec.robot, spec.seed, spec.flags, agent_name, agent_options, visuals)
    except (EpisodeError, ScenarioError) as exc:
        return {"id": spec.id, "passed": False, "ended_by": NOT_SET_UP, "error": str(exc)}
    write_capture_images(Path(run_dir), spec.id, played.episode.trace)
    record = _record(spec, played, home_hash)
    write_record(Path(run_dir), record)
    return {"id": spec.id, "passed": record["passed"], "ended_by": record["ended_by"]}


def _play_control(home: Home, spec: EpisodeSpec, agent_name: str, agent_options: dict[str, Any],
                  visuals: VisualLibrary | None) -> Played:
    """A home-control episode played (homeloop.bench.control.play), as :func:`play` gives one."""
    from homeloop.bench.control.play import play_control

    done = play_control(home, spec.control, agent_name, agent_options, robot=spec.robot,
                        withheld=spec.flags.withheld, show_costs=spec.flags.show_costs, images=spec.flags.images,
                        visuals=visuals)
    return Played(done.episode, done.agent, done.checks, done.error, extra=done.extra)


def write_capture_images(run_dir: Path, eid: str, trace: list[dict[str, Any]]) -> int:
    """Write every captured image of an episode beside its record, as
    ``episodes/<episode id>/<capture id>.png``; each capture result in the trace then names its file
    (``image_file``, relative to ``episodes/``) instead of holding the pixels. Returns the count."""
    written = 0

    def visit(value: Any) -> None:
        nonlocal written
        if isinstance(value, list):
            for item in value:
                visit(item)
        elif isinstance(value, dict):
            image, capture = value.get("image"), value.get("capture_id")
            if isinstance(image, str) and image and capture:
                name = capture_image_name(eid, capture)
                write_bytes(record_path(run_dir, eid).parent / name, base64.b64decode(image))
                value["image"], value["image_file"] = None, name
                written += 1
            for item in value.values():
                visit(item)

    for entry in trace:
        if entry.get("kind") == "call":
            visit(entry.get("data"))
    return written


def _record(spec: EpisodeSpec, played: Played, home_hash: str) -> dict[str, Any]:
    ep, agent, checks, error = played.episode, played.agent, played.checks, played.error
    passed = played.passed
    failures = sorted({c.failure_class for c in checks if not c.passed and c.failure_class})
    if not passed and ep.ended_by in LIMIT_ENDINGS:
        failures.append("Limit")
    usage = getattr(agent, "usage", None) or {}
    return {
        "episode_id": spec.id,
        "world": {"home": spec.home, "home_sha256": home_hash, "scenario": ep.scenario.name, "task": spec.task,
                  "robot": spec.robot, "seed": spec.seed, "withheld": list(spec.flags.withheld),
                  "flags": asdict(spec.flags), "flags_label": spec.flags.label(),
                  "wake": ep.wake, "wake_time_s": ep.wake_time},
        "task": ep.task.model_dump(mode="json", by_alias=True),
        "source_revision": source_revision(),
        "agent": {"name": agent.name, "model": getattr(agent, "model", None),
                  **{k: usage[k] for k in ("requests", "image_mode") if k in usage},
                  **getattr(agent, "conditions", {}),  # a model's prompt and image size
                  **({"error": error} if error else {})},
        "calls": [e for e in ep.trace if e["kind"] == "call"],
        "trace": [e for e in ep.trace if e["kind"] != "call"],  # stops, ends, late events
        "events": [ep.event_dict(e) for e in ep.world.events if e.time >= ep.wake_time],
        "milestones": [ep.event_dict(e) for e in ep.world.milestones],
        "checks": [c.to_dict() for c in checks],
        "passed": passed,
        "failures": sorted(set(failures)),
        "units_spent": ep.units_spent,
        "budget": ep.task.budget_units,
        "ended_by": ep.ended_by,
        "summary": ep.summary,
        **_acted(ep, played.settings),
        "route": [list(p) for p in ep.world.robot.route] if ep.world.robot is not None else [],
        "final_state": ep.world.snapshot(),
        "tokens": usage.get("tokens"),
        "cost_usd": usage.get("cost_usd"),
        "model_calls": getattr(agent, "calls", None),  # each request: the reply, its tokens and cost
        **played.extra,
    }


def _acted(ep: Episode, settings: SettingsWatch | None) -> dict[str, Any]:
    """When the stove or the water main was first switched off after the alarm, if it was (``acted_at``),
    and the index of that call in ``calls`` (``acted_call``). Switching off what was already off is
    not an intervention; without the settings each call found, every such setting counts."""
    types = {d.id: d.type for d in ep.world.devices.values()}
    calls = [e for e in ep.trace if e["kind"] == "call"]
    for index, entry in enumerate(calls):
        if entry["tool"] != "hub_set_state" or entry.get("error"):
            continue
        args = entry["arguments"]
        wanted = INTERVENTIONS.get(types.get(args.get("device_id"), ""))
        if wanted is None:
            continue
        field_name, value = wanted
        if (field_name is None or args.get("field") == field_name) and args.get("value") == value:
            found = settings.before[index].get(args["device_id"], {}) if settings else {}
            if found.get(args.get("field")) != value:
                return {"acted_at": entry["t_end"], "acted_call": index}
    return {"acted_at": None, "acted_call": None}


def _complete(run_dir: Path, spec: EpisodeSpec) -> bool:
    path = record_path(run_dir, spec.id)
    if not path.exists():
        return False
    try:
        return read_record(path)["ended_by"] not in UNSCORED_ENDINGS
    except RecordError:
        return False


def run(specs: list[EpisodeSpec], agent_name: str, run_dir: Path, *, agent_options: dict[str, Any] | None = None,
        workers: int = 1, client: Client | None = None,
        progress: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Run every episode not already recorded in ``run_dir``; returns the summaries of those run.

    ``client``, a Dask client, runs them on its cluster instead of here (``workers`` is then unused).
    The run holds its folder throughout (:func:`run_folder`)."""
    run_dir, options = Path(run_dir).resolve(), agent_options or {}
    with run_folder(run_dir, agent_name, options, flags_of(specs)):
        _write_run_files(run_dir, specs, agent_name, options)
        todo = [s for s in specs if not _complete(run_dir, s)]
        if client is not None:
            return _run_on_dask(client, todo, agent_name, options, run_dir, progress)
        if workers > 1:
            return _run_in_pool(todo, agent_name, options, run_dir, workers, progress)
        done: list[dict[str, Any]] = []
        for s in todo:
            done.append(run_episode(s, agent_name, options, str(run_dir)))
            if progress:
                progress(done[-1])
        return done


def _run_in_pool(todo: list[EpisodeSpec], agent_name: str, options: dict[str, Any], run_dir: Path, workers: int,
                 progress: Callable[[dict[str, Any]], None] | None) -> list[dict[str, Any]]:
    """The episodes in a pool of ``workers`` spawned processes, by :func:`_seed_groups`; summaries in the
    order they finish. The workers keep what they work out from a home alone (the static rays a
    camera pose casts, a house camera's static view) in one temporary folder while the run lasts,
    so a worker reads what another has worked out (:mod:`homeloop.core.keyed_file`)."""
    done: list[dict[str, Any]] = []
    ctx = multiprocessing.get_context("spawn")
    with tempfile.TemporaryDirectory(prefix="homeloop-kept-") as kept, \
            cf.ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=keep_large_blocks) as pool:
        futures = [pool.submit(run_seeds, g, agent_name, options, str(run_dir), kept) for g in _seed_groups(todo)]
        try:
            for f in cf.as_completed(futures):
                for summary in f.result():
                    done.append(summary)
                    if progress:
                        progress(summary)
        except BaseException:
            for f in futures:
                f.cancel()
            raise
    return done


def _seed_groups(todo: list[EpisodeSpec]) -> list[list[EpisodeSpec]]:
    """The episodes by home and task: a worker plays a group's seeds one after another, so what they
    share (the home's scene and casts, its ways, the scenario's shapes) is kept from the seed before."""
    groups: dict[tuple[str, str], list[EpisodeSpec]] = {}
    for s in todo:
        groups.setdefault((s.home, s.task), []).append(s)
    return list(groups.values())


def run_seeds(specs: list[EpisodeSpec], agent_name: str, options: dict[str, Any], run_dir: str,
              kept_in: str | None = None) -> list[dict[str, Any]]:
    """:func:`run_episode` of each episode of one of :func:`_seed_groups`, in order (a worker's task);
    ``kept_in``: a folder the run's workers share what they work out from a home alone in."""
    with kept_on_disk(kept_in) if kept_in is not None else contextlib.nullcontext():
        return [run_episode(s, agent_name, options, run_dir) for s in specs]


def _run_on_dask(client: Client, todo: list[EpisodeSpec], agent_name: str, options: dict[str, Any], run_dir: Path,
                 progress: Callable[[dict[str, Any]], None] | None) -> list[dict[str, Any]]:
    """Each of :func:`_seed_groups` a task on the Dask cluster; summaries in the order they finish."""
    from distributed import as_completed

    futures = [client.submit(run_seeds, g, agent_name, options, str(run_dir), pure=False) for g in _seed_groups(todo)]
    done: list[dict[str, Any]] = []
    # distributed leaves as_completed and Client.cancel unannotated.
    try:
        for future in as_completed(futures):  # type: ignore[no-untyped-call]
            for summary in future.result():
                done.append(summary)
                if progress:
                    progress(summary)
    except BaseException:
        client.cancel(futures)  # type: ignore[no-untyped-call]
        raise
    return done


def flags_of(specs: list[EpisodeSpec]) -> Flags:
    """The one set of flags of a run's episodes (a run folder holds one)."""
    flags = {s.flags for s in specs} or {Flags()}
    if len(flags) > 1:
        raise HomeLoopError(f"a run takes one set of flags, got {', '.join(sorted(f.label() or 'none' for f in flags))}")
    return flags.pop()


def run_owner(agent_name: str, options: dict[str, Any], flags: Flags) -> dict[str, Any]:
    """What a run folder belongs to (its ``run.json``): one agent, model and role prompt, one set of flags,
    and one model judge of infeasible reports or none (homeloop.bench.control.judge)."""
    return {"agent": agent_name, "model": options.get("model"), "prompt": options.get("prompt"),
            "flags": json.loads(json.dumps(asdict(flags))), "judge": options.get(JUDGE_OPTION)}


def _recorded_owner(run_dir: Path) -> dict[str, Any] | None:
    """The owner ``run.json`` names; None where there is none (a new folder, or an unreadable file)."""
    try:
        recorded = json.loads((run_dir / "run.json").read_text(encoding="utf-8"))
        options = recorded.get("agent_options") or {}
        return {"agent": recorded["agent"], "model": options.get("model"), "prompt": options.get("prompt"),
                "flags": recorded.get("flags"), "judge": options.get(JUDGE_OPTION)}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def _owner_line(owner: dict[str, Any]) -> str:
    who = str(owner["agent"]) + (f" ({owner['model']})" if owner.get("model") else "")
    who += f" with the {owner['prompt']} prompt" if owner.get("prompt") else ""
    flags = owner.get("flags")
    if isinstance(flags, dict):
        label = Flags.from_recorded(flags).label()
        who += f", flags {label}" if label else ", no flags"
    judge = owner.get("judge")
    who += f", judged by {judge.get('model')}" if isinstance(judge, dict) else ""
    return who


def refuse_another_owner(run_dir: Path, owner: dict[str, Any]) -> None:
    """One line when ``run_dir/run.json`` names another agent, model, prompt, flags or judge than ``owner``.
    A run that names no prompt resumes any; a ``run.json`` from before flags were recorded has any."""
    recorded = _recorded_owner(run_dir)
    if recorded is None:
        return
    same = (recorded["agent"] == owner["agent"] and recorded["model"] == owner["model"]
            and owner["prompt"] in (None, recorded["prompt"])
            and recorded["flags"] in (None, owner["flags"]) and recorded["judge"] == owner["judge"])
    if not same:
        raise HomeLoopError(f"run folder {run_dir} holds the episodes of {_owner_line(recorded)} (its run.json), "
                            f"not {_owner_line(owner)}; give this run another --out folder")


@contextlib.contextmanager
def run_folder(run_dir: Path, agent_name: str, options: dict[str, Any], flags: Flags) -> Iterator[Path]:
    """Hold run folder ``run_dir`` for one run: a folder that belongs to another agent, model, prompt
    or flags is refused before anything is written, then the folder's lock is taken (a run holding it
    is named by its pid, :func:`homeloop.bench.records.run_lock`). Folders made here and left empty
    are removed again."""
    run_dir = Path(run_dir).resolve()
    owner = run_owner(agent_name, options, flags)
    refuse_another_owner(run_dir, owner)
    made = [d for d in (run_dir, *run_dir.parents) if not d.exists()]
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        with run_lock(run_dir):
            refuse_another_owner(run_dir, owner)  # a run that claimed the folder meanwhile
            yield run_dir
    finally:
        for folder in made:
            with contextlib.suppress(OSError):
                folder.rmdir()  # only while empty


def _recorded_by_another(run_dir: Path, specs: list[EpisodeSpec], agent_name: str, options: dict[str, Any]) -> None:
    """Refuse to let a second agent's run keep the first one's records: records are named by episode,
    not by agent, so an episode already recorded by another agent (or model, or prompt) stops the run
    with one line. ``run.json`` names the folder's owner (:func:`run_folder`); this also covers
    folders whose ``run.json`` is from before it did, and records copied in."""
    model = options.get("model")
    names = {agent_name, _recorded_name(agent_name)}
    for spec in specs:
        path = record_path(run_dir, spec.id)
        if not path.is_file():
            continue
        try:
            agent = read_record(path)["agent"]
        except RecordError:
            continue
        prompt = options.get("prompt", agent.get("prompt"))  # a run that names no prompt resumes any
        if agent.get("name") not in names or (agent.get("model"), agent.get("prompt")) != (model, prompt):
            who = agent.get("name", "?") + (f" ({agent['model']})" if agent.get("model") else "")
            who += f" with the {agent['prompt']} prompt" if agent.get("prompt") else ""
            raise HomeLoopError(f"{run_dir}: episode {spec.id} is recorded by {who}; "
                                "give this run another --out folder")


def _recorded_name(agent_name: str) -> str:
    """The name a plug-in given as ``module.path:Name`` writes in its records (its class's ``name``),
    so a rerun by the same path resumes its own run; any other agent records the name it is run by."""
    if ":" not in agent_name:
        return agent_name
    from homeloop.bench.agents import find_agent

    name = getattr(find_agent(agent_name), "name", agent_name)
    return name if isinstance(name, str) else agent_name


def _write_run_files(run_dir: Path, specs: list[EpisodeSpec], agent_name: str, options: dict[str, Any]) -> None:
    _recorded_by_another(run_dir, specs, agent_name, options)
    homes_dir = run_dir / "homes"
    homes_dir.mkdir(exist_ok=True)
    for home, path in sorted({(s.home, s.home_file) for s in specs}):
        target = home_copy_path(run_dir, home)
        data = Path(path).read_text(encoding="utf-8")
        if not target.exists() or target.read_text(encoding="utf-8") != data:
            write_text(target, data)
    tasks = load_tasks()
    write_json(run_dir / "run.json", {
        "agent": agent_name, "agent_options": {k: v for k, v in options.items() if "key" not in k.lower()},
        "flags": run_owner(agent_name, options, flags_of(specs))["flags"],
        "episodes": len(specs), "tasks": sorted({s.task for s in specs if s.task in tasks}),
        "homes": sorted({s.home for s in specs}), "robots": sorted({s.robot for s in specs}),
        "seeds": sorted({s.seed for s in specs}),
    })
