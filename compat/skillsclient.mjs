// skillsclient.mjs: a host's side of the MCP Skills extension, driven by a
// real client library, against one server. It lists every skill (default
// options: an invalid entry makes the listing throw), gets each one, reads
// every file of every skill with the library's verification (size, digest
// and, for SKILL.md, the frontmatter), and reads every folder of every
// skill with resources/directory/read, walking subfolders (empty ones
// included). It prints one JSON summary on stdout; compat_test.go asserts
// on it. It exits 0 whenever it could print the summary: the test judges.
//
//   node skillsclient.mjs [--lib sdk|ext-skills] [--pin REVISION]
//                         (--url URL | --stdio COMMAND ARG...)
//
// --lib sdk (default): @modelcontextprotocol/client's SkillsClient.
// --lib ext-skills: @olaservo/ext-skills's client functions.
// --pin REVISION: negotiate exactly that protocol revision (server/discover);
// without it the client's default (legacy initialize) handshake.
// Through --stdio the bridge gets this process's whole environment (the
// test's: pinned Node first on PATH, no network beyond loopback).
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import * as ext from '@olaservo/ext-skills/client';

// Bounds, so a misbehaving server cannot make the run endless.
const MAX_DIRS = 500; // folders read per skill
const MAX_PAGES = 100; // directory pages per folder
const REQUEST_TIMEOUT_MS = 20000;

function parseArgs(argv) {
  const o = { lib: 'sdk', pin: '', url: '', stdio: null };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--lib') o.lib = argv[++i];
    else if (a === '--pin') o.pin = argv[++i];
    else if (a === '--url') o.url = argv[++i];
    else if (a === '--stdio') {
      o.stdio = argv.slice(i + 1);
      break;
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!o.url && !o.stdio) throw new Error('give --url URL or --stdio COMMAND ARG...');
  if (o.lib !== 'sdk' && o.lib !== 'ext-skills') throw new Error(`--lib: sdk or ext-skills, not ${o.lib}`);
  return o;
}

function describe(err) {
  if (!err) return '';
  let s = `${err.name || 'Error'}: ${err.message || String(err)}`;
  if (err.reason) s += ` [reason=${err.reason}]`;
  if (err.differences && err.differences.length) s += ` [differences: ${err.differences.join('; ')}]`;
  if (err.code !== undefined) s += ` [code=${err.code}]`;
  return s;
}

const dirOf = (skillUri) => skillUri.replace(/\/SKILL\.md$/, '');

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const options = { requestTimeout: REQUEST_TIMEOUT_MS };
  if (o.pin) options.versionNegotiation = { mode: { pin: o.pin } };
  const client = new Client({ name: 'loadout-compat', version: '1.0.0' }, options);
  const transport = o.url
    ? new StreamableHTTPClientTransport(new URL(o.url))
    : new StdioClientTransport({ command: o.stdio[0], args: o.stdio.slice(1), env: { ...process.env }, stderr: 'inherit' });
  const out = {
    lib: o.lib,
    pin: o.pin || null,
    protocolVersion: null,
    supported: false,
    directoryRead: false,
    listError: null,
    listed: [],
    invalid: [],
    skills: [],
  };
  await client.connect(transport);
  out.protocolVersion = client.getNegotiatedProtocolVersion?.() ?? null;
  const sdk = new SkillsClient(client);
  const api = o.lib === 'sdk' ? sdkAPI(sdk) : extAPI(client);
  out.supported = api.supported();
  out.directoryRead = api.directoryRead();

  let entries = [];
  try {
    entries = await api.list();
  } catch (err) {
    out.listError = describe(err);
    // Go on with the valid entries, so one run reports everything.
    if (o.lib === 'sdk') {
      try {
        const l = await new SkillsClient(client, { skipInvalid: true }).list();
        entries = l.skills;
        out.invalid = l.invalid;
      } catch (err2) {
        out.listError += ` (and with skipInvalid: ${describe(err2)})`;
      }
    }
  }
  if (o.lib === 'sdk' && !out.listError) {
    try {
      out.invalid = (await new SkillsClient(client, { skipInvalid: true }).list()).invalid;
    } catch {}
  }
  out.listed = entries.map((e) => ({ uri: e.uri, name: e.frontmatter?.name ?? null }));

  for (const listed of entries) {
    const s = { uri: listed.uri, name: listed.frontmatter?.name ?? null, getError: null, files: [], fileErrors: [], dirs: {}, dirErrors: [] };
    out.skills.push(s);
    let entry = listed;
    try {
      entry = await api.get(listed.uri);
      if (JSON.stringify(entry) !== JSON.stringify(listed)) {
        s.getError = `skills/get returned an entry that differs from the listing's: ${JSON.stringify(entry)}`;
      }
    } catch (err) {
      s.getError = describe(err);
    }
    const resources = Array.isArray(entry.resources) ? entry.resources : [];
    for (const r of resources) {
      try {
        const n = await api.read(entry, r.uri);
        s.files.push({ uri: r.uri, size: n });
      } catch (err) {
        s.fileErrors.push({ uri: r.uri, error: describe(err) });
      }
    }
    if (out.directoryRead) {
      const queue = [dirOf(entry.uri)];
      while (queue.length && Object.keys(s.dirs).length < MAX_DIRS) {
        const dir = queue.shift();
        try {
          const children = await api.readDirectory(dir);
          s.dirs[dir] = children.map((c) => ({ uri: c.uri, mimeType: c.mimeType ?? null }));
          for (const c of children) if (c.mimeType === 'inode/directory') queue.push(c.uri);
        } catch (err) {
          s.dirErrors.push({ uri: dir, error: describe(err) });
        }
      }
    }
  }
  await client.close();
  process.stdout.write(JSON.stringify(out, null, 1) + '\n');
}

// The SDK's SkillsClient: list() throws on an invalid entry by default;
// read() verifies size, digest and the frontmatter and throws
// SkillVerificationError.
function sdkAPI(sdk) {
  return {
    supported: () => sdk.supported,
    directoryRead: () => sdk.directoryRead,
    list: async () => (await sdk.list()).skills,
    get: async (uri) => (await sdk.get(uri)).skill,
    read: async (entry, uri) => {
      const f = await sdk.read(entry, uri);
      if (!f.verified) throw new Error(`${uri}: read but not verified`);
      return f.bytes.length;
    },
    readDirectory: async (uri) => (await sdk.readDirectory(uri)).resources,
  };
}

// @olaservo/ext-skills: readSkill (SKILL.md, digest and frontmatter) and
// readSkillResource (a listed file, digest) throw on a mismatch.
function extAPI(client) {
  return {
    supported: () => ext.serverSupportsSkills(client),
    directoryRead: () => ext.serverSupportsDirectoryRead(client),
    list: () => ext.listSkills(client),
    get: (uri) => ext.getSkill(client, uri),
    read: async (entry, uri) => {
      if (uri === entry.uri) {
        const text = await ext.readSkill(client, entry);
        return Buffer.byteLength(text, 'utf8');
      }
      const c = await ext.readSkillResource(client, entry, uri);
      if (c.blob !== undefined) return Buffer.from(c.blob, 'base64').length;
      if (c.text !== undefined) return Buffer.byteLength(c.text, 'utf8');
      throw new Error(`${uri}: the content has neither text nor blob`);
    },
    readDirectory: async (uri) => {
      const all = [];
      let cursor;
      for (let page = 0; page < MAX_PAGES; page++) {
        const r = await ext.readDirectory(client, uri, cursor ? { cursor } : undefined);
        all.push(...r.resources);
        cursor = r.nextCursor;
        if (!cursor) return all;
      }
      throw new Error(`${uri}: more than ${MAX_PAGES} pages`);
    },
  };
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`skillsclient: ${describe(err)}\n${err?.stack ?? ''}\n`);
    process.exit(1);
  },
);
