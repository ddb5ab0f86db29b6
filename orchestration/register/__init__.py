"""The commercial register: a client for the portal (live or the sample register) and its models."""

from __future__ import annotations

from sqlalchemy.engine import Engine

from orchestration.register.client import RegisterClient
from orchestration.register.portal import PortalClient
from orchestration.register.ratelimit import Priority, SharedRateLimiter
from orchestration.register.results import (
    Announcement,
    AnnouncementDetail,
    DocumentNode,
    Download,
    EarlierName,
    ResultRow,
    SearchMode,
)
from orchestration.settings import Settings

__all__ = [
    "Announcement",
    "AnnouncementDetail",
    "DocumentNode",
    "Download",
    "EarlierName",
    "PortalClient",
    "RegisterClient",
    "ResultRow",
    "SearchMode",
    "SharedRateLimiter",
    "make_register_client",
]


def make_register_client(
    settings: Settings, engine: Engine, *, timeout_s: float = 30.0, priority: Priority = "interactive"
) -> RegisterClient:
    """The client of the configured register, rate-limited by the bucket all processes share;
    its retrievals wait as ``priority`` (a person's work, or background work)."""
    base_url = settings.register_base_url
    limiter = SharedRateLimiter(
        engine,
        f"register {base_url}",
        settings.effective_rate_limit_per_hour,
        reserve=settings.rate_limit_reserve,
        patience_refills=settings.rate_limit_background_patience,
        priority=priority,
    )
    return PortalClient(
        base_url,
        rate_limiter=limiter,
        diagnostics_dir=settings.resolved_data_dir / "diagnostics",
        timeout_s=timeout_s,
    )
