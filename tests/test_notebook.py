"""The applicability notebook runs headless against a small build folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from homeloop.sim.task import load_tasks
from homeloop.core.catalog import load_catalog
from homeloop.pipeline.applicability import screen_homes, write_applicability

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOK = ROOT / "notebooks" / "applicability.ipynb"


def _kernel_name() -> str:
    """The venv's python3 kernel (ipykernel installs its spec in the venv)."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        KernelSpecManager().get_kernel_spec("python3")
    except NoSuchKernel:
        pytest.skip("no python3 Jupyter kernel in this environment")
    return "python3"


def test_applicability_notebook_runs(tmp_path, monkeypatch):
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from test_applicability import crafted_home

    catalog = load_catalog()
    homes = [crafted_home("home_a"), crafted_home("home_b", drop=("leak_1",)),
             crafted_home("home_c", laundry_door=0.52)]
    build = tmp_path / "build"
    write_applicability(screen_homes(homes, load_tasks(), None, catalog), build)

    monkeypatch.setenv("HOMELOOP_BUILD", str(build))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    # the kernel imports homeloop from the repository
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(nb, timeout=120, kernel_name=_kernel_name(),
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.output_type == "error"]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "3 homes x 24 tasks x 5 robots" in text
    assert sum("image/png" in o.get("data", {}) for o in outputs) >= 2
