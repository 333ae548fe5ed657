// Package webui is loadout's admin web UI: server-rendered pages (Go
// html/template) with a little JavaScript, every asset embedded, served by
// `loadout serve` under /ui/. It talks to the service, as httpapi and
// mcpserver do, never to the store or the catalog around it; the pages'
// scripts call the JSON API (/v1) with the UI's session cookie and CSRF
// token.
//
// Every page is sent with a strict Content-Security-Policy: scripts and
// styles only from this origin, no inline script, no plugins, no framing.
package webui
