// Loaded into every Node client compat_test.go runs (NODE_OPTIONS=--import):
// the clients may reach loopback only, so the run is hermetic and a client
// that phones home (telemetry, update checks, OAuth discovery elsewhere) is
// seen. Any other fetch fails at once, as if offline, and is reported on
// stderr with the "compat: blocked fetch" prefix the test looks for.
const loopback = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);
const realFetch = globalThis.fetch;

globalThis.fetch = async function guardedFetch(input, init) {
  const href = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  const host = new URL(href).hostname;
  if (!loopback.has(host)) {
    process.stderr.write(`compat: blocked fetch ${href}\n`);
    throw new TypeError(`fetch failed: ${host} is not loopback (blocked by loadout's compat test)`);
  }
  return realFetch(input, init);
};
