// errors.js — MCPError, the error every rejection of the API uses, and
// how errors from Go and from the page's own checks become one.
import { CODES } from "./jsapi.js";

/** The error every rejection of this API uses; `code` is one of CODES. */
export class MCPError extends Error {
  /**
   * code: one of CODES; message: one sentence a person can act on;
   * options: status (HTTP), detail (what happened underneath, for
   * developers), rpcCode (the server's JSON-RPC error code), cause.
   */
  constructor(code, message, options = {}) {
    super(message, options.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = "MCPError";
    this.code = code;
    if (options.status) this.status = options.status;
    if (options.detail) this.detail = options.detail;
    if (typeof options.rpcCode === "number") this.rpcCode = options.rpcCode;
  }
}

const KNOWN_CODES = new Set(CODES);

export function asMCPError(e, fallbackCode = "protocol") {
  if (e instanceof MCPError) return e;
  if (e && e.name === "AbortError") return new MCPError("aborted", "aborted", { cause: e });
  const message = e && typeof e.message === "string" ? e.message : String(e);
  return new MCPError(fallbackCode, message, { cause: e });
}

/** An MCPError from Go's JSON or factory call; its detail goes to the console at debug level. */
export function goError(code, message, status, detail, rpcCode) {
  if (detail && detail !== message) console.debug(`mcp: ${message}\n  detail: ${detail}`);
  return new MCPError(KNOWN_CODES.has(code) ? code : "protocol", message, { status, detail, rpcCode });
}
export const errorOf = (e) => goError(e.code, e.message, e.status, e.detail, e.rpcCode);
export const invalid = (message) => new MCPError("invalid_argument", message);
export const closedError = () => new MCPError("closed", "this client is closed; create a new one with mcp.client()");
