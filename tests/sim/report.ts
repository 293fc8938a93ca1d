/** How a seed is told: its verdict, its steps and the command that replays it. */
import type { SeedResult } from "./run.ts";

/** The step list of a seed, and the command that replays it. */
export function describe(
  result: SeedResult,
  options: { steps?: number; openBugs?: readonly string[] },
): string {
  const flags = [
    `--seed ${result.seed}`,
    ...(options.steps ? [`--steps ${options.steps}`] : []),
    ...(options.openBugs ?? []).map((bug) => `--open-bug ${bug}`),
  ].join(" ");
  return [
    `seed ${result.seed}: ${result.ok ? "ok" : `FAILED: ${result.failure}`}`,
    ...result.steps.map((s) => `  ${String(s.index).padStart(3)} ${s.step} -> ${s.outcome}`),
    `replay: deno task sim ${flags}`,
  ].join("\n");
}
