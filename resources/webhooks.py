"""Where the monitoring rules' webhooks may be delivered, and where the operator's alerts go, as
Dagster resources."""

from __future__ import annotations

import os

import dagster as dg
from dagster import ConfigurableResource
from pydantic import Field

from orchestration.automation.webhooks import Network
from orchestration.health.alerts import AlertWebhook
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


class AlertWebhookResource(ConfigurableResource):
    """Where the operator's alerts (a failed run, a growing dead letter) are posted; no URL, no alerts."""

    url: str = Field("", description="The receiver's URL (HREG_ALERT_WEBHOOK_URL); empty: alerts are off.")
    secret: str = Field("", description="Signs every alert (HREG_ALERT_WEBHOOK_SECRET).")
    webhooks: WebhookResource

    def get_webhook(self) -> AlertWebhook | None:
        return AlertWebhook(self.url, self.secret, self.webhooks.networks) if self.url else None

    @classmethod
    def from_settings(cls, settings: Settings, webhooks: WebhookResource) -> AlertWebhookResource:
        # A secret from the environment stays an EnvVar, so the UI never shows it.
        from_environment = bool(settings.alert_webhook_secret) and settings.alert_webhook_secret == os.environ.get(
            "HREG_ALERT_WEBHOOK_SECRET"
        )
        return cls(
            url=settings.alert_webhook_url,
            secret=dg.EnvVar("HREG_ALERT_WEBHOOK_SECRET") if from_environment else settings.alert_webhook_secret,
            webhooks=webhooks,
        )
