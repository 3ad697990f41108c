"""Rich progress bars for long work, one per stage."""

from __future__ import annotations

import contextlib
from typing import Callable, Iterator

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

console = Console(stderr=True)


def print_error(message: str) -> None:
    """The one line a command ends with on bad input, ``error: <message>``, printed as it is: a path,
    id or value may hold [brackets], never markup."""
    from rich.text import Text

    console.print(Text.assemble(("error:", "bold red"), " ", message), soft_wrap=True)


@contextlib.contextmanager
def stage_progress(description: str, total: int | None, *, enabled: bool = True) -> Iterator[Callable[[int], None]]:
    """A progress bar for one stage; yields ``advance(n)`` to report n more items done."""
    if not enabled:
        yield lambda n=1: None
        return
    progress = Progress(
        TextColumn("[bold]{task.description:<12}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )
    with progress:
        task = progress.add_task(description, total=total)
        yield lambda n=1: progress.advance(task, n)
