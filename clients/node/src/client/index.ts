// The queue client: `new Client({ baseUrl, apiKey })`.
export { Client } from "./client.js";
export type { ClientOptions, PublishOptions, Published, ConsumeOptions, NackOptions, AckOptions, ServerFeatures } from "./client.js";
export { OnceqError, CLIENT_CODES } from "./errors.js";
export type { OnceqErrorInit } from "./errors.js";
export { DEFAULT_RETRY, NO_RETRY, retryDelay } from "./retry.js";
export type { RetryPolicy } from "./retry.js";
export type { CallOptions } from "./transport.js";
export type * from "./types.js";
export type { paths, components, operations } from "./openapi.js";
