// partialjson.js — what a JSON object the model is still writing says so
// far: a tool call's arguments as they stream (toolcalldelta), for a view
// that shows them as they come (MCP Apps' tool-input-partial).

/** The closers (quote, brackets) that would end text where it stops. */
function closers(text) {
  const open = [];
  let inString = false;
  let escaped = false;
  for (const ch of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === "\\") escaped = true;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === "{") open.push("}");
    else if (ch === "[") open.push("]");
    else if (ch === "}" || ch === "]") open.pop();
  }
  return (inString ? '"' : "") + open.reverse().join("");
}

// How far back from the end a parse is tried: a cut within a few
// characters of the end (a key without its value, half a literal or an
// escape) always parses; further is a text that is not an object.
const MAX_TRIES = 64;

/**
 * partialJSON returns the object that text, the start of a JSON object,
 * says so far (an unfinished string cut where it stops, an unfinished key,
 * number or literal left out), or undefined when text does not start an
 * object.
 */
export function partialJSON(text) {
  if (typeof text !== "string" || !/^\s*\{/.test(text)) return undefined;
  for (let end = text.length, tries = 0; end > 0 && tries < MAX_TRIES; end--, tries++) {
    const head = text.slice(0, end);
    try {
      const v = JSON.parse(head + closers(head));
      if (v !== null && typeof v === "object" && !Array.isArray(v)) return v;
    } catch {
      // cut one more character
    }
  }
  return undefined;
}
