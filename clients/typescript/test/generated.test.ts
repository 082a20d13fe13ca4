// src/schema.d.ts is generated from docs/openapi.json (`npm run generate`) and committed:
// generating it again must give the same file, so the types cannot drift from the API.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const PACKAGE = fileURLToPath(new URL("../../", import.meta.url));

test("the committed schema.d.ts is what openapi-typescript makes of docs/openapi.json", () => {
  const scratch = mkdtempSync(join(tmpdir(), "taisce-ts-schema-"));
  try {
    const fresh = join(scratch, "schema.d.ts");
    // The very command of `npm run generate`, writing elsewhere.
    const manifest = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8"));
    const [command, ...args] = (manifest.scripts.generate as string).split(" ");
    assert.equal(command, "openapi-typescript");
    const output = args.indexOf("-o") + 1;
    assert.equal(args[output], "src/schema.d.ts");
    args[output] = fresh;
    const cli = join(PACKAGE, "node_modules", "openapi-typescript", "bin", "cli.js");
    execFileSync(process.execPath, [cli, ...args], {
      cwd: PACKAGE,
      stdio: "pipe",
    });
    const committed = readFileSync(join(PACKAGE, "src", "schema.d.ts"), "utf8");
    const generated = readFileSync(fresh, "utf8");
    assert.ok(generated.includes('"/v1/recalls"'), "the generated file describes the API");
    assert.ok(
      committed === generated,
      "src/schema.d.ts is stale: run `npm run generate` in clients/typescript and commit it",
    );
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});

test("the generated file describes every route of docs/openapi.json", () => {
  const document = JSON.parse(
    readFileSync(join(PACKAGE, "..", "..", "docs", "openapi.json"), "utf8"),
  ) as { paths: Record<string, unknown> };
  const committed = readFileSync(join(PACKAGE, "src", "schema.d.ts"), "utf8");
  const routes = Object.keys(document.paths);
  assert.ok(routes.length >= 14, routes.join(", "));
  for (const route of routes) assert.ok(committed.includes(`"${route}": {`), route);
});
