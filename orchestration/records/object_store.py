"""Where document bytes live: a local directory (``file://…``) or an S3 bucket (``s3://bucket/prefix``).

Both are addressed by relative keys, so a key written on one host reads on any other that names
the same store. The S3 client is boto3's, configured as boto3 always is (``AWS_ENDPOINT_URL`` for an
S3-compatible server, ``AWS_ACCESS_KEY_ID``/``AWS_SECRET_ACCESS_KEY``, ``AWS_DEFAULT_REGION``).
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Protocol
from urllib.parse import unquote, urlsplit


class ObjectStore(Protocol):
    @property
    def location(self) -> str: ...

    def put(self, key: str, content: bytes) -> None: ...

    def get(self, key: str) -> bytes: ...

    def exists(self, key: str) -> bool: ...


class MissingObject(LookupError):
    """A key the store does not hold."""


@dataclass(frozen=True)
class LocalObjectStore:
    directory: Path

    @property
    def location(self) -> str:
        return self.directory.as_uri()

    def _path(self, key: str) -> Path:
        return self.directory / key

    def put(self, key: str, content: bytes) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        # Write-then-rename: a reader never sees half a file.
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False) as tmp:
            tmp.write(content)
        os.replace(tmp.name, path)

    def get(self, key: str) -> bytes:
        try:
            return self._path(key).read_bytes()
        except FileNotFoundError as exc:
            raise MissingObject(f"{self.location}: no object {key!r}") from exc

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()


@dataclass(frozen=True)
class S3ObjectStore:
    bucket: str
    prefix: str  # "" or ending in "/"

    @property
    def location(self) -> str:
        return f"s3://{self.bucket}/{self.prefix}"

    @property
    def client(self):
        return _s3_client()

    def put(self, key: str, content: bytes) -> None:
        # An S3 PUT is atomic: a reader sees the whole object or none.
        self.client.put_object(Bucket=self.bucket, Key=self.prefix + key, Body=content)

    def get(self, key: str) -> bytes:
        client = self.client
        try:
            return client.get_object(Bucket=self.bucket, Key=self.prefix + key)["Body"].read()
        except client.exceptions.ClientError as exc:
            if exc.response["Error"]["Code"] in ("NoSuchKey", "404"):
                raise MissingObject(f"{self.location}: no object {key!r}") from exc
            raise

    def exists(self, key: str) -> bool:
        client = self.client
        try:
            client.head_object(Bucket=self.bucket, Key=self.prefix + key)
        except client.exceptions.ClientError as exc:
            if exc.response["Error"]["Code"] in ("NoSuchKey", "404"):
                return False
            raise
        return True


def _s3_client():
    # One client per process and endpoint: boto3 clients are thread-safe, and a forked child builds
    # its own, since a client's connections do not survive a fork.
    return _s3_client_for(os.getpid(), os.environ.get("AWS_ENDPOINT_URL", ""))


@lru_cache(maxsize=4)
def _s3_client_for(_pid: int, _endpoint: str):
    import boto3  # only where a store is on S3: it adds a sixth of a second to every process's start

    return boto3.session.Session().client("s3")


def open_object_store(location: str | Path) -> ObjectStore:
    """The store a location names: a directory, a ``file://`` URL or ``s3://bucket/prefix``."""
    if isinstance(location, Path):
        return LocalObjectStore(location)
    parts = urlsplit(location)
    if parts.scheme == "s3":
        if not parts.netloc:
            raise ValueError(f"{location!r}: an s3:// location names a bucket (s3://bucket/prefix)")
        prefix = parts.path.strip("/")
        return S3ObjectStore(parts.netloc, f"{prefix}/" if prefix else "")
    if parts.scheme == "file":
        return LocalObjectStore(Path(unquote(parts.path)))
    if parts.scheme == "":
        return LocalObjectStore(Path(location))
    raise ValueError(f"{location!r}: a document store is file://DIRECTORY or s3://BUCKET/PREFIX")
