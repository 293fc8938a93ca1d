/**
 * A real OpenSSH server for the SFTP tests: Debian's /usr/sbin/sshd on 127.0.0.1 and a free port,
 * with throwaway ed25519 host and client keys in a temporary directory, the client's public key as
 * the only authorized key, and an outbound and an inbound directory inside that temporary
 * directory. The test stops it (and may start it again on the same port and keys) and removes
 * everything with `close()`.
 */
import type { SftpTarget } from "../lib/ach/bank_settings.ts";

const SSHD = "/usr/sbin/sshd";
const SSH_KEYGEN = "ssh-keygen";
/** sshd accepts connections about 60 ms after its start; give a slow machine far longer. */
const SSHD_START_TIMEOUT_MS = 10_000;

export interface TestSshd {
  readonly root: string;
  readonly port: number;
  /** `SHA256:…` of the server's host key, as ssh-keygen -lf prints it. */
  readonly hostKeyFingerprint: string;
  readonly outboundDir: string;
  readonly inboundDir: string;
  /** An SFTP target that logs in with the throwaway client key and checks the host key. */
  readonly target: SftpTarget;
  /** Whether the server process runs now. */
  running(): boolean;
  stop(): Promise<void>;
  start(): Promise<void>;
  /** Stops the server and removes its directory. */
  close(): Promise<void>;
}

async function run(command: string, args: string[]): Promise<string> {
  const output = await new Deno.Command(command, { args, stdout: "piped", stderr: "piped" })
    .output();
  if (!output.success) {
    throw new Error(`${command} ${args.join(" ")}: ${new TextDecoder().decode(output.stderr)}`);
  }
  return new TextDecoder().decode(output.stdout);
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const port = (listener.addr as Deno.NetAddr).port;
  listener.close();
  return port;
}

async function accepts(port: number): Promise<boolean> {
  try {
    const connection = await Deno.connect({ hostname: "127.0.0.1", port });
    connection.close();
    return true;
  } catch {
    return false;
  }
}

/** Starts an sshd with fresh keys; the caller must `close()` it. */
export async function startTestSshd(): Promise<TestSshd> {
  const root = await Deno.makeTempDir({ prefix: "disbursement-sshd-" });
  try {
    return await setUp(root);
  } catch (error) {
    await Deno.remove(root, { recursive: true });
    throw error;
  }
}

async function setUp(root: string): Promise<TestSshd> {
  // sshd refuses to start without its privilege separation directory.
  await Deno.mkdir("/run/sshd", { recursive: true }).catch(() => {});
  const hostKey = `${root}/host_ed25519`;
  const clientKey = `${root}/client_ed25519`;
  await run(SSH_KEYGEN, ["-q", "-t", "ed25519", "-N", "", "-f", hostKey]);
  await run(SSH_KEYGEN, ["-q", "-t", "ed25519", "-N", "", "-f", clientKey]);
  await Deno.copyFile(`${clientKey}.pub`, `${root}/authorized_keys`);
  const hostKeyFingerprint = (await run(SSH_KEYGEN, ["-l", "-f", `${hostKey}.pub`])).split(" ")[1];
  const outboundDir = `${root}/outbound`;
  const inboundDir = `${root}/inbound`;
  await Deno.mkdir(outboundDir);
  await Deno.mkdir(inboundDir);
  const port = freePort();
  const config = `${root}/sshd_config`;
  await Deno.writeTextFile(
    config,
    [
      `Port ${port}`,
      "ListenAddress 127.0.0.1",
      `HostKey ${hostKey}`,
      `PidFile ${root}/sshd.pid`,
      `AuthorizedKeysFile ${root}/authorized_keys`,
      "UsePAM no",
      "StrictModes no",
      "PasswordAuthentication no",
      "KbdInteractiveAuthentication no",
      "PermitRootLogin prohibit-password",
      // No umask of its own, as a bank's server may be: a file is created with the mode the client asks.
      "Subsystem sftp internal-sftp -u 0000",
      "",
    ].join("\n"),
  );
  const username = (await run("id", ["-un"])).trim();
  let child: Deno.ChildProcess | null = null;

  const sshd: TestSshd = {
    root,
    port,
    hostKeyFingerprint,
    outboundDir,
    inboundDir,
    target: {
      host: "127.0.0.1",
      port,
      username,
      privateKey: await Deno.readTextFile(clientKey),
      password: null,
      hostKeyFingerprint,
      outboundDir,
      inboundDir,
    },
    running: () => child !== null,
    async start() {
      if (child) return;
      child = new Deno.Command(SSHD, {
        args: ["-D", "-e", "-f", config],
        stdout: "null",
        stderr: "null",
      }).spawn();
      const deadline = Date.now() + SSHD_START_TIMEOUT_MS;
      while (!(await accepts(port))) {
        if (Date.now() > deadline) throw new Error(`sshd did not listen on ${port}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    async stop() {
      if (!child) return;
      const stopping = child;
      child = null;
      stopping.kill("SIGTERM");
      await stopping.status;
      // Its port is closed once the process is gone; sessions it forked end with it.
      while (await accepts(port)) await new Promise((resolve) => setTimeout(resolve, 20));
    },
    async close() {
      await sshd.stop();
      await Deno.remove(root, { recursive: true });
    },
  };
  await sshd.start();
  return sshd;
}
