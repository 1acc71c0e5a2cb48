# The durable-memory app (worker + HTTP API, what `npm start` runs) for docker-compose.yml and other
# container platforms. It connects to external servers: with TEMPORAL_ADDRESS and DATABASE_URL set,
# `npm start` starts no local Temporal or PostgreSQL (src/local-stack/embedded-stack.ts) and only runs the
# worker (and the API) against them.
#
#   docker build -t durable-memory .
#   docker run -e DATABASE_URL=postgres://… -e TEMPORAL_ADDRESS=temporal:7233 -e DURABLE_MEMORY_API_TOKEN=dm_… -p 127.0.0.1:8080:8080 durable-memory

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: compile TypeScript to dist/ (tsc is a devDependency, so this stage installs them) ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
# --ignore-scripts: the package's `prepare` script runs `tsc`, and the sources are not copied yet
# (they come after, so that editing a source file does not invalidate this dependency layer).
RUN npm ci --ignore-scripts
COPY . .
RUN npm run build

# ---- runtime: production dependencies and dist/ only ----
FROM ${NODE_IMAGE} AS runtime
# The API binds every interface of the container (a published port reaches nothing on 127.0.0.1);
# off loopback it serves only once a token exists (DURABLE_MEMORY_API_TOKEN, see docker-compose.yml).
ENV NODE_ENV=production \
    DURABLE_MEMORY_HOME=/var/lib/durable-memory \
    DURABLE_MEMORY_API_HOST=0.0.0.0
WORKDIR /app
# package.json is needed at run time too: its "type": "module" makes Node load dist/ as ESM.
COPY package.json package-lock.json ./
# --ignore-scripts: `prepare` would run tsc, which is not installed here; none of the production
# dependencies needs an install script on this platform (native binaries come as optional packages).
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force
COPY --from=build /app/dist ./dist
# The home only receives endpoints.json here (both servers are external), but it must be writable
# by the unprivileged user.
RUN mkdir -p "$DURABLE_MEMORY_HOME" && chown node:node "$DURABLE_MEMORY_HOME"
# The official Node image's unprivileged user (uid 1000).
USER node

# The HTTP API served beside the worker (DURABLE_MEMORY_API_PORT, default 8080).
EXPOSE 8080
# The slim image has no curl: Node 20's global fetch probes /healthz. Liveness only (the process
# answers); readiness of Temporal and PostgreSQL is /readyz's job.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=5 \
    CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.DURABLE_MEMORY_API_PORT || 8080) + '/healthz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]

# Node itself as the main process (not `npm start`): npm does not forward SIGTERM reliably, and the
# worker needs it to drain in-flight activities before the container stops.
CMD ["node", "dist/src/cli/start.js"]
