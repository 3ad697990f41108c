"""The episode viewer as a user sees it: pages built from a real run, read back by headless Chromium.

A small run (the scripted agent on two tasks, the do-nothing agent on one,
and a replayed transcript whose message holds markup) is written once; the
viewer's pages are loaded in a real browser (``--dump-dom`` for the DOM after
the page ran, ``--screenshot`` for its pixels) and compared with what the
records say. The browser tests skip only where no Chromium binary exists
(``.ci/run`` installs one on CI).
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import signal
import subprocess
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest

from homeloop.bench import runner
from homeloop.bench.records import read_records
from homeloop.bench.viewer import PAGES_DIR, ROUTE_COLOUR, capture_files, write_viewer

ROBOT = "unitree_g1_d_ultimate"
SCRIPTED_TASKS = ("answer_delivery", "put_away")  # answer_delivery carries the parcel: a held segment
NOTHING_TASK = "kitchen_fire_emergency"
REPLAY_TASK = "smoke_sensor_fault"
#: Markup a model might send; it must reach the page as text, never run.
HOSTILE = "<script>document.title='pwned'</script><img src=x onerror=\"document.title='pwned'\">"

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
_skip_without_browser = pytest.mark.skipif(CHROMIUM is None,
                                           reason="no chromium binary on PATH (apt-get install chromium)")


def needs_browser(test):
    """A test that starts headless Chromium: skipped without one, marked slow (it starts processes)."""
    return pytest.mark.slow(_skip_without_browser(test))


@pytest.fixture(scope="module")
def run_dir(house_home, tmp_path_factory) -> Path:
    """The run folder with its viewer written."""
    base = tmp_path_factory.mktemp("viewer")
    homes = {"house": house_home.write(base / "home.json")}
    out = base / "run"
    runner.run(runner.plan(homes, SCRIPTED_TASKS, ROBOT, [0]), "scripted", out)
    replies = base / "replies.jsonl"
    replies.write_text("\n".join(json.dumps(line) for line in (
        {"content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": "messaging_send", "arguments": {"recipient": "resident_1", "text": HOSTILE}}}]},
        {"content": f"Done. {HOSTILE}"})) + "\n", encoding="utf-8")
    # A run folder belongs to one agent: the others run apart and their records are put beside, as a
    # person gathering several agents' episodes for one viewer would.
    runner.run(runner.plan(homes, [NOTHING_TASK], ROBOT, [0]), "do-nothing", base / "nothing")
    runner.run(runner.plan(homes, [REPLAY_TASK], ROBOT, [0]), "replay", base / "replay",
               agent_options={"replies": str(replies), "model": "transcript"})
    for other in ("nothing", "replay"):
        shutil.copytree(base / other / "episodes", out / "episodes", dirs_exist_ok=True)
    write_viewer(out)
    return out


@pytest.fixture(scope="module")
def records(run_dir) -> dict[str, dict]:
    return {r["world"]["task"]: r for r in read_records([run_dir]).records}


# --- without a browser ---------------------------------------------------------------------------


def _hashes(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*.html"))}


def test_the_same_records_give_the_same_bytes(run_dir):
    before = _hashes(run_dir)
    write_viewer(run_dir)
    assert _hashes(run_dir) == before
    assert len(before) == 1 + len(read_records([run_dir]).records)


def test_model_markup_is_written_as_text(run_dir, records):
    page = (run_dir / PAGES_DIR / f"{records[REPLAY_TASK]['episode_id']}.html").read_text(encoding="utf-8")
    assert "<script" not in page and "<img src=x" not in page
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in page


def test_a_removed_record_takes_its_page_with_it(run_dir, records, tmp_path):
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    gone = records[NOTHING_TASK]["episode_id"]
    (copy / "episodes" / f"{gone}.json").unlink()
    write_viewer(copy)
    assert not (copy / PAGES_DIR / f"{gone}.html").exists()
    assert gone not in (copy / "index.html").read_text(encoding="utf-8")


# --- in a browser --------------------------------------------------------------------------------


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    children: list["Node"] = field(default_factory=list)
    text: list[str] = field(default_factory=list)

    def all(self, tag: str, cls: str | None = None) -> list["Node"]:
        found = []
        for child in self.children:
            if child.tag == tag and (cls is None or cls in child.attrs.get("class", "").split()):
                found.append(child)
            found.extend(child.all(tag, cls))
        return found

    def content(self) -> str:
        return "".join(self.text) + "".join(c.content() for c in self.children)


class _TreeBuilder(HTMLParser):
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "wbr"}

    def __init__(self) -> None:
        super().__init__()
        self.root = Node("#document", {})
        self.stack = [self.root]

    def handle_starttag(self, tag, attrs):
        node = Node(tag, {k: v or "" for k, v in attrs})
        self.stack[-1].children.append(node)
        if tag not in self.VOID:
            self.stack.append(node)

    def handle_startendtag(self, tag, attrs):
        self.stack[-1].children.append(Node(tag, {k: v or "" for k, v in attrs}))

    def handle_endtag(self, tag):
        for i in range(len(self.stack) - 1, 0, -1):
            if self.stack[i].tag == tag:
                del self.stack[i:]
                return

    def handle_data(self, data):
        self.stack[-1].text.append(data)


def browse(page: Path, *args: str, profile: Path) -> str:
    """Run headless Chromium on a page (own profile folder, own process group, stopped by its id)."""
    cmd = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
           f"--user-data-dir={profile}", "--window-size=1400,1800", *args, page.resolve().as_uri()]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=180)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # any helper process the browser left behind
        except ProcessLookupError:
            pass
        proc.wait()
    assert proc.returncode == 0, err[-2000:]
    return out


def dom(page: Path, profile: Path) -> Node:
    builder = _TreeBuilder()
    builder.feed(browse(page, "--dump-dom", profile=profile))
    return builder.root


@needs_browser
def test_the_index_lists_every_episode_with_its_checks(run_dir, records, tmp_path):
    root = dom(run_dir / "index.html", tmp_path / "profile")
    rows = root.all("tr", "episode-row")
    assert [r.attrs["id"] for r in rows] == sorted(r["episode_id"] for r in records.values())
    by_id = {r["episode_id"]: r for r in records.values()}
    for row in rows:
        record = by_id[row.attrs["id"]]
        cells = row.all("td")
        assert cells[0].content() == record["world"]["task"]
        assert cells[0].all("a")[0].attrs["href"] == f"{PAGES_DIR}/{record['episode_id']}.html"
        assert cells[6].content() == ("pass" if record["passed"] else "fail")
        checks = [(s.attrs["data-check"], s.attrs["class"].split()[-1]) for s in row.all("span", "chk")]
        assert checks == [(c["id"], "pass" if c["passed"] else "fail") for c in record["checks"]]
        assert [s.content() for s in row.all("span", "cls")] == record["failures"]
    assert not records[NOTHING_TASK]["passed"] and records[NOTHING_TASK]["failures"]


@needs_browser
def test_an_episode_page_draws_the_route_one_line_per_call(run_dir, records, tmp_path):
    record = records["answer_delivery"]
    root = dom(run_dir / PAGES_DIR / f"{record['episode_id']}.html", tmp_path / "profile")
    route, calls = record["route"], record["calls"]
    assert len(route) == len(calls) + 1  # where the robot stood at the wake, then after each call
    lines = root.all("line", "seg")
    assert [int(line.attrs["data-call"]) for line in lines] == list(range(len(calls)))
    assert ["held" in line.attrs["class"] for line in lines] == [bool(p[3]) for p in route[:-1]]
    assert any("held" in line.attrs["class"] for line in lines)  # the parcel was carried in
    assert len(root.all("circle", "route-start")) == 1
    assert len(root.all("tr", "call")) == len(calls)
    thumbs = [a for a in root.all("a", "thumb")]
    assert len(thumbs) == sum(len(capture_files(c.get("data"))) for c in calls) > 0
    for thumb in thumbs:  # each thumbnail opens its enlargement, which shows the same file
        box = next(b for b in root.all("a", "lightbox") if b.attrs["id"] == thumb.attrs["href"][1:])
        assert box.all("img")[0].attrs["src"] == thumb.all("img")[0].attrs["src"]


@needs_browser
def test_check_witnesses_and_violations_sit_at_their_call(run_dir, records, tmp_path):
    for task in ("answer_delivery", NOTHING_TASK):
        record = records[task]
        root = dom(run_dir / PAGES_DIR / f"{record['episode_id']}.html", tmp_path / f"profile-{task}")
        rows = {r.attrs["id"]: r.content() for r in root.all("tr") if r.attrs.get("id", "").startswith("call-")}
        end = f"call-{len(record['calls'])}"
        for check in record["checks"]:
            if check["kind"] == "final" or (check["at"] is None and not check["passed"]):
                assert check["id"] in rows[end], check["id"]
            elif check["at"] is not None:
                at = next(i for i, c in enumerate(record["calls"]) if c["t_end"] >= check["at"] - 1e-6)
                assert check["id"] in rows[f"call-{at}"], check["id"]


@needs_browser
def test_markup_a_model_sent_shows_as_text_and_never_runs(run_dir, records, tmp_path):
    record = records[REPLAY_TASK]
    root = dom(run_dir / PAGES_DIR / f"{record['episode_id']}.html", tmp_path / "profile")
    assert root.all("title")[0].content() != "pwned"
    assert not root.all("script")
    sent = record["calls"][0]["arguments"]
    assert sent["text"] == HOSTILE
    assert json.dumps(sent, sort_keys=True, ensure_ascii=False) in root.all("tr", "call")[0].content()
    assert f"Done. {HOSTILE}" in root.all("tr", "end")[0].content()


@needs_browser
def test_the_screenshot_shows_the_route(run_dir, records, tmp_path):
    from PIL import Image

    shot = tmp_path / "page.png"
    page = run_dir / PAGES_DIR / f"{records['answer_delivery']['episode_id']}.html"
    browse(page, f"--screenshot={shot}", profile=tmp_path / "profile")
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pixels = Image.open(io.BytesIO(data)).convert("RGB")
    colour = tuple(int(ROUTE_COLOUR[i:i + 2], 16) for i in (1, 3, 5))
    near = sum(n for n, rgb in pixels.getcolors(pixels.width * pixels.height)
               if max(abs(a - b) for a, b in zip(rgb, colour)) <= 12)
    assert near >= 100, f"{near} pixels of the route colour"
    assert len(pixels.getcolors(pixels.width * pixels.height)) > 50  # not a blank page
