/**
 * Webhook endpoints and the event log as the companies manage them (contract §8): register (the
 * signing secret is shown once), rotate the secret, delete, list deliveries, and replay an event.
 * Delivering is the dispatcher's work. Writes are use cases run in the caller's write unit, except
 * `deleteEndpointOf` and `enableEndpointOf`, which open their own.
 */
import type { Database } from "../../db/client.ts";
import type { WriteTx } from "../../db/writer.ts";
import type { Environment } from "../platform/config.ts";
import { newWebhookSecret, type SecretBox } from "../platform/crypto.ts";
import { ok, refuse, type Result } from "../platform/result.ts";
import { checkEndpointRegistration, type HostResolver } from "./endpoint_url.ts";
import { enableEndpoint } from "./delivery_store.ts";
import { findLineEvent, listLineEvents, queueDeliveries, type StoredEvent } from "./event_store.ts";
import {
  createEndpoint,
  deleteEndpoint,
  type DeliveryRecord,
  type EndpointRecord,
  type EndpointScope,
  type EndpointSurface,
  findEndpoint,
  listDeliveries,
  listEndpoints,
  rotateEndpointSecret,
} from "./store.ts";

export type { DeliveryRecord, EndpointRecord, EndpointScope, StoredEvent };
export { webhookPublicKey } from "./ed25519_key.ts";

const endpointNotFound = (id: string) =>
  refuse("not_found", `no webhook endpoint ${JSON.stringify(id)} for this key`);

/**
 * Judges a URL for registration, before the write unit: a judgment that looks a host name up
 * waits on the network, which a unit must never do. A name that resolves to a refused address is
 * refused; one that does not resolve (yet) passes, and every attempt judges it again.
 */
export function judgeEndpointUrl(
  raw: string,
  environment: Environment,
  resolve?: HostResolver,
): Promise<Result<URL, "url_not_allowed">> {
  return checkEndpointRegistration(raw, environment, resolve);
}

export interface EndpointRegistration {
  readonly surface: EndpointSurface;
  /** The URL as judged by `judgeEndpointUrl`: a refused one is refused here, in the unit. */
  readonly url: Result<URL, "url_not_allowed">;
  readonly events: string[];
  readonly description: string | null;
  /** Deliveries also carry the ed25519 signature (`v1a,`). */
  readonly ed25519Signatures: boolean;
}

/** Registers an endpoint with a new signing secret, kept sealed and returned once. */
export async function registerEndpoint(
  tx: WriteTx,
  scope: EndpointScope,
  registration: EndpointRegistration,
  options: { secretBox: SecretBox; now: number },
): Promise<Result<{ endpoint: EndpointRecord; secret: string }, "url_not_allowed">> {
  const { url } = registration;
  if (!url.ok) return tx.abort({ ...url, field: "url" });
  const secret = newWebhookSecret();
  const endpoint = await createEndpoint(tx, scope, {
    surface: registration.surface,
    url: url.value.href,
    events: registration.events,
    description: registration.description,
    sealedSecret: await options.secretBox.sealText(secret),
    ed25519Signatures: registration.ed25519Signatures,
  }, options.now);
  return ok({ endpoint, secret });
}

/** A new signing secret; the previous one keeps signing beside it for `graceMs`. */
export async function rotateSigningSecret(
  tx: WriteTx,
  scope: EndpointScope,
  id: string,
  options: { secretBox: SecretBox; graceMs: number; now: number },
): Promise<Result<{ secret: string; previousExpiresAt: number }, "not_found">> {
  const secret = newWebhookSecret();
  const previousExpiresAt = options.now + options.graceMs;
  const rotated = await rotateEndpointSecret(tx, scope, id, {
    sealedNew: await options.secretBox.sealText(secret),
    previousExpiresAt,
  });
  if (!rotated) return tx.abort(endpointNotFound(id));
  return ok({ secret, previousExpiresAt });
}

/** Stops an endpoint for good, in a unit of its own; its past deliveries stay readable. */
export async function deleteEndpointOf(
  database: Database,
  scope: EndpointScope,
  id: string,
  now: number,
): Promise<Result<void, "not_found">> {
  return await database.writer.write(async (tx): Promise<Result<void, "not_found">> => {
    if (!(await deleteEndpoint(tx, scope, id, now))) return tx.abort(endpointNotFound(id));
    return ok(undefined);
  });
}

/**
 * Enables an endpoint again, in a unit of its own, and closes its circuit (failing_since cleared):
 * deliveries that failed meanwhile stay failed and can be replayed. Enabling an enabled endpoint
 * changes nothing.
 */
export async function enableEndpointOf(
  database: Database,
  scope: EndpointScope,
  id: string,
): Promise<Result<EndpointRecord, "not_found">> {
  return await database.writer.write(async (tx): Promise<Result<EndpointRecord, "not_found">> => {
    if (!(await enableEndpoint(tx, scope, id))) return tx.abort(endpointNotFound(id));
    return ok((await findEndpoint(tx, scope, id))!);
  });
}

/** The scope's endpoints, oldest first. */
export function endpointsOf(database: Database, scope: EndpointScope): Promise<EndpointRecord[]> {
  return listEndpoints(database.readClient, scope);
}

/** One endpoint of the scope, or not_found. */
export async function endpointOf(
  database: Database,
  scope: EndpointScope,
  id: string,
): Promise<Result<EndpointRecord, "not_found">> {
  const endpoint = await findEndpoint(database.readClient, scope, id);
  return endpoint ? ok(endpoint) : endpointNotFound(id);
}

/** An endpoint's latest deliveries (at most `limit`), newest first, or not_found. */
export async function deliveriesOf(
  database: Database,
  scope: EndpointScope,
  id: string,
  limit: number,
): Promise<Result<DeliveryRecord[], "not_found">> {
  const endpoint = await findEndpoint(database.readClient, scope, id);
  if (!endpoint) return endpointNotFound(id);
  return ok(await listDeliveries(database.readClient, endpoint.id, limit));
}

/** A /v1 caller's line. */
export interface LineScope {
  readonly companyId: string;
  readonly lineId: string;
}

const eventNotFound = (id: string) =>
  refuse("not_found", `no event ${JSON.stringify(id)} for this key`);

/** A page of the line's events; null when `startingAfter` is not one of them. */
export function lineEvents(
  database: Database,
  scope: LineScope,
  page: { limit: number; startingAfter: string | null; type: string | null },
): Promise<{ data: StoredEvent[]; hasMore: boolean } | null> {
  return listLineEvents(database.readClient, scope, page);
}

/** One event of the line, or not_found. */
export async function lineEvent(
  database: Database,
  scope: LineScope,
  id: string,
): Promise<Result<StoredEvent, "not_found">> {
  const event = await findLineEvent(database.readClient, scope, id);
  return event ? ok(event) : eventNotFound(id);
}

/** Delivers an event again, once, to the line's endpoints that receive it; returns how many. */
export async function replayLineEvent(
  tx: WriteTx,
  scope: LineScope,
  id: string,
  now: number,
): Promise<Result<{ deliveries: number }, "not_found">> {
  const event = await findLineEvent(tx, scope, id);
  if (!event) return tx.abort(eventNotFound(id));
  const deliveries = await queueDeliveries(
    tx,
    { id: event.id, ...scope, eventTypeId: event.eventTypeId },
    { manual: true, surfaces: "v1" },
    now,
  );
  return ok({ deliveries });
}
