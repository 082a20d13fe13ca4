// After tsc: the generated types go beside the built code (tsc does not copy a .d.ts it
// was given), and the repository's licence into the package, where the repository has one.
import { copyFileSync, existsSync } from "node:fs";

copyFileSync("src/schema.d.ts", "dist/schema.d.ts");
if (existsSync("../../LICENSE")) copyFileSync("../../LICENSE", "LICENSE");
