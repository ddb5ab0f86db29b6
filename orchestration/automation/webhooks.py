"""Webhook delivery: an HTTP POST of JSON, signed with HMAC-SHA256.

A receiver checks the signature header against the raw body with the rule's secret
(``verify_signature``) and drops repeated deliveries by ``X-Hreg-Delivery``: delivery is at least
once, since a worker that dies after the POST but before recording it will deliver again.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from typing import Any, Mapping

import httpx

SIGNATURE_HEADER = "X-Hreg-Signature-256"
DELIVERY_HEADER = "X-Hreg-Delivery"
EVENT_HEADER = "X-Hreg-Event"


class WebhookError(Exception):
    """A delivery that did not succeed; ``retryable`` when trying again later may help."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify_signature(secret: str, body: bytes, header: str | None) -> bool:
    return header is not None and hmac.compare_digest(sign(secret, body), header)


def encode(payload: Mapping[str, Any]) -> bytes:
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), default=str).encode()


def post(client: httpx.Client, url: str, secret: str, payload: Mapping[str, Any], *, delivery_id: str,
         event_type: str, timeout_s: float) -> None:
    """POST ``payload``; raises WebhookError unless the receiver answered 2xx."""
    body = encode(payload)
    headers = {
        "Content-Type": "application/json",
        "User-Agent": "hreg-monitoring",
        SIGNATURE_HEADER: sign(secret, body),
        DELIVERY_HEADER: delivery_id,
        EVENT_HEADER: event_type,
    }
    try:
        response = client.post(url, content=body, headers=headers, timeout=timeout_s, follow_redirects=False)
    except httpx.HTTPError as exc:
        raise WebhookError(f"{type(exc).__name__}: {exc}", retryable=True) from exc
    if response.is_success:
        return
    # A client error other than timeout or rate limiting will not change by asking again.
    retryable = response.status_code >= 500 or response.status_code in (408, 429)
    raise WebhookError(f"HTTP {response.status_code} from {url}", retryable=retryable)
