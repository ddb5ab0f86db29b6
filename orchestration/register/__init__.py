"""The commercial register: a client for the portal (live or the sample register) and its models."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

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
    "RegisterOptions",
    "ResultRow",
    "SearchMode",
    "SharedRateLimiter",
    "make_register_client",
    "register_client_for",
    "register_options",
]


class RegisterOptions(TypedDict):
    """Which register a client talks to and the budget it shares: ``make_register_client``'s options."""

    base_url: str
    rate_limit_per_hour: int
    burst: int
    reserve: int
    patience_refills: float
    diagnostics_dir: str


def register_options(settings: Settings) -> RegisterOptions:
    """The register and budget the settings name (HREG_REGISTER, HREG_REGISTER_URL, HREG_RATE_LIMIT_*):
    the one reading of them, for the CLI's clients and for the register resource of Dagster's runs."""
    return RegisterOptions(
        base_url=settings.register_base_url,
        rate_limit_per_hour=settings.effective_rate_limit_per_hour,
        burst=settings.rate_limit_burst,
        reserve=settings.rate_limit_reserve,
        patience_refills=settings.rate_limit_background_patience,
        diagnostics_dir=str(settings.resolved_data_dir / "diagnostics"),
    )


def make_register_client(
    engine: Engine,
    base_url: str,
    *,
    rate_limit_per_hour: int,
    burst: int = 0,
    reserve: int,
    patience_refills: float,
    diagnostics_dir: str | Path,
    timeout_s: float = 30.0,
    priority: Priority = "interactive",
) -> RegisterClient:
    """A client of the register at ``base_url``, rate-limited by the bucket all processes share
    (``burst`` 0: a twelfth of the hourly limit); its retrievals wait as ``priority`` (a person's
    work, or background work)."""
    limiter = SharedRateLimiter(
        engine,
        f"register {base_url}",
        rate_limit_per_hour,
        burst=burst or None,
        reserve=reserve,
        patience_refills=patience_refills,
        priority=priority,
    )
    return PortalClient(base_url, rate_limiter=limiter, diagnostics_dir=Path(diagnostics_dir), timeout_s=timeout_s)


def register_client_for(settings: Settings, engine: Engine, **kwargs: Any) -> RegisterClient:
    """The client of the register the settings name (HREG_REGISTER, HREG_REGISTER_URL, rate limits)."""
    return make_register_client(engine, **register_options(settings), **kwargs)
