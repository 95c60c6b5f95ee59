// The API page (#/api): the contract, openapi.yaml, made readable. The server hands it over as
// JSON (/client/openapi.json); this page lays out every operation with its parameters, request
// body and answers, the problem types and the schemas. Descriptions are Markdown, rendered by
// the rule books' renderer, so no text of the spec can become markup.

import { h } from "./dom.js";
import { renderMarkdown } from "./markdown.js";

const METHODS = ["get", "post", "put", "patch", "delete"];
const REF = "#/components/";

/** The page at #/api, or #/api/ANCHOR scrolled to an operation or schema. */
export async function apiPage(main, anchor, signal) {
  const response = await fetch("/client/openapi.json", { signal });
  if (!response.ok) throw new Error(`the API description could not be loaded (HTTP ${response.status})`);
  const spec = await response.json();
  if (signal.aborted) return;
  const operations = Object.entries(spec.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ path, method, item, operation: item[method] })));
  const tags = (spec.tags || []).map((tag) => tag.name);
  const schemas = Object.entries(spec.components?.schemas || {});
  document.title = `API · ${spec.info.title}`;
  main.replaceChildren(h("article", { class: "apidocs" },
    h("h1", {}, `${spec.info.title} API `, h("small", {}, `version ${spec.info.version}`)),
    h("p", {}, spec.info.summary || "", " ",
      h("a", { href: "/openapi.yaml", download: "openapi.yaml" }, "Download openapi.yaml"),
      " (OpenAPI ", spec.openapi, ") to generate a client."),
    h("nav", { class: "api-contents", "aria-label": "Operations" }, h("h2", {}, "Operations"),
      tags.map((tag) => {
        const mine = operations.filter(({ operation }) => (operation.tags || [])[0] === tag);
        return mine.length ? h("section", {}, h("h3", {}, tag), h("ul", {}, mine.map(({ path, method, operation }) =>
          h("li", {}, h("a", { href: `#/api/${operation.operationId}` }, h("code", {}, `${method.toUpperCase()} ${path}`)),
            ` ${operation.summary || ""}`)))) : null;
      }),
      h("p", {}, h("a", { href: "#/api/problems" }, "Problem types"), " · ", h("a", { href: "#/api/schemas" }, "Schemas"))),
    h("section", { class: "api-intro" }, h("h2", {}, "Overview"), renderMarkdown(spec.info.description || "")),
    h("section", {}, h("h2", {}, "Operations"), operations.map((entry) => operationSection(spec, entry))),
    problemSection(spec),
    h("section", { id: "schemas" }, h("h2", {}, "Schemas"), schemas.map(([name, schema]) => schemaSection(name, schema)))));
  if (anchor) document.getElementById(anchor)?.scrollIntoView();
}

/** The node at a local `$ref`, and its name. */
function resolve(spec, node) {
  if (!node?.$ref?.startsWith(REF)) return { node, name: null };
  const parts = node.$ref.slice(REF.length).split("/");
  return { node: parts.reduce((at, part) => at?.[part], spec.components), name: parts[parts.length - 1] };
}

/** A schema's type in a few words, with a link to a named schema. */
function typeOf(schema) {
  if (!schema) return "";
  if (schema.$ref) {
    const name = schema.$ref.split("/").pop();
    return schema.$ref.startsWith(`${REF}schemas/`) ? h("a", { href: `#/api/schema-${name}` }, name) : name;
  }
  for (const key of ["oneOf", "anyOf", "allOf"]) {
    if (schema[key]) return joined(schema[key].map(typeOf), key === "allOf" ? " and " : " or ");
  }
  if (schema.enum) return `one of ${schema.enum.map((value) => JSON.stringify(value)).join(", ")}`;
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  const types = [schema.type].flat().filter(Boolean);
  const words = types.map((type) => (type === "array" && schema.items ? ["array of ", typeOf(schema.items)] : type));
  return words.length ? joined(words, " or ") : "any";
}

function joined(parts, separator) {
  return parts.flatMap((part, index) => (index ? [separator, part] : [part]));
}

function markdown(text) {
  return text ? h("div", { class: "api-text" }, renderMarkdown(text)) : null;
}

function operationSection(spec, { path, method, item, operation }) {
  const parameters = [...(item.parameters || []), ...(operation.parameters || [])].map((parameter) => resolve(spec, parameter).node);
  const body = operation.requestBody && resolve(spec, operation.requestBody).node;
  const secured = (operation.security || spec.security || []).some((requirement) => Object.keys(requirement).length);
  return h("section", { class: "api-operation", id: operation.operationId },
    h("h3", {}, h("span", { class: `api-method ${method}` }, method.toUpperCase()), " ", h("code", {}, path)),
    h("p", { class: "api-summary" }, operation.summary || "",
      secured ? h("span", { class: "api-auth" }, " · seat token (Authorization: Bearer)") : null),
    markdown(operation.description),
    parameters.length ? h("table", { class: "api-table" },
      h("caption", {}, "Parameters"),
      h("thead", {}, h("tr", {}, ["Name", "In", "Type", "Description"].map((label) => h("th", { scope: "col" }, label)))),
      h("tbody", {}, parameters.map((parameter) => h("tr", {},
        h("td", {}, h("code", {}, parameter.name), parameter.required ? " (required)" : ""),
        h("td", {}, parameter.in), h("td", {}, typeOf(parameter.schema)), h("td", {}, markdown(parameter.description)))))) : null,
    body ? h("p", {}, "Request body: ", Object.entries(body.content || {}).map(([type, content]) =>
      [h("code", {}, type), " ", typeOf(content.schema)]), body.required ? " (required)" : "") : null,
    h("table", { class: "api-table" },
      h("caption", {}, "Answers"),
      h("thead", {}, h("tr", {}, ["Status", "Body", "Description"].map((label) => h("th", { scope: "col" }, label)))),
      h("tbody", {}, Object.entries(operation.responses || {}).map(([status, answer]) => {
        const { node } = resolve(spec, answer);
        return h("tr", {}, h("td", {}, status),
          h("td", {}, Object.entries(node?.content || {}).map(([type, content]) => h("div", {}, h("code", {}, type), " ", typeOf(content.schema)))),
          h("td", {}, markdown(node?.description)));
      }))));
}

/** Every problem `type` the API answers, as the `Problem` schema lists and explains them. */
function problemSection(spec) {
  const problem = spec.components?.schemas?.Problem;
  return h("section", { id: "problems" }, h("h2", {}, "Problem types"),
    h("p", {}, "Every error is ", h("code", {}, "application/problem+json"), " (RFC 9457) with one of these ", h("code", {}, "type"), "s:"),
    markdown(problem?.description));
}

function schemaSection(name, schema) {
  const required = new Set(schema.required || []);
  const properties = Object.entries(schema.properties || {});
  return h("section", { class: "api-schema", id: `schema-${name}` },
    h("h3", {}, name, " ", h("small", {}, typeOf({ ...schema, properties: undefined }))),
    markdown(schema.description),
    properties.length ? h("table", { class: "api-table" },
      h("thead", {}, h("tr", {}, ["Member", "Type", "Description"].map((label) => h("th", { scope: "col" }, label)))),
      h("tbody", {}, properties.map(([member, property]) => h("tr", {},
        h("td", {}, h("code", {}, member), required.has(member) ? " (required)" : ""),
        h("td", {}, typeOf(property)), h("td", {}, markdown(property.description)))))) : null);
}
