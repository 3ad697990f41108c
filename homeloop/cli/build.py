"""``homeloop build`` and ``homeloop verify``: build the home set, and check a build folder.

The build's options are the fields of :class:`~homeloop.pipeline.config.BuildConfig`: each
field's default, description (the option's help) and bounds make its option, and the
command receives the model whole. :data:`BUILD_OPTIONS` adds what only the command line knows:
the flags, and for a field given as text (a comma-separated list, a number or ``all``) how the
text reads. A field added to the model needs its line there (tests/test_cli.py checks).
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Optional

import typer
from rich.table import Table

from homeloop.cli.common import guard, say
from homeloop.core.errors import HomeLoopError
from homeloop.core.progress import console
from homeloop.pipeline.config import BuildConfig


def read_robots(text: str) -> tuple[str, ...] | None:
    """``--verify-robots``: comma-separated robot bodies (none given: the stage's default)."""
    robots = tuple(r.strip() for r in text.split(",") if r.strip())
    return robots or None


def read_seeds(text: str) -> tuple[int, ...] | None:
    """``--verify-seeds``: comma-separated seeds (empty: the stage's default)."""
    from homeloop.bench.run_plan import parse_seeds

    return tuple(parse_seeds(text, "--verify-seeds")) if text else None


def read_verify_homes(text: str) -> Optional[int]:
    """``--verify-homes``: a positive number of further homes, or ``all`` (None)."""
    if text.strip().lower() == "all":
        return None
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise HomeLoopError(f"--verify-homes takes a positive number of homes or 'all', got {text!r}")
    return value


@dataclass(frozen=True)
class ConfigOption:
    """How ``homeloop build`` takes one field of BuildConfig: its flags, and for a field it reads
    as text, how the text becomes the field's value (the option then shows the default as text)."""

    flags: tuple[str, ...]
    read: Callable[[str], Any] | None = None


#: Every field of BuildConfig the command line sets, in the order ``--help`` lists them.
BUILD_OPTIONS: dict[str, ConfigOption] = {
    "source": ConfigOption(("--source",)),
    "plans": ConfigOption(("--plans",)),
    "sites": ConfigOption(("--sites",)),
    "homes": ConfigOption(("--homes",)),
    "seed": ConfigOption(("--seed",)),
    "out": ConfigOption(("--out",)),
    "dask_address": ConfigOption(("--dask-address",)),
    "workers": ConfigOption(("--workers",)),
    "usda": ConfigOption(("--usda",)),
    "verify": ConfigOption(("--verify/--no-verify",)),
    "verify_robots": ConfigOption(("--verify-robots",), read=read_robots),
    "verify_seeds": ConfigOption(("--verify-seeds",), read=read_seeds),
    "verify_homes": ConfigOption(("--verify-homes",), read=read_verify_homes),
    "assets": ConfigOption(("--assets",)),
    "assets_fallback": ConfigOption(("--assets-fallback",)),
    "air_devices": ConfigOption(("--air-devices",)),
}


def option_parameter(name: str, option: ConfigOption) -> inspect.Parameter:
    """The command's parameter for field ``name``: its type, and a Typer option with the field's
    default, description and bounds (``ge``, ``le``)."""
    field = BuildConfig.model_fields[name]
    default, annotation = field.default, field.annotation
    if option.read is not None:  # given as text
        default = None if default is None else str(default)
        annotation = str if default is not None else Optional[str]
    bounds = {key: getattr(m, bound) for m in field.metadata
              for key, bound in (("min", "ge"), ("max", "le")) if hasattr(m, bound)}
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                             default=typer.Option(default, *option.flags, help=field.description, **bounds))


def config_from_options(given: dict[str, Any]) -> BuildConfig:
    """The BuildConfig of the options given (each text option read as its field's value)."""
    values = {}
    for name, value in given.items():
        read = BUILD_OPTIONS[name].read
        values[name] = read(value) if read is not None and value is not None else value
    return BuildConfig(**values)


def takes_build_options(run: Callable[[BuildConfig], None]) -> Callable[..., None]:
    """``run(config)`` as a command whose options are :data:`BUILD_OPTIONS`."""

    @functools.wraps(run)
    def command(**given: Any) -> None:
        run(config_from_options(given))

    parameters = [option_parameter(name, option) for name, option in BUILD_OPTIONS.items()]
    command.__signature__ = inspect.Signature(parameters, return_annotation=None)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    return command


@guard
@takes_build_options
def build(config: BuildConfig) -> None:
    """Build the home set: source → ingest → audit → features → selection → homes → USD → applicability → verify → report."""
    from homeloop.pipeline.sources.synthetic import check_counts

    if config.source is None:  # generated plans: counts no generator can meet stop before Prefect loads
        check_counts(config.plans, config.sites)
    from homeloop.flows import command

    manifest = command.build_command(config=config, say=say)
    print_build_counts(manifest)
    say(f"outputs in {manifest['out']}")
    for line in manifest.get("warnings", []):  # said during the build too; here they are not missed
        say(line)


def print_build_counts(manifest: dict[str, Any]) -> None:
    """The manifest's counts, stage by stage in the build's order: in, kept and rejected."""
    from homeloop.pipeline.stages import STAGES

    table = Table(title=f"build {manifest['build']}", header_style="bold")
    for col in ("stage", "in", "kept", "rejected"):
        table.add_column(col, justify="left" if col == "stage" else "right")
    order = ["rows", "plans", *STAGES]  # a manifest read back from disk has its keys sorted
    counts = manifest["counts"]
    for stage, c in sorted(counts.items(), key=lambda item: order.index(item[0]) if item[0] in order else len(order)):
        table.add_row(stage, f"{c['in']:,}", f"{c['kept']:,}", f"{c['rejected']:,}")
    console.print(table)


@guard
def verify(
    build_dir: Path = typer.Argument(..., help="A build folder (the --out of `homeloop build`)."),
) -> None:
    """Check a build folder against its manifest: file hashes, counts, every home's files, applicability,
    and no file that no stage of the build wrote. Exit code 0 when all is well, 1 when something is
    missing, changed or not the build's, 2 for a folder that is no build."""
    from homeloop.pipeline.verify import verify_build

    result = verify_build(build_dir)
    for line in result.problems:
        say(line)
    verdict = "all as in manifest.json" if result.ok else f"{len(result.problems):,} problems"
    say(f"{build_dir}: {result.files_checked:,} files checked, {verdict}")
    if not result.ok:
        raise typer.Exit(code=1)
