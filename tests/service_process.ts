/** The service as a process of its own (`main.ts` on a free loopback port), for end-to-end tests. */
import { freePort } from "../bench/service.ts";

const mainPath = new URL("../main.ts", import.meta.url).pathname;

/** Production secrets for a start outside dev mode. */
export const SERVICE_SECRETS = {
  JWT_SECRET: "j".repeat(40),
  ENCRYPTION_KEY: btoa("e".repeat(32)),
  LIVE_NOTIFICATIONS: "off",
};

export interface ServiceProcess {
  readonly port: number;
  readonly baseUrl: string;
  /** SIGTERM, then waits for the process to end. */
  stop(): Promise<void>;
}

/**
 * Starts `main.ts` on DATA_DIR `dataDir` with `env` (and `--dev` when asked) and resolves once
 * /readyz answers 200; throws after 30 s. `command` wraps the argument list, e.g. in a shell.
 */
export async function startServiceProcess(
  dataDir: string,
  options: {
    dev?: boolean;
    env?: Record<string, string>;
    command?: (args: string[]) => { program: string; args: string[] };
  } = {},
): Promise<ServiceProcess> {
  const port = freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const args = ["run", "-A", "--unstable-cron", mainPath, ...(options.dev ? ["--dev"] : [])];
  const command = options.command?.(args) ?? { program: Deno.execPath(), args };
  const child = new Deno.Command(command.program, {
    args: command.args,
    env: {
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_FORMAT: "off",
      ...options.env,
    },
    stdout: "null",
    stderr: "null",
  }).spawn();
  const stop = async () => {
    child.kill("SIGTERM");
    await child.status;
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const ready = await fetch(`${baseUrl}/readyz`)
      .then((r) => r.body?.cancel().then(() => r.ok) ?? r.ok)
      .catch(() => false);
    if (ready) return { port, baseUrl, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error("the service did not become ready in 30 s");
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
