"""The audit stage: every rule over every plan, one table, a per-rule summary
and a page that draws failing plans with the offending element in red."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Callable, Collection, Iterable, Sequence

import pandas as pd

from homeloop.audits import AUDIT_COLUMNS
from homeloop.core.io import write_parquet, write_text
from homeloop.core.plan import Plan

#: Failing plans drawn per rule on the audit page.
PICTURES_PER_RULE = 3
#: The ingest reason that the audit reports under its invalid_geometry rule.
INGEST_INVALID_GEOMETRY = "invalid_geometry"


def audit_plans(
    plans: Sequence[Plan],
    rejected: pd.DataFrame | None = None,
    *,
    progress: Callable[[int], None] | None = None,
) -> pd.DataFrame:
    """The audit table: a row per (plan, rule) that passed and per finding.

    Plans the ingest already rejected for an invalid polygon are reported
    under ``invalid_geometry`` too, so the table covers every plan of the source.
    """
    return audit_table(audit_records(plans, progress=progress), rejected)


def audit_records(plans: Iterable[Plan], rules: Sequence[str] | None = None, *,
                  progress: Callable[[int], None] | None = None) -> list[dict]:
    """The audit table's records of some plans, with all rules or those named."""
    from homeloop.audits import audit_plans as audit_each

    records: list[dict] = []
    for result in audit_each(plans, rules):
        records.extend(result.to_records())
        if progress:
            progress(1)
    return records


def audit_partition(keys: list[str], build_dir: str, rules: Sequence[str]) -> list[dict]:
    """The audit records of some plans of a build, read from its plan table (a Dask
    partition). The rules are named by the caller, so a worker missing one says so."""
    from homeloop.pipeline.ingest import load_plans

    return audit_records(load_plans(build_dir, keys=keys, hold=True), rules)


def audit_table(records: list[dict], rejected: pd.DataFrame | None = None) -> pd.DataFrame:
    """The audit table from plan records in any order, with the ingest's geometry rejections."""
    from homeloop.audits import extra_findings, finding_from_rejection

    records = list(records)
    if rejected is not None and len(rejected):
        from homeloop.pipeline.sources.swiss_dwellings import plan_rejections

        culprits = plan_rejections(rejected)
        for r in culprits[culprits["reason"] == INGEST_INVALID_GEOMETRY].itertuples(index=False):
            finding = finding_from_rejection(r.plan, None if pd.isna(r.row) else int(r.row), r.message)
            records.extend(extra_findings(finding.plan, [finding]).to_records())
    table = pd.DataFrame.from_records(records, columns=list(AUDIT_COLUMNS))
    table["passed"] = table["passed"].astype(bool)
    return table.sort_values(["plan", "rule", "passed", "element", "message"], kind="stable").reset_index(drop=True)


def write_audit_table(table: pd.DataFrame, path: Path) -> Path:
    return write_parquet(path, table)


def plan_status(table: pd.DataFrame) -> pd.Series:
    """Plan → True when every rule passed."""
    return table.groupby("plan", sort=True)["passed"].all()


def per_rule_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per rule: plans checked, passed, failed, and one example message."""
    by_plan_rule = table.groupby(["rule", "plan"], sort=True)["passed"].all().reset_index()
    rows = []
    for rule, group in by_plan_rule.groupby("rule", sort=True):
        failed = int((~group["passed"]).sum())
        example = table[(table["rule"] == rule) & ~table["passed"]]["message"]
        rows.append(
            {
                "rule": rule,
                "checked": len(group),
                "passed": len(group) - failed,
                "failed": failed,
                "example": example.iloc[0] if len(example) else "",
            }
        )
    return pd.DataFrame(rows, columns=["rule", "checked", "passed", "failed", "example"])


def _examples(table: pd.DataFrame, drawable: Collection[str], per_rule: int):
    """(rule, plan key, failing rows) of the first ``per_rule`` failing plans per rule, by key,
    among those that can be drawn."""
    failing = table[~table["passed"]]
    for rule, group in failing.groupby("rule", sort=True):
        shown = 0
        for plan_key, rows in group.groupby("plan", sort=True):
            if plan_key not in drawable:
                continue
            yield rule, plan_key, rows
            shown += 1
            if shown >= per_rule:
                break


def example_plan_keys(table: pd.DataFrame, drawable: Collection[str], per_rule: int = PICTURES_PER_RULE) -> list[str]:
    """The plans the audit page draws (:func:`failing_examples`), sorted: only those need reading."""
    return sorted({plan_key for _, plan_key, _ in _examples(table, drawable, per_rule)})


def failing_examples(table: pd.DataFrame, plans_by_key: dict[str, Plan], per_rule: int = PICTURES_PER_RULE):
    """(rule, plan, elements, message) of a few failing plans per rule that can be drawn."""
    for rule, plan_key, rows in _examples(table, plans_by_key.keys(), per_rule):
        elements = sorted({e for cell in rows["element"] for e in str(cell).split(",") if e})
        yield rule, plans_by_key[plan_key], elements, rows["message"].iloc[0]


def picture_name(rule: str, plan_key: str) -> str:
    """The audit page's picture of a failing plan, relative to the report's folder."""
    return f"audit/{rule}--{plan_key}.png"


def write_audit_report(table: pd.DataFrame, per_rule: pd.DataFrame, plans: Iterable[Plan], out: Path) -> Path:
    """``audit.html`` with the per-rule table and pictures of failing plans under ``audit/``."""
    from homeloop.pipeline.previews.plan import render_plan

    plans_by_key = {p.key: p for p in plans}
    figures = []
    for rule, plan, elements, message in failing_examples(table, plans_by_key):
        known = [e for e in elements if _plan_has_element(plan, e)]
        name = picture_name(rule, plan.key)
        render_plan(plan, out / name, highlight=known, title=f"{rule}: {plan.key}")
        figures.append((rule, plan.key, name, message))

    rows = "\n".join(
        f"<tr><td>{html.escape(r.rule)}</td><td>{r.checked:,}</td><td>{r.passed:,}</td>"
        f"<td>{r.failed:,}</td><td>{html.escape(r.example or '')}</td></tr>"
        for r in per_rule.itertuples(index=False)
    )
    gallery = "\n".join(
        f'<figure><img src="{html.escape(src)}" width="420"><figcaption><b>{html.escape(rule)}</b> '
        f"{html.escape(key)}<br>{html.escape(message)}</figcaption></figure>"
        for rule, key, src, message in figures
    )
    page = f"""<!doctype html>
<html><head><meta charset="utf-8"><title>HomeLoop audit</title>
<style>body{{font-family:sans-serif;margin:2em}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left}}figure{{display:inline-block;margin:8px;width:420px;vertical-align:top}}</style>
</head><body>
<h1>Audit</h1>
<p>{table['plan'].nunique():,} plans checked; failing elements are drawn in red.</p>
<table><tr><th>rule</th><th>checked</th><th>passed</th><th>failed</th><th>example</th></tr>
{rows}
</table>
<h2>Failing plans</h2>
{gallery}
</body></html>
"""
    return write_text(out / "audit.html", page)


def _plan_has_element(plan: Plan, element: str) -> bool:
    if plan.has_space(element):
        return True
    return any(e.id == element for e in (*plan.separators, *plan.openings, *plan.features))
