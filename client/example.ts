/**
 * The typed client against a running sandbox (`deno task dev`): register a webhook endpoint,
 * create a payee and a disbursement on /v1, read the disbursement back, and verify the signed
 * webhook the service sends about it. Run: `deno run -A client/example.ts [credentials file]`
 * (default data/sandbox-credentials.json; its base_url says where the service is).
 */
import { apiClient, v1Client, verifySignature } from "./mod.ts";

/** How long to wait for the webhook, in milliseconds. */
const WEBHOOK_WAIT_MS = 30_000;

const credentialsPath = Deno.args[0] ?? "data/sandbox-credentials.json";
const sandbox = JSON.parse(await Deno.readTextFile(credentialsPath));
const acme = sandbox.companies[0];
const baseUrl: string = sandbox.base_url;

// A receiver on this machine: the sandbox (test keys) may deliver to http on loopback.
const deliveries: { body: string; signature: string }[] = [];
const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
  deliveries.push({ body: await req.text(), signature: req.headers.get("X-Signature") ?? "" });
  return new Response(null, { status: 204 });
});

const v1 = v1Client({ baseUrl, key: acme.lines[0].key_test });
try {
  const endpoint = await v1.POST("/v1/webhooks", {
    body: {
      url: `http://127.0.0.1:${receiver.addr.port}/webhooks`,
      events: ["disbursement.created"],
      description: "client example",
    },
  });
  if (!endpoint.data) throw new Error(`webhook: ${endpoint.error?.detail}`);
  const secret = endpoint.data.secret;

  const payeeId = `example-${crypto.randomUUID().slice(0, 8)}`;
  const payee = await v1.POST("/v1/payees", {
    body: {
      id: payeeId,
      name: "Pat Example",
      email: `${payeeId}@example.test`,
      contact_channel: "email",
    },
  });
  if (!payee.data) throw new Error(`payee: ${payee.error?.detail}`);
  console.log(`payee ${payee.data.id} (${payee.response.status})`);

  const created = await v1.POST("/v1/disbursements", {
    body: {
      amount: 125.5,
      claim_id: `CLM-${payeeId}`,
      payee: { id: payeeId },
      modalities: ["ach", "check"],
    },
  });
  if (!created.data) throw new Error(`disbursement: ${created.error?.detail}`);
  console.log(`disbursement ${created.data.id} ${created.data.status} $${created.data.amount}`);

  const read = await v1.GET("/v1/disbursements/{id}", {
    params: { path: { id: created.data.id } },
  });
  if (!read.data) throw new Error(`read: ${read.error?.detail}`);
  console.log(`read back: ${read.data.status}, offered ${read.data.modalities.join(", ")}`);

  const deadline = Date.now() + WEBHOOK_WAIT_MS;
  let delivery: { body: string; signature: string } | undefined;
  while (!delivery && Date.now() < deadline) {
    delivery = deliveries.find((d) => JSON.parse(d.body).data?.id === created.data.id);
    if (!delivery) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!delivery) throw new Error("no webhook for the disbursement within 30 s");
  const verified = await verifySignature({
    header: delivery.signature,
    body: delivery.body,
    secret,
    nowSeconds: Math.floor(Date.now() / 1000),
  });
  if (!verified) throw new Error("the webhook's X-Signature does not verify");
  console.log(`webhook ${JSON.parse(delivery.body).type} verified`);

  // Surface A with the same types: the company's balance.
  const api = await apiClient({ baseUrl, tin: acme.tin, userKey: acme.users[0].api_key_test });
  const balance = await api.GET("/api/balance", { params: { query: { line: "auto" } } });
  if (!balance.data) throw new Error(`balance: ${balance.error?.message}`);
  console.log(`/api balance of auto: available $${balance.data.available}`);
} finally {
  await receiver.shutdown();
}
