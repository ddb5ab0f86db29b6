"""The commercial register (sample register or live portal) as a Dagster resource."""

from __future__ import annotations

from typing import Literal

from dagster import ConfigurableResource
from pydantic import Field

from orchestration.register import RegisterClient, RegisterOptions, make_register_client, register_options
from orchestration.register.ratelimit import Priority
from orchestration.settings import Settings
from resources.database import DatabaseResource


class RegisterResource(ConfigurableResource):
    """Hands out register clients; every client shares the rate limit kept in PostgreSQL."""

    database: DatabaseResource = Field(description="Where the shared retrieval budget is kept.")
    register_kind: Literal["sample", "live"] = Field(description="sample or live (HREG_REGISTER).")
    base_url: str = Field(description="Base URL of the register (HREG_REGISTER_URL, or the kind's default).")
    rate_limit_per_hour: int = Field(description="Retrievals per hour across all processes.")
    burst: int = Field(description="Retrievals allowed at once; 0: a twelfth of the hourly limit.")
    reserve: int = Field(description="Tokens background work leaves to people.")
    patience_refills: float = Field(
        description="Refill intervals after which a waiting background retrieval takes a token like a person's."
    )
    diagnostics_dir: str = Field(description="Where pages the client could not read are kept for a look.")

    def get_client(self, priority: Priority = "interactive") -> RegisterClient:
        """A new client with its own portal session, whose retrievals wait as ``priority``; close it
        (or use it in ``with``) when done."""
        options = RegisterOptions(
            base_url=self.base_url,
            rate_limit_per_hour=self.rate_limit_per_hour,
            burst=self.burst,
            reserve=self.reserve,
            patience_refills=self.patience_refills,
            diagnostics_dir=self.diagnostics_dir,
        )
        return make_register_client(self.database.get_engine(), **options, priority=priority)

    @classmethod
    def from_settings(cls, settings: Settings, database: DatabaseResource) -> RegisterResource:
        return cls(database=database, register_kind=settings.register_kind, **register_options(settings))
