"""durable-memory for Python: a typed client of the HTTP API, and (``durable_memory.agents``) an
OpenAI Agents SDK session on a durable thread."""

from .client import UNSET, AsyncClient, Client
from .errors import (
    ConflictError,
    DurableMemoryError,
    NotFoundError,
    ServerError,
    UnauthorizedError,
    UnavailableError,
    ValidationError,
)

__all__ = [
    "UNSET",
    "AsyncClient",
    "Client",
    "ConflictError",
    "DurableMemoryError",
    "NotFoundError",
    "ServerError",
    "UnauthorizedError",
    "UnavailableError",
    "ValidationError",
]
