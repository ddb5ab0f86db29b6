"""Alerts for an operator: a failed run, a growing dead letter, posted to one webhook.

Through the monitoring rules' delivery (``automation.webhooks``): JSON signed with the secret in
``X-Hreg-Signature-256``, the event in ``X-Hreg-Event``, a delivery id in ``X-Hreg-Delivery``, and
only to public addresses or to the networks HREG_WEBHOOK_ALLOWED_NETWORKS allows.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from orchestration.automation import webhooks
from orchestration.automation.webhooks import Network, WebhookError

RUN_FAILED = "run_failed"
DEAD_LETTER_GREW = "dead_letter_grew"
TIMEOUT_S = 10.0
# A receiver briefly away (a restart) is tried again at once, twice, before the alert is given up.
RETRY_DELAYS_S = (1.0, 4.0)


@dataclass(frozen=True)
class AlertWebhook:
    url: str
    secret: str
    allowed_networks: Sequence[Network] = ()

    def post(self, event_type: str, payload: Mapping[str, Any], delivery_id: str) -> None:
        """POST ``payload`` as ``event_type``; raises WebhookError when every attempt failed."""
        body = {"event": event_type, **payload}
        for delay in (*RETRY_DELAYS_S, None):
            try:
                webhooks.post(
                    self.url, self.secret, body, delivery_id=delivery_id, event_type=event_type,
                    timeout_s=TIMEOUT_S, allowed_networks=self.allowed_networks,
                )  # fmt: skip
                return
            except WebhookError as error:
                if not error.retryable or delay is None:
                    raise
            time.sleep(delay)


def dead_letter_growth(
    previous: int, by_type_and_class: Sequence[Mapping[str, Any]]
) -> tuple[int, dict[str, Any] | None]:
    """The dead letter's size, and the alert's payload when it holds more jobs than ``previous``."""
    size = sum(row["jobs"] for row in by_type_and_class)
    if size <= previous:
        return size, None
    return size, {
        "size": size,
        "previous_size": previous,
        "by_type_and_failure_class": [dict(row) for row in by_type_and_class],
        "hint": "`hreg jobs dead-letter` lists the jobs; `hreg jobs retry JOB_ID --reason ...` queues one again",
    }
