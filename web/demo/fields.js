// fields.js — form fields generated from a JSON Schema object (a tool's
// inputSchema, an elicitation's requestedSchema).
//
//   string            → text input (email/url/date/… by format), or a select for enum
//   number / integer  → number input (step 1 for integers, min/max from the schema)
//   boolean           → checkbox
//   anything else     → a JSON textarea, parsed when the form is read
//
// Required fields are marked and use native validation; titles become
// labels and descriptions are linked with aria-describedby. A default is
// not typed into the field (typing would add to it: "2" then "40" became
// "240"): it shows as the placeholder, and an empty field sends it. A
// schema example shows as the placeholder too, but is never sent.
// Every value is set as text or a property: nothing from the schema is parsed
// as HTML.

const INPUT_FORMATS = { email: "email", uri: "url", url: "url", date: "date", time: "time", "date-time": "datetime-local" };

/** The first non-null type of a property ("string", "number", …), or "" when untyped. */
export function primaryType(prop) {
  const t = prop?.type;
  if (Array.isArray(t)) return t.find((x) => x !== "null") ?? "";
  if (typeof t === "string") return t;
  if (Array.isArray(prop?.enum)) return typeof prop.enum[0] === "string" ? "string" : "";
  return "";
}

/** [{value, label}] for enum / oneOf-const / anyOf-const properties, else null. */
export function enumOptions(prop) {
  if (!prop || typeof prop !== "object") return null;
  if (Array.isArray(prop.enum) && prop.enum.length) {
    const names = Array.isArray(prop.enumNames) ? prop.enumNames : [];
    return prop.enum.map((v, i) => ({ value: v, label: String(names[i] ?? (typeof v === "string" ? v : JSON.stringify(v))) }));
  }
  const alts = prop.oneOf ?? prop.anyOf;
  if (Array.isArray(alts) && alts.length && alts.every((a) => a && "const" in a)) {
    return alts.map((a) => ({ value: a.const, label: String(a.title ?? a.const) }));
  }
  const items = prop.items;
  if (primaryType(prop) === "array" && items && (Array.isArray(items.enum) || items.anyOf || items.oneOf)) {
    return null; // multi-select arrays fall back to JSON
  }
  return null;
}

function safeId(s) {
  return String(s).replace(/[^A-Za-z0-9_-]/g, "_");
}

/**
 * Fills container with one field per property of schema and returns
 * { count, read } where read() returns the argument object, or null when a
 * field is invalid (its validity message is set; call form.reportValidity()).
 */
export function buildFields(container, schema, { idPrefix, h }) {
  container.replaceChildren();
  const props = schema && typeof schema === "object" && schema.properties && typeof schema.properties === "object" ? schema.properties : {};
  const required = new Set(Array.isArray(schema?.required) ? schema.required : []);
  const readers = [];
  // Required fields first (servers written in Go, for one, send properties
  // in alphabetical order, so the schema's order carries little meaning).
  const entries = Object.entries(props);
  entries.sort(([a], [b]) => Number(required.has(b)) - Number(required.has(a)));
  entries.forEach(([name, prop], i) => {
    const { el, read } = field(name, prop ?? {}, required.has(name), `${idPrefix}-${i}-${safeId(name)}`, h);
    container.append(el);
    readers.push([name, read]);
  });
  return {
    count: readers.length,
    read() {
      const out = {};
      let ok = true;
      for (const [name, read] of readers) {
        const r = read();
        if (r.error) ok = false;
        else if (r.value !== undefined) out[name] = r.value;
      }
      return ok && container.closest("form")?.checkValidity() !== false ? out : null;
    },
  };
}

function field(name, prop, required, id, h) {
  const type = primaryType(prop);
  const options = enumOptions(prop);
  const descId = prop.description ? `${id}-desc` : undefined;
  const title = typeof prop.title === "string" && prop.title ? prop.title : name;
  const labelKids = [h("span", { class: "label-text", text: title })];
  if (title !== name) labelKids.push(h("code", { class: "prop-name", text: name }));
  if (required && prop.default === undefined) {
    labelKids.push(h("span", { class: "req", "aria-hidden": "true", title: "required", text: "*" }));
    labelKids.push(h("span", { class: "visually-hidden", text: " (required)" }));
  }
  const desc = descId && h("small", { id: descId, class: "hint", text: prop.description });
  const hasDefault = prop.default !== undefined;
  // What an empty field stands for, shown as its placeholder.
  const example = Array.isArray(prop.examples) && prop.examples.length ? prop.examples[0] : undefined;
  const shown = (v) => (typeof v === "string" ? v : JSON.stringify(v));
  const placeholder = hasDefault ? `Default: ${shown(prop.default)}` : example !== undefined ? `e.g. ${shown(example)}` : undefined;
  // A required field with a default may stay empty: the default is sent.
  const mustFill = required && !hasDefault;
  let control;
  let read;
  let kind = type || "json";

  if (options) {
    kind = "enum";
    control = h("select", { id, name, required, "aria-describedby": descId });
    if (!required || !hasDefault) control.append(h("option", { value: "", text: required ? "Choose…" : "—" }));
    options.forEach((o, i) => {
      const opt = h("option", { value: String(i), text: o.label });
      if (hasDefault && JSON.stringify(o.value) === JSON.stringify(prop.default)) opt.selected = true;
      control.append(opt);
    });
    read = () => ({ value: control.value === "" ? undefined : options[Number(control.value)].value });
  } else if (type === "boolean") {
    control = h("input", { id, name, type: "checkbox", "aria-describedby": descId });
    control.checked = prop.default === true;
    read = () => ({ value: control.checked });
    const label = h("label", { for: id, class: "check-label" }, control, ...labelKids);
    return { el: h("div", { class: "field field-check", dataset: { kind: "boolean" } }, label, desc), read };
  } else if (type === "number" || type === "integer") {
    control = h("input", {
      id, name, type: "number", inputmode: type === "integer" ? "numeric" : "decimal", required: mustFill,
      step: type === "integer" ? "1" : "any", "aria-describedby": descId, placeholder,
      min: typeof prop.minimum === "number" ? prop.minimum : undefined,
      max: typeof prop.maximum === "number" ? prop.maximum : undefined,
    });
    read = () => {
      if (control.value === "") return { value: hasDefault ? prop.default : undefined };
      const n = Number(control.value);
      if (!Number.isFinite(n) || (type === "integer" && !Number.isInteger(n))) {
        control.setCustomValidity(type === "integer" ? "Enter a whole number." : "Enter a number.");
        return { error: true };
      }
      control.setCustomValidity("");
      return { value: n };
    };
    control.addEventListener("input", () => control.setCustomValidity(""));
  } else if (type === "string") {
    control = h("input", {
      id, name, type: INPUT_FORMATS[prop.format] ?? "text", required: mustFill, autocomplete: "off", spellcheck: "false",
      "aria-describedby": descId, placeholder,
      minlength: Number.isInteger(prop.minLength) ? prop.minLength : undefined,
      maxlength: Number.isInteger(prop.maxLength) ? prop.maxLength : undefined,
      pattern: typeof prop.pattern === "string" ? htmlPattern(prop.pattern) : undefined,
    });
    read = () => {
      if (control.value !== "") return { value: control.value };
      if (hasDefault) return { value: prop.default };
      return { value: required ? "" : undefined };
    };
  } else {
    kind = "json";
    control = h("textarea", {
      id, name, rows: 3, required: mustFill, spellcheck: "false", class: "json-input", "aria-describedby": descId,
      placeholder: hasDefault ? `Default: ${JSON.stringify(prop.default)}` : example !== undefined ? `e.g. ${JSON.stringify(example)}`
        : type === "array" ? "[ ]" : type === "object" ? "{ }" : "JSON value",
    });
    read = () => {
      if (control.value.trim() === "") return { value: hasDefault ? prop.default : undefined };
      try {
        const v = JSON.parse(control.value);
        control.setCustomValidity("");
        return { value: v };
      } catch (e) {
        control.setCustomValidity(`Not valid JSON: ${e.message}`);
        return { error: true };
      }
    };
    control.addEventListener("input", () => control.setCustomValidity(""));
    labelKids.push(h("span", { class: "type-tag", text: type ? `${type}, JSON` : "JSON" }));
  }
  const label = h("label", { for: id, class: "field-label" }, ...labelKids);
  return { el: h("div", { class: "field", dataset: { kind } }, label, control, desc), read };
}

/**
 * HTML's pattern attribute is implicitly anchored and compiled with the v
 * flag; a JSON Schema pattern that does not compile that way is dropped
 * (the server validates anyway).
 */
function htmlPattern(p) {
  const stripped = p.replace(/^\^/, "").replace(/\$$/, "");
  const anchored = p.startsWith("^") && p.endsWith("$") ? stripped : `.*(?:${p}).*`;
  try {
    new RegExp(`^(?:${anchored})$`, "v");
    return anchored;
  } catch {
    return undefined;
  }
}
