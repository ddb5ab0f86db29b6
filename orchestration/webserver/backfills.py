"""Dagster backfills of court partitions, launched through the webserver's GraphQL API with the
mutation and parameters the UI's "Launch backfill" button sends, so that a backfill started from
the command line or a benchmark is the one a person sees and re-executes on the Backfills page.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import httpx

LAUNCH_PARTITION_BACKFILL = """
mutation LaunchPartitionBackfill($backfillParams: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $backfillParams) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message }
    ... on InvalidSubsetError { message }
    ... on UnauthorizedError { message }
  }
}
"""
BACKFILL_STATUS = """
query Backfill($backfillId: String!) {
  partitionBackfillOrError(backfillId: $backfillId) {
    __typename
    ... on PartitionBackfill { status numPartitions timestamp endTimestamp runs { runId startTime endTime } }
    ... on PythonError { message }
  }
}
"""
# The states in which a backfill has stopped for good.
FINISHED = frozenset({"COMPLETED", "COMPLETED_SUCCESS", "COMPLETED_FAILED", "FAILED", "CANCELED"})


class BackfillError(RuntimeError):
    """The webserver refused the request, or could not be reached."""


@dataclass(frozen=True)
class BackfillStatus:
    status: str
    partitions: int
    runs: int
    started_at: float  # when it was launched
    ended_at: float | None  # when the daemon marked it finished
    first_run_started_at: float | None = None
    last_run_ended_at: float | None = None

    @property
    def finished(self) -> bool:
        return self.status in FINISHED


def webserver_graphql(webserver_url: str, query: str, variables: Mapping | None = None) -> dict:
    """The data of a GraphQL request to the webserver; BackfillError when it refuses or is unreachable."""
    try:
        response = httpx.post(
            f"{webserver_url}/graphql", json={"query": query, "variables": variables or {}}, timeout=60
        )
    except httpx.TransportError as error:
        raise BackfillError(
            f"the Dagster webserver at {webserver_url} is not reachable ({error}); start it "
            "with `hreg dev` or pass its address"
        ) from error
    if response.status_code != 200 or "errors" in response.json():
        raise BackfillError(
            f"the Dagster webserver at {webserver_url} answered {response.status_code}: {response.text}"
        )
    return response.json()["data"]


def launch_backfill(
    webserver_url: str,
    asset_path: Sequence[str],
    partition_names: Sequence[str],
    *,
    title: str | None = None,
    description: str | None = None,
    tags: Mapping[str, str] | None = None,
) -> str:
    """Launch an asset backfill of ``partition_names``; returns the backfill id."""
    params: dict = {
        "tags": [{"key": key, "value": value} for key, value in (tags or {}).items()],
        "assetSelection": [{"path": list(asset_path)}],
        "partitionNames": list(partition_names),
        "fromFailure": False,
    }
    if title:
        params["title"] = title
    if description:
        params["description"] = description
    result = webserver_graphql(webserver_url, LAUNCH_PARTITION_BACKFILL, {"backfillParams": params})[
        "launchPartitionBackfill"
    ]
    if result["__typename"] != "LaunchBackfillSuccess":
        raise BackfillError(f"the backfill was not launched: {result.get('message', result['__typename'])}")
    return result["backfillId"]


def backfill_status(webserver_url: str, backfill_id: str) -> BackfillStatus:
    backfill = webserver_graphql(webserver_url, BACKFILL_STATUS, {"backfillId": backfill_id})[
        "partitionBackfillOrError"
    ]
    if backfill["__typename"] != "PartitionBackfill":
        raise BackfillError(f"backfill {backfill_id}: {backfill.get('message', backfill['__typename'])}")
    starts = [run["startTime"] for run in backfill["runs"] if run["startTime"] is not None]
    ends = [run["endTime"] for run in backfill["runs"] if run["endTime"] is not None]
    return BackfillStatus(
        backfill["status"],
        backfill["numPartitions"],
        len(backfill["runs"]),
        backfill["timestamp"],
        backfill["endTimestamp"],
        min(starts, default=None),
        max(ends, default=None),
    )
