"""How diverse the selected plans are, against a random sample of the same size.

:func:`diversity_report` measures both sets on the same yardsticks: groups
covered and their counts, the largest share any one site supplies, the share of
distinct room–door graph hashes, and the distribution of each plan's L1
distance to its nearest neighbour within the set (on the pool-scaled vectors of
:func:`homeloop.pipeline.features.scaled_vectors`). :func:`write_diversity_report` writes
it as ``selection_report.json`` and three PNG plots, atomically and
byte-for-byte reproducibly.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from sklearn.neighbors import NearestNeighbors

from homeloop.core.io import atomic_path, write_json
from homeloop.pipeline.features import scaled_vectors

#: The two sets compared, in plotting order.
SETS = ("selected", "random")
#: Bins of the nearest-neighbour distance histogram.
NN_BINS = 40
#: How many of the largest sites the report lists per set.
TOP_SITES = 50
#: Decimal places of the floats in the report, so the JSON is stable across platforms.
DIGITS = 6

REPORT_FILE = "selection_report.json"
GROUPS_PLOT = "selection_groups.png"
NN_PLOT = "selection_nn_distance.png"
SITES_PLOT = "selection_site_share.png"


def _round(x: float) -> float:
    return round(float(x), DIGITS)


def nearest_neighbour_distances(vectors: np.ndarray) -> np.ndarray:
    """Each row's L1 distance to its nearest other row (0 for an exact duplicate)."""
    if len(vectors) < 2:
        return np.zeros(len(vectors))
    nn = NearestNeighbors(n_neighbors=2, metric="manhattan").fit(vectors)
    dist, idx = nn.kneighbors(vectors)
    # A row's own point normally comes first; with duplicates it may come second.
    own_first = idx[:, 0] == np.arange(len(vectors))
    return np.where(own_first, dist[:, 1], dist[:, 0])


def set_summary(rows: pd.DataFrame, vectors: np.ndarray) -> dict:
    """The diversity figures of one set of plans (``rows`` of the pool, their scaled vectors)."""
    size = len(rows)
    groups = rows["group"].astype(str).value_counts()
    sites = rows["site_id"].value_counts()
    site_counts = sorted((int(c) for c in sites.to_numpy()), reverse=True)
    nn = nearest_neighbour_distances(vectors)
    stats = (
        {
            "min": _round(nn.min()),
            "q1": _round(np.quantile(nn, 0.25)),
            "median": _round(np.median(nn)),
            "q3": _round(np.quantile(nn, 0.75)),
            "max": _round(nn.max()),
            "mean": _round(nn.mean()),
        }
        if size
        else dict.fromkeys(("min", "q1", "median", "q3", "max", "mean"), 0.0)
    )
    distinct = int(rows["wl_hash"].nunique())
    top_site = sites.sort_index().idxmax() if size else None
    return {
        "size": size,
        "groups_covered": int(len(groups)),
        "group_counts": {str(g): int(c) for g, c in sorted(groups.items())},
        "sites": int(len(sites)),
        "max_site": None if top_site is None else int(top_site),
        "max_site_share": _round(site_counts[0] / size) if size else 0.0,
        "top_site_counts": site_counts[:TOP_SITES],
        "distinct_hashes": distinct,
        "distinct_hash_share": _round(distinct / size) if size else 0.0,
        "nn_distance": stats,
        "_nn": nn,
    }


def diversity_report(pool_table: pd.DataFrame, selection: pd.DataFrame, *, seed: int = 0) -> dict:
    """Compare the selected plans with a seeded random sample of the same size from the pool.

    ``pool_table`` is the features table of the pool the selection was drawn from
    (vectors are scaled over it); ``selection`` has a ``plan`` column (the output
    of :func:`homeloop.pipeline.select.select`, or its first N rows). The sample is drawn
    without replacement with ``numpy.random.default_rng(seed)`` from the pool
    sorted by plan key, so it does not depend on row order. The nearest-neighbour
    histograms of both sets share their bin edges.
    """
    pool = pool_table.sort_values("plan", kind="stable").reset_index(drop=True)
    vectors = scaled_vectors(pool)
    position = pd.Series(np.arange(len(pool)), index=pool["plan"].to_numpy())
    missing = set(selection["plan"]) - set(position.index)
    if missing:
        raise ValueError(f"{len(missing)} selected plans are not in the pool, e.g. {sorted(missing)[:3]}")
    chosen = position.loc[selection["plan"].to_numpy()].to_numpy()
    size = len(chosen)
    rng = np.random.default_rng(seed)
    sample = np.sort(rng.choice(len(pool), size=size, replace=False))

    sets = {
        "selected": set_summary(pool.iloc[chosen], vectors[chosen]),
        "random": set_summary(pool.iloc[sample], vectors[sample]),
    }
    top = max((float(s["_nn"].max()) for s in sets.values() if s["size"]), default=1.0) or 1.0
    edges = np.linspace(0.0, top, NN_BINS + 1)
    for summary in sets.values():
        hist, _ = np.histogram(summary.pop("_nn"), bins=edges)
        summary["nn_distance_histogram"] = {
            "edges": [_round(e) for e in edges],
            "counts": [int(c) for c in hist],
        }
    sel, ran = sets["selected"], sets["random"]
    return {
        "size": size,
        "pool_size": int(len(pool)),
        "seed": int(seed),
        "sets": sets,
        "selection_beats_random": {
            "distinct_hash_share": sel["distinct_hash_share"] > ran["distinct_hash_share"],
            "median_nn_distance": sel["nn_distance"]["median"] > ran["nn_distance"]["median"],
            "groups_covered": sel["groups_covered"] >= ran["groups_covered"],
            "max_site_share": sel["max_site_share"] <= ran["max_site_share"],
        },
    }


# --- writing ----------------------------------------------------------------------

_COLOURS = {"selected": "#1f77b4", "random": "#ff7f0e"}


def _save(fig: Figure, path: Path) -> Path:
    """Write a figure as PNG atomically, without the matplotlib version stamp."""
    FigureCanvasAgg(fig)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=100, metadata={"Software": None})
    return path


def _groups_figure(report: dict) -> Figure:
    sets = report["sets"]
    groups = sorted(set().union(*(s["group_counts"] for s in sets.values())))
    fig = Figure(figsize=(max(8.0, 0.14 * len(groups) + 2), 5.0))
    ax = fig.add_subplot()
    x = np.arange(len(groups))
    width = 0.4
    for j, name in enumerate(SETS):
        counts = [sets[name]["group_counts"].get(g, 0) for g in groups]
        label = f"{name} ({sets[name]['groups_covered']} groups)"
        ax.bar(x + (j - 0.5) * width, counts, width, label=label, color=_COLOURS[name])
    ax.set_xticks(x)
    ax.set_xticklabels(groups, rotation=90, fontsize=5)
    ax.set_ylabel("plans")
    ax.set_title(f"Plans per group: selected vs random sample ({report['size']} plans)")
    ax.legend()
    fig.tight_layout()
    return fig


def _nn_figure(report: dict) -> Figure:
    sets = report["sets"]
    fig = Figure(figsize=(11.0, 4.5))
    hist_ax, cdf_ax = fig.subplots(1, 2)
    for name in SETS:
        h = sets[name]["nn_distance_histogram"]
        edges = np.asarray(h["edges"])
        counts = np.asarray(h["counts"], dtype=float)
        med = sets[name]["nn_distance"]["median"]
        hist_ax.stairs(counts, edges, label=f"{name} (median {med:.2f})", color=_COLOURS[name])
        total = counts.sum() or 1.0
        cdf = np.concatenate([[0.0], np.cumsum(counts) / total])
        cdf_ax.step(edges, cdf, where="post", label=name, color=_COLOURS[name])
    hist_ax.set_xlabel("L1 distance to nearest neighbour in the set (scaled)")
    hist_ax.set_ylabel("plans")
    hist_ax.set_title("Nearest-neighbour distance")
    hist_ax.legend()
    cdf_ax.set_xlabel("L1 distance to nearest neighbour in the set (scaled)")
    cdf_ax.set_ylabel("share of plans at or below")
    cdf_ax.set_title("Cumulative")
    cdf_ax.legend()
    fig.tight_layout()
    return fig


def _sites_figure(report: dict) -> Figure:
    sets = report["sets"]
    fig = Figure(figsize=(8.0, 4.5))
    ax = fig.add_subplot()
    for name in SETS:
        s = sets[name]
        size = s["size"] or 1
        shares = np.asarray(s["top_site_counts"], dtype=float) / size
        ranks = np.arange(1, len(shares) + 1)
        ax.plot(ranks, 100 * shares, marker=".", label=f"{name} ({s['sites']} sites, max {100 * s['max_site_share']:.2f} %)",
                color=_COLOURS[name])
    ax.set_xlabel(f"site, largest first (top {TOP_SITES})")
    ax.set_ylabel("share of the set (%)")
    ax.set_title("Share of the largest sites")
    ax.legend()
    fig.tight_layout()
    return fig


def write_diversity_report(report: dict, out_dir: str | Path) -> list[Path]:
    """Write ``selection_report.json`` and the three plots into ``out_dir``; return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [write_json(out / REPORT_FILE, report)]
    paths.append(_save(_groups_figure(report), out / GROUPS_PLOT))
    paths.append(_save(_nn_figure(report), out / NN_PLOT))
    paths.append(_save(_sites_figure(report), out / SITES_PLOT))
    return paths
