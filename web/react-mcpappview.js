// react-mcpappview.js — the McpAppView component.
import { createElement, useEffect, useRef } from "react";
import { load } from "./mcp.js";
import { partialJSON } from "./partialjson.js";

/** The arguments prop as an object: given as one, or JSON text (a useAgent tool part's). */
function argsOf(a, partial) {
  if (typeof a !== "string") return a;
  if (partial) return partialJSON(a);
  try {
    const v = JSON.parse(a || "{}");
    return v !== null && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/**
 * A tool's view (MCP Apps; docs/JSAPI.md) for the component's lifetime:
 * mcp.apps.render into a div of its own, a new `result` sent to the view,
 * `theme` followed, and the view closed on unmount. Props: `catalog` (or
 * useCatalog's result) with `serverId`, or `client`; `tool`, `arguments`,
 * `result`, `sandboxUrl`, `theme`, `displayModes`, `initTimeoutMs`, `trust`
 * (a new grant list renders the view again), `offerTools` (with a
 * catalog: its model gets the view's own tools), `stateKey` (the view's
 * storage is kept under it; a useAgent part's app carries the one of its
 * stored conversation), `onMessage`,
 * `onOpenLink`, `onDownloadFile`, `onSampling`, `onModelContext`, `onReady(view)`, `onError(error)` (the
 * view could not be rendered, or failed later);
 * `className` and `style` for the div. A tool part of useAgent with `app`
 * renders as <McpAppView catalog={cat} {...part.app}
 * arguments={part.arguments} result={part.callResult} sandboxUrl={…} />;
 * one with `view` (known as the model writes the call) as the same with
 * {...part.view} and inputPending={part.state === "writing"}: arguments
 * may be the part's JSON text; while inputPending (from the first render
 * on) the view gets what the model wrote so far (tool-input-partial), then
 * the whole arguments once inputPending turns false.
 */
export function McpAppView(props) {
  const ref = useRef(null);
  const viewRef = useRef(null);
  const latest = useRef(props);
  latest.current = props;
  const streamed = useRef(null); // rendered with inputPending: {input: whether the whole input went}
  const given = props.catalog;
  const cat = (given && "catalog" in given && !(given instanceof EventTarget) ? given.catalog : given) ?? null;
  const client = props.client ?? null;
  const tool = typeof props.tool === "string" ? props.tool : props.tool?.tool?.name ?? props.tool?.name;
  const sandboxUrl = props.sandboxUrl === undefined ? undefined : String(props.sandboxUrl);
  const trust = Array.isArray(props.trust) ? props.trust.join(" ") : props.trust; // compared by value
  useEffect(() => {
    if (!cat && !client) return undefined; // the catalog is still loading
    let gone = false;
    let view = null;
    const p = latest.current;
    // A handler the view may use only when the page gave one (the view
    // is told what the host handles when it starts).
    const relay = (k) => (p[k] ? (...a) => latest.current[k]?.(...a) : undefined);
    const pending = p.inputPending === true;
    streamed.current = pending ? { input: false } : null;
    load()
      .then((mcp) => mcp.apps.render(ref.current, {
        catalog: cat ?? undefined, client: cat ? undefined : client, serverId: p.serverId, tool,
        arguments: pending ? undefined : argsOf(p.arguments, false), result: pending ? undefined : p.result, inputPending: pending,
        sandboxUrl, theme: p.theme, displayModes: p.displayModes, initTimeoutMs: p.initTimeoutMs, trust: p.trust,
        offerTools: cat ? p.offerTools : undefined, stateKey: p.stateKey,
        onMessage: relay("onMessage"), onOpenLink: relay("onOpenLink"),
        onDownloadFile: relay("onDownloadFile"), onSampling: relay("onSampling"), onModelContext: relay("onModelContext"),
      }))
      .then((v) => {
        if (gone) return v.close();
        view = viewRef.current = v;
        v.addEventListener("ready", () => latest.current.onReady?.(v), { once: true });
        v.addEventListener("error", (e) => {
          if (v.state !== "failed") return; // a teardown the view did not answer
          if (latest.current.onError) latest.current.onError(e.detail);
          else console.warn(`mcp: McpAppView: ${e.detail.message}`);
        });
        if (pending) send(v, latest.current);
        if (latest.current.result && (pending || latest.current.result !== p.result)) v.sendToolResult(latest.current.result);
      }, (error) => {
        if (gone) return;
        if (latest.current.onError) latest.current.onError(error);
        else console.warn(`mcp: McpAppView: ${error.message}`);
      });
    return () => {
      gone = true;
      viewRef.current = null;
      view?.close();
    };
  }, [cat, client, props.serverId, tool, sandboxUrl, trust, props.stateKey]);
  // A view rendered while the model wrote the call: what it wrote so far,
  // then the whole input (the host keeps a result until the input went).
  const send = (v, q) => {
    const s = streamed.current;
    if (!s || s.input) return;
    if (q.inputPending) {
      const partial = argsOf(q.arguments, true);
      if (partial) v.sendToolInputPartial(partial);
      return;
    }
    s.input = true;
    v.sendToolInput(argsOf(q.arguments, false) ?? {});
  };
  const argsKey = typeof props.arguments === "string" ? props.arguments : JSON.stringify(props.arguments ?? null);
  useEffect(() => {
    if (viewRef.current) send(viewRef.current, latest.current);
  }, [argsKey, props.inputPending]);
  useEffect(() => {
    if (props.result && viewRef.current) viewRef.current.sendToolResult(props.result);
  }, [props.result]);
  useEffect(() => {
    if (props.theme && viewRef.current) viewRef.current.setTheme(props.theme);
  }, [props.theme]);
  return createElement("div", { ref, className: props.className, style: props.style, "data-mcp-app-view": tool ?? "" });
}
