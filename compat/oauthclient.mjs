// oauthclient.mjs: an MCP host's OAuth flow, as the official TypeScript
// client runs it, against loadout as a resource server and a real
// authorization server. The SDK's StreamableHTTP transport gets the 401,
// reads the protected resource metadata it names, discovers the
// authorization server, and sends the user to its authorization endpoint
// with PKCE and the RFC 8707 resource; the "user" (the Go test, driving
// Chromium) signs in there, and the provider redirects the browser to this
// host's loopback callback, which finishes the flow (finishAuth with the
// callback's parameters). The client then connects again with the token,
// lists the tools, loads a skill and reads one of its files. The authorization server has no
// dynamic registration, so the client is pre-registered (public, PKCE).
//
//   node oauthclient.mjs --url MCP_URL --client-id ID --callback-port PORT --skill NAME
//
// It prints JSON lines on stdout: {"authorize": URL} when the user must
// sign in, then one summary {"tools": [...], "skill": ..., "file": ..., "error": ...}.
// It exits 0 whenever it could print the summary: the test judges.
import http from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const TIMEOUT_MS = 60000;

function parseArgs(argv) {
  const o = { url: '', clientId: '', port: 0, skill: '' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--url') o.url = argv[++i];
    else if (a === '--client-id') o.clientId = argv[++i];
    else if (a === '--callback-port') o.port = Number(argv[++i]);
    else if (a === '--skill') o.skill = argv[++i];
    else throw new Error(`unknown argument ${a}`);
  }
  if (!o.url || !o.clientId || !o.port || !o.skill) throw new Error('give --url, --client-id, --callback-port and --skill');
  return o;
}

const print = (v) => process.stdout.write(JSON.stringify(v) + '\n');

// An in-memory OAuthClientProvider: a pre-registered public client.
class Provider {
  constructor(clientId, redirect) {
    this.redirect = redirect;
    this.info = { client_id: clientId };
    this.saved = {};
    this.requests = []; // what the SDK did, for the summary
  }
  get redirectUrl() { return this.redirect; }
  get clientMetadata() {
    return { client_name: 'loadout oauth test', redirect_uris: [this.redirect], grant_types: ['authorization_code'],
      response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  state() { return 'st-' + Math.random().toString(36).slice(2); }
  clientInformation() { return this.info; }
  saveClientInformation(info) { this.info = info; }
  tokens() { return this.saved.tokens; }
  saveTokens(t) { this.saved.tokens = t; }
  saveCodeVerifier(v) { this.saved.verifier = v; }
  codeVerifier() { return this.saved.verifier; }
  saveDiscoveryState(s) { this.saved.discovery = s; }
  discoveryState() { return this.saved.discovery; }
  saveResourceUrl(r) { this.saved.resource = r; }
  redirectToAuthorization(url) {
    this.authorizeURL = url.href;
    print({ authorize: url.href });
  }
}

// callback waits for the browser's redirect to the loopback callback and
// returns its query parameters.
function callback(port) {
  return new Promise((resolve, reject) => {
    const srv = http.createServer((req, res) => {
      const u = new URL(req.url, `http://127.0.0.1:${port}`);
      if (u.pathname !== '/callback') {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'Content-Type': 'text/html' }).end('<!doctype html><title>Signed in</title><p id="done">Signed in: you can close this window.</p>');
      srv.close();
      resolve(u.searchParams);
    });
    srv.on('error', reject);
    srv.listen(port, '127.0.0.1');
    setTimeout(() => { srv.close(); reject(new Error('no callback within the timeout')); }, TIMEOUT_MS).unref();
  });
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const redirect = `http://127.0.0.1:${o.port}/callback`;
  const provider = new Provider(o.clientId, redirect);
  const out = { challenged: false, authorizeURL: null, resource: null, scope: null, tools: [], skill: null, error: null };
  const waiting = callback(o.port);

  // 1. Without a token: the 401 starts the flow, which ends at the
  // authorization endpoint (redirectToAuthorization).
  let client = new Client({ name: 'loadout-oauth-test', version: '1.0.0' });
  let transport = new StreamableHTTPClientTransport(new URL(o.url), { authProvider: provider });
  try {
    await client.connect(transport);
    out.error = 'connected without authorization';
  } catch (err) {
    out.challenged = err?.name === 'UnauthorizedError' || /nauthorized/.test(String(err?.message));
    if (!provider.authorizeURL) out.error = `no authorization started: ${err?.name}: ${err?.message}`;
  }
  if (out.error) {
    print(out);
    return;
  }
  const au = new URL(provider.authorizeURL);
  out.authorizeURL = provider.authorizeURL;
  out.resource = au.searchParams.get('resource');
  out.scope = au.searchParams.get('scope');

  // 2. The user signs in (the test, in Chromium); the provider redirects
  // to the callback, and the code is exchanged, with the verifier and the
  // resource.
  const params = await waiting;
  await transport.finishAuth(params);
  out.tokenType = provider.saved.tokens?.token_type ?? null;

  // 3. Connected again, with the token.
  client = new Client({ name: 'loadout-oauth-test', version: '1.0.0' });
  transport = new StreamableHTTPClientTransport(new URL(o.url), { authProvider: provider });
  await client.connect(transport);
  const tools = await client.listTools();
  out.tools = tools.tools.map((t) => t.name).sort();
  const res = await client.callTool({ name: 'load_skill', arguments: { name: o.skill } });
  out.skill = { isError: !!res.isError, text: (res.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n') };
  const file = await client.callTool({ name: 'read_skill_file', arguments: { name: o.skill, path: 'references/guide.md' } });
  out.file = { isError: !!file.isError, text: (file.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n') };
  const other = await client.callTool({ name: 'search_skills', arguments: { query: 'the project' } });
  out.search = (other.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
  await client.close();
  print(out);
}

main().then(
  () => process.exit(0),
  (err) => {
    print({ error: `${err?.name || 'Error'}: ${err?.message || String(err)}` });
    process.exit(0);
  },
);
