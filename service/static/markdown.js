// A small Markdown renderer for the rule books: it builds DOM nodes and puts every piece of text
// in with textContent (through `h`), never as HTML, so a rule book can carry no markup of its own.
// It knows what the rule books use: headings, paragraphs, bullet and numbered lists (nested by
// indentation), tables, fenced code, block quotes, and inline **strong**, *emphasis*, `code`
// and [links](#/...).

import { h } from "./dom.js";

const HEADING = /^(#{1,6})\s+(.*)$/;
const ITEM = /^(\s*)([-*]|\d+[.)])\s+(.*)$/;
const FENCE = /^\s*```/;
const TABLE_RULE = /^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$/;
const INLINE = /(\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*|_([^_\s][^_]*)_|`([^`]+)`|\[([^\]]+)\]\(([^)\s]+)\))/;

/** The nodes of `text` (one rule book), to append to a container. */
export function renderMarkdown(text) {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const nodes = [];
  let at = 0;
  while (at < lines.length) {
    const line = lines[at];
    if (!line.trim()) { at += 1; continue; }
    const heading = line.match(HEADING);
    if (heading) {
      const level = heading[1].length;
      nodes.push(h(`h${level}`, { id: slug(heading[2]) }, inline(heading[2])));
      at += 1;
    } else if (FENCE.test(line)) {
      const code = [];
      at += 1;
      while (at < lines.length && !FENCE.test(lines[at])) code.push(lines[at++]);
      at += 1; // the closing fence
      nodes.push(h("pre", {}, h("code", {}, code.join("\n"))));
    } else if (ITEM.test(line)) {
      const block = [];
      while (at < lines.length && (ITEM.test(lines[at]) || (lines[at].trim() && /^\s+/.test(lines[at])))) {
        block.push(lines[at++]);
      }
      nodes.push(list(block));
    } else if (line.trim().startsWith("|") && TABLE_RULE.test(lines[at + 1] ?? "")) {
      const rows = [];
      while (at < lines.length && lines[at].trim().startsWith("|")) rows.push(lines[at++]);
      nodes.push(table(rows));
    } else if (line.startsWith(">")) {
      const quoted = [];
      while (at < lines.length && lines[at].startsWith(">")) quoted.push(lines[at++].replace(/^>\s?/, ""));
      nodes.push(h("blockquote", {}, renderMarkdown(quoted.join("\n"))));
    } else {
      const paragraph = [];
      while (at < lines.length && lines[at].trim() && !startsBlock(lines, at)) paragraph.push(lines[at++].trim());
      nodes.push(h("p", {}, inline(paragraph.join(" "))));
    }
  }
  return nodes;
}

function startsBlock(lines, at) {
  const line = lines[at];
  return HEADING.test(line) || FENCE.test(line) || ITEM.test(line) || line.startsWith(">")
    || (line.trim().startsWith("|") && TABLE_RULE.test(lines[at + 1] ?? ""));
}

/** A heading's anchor: its words, lower case, joined by dashes. */
function slug(text) {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
}

/** A (possibly nested) list from its lines: an item's continuation lines are indented. */
function list(lines) {
  const indent = (line) => line.match(/^\s*/)[0].length;
  const base = indent(lines[0]);
  const ordered = /^\s*\d/.test(lines[0]);
  const items = [];
  for (const line of lines) {
    const item = line.match(ITEM);
    if (item && indent(line) <= base) items.push({ text: [item[3]], nested: [] });
    else if (items.length && item) items[items.length - 1].nested.push(line);
    else if (items.length && items[items.length - 1].nested.length) items[items.length - 1].nested.push(line);
    else if (items.length) items[items.length - 1].text.push(line.trim());
  }
  return h(ordered ? "ol" : "ul", {}, items.map((item) =>
    h("li", {}, inline(item.text.join(" ")), item.nested.length ? list(item.nested) : null)));
}

function cells(row) {
  return row.trim().replace(/^\||\|$/g, "").split("|").map((cell) => cell.trim());
}

function table(rows) {
  const [head, , ...body] = rows;
  return h("div", { class: "table-wrap" }, h("table", {},
    h("thead", {}, h("tr", {}, cells(head).map((cell) => h("th", { scope: "col" }, inline(cell))))),
    h("tbody", {}, body.map((row) => h("tr", {}, cells(row).map((cell) => h("td", {}, inline(cell))))))));
}

/** Inline text: strong, emphasis, code and links, everything else as plain text. */
function inline(text) {
  const parts = [];
  let rest = text;
  let match;
  while ((match = rest.match(INLINE))) {
    if (match.index) parts.push(rest.slice(0, match.index));
    const [whole, , strong, em, underscored, code, label, href] = match;
    if (strong !== undefined) parts.push(h("strong", {}, inline(strong)));
    else if (em !== undefined || underscored !== undefined) parts.push(h("em", {}, inline(em ?? underscored)));
    else if (code !== undefined) parts.push(h("code", {}, code));
    else parts.push(link(label, href));
    rest = rest.slice(match.index + whole.length);
  }
  if (rest) parts.push(rest);
  return parts;
}

/** Only links within this client, to other rule books, or to http(s) pages are live. */
function link(label, href) {
  const book = href.match(/^(?:\.\/)?([a-z0-9]+)\.md(#[\w-]+)?$/);
  if (book) return h("a", { href: `#/rules/${book[1]}` }, inline(label));
  if (/^(#\/|https?:\/\/)/.test(href)) return h("a", { href }, inline(label));
  return h("span", {}, inline(label));
}
