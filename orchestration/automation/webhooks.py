"""Webhook delivery: an HTTP POST of JSON, signed with HMAC-SHA256.

A receiver checks the signature header against the raw body with the rule's secret
(``verify_signature``) and drops repeated deliveries by ``X-Hreg-Delivery``: delivery is at least
once, since a worker that dies after the POST but before recording it will deliver again.

Whoever may create a rule chooses the URL, and the worker posts from inside the deployment, so a
webhook reaches only public addresses unless its network is allowed (HREG_WEBHOOK_ALLOWED_NETWORKS):
not the database, the Dagster webserver, a cloud metadata service or anything else on the inside.
The host is resolved once, checked, and the connection made to that very address, so a name that
resolves differently the second time cannot slip past the check.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import json
import socket
from collections.abc import Mapping, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

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


Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def pinned_destinations(url: str, allowed_networks: Sequence[Network]) -> tuple[list[str], str]:
    """The URL with its host replaced by each address it resolves to, in resolver order, and the
    host name (for TLS). Raises WebhookError when an address is neither public nor allowed."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        resolved = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise WebhookError(f"cannot resolve {host}: {exc}", retryable=True) from exc
    # An IP family's address is a string (typeshed also allows the int of other families).
    addresses = list(
        dict.fromkeys(
            ipaddress.ip_address(info[4][0].split("%")[0]) for info in resolved if isinstance(info[4][0], str)
        )
    )
    for address in addresses:
        if not address.is_global and not any(address in network for network in allowed_networks):
            raise WebhookError(
                f"{host} resolves to {address}, which is not a public address; webhooks reach a private "
                "network only when HREG_WEBHOOK_ALLOWED_NETWORKS names it",
                retryable=False,
            )
    userinfo = parts.netloc.rpartition("@")[0]
    targets = []
    for address in addresses:
        netloc = f"[{address}]" if address.version == 6 else str(address)
        netloc = f"{userinfo}@{netloc}" if userinfo else netloc
        targets.append(urlunsplit(parts._replace(netloc=f"{netloc}:{parts.port}" if parts.port else netloc)))
    return targets, host


def post(
    url: str,
    secret: str,
    payload: Mapping[str, Any],
    *,
    delivery_id: str,
    event_type: str,
    timeout_s: float,
    allowed_networks: Sequence[Network] = (),
) -> None:
    """POST ``payload``; raises WebhookError unless the receiver answered 2xx.

    Each delivery has a client of its own: a pool keys connections by address, and one opened
    (and its certificate checked) for one host name must not carry another's delivery."""
    targets, host = pinned_destinations(url, allowed_networks)
    body = encode(payload)
    headers = {
        "Host": urlsplit(url).netloc.rpartition("@")[2],
        "Content-Type": "application/json",
        "User-Agent": "hreg-monitoring",
        SIGNATURE_HEADER: sign(secret, body),
        DELIVERY_HEADER: delivery_id,
        EVENT_HEADER: event_type,
    }
    with httpx.Client(timeout=timeout_s, follow_redirects=False) as client:
        for position, target in enumerate(targets, start=1):
            try:
                response = client.post(target, content=body, headers=headers, extensions={"sni_hostname": host})
                break
            except httpx.ConnectError as exc:  # as a resolver-order client does: on to the next address
                if position == len(targets):
                    raise WebhookError(f"{type(exc).__name__}: {exc}", retryable=True) from exc
            except httpx.HTTPError as exc:
                raise WebhookError(f"{type(exc).__name__}: {exc}", retryable=True) from exc
    if response.is_success:
        return
    # A client error other than timeout or rate limiting will not change by asking again.
    retryable = response.status_code >= 500 or response.status_code in (408, 429)
    raise WebhookError(f"HTTP {response.status_code} from {url}", retryable=retryable)
