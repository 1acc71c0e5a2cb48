"""What the tests need from the stack the TypeScript side started (test/integration/python.test.ts):
the API's URL, two tenants' tokens, and the local OpenAI-compatible test server for the agent.

    DURABLE_MEMORY_API_URL   the API          DM_TEST_TOKEN_A, DM_TEST_TOKEN_B   tenants acme, beta
    DM_TEST_LLM_URL          the agent's model server (…/v1), scripted over its /__test/ paths
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import pytest

from durable_memory import AsyncClient, Client


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run these tests through test/integration/python.test.ts")
    return value


@pytest.fixture(scope="session")
def api_url() -> str:
    return _env("DURABLE_MEMORY_API_URL")


@pytest.fixture(scope="session")
def token_a() -> str:
    return _env("DM_TEST_TOKEN_A")


@pytest.fixture(scope="session")
def token_b() -> str:
    return _env("DM_TEST_TOKEN_B")


@pytest.fixture
def client(api_url: str, token_a: str) -> Iterator[Client]:
    with Client(api_url, token_a) as c:
        yield c


@pytest.fixture
def other_tenant(api_url: str, token_b: str) -> Iterator[Client]:
    with Client(api_url, token_b) as c:
        yield c


@pytest.fixture
async def aclient(api_url: str, token_a: str) -> AsyncIterator[AsyncClient]:
    async with AsyncClient(api_url, token_a) as c:
        yield c


@pytest.fixture
def thread_id(request: pytest.FixtureRequest) -> str:
    """A fresh thread id per test (so a rerun against the same stack starts clean)."""
    name = re.sub(r"[^A-Za-z0-9._-]", "-", request.node.name)[:40]
    return f"py-{name}-{uuid.uuid4().hex[:8]}"


class Llm:
    """The local OpenAI-compatible test server: scripted steps, recorded requests."""

    def __init__(self, base_url: str) -> None:
        self.base_url = base_url
        self._control = base_url.removesuffix("/v1") + "/__test/"

    def script(self, *steps: dict[str, Any]) -> None:
        httpx.post(self._control + "script", json={"steps": list(steps)}).raise_for_status()

    def reset(self) -> None:
        httpx.post(self._control + "reset").raise_for_status()

    def forget_responses(self) -> None:
        """The server forgets every stored response: chaining to one is answered 404."""
        httpx.post(self._control + "forget-responses").raise_for_status()

    def requests(self) -> list[dict[str, Any]]:
        return httpx.get(self._control + "requests").json()["requests"]

    def inputs(self) -> list[list[dict[str, Any]]]:
        """The `input` of each Responses request, in order."""
        return [r["body"]["input"] for r in self.requests() if r["path"].endswith("/responses")]


@pytest.fixture
def llm() -> Iterator[Llm]:
    server = Llm(_env("DM_TEST_LLM_URL"))
    server.reset()
    yield server
    server.reset()
