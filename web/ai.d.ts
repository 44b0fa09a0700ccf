// Type declarations for ai.js, a catalog's tools as an AI SDK ToolSet
// ("mcpwasm/ai"). The AI SDK ("ai", version 7) is an optional peer
// dependency: an app that imports this module installs it.
import type { ToolSet } from "ai";
import type { ApprovalRequest, Catalog } from "./mcp.js";

/** What approve is asked: the catalog's ApprovalRequest and the SDK's tool call id. */
export interface AIApprovalRequest extends ApprovalRequest {
  toolCallId?: string;
}

export interface ToolsFromCatalogOptions {
  /**
   * Asked before every call of the set, one question per server at a time:
   * true runs it, "always" runs it and every later call of this tool of
   * the set, "server" every tool of the server; anything else (or a
   * rejection) refuses, and the model reads "The user refused to run …".
   * The catalog's own approvalPolicy and approve apply after it. signal
   * is the call's (the SDK's abortSignal): when it aborts, the call is
   * over and the page can withdraw its question.
   */
  approve?: (request: AIApprovalRequest, context: { signal?: AbortSignal }) =>
    boolean | "always" | "server" | Promise<boolean | "always" | "server">;
  /** Aborts listing the tools (cat.tools()). */
  signal?: AbortSignal;
}

/**
 * The catalog's tools as an AI SDK ToolSet (dynamic tools keyed by their
 * catalog names) for streamText, generateText, ToolLoopAgent and useChat.
 * Each execute calls cat.callTool() with the SDK's abortSignal and returns
 * its CallToolResult (an isError result for every failure but an abort);
 * the model reads its text (toModelOutput). The set is the tool list of
 * now: make it again on the catalog's toolschanged.
 */
export function toolsFromCatalog(cat: Catalog, options?: ToolsFromCatalogOptions): Promise<ToolSet>;
