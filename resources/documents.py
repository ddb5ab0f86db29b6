"""The raw document store as a Dagster resource."""

from __future__ import annotations

from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from orchestration.documents import DocumentStore
from orchestration.settings import Settings


class DocumentStoreResource(ConfigurableResource):
    """Where raw documents too large for their database row are kept."""

    directory: str = Field(description="Directory of the store (<HREG_DATA_DIR>/documents).")

    def get_store(self) -> DocumentStore:
        return DocumentStore(Path(self.directory))

    @classmethod
    def from_settings(cls, settings: Settings) -> DocumentStoreResource:
        return cls(directory=str(settings.documents_dir))
