"""A run folder replayed with its latency (``homeloop bench replay-latency``, docs/scores.md).

Every episode a model played is run again by the replay agent
(:mod:`homeloop.bench.agents.replay`) with each request's recorded wall latency
passing as simulated time before its reply is carried out, in the home file the
run folder keeps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from homeloop.bench import runner
from homeloop.bench.agents.conversation import DEFAULT_MAX_REQUESTS
from homeloop.bench.records import UNSCORED_ENDINGS, home_copy_path, iter_records
from homeloop.core.errors import HomeLoopError


@dataclass
class LatencyReplay:
    """What :func:`replay_with_latency` did with each record of the run folder, by episode id."""

    replayed: list[str] = field(default_factory=list)  # with every request's latency added
    without_latency: list[str] = field(default_factory=list)  # a request's latency unknown: replayed as recorded
    skipped: list[str] = field(default_factory=list)  # no model replies to replay (scripted, baselines)
    unreadable: list[str] = field(default_factory=list)


def _has_latency(model_calls: list[dict[str, Any]]) -> bool:
    return all(isinstance(c.get("latency_s"), (int, float)) for c in model_calls)


def replay_with_latency(run_dir: str | Path, out: str | Path,
                        progress: Callable[[dict[str, Any]], None] | None = None) -> LatencyReplay:
    """Replay every episode of ``run_dir`` that a model played into the run folder ``out``, each request's
    recorded latency added as simulated time before its reply is carried out (paper §6.3). Episodes
    whose latency is unknown (any request without ``latency_s``) are replayed without added time;
    those without model replies, and those that never reached the model, are skipped."""
    run_dir, out, done = Path(run_dir), Path(out), LatencyReplay()
    if not (run_dir / "episodes").is_dir():
        raise HomeLoopError(f"{run_dir}: not a run folder (no episodes/); give a folder written by "
                            "`homeloop bench run --out`")
    for path, record, why in iter_records([run_dir]):
        if record is None:
            done.unreadable.append(why)
            continue
        calls = record.get("model_calls") or []
        if not calls or record["ended_by"] in UNSCORED_ENDINGS:
            done.skipped.append(record["episode_id"])
            continue
        with_latency = _has_latency(calls)
        (done.replayed if with_latency else done.without_latency).append(record["episode_id"])
        summaries = runner.run([_spec(run_dir, record)], "replay", out, agent_options=_options(path, record, with_latency))
        for summary in summaries:
            if progress:
                progress(summary)
    return done


def _spec(run_dir: Path, record: dict[str, Any]) -> runner.EpisodeSpec:
    """The recorded episode, in the home file the run folder keeps."""
    world = record["world"]
    home_file = home_copy_path(run_dir, world["home"])
    if not home_file.is_file():
        raise HomeLoopError(f"{run_dir}: episode {record['episode_id']} needs homes/{world['home']}.json, "
                            "which the run folder lacks")
    return runner.EpisodeSpec(world["home"], str(home_file.resolve()), world["task"], world["robot"],
                              int(world["seed"]), runner.Flags.from_recorded(world.get("flags") or {}))


def _options(path: Path, record: dict[str, Any], with_latency: bool) -> dict[str, Any]:
    """The replay agent's options: the recorded model's name, and what it was told and shown."""
    agent = record["agent"]
    told = {k: agent[k] for k in ("prompt", "max_image_side") if agent.get(k) is not None}
    return {"replies": str(path.resolve()), "model": agent.get("model") or agent.get("name"),
            "image_mode": agent.get("image_mode", "tool"), "latency": with_latency,
            "max_requests": max(DEFAULT_MAX_REQUESTS, len(record["model_calls"])), **told}
