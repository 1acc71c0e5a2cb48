/**
 * The HTTP API's public surface: build or start the server, manage tokens, get the OpenAPI
 * description. Routes, schemas and the error mapping stay internal.
 */
export {
  createApiServer,
  startApi,
  openApiDocument,
  DEFAULT_BODY_LIMIT,
  DEFAULT_IMPORT_BODY_LIMIT,
  type ApiServerOptions,
  type StartApiOptions,
  type RunningApi,
} from './api-server.js';
export { LOCAL_TENANT, isLoopbackHost } from './auth.js';
export {
  TokenStore,
  TOKEN_PREFIX,
  hashToken,
  type TokenInfo,
  type CreatedToken,
  type TokenStoreOptions,
} from '../tenancy/token-store.js';
export { TENANT_PATTERN } from '../tenancy/tenant-scope.js';
export { ApiError } from './api-error.js';
export { checkReadiness, type Readiness } from './readiness.js';
