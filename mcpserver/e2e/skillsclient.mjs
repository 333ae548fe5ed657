// Verification of loadout's skills/list and skills/get by the official
// TypeScript SDK's skills client (@modelcontextprotocol/client 2.4,
// SkillsClient), the host side of the MCP Skills extension: it refuses the
// whole listing if one entry breaks the extension's rules, and refuses a
// SKILL.md whose frontmatter differs from its entry. Run by
// TestSkillsClientVerifies in ../skillsclient_test.go with the pinned Node
// of compat/, as an ES module evaluated with compat/ as the working folder
// (so the pinned packages resolve from compat/node_modules):
//
//   cd compat && node --input-type=module --eval "$(cat ../mcpserver/e2e/skillsclient.mjs)"
//
// Environment:
//   LOADOUT_MCP_URL      the server's MCP endpoint
//   LOADOUT_LISTED       JSON list of the skill names skills/list must list
//   LOADOUT_OMITTED      JSON object: skill name -> the start of the reason
//                        it must be left out of skills/list for
//
// Prints "OK <summary JSON>" and exits 0, or prints what failed and exits 1.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { SkillsClient } from "@modelcontextprotocol/client/ext/skills";
import * as z from "zod/v4";

const fail = (msg) => {
  console.log("FAIL " + msg);
  process.exit(1);
};
const check = (ok, msg) => ok || fail(msg);

const url = process.env.LOADOUT_MCP_URL;
const wantListed = JSON.parse(process.env.LOADOUT_LISTED ?? "[]");
const wantOmitted = JSON.parse(process.env.LOADOUT_OMITTED ?? "{}");

const client = new Client({ name: "loadout-skillsclient-e2e", version: "1" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const skills = new SkillsClient(client);
check(skills.supported, "the server does not declare the skills extension");

// list() throws on any invalid entry (no skipInvalid): the listing must be
// clean.
let listing;
try {
  listing = await skills.list();
} catch (e) {
  fail(`SkillsClient.list() threw: ${e.message}`);
}
check(listing.invalid.length === 0, `invalid entries: ${JSON.stringify(listing.invalid)}`);
const names = listing.skills.map((s) => s.frontmatter.name).sort();
check(JSON.stringify(names) === JSON.stringify([...wantListed].sort()),
  `listed ${JSON.stringify(names)}, want ${JSON.stringify(wantListed)}`);

// read() verifies size, digest and (for SKILL.md) the frontmatter, field
// by field against the entry; every listed file of every skill.
let files = 0;
for (const skill of listing.skills) {
  const got = await skills.get(skill.uri);
  check(JSON.stringify(got.skill) === JSON.stringify(skill), `skills/get ${skill.uri} differs from its listing entry`);
  for (const r of skill.resources) {
    try {
      const file = await skills.read(skill, r.uri);
      check(file.verified, `${r.uri} was not verified`);
    } catch (e) {
      fail(`SkillsClient.read(${r.uri}) threw: ${e.message}`);
    }
    files++;
  }
}

// The skills left out are named in each page's _meta with a reason.
const omitted = {};
let cursor;
do {
  const page = await client.request(
    { method: "skills/list", params: cursor === undefined ? {} : { cursor } },
    z.looseObject({ skills: z.array(z.unknown()), nextCursor: z.string().optional() }),
  );
  for (const o of page._meta?.["io.github.loadout/omitted"] ?? []) {
    omitted[o.uri] = o.reason;
  }
  cursor = page.nextCursor;
} while (cursor !== undefined);
for (const [name, reason] of Object.entries(wantOmitted)) {
  const uri = `skill://${name}/SKILL.md`;
  check(omitted[uri]?.startsWith(reason), `_meta omitted ${uri}: got ${JSON.stringify(omitted[uri])}, want ${JSON.stringify(reason)}...`);
  // skills/get of an omitted skill is refused (-32602), not served invalid.
  let refused = false;
  try {
    await skills.get(uri);
  } catch (e) {
    refused = String(e.message).includes(reason);
  }
  check(refused, `skills/get ${uri} was not refused with its reason`);
}
check(Object.keys(omitted).length === Object.keys(wantOmitted).length,
  `omitted ${JSON.stringify(Object.keys(omitted))}, want ${JSON.stringify(Object.keys(wantOmitted))}`);

await client.close();
console.log("OK " + JSON.stringify({ listed: names.length, files, omitted: Object.keys(omitted).length }));
