"""The client's return shapes against openapi.json, without a server: every /v1 operation has a method,
and each method follows the rule of client.py's docstring. A page (an answer with ``next``) comes back
as it is; an answer that is one complete list comes back as that list; any other answer is the API's
object, typed by the TypedDict of the same name (types.py, generated from openapi.json)."""

from __future__ import annotations

import inspect
import json
import re
import typing
from pathlib import Path
from typing import Any

import pytest

from durable_memory import client
from durable_memory.client import _Call, _Operations

OPENAPI = json.loads((Path(__file__).resolve().parents[2] / "openapi.json").read_text(encoding="utf-8"))
SCHEMAS: dict[str, Any] = OPENAPI["components"]["schemas"]

#: Placeholder arguments by parameter name (an operation only builds its request; nothing is sent).
ARGUMENTS: dict[str, Any] = {"messages": [{}], "data": {}}


def _operations() -> list[tuple[str, Any]]:
    return [(name, op) for name, op in vars(_Operations).items() if isinstance(op, staticmethod)]


def _call(operation: Any) -> _Call[Any]:
    fn = operation.__func__
    args = [
        ARGUMENTS.get(p.name, "x")
        for p in inspect.signature(fn).parameters.values()
        if p.default is inspect.Parameter.empty and p.kind is not inspect.Parameter.KEYWORD_ONLY
    ]
    return fn(*args)


def _template(method: str, path: str) -> str:
    """The openapi.json path a request goes to; literal segments win over parameters."""
    found = [
        t
        for t, ops in OPENAPI["paths"].items()
        if method.lower() in ops and re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", t), path)
    ]
    assert found, f"{method} {path} is not in openapi.json"
    return max(found, key=lambda t: len(re.sub(r"\{[^}]+\}", "", t)))


def _answer(method: str, template: str) -> dict[str, Any] | None:
    """The documented 2xx JSON answer, its shared record resolved; None for an empty answer."""
    for status, response in OPENAPI["paths"][template][method.lower()]["responses"].items():
        if status.startswith("2"):
            schema = response.get("content", {}).get("application/json", {}).get("schema")
            if schema and "$ref" in schema:
                name = schema["$ref"].rsplit("/", 1)[-1]
                return {**SCHEMAS[name], "title": name}
            return schema
    raise AssertionError(f"{method} {template} documents no 2xx answer")


def _returns(operation: Any) -> Any:
    hints = typing.get_type_hints(operation.__func__, vars(client))
    return typing.get_args(hints["return"])[0]


#: Operations whose request takes another form with a keyword argument: ``context(previous=…)`` is a POST.
FORMS: dict[str, dict[str, Any]] = {"context": {"previous": {}}}


def test_every_api_operation_has_a_method() -> None:
    calls = [_call(op) for _, op in _operations()]
    calls += [getattr(_Operations, name)("x", **kwargs) for name, kwargs in FORMS.items()]
    made = {(c.method.lower(), _template(c.method, c.path)) for c in calls}
    documented = {
        (method, template)
        for template, ops in OPENAPI["paths"].items()
        if template.startswith("/v1/")
        for method in ops
    }
    assert documented - made == set()


@pytest.mark.parametrize(("name", "operation"), _operations(), ids=[name for name, _ in _operations()])
def test_return_shape_follows_the_rule(name: str, operation: Any) -> None:
    call = _call(operation)
    answer = _answer(call.method, _template(call.method, call.path))
    returns = _returns(operation)
    if answer is None:
        assert returns is type(None), f"{name}: an empty answer returns None"
        return
    fields = answer.get("properties", {})
    if name in ONE_PAGE:
        fields = {k: v for k, v in fields.items() if k != "next"}
    if "next" in fields:
        assert returns.__name__ == answer["title"], f"{name}: a page comes back as it is"
        assert call.result is client._as_is
    elif len(fields) == 1 and next(iter(fields.values())).get("type") == "array":
        (key, array) = next(iter(fields.items()))
        assert typing.get_origin(returns) is list, f"{name}: a complete list comes back as a list"
        assert call.result({key: ["item"]}) == ["item"]
        item = typing.get_args(returns)[0]
        documented = array["items"]
        if "$ref" in documented:
            documented = SCHEMAS[documented["$ref"].rsplit("/", 1)[-1]]
        assert set(item.__annotations__) <= set(documented["properties"]), f"{name}: fields the API never sends"
        assert item.__required_keys__ <= set(documented.get("required", [])), f"{name}: optional fields required"
    else:
        assert returns.__name__ == answer["title"], f"{name}: the API's object, its TypedDict by name"
        assert call.result is client._as_is


#: Operations whose answer never has ``next``, though their route's answer may: a memory search ranks
#: the best in one answer (the API refuses ``after`` with ``query``); the list of that route pages.
ONE_PAGE = {"search_memories"}


#: Request fields an operation takes in another form: the new thread's ``id`` is ``new_id``; one
#: ``message`` is ``messages`` given as a dict; ``query`` is ``search_memories`` (which keeps to the live
#: ones and does not page, as the API requires with a query); an import's fields are the ``data`` of an
#: export.
OTHER_FORMS: dict[str, set[str]] = {
    "fork_thread": {"id"},
    "append": {"message"},
    "list_memories": {"query"},
    "search_memories": {"includeSuperseded", "after"},
    "import_thread": {
        "version",
        "thread",
        "messages",
        "compactions",
        "summaries",
        "memories",
        "workingMemory",
    },
}


def _camel(name: str) -> str:
    first, *rest = name.split("_")
    return first + "".join(part.title() for part in rest)


@pytest.mark.parametrize(("name", "operation"), _operations(), ids=[name for name, _ in _operations()])
def test_every_request_field_has_an_argument(name: str, operation: Any) -> None:
    # configure_thread once had no recall_share: the API's recallShare could not be set from Python.
    call = _call(operation)
    spec = OPENAPI["paths"][_template(call.method, call.path)][call.method.lower()]
    fields = {p["name"] for p in spec.get("parameters", []) if p["in"] == "query"}
    body = spec.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body and "$ref" in body:
        body = SCHEMAS[body["$ref"].rsplit("/", 1)[-1]]
    fields |= set((body or {}).get("properties", {}))
    arguments = {_camel(p) for p in inspect.signature(operation.__func__).parameters}
    assert fields - arguments - OTHER_FORMS.get(name, set()) == set()
