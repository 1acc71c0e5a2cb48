#!/usr/bin/env bash
# npm run compose:smoke — the docker-compose.yml stack end to end, where Docker runs: build the app
# image, start everything (`up --wait` waits for every healthcheck and one-shot job), append a message
# to a thread through the HTTP API, read the thread's context back, print both, and remove the stack
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

# The API serves addresses other than loopback (as in a container) only once a token exists, so
# create one first, with the app's own command, against the stack's PostgreSQL.
compose up -d --build --wait postgres
TOKEN=$(compose run --rm --no-deps app npm run --silent token -- create --tenant smoke 2>/dev/null | tail -n 1 || true)
if [ -z "$TOKEN" ]; then
  echo "compose:smoke: could not create an API token (npm run token); calling the API without one" >&2
fi

compose up -d --build --wait
AUTH=() # expanded as ${AUTH[@]+...}: bash before 4.4 treats an empty array as unset under set -u
if [ -n "$TOKEN" ]; then AUTH=(-H "Authorization: Bearer $TOKEN"); fi

echo "== POST $API/v1/threads/$THREAD/messages"
curl -fsS --max-time 30 ${AUTH[@]+"${AUTH[@]}"} -H 'Content-Type: application/json' \
  -d '{ "messages": [{ "role": "user", "content": "hello" }] }' \
  "$API/v1/threads/$THREAD/messages"
echo
echo "== GET $API/v1/threads/$THREAD/context"
CONTEXT=$(curl -fsS --max-time 30 ${AUTH[@]+"${AUTH[@]}"} "$API/v1/threads/$THREAD/context")
echo "$CONTEXT"
grep -q hello <<<"$CONTEXT" || fail "the thread's context does not contain the message just appended"
echo "compose:smoke: ok"
