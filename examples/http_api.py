"""Calling the durable-memory HTTP API from Python with the standard library only (urllib).

Any language that speaks HTTP and JSON can append to a thread and read its context. Start the stack
(`npm start`), then, in the same directory:

    python3 examples/http_api.py

The API's address is DURABLE_MEMORY_API_URL, else the `apiUrl` that `npm start` wrote to
`endpoints.json` under DURABLE_MEMORY_HOME (default `./.durable-memory`); its port is 8080 only when
that was free. Without a token the local API serves loopback requests as the `local` tenant; with
tokens (`npx durable-memory token create --tenant me`), set DURABLE_MEMORY_API_TOKEN.
"""

import json
import os
import urllib.error
import urllib.request



def api_url():
    """DURABLE_MEMORY_API_URL, else the apiUrl of the stack's endpoints.json (as connect() finds it)."""
    if os.environ.get("DURABLE_MEMORY_API_URL", "").strip():
        return os.environ["DURABLE_MEMORY_API_URL"].strip().rstrip("/")
    home = os.environ.get("DURABLE_MEMORY_HOME", "").strip() or ".durable-memory"
    path = os.path.join(os.path.abspath(home), "endpoints.json")
    try:
        with open(path, encoding="utf-8") as file:
            url = json.load(file).get("apiUrl")
    except (OSError, ValueError, AttributeError):
        url = None
    if not url:
        raise SystemExit(
            f"no DURABLE_MEMORY_API_URL and no apiUrl in {path}: start the stack (npm start) in this "
            "directory, or set DURABLE_MEMORY_HOME to its home or DURABLE_MEMORY_API_URL to its API"
        )
    return url.rstrip("/")


API = api_url()
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

# The context for the next model call, within a token budget, as OpenAI messages.
context = call("GET", f"/v1/threads/{THREAD}/context?budget=2000")
print(f"context: {context['tokens']} tokens, OpenAI roles", [m["role"] for m in context["openai"]])

# The full history, page by page.
page = call("GET", f"/v1/threads/{THREAD}/messages?limit=100")
print("history ids:", [m["id"] for m in page["messages"]])
