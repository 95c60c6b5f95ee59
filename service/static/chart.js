// The scores over a game as an SVG line chart, one line per seat, with a marker at the version
// shown. Clicking the chart jumps to the version under the pointer.

const SVG = "http://www.w3.org/2000/svg";
const WIDTH = 640;
const HEIGHT = 200;
const PAD = 28;

function svg(tag, attributes = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  return node;
}

/**
 * @param timeline [[version, [score per seat]], ...] in version order
 * @param names the seats' names
 * @param version the version to mark
 * @param onPick called with a version when the chart is clicked
 */
export function scoreChart(timeline, names, version, onPick) {
  const last = timeline.length ? timeline[timeline.length - 1][0] : 1;
  const first = timeline.length ? timeline[0][0] : 0;
  const values = timeline.flatMap(([, scores]) => scores);
  const low = Math.min(0, ...values);
  const high = Math.max(1, ...values);
  const x = (v) => PAD + ((v - first) / Math.max(1, last - first)) * (WIDTH - 2 * PAD);
  const y = (s) => HEIGHT - PAD - ((s - low) / (high - low)) * (HEIGHT - 2 * PAD);
  const summary = names.map((name, seat) => {
    const final = timeline.length ? timeline[timeline.length - 1][1][seat] : 0;
    return `${name} ${final}`;
  }).join(", ");
  const chart = svg("svg", { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: "chart", role: "img" });
  const title = svg("title");
  title.textContent = `Scores by version, 1 to ${last}; at the end: ${summary}`;
  chart.append(title);
  chart.append(svg("line", { x1: PAD, y1: y(low), x2: WIDTH - PAD, y2: y(low), class: "axis" }));
  chart.append(svg("line", { x1: PAD, y1: PAD, x2: PAD, y2: HEIGHT - PAD, class: "axis" }));
  for (const [value, anchor] of [[low, HEIGHT - PAD], [high, PAD]]) {
    const label = svg("text", { x: PAD - 4, y: anchor + 4, "text-anchor": "end", class: "tick" });
    label.textContent = String(value);
    chart.append(label);
  }
  names.forEach((_, seat) => {
    // A step line: a score holds until the version that changes it.
    let path = "";
    timeline.forEach(([v, scores], index) => {
      path += index === 0 ? `M${x(v)},${y(scores[seat])}` : `H${x(v)}V${y(scores[seat])}`;
    });
    chart.append(svg("path", { d: path, class: `line seat-${seat % 6}` }));
  });
  chart.append(svg("line", { x1: x(version), y1: PAD, x2: x(version), y2: HEIGHT - PAD, class: "marker" }));
  chart.addEventListener("click", (event) => {
    const box = chart.getBoundingClientRect();
    const at = ((event.clientX - box.left) / box.width) * WIDTH;
    const picked = Math.round(first + ((at - PAD) / (WIDTH - 2 * PAD)) * (last - first));
    onPick(Math.min(last, Math.max(1, picked)));
  });
  return chart;
}

/** The chart's legend: each seat's colour and name. */
export function legend(names, h) {
  return h("ul", { class: "legend" }, names.map((name, seat) =>
    h("li", {}, h("span", { class: `swatch seat-${seat % 6}`, "aria-hidden": "true" }), name)));
}
