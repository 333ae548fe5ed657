// Package attack is loadout's attack suite: each test runs one attack
// against the real `loadout serve` or CLI binary, built from this checkout,
// on SQLite and, where the store matters, on PostgreSQL, and asserts a bound
// on what the attack achieved: the status it got, the server's peak memory
// and CPU seconds, what was written, what a browser ran.
//
// Every new surface (a route, a source kind, a session kind, a file served)
// brings its attacks here in the change that adds it. The package holds only
// tests; this file exists so that it builds as a package.
package attack
