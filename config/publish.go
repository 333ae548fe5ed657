package config

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/loadout/loadout/catalog"
)

// Publish is the "publish" object: where the web UI pushes a stored
// skill's version as an OCI artifact (docs/oci.md). A push goes to
// REGISTRY/NAME:VERSION, NAME the skill's name and VERSION its
// frontmatter version (else "v" and the stored version number).
type Publish struct {
	// Registry is the repository prefix, like
	// "registry.example.com/team/skills": a host (with a port if needed)
	// and a path, without scheme, tag or digest.
	Registry string `json:"registry,omitempty"`
	// Insecure lets the push speak plain HTTP (a registry on loopback).
	Insecure bool `json:"insecure,omitempty"`
	// Username and Password are the registry's credentials; Password must
	// be an environment reference, "${NAME}" (a secret is never written in
	// the file). Without them the docker config (and its credential
	// helpers) of the user running loadout are used.
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// CAFile is a PEM file of certificates to trust for the registry,
	// beside the system's.
	CAFile string `json:"caFile,omitempty"`
	// Timeout bounds each request to the registry. Default 2m.
	Timeout Duration `json:"timeout,omitempty"`
}

// The bounds of the publish object.
const (
	DefaultPublishTimeout = 2 * time.Minute
	MaxPublishTimeout     = 10 * time.Minute
	maxPublishRegistry    = 255
)

var (
	publishHost = regexp.MustCompile(`^([a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?)*(:[0-9]{1,5})?$|^\[[0-9a-fA-F:]+\](:[0-9]{1,5})?$`)
	publishPath = regexp.MustCompile(`^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*)*$`)
)

func (p *Publish) validate(file string) error {
	if p.Registry == "" {
		if p.Insecure || p.Username != "" || p.Password != "" || p.CAFile != "" || p.Timeout != 0 {
			return &Error{File: file, Field: "publish.registry", Msg: "is empty, but other publish keys are set: give the repository prefix to push to, like \"registry.example.com/team/skills\", or remove the publish object"}
		}
		return nil
	}
	bad := func(why string) error {
		return &Error{File: file, Field: "publish.registry", Msg: fmt.Sprintf("%q %s: give a host and a path, like \"registry.example.com/team/skills\" (no https://, tag or digest)", p.Registry, why)}
	}
	if len(p.Registry) > maxPublishRegistry {
		return bad(fmt.Sprintf("is over %d bytes", maxPublishRegistry))
	}
	if strings.Contains(p.Registry, "://") {
		return bad("has a scheme")
	}
	if strings.ContainsAny(p.Registry, "@") {
		return bad("has a digest")
	}
	host, path, ok := strings.Cut(p.Registry, "/")
	if !ok || path == "" {
		return bad("has no path after the host")
	}
	if !publishHost.MatchString(host) {
		return bad(fmt.Sprintf("has %q, which is not a host[:port]", host))
	}
	if !publishPath.MatchString(path) {
		return bad(fmt.Sprintf("has the path %q, which is not a repository path (lower-case letters, digits, separators . _ -, and /; no tag)", path))
	}
	if (p.Username == "") != (p.Password == "") {
		return &Error{File: file, Field: "publish.password", Msg: "username and password go together: give both (the password as \"${NAME}\"), or neither to use the docker config"}
	}
	if p.Password != "" && catalog.EnvVar(p.Password) == "" {
		return &Error{File: file, Field: "publish.password", Msg: "must name an environment variable, like \"${REGISTRY_TOKEN}\": a secret is never written in the config file"}
	}
	if strings.ContainsAny(p.Username, "\r\n\x00:") {
		return &Error{File: file, Field: "publish.username", Msg: "must be one line without a colon"}
	}
	if d := time.Duration(p.Timeout); d < 0 || d > MaxPublishTimeout || d > 0 && d < time.Second {
		return &Error{File: file, Field: "publish.timeout", Msg: fmt.Sprintf("%s: give a duration from 1s to %s, like \"30s\", or leave it out for the default, %s", d, MaxPublishTimeout, DefaultPublishTimeout)}
	}
	return nil
}
