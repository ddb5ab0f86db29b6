"""Turning what goes wrong with the register into JobErrors of the right failure class."""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime
from pathlib import Path

import httpx

from orchestration.runtime.failures import FailureClass, JobError

log = logging.getLogger(__name__)

SOURCE = "register"


class PageStructureError(Exception):
    """A page lacks what the portal flow expects; becomes a parser_error once the page is saved."""


def network_error(exc: httpx.HTTPError, what: str) -> JobError:
    if isinstance(exc, httpx.TimeoutException):
        return JobError(
            FailureClass.TIMEOUT,
            f"{what}: the register did not answer in time ({exc!r})",
            source=SOURCE,
            code="timeout",
        )
    return JobError(
        FailureClass.DEPENDENCY_UNAVAILABLE,
        f"{what}: cannot reach the register ({exc!r})",
        source=SOURCE,
        code="network",
    )


def status_error(response: httpx.Response, what: str) -> JobError:
    status = response.status_code
    detail = "too many requests" if status == 429 else response.reason_phrase
    return JobError(
        FailureClass.DEPENDENCY_UNAVAILABLE,
        f"{what}: the register answered HTTP {status} ({detail})",
        source=SOURCE,
        code=str(status),
    )


def rate_limited_error(what: str) -> JobError:
    return JobError(
        FailureClass.DEPENDENCY_UNAVAILABLE,
        f"{what}: the register refused with its rate-limit page",
        source=SOURCE,
        code="rate_limit_page",
    )


def truncated_error(what: str, detail: str) -> JobError:
    # A cut-off download is the register's or the network's fault; fetching again usually helps.
    return JobError(
        FailureClass.DEPENDENCY_UNAVAILABLE,
        f"{what}: the document arrived incomplete ({detail})",
        source=SOURCE,
        code="truncated",
    )


# Messages that say the portal cannot serve right now, rather than that the request is wrong.
_TRANSIENT_MESSAGE = re.compile(
    r"später erneut|vorübergehend|nicht verfügbar|try again later|temporarily|not available at the moment",
    re.IGNORECASE,
)


def portal_message_error(what: str, messages: list[str]) -> JobError:
    """The portal refused the request with messages on its page (PrimeFaces p:messages).

    A form error (a missing criterion, an invalid date, a format the document lacks) stays the
    same however often it is sent: permanent. Messages that the service is unavailable are not."""
    text = "; ".join(messages)
    if _TRANSIENT_MESSAGE.search(text):
        return JobError(
            FailureClass.DEPENDENCY_UNAVAILABLE,
            f"{what}: the register says: {text}",
            source=SOURCE,
            code="portal_message",
        )
    return JobError(
        FailureClass.INVALID_FILE,
        f"{what}: the register refused the request: {text}",
        source=SOURCE,
        code="portal_message",
    )


def save_diagnostic_page(diagnostics_dir: Path, content: bytes, label: str) -> Path:
    """Keep a page that broke the parser, so that someone can see what the portal sent."""
    diagnostics_dir.mkdir(parents=True, exist_ok=True)
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%fZ")
    slug = re.sub(r"[^A-Za-z0-9]+", "-", label).strip("-")[:60] or "page"
    path = diagnostics_dir / f"register-{stamp}-{slug}.html"
    path.write_bytes(content)
    return path


def parser_error(diagnostics_dir: Path, content: bytes, what: str, exc: PageStructureError) -> JobError:
    path = save_diagnostic_page(diagnostics_dir, content, what)
    log.warning("unexpected register page during %s: %s; saved to %s", what, exc, path)
    return JobError(
        FailureClass.PARSER_ERROR,
        f"{what}: unexpected page structure ({exc}); page saved to {path}",
        source=SOURCE,
        code="page_structure",
    )
