// Opens every page of the built documentation site in headless Chromium, as a reader would:
// no page may log an error to the console or throw, and the search box must find a metric by
// its id. With --screenshots DIR it also writes the pictures the docs show.
//
//   node --experimental-websocket scripts/docs-browser/check_site.mjs SITE_DIR CHROMIUM \
//        [--screenshots DIR] [--report REPORT_HTML]
//
// No npm package: Node's http server and WebSocket, and Chromium's DevTools protocol.

import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { extname, join, relative, resolve, sep } from "node:path";

const [siteArg, chromiumPath, ...rest] = process.argv.slice(2);
if (!siteArg || !chromiumPath) {
  console.error("usage: check_site.mjs SITE_DIR CHROMIUM [--screenshots DIR] [--report REPORT_HTML]");
  process.exit(2);
}
const option = (name) => {
  const i = rest.indexOf(name);
  return i >= 0 ? rest[i + 1] : undefined;
};
const site = resolve(siteArg);
const screenshots = option("--screenshots");
const report = option("--report");

const types = {
  ".html": "text/html; charset=utf-8", ".js": "text/javascript", ".css": "text/css",
  ".json": "application/json", ".svg": "image/svg+xml", ".png": "image/png", ".woff2": "font/woff2",
  ".xml": "application/xml",
};

// Serves the site (and the compare report, at /report.html) from disk.
const server = createServer((request, response) => {
  const path = decodeURIComponent(new URL(request.url, "http://x").pathname);
  let file = path === "/report.html" && report ? resolve(report) : join(site, path);
  if (!file.startsWith(site) && file !== resolve(report ?? "")) {
    response.writeHead(403).end();
    return;
  }
  if (existsSync(file) && statSync(file).isDirectory()) file = join(file, "index.html");
  if (!existsSync(file)) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, { "content-type": types[extname(file)] ?? "application/octet-stream" });
  response.end(readFileSync(file));
});
await new Promise((ok) => server.listen(0, "127.0.0.1", ok));
const base = `http://127.0.0.1:${server.address().port}`;

// Every page of the site: each index.html but the 404 page.
function pages(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (name !== "assets" && name !== "search") out.push(...pages(path));
    } else if (name === "index.html") {
      out.push("/" + relative(site, dir).split(sep).filter(Boolean).map((p) => p + "/").join(""));
    }
  }
  return out;
}

const profile = mkdtempSync(join(tmpdir(), "docs-browser-"));
const chromium = spawn(chromiumPath, [
  "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--remote-debugging-port=0",
  `--user-data-dir=${profile}`, "about:blank",
], { stdio: ["ignore", "ignore", "pipe"] });
const endpoint = await new Promise((ok, fail) => {
  let seen = "";
  chromium.stderr.on("data", (chunk) => {
    seen += chunk;
    const found = seen.match(/DevTools listening on (ws:\/\/\S+)/);
    if (found) ok(found[1]);
  });
  chromium.on("exit", (code) => fail(new Error(`chromium exited (${code}) before listening:\n${seen}`)));
  setTimeout(() => fail(new Error(`chromium did not start:\n${seen}`)), 30000);
});

// A minimal DevTools client: one browser connection, one page session.
const socket = new WebSocket(endpoint);
await new Promise((ok) => socket.addEventListener("open", ok));
let nextId = 1;
const waiting = new Map();
const listeners = [];
socket.addEventListener("message", (event) => {
  const message = JSON.parse(event.data);
  if (message.id && waiting.has(message.id)) {
    const { ok, fail } = waiting.get(message.id);
    waiting.delete(message.id);
    if (message.error) fail(new Error(JSON.stringify(message.error)));
    else ok(message.result);
  } else if (message.method) {
    for (const listener of listeners) listener(message);
  }
});
const send = (method, params = {}, sessionId) => new Promise((ok, fail) => {
  const id = nextId++;
  waiting.set(id, { ok, fail });
  socket.send(JSON.stringify({ id, method, params, sessionId }));
});
const { targetId } = await send("Target.createTarget", { url: "about:blank" });
const { sessionId } = await send("Target.attachToTarget", { targetId, flatten: true });
const call = (method, params) => send(method, params, sessionId);
await call("Page.enable");
await call("Runtime.enable");
await call("Log.enable");
await call("Emulation.setDeviceMetricsOverride", { width: 1280, height: 900, deviceScaleFactor: 1, mobile: false });

let problems = [];
listeners.push((message) => {
  if (message.sessionId !== sessionId) return;
  if (message.method === "Runtime.exceptionThrown") {
    problems.push(`exception: ${message.params.exceptionDetails.exception?.description ?? message.params.exceptionDetails.text}`);
  } else if (message.method === "Runtime.consoleAPICalled" && message.params.type === "error") {
    problems.push(`console.error: ${message.params.args.map((a) => a.value ?? a.description).join(" ")}`);
  } else if (message.method === "Log.entryAdded" && message.params.entry.level === "error") {
    problems.push(`${message.params.entry.source}: ${message.params.entry.text} ${message.params.entry.url ?? ""}`);
  }
});

async function open(path) {
  const loaded = new Promise((ok) => {
    const listener = (message) => {
      if (message.sessionId === sessionId && message.method === "Page.loadEventFired") {
        listeners.splice(listeners.indexOf(listener), 1);
        ok();
      }
    };
    listeners.push(listener);
  });
  await call("Page.navigate", { url: base + path });
  await loaded;
  // Let the page's scripts run (Material wires its components after load).
  await new Promise((ok) => setTimeout(ok, 300));
}

const evaluate = async (expression) =>
  (await call("Runtime.evaluate", { expression, awaitPromise: true, returnByValue: true })).result.value;

const failures = [];
const all = pages(site);
for (const path of all) {
  problems = [];
  await open(path);
  const title = await evaluate("document.title");
  if (!title) problems.push("no title");
  for (const problem of problems) failures.push(`${path}: ${problem}`);
}

// The search box finds a metric by its id.
await open("/");
const found = await evaluate(`(async () => {
  const input = document.querySelector("input.md-search__input");
  if (!input) return "no search input";
  input.focus();
  input.value = "ndcg_at_k";
  input.dispatchEvent(new Event("input", { bubbles: true }));
  input.dispatchEvent(new KeyboardEvent("keyup", { bubbles: true, key: "k" }));
  for (let i = 0; i < 100; i++) {
    const links = [...document.querySelectorAll(".md-search-result__item a")].map((a) => a.href);
    if (links.length) return links;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  return "no search result within 10 s";
})()`);
if (!Array.isArray(found) || !found.some((href) => href.includes("reference/metrics/ndcg_at_k/"))) {
  failures.push(`search for "ndcg_at_k": ${JSON.stringify(found)}`);
}

if (screenshots) {
  const shots = [
    ["/", "home.png"],
    ["/reference/metrics/rouge/", "metric-page.png"],
    ["/guide/compare/", "compare-page.png"],
  ];
  if (report) shots.push(["/report.html", "compare-report.png"]);
  for (const [path, name] of shots) {
    await open(path);
    const { data } = await call("Page.captureScreenshot", { format: "png" });
    writeFileSync(join(screenshots, name), Buffer.from(data, "base64"));
  }
}

socket.close();
chromium.kill();
server.close();
if (failures.length) {
  console.error(`${failures.length} problem(s) in the site:\n` + failures.join("\n"));
  process.exit(1);
}
console.log(`${all.length} pages opened without console errors; search finds ndcg_at_k`);
