"""Serve the flows as deployments named ``default`` (used by ``make serve``).

    prefect deployment run 'build-home-set/default'
    prefect deployment run 'build-home-set/default' --param config='{"plans": 400, "homes": 100}'
    prefect deployment run 'audit-source/default' --param source=path/to/geometries.csv
    prefect deployment run 'evaluate/default' --param agent=scripted --param sample=5
"""

from __future__ import annotations

from prefect import serve

from homeloop.flows.build import audit_source, build_home_set
from homeloop.flows.evaluate import evaluate


def main() -> None:
    serve(
        build_home_set.to_deployment(name="default", tags=["homeloop"]),
        audit_source.to_deployment(name="default", tags=["homeloop"]),
        evaluate.to_deployment(name="default", tags=["homeloop"]),
        print_starting_message=True,
    )


if __name__ == "__main__":
    main()
