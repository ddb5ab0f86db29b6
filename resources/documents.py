"""The raw document store as a Dagster resource."""

from __future__ import annotations

from dagster import ConfigurableIOManager, ConfigurableResource, FilesystemIOManager
from pydantic import Field

from orchestration.records.documents import DocumentStore
from orchestration.records.object_store import S3ObjectStore, open_object_store
from orchestration.settings import Settings


class DocumentStoreResource(ConfigurableResource):
    """Where raw documents too large for their database row are kept (HREG_DOCUMENT_STORE)."""

    location: str = Field(description="file://DIRECTORY or s3://BUCKET/PREFIX of the store.")
    inline_limit_bytes: int = Field(
        description="Documents up to this size stay in their database row (HREG_DOCUMENT_INLINE_LIMIT_BYTES)."
    )

    def get_store(self) -> DocumentStore:
        return DocumentStore(self.location, inline_limit_bytes=self.inline_limit_bytes)

    @classmethod
    def from_settings(cls, settings: Settings) -> DocumentStoreResource:
        return cls(location=settings.document_store_location, inline_limit_bytes=settings.document_inline_limit_bytes)


def ownership_graph_io_manager(settings: Settings) -> ConfigurableIOManager | FilesystemIOManager:
    """Where ownership_graph's DataFrame goes: beside the documents when they are on S3, so that any
    host reads it; otherwise Dagster's filesystem I/O manager under its home, as by default."""
    objects = open_object_store(settings.document_store_location)
    if isinstance(objects, S3ObjectStore):
        # dagster-aws only where the store is S3: its import takes most of a second of every run's start.
        from dagster_aws.s3 import S3PickleIOManager, S3Resource

        # S3Resource leaves the endpoint and credentials to boto3's AWS_* configuration, as the store does.
        return S3PickleIOManager(
            s3_resource=S3Resource(), s3_bucket=objects.bucket, s3_prefix=f"{objects.prefix}dagster"
        )
    return FilesystemIOManager()
