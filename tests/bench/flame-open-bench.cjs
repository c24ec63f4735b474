// flame-open-bench: how long a flame graph takes to open and to zoom in
// Debian's chromium (run by export-bench; target: each within 2 s).
//
//   NODE_PATH=PREFIX/node_modules node flame-open-bench.cjs SVG [RUNS]
//
// Open: from navigation until the script has read every frame (its
// #matched element exists) and the page has painted.  Zoom: a click on
// the widest frame above the root until the next paint.  Medians of RUNS
// (default 5) runs, each in a new page.
"use strict";
const path = require("path");
const { pathToFileURL } = require("url");
const { launch } = require(path.join(__dirname, "..", "browser", "launch.cjs"));

const [svg, runsArg] = process.argv.slice(2);
const runs = parseInt(runsArg || "5", 10);

const painted = () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));

function median(v) {
  const s = v.slice().sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

(async () => {
  const browser = await launch();
  const open = [], zoom = [];
  let frames = 0;
  try {
    for (let i = 0; i < runs; i++) {
      const page = await browser.context.newPage();
      const errors = [];
      page.on("pageerror", (e) => errors.push(e.message));
      const t0 = Date.now();
      await page.goto(pathToFileURL(svg).href);
      await page.waitForSelector("#matched", { state: "attached" });
      await page.evaluate(painted);
      open.push(Date.now() - t0);
      // the widest frame one level above the root, found in the page
      const target = await page.evaluate(() => {
        const all = Array.from(document.querySelectorAll("#frames > g.f rect"));
        const rootY = parseFloat(all[0].getAttribute("y"));
        let best = all[0], bestW = -1;
        all.forEach((r) => {
          const w = parseFloat(r.getAttribute("width"));
          if (parseFloat(r.getAttribute("y")) === rootY - 17 && w > bestW && w < 1180) best = r, bestW = w;
        });
        const b = best.getBoundingClientRect();
        return { x: b.x, y: b.y, width: b.width, height: b.height, frames: all.length };
      });
      frames = target.frames;
      const box = target;
      const t1 = Date.now();
      await page.mouse.click(box.x + Math.min(box.width / 2, 5), box.y + box.height / 2);
      await page.evaluate(painted);
      zoom.push(Date.now() - t1);
      if (errors.length) throw new Error("page error: " + errors.join("; "));
      await page.close();
    }
  } finally {
    await browser.close();
  }
  const o = median(open), z = median(zoom);
  console.log("  %s: %d frames; open %d ms, zoom %d ms (median of %d; target 2000 ms each)%s",
    path.basename(svg), frames, o, z, runs, o > 2000 || z > 2000 ? "  (over target)" : "");
})().catch((e) => {
  console.error("flame-open-bench: " + (e && e.stack || e));
  process.exit(1);
});
