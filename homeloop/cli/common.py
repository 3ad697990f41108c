"""What every command shares: the command group, the one-line error and its exit code, and
printing a value as it is.

Nothing here loads the pipeline, the simulator or a data library: ``homeloop --help`` builds
every command's options, and each command imports what it runs only when it runs.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, NoReturn, TypeVar

import click
import typer
from rich.text import Text
from typer.core import TyperGroup

from homeloop.core.errors import INTERRUPTED, INTERRUPTED_EXIT_CODE, HomeLoopError, user_error
from homeloop.core.progress import console, print_error

if TYPE_CHECKING:
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
