"""Failure classes of jobs (seeds/002) and the one exception type that carries them.

The classes and which of them are permanent are the table ``processing.failure_classes``; this
enum names the classes a worker may report (the table's key refuses any other). Transient classes
are retried with backoff by the database (handle_job_failure_and_retries) until max_retries;
permanent classes fail the job at once and wait for a new parser version or a manual job.
``queue.permanent_failure_classes`` reads which are which.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class FailureClass(StrEnum):
    TIMEOUT = "timeout"
    LEASE_EXPIRED = "lease_expired"
    DEPENDENCY_UNAVAILABLE = "dependency_unavailable"
    INVALID_FILE = "invalid_file"
    UNSUPPORTED_VERSION = "unsupported_version"
    PARSER_ERROR = "parser_error"


class JobError(Exception):
    """An error a job reports: a failure class, a message a person can act on, and where it arose.

    ``source`` names the component (``register``, ``xjustiz``, ``shareholders``…); ``code`` is a
    detail such as an HTTP status or the XML path where parsing failed.
    """

    def __init__(
        self,
        failure_class: FailureClass | str,
        message: str,
        *,
        source: str | None = None,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.failure_class = FailureClass(failure_class)
        self.message = message
        self.source = source
        self.code = code

    def to_error(self) -> dict[str, Any]:
        """The structured error stored in processing_jobs.result['error']."""
        return {
            "type": self.failure_class.value,
            "message": self.message,
            "source": self.source,
            "code": self.code,
        }

    def __str__(self) -> str:
        return f"{self.failure_class.value}: {self.message}"
