#!/usr/bin/env bash
# npm run compose:smoke — the docker-compose.yml stack end to end, where Docker runs: build the app
# image, start everything with a bootstrap API token (`up --wait` waits for every healthcheck and
# one-shot job), check that the published API refuses a request without the token, append a message
# to a thread through the HTTP API with it, read the thread's context back, print both, and remove the stack
# with its volumes. Not part of `npm test` (no Docker engine on our machines); without an engine it
# exits at once with a message saying so.
#
# It runs as its own Compose project (durable-memory-smoke), so `down -v` at the end can never delete
# the data of a durable-memory stack you run yourself; that stack must be stopped, though, because
# both publish the same host ports.
set -euo pipefail
cd "$(dirname "$0")/.."

PROJECT=durable-memory-smoke
API=http://127.0.0.1:8080
THREAD=smoke

fail() {
  echo "compose:smoke: $*" >&2
  exit 1
}

# `timeout` keeps an unreachable DOCKER_HOST from hanging here for minutes.
if ! timeout 15 docker info >/dev/null 2>&1; then
  fail "no Docker engine: docker info failed (start Docker or set DOCKER_HOST; nothing was started)"
fi
docker compose version >/dev/null 2>&1 || fail "the docker compose plugin is missing (docker compose version failed)"
command -v curl >/dev/null || fail "curl is needed to call the API"

compose() { docker compose -p "$PROJECT" "$@"; }
cleanup() {
  local status=$?
  if [ "$status" -ne 0 ]; then
    echo "compose:smoke: failed; the app's last log lines:" >&2
    compose logs --no-color --tail 80 app >&2 || true
  fi
  compose down -v --remove-orphans >/dev/null 2>&1 || true
  exit "$status"
}
trap cleanup EXIT

# In its container the API binds 0.0.0.0, which it does only with a token: give the app a bootstrap
# token (DURABLE_MEMORY_API_TOKEN, stored hashed at start; yours if set, else a fresh one), as a team
# deploying the stack would.
if [ -z "${DURABLE_MEMORY_API_TOKEN:-}" ]; then
  command -v node >/dev/null || fail "node is needed to make a token (or set DURABLE_MEMORY_API_TOKEN)"
  DURABLE_MEMORY_API_TOKEN=dm_$(node -e "process.stdout.write(require('crypto').randomBytes(32).toString('base64url'))")
fi
export DURABLE_MEMORY_API_TOKEN
export DURABLE_MEMORY_API_TENANT=smoke
AUTH=(-H "Authorization: Bearer $DURABLE_MEMORY_API_TOKEN")

compose up -d --build --wait

echo "== GET $API/v1/threads without a token: 401"
STATUS=$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 "$API/v1/threads")
[ "$STATUS" = 401 ] || fail "expected 401 without a token, got $STATUS"

echo "== POST $API/v1/threads/$THREAD/messages"
curl -fsS --max-time 30 "${AUTH[@]}" -H 'Content-Type: application/json' \
  -d '{ "messages": [{ "role": "user", "content": "hello" }] }' \
  "$API/v1/threads/$THREAD/messages"
echo
echo "== GET $API/v1/threads/$THREAD/context"
CONTEXT=$(curl -fsS --max-time 30 "${AUTH[@]}" "$API/v1/threads/$THREAD/context")
echo "$CONTEXT"
grep -q hello <<<"$CONTEXT" || fail "the thread's context does not contain the message just appended"
echo "compose:smoke: ok"
