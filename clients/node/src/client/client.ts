// The queue API client: every endpoint of the server (queue-api.md,
// queue-api-2.md, admin, cron, webhooks, push, discovery), with the Rust
// toolkit's method set and retry rules (crates/onceq/src/client/).

import { randomUUID } from "node:crypto";

import { CLIENT_CODES, OnceqError } from "./errors.js";
import { DEFAULT_RETRY, type RetryPolicy, withRetry } from "./retry.js";
import { traceMessageHeaders } from "./trace.js";
import { type Answer, type CallOptions, callOnce } from "./transport.js";
import type * as T from "./types.js";

export interface ClientOptions {
  /** The server, e.g. `http://127.0.0.1:8787`. */
  baseUrl: string;
  /** A key of the project (`Authorization: Bearer …`). */
  apiKey: string;
  /** How transient failures of publishes and keyed calls are retried. */
  retry?: Partial<RetryPolicy>;
  /** Longest wait for an answer, ms; default 30 000 (a long poll adds its wait). */
  timeoutMs?: number;
  /** The fetch to use (default the global one). */
  fetch?: typeof fetch;
}

export interface PublishOptions extends CallOptions {
  /** Hold the message back this many seconds (0..604800). */
  delaySeconds?: number;
  /** Higher goes out first. */
  priority?: number;
  /** Kept with the message and handed to its consumer. */
  headers?: Record<string, string>;
  /** FIFO queues: the ordering group. */
  messageGroupId?: string;
}

export interface Published {
  /** The message as the server holds it (the first one, on a replay). */
  message: T.PublishedMessage;
  /** True when the server answered from the idempotency key: nothing new was stored. */
  replay: boolean;
  /** The key the publish was sent with (the caller's, or generated). */
  idempotencyKey: string;
  costUsd: number;
  requestId: string | null;
}

export interface ConsumeOptions extends Omit<CallOptions, "idempotencyKey"> {
  /** 1..10; default 1. */
  maxMessages?: number;
  /** Lease length, s; default the queue's. */
  visibilityTimeout?: number;
  /** Long poll up to this many seconds (0..20); the AbortSignal ends it early. */
  waitSeconds?: number;
}

export interface NackOptions extends CallOptions {
  /** The lease's receipt. */
  receipt?: string;
  /** False dead-letters at once. Default true. */
  requeue?: boolean;
  /** Hold the message back; without it the queue's `retry_backoff` applies. */
  delaySeconds?: number;
  /** Why the work failed (at most 8 KiB): the attempt's error and the message's `last_error`. */
  error?: string;
}

export interface AckOptions extends CallOptions {
  /** What the work produced (any JSON, at most 64 KiB), kept while the queue retains completed messages. */
  result?: unknown;
}

/** What the server offers beyond the base contract, read from `/v1/discovery` and `/openapi.json`. */
export interface ServerFeatures {
  /** `POST /v1/queue/ack_batch`. */
  ackBatch: boolean;
  /** `consume` accepts `acks` and answers with theirs. */
  consumeAcks: boolean;
}

const QUEUE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}(-dlq)?$/;
const ID = /^[A-Za-z0-9_.~-]{1,255}$/;
const KEY = /^[!-~]{1,255}$/;
/** Entries per batch ack call (the contract's batch limit). */
const ACK_BATCH_MAX = 10;

/** A client of one server and one API key. */
export class Client {
  readonly baseUrl: string;
  readonly retry: RetryPolicy;
  readonly timeoutMs: number;
  readonly #auth: string;
  readonly #fetch: typeof fetch;
  readonly #key: string | undefined;
  #features: Promise<ServerFeatures> | undefined;

  constructor(opts: ClientOptions, key?: string) {
    if (!opts.baseUrl) throw invalid("baseUrl is required");
    if (!opts.apiKey || !/^[!-~]+$/.test(opts.apiKey)) throw invalid("apiKey must be visible ASCII");
    this.baseUrl = opts.baseUrl.replace(/\/+$/, "");
    this.retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.#auth = `Bearer ${opts.apiKey}`;
    this.#fetch = opts.fetch ?? globalThis.fetch;
    this.#key = key;
    this.#options = opts;
  }

  readonly #options: ClientOptions;

  /**
   * This client, sending `Idempotency-Key: key` on its calls: use it for one
   * mutating call, which the server then carries out once however often it
   * is sent, so it is retried on transient failures (and on 409
   * `REQUEST_IN_FLIGHT`, after `Retry-After`). On `publishBatch` the key
   * names the items without a key of their own (`<key>:<index>`).
   */
  withIdempotencyKey(key: string): Client {
    checkKey(key);
    return new Client(this.#options, key);
  }

  /**
   * One call. A mutating call with an idempotency key (the client's or the
   * call's) is retried on transient failures; `retry: true` forces it (publish).
   */
  async request<D>(
    method: "GET" | "POST" | "DELETE",
    path: string,
    body: unknown,
    opts: CallOptions = {},
    retry = false,
  ): Promise<Answer<D>> {
    const idempotencyKey = opts.idempotencyKey ?? this.#key;
    if (opts.idempotencyKey !== undefined) checkKey(opts.idempotencyKey);
    const req = {
      method,
      path,
      body,
      idempotencyKey,
      signal: opts.signal,
      timeoutMs: opts.timeoutMs ?? this.timeoutMs,
    };
    const once = () => callOnce<D>(this.#fetch, this.baseUrl, this.#auth, req);
    if (retry || (idempotencyKey !== undefined && method !== "GET")) {
      return withRetry(this.retry, opts.signal, once);
    }
    return once();
  }

  async #data<D>(method: "GET" | "POST" | "DELETE", path: string, body?: unknown, opts?: CallOptions): Promise<D> {
    return (await this.request<D>(method, path, body, opts)).data;
  }

  // ---- messages ---------------------------------------------------------

  /**
   * Publishes one message. Transient failures (network errors, timeouts,
   * 5xx, 429) are retried with the same idempotency key, generated when the
   * caller gives none, so a retry never stores a second message. The
   * active OpenTelemetry context goes into the message's headers.
   */
  async publish(queue: string, payload: unknown, opts: PublishOptions = {}): Promise<Published> {
    const key = opts.idempotencyKey ?? randomUUID();
    checkKey(key);
    const headers = await traceMessageHeaders(opts.headers);
    const body: T.Body<"publish"> = {
      queue: queueName(queue),
      payload: payload as T.Body<"publish">["payload"],
      idempotency_key: key,
      ...(opts.delaySeconds !== undefined && { delay_seconds: opts.delaySeconds }),
      ...(opts.priority !== undefined && { priority: opts.priority }),
      ...(opts.messageGroupId !== undefined && { message_group_id: opts.messageGroupId }),
      ...(headers !== undefined && { headers }),
    };
    const { idempotencyKey: _, ...rest } = opts;
    const a = await this.request<T.Data<"publish">>("POST", "/v1/queue/publish", body, rest, true);
    return { message: a.data, replay: a.replay, idempotencyKey: key, costUsd: a.costUsd, requestId: a.requestId };
  }

  /**
   * Publishes 1..10 messages, all or none; each answer item has its replay
   * flag. Retried like `publish` only when every item carries a key (its
   * own, or the call's `<key>:<index>`): otherwise a retry could store a
   * second copy.
   */
  async publishBatch(queue: string, messages: T.BatchItem[], opts: CallOptions = {}): Promise<T.PublishedMessage[]> {
    const items = await Promise.all(
      messages.map(async (m) => {
        const headers = await traceMessageHeaders((m.headers ?? undefined) as Record<string, string> | undefined);
        return headers === undefined ? m : { ...m, headers };
      }),
    );
    const safe =
      (opts.idempotencyKey ?? this.#key) !== undefined ||
      items.every((m) => (m.idempotency_key ?? m.deduplication_id ?? null) !== null);
    const body: T.Body<"publish_batch"> = { queue: queueName(queue), messages: items };
    const a = await this.request<T.Data<"publish_batch">>("POST", "/v1/queue/publish_batch", body, opts, safe);
    return a.data.items;
  }

  /**
   * Takes up to `maxMessages` messages under a lease, long polling up to
   * `waitSeconds`. The AbortSignal ends the wait at once (a message the
   * server handed to the abandoned poll comes back when its lease ends).
   * `timeoutMs` is the whole call's deadline (default: the client's
   * timeout beyond the wait).
   */
  async consume(queue: string, opts: ConsumeOptions = {}): Promise<T.ConsumedMessage[]> {
    const a = await this.request<T.Data<"consume">>("POST", "/v1/queue/consume", consumeBody(queue, opts), {
      signal: opts.signal,
      timeoutMs: this.#pollTimeout(opts),
    });
    return a.data.items;
  }

  /**
   * Acks `acks` and consumes in one call where the server takes `acks` on
   * consume; elsewhere a batch ack (or single acks) first, then the consume.
   */
  async consumeWithAcks(
    queue: string,
    acks: T.AckEntry[],
    opts: ConsumeOptions = {},
  ): Promise<{ items: T.ConsumedMessage[]; acks: T.AckBatchResult }> {
    if (acks.length === 0 || !(await this.features()).consumeAcks || acks.length > ACK_BATCH_MAX) {
      const acked = await this.ackBatch(queue, acks, { signal: opts.signal });
      return { items: await this.consume(queue, opts), acks: acked };
    }
    const body = { ...consumeBody(queue, opts), acks: acks.map(ackEntry) };
    const a = await this.request<{ items: T.ConsumedMessage[]; acks: Omit<T.AckBatchResult, "batched"> }>(
      "POST",
      "/v1/queue/consume",
      body,
      { signal: opts.signal, timeoutMs: this.#pollTimeout(opts) },
    );
    return { items: a.data.items, acks: { ...a.data.acks, batched: true } };
  }

  /** A consume's deadline: the caller's `timeoutMs`, else the client's beyond the long poll's wait. */
  #pollTimeout(opts: ConsumeOptions): number {
    return opts.timeoutMs ?? this.timeoutMs + (opts.waitSeconds ?? 0) * 1000;
  }

  /** Deletes a message held under a lease; false when the lease was lost. */
  async ack(queue: string, messageId: string, receipt?: string, opts: AckOptions = {}): Promise<boolean> {
    const { result, ...call } = opts;
    const body: T.Body<"ack"> = {
      queue: queueName(queue),
      message_id: messageId,
      ...(receipt !== undefined && { receipt }),
      ...(result !== undefined && { result }),
    };
    return (await this.#data<T.Data<"ack">>("POST", "/v1/queue/ack", body, call)).acked;
  }

  /**
   * Acks many messages: one `POST /v1/queue/ack_batch` per 10 entries when
   * the server offers it (`/v1/discovery`), else one ack each. The answer
   * says which path carried it (`batched`) and, entry by entry, which were
   * acked; a lost lease is a failed entry, not an exception.
   */
  async ackBatch(queue: string, entries: T.AckEntry[], opts: CallOptions = {}): Promise<T.AckBatchResult> {
    queueName(queue);
    const out: T.AckBatchResult = { successful: [], failed: [], batched: false };
    if (entries.length === 0) return out;
    if ((await this.features()).ackBatch) {
      out.batched = true;
      for (let i = 0; i < entries.length; i += ACK_BATCH_MAX) {
        const body = { queue, entries: entries.slice(i, i + ACK_BATCH_MAX).map(ackEntry) };
        const a = await this.request<Omit<T.AckBatchResult, "batched">>("POST", "/v1/queue/ack_batch", body, opts);
        out.successful.push(...a.data.successful);
        out.failed.push(...a.data.failed);
      }
      return out;
    }
    await Promise.all(
      entries.map(async (e) => {
        try {
          const acked = await this.ack(queue, e.message_id, e.receipt, { ...opts, result: e.result });
          if (acked) out.successful.push({ message_id: e.message_id });
          else
            out.failed.push({
              message_id: e.message_id,
              code: "LEASE_NOT_HELD",
              message: "the message is not in flight under this receipt",
              sender_fault: false,
            });
        } catch (err) {
          const oe = err instanceof OnceqError ? err : null;
          out.failed.push({
            message_id: e.message_id,
            code: oe?.code ?? CLIENT_CODES.NETWORK,
            message: oe?.message ?? String(err),
            sender_fault: oe !== null && oe.status >= 400 && oe.status < 500,
          });
        }
      }),
    );
    return out;
  }

  /** Gives a message back (or dead-letters it with `requeue: false`). */
  async nack(queue: string, messageId: string, opts: NackOptions = {}): Promise<T.Nacked> {
    const { receipt, requeue, delaySeconds, error, ...call } = opts;
    const body: T.Body<"nack"> = {
      queue: queueName(queue),
      message_id: messageId,
      requeue: requeue ?? true,
      ...(receipt !== undefined && { receipt }),
      ...(delaySeconds !== undefined && { delay_seconds: delaySeconds }),
      ...(error !== undefined && { error }),
    };
    return this.#data("POST", "/v1/queue/nack", body, call);
  }

  /** Extends a lease to `visibilityTimeout` seconds from now (heartbeat). */
  async extend(
    queue: string,
    messageId: string,
    receipt: string | undefined,
    visibilityTimeout: number,
    opts: CallOptions = {},
  ): Promise<T.Extended> {
    const body: T.Body<"extend"> = {
      queue: queueName(queue),
      message_id: messageId,
      visibility_timeout: visibilityTimeout,
      ...(receipt !== undefined && { receipt }),
    };
    return this.#data("POST", "/v1/queue/extend", body, opts);
  }

  /** One message wherever its queue keeps it, with its attempts, `last_error` and `result`. */
  getMessage(queue: string, messageId: string, opts?: CallOptions): Promise<T.MessageDetail> {
    return this.#data("GET", `/v1/queue/message/${queueName(queue)}/${id(messageId)}`, undefined, opts);
  }

  /** Removes a waiting, delayed or in-flight message; false when the queue does not hold it. */
  async cancel(queue: string, messageId: string, opts?: CallOptions): Promise<boolean> {
    const body: T.Body<"cancel"> = { queue: queueName(queue), message_id: messageId };
    return (await this.#data<T.Data<"cancel">>("POST", "/v1/queue/cancel", body, opts)).cancelled;
  }

  // ---- queues -----------------------------------------------------------

  /** Creates a queue (identical settings return the existing one). */
  createQueue(req: T.CreateQueue, opts?: CallOptions): Promise<T.QueueRecord> {
    return this.#data("POST", "/v1/queue/create", req, opts);
  }

  /** Changes the settings `req` names; the others keep their values. */
  updateQueue(req: T.UpdateQueue, opts?: CallOptions): Promise<T.QueueRecord> {
    return this.#data("POST", "/v1/queue/update", req, opts);
  }

  /** Every queue of the key's project. */
  async listQueues(opts?: CallOptions): Promise<T.QueueRecord[]> {
    return (await this.#data<T.Data<"list">>("GET", "/v1/queue/list", undefined, opts)).items;
  }

  getQueue(queue: string, opts?: CallOptions): Promise<T.QueueRecord> {
    return this.#data("GET", `/v1/queue/get/${queueName(queue)}`, undefined, opts);
  }

  /** Deletes a queue and its messages. */
  deleteQueue(queue: string, opts?: CallOptions): Promise<T.Deleted> {
    return this.#data("DELETE", `/v1/queue/delete/${queueName(queue)}`, undefined, opts);
  }

  /** Counts by state. */
  stats(queue: string, opts?: CallOptions): Promise<T.QueueStats> {
    return this.#data("GET", `/v1/queue/stats/${queueName(queue)}`, undefined, opts);
  }

  /** Removes every held message; how many. */
  async purge(queue: string, opts?: CallOptions): Promise<number> {
    return (await this.#data<T.Data<"purge">>("POST", `/v1/queue/purge/${queueName(queue)}`, undefined, opts)).purged;
  }

  /** Pauses a queue: publishes are accepted, nothing is handed out until `resume`. */
  pause(queue: string, opts?: CallOptions): Promise<T.Paused> {
    return this.#data("POST", `/v1/queue/pause/${queueName(queue)}`, undefined, opts);
  }

  resume(queue: string, opts?: CallOptions): Promise<T.Paused> {
    return this.#data("POST", `/v1/queue/resume/${queueName(queue)}`, undefined, opts);
  }

  /** Moves dead letters back into `queue`: at most `maxMessages`, or the chosen `messageIds`. */
  redrive(queue: string, which: { maxMessages?: number; messageIds?: string[] } = {}, opts?: CallOptions): Promise<T.Redriven> {
    const body: T.Body<"redrive"> = {
      ...(which.maxMessages !== undefined && { max_messages: which.maxMessages }),
      ...(which.messageIds !== undefined && { message_ids: which.messageIds }),
    };
    return this.#data("POST", `/v1/queue/dlq/redrive/${queueName(queue)}`, body, opts);
  }

  // ---- push subscriptions -----------------------------------------------

  pushSubscribe(queue: string, req: T.PushSubscribe, opts?: CallOptions): Promise<T.PushSubscription> {
    return this.#data("POST", `/v1/queue/push_subscribe/${queueName(queue)}`, req, opts);
  }

  async pushSubscriptions(queue: string, opts?: CallOptions): Promise<T.PushSubscription[]> {
    const d = await this.#data<T.Data<"push_subscriptions">>("GET", `/v1/queue/push_subscriptions/${queueName(queue)}`, undefined, opts);
    return d.items;
  }

  pushUnsubscribe(queue: string, subscriptionId: string, opts?: CallOptions): Promise<T.PushUnsubscribed> {
    return this.#data("DELETE", `/v1/queue/push_unsubscribe/${queueName(queue)}/${id(subscriptionId)}`, undefined, opts);
  }

  // ---- cron -------------------------------------------------------------

  /** Creates a schedule; `replay` when its `idempotency_key` named an existing one. */
  async cronCreate(req: T.CronCreate, opts?: CallOptions): Promise<{ job: T.CronJob; replay: boolean }> {
    const a = await this.request<T.CronJob>("POST", "/v1/cron/create", req, opts);
    return { job: a.data, replay: a.replay };
  }

  async cronList(opts?: CallOptions): Promise<T.CronJob[]> {
    return (await this.#data<T.Data<"cron_list">>("GET", "/v1/cron/list", undefined, opts)).items;
  }

  cronGet(jobId: string, opts?: CallOptions): Promise<T.CronJob> {
    return this.#data("GET", `/v1/cron/get/${id(jobId)}`, undefined, opts);
  }

  cronUpdate(req: T.CronUpdate, opts?: CallOptions): Promise<T.CronJob> {
    return this.#data("POST", "/v1/cron/update", req, opts);
  }

  cronPause(jobId: string, opts?: CallOptions): Promise<T.CronJob> {
    return this.#data("POST", `/v1/cron/pause/${id(jobId)}`, undefined, opts);
  }

  cronResume(jobId: string, opts?: CallOptions): Promise<T.CronJob> {
    return this.#data("POST", `/v1/cron/resume/${id(jobId)}`, undefined, opts);
  }

  cronDelete(jobId: string, opts?: CallOptions): Promise<T.CronDeleted> {
    return this.#data("DELETE", `/v1/cron/delete/${id(jobId)}`, undefined, opts);
  }

  // ---- account ----------------------------------------------------------

  balance(opts?: CallOptions): Promise<T.Balance> {
    return this.#data("GET", "/v1/account/balance", undefined, opts);
  }

  /** Per-capability counts and cost; `from`/`to` as RFC 3339 times. */
  usage(range: { from?: string; to?: string } = {}, opts?: CallOptions): Promise<T.Usage> {
    const q = new URLSearchParams();
    if (range.from !== undefined) q.set("from", range.from);
    if (range.to !== undefined) q.set("to", range.to);
    const qs = q.toString();
    return this.#data("GET", `/v1/account/usage${qs ? `?${qs}` : ""}`, undefined, opts);
  }

  /** Registers a webhook; the answer's `secret` is shown this once. */
  registerWebhook(req: T.RegisterWebhook, opts?: CallOptions): Promise<T.Webhook> {
    return this.#data("POST", "/v1/account/webhooks/register", req, opts);
  }

  async listWebhooks(opts?: CallOptions): Promise<T.Webhook[]> {
    return (await this.#data<T.Data<"webhook_list">>("GET", "/v1/account/webhooks/list", undefined, opts)).items;
  }

  /** A webhook's latest delivery attempts, newest first (at most `limit`, 1..100). */
  async webhookDeliveries(webhookId: string, limit?: number, opts?: CallOptions): Promise<T.WebhookAttempt[]> {
    const qs = limit === undefined ? "" : `?limit=${limit}`;
    const path = `/v1/account/webhooks/deliveries/${id(webhookId)}${qs}`;
    return (await this.#data<T.Data<"webhook_deliveries">>("GET", path, undefined, opts)).items;
  }

  /** Sends a `webhook.test` event now; the attempt. */
  testWebhook(webhookId: string, opts?: CallOptions): Promise<T.WebhookAttempt> {
    return this.#data("POST", `/v1/account/webhooks/test/${id(webhookId)}`, undefined, opts);
  }

  deleteWebhook(webhookId: string, opts?: CallOptions): Promise<T.WebhookDeleted> {
    return this.#data("DELETE", `/v1/account/webhooks/delete/${id(webhookId)}`, undefined, opts);
  }

  // ---- admin (a key with the `accounts` action) --------------------------

  async adminKeys(opts?: CallOptions): Promise<T.KeyInfo[]> {
    return (await this.#data<T.Data<"admin_keys_list">>("GET", "/v1/admin/keys", undefined, opts)).items;
  }

  /** Creates a key; the answer's `secret` is shown this once. */
  adminKeysCreate(req: T.KeyCreate, opts?: CallOptions): Promise<T.CreatedKey> {
    return this.#data("POST", "/v1/admin/keys/create", req, opts);
  }

  adminKeysRevoke(req: T.KeyRevoke, opts?: CallOptions): Promise<T.KeyInfo> {
    return this.#data("POST", "/v1/admin/keys/revoke", req, opts);
  }

  adminKeysRotate(req: T.KeyRotate, opts?: CallOptions): Promise<T.CreatedKey> {
    return this.#data("POST", "/v1/admin/keys/rotate", req, opts);
  }

  adminKeysLimits(req: T.KeyLimits, opts?: CallOptions): Promise<T.KeyInfo> {
    return this.#data("POST", "/v1/admin/keys/limits", req, opts);
  }

  async adminProjects(opts?: CallOptions): Promise<T.ProjectInfo[]> {
    return (await this.#data<T.Data<"admin_projects_list">>("GET", "/v1/admin/projects", undefined, opts)).items;
  }

  adminProjectsLimits(req: T.ProjectLimits, opts?: CallOptions): Promise<T.ProjectInfo> {
    return this.#data("POST", "/v1/admin/projects/limits", req, opts);
  }

  // ---- discovery --------------------------------------------------------

  /** The server's endpoints and prices. */
  discovery(opts?: CallOptions): Promise<T.Discovery> {
    return this.#data("GET", "/v1/discovery", undefined, opts);
  }

  /** One capability by id (`queue.publish`, …); unknown → OnceqError 404. */
  capability(capabilityId: string, opts?: CallOptions): Promise<T.Capability> {
    return this.#data("GET", `/v1/discovery/${id(capabilityId)}`, undefined, opts);
  }

  /**
   * What the server offers beyond the base contract, asked once per client
   * (a failed look is asked again next time): batch acks from
   * `/v1/discovery`, and `acks` on consume from `/openapi.json`'s `Consume`.
   */
  features(): Promise<ServerFeatures> {
    this.#features ??= this.#readFeatures().catch((e: unknown) => {
      this.#features = undefined;
      throw e;
    });
    return this.#features;
  }

  async #readFeatures(): Promise<ServerFeatures> {
    const d = await this.discovery();
    const ackBatch = d.capabilities.some((c) => c.id === "queue.ack_batch" || c.path === "/v1/queue/ack_batch");
    let consumeAcks = false;
    if (ackBatch) {
      const res = await this.#fetch(`${this.baseUrl}/openapi.json`, { signal: AbortSignal.timeout(this.timeoutMs) });
      if (res.ok) {
        const doc = (await res.json()) as { components?: { schemas?: { Consume?: { properties?: object } } } };
        consumeAcks = "acks" in (doc.components?.schemas?.Consume?.properties ?? {});
      }
    }
    return { ackBatch, consumeAcks };
  }
}

function consumeBody(queue: string, opts: ConsumeOptions): T.Body<"consume"> {
  return {
    queue: queueName(queue),
    max_messages: Math.max(1, opts.maxMessages ?? 1),
    ...(opts.visibilityTimeout !== undefined && { visibility_timeout: opts.visibilityTimeout }),
    ...(opts.waitSeconds && { wait_seconds: opts.waitSeconds }),
  };
}

function ackEntry(e: T.AckEntry): T.AckEntry {
  return { message_id: e.message_id, receipt: e.receipt, ...(e.result !== undefined && { result: e.result }) };
}

function invalid(message: string): OnceqError {
  return new OnceqError({ code: CLIENT_CODES.INVALID_ARGUMENT, message });
}

/** A queue name goes into a path: refuse what is not one rather than encode it into another request. */
function queueName(queue: string): string {
  if (typeof queue !== "string" || !QUEUE_NAME.test(queue)) throw invalid(`invalid queue name ${JSON.stringify(queue)}`);
  return queue;
}

function id(value: string): string {
  if (typeof value !== "string" || !ID.test(value)) throw invalid(`invalid id ${JSON.stringify(value)}`);
  return value;
}

function checkKey(key: string): void {
  if (typeof key !== "string" || !KEY.test(key)) {
    throw invalid(`idempotency key ${JSON.stringify(key)} must be 1 to 255 characters of visible ASCII`);
  }
}
