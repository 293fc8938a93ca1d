/**
 * The Standard Webhooks asymmetric signature (`v1a,`), per endpoint: deliveries of an endpoint that
 * asks for it carry an ed25519 signature of `<id>.<ts>.<body>` beside the HMAC `v1,` ones, verified
 * here by WebCrypto alone with the public key the API shows; the HMAC still verifies with the
 * `standardwebhooks` package (which reads `v1,` only), and another endpoint gets no `v1a,`.
 */
import assert from "node:assert/strict";
import { Webhook } from "standardwebhooks";
import { WebhookDispatcher } from "../lib/webhooks/dispatcher.ts";
import { fundAcmeAuto, type HttpFixture, withHttpFixture } from "./http_fixture.ts";

const call = (f: HttpFixture, method: string, path: string, body?: unknown, key?: string) =>
  f.app.request(path, {
    method,
    headers: {
      Authorization: `Bearer ${key ?? f.cast.acmeAutoKeyTest}`,
      "Content-Type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const fromBase64 = (text: string) => Uint8Array.from(atob(text), (ch) => ch.charCodeAt(0));

/** What a receiver does with only the public key: WebCrypto's Ed25519, no code of ours. */
async function verifiesWithPublicKey(
  publicKey: string,
  headers: Headers,
  body: string,
): Promise<boolean> {
  assert.match(publicKey, /^whpk_[A-Za-z0-9+/]{43}=$/);
  const key = await crypto.subtle.importKey(
    "raw",
    fromBase64(publicKey.slice("whpk_".length)),
    { name: "Ed25519" },
    false,
    ["verify"],
  );
  const signed = `${headers.get("webhook-id")}.${headers.get("webhook-timestamp")}.${body}`;
  const signatures = (headers.get("webhook-signature") ?? "").split(" ")
    .filter((s) => s.startsWith("v1a,"));
  for (const signature of signatures) {
    const ok = await crypto.subtle.verify(
      "Ed25519",
      key,
      fromBase64(signature.slice(4)),
      new TextEncoder().encode(signed),
    );
    if (ok) return true;
  }
  return false;
}

Deno.test("an endpoint with ed25519_signatures gets v1a signatures a public key verifies; the HMAC still verifies", async () => {
  await withHttpFixture(async (f) => {
    const received: { path: string; headers: Headers; body: string }[] = [];
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (r) => {
      received.push({ path: new URL(r.url).pathname, headers: r.headers, body: await r.text() });
      return new Response("ok");
    });
    try {
      const base = `http://127.0.0.1:${server.addr.port}`;
      const signed = await (await call(f, "POST", "/v1/webhooks", {
        url: `${base}/signed`,
        ed25519_signatures: true,
      })).json() as { id: string; secret: string; ed25519_signatures: boolean };
      assert.equal(signed.ed25519_signatures, true);
      const plain = await (await call(f, "POST", "/v1/webhooks", { url: `${base}/plain` }))
        .json() as { secret: string; ed25519_signatures: boolean };
      assert.equal(plain.ed25519_signatures, false);

      const keyResponse = await call(f, "GET", "/v1/webhooks/keys/ed25519");
      assert.equal(keyResponse.status, 200);
      const key = await keyResponse.json() as Record<string, unknown>;
      assert.deepEqual({ ...key, public_key: "whpk" }, {
        object: "webhook_public_key",
        public_key: "whpk",
        algorithm: "ed25519",
        livemode: false,
      });
      // One key per environment, the same on both surfaces.
      const live =
        await (await call(f, "GET", "/v1/webhooks/keys/ed25519", undefined, f.cast.acmeAutoKeyLive))
          .json() as Record<string, unknown>;
      assert.equal(live.livemode, true);
      assert.notEqual(live.public_key, key.public_key);

      await fundAcmeAuto(f, 1_000);
      await call(f, "POST", "/v1/payees", { id: "p1", email: "a@example.test" });
      await call(f, "POST", "/v1/payees", { id: "p1", email: "b@example.test" });
      const dispatcher = new WebhookDispatcher(f.deps.databases, f.deps.secretBox, f.clock, {
        batchSize: 50,
        endpointsInParallel: 4,
        perEndpointConcurrency: 1,
        timeoutMs: 2_000,
        leaseMs: 30_000,
        random: () => 0.5,
        log: () => {},
      });
      await dispatcher.sweep();
      await dispatcher.settled();
      const at = (path: string) => received.find((r) => r.path === path)!;
      const toSigned = at("/signed");
      const toPlain = at("/plain");
      assert.ok(toSigned && toPlain, "both endpoints got the event");
      const parts = toSigned.headers.get("webhook-signature")!.split(" ");
      assert.deepEqual(parts.map((p) => p.slice(0, p.indexOf(",") + 1)), ["v1,", "v1a,"]);
      assert.equal(
        await verifiesWithPublicKey(String(key.public_key), toSigned.headers, toSigned.body),
        true,
      );
      // A changed body, or another environment's key, does not verify.
      assert.equal(
        await verifiesWithPublicKey(String(key.public_key), toSigned.headers, toSigned.body + " "),
        false,
      );
      assert.equal(
        await verifiesWithPublicKey(String(live.public_key), toSigned.headers, toSigned.body),
        false,
      );
      // The off-the-shelf library signs the same HMAC signature that stands beside it (its verify
      // would also hold the fake clock's timestamp against the real time).
      const timestamp = new Date(Number(toSigned.headers.get("webhook-timestamp")) * 1000);
      assert.equal(
        new Webhook(signed.secret.slice("whsec_".length)).sign(
          toSigned.headers.get("webhook-id")!,
          timestamp,
          toSigned.body,
        ),
        parts[0],
      );
      assert.deepEqual(
        toPlain.headers.get("webhook-signature")!.split(" ").map((p) =>
          p.slice(0, p.indexOf(",") + 1)
        ),
        ["v1,"],
      );
    } finally {
      await server.shutdown();
    }
  });
});
