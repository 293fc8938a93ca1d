/**
 * How long this machine's disk takes to make a small write durable: the baseline's insert waits
 * for one such sync each, the service's creates for one per group, so the create's ratio to the
 * baseline moves with it from machine to machine.
 */

const SYNCS = 200;
const WRITE_BYTES = 4096;

/** The median of SYNCS appends of WRITE_BYTES to a temporary file, each followed by fdatasync. */
export async function measureDiskSync(): Promise<{ medianMs: number; syncs: number }> {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-disk-sync-" });
  const file = await Deno.open(`${dir}/sync.bin`, { write: true, create: true });
  try {
    const block = new Uint8Array(WRITE_BYTES).fill(1);
    const times: number[] = [];
    for (let i = 0; i < SYNCS; i++) {
      const started = performance.now();
      await file.write(block);
      await file.syncData();
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    return { medianMs: times[Math.floor(SYNCS / 2)], syncs: SYNCS };
  } finally {
    file.close();
    await Deno.remove(dir, { recursive: true });
  }
}
