"""Helpers of the tests that ask the real dagster-webserver through its GraphQL API: a request,
the code location loaded, a backfill followed to its end."""

from __future__ import annotations

from collections import Counter

import httpx

from orchestration.stacks import devstack
from process_helpers import wait_until

LOCATION = "handelsregister"
BACKFILL_DONE = ("COMPLETED_SUCCESS", "COMPLETED_FAILED", "FAILED", "CANCELED")
# A backfill must be done well inside the 600 s every test has (pytest-timeout, pyproject.toml),
# which for the first test of a module also pays for starting the stack: a slower one fails saying
# how far it got, instead of being cut off by the timeout.
BACKFILL_WAIT_S = 300

LOCATION_STATUS = """
query { workspaceOrError { ... on Workspace { locationEntries { name loadStatus
  locationOrLoadError { __typename ... on PythonError { message } } } } } }
"""
BACKFILL = """
query Backfill($backfillId: String!) {
  partitionBackfillOrError(backfillId: $backfillId) {
    ... on PartitionBackfill {
      status
      numPartitions
      runs { runId status tags { key value } }
      assetBackfillData { assetBackfillStatuses { ... on AssetPartitionsStatusCounts {
        assetKey { path } numPartitionsTargeted numPartitionsInProgress numPartitionsMaterialized numPartitionsFailed
      } } }
    }
  }
}
"""


def graphql(stack: devstack.Stack, query: str, **variables) -> dict:
    response = httpx.post(f"{stack.webserver_url}/graphql", json={"query": query, "variables": variables}, timeout=60)
    assert response.status_code == 200, response.text
    body = response.json()
    assert "errors" not in body, body["errors"]
    return body["data"]


def wait_for_code_location(stack: devstack.Stack) -> None:
    """The webserver answers before it has loaded the code location."""

    def loaded():
        entries = graphql(stack, LOCATION_STATUS)["workspaceOrError"]["locationEntries"]
        entry = next(e for e in entries if e["name"] == LOCATION)
        assert entry["locationOrLoadError"] is None or entry["locationOrLoadError"]["__typename"] != "PythonError", (
            entry
        )
        return entry["loadStatus"] == "LOADED" and entry["locationOrLoadError"] is not None

    wait_until(loaded, 120, f"code location {LOCATION} to load")


def backfill_state(stack: devstack.Stack, backfill_id: str) -> dict:
    """The backfill as its page shows it: status, runs with their status and tags, partition counts."""
    return graphql(stack, BACKFILL, backfillId=backfill_id)["partitionBackfillOrError"]


def finished_backfill(stack: devstack.Stack, backfill_id: str, timeout_s: float = BACKFILL_WAIT_S) -> dict:
    """The backfill once it is done; a backfill not done in ``timeout_s`` fails the test with
    how far it got."""
    seen = {}

    def finished():
        seen.update(backfill_state(stack, backfill_id))
        return dict(seen) if seen["status"] in BACKFILL_DONE else None

    try:
        return wait_until(finished, timeout_s, f"backfill {backfill_id} to finish")
    except AssertionError:
        runs = Counter(run["status"] for run in seen.get("runs", []))
        partitions = seen.get("assetBackfillData", {}).get("assetBackfillStatuses")
        raise AssertionError(
            f"backfill {backfill_id} not done after {timeout_s:.0f} s: {seen.get('status')}, "
            f"runs by status {dict(runs)}, partitions {partitions}"
        ) from None
