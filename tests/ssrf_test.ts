/**
 * Live webhook URLs reach global unicast addresses only (issue 16, item 2): every block of the
 * IANA IPv4 and IPv6 special-purpose address registries is refused, as a literal URL and as what
 * a host name resolves to (a test resolver maps names to each address), at registration (400
 * naming `url`) and again at delivery (nothing is sent). The 6to4, Teredo and NAT64 forms are
 * judged by the IPv4 address they carry.
 */
import assert from "node:assert/strict";
import { blockedAddress, checkEndpointUrl } from "../lib/webhooks/endpoint_url.ts";
import { WebhookDispatcher } from "../lib/webhooks/dispatcher.ts";
import { recordEvent } from "../lib/webhooks/event_store.ts";
import { newWebhookSecret } from "../lib/platform/crypto.ts";
import { createApp } from "../routes/app.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";

/** Each refused block with addresses inside it (its first and its last where they differ). */
const refused: [block: string, addresses: string[]][] = [
  ["0.0.0.0/8", ["0.0.0.0", "0.255.255.255"]],
  ["10.0.0.0/8", ["10.0.0.0", "10.255.255.255"]],
  ["100.64.0.0/10", ["100.64.0.0", "100.127.255.255"]],
  ["127.0.0.0/8", ["127.0.0.1", "127.255.255.255"]],
  ["169.254.0.0/16", ["169.254.0.0", "169.254.169.254", "169.254.255.255"]],
  ["172.16.0.0/12", ["172.16.0.0", "172.31.255.255"]],
  ["192.0.0.0/24", ["192.0.0.0", "192.0.0.255"]],
  ["192.0.2.0/24", ["192.0.2.0", "192.0.2.255"]],
  ["192.31.196.0/24", ["192.31.196.0", "192.31.196.255"]],
  ["192.52.193.0/24", ["192.52.193.0", "192.52.193.255"]],
  ["192.88.99.0/24", ["192.88.99.0", "192.88.99.255"]],
  ["192.168.0.0/16", ["192.168.0.0", "192.168.255.255"]],
  ["192.175.48.0/24", ["192.175.48.0", "192.175.48.255"]],
  ["198.18.0.0/15", ["198.18.0.0", "198.19.255.255"]],
  ["198.51.100.0/24", ["198.51.100.0", "198.51.100.255"]],
  ["203.0.113.0/24", ["203.0.113.0", "203.0.113.255"]],
  ["224.0.0.0/4", ["224.0.0.0", "239.255.255.255"]],
  ["240.0.0.0/4", ["240.0.0.0", "255.255.255.254"]],
  ["255.255.255.255/32", ["255.255.255.255"]],
  ["::/128", ["::"]],
  ["::1/128", ["::1"]],
  ["::/96", ["::127.0.0.1", "::8.8.8.8", "::ffff"]],
  ["::ffff:0:0/96", ["::ffff:127.0.0.1", "::ffff:8.8.8.8"]],
  ["::ffff:0:0:0/96", ["::ffff:0:7f00:1", "::ffff:0:808:808"]],
  ["64:ff9b::/96", ["64:ff9b::127.0.0.1", "64:ff9b::a00:1", "64:ff9b::a9fe:a9fe"]],
  ["64:ff9b:1::/48", ["64:ff9b:1::808:808", "64:ff9b:1:ffff:ffff:ffff:ffff:ffff"]],
  ["100::/64", ["100::", "100::ffff:ffff:ffff:ffff"]],
  // Teredo: server 65.54.227.120 with client 127.0.0.1 (inverted), then server 10.0.0.1.
  ["2001::/32", ["2001:0:4136:e378:8000:63bf:80ff:fffe", "2001:0:a00:1:8000:63bf:f7f7:f7f7"]],
  ["2001::/23", ["2001:1::1", "2001:2::1", "2001:1ff:ffff::1"]],
  ["2001:db8::/32", ["2001:db8::1", "2001:db8:ffff:ffff::1"]],
  ["2002::/16", ["2002:7f00:1::1", "2002:a9fe:a9fe::1", "2002:c0a8:101::1"]],
  ["2620:4f:8000::/48", ["2620:4f:8000::1"]],
  ["3fff::/20", ["3fff::1", "3fff:fff:ffff::1"]],
  ["5f00::/16", ["5f00::1"]],
  ["fc00::/7", ["fc00::1", "fdff:ffff::1"]],
  ["fe80::/10", ["fe80::1", "febf:ffff::1"]],
  ["fec0::/10", ["fec0::1", "feff:ffff::1"]],
  ["ff00::/8", ["ff02::1", "ffff::1"]],
  ["2000::/3", ["1::1", "4000::1", "8000::1", "e000::1"]],
];

/** Global unicast, and the translation forms that carry a public IPv4 address. */
const reachable = [
  "8.8.8.8",
  "93.184.216.34",
  "100.63.255.255",
  "100.128.0.0",
  "172.15.255.255",
  "172.32.0.0",
  "198.17.255.255",
  "198.20.0.0",
  "223.255.255.255",
  "2606:4700::1111",
  "2001:4860:4860::8888",
  "2001:200::1",
  "64:ff9b::808:808",
  "2002:808:808::1",
  "2001:0:4136:e378:8000:63bf:f7f7:f7f7",
];

const literal = (address: string) =>
  address.includes(":") ? `https://[${address}]/hook` : `https://${address}/hook`;

const refusedAddresses = refused.flatMap(([block, addresses]) =>
  addresses.map((address) => ({ block, address }))
);

Deno.test("the four IPv6 forms the audit found are refused, each naming its block", () => {
  const found: [string, string][] = [
    ["https://[::127.0.0.1]/", "::7f00:1 is in ::/96 (deprecated IPv4-compatible)"],
    ["https://[::ffff:0:7f00:1]/", "::ffff:0:7f00:1 is in ::ffff:0:0:0/96 (IPv4-translated)"],
    ["https://[fec0::1]/", "fec0::1 is in fec0::/10 (deprecated site-local)"],
    [
      "https://[2002:7f00:1::1]/",
      "2002:7f00:1::1 is in 2002::/16 (6to4) and carries 127.0.0.1, which is in 127.0.0.0/8 (loopback)",
    ],
  ];
  for (const [url, message] of found) {
    const checked = checkEndpointUrl(url, "live");
    assert.ok(!checked.ok, url);
    assert.ok(checked.message.startsWith(message), checked.message);
  }
});

Deno.test("every special-purpose block is refused as a literal URL and as a resolved address; public ones pass", () => {
  assert.equal(refusedAddresses.length, 80);
  for (const { block, address } of refusedAddresses) {
    const checked = checkEndpointUrl(literal(address), "live");
    assert.ok(!checked.ok, `${address} as a literal URL`);
    const resolved = blockedAddress(address, "live");
    assert.ok(resolved !== null, `${address} resolved`);
    // The message names the block, or (for the translation forms) the block of what it carries.
    if (!["2001::/32", "2002::/16", "64:ff9b::/96"].includes(block)) {
      assert.ok(resolved.includes(block), `${address}: ${resolved}`);
    }
    // The test environment refuses them too, loopback aside.
    if (block !== "127.0.0.0/8" && block !== "::1/128") {
      assert.ok(!checkEndpointUrl(literal(address), "test").ok, `${address} in test`);
    }
  }
  for (const address of reachable) {
    assert.deepEqual(blockedAddress(address, "live"), null, address);
    assert.ok(checkEndpointUrl(literal(address), "live").ok, address);
  }
  // The test environment takes loopback (a receiver on the developer's machine), nothing else.
  assert.equal(blockedAddress("127.0.0.1", "test"), null);
  assert.equal(blockedAddress("::1", "test"), null);
  assert.ok(blockedAddress("10.0.0.1", "test") !== null);
  assert.ok(blockedAddress("fec0::1", "test") !== null);
});

/** A test resolver: `n<i>.example.test` answers the i-th refused address, `ok.example.test` a public one. */
const names = new Map(refusedAddresses.map(({ address }, i) => [`n${i}.example.test`, address]));
const resolveHost = (host: string) => {
  if (host === "ok.example.test") return Promise.resolve(["93.184.216.34", "2606:4700::1111"]);
  const address = names.get(host);
  return address ? Promise.resolve([address]) : Promise.reject(new Error("NXDOMAIN"));
};

const liveCall = (f: HttpFixture, app: ReturnType<typeof createApp>, body: unknown) =>
  app.request("/v1/webhooks", {
    method: "POST",
    headers: {
      Authorization: `Bearer ${f.cast.acmeAutoKeyLive}`,
      "Content-Type": "application/json",
    },
    body: JSON.stringify(body),
  });

Deno.test("registration: every literal form and every name resolving into a block gets a 400 naming url", async () => {
  await withHttpFixture(async (f) => {
    const app = createApp({ ...f.deps, resolveHost });
    for (const [i, { address }] of refusedAddresses.entries()) {
      for (const url of [literal(address), `https://n${i}.example.test/hook`]) {
        const res = await liveCall(f, app, { url });
        assert.equal(res.status, 400, url);
        const { errors } = await res.json() as { errors: { param: string; message: string }[] };
        assert.equal(errors[0].param, "url", url);
        if (!url.includes("[")) {
          assert.ok(
            errors[0].message.includes(address) || errors[0].message.includes(url.split("/")[2]),
            errors[0].message,
          );
        }
      }
    }
    const named = await liveCall(f, app, { url: "https://n6.example.test/hook" });
    const message =
      "n6.example.test resolves to 127.0.0.1: 127.0.0.1 is in 127.0.0.0/8 (loopback), not a public address";
    assert.deepEqual(await named.json(), {
      type: "/docs/errors#url_not_allowed",
      title: "Bad Request",
      status: 400,
      code: "url_not_allowed",
      detail: message,
      errors: [{ param: "url", message }],
    });
    assert.equal((await liveCall(f, app, { url: "https://ok.example.test/hook" })).status, 201);
    // A name that does not resolve yet is accepted: every attempt resolves and judges it again.
    assert.equal(
      (await liveCall(f, app, { url: "https://not-yet.example.test/hook" })).status,
      201,
    );
    const { rows } = await f.deps.databases.live.readClient.execute(
      "SELECT url FROM webhook_endpoints ORDER BY rowid",
    );
    assert.deepEqual(rows.map((row) => row.url), [
      "https://ok.example.test/hook",
      "https://not-yet.example.test/hook",
    ]);
  }, { RATE_LIMIT_RPS: "0" });
});

Deno.test("delivery: an endpoint whose name resolves into any block, or whose literal is one, is never contacted", async () => {
  await withHttpFixture(async (f) => {
    const live = f.deps.databases.live;
    const urls = [
      ...refusedAddresses.map((_, i) => `https://n${i}.example.test/hook`),
      ...refusedAddresses.map(({ address }) => literal(address)),
      "https://ok.example.test/hook",
    ];
    // Inserted as if registered before the rules tightened: delivery judges them again.
    const sealed = await f.deps.secretBox.sealText(newWebhookSecret());
    await live.writer.write(async (tx) => {
      for (const [i, url] of urls.entries()) {
        await tx.execute({
          sql:
            `INSERT INTO webhook_endpoints (id, company_id, line_id, surface, url, events, secret_ciphertext, created_at)
                VALUES (?, ?, ?, 'v1', ?, '[]', ?, 0)`,
          args: [`we_${i}`, f.cast.acme.id, f.cast.acme.autoLineId, url, sealed],
        });
      }
      await recordEvent(tx, {
        companyId: f.cast.acme.id,
        lineId: f.cast.acme.autoLineId,
        key: "payee_updated",
        reason: "ssrf test",
        data: { payee_id: "p1", changed: ["email"] },
      }, f.clock.now());
    });
    const sent: string[] = [];
    const dispatcher = new WebhookDispatcher(f.deps.databases, f.deps.secretBox, f.clock, {
      batchSize: 200,
      endpointsInParallel: 16,
      perEndpointConcurrency: 1,
      timeoutMs: 1_000,
      leaseMs: 10_000,
      random: () => 0.5,
      resolve: resolveHost,
      fetch: (input) => {
        sent.push(String(input));
        return Promise.resolve(new Response("ok"));
      },
    });
    assert.equal(await dispatcher.sweep(), urls.length);
    assert.deepEqual(sent, ["https://ok.example.test/hook"], "only the public name was contacted");
    const { rows } = await live.readClient.execute(
      `SELECT e.url, a.error FROM delivery_attempts a
         JOIN webhook_deliveries d ON d.id = a.delivery_id
         JOIN webhook_endpoints e ON e.id = d.endpoint_id ORDER BY e.rowid`,
    );
    const errors = new Map(rows.map((row) => [String(row.url), row.error]));
    for (const [i, { address }] of refusedAddresses.entries()) {
      assert.match(
        String(errors.get(`https://n${i}.example.test/hook`)),
        new RegExp(
          `^not sent: n${i}\\.example\\.test resolves to ${address.replaceAll(".", "\\.")}: `,
        ),
      );
      assert.match(String(errors.get(literal(address))), /^not sent: /);
    }
    assert.equal(errors.get("https://ok.example.test/hook"), null);
  });
});
