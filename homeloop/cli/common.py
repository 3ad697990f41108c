"""What every command shares: the command groups (the top one loads each command when it is used),
the one-line error and its exit code, and printing a value as it is.

Nothing here loads the pipeline, the simulator or a data library: each command imports what it
runs only when it runs.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Iterator, NoReturn, TypeVar

import typer
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

from homeloop.core.errors import INTERRUPTED, INTERRUPTED_EXIT_CODE, HomeLoopError, user_error
from homeloop.core.progress import console, print_error

if TYPE_CHECKING:
    import typer._click as click  # the click Typer runs on (its own copy in recent releases)

    from homeloop.core.home import Home

Command = TypeVar("Command", bound=Callable[..., Any])


class CommandGroup(TyperGroup):
    """A command group that refuses an argument holding a NUL character (no file name or id can
    hold one, and Python's file calls fail on it) before any command parses it."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        for arg in args:
            if "\x00" in arg:
                raise typer.BadParameter(f"{arg!r} holds a NUL character; no path or id can")
        return super().parse_args(ctx, args)


@dataclass(frozen=True)
class CommandEntry:
    """One command of a :class:`LazyCommandGroup`: ``homeloop.cli.<module>.<name>`` is its function
    or, for a command group, its Typer app; ``summary`` is its line in the group's help."""

    module: str
    name: str
    summary: str

    def load(self, command_name: str) -> click.Command:
        target = getattr(importlib.import_module(f"homeloop.cli.{self.module}"), self.name)
        if isinstance(target, typer.Typer):
            command: click.Command = typer.main.get_group(target)
        else:
            single = typer.Typer(add_completion=False)
            single.command(command_name)(target)
            command = typer.main.get_command(single)
        command.name, command.short_help = command_name, self.summary
        return command


class LazyCommandGroup(CommandGroup):
    """A command group whose commands (:attr:`entries`) are imported only when one runs or shows its
    own help: the group's help lists them by their summaries, so ``homeloop --help`` loads no
    command module (and so no pydantic, pandas or simulator)."""

    entries: ClassVar[dict[str, CommandEntry]] = {}
    _listing = False

    def list_commands(self, ctx: click.Context) -> list[str]:
        return list(self.entries)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = self.entries.get(cmd_name)
        if entry is None:
            return None
        if self._listing:  # only the help's list of commands asks: the summary is all it shows
            return TyperCommand(cmd_name, short_help=entry.summary)
        if cmd_name not in self.commands:
            self.commands[cmd_name] = entry.load(cmd_name)
        return self.commands[cmd_name]

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def every_command(group: TyperGroup, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    """Each command under ``group`` by its path of names (``("bench", "run")``), groups included,
    each loaded as when it runs."""
    ctx = group.context_class(group)
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is not None:
            yield path + (name,), command
            if isinstance(command, TyperGroup):
                yield from every_command(command, path + (name,))


def say(line: str) -> None:
    """Print ``line`` as it is: a path, id or value may hold [brackets] or :colons:, never markup."""
    console.print(Text(line), soft_wrap=True)


def fail(message: str) -> NoReturn:
    """Print ``message`` as the command's one error line and exit with code 2."""
    print_error(message)
    raise typer.Exit(code=2)


def file_out(out: Path) -> Path:
    """``--out`` that must name a file: a folder there (``.`` or ``..`` too, which no write can
    replace) is one line before any work."""
    if out.is_dir():
        import errno
        import os

        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(out))
    return out


def guard(fn: Command) -> Command:
    """Turn known input errors into one clear line and exit code 2: a HomeLoopError,
    or a file-system error the user can fix (a full disk, a folder given for a file,
    a path through a file, no permission; see homeloop.core.errors). Ctrl-C prints one
    line and exits with 130."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (HomeLoopError, OSError) as exc:
            out = kwargs.get("out")
            error = user_error(exc, out if isinstance(out, Path) else None)
            if error is None:
                raise
            fail(str(error))
        except KeyboardInterrupt:
            console.print(INTERRUPTED, highlight=False, soft_wrap=True)
            raise typer.Exit(code=INTERRUPTED_EXIT_CODE) from None

    return wrapper  # type: ignore[return-value]


def read_home(path: Path) -> Home:
    """The home file at ``path``, whose id must be a safe id (homeloop/core/ids.py): builds and runs name
    files by it, so one that could not be built or run is refused here too."""
    from homeloop.core.home import Home
    from homeloop.core.ids import safe_id

    home = Home.read(path)
    safe_id(home.home_id, "home", path)
    return home
