"""``python -m homeloop.sim.services [PAGE]``: rewrite the cost table of docs/skills.md (or PAGE)
from the declared skills."""

from __future__ import annotations

import sys
from pathlib import Path

from homeloop.core.io import write_text
from homeloop.sim.services import with_cost_table


def main(argv: list[str]) -> None:
    target = Path(argv[0] if argv else "docs/skills.md")
    old = target.read_text(encoding="utf-8")
    new = with_cost_table(old)
    if new != old:
        write_text(target, new)
    print(f"{target}: {'table rewritten' if new != old else 'table already matches the skills'}")


if __name__ == "__main__":
    main(sys.argv[1:])
