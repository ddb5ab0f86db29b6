"""Retrievals the sample register served, as the portal's terms count them: result pages, entity
look-ups (a search by register number), documents and document-tree views. The start page and
the navigation to the search form carry no register data and are not retrievals.

``RetrievalLog`` wraps the sample register's ASGI app; tests and the budget benchmark read what
it recorded to check what a flow costs, in the same process or, from another one, as JSON at
``GET /_sample/retrievals`` (``[[monotonic seconds, kind], …]``)."""

from __future__ import annotations

import json
import time
from urllib.parse import parse_qs

from sample_register.html import RESULTS_TABLE


def retrieval_kind(body: bytes) -> str | None:
    """What a POST to the portal retrieves: result_page, entity_lookup, document; None for navigation."""
    form = parse_qs(body.decode(), keep_blank_values=True)
    if any(key.endswith(":erweiterteSucheLink") for key in form):
        return None
    if form.get("javax.faces.source") == [RESULTS_TABLE]:
        return "result_page"
    if "form:btnSuche" in form:
        return "entity_lookup" if form.get("form:registerNummer", [""])[0] else "result_page"
    return "document"


class RetrievalLog:
    """ASGI middleware recording ``(monotonic time, kind)`` for each retrieval served."""

    def __init__(self, app) -> None:
        self.app = app
        self.state = app.state
        self.retrievals: list[tuple[float, str]] = []

    def kinds(self, since: int = 0) -> dict[str, int]:
        counts: dict[str, int] = {}
        for _, kind in self.retrievals[since:]:
            counts[kind] = counts.get(kind, 0) + 1
        return counts

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] == "http" and scope["method"] == "GET" and scope["path"] == "/_sample/retrievals":
            return await self._send_retrievals(send)
        if scope["type"] != "http" or scope["method"] != "POST" or not scope["path"].startswith("/rp_web/"):
            return await self.app(scope, receive, send)
        messages = []
        while True:
            message = await receive()
            messages.append(message)
            if not message.get("more_body"):
                break
        kind = retrieval_kind(b"".join(m.get("body", b"") for m in messages))
        if kind:
            self.retrievals.append((time.monotonic(), kind))
        replay = iter(messages)

        async def replayed():
            return next(replay, {"type": "http.disconnect"})

        return await self.app(scope, replayed, send)

    async def _send_retrievals(self, send) -> None:
        body = json.dumps(self.retrievals).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": body})
