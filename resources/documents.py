"""The raw document store as a Dagster resource."""

from __future__ import annotations

from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from orchestration.documents import DocumentStore
from orchestration.settings import get_settings


class DocumentStoreResource(ConfigurableResource):
    """Where raw documents too large for their database row are kept (default: <HREG_DATA_DIR>/documents)."""

    directory: str = Field("", description="Directory of the store; empty: taken from the settings.")

    def get_store(self) -> DocumentStore:
        return DocumentStore(Path(self.directory) if self.directory else get_settings().documents_dir)
