/**
 * A webhook receiver for both surfaces, as an integrator would write one. Each endpoint has its own
 * `whsec_` secret, so each gets its own path: register `http://127.0.0.1:9000/v1` on /v1 and
 * `http://127.0.0.1:9000/api` on /api, then run
 * `WEBHOOK_SECRET_V1=whsec_… WEBHOOK_SECRET_API=whsec_… deno run -N -E client/receiver.ts`.
 * It checks `X-Signature` over the raw body before reading it, and prints one line per event.
 */
import { verifySignature } from "./mod.ts";

const secrets: Record<string, string | undefined> = {
  "/v1": Deno.env.get("WEBHOOK_SECRET_V1"),
  "/api": Deno.env.get("WEBHOOK_SECRET_API"),
};
const port = Number(Deno.env.get("RECEIVER_PORT") ?? "9000");

Deno.serve({ hostname: "127.0.0.1", port }, async (request) => {
  const secret = secrets[new URL(request.url).pathname];
  const body = await request.text();
  const valid = secret !== undefined && await verifySignature({
    header: request.headers.get("X-Signature") ?? "",
    body,
    secret,
    nowSeconds: Math.floor(Date.now() / 1000),
  });
  if (!valid) return new Response(null, { status: 400 });
  const event = JSON.parse(body);
  // /v1 bodies are {id, type, created, data, signature, sequence}; /api bodies are
  // {"webhookTrigger": {"payload": {…, sequence}}}. The event id (X-Event-Id) deduplicates
  // (delivery is at least once); `sequence` orders a payout's events (delivery order is not kept).
  const payload = event.webhookTrigger?.payload;
  const name = event.type ?? payload?.EventTypeName;
  const sequence = event.sequence ?? payload?.sequence;
  console.log(`${request.headers.get("X-Event-Id")} ${name} sequence ${sequence}`);
  return new Response(null, { status: 204 });
});
