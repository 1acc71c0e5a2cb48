"""Calling the durable-memory HTTP API from Python with the standard library only (urllib).

Any language that speaks HTTP and JSON can append to a thread and read its memory view. Start the
stack (`npm start` prints `api=...` on its ready line), create a token if you want one
(`npx durable-memory token create --tenant me`), then:

    DURABLE_MEMORY_API_URL=http://127.0.0.1:8080 DURABLE_MEMORY_API_TOKEN=... python3 examples/http_api.py

Without a token the local API serves loopback requests as the `local` tenant.
"""

import json
import os
import urllib.error
import urllib.request

API = os.environ.get("DURABLE_MEMORY_API_URL", "http://127.0.0.1:8080").rstrip("/")
TOKEN = os.environ.get("DURABLE_MEMORY_API_TOKEN")
THREAD = os.environ.get("THREAD_ID", "python-demo")


def call(method, path, body=None):
    """One request; returns the parsed JSON answer, or raises with the API's error code and message."""
    headers = {"accept": "application/json"}
    data = None
    if body is not None:
        data = json.dumps(body).encode("utf-8")
        headers["content-type"] = "application/json"
    if TOKEN:
        headers["authorization"] = "Bearer " + TOKEN
    request = urllib.request.Request(API + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        # Errors come as {"error": {"code": ..., "message": ...}}; a proxy in between may send
        # something else, which is shown as it came.
        raw = error.read()
        try:
            detail = json.loads(raw or b"{}").get("error") or {}
        except (ValueError, AttributeError):
            detail = {}
        what = f"{detail.get('code')}: {detail.get('message')}" if detail else raw.decode("utf-8", "replace")[:300]
        raise SystemExit(f"{method} {path}: HTTP {error.code} {what}")


# Append a conversation: our format or OpenAI chat messages, with ids so that a retry is harmless.
appended = call(
    "POST",
    f"/v1/threads/{THREAD}/messages",
    {
        "messages": [
            {"id": "py-1", "role": "user", "content": "Hello from Python! What can you remember?"},
            {
                "id": "py-2",
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "call-1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}
                ],
            },
            {"id": "py-3", "role": "tool", "tool_call_id": "call-1", "content": "nothing yet"},
            {"id": "py-4", "role": "assistant", "content": "Everything you tell me, durably."},
        ]
    },
)
print("appended seqs:", [m["seq"] for m in appended["messages"]])

# A retry of the same message stores nothing twice.
retry = {"id": "py-1", "role": "user", "content": "Hello from Python! What can you remember?"}
again = call("POST", f"/v1/threads/{THREAD}/messages", {"message": retry})
print("retried append is a duplicate:", again["messages"][0]["duplicate"])

# The memory view for the next model call, within a token budget, as OpenAI messages.
context = call("GET", f"/v1/threads/{THREAD}/context?budget=2000")
print(f"context: {context['tokens']} tokens, OpenAI roles", [m["role"] for m in context["openai"]])

# The full history, page by page.
page = call("GET", f"/v1/threads/{THREAD}/messages?limit=100")
print("history ids:", [m["id"] for m in page["messages"]])
