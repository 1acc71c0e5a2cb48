"""The API's failures as exceptions: one base class, one small subclass per kind of answer.

Every failure the API answers is ``{"error": {"code", "message", "field"?}}`` with a 4xx or 5xx
status. Decide by ``code`` (stable, machine-readable), never by ``message``.
"""

from __future__ import annotations

from typing import Any


class DurableMemoryError(Exception):
    """A request the API refused or could not serve.

    Attributes:
        code: The API's error code, e.g. ``unknown_thread``, ``invalid_field``, ``missing_token``;
            ``unreachable`` when no answer came at all.
        status: The HTTP status (``None`` when the API could not be reached).
        message: The API's explanation.
        field: The offending input (``messages[3]``, ``budget``, ``id``), when the error names one.
        retry_after: Seconds to wait before retrying, when the API said (503).
    """

    def __init__(
        self,
        code: str,
        message: str,
        status: int | None = None,
        field: str | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}" if status is None else f"HTTP {status} {code}: {message}")
        self.code = code
        self.message = message
        self.status = status
        self.field = field
        self.retry_after = retry_after


class ValidationError(DurableMemoryError):
    """400, 413, 415: the input is invalid (``field`` says where) or too large; nothing was stored."""


class UnauthorizedError(DurableMemoryError):
    """401: the bearer token is missing, unknown or revoked (``missing_token``, ``invalid_token``)."""


class NotFoundError(DurableMemoryError):
    """404: no such thread, user or memory for this tenant (``unknown_thread``, ``unknown_user``, …)."""


class ConflictError(DurableMemoryError):
    """409: conflicts with stored data (``id_conflict``, ``memory_superseded``, ``conflict``: the id is
    taken, or a working memory write on a version that is no longer the latest)."""


class UnavailableError(DurableMemoryError):
    """503, or no answer: PostgreSQL, Temporal or the API is unreachable or slow; retry later."""


class ServerError(DurableMemoryError):
    """500 (``internal``) or another unexpected status; details are in the server's log."""


_BY_STATUS: dict[int, type[DurableMemoryError]] = {
    400: ValidationError,
    401: UnauthorizedError,
    404: NotFoundError,
    409: ConflictError,
    413: ValidationError,
    415: ValidationError,
    503: UnavailableError,
}


def error_from_answer(status: int, body: Any, retry_after: str | None = None) -> DurableMemoryError:
    """The exception for an error answer: its class by status, its code, message and field from the body."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        error = {"code": "unexpected_answer", "message": f"an error answer without an error body: {body!r:.200}"}
    cls = _BY_STATUS.get(status, ServerError)
    wait: float | None = None
    if retry_after is not None:
        try:
            wait = float(retry_after)
        except ValueError:
            wait = None
    return cls(
        code=str(error.get("code", "unknown")),
        message=str(error.get("message", "")),
        status=status,
        field=error.get("field"),
        retry_after=wait,
    )
