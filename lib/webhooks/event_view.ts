/**
 * The /v1 events API's view of an event (docs/contract.md §8): exactly the body its webhook
 * carries, with in `signature` the body's signature of its latest delivery attempt to a /v1
 * endpoint (each attempt is signed afresh with its own time), or null before any attempt.
 */
import type { SqlExecutor } from "../ledger/store.ts";
import { type EnvelopeSource, surfaceBEnvelope } from "./payloads.ts";

export interface V1EventView {
  readonly id: unknown;
  readonly object: "event";
  readonly type: unknown;
  readonly created: unknown;
  readonly data: unknown;
  readonly signature: string | null;
  readonly sequence: number | null;
}

/** The event as its /v1 webhook body shows it, with the latest attempt's signature. */
export function v1EventView(
  event: EnvelopeSource & { readonly sequence: number | null },
  signature: string | null,
): V1EventView {
  const envelope = surfaceBEnvelope(event);
  return {
    id: envelope.id,
    object: "event",
    type: envelope.type,
    created: envelope.created,
    data: envelope.data,
    signature,
    sequence: event.sequence,
  };
}

/**
 * The signature of each event's latest delivery attempt to a /v1 endpoint, by event id; events
 * never attempted are absent. Surface A deliveries are left out: their body is another one.
 */
export async function latestV1Signatures(
  executor: SqlExecutor,
  eventIds: readonly string[],
): Promise<Map<string, string>> {
  if (eventIds.length === 0) return new Map();
  const { rows } = await executor.execute({
    sql: `SELECT ev.value AS event_id,
            (SELECT d.last_signature FROM webhook_deliveries d
               JOIN webhook_endpoints e ON e.id = d.endpoint_id AND e.surface = 'v1'
               JOIN delivery_attempts a ON a.delivery_id = d.id
              WHERE d.event_id = ev.value AND d.last_signature IS NOT NULL
              ORDER BY a.id DESC LIMIT 1) AS signature
          FROM json_each(?) ev`,
    args: [JSON.stringify(eventIds)],
  });
  const signatures = new Map<string, string>();
  for (const row of rows) {
    if (row.signature !== null) signatures.set(String(row.event_id), String(row.signature));
  }
  return signatures;
}
