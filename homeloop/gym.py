"""``import homeloop.gym`` registers the Gymnasium environment ``HomeLoop-v0`` (docs/agents.md, "Gymnasium").

::

    import gymnasium, homeloop.gym
    env = gymnasium.make("HomeLoop-v0", home=HOME_DIR, task="handle_smoke_alarm", seed=0)

The environment is :class:`homeloop.harness.gym_env.HomeLoopEnv`; :func:`make_env` makes it, and
also takes ``home="house"``: the house is then written as a home file into ``out`` (into
``out/homes/house/``, as ``homeloop mcp`` writes it) or, without ``out``, into a temporary folder
removed with the environment. This module stands on the top floor, beside the command line, since
the house is built by the pipeline.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from pathlib import Path
from typing import Any

import gymnasium

from homeloop.core.ids import HOUSE_ID
from homeloop.harness.gym_env import HomeLoopEnv

ENV_ID = "HomeLoop-v0"


def make_env(home: str | Path, task: str, seed: int = 0, out: str | Path | None = None,
             **options: Any) -> HomeLoopEnv:
    """The environment of ``task`` in ``home`` (a home folder, its ``home.json``, or ``house``)."""
    if str(home) != HOUSE_ID or Path(home).exists():
        return HomeLoopEnv(home, task, seed, out=out, **options)
    from homeloop.pipeline.houses import write_house_home

    folder = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="homeloop-gym-house-"))
    env = HomeLoopEnv(write_house_home(folder / "homes" / HOUSE_ID), task, seed, out=out, **options)
    if out is None:
        weakref.finalize(env, shutil.rmtree, folder, True)
    return env


if ENV_ID not in gymnasium.registry:
    gymnasium.register(id=ENV_ID, entry_point="homeloop.gym:make_env")
