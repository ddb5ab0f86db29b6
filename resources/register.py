"""The commercial register (sample register or live portal) as a Dagster resource."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from dagster import ConfigurableResource
from pydantic import Field

from orchestration.register import RegisterClient, make_register_client
from orchestration.register.ratelimit import Priority
from orchestration.settings import Settings
from resources.database import DatabaseResource


class RegisterResource(ConfigurableResource):
    """Hands out register clients; every client shares the rate limit kept in PostgreSQL."""

    database: DatabaseResource = Field(description="Where the shared retrieval budget is kept.")
    register_kind: Literal["sample", "live"] = Field(description="sample or live (HREG_REGISTER).")
    url: str = Field(description="Base URL of the register (HREG_REGISTER_URL, or the kind's default).")
    rate_limit_per_hour: int = Field(description="Retrievals per hour across all processes.")
    rate_limit_burst: int = Field(0, description="Retrievals allowed at once; 0: a twelfth of the hourly limit.")
    rate_limit_reserve: int = Field(description="Tokens background work leaves to people.")
    rate_limit_background_patience: float = Field(
        description="Refill intervals after which a waiting background retrieval takes a token like a person's."
    )
    diagnostics_dir: str = Field(description="Where pages the client could not read are kept for a look.")
    timeout_s: float = Field(default=30.0, description="Seconds to wait for the register to answer a request.")

    def get_client(self, priority: Priority = "interactive") -> RegisterClient:
        """A new client with its own portal session, whose retrievals wait as ``priority``; close it
        (or use it in ``with``) when done."""
        return make_register_client(
            self.database.get_engine(),
            self.url,
            rate_limit_per_hour=self.rate_limit_per_hour,
            burst=self.rate_limit_burst or None,
            reserve=self.rate_limit_reserve,
            patience_refills=self.rate_limit_background_patience,
            diagnostics_dir=Path(self.diagnostics_dir),
            timeout_s=self.timeout_s,
            priority=priority,
        )

    @classmethod
    def from_settings(cls, settings: Settings, database: DatabaseResource) -> RegisterResource:
        return cls(
            database=database,
            register_kind=settings.register_kind,
            url=settings.register_base_url,
            rate_limit_per_hour=settings.effective_rate_limit_per_hour,
            rate_limit_burst=settings.rate_limit_burst,
            rate_limit_reserve=settings.rate_limit_reserve,
            rate_limit_background_patience=settings.rate_limit_background_patience,
            diagnostics_dir=str(settings.resolved_data_dir / "diagnostics"),
        )
