import { defineConfig } from "vite";
import react from "@vitejs/plugin-react";

export default defineConfig({
  plugins: [react()],
  // The dev server's pre-bundler would move mcpwasm's modules away from
  // mcp.wasm; `vite build` does not need this.
  optimizeDeps: { exclude: ["mcpwasm"] },
  build: {
    // Keep the wasm a separate, hashed asset (never inlined as base64).
    assetsInlineLimit: 0,
    // The AI SDK with zod is about 700 kB of script, one chunk.
    chunkSizeWarningLimit: 1000,
  },
});
