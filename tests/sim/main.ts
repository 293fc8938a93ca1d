/**
 * `deno task sim`: runs the money simulation over many seeds and prints seeds per minute.
 *
 *   deno task sim --seeds 2000             seeds 1..2000
 *   deno task sim --seed 1234              one seed, with its step list
 *   deno task sim --seeds 500 --from 9000  seeds 9000..9499
 *   --steps 60                             steps per seed (default 40)
 *   --open-bug NAME                        also generate the interleavings of that open bug
 *   --open-bugs                            ... of every open bug (OPEN_BUGS in run.ts)
 *
 * A failing seed prints itself, its steps and the command that replays it; the exit code is 1.
 */
import { parseArgs } from "node:util";
import { createTemplate, removeTemplate } from "./world.ts";
import { OPEN_BUGS, type OpenBug, runSeed } from "./run.ts";
import { describe } from "./report.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    seeds: { type: "string" },
    seed: { type: "string" },
    from: { type: "string" },
    steps: { type: "string" },
    "open-bugs": { type: "boolean" },
    "open-bug": { type: "string", multiple: true },
    verbose: { type: "boolean" },
    keep: { type: "boolean" },
  },
});

const steps = values.steps ? Number(values.steps) : undefined;
const openBugs: OpenBug[] = values["open-bugs"]
  ? Object.keys(OPEN_BUGS) as OpenBug[]
  : (values["open-bug"] ?? []).map((name) => {
    if (!(name in OPEN_BUGS)) {
      throw new Error(`--open-bug ${name}: one of ${Object.keys(OPEN_BUGS).join(", ")}`);
    }
    return name as OpenBug;
  });
const single = values.seed !== undefined ? Number(values.seed) : null;
const count = single !== null ? 1 : Number(values.seeds ?? 100);
const from = single ?? Number(values.from ?? 1);

// The service logs a failing job as a JSON line; a run shows them only for one seed.
const log = console.error;
if (single === null && !values.verbose) console.error = () => {};
const template = await createTemplate();
const started = performance.now();
let failures = 0;
try {
  for (let seed = from; seed < from + count; seed++) {
    const result = await runSeed(template, seed, { steps, openBugs, keep: values.keep });
    if (!result.ok) failures++;
    if (single !== null || !result.ok) console.log(describe(result, { steps, openBugs }));
    const done = seed - from + 1;
    if (single === null && done % 100 === 0) {
      const minutes = (performance.now() - started) / 60_000;
      console.log(`${done} seeds, ${failures} failed, ${(done / minutes).toFixed(0)} seeds/min`);
    }
  }
} finally {
  await removeTemplate(template);
  console.error = log;
}
const minutes = (performance.now() - started) / 60_000;
console.log(
  `${count} seeds (${from}..${from + count - 1}), ${failures} failed, ` +
    `${(count / minutes).toFixed(0)} seeds/min, ${(minutes * 60).toFixed(1)} s`,
);
if (failures > 0) Deno.exit(1);
