"""Atomic, deterministic writes: every output goes to a temporary name in the
same folder and is renamed into place, so a reader never sees half a file.

Every output gets the mode an ordinary ``open()`` would give it (0666 less
the process umask: 0644 under the usual 022), not the owner-only 0600 of the
temporary file, so a container or a shared server running under another user
can read a build (docs/pipeline.md)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Iterator


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike[str], suffix: str = ".tmp") -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it onto ``path`` on success.

    ``suffix`` ends the temporary name: writers that pick the format by the
    extension (USD's ``Export``) pass the target's own.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    token = owner_token(target.parent)
    prefix = f".{target.name}." + (f"{token}." if token else "")
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=target.parent)
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        # mkstemp makes files private (0600); outputs get the usual mode instead.
        os.chmod(tmp_path, 0o666 & ~_umask())
        os.replace(tmp_path, target)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


#: A folder holding this file belongs to one owner (a HomeLoop build, docs/pipeline.md): the
#: temporary names of writes anywhere under it carry the token the file holds, so that the owner
#: removes its own leftovers and never a file of the same shape that someone else put there.
OWNER_FILE = ".homeloop-build"
#: What a token looks like: a name part, nothing a path could be made of.
OWNER_TOKEN = re.compile(r"^[0-9a-f]{8,32}$")


def owner_token(folder: str | os.PathLike[str]) -> str | None:
    """The token of the nearest folder at or above ``folder`` that holds an :data:`OWNER_FILE`;
    None when there is none (or it cannot be read: the write then goes ahead untagged)."""
    for candidate in (Path(folder).absolute(), *Path(folder).absolute().parents):
        try:
            data = json.loads((candidate / OWNER_FILE).read_text())
        except FileNotFoundError:
            continue
        except (OSError, ValueError):
            return None
        token = data.get("token") if isinstance(data, dict) else None
        return token if isinstance(token, str) and OWNER_TOKEN.match(token) else None
    return None


def partial_file_pattern(token: str | None = None) -> re.Pattern[str]:
    """The temporary names :func:`atomic_path` gives under a folder whose owner token is ``token``:
    ``.<name>.<token>.<8 random characters><suffix>`` (``.tmp``, or a USD file's own suffix);
    without a token, any temporary name of an atomic write."""
    tagged = rf"{re.escape(token)}\." if token else ""
    return re.compile(rf"^\..+\.{tagged}[A-Za-z0-9_]{{8}}(\.tmp|\.usd[ac])$")


def _umask() -> int:
    """The process umask: read from /proc where it is shown (no window in which
    another thread would create files with none), else set and restored."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_bytes(data)
    return Path(path)


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    return write_bytes(path, text.encode("utf-8"))


def write_json(path: str | os.PathLike[str], payload: Any) -> Path:
    """JSON with sorted keys and a trailing newline: the same payload, the same bytes."""
    return write_text(path, json.dumps(payload, indent=2, sort_keys=True, default=str) + "\n")


def write_parquet(path: str | os.PathLike[str], frame: Any) -> Path:
    """A (Geo)DataFrame to Parquet, atomically, without the pandas index."""
    with atomic_path(path) as tmp:
        frame.to_parquet(tmp, index=False)
    return Path(path)


def sha256_file(path: str | os.PathLike[str]) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def load_yaml(text: str | bytes) -> Any:
    """The data of a YAML document (safe: plain data only), parsed by libyaml where PyYAML has
    it, as its wheels do: the same data as PyYAML's own pure-Python parser
    (``tests/test_catalog.py``), many times faster on a file the size of the catalog. Errors
    are ``yaml.YAMLError`` either way."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def read_yaml_file(path: Path, model: Any, what: str, error: type[Exception]) -> Any:
    """A YAML file validated as pydantic ``model``; ``error`` carries one line per problem, each
    naming the file and the field (``<file>: field a.b: <message>``)."""
    import yaml
    from pydantic import ValidationError

    name = Path(path).name
    try:
        data = load_yaml(Path(path).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise error(f"{name}: cannot read: {' '.join(str(exc).split())}") from None
    if not isinstance(data, dict):
        raise error(f"{name}: a {what} file is a mapping")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise error("\n".join(validation_lines(name, exc))) from None


def validation_lines(where: str, exc: Any) -> list[str]:
    """One line per pydantic error: ``where: field <path>: <message>``."""
    lines = []
    for e in exc.errors():
        msg = "unknown field" if e["type"] == "extra_forbidden" else e["msg"].removeprefix("Value error, ")
        lines.append(f"{where}: field {field_path(tuple(e['loc']))}: {msg}")
    return lines


def field_path(loc: tuple[Any, ...]) -> str:
    """A pydantic error location as a field path: ``checks[2].kind``."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else ("." if out else "") + str(part)
    return out or "(file)"
