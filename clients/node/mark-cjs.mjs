// Marks dist/cjs as CommonJS (the package itself is ES modules), after tsconfig.cjs.json built it.
import { writeFileSync } from "node:fs";
writeFileSync(new URL("./dist/cjs/package.json", import.meta.url), '{ "type": "commonjs" }\n');
