"""Functions that fit on a screen and classes that hold one concern: no function in the
project's packages runs past :data:`MAX_LINES` lines and no class past
:data:`MAX_CLASS_LINES`, except the few listed in :data:`ALLOWED` and
:data:`ALLOWED_CLASSES` with the reason each stays whole."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: The folders whose code is held to the limit.
PACKAGES = ("homeloop",)
#: Lines from a function's ``def`` to its last line, nested functions included.
MAX_LINES = 60

#: ``"path::Qualified.name"`` -> why the function stays longer than :data:`MAX_LINES`.
ALLOWED: dict[str, str] = {
    "homeloop/audits/no_fridge_space.py::search_fridge_position":
        "one vectorised search: the candidate arrays (boxes, fits, blockers) are built and filtered in place; "
        "split would thread a dozen arrays",
}


#: Lines from a class's ``class`` line to its last line. A class past it holds a whole stage:
#: split it into registered steps or collaborators (homeloop/pipeline/devices/ shows how).
MAX_CLASS_LINES = 300

#: ``"path::Class"`` -> why the class stays longer than :data:`MAX_CLASS_LINES`.
ALLOWED_CLASSES: dict[str, str] = {
    "homeloop/sim/roles.py::Roles":
        "one resolver per home and scenario: each method answers one kind of role (rooms, openings, furniture, "
        "objects, people, spots) over the same cached room polygons and free floor; split, every part would "
        "carry the home, the scenario's name for its errors and those caches",
}


def _functions(tree: ast.AST, prefix: str = ""):
    """(qualified name, node) of every function, methods and nested functions included."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield prefix + node.name, node
            yield from _functions(node, prefix + node.name + ".")
        elif isinstance(node, ast.ClassDef):
            yield from _functions(node, prefix + node.name + ".")


@functools.cache
def function_lengths() -> dict[str, int]:
    """``"path::name"`` -> lines, for every function of :data:`PACKAGES`."""
    out: dict[str, int] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=rel)
            for name, node in _functions(tree):
                out[f"{rel}::{name}"] = node.end_lineno - node.lineno + 1
    return out


@functools.cache
def class_lengths() -> dict[str, int]:
    """``"path::Class"`` -> lines, for every class of :data:`PACKAGES`, nested classes included."""
    out: dict[str, int] = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=rel)):
                if isinstance(node, ast.ClassDef):
                    out[f"{rel}::{node.name}"] = node.end_lineno - node.lineno + 1
    return out


def test_no_class_holds_a_whole_stage():
    long = {name: n for name, n in class_lengths().items() if n > MAX_CLASS_LINES and name not in ALLOWED_CLASSES}
    assert long == {}, f"classes over {MAX_CLASS_LINES} lines: split them into registered steps or " \
                       f"collaborators, or list them in ALLOWED_CLASSES with the reason they stay whole"


def test_every_allowed_class_is_still_long_and_says_why():
    lengths = class_lengths()
    for name, reason in ALLOWED_CLASSES.items():
        assert lengths.get(name, 0) > MAX_CLASS_LINES, f"{name} is gone or fits now: drop it from ALLOWED_CLASSES"
        assert len(reason.split()) >= 5, name


def test_no_function_runs_past_a_screen():
    long = {name: n for name, n in function_lengths().items() if n > MAX_LINES and name not in ALLOWED}
    assert long == {}, f"functions over {MAX_LINES} lines: split them into named steps, or list them in ALLOWED " \
                       f"with the reason they stay whole"


def test_every_allowed_function_is_still_long_and_says_why():
    lengths = function_lengths()
    for name, reason in ALLOWED.items():
        assert lengths.get(name, 0) > MAX_LINES, f"{name} is gone or fits a screen now: drop it from ALLOWED"
        assert len(reason.split()) >= 5, name


def test_the_measure_counts_a_function_from_def_to_its_last_line():
    source = "class A:\n    def f(self):\n        def g():\n            return 1\n\n        return g()\n"
    found = {name: node.end_lineno - node.lineno + 1 for name, node in _functions(ast.parse(source))}
    assert found == {"A.f": 5, "A.f.g": 2}
