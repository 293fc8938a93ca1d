/**
 * The simulation's one source of chance: a seeded PRNG (sfc32, seeded through splitmix32) whose
 * draws decide every step, so a seed replays exactly. Nothing in the harness reads Math.random or
 * the system clock to decide.
 */
export class Prng {
  #a: number;
  #b: number;
  #c: number;
  #d: number;

  constructor(seed: number) {
    let state = seed >>> 0;
    const next = () => {
      state = (state + 0x9e3779b9) >>> 0;
      let z = state;
      z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
      z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
      return (z ^ (z >>> 16)) >>> 0;
    };
    this.#a = next();
    this.#b = next();
    this.#c = next();
    this.#d = next();
    for (let i = 0; i < 12; i++) this.uint32();
  }

  /** A uniform 32-bit unsigned integer. */
  uint32(): number {
    const t = (((this.#a + this.#b) >>> 0) + this.#d) >>> 0;
    this.#d = (this.#d + 1) >>> 0;
    this.#a = this.#b ^ (this.#b >>> 9);
    this.#b = (this.#c + (this.#c << 3)) >>> 0;
    this.#c = ((this.#c << 21) | (this.#c >>> 11)) >>> 0;
    this.#c = (this.#c + t) >>> 0;
    return t;
  }

  /** An integer in [min, max], both included. */
  int(min: number, max: number): number {
    return min + (this.uint32() % (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.uint32() / 0x1_0000_0000 < p;
  }

  /** One element of a non-empty list. */
  pick<T>(list: readonly T[]): T {
    if (list.length === 0) throw new Error("Prng.pick: the list is empty");
    return list[this.uint32() % list.length];
  }

  /** One key of `weights`, chosen in proportion to its weight (weights > 0 only). */
  weighted<K extends string>(weights: Readonly<Record<K, number>>): K {
    const entries = (Object.entries(weights) as [K, number][]).filter(([, w]) => w > 0);
    const total = entries.reduce((sum, [, w]) => sum + w, 0);
    let draw = this.uint32() % total;
    for (const [key, weight] of entries) {
      if (draw < weight) return key;
      draw -= weight;
    }
    return entries[entries.length - 1][0];
  }
}
