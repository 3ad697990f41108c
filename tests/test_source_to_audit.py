"""One data path: generated plans → ingest → audit, as the build runs them.

The generator writes Swiss Dwellings CSV with defects injected on purpose and
a sidecar naming them; the ingest must take every generated plan back, and
the audit must reject exactly the plans carrying a defect, under the rule of
that defect.
"""

from __future__ import annotations

import pandas as pd
import pytest

from homeloop.pipeline import stages
from homeloop.pipeline.audit import plan_status
from homeloop.pipeline.ingest import load_plans
from homeloop.pipeline.sources.synthetic import DEFECT_KINDS, defects_path, generate

PLANS, SITES = 150, 40


@pytest.fixture(scope="module")
def audited(tmp_path_factory):
    out = tmp_path_factory.mktemp("audited")
    source = out / "geometries.csv"
    report = generate(source, plans=PLANS, sites=SITES, seed=3, defect_rate=0.3)
    outcome = stages.run_audit_source(source, out, progress=False)
    return report, source, out, outcome


def test_ingest_takes_back_every_generated_plan(audited):
    report, _, out, _ = audited
    plans = pd.read_parquet(out / "plans.parquet")
    rejected = pd.read_parquet(out / "rejected.parquet")
    plan_level = rejected[rejected["level"] == "plan"]["plan"].nunique()
    # Plans with an invalid polygon are rejected by the ingest (and audited as
    # invalid_geometry); every other generated plan is in the plan table.
    assert len(plans) + plan_level == report.plans
    assert plan_level == report.defects.get("invalid_geometry", 0)


def test_generated_plans_round_trip_through_the_element_table(audited):
    report, _, out, _ = audited
    plans = load_plans(out)
    summary = pd.read_parquet(out / "plans.parquet").set_index("plan")
    for plan in plans[:25]:
        row = summary.loc[plan.key]
        assert row["spaces"] == len(plan.spaces)
        assert row["doors"] == len(plan.doors)
        assert row["windows"] == len(plan.windows)
        assert abs(row["indoor_area_m2"] - round(plan.indoor_area, 3)) < 1e-6


def test_audit_rejects_exactly_the_plans_with_injected_defects(audited):
    report, source, _, outcome = audited
    injected = pd.read_csv(defects_path(source))
    status = plan_status(outcome.table)
    counted = injected[injected["plan"].isin(status.index)]
    # Every injected defect is caught by the rule of the same name …
    failing = outcome.table[~outcome.table["passed"]]
    for plan, defect in zip(counted["plan"], counted["defect"]):
        assert defect in set(failing.loc[failing["plan"] == plan, "rule"]), (plan, defect)
    # … and no defect-free plan fails.
    clean = set(status.index) - set(counted["plan"])
    assert status[sorted(clean)].all()
    # The rates match what the generator reports.
    per_rule = outcome.per_rule.set_index("rule")
    for kind in DEFECT_KINDS:
        assert per_rule.loc[kind, "failed"] == report.defects[kind], kind


def test_audit_writes_its_table_and_page(audited):
    _, _, out, outcome = audited
    table = pd.read_parquet(out / "audit.parquet")
    assert list(table.columns) == ["plan", "rule", "passed", "element", "message"]
    assert (out / "audit.html").read_text().count("<figure>") >= 1
    assert outcome.plans_checked == PLANS


def test_the_audit_on_dask_workers_writes_the_table_the_audit_in_this_process_does(audited, tmp_path, monkeypatch):
    """The build audits partitions of plans on its workers, each reading its own plans;
    the table and the report's pictures are those of every plan audited here in turn."""
    import shutil

    from homeloop.pipeline.audit import audit_plans
    from homeloop.pipeline.parallel import dask_client

    _, _, out, outcome = audited
    for name in ("elements.parquet", "rejected.parquet"):
        shutil.copy(out / name, tmp_path / name)
    rejected = pd.read_parquet(out / "rejected.parquet")
    monkeypatch.setattr(stages, "PLANS_PER_PARTITION", 40)  # several partitions of the 150 plans
    with dask_client(workers=2) as client:
        spread = stages.run_audit(tmp_path, rejected, progress=False, client=client)
    here = audit_plans(load_plans(out), rejected)
    pd.testing.assert_frame_equal(spread.table, here)
    assert spread.table.equals(outcome.table)
    assert sorted(p.name for p in (tmp_path / "audit").glob("*.png")) == \
        sorted(p.name for p in (out / "audit").glob("*.png"))
    assert (spread.plans_checked, spread.plans_passed) == (outcome.plans_checked, outcome.plans_passed)
