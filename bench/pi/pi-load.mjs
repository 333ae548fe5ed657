// Runs Pi's skill loader (npm @mariozechner/pi-coding-agent, pinned in
// package.json) on a folder, K times in one process, and prints one line
// per run plus a summary:
//
//   node --expose-gc bench/pi/pi-load.mjs DIR [K]
//
// With --expose-gc, a full GC runs between loads, so each load starts from a
// clean heap as a single real load would (without it, V8 keeps earlier
// loads' garbage and later runs pay for it).
// Only dist/core/skills.js is imported (by file URL): importing the package
// root would load the whole agent. The import is done before timing.
// cpu is user+system time of the whole process (all threads) during the
// load. rss_peak is process.resourceUsage().maxRSS after the run: the process's
// peak so far, so on run 1 it is the peak of one cold load (plus Node's own
// baseline, reported as base_rss).
import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const [dirArg, kArg] = process.argv.slice(2);
if (!dirArg) {
  console.error("usage: node pi-load.mjs DIR [K]");
  process.exit(2);
}
const dir = resolve(dirArg);
const k = Number.parseInt(kArg ?? "5", 10);

const here = fileURLToPath(new URL(".", import.meta.url));
const pkgDir = resolve(here, "node_modules/@mariozechner/pi-coding-agent");
const skillsJs = resolve(pkgDir, "dist/core/skills.js");
if (!existsSync(skillsJs)) {
  console.error(`pi-load: ${skillsJs} not found; run "npm ci" in ${here}`);
  process.exit(1);
}
const { default: pkg } = await import(pathToFileURL(resolve(pkgDir, "package.json")).href, { with: { type: "json" } });
const { loadSkillsFromDir } = await import(pathToFileURL(skillsJs).href);

const mb = (kb) => (kb / 1024).toFixed(1);
const baseRSS = process.resourceUsage().maxRSS; // KB
console.log(`pi version=${pkg.version} node=${process.version} dir=${dir} runs=${k} base_rss=${mb(baseRSS)}MB`);

const walls = [];
let count = -1;
let rssFirst = 0;
for (let i = 1; i <= k; i++) {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const { skills, diagnostics } = loadSkillsFromDir({ dir, source: "path" });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const c = process.cpuUsage(c0);
  const cpuMs = (c.user + c.system) / 1000;
  walls.push(ms);
  if (i === 1) rssFirst = process.resourceUsage().maxRSS;
  count = skills.length;
  const warnings = diagnostics.length;
  console.log(`pi run=${i} skills=${skills.length} diagnostics=${warnings} wall=${ms.toFixed(1)}ms cpu=${cpuMs.toFixed(0)}ms rss_peak=${mb(process.resourceUsage().maxRSS)}MB heap_used=${(process.memoryUsage().heapUsed / 1048576).toFixed(1)}MB`);
  if (warnings > 0 && i === 1) {
    for (const d of diagnostics.slice(0, 3)) console.log(`  ${d.type}: ${d.path}: ${d.message}`);
  }
  globalThis.gc?.();
}
const sorted = [...walls].sort((a, b) => a - b);
const mid = sorted.length >> 1;
const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
// rss_one_load: peak after the first load, comparable to loadout's peakmem
// (one cold discovery per process). peak_rss: after all runs.
console.log(`pi summary skills=${count} median_wall=${median.toFixed(1)}ms min_wall=${sorted[0].toFixed(1)}ms first_wall=${walls[0].toFixed(1)}ms rss_one_load=${mb(rssFirst)}MB peak_rss=${mb(process.resourceUsage().maxRSS)}MB`);
