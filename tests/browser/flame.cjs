// flame: the exported flame graphs in a real browser (the meson test
// 'flame-browser', run by run-flame).
//
//   node flame.cjs CPU.svg HOSTILE.svg DIFF.svg SPEED.svg OUTDIR
//
// CPU.svg is diff-opt-base's export (300 samples: main 300, of which hot
// 200, helper 50, tail 30 and main's own 20), HOSTILE.svg hostile-names'
// (evil 3 of 9 samples, its child q"uote.a&b;c 2), DIFF.svg the diff of
// diff-opt-base and diff-opt-new (hot 200 -> 10 self samples, the rest
// within noise), SPEED.svg the diff of diff-speed-base and diff-speed-new
// (slow 40 -> 80 self samples, fast 80 -> 40, same 60 -> 60, of 180).
// Any console error, page error or dialog but the search prompt fails the
// test.  Screenshots go to OUTDIR.
"use strict";
const fs = require("fs");
const path = require("path");
const { pathToFileURL } = require("url");
const { launch } = require("./launch.cjs");

const [cpuSvg, hostileSvg, diffSvg, speedSvg, outDir] = process.argv.slice(2);
let failures = 0;

function check(ok, what) {
  if (ok) {
    console.log("ok   " + what);
  } else {
    console.log("FAIL " + what);
    failures++;
  }
}

function near(a, b) {
  return Math.abs(a - b) < 0.011;
}

// A page that fails on any script error; the search prompt gets `answer`.
async function open(context, file, problems) {
  const page = await context.newPage();
  page.on("console", (m) => { if (m.type() === "error") problems.push("console: " + m.text()); });
  page.on("pageerror", (e) => problems.push("page error: " + e.message));
  page.on("dialog", async (d) => {
    if (d.type() === "prompt" && page.answer !== undefined) {
      await d.accept(page.answer);
    } else {
      problems.push("unexpected " + d.type() + ": " + d.message());
      await d.dismiss();
    }
  });
  await page.goto(pathToFileURL(file).href);
  await page.waitForSelector("#matched", { state: "attached" });
  return page;
}

// Every frame's name (its title up to the value: the <title>, or the
// aria-label that replaces it once the script has read the frame, when
// hovered, zoomed or searched), geometry, fill, visibility and class, as
// the document holds them now.
async function frames(page) {
  return page.evaluate(() => Array.from(document.querySelectorAll("#frames > g.f"), (g) => {
    const r = g.querySelector("rect");
    const t = g.querySelector("title");
    const label = t ? t.textContent : g.getAttribute("aria-label") || "";
    return {
      name: label.slice(0, label.lastIndexOf(": ")),
      x: parseFloat(r.getAttribute("x")), w: parseFloat(r.getAttribute("width")),
      fill: getComputedStyle(r).fill, shown: getComputedStyle(g).display !== "none",
      cls: g.getAttribute("class"), label: (g.querySelector("text") || {}).textContent || "",
    };
  }));
}

function byName(list, name) {
  return list.find((f) => f.name === name);
}

async function frameHandle(page, name) {
  const handles = await page.$$("#frames > g.f");
  for (const h of handles) {
    const label = await h.evaluate((g) => {
      const t = g.querySelector("title");
      return t ? t.textContent : g.getAttribute("aria-label");
    });
    if (label && label.slice(0, label.lastIndexOf(": ")) === name) return h.$("rect");
  }
  throw new Error("no frame " + name);
}

async function search(page, term) {
  page.answer = term;
  await page.click("#search");
  return page.textContent("#matched");
}

async function tooltip(page, name) {
  const rect = await frameHandle(page, name);
  await rect.hover();
  await page.waitForSelector("#tip", { state: "visible" });
  return page.evaluate(() => Array.from(document.querySelectorAll("#tip tspan"), (t) => t.textContent));
}

async function cpuGraph(context) {
  const problems = [];
  const page = await open(context, cpuSvg, problems);
  let f = await frames(page);
  check(f.length === 5 && near(byName(f, "opt.hot").x, 206.67) && near(byName(f, "opt.hot").w, 786.67),
    "cpu: 5 frames, opt.hot at 206.67 wide 786.67 (200 of 300 samples of 1180 px)");

  // search: hot and tail are 230 of 300 samples, 76.67%; "opt" matches
  // main and its callees, which count once inside main: 100.00%
  check(await search(page, "^opt\\.(hot|tail)$") === "Matched: 76.67% (2 frames)",
    "cpu: search ^opt\\.(hot|tail)$ shows 76.67%");
  f = await frames(page);
  check(byName(f, "opt.hot").cls.includes("hit") && !byName(f, "opt.helper").cls.includes("hit"),
    "cpu: the matches are highlighted, the rest not");
  check(await search(page, "opt") === "Matched: 100.00% (4 frames)",
    "cpu: search opt counts nested matches once: 100.00%");
  check(await search(page, "(") === "not a regular expression" &&
    !(await frames(page)).some((x) => x.cls.includes("hit")),
    "cpu: a bad expression is said so, and nothing stays highlighted");

  // tooltip: function, origin, path:line, value and share
  const tip = await tooltip(page, "opt.hot");
  check(tip.join("|") === "opt.hot|project  src/opt.jett:2|200 samples (66.67%)",
    "cpu: tooltip of opt.hot: " + tip.join(" | "));

  // zoom into helper (x 10, 196.67 wide): it spans the graph; main and
  // the root stay full width below it; its siblings hide
  await (await frameHandle(page, "opt.helper")).click();
  f = await frames(page);
  const helper = byName(f, "opt.helper");
  check(near(helper.x, 10) && near(helper.w, 1180) && !byName(f, "opt.hot").shown &&
    byName(f, "opt.main").shown && near(byName(f, "opt.main").w, 1180) &&
    byName(f, "opt.main").cls.includes("anc"), "cpu: zoom into opt.helper fills the width");
  check(await page.isVisible("#reset"), "cpu: reset zoom is offered");
  await page.screenshot({ path: path.join(outDir, "flame-cpu-zoomed.png") });

  // Escape resets the zoom and the search
  await page.keyboard.press("Escape");
  f = await frames(page);
  check(f.every((x) => x.shown) && near(byName(f, "opt.hot").x, 206.67) &&
    near(byName(f, "opt.helper").w, 196.67) && !f.some((x) => x.cls.includes("hit")) &&
    await page.textContent("#matched") === "" && !(await page.isVisible("#reset")),
    "cpu: Escape restores every frame and clears the search");
  await search(page, "hot");
  await tooltip(page, "opt.hot");
  await page.screenshot({ path: path.join(outDir, "flame-cpu.png") });
  check(problems.length === 0, "cpu: no script error" + (problems.length ? ": " + problems.join("; ") : ""));
  await page.close();
}

async function hostileGraph(context) {
  const problems = [];
  const page = await open(context, hostileSvg, problems);
  const evil = "evil.<script>alert('x')</script>";
  const child = "q\"uote.a&b;c";
  // zoom into evil (3 of 9 samples): its child of 2 is scaled to 2/3 of
  // the width, from the left edge
  await (await frameHandle(page, evil)).click();
  const f = await frames(page);
  check(near(byName(f, evil).w, 1180) && near(byName(f, child).x, 10) &&
    near(byName(f, child).w, 786.67), "hostile: zoom scales the children (786.67 of 1180 px)");
  check(byName(f, child).label === child, "hostile: the zoomed child's label is its whole name");
  const tip = await tooltip(page, evil);
  check(tip[0] === evil && tip[1] === "3 samples (33.33%)",
    "hostile: the name is shown as text, never run: " + tip.join(" | "));
  // the long name's label keeps its end
  const long = byName(f, "app.a_very_long_function_name_that_will_not_fit_in_a_narrow_frame");
  check(!long.shown, "hostile: frames outside the zoom are hidden");
  await page.keyboard.press("Escape");
  const again = byName(await frames(page), long.name);
  check(again.label === "\u2026n_a_narrow_frame", "hostile: a long label is cut from the left: " + again.label);
  check(problems.length === 0, "hostile: no script error or dialog" + (problems.length ? ": " + problems.join("; ") : ""));
  await page.close();
}

async function diffGraph(context) {
  const problems = [];
  const page = await open(context, diffSvg, problems);
  const f = await frames(page);
  const rgb = (s) => s.match(/\d+/g).map(Number);
  const [hr, hg, hb] = rgb(byName(f, "opt.hot").fill);
  const tail = rgb(byName(f, "opt.tail").fill);
  const helper = rgb(byName(f, "opt.helper").fill);
  check(hb > hr + 100 && hb > hg + 100, "diff: opt.hot got faster and is blue: " + byName(f, "opt.hot").fill);
  check(tail[0] === tail[1] && tail[1] === tail[2] && helper[0] === helper[1] && helper[1] === helper[2],
    "diff: opt.tail and opt.helper (within noise) are neutral: " + byName(f, "opt.tail").fill);
  const tip = await tooltip(page, "opt.hot");
  check(tip.includes("before: 200 self samples") && tip.includes("after: 10 self samples") &&
    tip.includes("change: shrank: -190 self samples, x0.0500; significant (p < 0.0001)"),
    "diff: tooltip shows before, after and change: " + tip.join(" | "));
  await page.screenshot({ path: path.join(outDir, "flame-diff.png") });
  check(problems.length === 0, "diff: no script error" + (problems.length ? ": " + problems.join("; ") : ""));
  await page.close();
}

// The speed pair: slow twice as slow is red, fast twice as fast blue,
// both at full intensity (equal changes of 40 samples); same is grey; the
// legend says which is which, in those colours.
async function speedGraph(context) {
  const problems = [];
  const page = await open(context, speedSvg, problems);
  const f = await frames(page);
  check(byName(f, "speed.slow").fill === "rgb(215, 40, 40)", "speed: slow is red: " + byName(f, "speed.slow").fill);
  check(byName(f, "speed.fast").fill === "rgb(40, 70, 215)", "speed: fast is blue: " + byName(f, "speed.fast").fill);
  check(byName(f, "speed.same").fill === "rgb(221, 221, 221)" && byName(f, "speed.main").fill === "rgb(221, 221, 221)",
    "speed: same and main are grey: " + byName(f, "speed.same").fill);
  const legend = await page.evaluate(() => Array.from(document.querySelectorAll("text.lg"), (t) => ({
    text: t.textContent,
    words: Array.from(t.querySelectorAll("tspan"), (s) => s.textContent + "=" + getComputedStyle(s).fill),
  })));
  check(legend.length === 2 && legend[0].text.startsWith("red: more self samples than in BASE, blue: fewer, beyond sampling noise") &&
    legend[1].text.startsWith("grey: no change, within noise, or not comparable") &&
    legend[0].words.join() === "red=rgb(215, 40, 40),blue=rgb(40, 70, 215)",
    "speed: the legend says what the colours mean: " + legend.map((l) => l.text).join(" / "));
  check(await page.textContent("text.h:nth-of-type(2)") === "status: BASE complete, NEW complete",
    "speed: the heading gives both sides' status");
  await page.screenshot({ path: path.join(outDir, "flame-diff-speed.png") });
  let tip = await tooltip(page, "speed.slow");
  check(tip.join("|") === "speed.slow|project  src/speed.jett:6|80 samples (44.44%)|before: 40 self samples|" +
    "after: 80 self samples|change: grew: +40 self samples, x2.0000; significant (p = 0.0003)",
    "speed: tooltip of slow: " + tip.join(" | "));
  await page.screenshot({ path: path.join(outDir, "flame-diff-speed-slow-tip.png") });
  tip = await tooltip(page, "speed.fast");
  check(tip.includes("change: shrank: -40 self samples, x0.5000; significant (p = 0.0003)"),
    "speed: tooltip of fast: " + tip.join(" | "));
  await page.screenshot({ path: path.join(outDir, "flame-diff-speed-fast-tip.png") });
  tip = await tooltip(page, "speed.same");
  check(tip.includes("change: no change"), "speed: tooltip of same: " + tip.join(" | "));
  await page.screenshot({ path: path.join(outDir, "flame-diff-speed-same-tip.png") });
  check(problems.length === 0, "speed: no script error" + (problems.length ? ": " + problems.join("; ") : ""));
  await page.close();
}

// As an <img> the SVG runs no script and is still a picture: drawn into
// a canvas, most of it is not the background.
async function asImage(context) {
  const problems = [];
  const page = await context.newPage();
  page.on("pageerror", (e) => problems.push(e.message));
  const data = "data:image/svg+xml;base64," + fs.readFileSync(cpuSvg).toString("base64");
  await page.setContent("<html><body style='margin:0'><img id='i'></body></html>");
  const stats = await page.evaluate(async (src) => {
    const img = document.getElementById("i");
    await new Promise((ok, bad) => { img.onload = ok; img.onerror = () => bad(new Error("no load")); img.src = src; });
    const c = document.createElement("canvas");
    c.width = img.naturalWidth;
    c.height = img.naturalHeight;
    const g = c.getContext("2d");
    g.drawImage(img, 0, 0);
    const px = g.getImageData(0, 0, c.width, c.height).data;
    let framed = 0;
    for (let i = 0; i < px.length; i += 4)
      if (Math.abs(px[i] - 253) + Math.abs(px[i + 1] - 250) + Math.abs(px[i + 2] - 245) > 30) framed++;
    return { w: img.naturalWidth, h: img.naturalHeight, share: framed / (px.length / 4) };
  }, data);
  check(stats.w === 1200 && stats.h === 163, "img: 1200 x 163");
  // the frames' three levels are 48 of the 163 rows, nearly full width
  check(stats.share > 0.25, "img: drawn without script, " + (100 * stats.share).toFixed(1) + "% not background");
  await page.screenshot({ path: path.join(outDir, "flame-img.png") });
  check(problems.length === 0, "img: no page error");
  await page.close();
}

async function darkScheme(context) {
  const problems = [];
  const page = await open(context, cpuSvg, problems);
  await page.emulateMedia({ colorScheme: "dark" });
  const bg = await page.evaluate(() => getComputedStyle(document.querySelector(".bg")).fill);
  const fg = await page.evaluate(() => getComputedStyle(document.querySelector(".h")).fill);
  check(bg === "rgb(23, 24, 28)" && fg === "rgb(228, 228, 228)", "dark: background " + bg + ", heading " + fg);
  await page.screenshot({ path: path.join(outDir, "flame-dark.png") });
  check(problems.length === 0, "dark: no script error");
  await page.close();
}

(async () => {
  const browser = await launch();
  try {
    await cpuGraph(browser.context);
    await hostileGraph(browser.context);
    await diffGraph(browser.context);
    await speedGraph(browser.context);
    await asImage(browser.context);
    await darkScheme(browser.context);
  } finally {
    await browser.close();
  }
  console.log(failures ? "flame-browser: " + failures + " FAILED" : "flame-browser: all passed");
  process.exit(failures ? 1 : 0);
})().catch((e) => {
  console.log("FAIL " + (e && e.stack || e));
  process.exit(1);
});
