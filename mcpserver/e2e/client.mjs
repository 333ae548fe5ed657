// End-to-end check of loadout's MCP server with the official TypeScript
// client (@modelcontextprotocol/sdk). Run by TestNodeClient in ../e2e_test.go.
//
// Usage:
//   node client.mjs [options] --http URL
//   node client.mjs [options] --stdio COMMAND [ARG...]
// Options:
//   --skill NAME        a skill the agent has (default alpha)
//   --text PATH         a text file of it to read (default references/guide.md)
//   --binary PATH       a binary file of it to read (default assets/logo.png)
//   --query WORDS       a search_skills query that finds --skill
//   --wait-change NAME  print "READY" and wait for tools and resources
//                       list_changed notifications, then expect skill NAME
//
// Prints "OK <summary JSON>" and exits 0, or prints what failed and exits 1.
import { createHash } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ResultSchema,
  ToolListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const opts = { skill: "alpha", text: "references/guide.md", binary: "assets/logo.png", query: "pdf forms" };
const argv = process.argv.slice(2);
while (argv.length) {
  const a = argv.shift();
  if (a === "--http") opts.http = argv.shift();
  else if (a === "--stdio") { opts.stdio = argv; break; }
  else if (a === "--skill") opts.skill = argv.shift();
  else if (a === "--text") opts.text = argv.shift();
  else if (a === "--binary") opts.binary = argv.shift();
  else if (a === "--query") opts.query = argv.shift();
  else if (a === "--wait-change") opts.waitChange = argv.shift();
  else fail(`unknown argument ${a}`);
}

function fail(msg) {
  console.log(`FAIL ${msg}`);
  process.exit(1);
}
function check(cond, msg) {
  if (!cond) fail(msg);
}
const sha256 = (buf) => "sha256:" + createHash("sha256").update(buf).digest("hex");
const summary = { transport: opts.http ? "http" : "stdio", checks: [] };
const passed = (what) => summary.checks.push(what);

const transport = opts.http
  ? new StreamableHTTPClientTransport(new URL(opts.http))
  : new StdioClientTransport({ command: opts.stdio[0], args: opts.stdio.slice(1), stderr: "inherit" });
const client = new Client({ name: "loadout-e2e", version: "1.0.0" });

const changed = { tools: 0, resources: 0 };
client.setNotificationHandler(ToolListChangedNotificationSchema, () => { changed.tools++; });
client.setNotificationHandler(ResourceListChangedNotificationSchema, () => { changed.resources++; });

await client.connect(transport);
summary.protocolVersion = transport.protocolVersion ?? null;

// Capabilities and instructions.
const caps = client.getServerCapabilities();
check(caps?.resources, "no resources capability");
check(caps?.extensions?.["io.modelcontextprotocol/skills"]?.directoryRead === true,
  `skills extension not advertised with directoryRead: ${JSON.stringify(caps)}`);
check((client.getInstructions() ?? "").includes(opts.skill), "instructions do not list the skill");
passed("capabilities+instructions");

// Tools: a fixed set, the name argument an enum.
const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
check(JSON.stringify(names) === JSON.stringify(["load_skill", "read_skill_file", "search_skills", "use_skill"]),
  `tools ${names}`);
const loadTool = tools.find((t) => t.name === "load_skill");
check(loadTool.inputSchema.properties.name.enum?.includes(opts.skill), "load_skill name is not an enum with the skill");
passed("tools/list");

const call = (name, args) => client.callTool({ name, arguments: args });
const textOf = (res) => res.content.filter((c) => c.type === "text").map((c) => c.text).join("");

for (const tool of ["load_skill", "use_skill"]) {
  const res = await call(tool, { name: opts.skill });
  check(!res.isError && textOf(res).includes("skill_context"), `${tool}: ${textOf(res)}`);
}
let res = await call("load_skill", { name: opts.skill + "x" });
check(res.isError && textOf(res).includes(opts.skill), `load_skill of an unknown name: ${textOf(res)}`);
passed("load_skill+use_skill");

res = await call("read_skill_file", { name: opts.skill, path: opts.text });
check(!res.isError && textOf(res).length > 0, `read_skill_file text: ${textOf(res)}`);
const textViaTool = textOf(res);
res = await call("read_skill_file", { name: opts.skill, path: opts.binary });
const blob = res.content.find((c) => c.type === "resource")?.resource;
check(!res.isError && blob?.blob && blob.mimeType, `read_skill_file binary: ${JSON.stringify(res.content)}`);
const binaryViaTool = Buffer.from(blob.blob, "base64");
res = await call("read_skill_file", { name: opts.skill, path: "../etc/passwd" });
check(res.isError && textOf(res).length > 0, "read_skill_file did not refuse a path leaving the skill");
passed("read_skill_file");

res = await call("search_skills", { query: opts.query });
check(!res.isError && JSON.parse(res.content[0].text).skills[0]?.name === opts.skill, `search_skills: ${textOf(res)}`);
passed("search_skills");

// Resources.
const resources = [];
let cursor;
do {
  const page = await client.listResources(cursor ? { cursor } : {});
  resources.push(...page.resources);
  cursor = page.nextCursor;
} while (cursor);
const skillMd = `skill://${opts.skill}/SKILL.md`;
check(resources.some((r) => r.uri === skillMd), `resources/list lacks ${skillMd}`);
const read = async (uri) => {
  const r = await client.readResource({ uri });
  const c = r.contents[0];
  return { bytes: c.blob !== undefined ? Buffer.from(c.blob, "base64") : Buffer.from(c.text, "utf8"), mimeType: c.mimeType };
};
const md = await read(skillMd);
check(md.mimeType === "text/markdown" && md.bytes.toString().startsWith("---"), `read ${skillMd}: ${md.mimeType}`);
const textViaResource = await read(`skill://${opts.skill}/${opts.text}`);
check(textViaResource.bytes.toString() === textViaTool, "the tool and the resource disagree on the text file");
const binViaResource = await read(`skill://${opts.skill}/${opts.binary}`);
check(binViaResource.bytes.equals(binaryViaTool), "the tool and the resource disagree on the binary file");
passed("resources/list+read");

// The skills extension, with raw requests.
const raw = (method, params) => client.request({ method, params }, ResultSchema);
const listAll = async () => {
  const out = [];
  let c;
  let pages = 0;
  do {
    const page = await raw("skills/list", c ? { cursor: c } : {});
    check(page.resultType === "complete" && typeof page.ttlMs === "number" && page.cacheScope, `skills/list page ${JSON.stringify(page)}`);
    out.push(...page.skills);
    c = page.nextCursor;
    pages++;
  } while (c);
  return { skills: out, pages };
};
const listed = await listAll();
summary.skills = listed.skills.length;
summary.pages = listed.pages;
let verified = 0;
for (const s of listed.skills) {
  check(s.frontmatter?.name && s.uri === `skill://${s.frontmatter.name}/SKILL.md`, `entry ${JSON.stringify(s)}`);
  check(Array.isArray(s.resources) && s.resources[0]?.uri === s.uri, `entry resources ${JSON.stringify(s.resources)}`);
  for (const r of s.resources) {
    const { bytes } = await read(r.uri);
    check(sha256(bytes) === r.digest && bytes.length === r.size,
      `${r.uri}: listed ${r.digest} ${r.size}, served ${sha256(bytes)} ${bytes.length}`);
    verified++;
  }
}
summary.digestsVerified = verified;
passed("skills/list+digests");

const got = await raw("skills/get", { uri: skillMd });
check(got.resultType === "complete" && got.skill?.uri === skillMd && got.ttlMs !== undefined && got.cacheScope, `skills/get ${JSON.stringify(got)}`);
try {
  await raw("skills/get", { uri: "skill://no-such-skill/SKILL.md" });
  fail("skills/get of an unknown skill succeeded");
} catch (e) {
  check(e.code === -32602, `skills/get of an unknown skill: code ${e.code} ${e.message}`);
}
passed("skills/get");

const dir = await raw("resources/directory/read", { uri: `skill://${opts.skill}` });
check(dir.resources.some((r) => r.uri === skillMd) && dir.resources.some((r) => r.mimeType === "inode/directory"),
  `directory read ${JSON.stringify(dir)}`);
try {
  await raw("resources/directory/read", { uri: skillMd });
  fail("directory read of a file succeeded");
} catch (e) {
  check(e.code === -32602, `directory read of a file: code ${e.code}`);
}
passed("resources/directory/read");

if (opts.waitChange) {
  console.log("READY");
  const deadline = Date.now() + 20000;
  while ((changed.tools === 0 || changed.resources === 0) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  check(changed.tools > 0 && changed.resources > 0, `list_changed notifications: ${JSON.stringify(changed)}`);
  const after = await listAll();
  check(after.skills.some((s) => s.frontmatter.name === opts.waitChange), `skills/list lacks ${opts.waitChange} after the change`);
  const { tools: toolsAfter } = await client.listTools();
  check(toolsAfter.find((t) => t.name === "load_skill").inputSchema.properties.name.enum.includes(opts.waitChange),
    "the name enum lacks the new skill");
  passed("list_changed");
}

await client.close();
console.log("OK " + JSON.stringify(summary));
process.exit(0);
