// The AI SDK's schemas are zod's, and zod probes for new Function when a
// schema is made (at the AI SDK's import): under a Content-Security-Policy
// without 'unsafe-eval' (docs/JSAPI.md's) that probe is a reported
// violation. jitless skips it (zod then parses without generated code). It
// must run before "ai" is imported: main.jsx imports this module first.
import { config } from "zod";

config({ jitless: true });
