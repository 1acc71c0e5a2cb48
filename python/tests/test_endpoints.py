"""Where a client finds the API when not told: DURABLE_MEMORY_API_URL, else the apiUrl that a running
`npm start` wrote to endpoints.json under DURABLE_MEMORY_HOME (never an assumed port)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from durable_memory import AsyncClient, Client, UnavailableError


def test_the_url_comes_from_endpoints_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "endpoints.json").write_text(json.dumps({"apiUrl": "http://127.0.0.1:18123/"}))
    monkeypatch.delenv("DURABLE_MEMORY_API_URL", raising=False)
    monkeypatch.setenv("DURABLE_MEMORY_HOME", str(tmp_path))
    with Client() as dm:
        assert str(dm._http.base_url) == "http://127.0.0.1:18123"
    assert str(AsyncClient()._http.base_url) == "http://127.0.0.1:18123"
    # The variable, then the argument, come first.
    monkeypatch.setenv("DURABLE_MEMORY_API_URL", "http://127.0.0.1:18124")
    with Client() as dm:
        assert str(dm._http.base_url) == "http://127.0.0.1:18124"
    with Client("http://127.0.0.1:18125") as dm:
        assert str(dm._http.base_url) == "http://127.0.0.1:18125"


def test_without_any_url_the_error_says_where_it_looked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DURABLE_MEMORY_API_URL", raising=False)
    monkeypatch.setenv("DURABLE_MEMORY_HOME", str(tmp_path))
    with pytest.raises(UnavailableError) as raised:
        Client()
    assert raised.value.code == "unreachable"
    assert str(tmp_path / "endpoints.json") in str(raised.value)
    assert "DURABLE_MEMORY_API_URL" in str(raised.value)
    (tmp_path / "endpoints.json").write_text(json.dumps({"temporalAddress": "x"}))
    with pytest.raises(UnavailableError, match="names no apiUrl"):
        Client()
