// SPDX-License-Identifier: MIT
// How long a report page takes to draw in headless Chromium, as a user feels it: from navigation
// start to the first frame after the page's own script marked itself drawn (performance mark
// "commprof-drawn", set once every chart, canvas and table is drawn and the page laid out), read
// over the DevTools protocol. Pages without the mark (older reports) are timed to the first frame
// after the load event. On a machine other work keeps busy that wall time waits for the CPU, so
// the renderer's main-thread CPU time to the same point is printed too (Chromium's Performance
// metrics in thread ticks: what the drawing costs a core of its own). Prints one line:
// "draw_ms=N mark_ms=N load_ms=N main_thread_cpu_ms=N renderer_cpu_ms=N".
//   node --experimental-websocket scripts/lib/html-draw-time.mjs CHROMIUM PAGE.html
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const [browser, page] = process.argv.slice(2);
if (!browser || !page) {
  console.error('usage: html-draw-time.mjs CHROMIUM PAGE.html');
  process.exit(2);
}
const profile = mkdtempSync(join(tmpdir(), 'commprof-draw-'));
const chrome = spawn(browser, ['--headless=new', '--no-sandbox', '--disable-gpu',
  '--window-size=1400,1000', '--remote-debugging-port=0', '--user-data-dir=' + profile,
  'about:blank'], { stdio: 'ignore' });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
function done(code, message) {
  if (message) console.error('html-draw-time: ' + message);
  // The profile goes once chromium has exited, and its helper processes with it (they write
  // there until then).
  chrome.once('exit', async () => {
    await sleep(500);
    try {
      rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
    } catch (e) {
      console.error('html-draw-time: left ' + profile + ': ' + e.message);
    }
    process.exit(code);
  });
  chrome.kill();
}
setTimeout(() => done(1, 'timed out after 120 s'), 120000).unref();

let port = null;
for (let i = 0; i < 200 && !port; i++) {
  const f = join(profile, 'DevToolsActivePort');
  if (existsSync(f)) port = readFileSync(f, 'utf8').split('\n')[0];
  else await sleep(50);
}
if (!port) done(1, 'chromium did not open its DevTools port');
const targets = await (await fetch('http://127.0.0.1:' + port + '/json/list')).json();
const target = targets.find((t) => t.type === 'page');
const ws = new WebSocket(target.webSocketDebuggerUrl);
await new Promise((r, j) => { ws.onopen = r; ws.onerror = j; });
let next = 1;
const pending = new Map();
const waiters = [];
ws.onmessage = (ev) => {
  const m = JSON.parse(ev.data);
  if (m.id && pending.has(m.id)) { pending.get(m.id)(m); pending.delete(m.id); }
  if (m.method) waiters.filter((w) => w.method === m.method).forEach((w) => w.resolve(m));
};
function send(method, params) {
  const id = next++;
  ws.send(JSON.stringify({ id, method, params: params || {} }));
  return new Promise((r) => pending.set(id, r));
}
function event(method) {
  return new Promise((resolve) => waiters.push({ method, resolve }));
}
async function evaluate(expression) {
  const m = await send('Runtime.evaluate', { expression, awaitPromise: true, returnByValue: true });
  if (m.result.exceptionDetails) throw new Error(JSON.stringify(m.result.exceptionDetails));
  return m.result.result.value;
}
await send('Page.enable');
await send('Performance.enable', { timeDomain: 'threadTicks' });
const loaded = event('Page.loadEventFired');
await send('Page.navigate', { url: 'file://' + resolve(page) });
await loaded;
// The first frame after the mark (or after load): what the screen shows then is the drawn page.
const t = await evaluate(`new Promise(function (resolve) {
  requestAnimationFrame(function () { setTimeout(function () {
    const m = performance.getEntriesByName('commprof-drawn');
    const nav = performance.getEntriesByType('navigation')[0];
    resolve({ frame: performance.now(), mark: m.length ? m[0].startTime : -1,
      load: nav ? nav.loadEventEnd : -1 });
  }, 0); });
})`);
const metrics = new Map((await send('Performance.getMetrics')).result.metrics.map((m) =>
  [m.name, m.value]));
console.log('draw_ms=' + Math.round(t.frame) + ' mark_ms=' + Math.round(t.mark) + ' load_ms=' +
  Math.round(t.load) + ' main_thread_cpu_ms=' + Math.round(1000 * metrics.get('TaskDuration')) +
  ' renderer_cpu_ms=' + Math.round(1000 * metrics.get('ProcessTime')));
ws.close();
done(0);
