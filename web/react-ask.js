// react-ask.js — askUser: the catalog's approve and onElicitation hooks
// that ask the person through a mounted useAgent.

/** The mounted useAgent stores, in the order they mounted (askUser's routes). */
export const agentStores = new Set();

/**
 * A question from the catalog's approve or onElicitation hook goes to a
 * mounted useAgent of that catalog (any, when the catalog is unknown): the
 * one whose turn runs, else the latest mounted. With none mounted nobody
 * can answer, so the question is refused at once.
 */
export function ask(catalog, kind, request, ctx) {
  const stores = [...agentStores].filter((s) => !catalog || !s.catalog || s.catalog === catalog);
  const to = stores.findLast((s) => s.running) ?? stores.at(-1);
  if (!to) {
    console.warn(`mcp: useAgent: ${kind === "approval" ? `the call of ${request?.name ?? "a tool"} was refused` : "an elicitation was cancelled"}: no useAgent is mounted to ask the user`);
    return Promise.resolve(refusal(kind));
  }
  return to.ask(kind, request, ctx);
}

/** The answer to a question nobody answered (a stop, an unmount). */
export const refusal = (kind) => (kind === "approval" ? false : { action: "cancel" });

/**
 * Pass it as the catalog's approve (and onElicitation) option in
 * useCatalog's config: each question then waits in the pending list of the
 * catalog's useAgent until the page answers it with approve(answer) (or
 * answerElicitation(answer)). Called plainly (a catalog made with
 * mcp.catalog()), it asks the mounted useAgent whose turn runs.
 */
export function askUser(request, ctx) {
  const elicitation = ctx !== undefined || (request !== null && typeof request === "object" && "requestedSchema" in request);
  return ask(null, elicitation ? "elicitation" : "approval", request, ctx);
}

