import assert from "node:assert/strict";
import { Metrics } from "../lib/platform/metrics.ts";

Deno.test("API traffic counts as going on while requests run and for 10 ms after the last", async () => {
  const metrics = new Metrics();
  assert.equal(metrics.apiBusy, false, "idle at start");
  metrics.requestStarted();
  assert.equal(metrics.apiBusy, true);
  metrics.requestFinished();
  assert.equal(metrics.inFlight, 0);
  assert.equal(metrics.apiBusy, true, "a keep-alive client's next request is about to come");
  await new Promise((resolve) => setTimeout(resolve, 25));
  assert.equal(metrics.apiBusy, false);
});
