// What `npm pack` puts in the package: the built ESM and its types (with the generated
// schema they import), the README and the licence; no sources of the tests.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const PACKAGE = fileURLToPath(new URL("../../", import.meta.url));

test("npm pack holds dist (ESM and .d.ts), README and LICENSE, and nothing of the tests", () => {
  // --ignore-scripts: the build just ran; prepack would only build it again.
  const out = execFileSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: PACKAGE,
    encoding: "utf8",
  });
  const [packed] = JSON.parse(out) as [{ name: string; files: { path: string }[] }];
  const files = packed.files.map((f) => f.path).sort();
  assert.equal(packed.name, "taisce-client");
  for (const file of [
    "package.json",
    "README.md",
    "dist/index.js",
    "dist/index.d.ts",
    "dist/client.js",
    "dist/errors.js",
    "dist/schema.d.ts",
  ]) {
    assert.ok(files.includes(file), `${file} not in ${files.join(", ")}`);
  }
  // The licence file is copied from the repository's at pack time, where there is one.
  if (existsSync(join(PACKAGE, "LICENSE"))) assert.ok(files.includes("LICENSE"));
  assert.ok(
    !files.some((f) => f.startsWith("dist-test/") || f.startsWith("src/")),
    files.join(", "),
  );
  const manifest = JSON.parse(readFileSync(join(PACKAGE, "package.json"), "utf8"));
  assert.equal(manifest.type, "module");
  assert.equal(manifest.license, "Apache-2.0");
  assert.equal(manifest.exports["."].types, "./dist/index.d.ts");
});
