// launch: Debian's chromium driven by playwright-core (no browser
// download), headless, with a fresh profile and no network of its own.
"use strict";
const fs = require("fs");
const os = require("os");
const path = require("path");
const { chromium } = require("playwright-core");

const CHROMIUM = process.env.JETT_CHROMIUM || "/usr/bin/chromium";
const ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
  "--disable-background-networking", "--disable-component-update", "--disable-sync"];

// A persistent context on a new user-data-dir; close() removes the folder.
async function launch(options) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "jett-chromium-"));
  const context = await chromium.launchPersistentContext(profile, Object.assign({
    executablePath: CHROMIUM, headless: true, args: ARGS,
    viewport: { width: 1240, height: 900 },
  }, options || {}));
  return {
    context,
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}

module.exports = { launch, CHROMIUM };
