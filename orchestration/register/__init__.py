"""The commercial register: a client for the portal (live or the sample register) and its models."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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
    "register_client_for",
]


def make_register_client(
    engine: Engine,
    base_url: str,
    *,
    rate_limit_per_hour: int,
    burst: int | None = None,
    reserve: int,
    patience_refills: float,
    diagnostics_dir: Path,
    timeout_s: float = 30.0,
    priority: Priority = "interactive",
) -> RegisterClient:
    """A client of the register at ``base_url``, rate-limited by the bucket all processes share;
    its retrievals wait as ``priority`` (a person's work, or background work)."""
    limiter = SharedRateLimiter(
        engine,
        f"register {base_url}",
        rate_limit_per_hour,
        burst=burst,
        reserve=reserve,
        patience_refills=patience_refills,
        priority=priority,
    )
    return PortalClient(base_url, rate_limiter=limiter, diagnostics_dir=diagnostics_dir, timeout_s=timeout_s)


def register_client_for(settings: Settings, engine: Engine, **kwargs: Any) -> RegisterClient:
    """The client of the register the settings name (HREG_REGISTER, HREG_REGISTER_URL, rate limits)."""
    return make_register_client(
        engine,
        settings.register_base_url,
        rate_limit_per_hour=settings.effective_rate_limit_per_hour,
        burst=settings.rate_limit_burst or None,
        reserve=settings.rate_limit_reserve,
        patience_refills=settings.rate_limit_background_patience,
        diagnostics_dir=settings.resolved_data_dir / "diagnostics",
        **kwargs,
    )
