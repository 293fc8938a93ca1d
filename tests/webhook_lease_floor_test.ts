/**
 * The webhook claim lease's floor follows the attempt timeout: a claim outlasts the next lease
 * extension (one timeout), the start delay under traffic, the attempt and its record, so that no
 * other node re-claims an attempt still running; a short timeout allows a short lease.
 */
import assert from "node:assert/strict";
import { configDefaults } from "../lib/platform/config.ts";
import {
  claimLeaseMs,
  leaseFloorMs,
  startDelayMsMax,
  WebhookDispatcher,
} from "../lib/webhooks/dispatcher.ts";
import { type HttpFixture, withHttpFixture } from "./http_fixture.ts";

const dispatcher = (f: HttpFixture, timeoutMs: number, leaseMs: number) =>
  new WebhookDispatcher(f.deps.databases, f.deps.secretBox, f.clock, {
    batchSize: 10,
    endpointsInParallel: 1,
    perEndpointConcurrency: 1,
    timeoutMs,
    leaseMs,
  });

Deno.test("lease floor: 2 timeouts + the start delay + the record margin, kept at 22.64 s for the default 10 s timeout", () => {
  // [timeout, start delay (8 × (busy wait + 5 ms pace)), floor, the lease a node runs with]
  const cases: [number, number, number, number][] = [
    [configDefaults.WEBHOOK_TIMEOUT_MS, 1_640, 22_640, 30_000],
    [2_000, 1_640, 6_640, 6_640],
    [1_000, 840, 3_840, 3_840],
    [500, 440, 1_940, 1_940],
    [155, 160, 970, 970],
    [100, 120, 820, 820],
  ];
  for (const [timeoutMs, startDelayMs, floorMs, leaseMs] of cases) {
    assert.equal(startDelayMsMax(timeoutMs), startDelayMs, `start delay at ${timeoutMs} ms`);
    assert.equal(leaseFloorMs(timeoutMs), floorMs, `floor at ${timeoutMs} ms`);
    assert.equal(claimLeaseMs(timeoutMs), leaseMs, `lease at ${timeoutMs} ms`);
  }
});

Deno.test("lease floor: the default config's lease and the floor itself are accepted, one millisecond under it refused", async () => {
  await withHttpFixture((f) => {
    const timeoutMs = configDefaults.WEBHOOK_TIMEOUT_MS;
    dispatcher(f, timeoutMs, claimLeaseMs(timeoutMs));
    dispatcher(f, timeoutMs, 22_640);
    assert.throws(() => dispatcher(f, timeoutMs, 22_639), {
      message: "leaseMs must outlast an attempt: at least 22640 ms, not 22639 ms",
    });
    // The multi-node tests' short timeout allows a lease under 2 s.
    dispatcher(f, 500, 1_940);
    assert.throws(() => dispatcher(f, 500, 1_939), {
      message: "leaseMs must outlast an attempt: at least 1940 ms, not 1939 ms",
    });
    return Promise.resolve();
  });
});
