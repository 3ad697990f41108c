"""The greedy diverse ordering of the audit-passing plans (docs/pipeline.md).

:func:`select` ranks plans one pick at a time. At step *k* (*k* plans picked so
far) the candidates are narrowed by these rules, in this order:

1. **site** — a site qualifies while it supplied under ``site_share`` of the
   plans picked so far: ``picks[s] < site_share × k``, evaluated exactly (the
   share as a fraction, integer arithmetic). A site with no picks always
   qualifies (0 is under any share; at *k* = 0, where the share is undefined,
   every site qualifies). With the default 1 %, ``picks[s] < 0.01 × k`` admits
   only unpicked sites up to and including *k* = 100, so the first 101 picks
   come from 101 distinct sites; from *k* = 101 a site may have a second plan,
   from *k* = 201 a third, and so on.
2. **group** — among the qualifying plans, keep those of the groups (step 4's
   group key) with the fewest picks so far, counting only groups that still
   have qualifying plans.
3. **new_hash** — among those, keep the plans whose room–door graph hash
   (``wl_hash``) no picked plan has, if there are any.
4. **distance** — among those, keep the plans at the largest L1 distance (on
   :func:`homeloop.pipeline.features.scaled_vectors`) to their nearest already-picked
   plan. For the first pick, when nothing is picked yet, the distance is taken
   to the pool's column-wise median instead, so the first pick is the plan
   least like the typical one.
5. **tie** — if several remain, take the one with the smallest tie-break
   priority: a 64-bit blake2b hash of ``"<seed>:<plan key>"``, then the plan
   key. The priority depends only on the seed and the plan's own key, not on
   the pool or the input row order.

**Relaxation.** Rules 2–5 never leave an empty set, but rule 1 can, once every
remaining plan comes from a site at its share (late in a long ordering, when
only plans of large sites are left). Then, for that step only, the site rule
is relaxed to "the sites with the fewest picks among those with plans left"
and rules 2–5 apply as usual; the step's ``relaxed`` column says ``"site"``.

**decided_by** names the first rule after which a single candidate was left:
``"site"``, ``"group"``, ``"new_hash"``, ``"distance"``, ``"tie"`` when the
tie-break had to choose, or ``"only"`` when a single plan was left in the pool.
On a relaxed step ``"site"`` refers to the relaxed site rule; whether a step was
relaxed is in the separate ``relaxed`` column, so both facts are kept.

The nearest-picked distance of every plan is kept in one array and updated
after each pick with a single vectorised L1 computation from the new pick to
all plans (never recomputed from scratch); site, group and hash counts are
arrays indexed by integer codes, and the site and group rules are boolean masks
over the plans still open, so one step costs a few passes over them. The
working arrays are compacted whenever fewer than half of their plans are still
open, so ordering a whole pool costs about half of n² distance terms.
"""

from __future__ import annotations

import hashlib
from fractions import Fraction

import numpy as np
import pandas as pd

from homeloop.pipeline.features import scaled_vectors

#: Columns of the selection table (``selection.parquet``), in order.
SELECTION_COLUMNS = (
    "rank",
    "plan",
    "site_id",
    "group",
    "wl_hash",
    "new_hash",
    "distance",
    "decided_by",
    "relaxed",
)

#: Default share of picks a site may supply (docs/pipeline.md: "under 1%").
SITE_SHARE = 0.01

#: The working set is compacted only while larger than this many plans.
COMPACT_MIN = 256

#: The names ``decided_by`` takes, in the order the rules apply.
RULES = ("site", "group", "new_hash", "distance")


def tie_priority(plans, seed: int = 0) -> np.ndarray:
    """Tie-break priority of each plan key: the first 8 bytes of blake2b("<seed>:<key>")."""
    out = np.empty(len(plans), dtype=np.uint64)
    prefix = f"{int(seed)}:".encode()
    for i, key in enumerate(plans):
        digest = hashlib.blake2b(prefix + str(key).encode(), digest_size=8).digest()
        out[i] = int.from_bytes(digest, "big")
    return out


def _share_fraction(site_share: float) -> tuple[int, int]:
    if not 0 < site_share <= 1:
        raise ValueError(f"site_share must lie in (0, 1], got {site_share}")
    share = Fraction(str(site_share)).limit_denominator(1_000_000)
    return share.numerator, share.denominator


def l1_to(columns: np.ndarray, i: int, out: np.ndarray, scratch: np.ndarray) -> np.ndarray:
    """L1 distance from plan ``i`` to every plan, into ``out``.

    ``columns`` is the scaled vectors transposed (one contiguous row per
    feature), so each feature is one pass over contiguous memory; this is an
    order of magnitude faster than reducing an (n × d) difference along rows.
    """
    np.subtract(columns[0], columns[0, i], out=out)
    np.abs(out, out=out)
    for column in columns[1:]:
        np.subtract(column, column[i], out=scratch)
        np.abs(scratch, out=scratch)
        out += scratch
    return out


def select(
    table: pd.DataFrame,
    *,
    count: int | None = None,
    site_share: float = SITE_SHARE,
    seed: int = 0,
) -> pd.DataFrame:
    """Rank the plans of ``table`` (the audit-passing plans) in greedy diverse order.

    ``table`` needs ``plan``, ``site_id``, ``group``, ``wl_hash`` and the vector
    columns of :data:`homeloop.pipeline.features.VECTOR_COLUMNS`; its row order does not
    matter. Returns the first ``count`` picks (all plans when ``None``) as
    :data:`SELECTION_COLUMNS`: ``rank`` from 1, ``new_hash`` (no earlier pick
    had this hash), ``distance`` (scaled L1 to the nearest earlier pick; to the
    pool median for rank 1), ``decided_by`` and ``relaxed`` (see the module
    docstring).
    """
    table = table.sort_values("plan", kind="stable").reset_index(drop=True)
    if table["plan"].duplicated().any():
        dupes = table.loc[table["plan"].duplicated(), "plan"].head(3).tolist()
        raise ValueError(f"plan keys must be unique; repeated: {dupes}")
    n = len(table)
    count = n if count is None else max(0, min(int(count), n))
    pool = _Pool(table, seed, *_share_fraction(site_share))
    picked = np.empty(count, dtype=np.intp)
    new_hash = np.empty(count, dtype=bool)
    distance = np.empty(count, dtype=np.float64)
    decided_by: list[str] = []
    relaxed: list[str] = []
    for k in range(count):
        if k and n - k < pool.open.size // 2 and pool.open.size > COMPACT_MIN:
            pool.compact()
        j, distance[k], rule, relax = pool.choose(k)
        picked[k], new_hash[k] = pool.take(j)
        decided_by.append(rule)
        relaxed.append(relax)
    rows = table.iloc[picked]
    return pd.DataFrame(
        {
            "rank": np.arange(1, count + 1, dtype=np.int64),
            "plan": rows["plan"].to_numpy(dtype=object),
            "site_id": rows["site_id"].to_numpy(),
            "group": rows["group"].to_numpy(dtype=object),
            "wl_hash": rows["wl_hash"].to_numpy(dtype=object),
            "new_hash": new_hash,
            "distance": distance,
            "decided_by": np.asarray(decided_by, dtype=object),
            "relaxed": np.asarray(relaxed, dtype=object),
        },
        columns=list(SELECTION_COLUMNS),
    )


class _Pool:
    """The plans of one ordering: what the picks so far covered, and the working set.

    Sites, groups and hashes are integer codes per plan (position in the sorted
    table); picks per site and group and the hashes seen are arrays indexed by
    them. The working set holds the plans still to pick plus any picked since the
    last :meth:`compact` (``open`` False there); each of its arrays is aligned with
    ``live``, the plans' positions in the table.
    """

    MOST = np.iinfo(np.int64).max

    def __init__(self, table: pd.DataFrame, seed: int, num: int, den: int) -> None:
        n = len(table)
        self.n, self.num, self.den = n, num, den
        vectors = scaled_vectors(table)
        codes = [np.unique(values, return_inverse=True)[1].astype(np.intp).ravel() for values in (
            table["site_id"].to_numpy(), table["group"].astype(str).to_numpy(),
            table["wl_hash"].astype(str).to_numpy())]
        self.site_idx, self.group_idx, self.hash_idx = codes
        self.site_picks = np.zeros(self.site_idx.max() + 1 if n else 0, dtype=np.int64)
        self.group_picks = np.zeros(self.group_idx.max() + 1 if n else 0, dtype=np.int64)
        self.hash_seen = np.zeros(self.hash_idx.max() + 1 if n else 0, dtype=bool)
        self.first_score = np.abs(vectors - np.median(vectors, axis=0)).sum(axis=1) if n else np.empty(0)
        self.live = np.arange(n)
        self.columns = np.ascontiguousarray(vectors.T)
        self.site, self.group, self.hash = self.site_idx, self.group_idx, self.hash_idx
        self.priority = tie_priority(table["plan"], seed)
        self.open = np.ones(n, dtype=bool)
        self.nearest = np.full(n, np.inf)
        self.to_pick, self.scratch = np.empty(n), np.empty(n)

    def compact(self) -> None:
        """Drop the plans picked since the last compaction from the working set."""
        keep = np.flatnonzero(self.open)
        self.live, self.columns = self.live[keep], np.ascontiguousarray(self.columns[:, keep])
        self.site, self.group, self.hash, self.priority = (
            self.site[keep], self.group[keep], self.hash[keep], self.priority[keep])
        self.nearest, self.open = self.nearest[keep], self.open[keep]
        self.to_pick, self.scratch = np.empty(keep.size), np.empty(keep.size)

    def site_candidates(self, k: int) -> tuple[np.ndarray, str]:
        """Rule 1: open plans of sites under their share after ``k`` picks (in integers; a site
        with no picks always qualifies); relaxed to the sites with the fewest picks when none is."""
        site_ok = (self.site_picks == 0) | (self.site_picks * self.den < self.num * k)
        candidates = self.open & site_ok[self.site]
        if candidates.any():
            return candidates, ""
        open_site_picks = self.site_picks[self.site]
        fewest_site = np.min(open_site_picks, where=self.open, initial=self.MOST)
        return self.open & (open_site_picks == fewest_site), "site"

    def choose(self, k: int) -> tuple[int, float, str, str]:
        """Pick ``k``: the working-set position chosen, its distance, the rule that decided and
        the relaxed rule (rules 1 to 5 of the module docstring)."""
        candidates, relax = self.site_candidates(k)
        n_site = int(np.count_nonzero(candidates))
        # 2. group: the fewest picks among the groups of the candidates
        plan_group_picks = self.group_picks[self.group]
        fewest_group = np.min(plan_group_picks, where=candidates, initial=self.MOST)
        idx = np.flatnonzero(candidates & (plan_group_picks == fewest_group))
        n_group = idx.size
        # 3. new hash
        fresh = ~self.hash_seen[self.hash[idx]]
        if fresh.any():
            idx = idx[fresh]
        n_hash = idx.size
        # 4. distance to the nearest pick (to the pool median for the first pick)
        score = self.first_score[idx] if k == 0 else self.nearest[idx]
        best = score.max()
        idx = idx[score == best]
        n_dist = idx.size
        # 5. tie: the smallest priority; argmin takes the first, the smallest key
        j = int(idx[0]) if n_dist == 1 else int(idx[np.argmin(self.priority[idx])])
        if self.n - k == 1:
            rule = "only"
        else:
            rule = next((r for r, c in zip(RULES, (n_site, n_group, n_hash, n_dist)) if c == 1), "tie")
        return j, best, rule, relax

    def take(self, j: int) -> tuple[int, bool]:
        """Pick the plan at working-set position ``j``: its table position, and whether its
        hash is new; the counts and every open plan's nearest-pick distance are updated."""
        i = int(self.live[j])
        fresh = not self.hash_seen[self.hash_idx[i]]
        self.open[j] = False
        self.site_picks[self.site_idx[i]] += 1
        self.group_picks[self.group_idx[i]] += 1
        self.hash_seen[self.hash_idx[i]] = True
        np.minimum(self.nearest, l1_to(self.columns, j, self.to_pick, self.scratch), out=self.nearest)
        return i, fresh
