/**
 * The HTTP fixture on a libSQL server: both environments' databases on a Hrana contract server
 * each (tests/hrana_server.ts), migrated once as `deno task admin migrate` does, so a test or a
 * bench can count what a request costs in round trips to the primary.
 */
import { migrateServer, openDatabase } from "../db/client.ts";
import type { Environment } from "../lib/platform/config.ts";
import { type HranaServer, startHranaServer } from "./hrana_server.ts";
import { type HttpFixture, openHttpFixture } from "./http_fixture.ts";

export interface RemoteHttpFixture extends HttpFixture {
  /** The contract server of each environment's database. */
  readonly primaries: Readonly<Record<Environment, HranaServer>>;
}

/** Opens the HTTP fixture with both databases on contract servers (delay 0 until set). */
export async function openRemoteHttpFixture(
  env: Record<string, string> = {},
): Promise<RemoteHttpFixture> {
  const dir = await Deno.makeTempDir({ prefix: "disbursement-remote-" });
  const primaries = {
    test: await startHranaServer({ path: `${dir}/test-primary.db` }),
    live: await startHranaServer({ path: `${dir}/live-primary.db` }),
  };
  const closePrimaries = async () => {
    await primaries.test.close();
    await primaries.live.close();
    await Deno.remove(dir, { recursive: true });
  };
  let fixture: HttpFixture;
  try {
    for (const primary of Object.values(primaries)) {
      await migrateServer(primary.url, { authToken: null, busyTimeoutMs: 5_000 });
    }
    fixture = await openHttpFixture(env, {
      openDatabase: (_dir, environment) =>
        openDatabase({
          environment,
          url: primaries[environment].url,
          busyTimeoutMs: 5_000,
          unitsPerGroupMax: 512,
          readCacheEntries: 10_000,
        }),
    });
  } catch (error) {
    await closePrimaries();
    throw error;
  }
  return {
    ...fixture,
    primaries,
    async close() {
      await fixture.close();
      await closePrimaries();
    },
  };
}
