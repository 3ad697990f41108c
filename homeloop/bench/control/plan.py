"""The episodes of a control run: ``homeloop bench run --tasks control --episodes FILE.jsonl`` (docs/tasks.md,
"Home control").

Each line of the episodes file becomes one episode of the run, in file order,
in the home it names: the house (``--homes house``, the default, whose home
file the run writes) or a home of the build folder ``--homes BUILD_DIR``.
The episode's own seed seeds it. A home the file names that the homes given
lack, or an unknown robot, service or agent, stops the run with one line
before any episode runs.
"""

from __future__ import annotations

from pathlib import Path
from homeloop.bench import runner
from homeloop.bench.control.model import read_episodes
from homeloop.bench.run_plan import HOUSE, HouseWriter, resolve_homes
from homeloop.core.errors import HomeLoopError


def control_homes(homes: str, run_dir: Path, wanted: set[str], write_house: HouseWriter | None) -> dict[str, Path]:
    """The home files of the homes an episodes file names."""
    if homes == HOUSE:
        files = resolve_homes(homes, run_dir, write_house) if HOUSE in wanted else {}
    else:
        root = Path(homes) / "homes"
        if not root.is_dir():
            raise HomeLoopError(f"{homes}: no homes/ folder; run `homeloop build --out {homes}` first, "
                                "or use --homes house")
        files = {h: root / h / "home.json" for h in sorted(wanted) if (root / h / "home.json").is_file()}
    missing = sorted(wanted - set(files))
    if missing:
        raise HomeLoopError(f"the episodes name home(s) {', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''} "
                            f"that --homes {homes} lacks; give the build folder they were generated from")
    return files


def plan_control(episodes_file: Path, homes: str, run_dir: Path, robot: str, flags: runner.Flags,
                 write_house: HouseWriter | None = None) -> tuple[list[runner.EpisodeSpec], list[str]]:
    """The run's episodes, one per line of the file, and a line saying how many."""
    episodes = read_episodes(episodes_file)
    if not episodes:
        raise HomeLoopError(f"{episodes_file}: no episodes; write some with `homeloop bench generate-control`")
    files = control_homes(homes, run_dir, {e.home for e in episodes}, write_house)
    specs = []
    for e in episodes:
        plain = runner.plan_pairs([(e.home, e.id)], {e.home: files[e.home]}, robot, [e.seed], flags)[0]
        specs.append(runner.EpisodeSpec(plain.home, plain.home_file, e.id, robot, e.seed, flags, control=e.line()))
    return specs, [f"{len(specs):,} control episodes in {len(files):,} homes from {episodes_file}"]
