// "mcpwasm/mcp.wasm": the WebAssembly module. Bundlers that handle assets
// give its URL (e.g. Vite's `import wasmURL from "mcpwasm/mcp.wasm?url"`);
// pass it to load({ wasmURL }) to place the asset yourself.
declare const wasmURL: string;
export default wasmURL;
