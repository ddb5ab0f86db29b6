"""Where the monitoring rules' webhooks may be delivered, as a Dagster resource."""

from __future__ import annotations

from dagster import ConfigurableResource
from pydantic import Field

from orchestration.automation.webhooks import Network
from orchestration.settings import Settings, parse_networks


class WebhookResource(ConfigurableResource):
    """Networks that webhooks may reach besides public addresses."""

    allowed_networks: str = Field(
        description="Comma-separated networks (CIDR), such as 10.0.0.0/8 (HREG_WEBHOOK_ALLOWED_NETWORKS)."
    )

    @property
    def networks(self) -> tuple[Network, ...]:
        return parse_networks(self.allowed_networks)

    @classmethod
    def from_settings(cls, settings: Settings) -> WebhookResource:
        return cls(allowed_networks=settings.webhook_allowed_networks)
