"""The commercial register (sample register or live portal) as a Dagster resource."""

from __future__ import annotations

from typing import Literal

from dagster import ConfigurableResource
from pydantic import Field

from orchestration.register import RegisterClient, make_register_client
from orchestration.register.ratelimit import Priority
from orchestration.settings import Settings, get_settings
from resources.database import DatabaseResource


class RegisterResource(ConfigurableResource):
    """Hands out register clients; every client shares the rate limit kept in PostgreSQL.

    Empty fields fall back to the settings (HREG_REGISTER, HREG_REGISTER_URL,
    HREG_RATE_LIMIT_PER_HOUR).
    """

    database: DatabaseResource = Field(description="Where the shared retrieval budget is kept.")
    register_kind: Literal["", "sample", "live"] = Field("", description="sample or live; empty: HREG_REGISTER.")
    url: str = Field("", description="Base URL of the register; empty: HREG_REGISTER_URL or the kind's default.")
    rate_limit_per_hour: int = Field(0, description="Retrievals per hour across all processes; 0: the settings.")
    timeout_s: float = Field(30.0, description="Seconds to wait for the register to answer a request.")

    def settings(self) -> Settings:
        overrides = {
            "register_kind": self.register_kind,
            "register_url": self.url,
            "rate_limit_per_hour": self.rate_limit_per_hour,
        }
        return get_settings().model_copy(update={k: v for k, v in overrides.items() if v})

    @property
    def kind(self) -> str:
        return self.settings().register_kind

    def get_client(self, priority: Priority = "interactive") -> RegisterClient:
        """A new client with its own portal session, whose retrievals wait as ``priority``; close it
        (or use it in ``with``) when done."""
        return make_register_client(
            self.settings(), self.database.get_engine(), timeout_s=self.timeout_s, priority=priority
        )
