/**
 * The deterministic money simulation (tests/sim/): SIM_SEEDS seeds (default 500), each a random
 * interleaving of creates, choices, cancels and re-offers through every surface, cutoffs, bank
 * answers (taken, refused, unknown), hand uploads and voids, returns before and after settlement,
 * notices of change, funding debits and their returns, crashes at write-unit boundaries and clock
 * jumps, with the money invariants checked after every step and after a final drain. A failing
 * seed prints its steps and the command that replays it (`deno task sim --seed S`).
 * SIM_FROM moves the first seed; SIM_STEPS the steps per seed.
 */
import assert from "node:assert/strict";
import { createTemplate, removeTemplate } from "./sim/world.ts";
import { runSeed } from "./sim/run.ts";
import { describe } from "./sim/report.ts";

const SEEDS = Number(Deno.env.get("SIM_SEEDS") ?? 500);
const FROM = Number(Deno.env.get("SIM_FROM") ?? 1);
const STEPS = Deno.env.get("SIM_STEPS") ? Number(Deno.env.get("SIM_STEPS")) : undefined;

/** Runs `fn` with the service's job-failure log lines kept back (the simulation causes many). */
async function quietly<T>(fn: () => Promise<T>): Promise<T> {
  const error = console.error;
  const warn = console.warn;
  console.error = () => {};
  console.warn = () => {};
  try {
    return await fn();
  } finally {
    console.error = error;
    console.warn = warn;
  }
}

Deno.test(`money simulation: ${SEEDS} seeds keep every invariant`, async () => {
  const template = await createTemplate();
  try {
    const failures: string[] = [];
    for (let seed = FROM; seed < FROM + SEEDS; seed++) {
      const result = await quietly(() => runSeed(template, seed, { steps: STEPS }));
      if (!result.ok) failures.push(describe(result, { steps: STEPS }));
    }
    assert.deepEqual(failures, [], failures.join("\n\n"));
  } finally {
    await removeTemplate(template);
  }
});

Deno.test("money simulation: a seed replays with the same steps and outcomes", async () => {
  const template = await createTemplate();
  try {
    for (const seed of [3, 17, 42]) {
      const first = await quietly(() => runSeed(template, seed));
      const second = await quietly(() => runSeed(template, seed));
      assert.ok(first.steps.length > 40, `seed ${seed} ran ${first.steps.length} steps`);
      assert.equal(second.trace, first.trace, `seed ${seed} replayed differently`);
    }
  } finally {
    await removeTemplate(template);
  }
});
