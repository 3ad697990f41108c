"""The greedy diverse ordering and its diversity report."""

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import pairwise_distances

from homeloop.pipeline.diversity import REPORT_FILE, diversity_report, write_diversity_report
from homeloop.pipeline.features import FEATURE_COLUMNS, VECTOR_COLUMNS, scaled_vectors, synthetic_features_table
from homeloop.pipeline.select import SELECTION_COLUMNS, select


@pytest.fixture(scope="module")
def pool():
    """A few hundred plans with heavy-tailed sites and uneven groups."""
    return synthetic_features_table(400, 150, seed=7)


@pytest.fixture(scope="module")
def crowded_pool():
    """Fewer sites than the first picks need, so the site rule must relax."""
    return synthetic_features_table(300, 40, seed=11)


def replay(table: pd.DataFrame, order: pd.DataFrame, share_percent: int = 1) -> None:
    """Check every pick of ``order`` against the rules, recomputed from scratch."""
    table = table.sort_values("plan").reset_index(drop=True)
    x = scaled_vectors(table)
    dist = pairwise_distances(x, metric="manhattan")
    index = {p: i for i, p in enumerate(table["plan"])}
    site_picks: Counter = Counter()
    group_picks: Counter = Counter()
    seen: set = set()
    picked: list[int] = []
    remaining = np.ones(len(table), dtype=bool)
    sites, groups, hashes = (table[c].to_numpy() for c in ("site_id", "group", "wl_hash"))

    def qualifies(site, k):
        return site_picks[site] * 100 < share_percent * k or site_picks[site] == 0

    for k, row in enumerate(order.itertuples(index=False)):
        i = index[row.plan]
        assert remaining[i], "a plan picked twice"
        qual = np.array([remaining[j] and qualifies(sites[j], k) for j in range(len(table))])
        if row.relaxed == "":
            assert qualifies(row.site_id, k), f"step {k}: site {row.site_id} over its share"
        else:
            assert row.relaxed == "site"
            assert not qual.any(), f"step {k}: relaxed although a plan qualified"
            fewest = min(site_picks[sites[j]] for j in np.flatnonzero(remaining))
            assert site_picks[row.site_id] == fewest
            qual = remaining & np.array([site_picks[s] == fewest for s in sites])
        fewest_group = min(group_picks[groups[j]] for j in np.flatnonzero(qual))
        assert group_picks[row.group] == fewest_group, f"step {k}: group {row.group} not among the fewest"
        cand = qual & np.array([group_picks[g] == fewest_group for g in groups])
        fresh = cand & np.array([h not in seen for h in hashes])
        assert row.new_hash == (row.wl_hash not in seen)
        if fresh.any():
            assert row.new_hash, f"step {k}: a new hash was available"
            cand = fresh
        # The pick is at the largest nearest-picked distance among the candidates.
        if picked:
            nearest = dist[:, picked].min(axis=1)
        else:
            nearest = np.abs(x - np.median(x, axis=0)).sum(axis=1)
        assert row.distance == pytest.approx(nearest[i], abs=1e-9)
        assert nearest[i] >= nearest[cand].max() - 1e-9
        picked.append(i)
        remaining[i] = False
        site_picks[row.site_id] += 1
        group_picks[row.group] += 1
        seen.add(row.wl_hash)


def test_every_pick_follows_the_site_group_hash_and_distance_rules(pool):
    order = select(pool)
    assert list(order.columns) == list(SELECTION_COLUMNS)
    assert len(order) == len(pool) and order["plan"].is_unique
    assert list(order["rank"]) == list(range(1, len(pool) + 1))
    replay(pool, order)


def test_the_site_rule_relaxes_only_when_no_plan_qualifies(crowded_pool):
    order = select(crowded_pool)
    relaxed = order["relaxed"] == "site"
    assert relaxed.any()  # 40 sites cannot give 101 distinct first picks
    assert not relaxed.iloc[:40].any()
    replay(crowded_pool, order)


def test_first_101_picks_come_from_distinct_sites(pool):
    order = select(pool, count=150)
    assert order["site_id"].iloc[:101].is_unique
    assert (order["relaxed"] == "").all()
    # From step 101 (picks made) a site may supply a second plan.
    first_repeat = order["site_id"].duplicated().to_numpy().argmax()
    assert first_repeat >= 101


def test_a_larger_share_admits_repeats_sooner(pool):
    order = select(pool, count=60, site_share=0.1)
    replay(pool, order, share_percent=10)
    assert not order["site_id"].is_unique


def test_order_is_deterministic_and_independent_of_row_order(pool):
    first = select(pool)
    pd.testing.assert_frame_equal(first, select(pool))
    shuffled = pool.sample(frac=1, random_state=3).reset_index(drop=True)
    pd.testing.assert_frame_equal(first, select(shuffled))


def test_count_takes_the_head_of_the_full_order(pool):
    full = select(pool)
    pd.testing.assert_frame_equal(select(pool, count=120), full.head(120))
    assert len(select(pool, count=10_000)) == len(pool)
    assert len(select(pool, count=0)) == 0


def test_incremental_distances_equal_a_recomputation(pool):
    order = select(pool)
    table = pool.sort_values("plan").reset_index(drop=True)
    x = scaled_vectors(table)
    pos = table.reset_index().set_index("plan").loc[order["plan"], "index"].to_numpy()
    d = pairwise_distances(x[pos], metric="manhattan")
    expected = [np.abs(x[pos[0]] - np.median(x, axis=0)).sum()]
    expected += [d[r, :r].min() for r in range(1, len(pos))]
    np.testing.assert_allclose(order["distance"].to_numpy(), expected, rtol=1e-12, atol=1e-12)


def _tiny_pool(areas, hashes, sites=None, groups=None):
    n = len(areas)
    table = pd.DataFrame({c: np.zeros(n, dtype=np.int64) for c in VECTOR_COLUMNS})
    table["indoor_area_m2"] = np.asarray(areas, dtype=float)
    table["plan"] = [f"p{i}" for i in range(n)]
    table["site_id"] = list(range(n)) if sites is None else sites
    table["group"] = ["b1|none|closed|nowm"] * n if groups is None else groups
    table["wl_hash"] = hashes
    return table


def test_a_new_hash_beats_a_larger_distance():
    # Spread of area about the median (10): 100/3; scaled areas 0, 3, 0.3.
    table = _tiny_pool([0.0, 100.0, 10.0], ["h1", "h1", "h2"])
    order = select(table)
    assert list(order["plan"]) == ["p1", "p2", "p0"]
    assert order["decided_by"].tolist() == ["distance", "new_hash", "only"]
    assert order["new_hash"].tolist() == [True, True, False]


def test_the_fewest_picked_group_comes_first():
    groups = ["a", "a", "a", "b"]
    table = _tiny_pool([0.0, 50.0, 100.0, 49.0], ["h0", "h1", "h2", "h3"], groups=groups)
    order = select(table)
    # After the first pick (group a), group b must come next, however close it lies.
    assert order["group"].tolist()[:2] == ["a", "b"]
    assert order["decided_by"].iloc[1] == "group"


def test_exact_ties_are_broken_by_the_seeded_priority():
    table = _tiny_pool([5.0] * 6, [f"h{i}" for i in range(6)])
    a, b = select(table, seed=0), select(table, seed=1)
    assert set(a["decided_by"].iloc[:-1]) == {"tie"}
    assert sorted(a["plan"]) == sorted(b["plan"])
    assert list(a["plan"]) != list(b["plan"])


def test_rejects_repeated_plan_keys(pool):
    with pytest.raises(ValueError, match="unique"):
        select(pd.concat([pool, pool.head(1)]))


# --- diversity -------------------------------------------------------------------------


def test_selection_beats_a_random_sample_and_the_report_is_reproducible(tmp_path):
    pool = synthetic_features_table(3000, 800, seed=5)
    assert list(pool.columns) == list(FEATURE_COLUMNS)
    selection = select(pool, count=1800)
    report = diversity_report(pool, selection, seed=0)
    sel, ran = report["sets"]["selected"], report["sets"]["random"]
    assert sel["size"] == ran["size"] == 1800
    assert sel["distinct_hash_share"] > ran["distinct_hash_share"]
    assert sel["nn_distance"]["median"] > ran["nn_distance"]["median"]
    assert sel["max_site_share"] <= 0.01 + 1 / 1800
    assert sel["groups_covered"] >= ran["groups_covered"]
    assert all(report["selection_beats_random"].values())
    assert sum(sel["group_counts"].values()) == 1800
    assert sum(sel["nn_distance_histogram"]["counts"]) == 1800

    first = write_diversity_report(report, tmp_path / "a")
    again = write_diversity_report(diversity_report(pool.sample(frac=1, random_state=1), selection), tmp_path / "b")
    assert [p.name for p in first] == [p.name for p in again]
    assert first[0].name == REPORT_FILE
    for p, q in zip(first, again):
        assert p.read_bytes() == q.read_bytes(), p.name
    assert all(p.suffix == ".png" and p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in first[1:])
    assert not list((tmp_path / "a").glob(".*.tmp"))


def test_selection_of_generated_plans_beats_a_random_sample(tmp_path):
    """The same comparison on features of plans from the built-in generator."""
    from homeloop.pipeline.sources import synthetic
    from homeloop.pipeline.features import features_table
    from homeloop.pipeline.sources.swiss_dwellings import read_plans

    source = tmp_path / "geometries.csv"
    synthetic.generate(source, plans=1000, sites=260, seed=0)
    plans, _ = read_plans(source)
    pool = features_table(plans)
    selection = select(pool, count=len(pool) // 2)
    replay(pool, selection.head(150))
    report = diversity_report(pool, selection, seed=0)
    sel, ran = report["sets"]["selected"], report["sets"]["random"]
    assert sel["distinct_hash_share"] > ran["distinct_hash_share"]
    assert sel["nn_distance"]["median"] > ran["nn_distance"]["median"]
