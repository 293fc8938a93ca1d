/** Time as the domain sees it: injectable so tests and the sandbox can move it. */
export interface Clock {
  /** Milliseconds since the epoch, UTC. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/** A clock tests move by hand. */
export class FakeClock implements Clock {
  constructor(private current: number = Date.UTC(2026, 0, 5, 15, 0, 0)) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
  set(ms: number): void {
    this.current = ms;
  }
}

/**
 * Resolves once `ms` have passed. Not setTimeout: in Deno 2.9 its first call loads the Node
 * compatibility layer (it returns Node's Timeout objects), 15 to 40 ms of a cold start here.
 */
export function elapsed(ms: number): Promise<void> {
  return new Promise((resolve) =>
    AbortSignal.timeout(ms).addEventListener("abort", () => resolve(), { once: true })
  );
}
