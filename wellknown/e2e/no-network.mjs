// Loaded with `node --import` by TestSkillsInstallerE2E: the installer may
// reach loopback only. Any other fetch fails at once (as if offline) and is
// reported on stderr, so the test can show what the installer tried.
const loopback = new Set(["127.0.0.1", "localhost", "[::1]", "::1"]);
const realFetch = globalThis.fetch;

globalThis.fetch = async function guardedFetch(input, init) {
  const href = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  const host = new URL(href).hostname;
  if (!loopback.has(host)) {
    process.stderr.write(`loadout-e2e: blocked fetch ${href}\n`);
    throw new TypeError(`fetch failed: ${host} is not loopback (blocked by the loadout e2e test)`);
  }
  return realFetch(input, init);
};
