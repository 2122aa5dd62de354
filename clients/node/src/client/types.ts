// The wire types, taken from the generated OpenAPI types (openapi.ts) by
// operation id, so that a change of the server's document shows up here as
// a type error after `npm run generate`.

import type { components, operations } from "./openapi.js";

type Schemas = components["schemas"];

/** The `data` of an operation's 200 answer. */
export type Data<K extends keyof operations> = operations[K]["responses"] extends {
  200: { content: { "application/json": { data: infer D } } };
}
  ? D
  : never;

/** An operation's JSON request body. */
export type Body<K extends keyof operations> = operations[K] extends {
  requestBody?: { content: { "application/json": infer B } };
}
  ? B
  : never;

export type ConsumedMessage = Schemas["ConsumedMessage"];
export type PublishedMessage = Schemas["PublishedMessage"];
export type MessageDetail = Schemas["MessageDetail"];
export type QueueRecord = Schemas["QueueRecord"];
export type QueueStats = Schemas["QueueStats"];
export type BatchItem = Schemas["BatchItem"];
export type CreateQueue = Schemas["CreateQueue"];
export type UpdateQueue = Schemas["UpdateQueue"];
export type Nacked = Schemas["Nacked"];
export type Extended = Schemas["Extended"];
export type Paused = Schemas["Paused"];
export type Redriven = Schemas["Redriven"];
export type Deleted = Schemas["Deleted"];
export type Discovery = Schemas["Discovery"];
export type Capability = Schemas["Capability"];
export type Balance = Schemas["Balance"];
export type Usage = Schemas["Usage"];
export type PushSubscribe = Schemas["PushSubscribe"];
export type PushSubscription = Schemas["PushSubscription"];
export type PushUnsubscribed = Schemas["PushUnsubscribed"];
export type CronCreate = Schemas["CronCreate"];
export type CronUpdate = Schemas["CronUpdate"];
export type CronJob = Schemas["CronJob"];
export type CronDeleted = Schemas["CronDeleted"];
export type RegisterWebhook = Schemas["RegisterWebhook"];
export type Webhook = Schemas["Webhook"];
export type WebhookAttempt = Schemas["WebhookAttempt"];
export type WebhookDeleted = Schemas["WebhookDeleted"];
export type KeyInfo = Schemas["KeyInfo"];
export type KeyCreate = Schemas["KeyCreate"];
export type CreatedKey = Schemas["CreatedKey"];
export type KeyRevoke = Schemas["KeyRevoke"];
export type KeyRotate = Schemas["KeyRotate"];
export type KeyLimits = Schemas["KeyLimits"];
export type ProjectInfo = Schemas["ProjectInfo"];
export type ProjectLimits = Schemas["ProjectLimits"];

/**
 * One entry of a batch ack (`POST /v1/queue/ack_batch`, and `consume`'s
 * `acks`). Written by hand: the server's document does not have the call
 * yet; take it from `Body<"ack_batch">` once it does.
 */
export interface AckEntry {
  message_id: string;
  receipt: string;
  result?: unknown;
}

/** What a batch ack answered, entry by entry. */
export interface AckBatchResult {
  successful: { message_id: string }[];
  failed: { message_id: string; code: string; message: string; sender_fault: boolean }[];
  /** True when the server's batch call carried it; false when single acks did (a server without it). */
  batched: boolean;
}
