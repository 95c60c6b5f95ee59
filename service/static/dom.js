// Building DOM nodes from data. Text always goes in as text nodes, never as HTML, so a player's
// name can never inject markup.

/** h("button", {class: "card", onclick: f, "aria-label": "7"}, "7", child, [more]) */
export function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "dataset") Object.assign(node.dataset, value);
    else if (value === true) node.setAttribute(name, "");
    else node.setAttribute(name, String(value));
  }
  append(node, children);
  return node;
}

function append(node, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(node, child);
    else node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Say `text` to screen readers through the page's polite live region. */
export function announce(text) {
  const region = document.getElementById("announcer");
  region.textContent = "";
  // A fresh text node after a tick makes repeated messages heard again.
  setTimeout(() => { region.textContent = text; }, 50);
}

export function plural(count, one, many = `${one}s`) {
  return `${count} ${count === 1 ? one : many}`;
}
