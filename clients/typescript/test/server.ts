// A real `taisce serve --demo` for the tests: real HTTP, a real SQLite file in a temporary
// folder. The binary is $TAISCE_BIN, else the repository's .venv (made by `make install`).
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";

// dist-test/test/server.js -> the repository root.
export const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));

export interface DemoServer {
  url: string;
  /** The credential of project "demo", printed by `--demo` on its last line. */
  apiKey: string;
  stop(): Promise<void>;
}

export async function startDemoServer(timeoutMs = 60_000): Promise<DemoServer> {
  const bin = process.env.TAISCE_BIN ?? join(ROOT, ".venv", "bin", "taisce");
  const data = mkdtempSync(join(tmpdir(), "taisce-ts-"));
  // Only this server's settings: embeddings off (the model is slow to load, and recall
  // by names and words needs none).
  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith("TAISCE_")),
  );
  env.TAISCE_EMBEDDINGS = "none";
  // Port 0: the system picks a free port and the server prints its address.
  const args = ["serve", "--demo", "--host", "127.0.0.1", "--port", "0", "--data", data];
  const child = spawn(bin, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  let stderr = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const stop = async () => {
    await terminate(child);
    rmSync(data, { recursive: true, force: true });
  };
  try {
    const { url, apiKey } = await readStart(child, timeoutMs, () => stderr);
    await waitForHealth(url, timeoutMs);
    return { url, apiKey, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The address from "taisce serving URL" and the credential on the line after
 * "... paste the credential on the next line." */
function readStart(
  child: ChildProcess,
  timeoutMs: number,
  stderr: () => string,
): Promise<{ url: string; apiKey: string }> {
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    let url: string | undefined;
    let keyNext = false;
    const fail = (why: string) => {
      clearTimeout(timer);
      lines.close();
      reject(new Error(`taisce serve ${why}; stderr: ${stderr()}`));
    };
    const timer = setTimeout(() => fail(`did not start in ${timeoutMs} ms`), timeoutMs);
    child.once("exit", (code) => fail(`exited with ${code}`));
    child.once("error", (error) => fail(`could not start: ${error.message}`));
    lines.on("line", (line) => {
      const serving = /^taisce serving (http:\/\/\S+)/.exec(line);
      if (serving) url = serving[1];
      else if (keyNext && url) {
        clearTimeout(timer);
        child.removeAllListeners("exit");
        resolve({ url, apiKey: line.trim() });
      } else if (line.includes("credential on the next line")) keyNext = true;
    });
  });
}

async function waitForHealth(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const response = await fetch(`${url}/v1/health`);
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`${url}/v1/health did not answer in time`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function terminate(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGTERM");
  const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(killer);
}
