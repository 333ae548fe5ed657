// Package catalog turns sources of skills into per-agent loadouts: which
// skills an agent sees listed, which it gets inline, which it may load, and
// how each is activated. It is transport-independent; the CLI, HTTP and MCP
// servers all wrap it.
package catalog

import (
	"fmt"
	"net/url"
	"path"
	"regexp"
	"strings"
	"time"

	"github.com/loadout/loadout/render"
	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/source"
)

// AgentSpec is one agent's configuration: the common agent shape (agentId,
// displayName, description, skills) plus loadout's additions.
type AgentSpec struct {
	AgentID     string `json:"agentId"`
	DisplayName string `json:"displayName,omitempty"`
	Description string `json:"description,omitempty"`
	// Skills are the agent's sources, processed in order.
	Skills []SourceSpec `json:"skills,omitempty"`
	// Preload names skills (by name, or by a path to a skill folder) whose
	// full text goes into the agent's prompt.
	Preload []string `json:"preload,omitempty"`
	// Tools the agent has. When set, a selected skill whose requires-tools
	// names a tool not in this list gets a compatibility warning.
	Tools []string `json:"tools,omitempty"`
	// Budget is the listing budget in characters (0: the default, 8000;
	// -1: unlimited). A positive budget must hold at least the format's
	// fixed text and the line saying how to find skills left out
	// (render.MinBudget); a smaller one is refused.
	Budget int `json:"budget,omitempty"`
	// Format is the prompt format: pi (default), catalog or progressive.
	Format string `json:"format,omitempty"`
	// BudgetTokens, when positive, also bounds the listing to about this
	// many tokens (render.Options.BudgetTokens; the smaller of the two
	// budgets wins). 0: no token budget.
	BudgetTokens int `json:"budgetTokens,omitempty"`
	// Pin are glob patterns over skill names (the syntax of available):
	// pinned skills keep their descriptions first when the listing does not
	// fit its budget, before the most used ones. Pins change what is kept,
	// never the order of the listing.
	Pin []string `json:"pin,omitempty"`
	// InvalidSkills says what the MCP server does with a skill the MCP
	// Skills extension's rules refuse (a name that is not lowercase
	// letters, digits and hyphens, a description over 1,024 characters,
	// frontmatter its clients cannot read, ...). Such a skill is always
	// left out of skills/list; with InvalidLoad (the default, "load")
	// load_skill and read_skill_file still serve it, with InvalidRefuse
	// ("refuse") the tools and resources/read refuse it too.
	InvalidSkills string `json:"invalidSkills,omitempty"`
	// Versions pins stored skills, by name, to the version the agent is
	// served: a number (kept through every later publish), "published"
	// (the default) or "latest" (drafts too). See versions.go.
	Versions map[string]VersionPin `json:"versions,omitempty"`
}

// The values of AgentSpec.InvalidSkills.
const (
	InvalidLoad   = "load"
	InvalidRefuse = "refuse"
)

// SourceSpec is one entry of an agent's skills list. Exactly one of Root,
// Store, Plugin, Git, Index and OCI is set.
type SourceSpec struct {
	// Root is a folder scanned recursively for SKILL.md. A leading ~ is the
	// home folder; a relative root resolves against the config file's folder.
	Root string `json:"root,omitempty"`
	// Store selects the skills kept in the database.
	Store bool `json:"store,omitempty"`
	// Plugin selects the skills a plugin contributes, by plugin id.
	Plugin string `json:"plugin,omitempty"`
	// Git is a git repository (https://, http://, ssh://, file:// or a
	// path) read into a snapshot pinned in loadout.lock; Index is a
	// well-known skills index URL, likewise. The catalog reads both
	// through Options.Remotes, by RemoteID.
	Git   string `json:"git,omitempty"`
	Index string `json:"index,omitempty"`
	// Ref is the git branch, tag or commit ("": the default branch);
	// Paths are the repository's folders to read (none: all of it).
	Ref   string   `json:"ref,omitempty"`
	Paths []string `json:"paths,omitempty"`
	// Every is how often the server syncs the source and moves its pin
	// (a Go duration, at least 1m); "" syncs only on `loadout sync` or
	// POST /v1/sources/{id}/sync.
	Every string `json:"every,omitempty"`
	// Token names an environment variable holding a credential, as
	// "${NAME}"; the config never holds the credential itself.
	Token string `json:"token,omitempty"`
	// ID names a remote source in the lock file and the API; default
	// source.RemoteID of its location and ref.
	ID string `json:"id,omitempty"`
	// AllowedOrigins are the origins (https://host[:port]) beside the
	// index's own that an index source may fetch its entries from and be
	// redirected to; none keeps every request on the index's origin.
	AllowedOrigins []string `json:"allowedOrigins,omitempty"`
	// OCI is a repository in an OCI registry ("registry.example.com/team/
	// skills/pdf", no scheme) whose artifact holds one skill, read into a
	// snapshot pinned in loadout.lock by manifest digest. Exactly one of
	// Tag (a tag), Digest ("sha256:…") and Tags (a semver range over the
	// repository's tags, the highest match wins) says which artifact.
	OCI    string `json:"oci,omitempty"`
	Tag    string `json:"tag,omitempty"`
	Digest string `json:"digest,omitempty"`
	Tags   string `json:"tags,omitempty"`
	// Insecure lets an oci source's registry be reached over plain HTTP
	// (it is refused otherwise).
	Insecure bool `json:"insecure,omitempty"`
	// Username and Password (oci sources) name environment variables, as
	// "${NAME}", holding the registry's credentials; without them the
	// docker config (~/.docker/config.json and its credential helpers)
	// is used.
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	// Verify is the source's signature policy (git and oci sources):
	// unsigned or wrongly signed revisions are refused (verifyspec.go).
	Verify *VerifySpec `json:"verify,omitempty"`
	// Available are glob patterns (* and ?, case-sensitive; / is an ordinary
	// character, so * matches ui-toolkit/web) over skill names
	// to put in the reference listing. Inline are patterns for skills whose
	// body goes into the prompt. When both are omitted, Available is ["*"].
	Available []string `json:"available,omitempty"`
	Inline    []string `json:"inline,omitempty"`
}

func (s SourceSpec) String() string {
	switch {
	case s.Store:
		return "store"
	case s.Plugin != "":
		return "plugin " + s.Plugin
	case s.Remote():
		return "remote " + s.RemoteID()
	}
	return "root " + s.Root
}

// Remote reports whether s is a git, index or oci source.
func (s SourceSpec) Remote() bool { return s.Git != "" || s.Index != "" || s.OCI != "" }

// RemoteKind is "git", "index" or "oci" for a remote source, else "".
func (s SourceSpec) RemoteKind() string {
	switch {
	case s.Git != "":
		return "git"
	case s.Index != "":
		return "index"
	case s.OCI != "":
		return "oci"
	}
	return ""
}

// RemoteLocation is a remote source's git URL, index URL or oci
// repository.
func (s SourceSpec) RemoteLocation() string {
	switch {
	case s.Git != "":
		return s.Git
	case s.Index != "":
		return s.Index
	}
	return s.OCI
}

// RemoteRef is what a remote source follows: the git ref, or an oci
// source's tag, digest or tag range.
func (s SourceSpec) RemoteRef() string {
	if s.OCI != "" {
		return OCIRef(s.Tag, s.Digest, s.Tags)
	}
	return s.Ref
}

// OCIRef is an oci source's ref as the lock, its id and its origin show
// it: the tag, the digest, or the tag range.
func OCIRef(tag, digest, tags string) string {
	switch {
	case tag != "":
		return tag
	case digest != "":
		return digest
	}
	return tags
}

// RemoteID is a remote source's id: ID, else source.RemoteID of its
// location and ref (an oci source's tag; a digest's first 12 digits; a
// tag range is left out).
func (s SourceSpec) RemoteID() string {
	if s.ID != "" {
		return s.ID
	}
	if s.OCI != "" {
		return OCIDefaultID(s.OCI, s.Tag, s.Digest)
	}
	return source.RemoteID(s.RemoteLocation(), s.Ref)
}

// OCIDefaultID is an oci source's default id: the repository's last part,
// with "@TAG" or "@sha256-" and 12 digits of the digest.
func OCIDefaultID(repo, tag, digest string) string {
	ref := tag
	if ref == "" && digest != "" {
		ref = digest
		if i := strings.IndexByte(ref, ':'); i >= 0 && len(ref) > i+13 {
			ref = ref[:i+13]
		}
	}
	return source.RemoteID(repo, ref)
}

// key identifies the source, so each is read once however many agents use it.
func (s SourceSpec) key() string {
	switch {
	case s.Store:
		return "store"
	case s.Plugin != "":
		return "plugin:" + s.Plugin
	case s.Remote():
		return "remote:" + s.RemoteID()
	}
	return "root:" + absRoot(s.Root)
}

// Validate checks the spec's own fields. It does not touch the file system.
func (a *AgentSpec) Validate() error {
	if strings.TrimSpace(a.AgentID) == "" {
		return &SpecError{Field: "agentId", Msg: "is required: give the agent an id"}
	}
	if err := checkAgentID(a.AgentID); err != nil {
		return &SpecError{Field: "agentId", Msg: err.Error()}
	}
	for i, s := range a.Skills {
		field := fmt.Sprintf("skills[%d]", i)
		n := 0
		for _, set := range []bool{strings.TrimSpace(s.Root) != "", s.Store, strings.TrimSpace(s.Plugin) != "", strings.TrimSpace(s.Git) != "", strings.TrimSpace(s.Index) != "", strings.TrimSpace(s.OCI) != ""} {
			if set {
				n++
			}
		}
		if n != 1 {
			return &SpecError{Agent: a.AgentID, Field: field, Msg: `must name exactly one source: {"root": DIR}, {"store": true}, {"plugin": ID}, {"git": URL}, {"index": URL} or {"oci": REPOSITORY}`}
		}
		if err := s.checkRemote(); err != nil {
			err.Agent, err.Field = a.AgentID, field+"."+err.Field
			return err
		}
		for name, pats := range map[string][]string{"available": s.Available, "inline": s.Inline} {
			for j, p := range pats {
				if err := checkPattern(p); err != nil {
					return &SpecError{Agent: a.AgentID, Field: fmt.Sprintf("%s.%s[%d]", field, name, j), Msg: err.Error()}
				}
			}
		}
	}
	switch a.Format {
	case "", "pi", "catalog", "progressive":
	default:
		return &SpecError{Agent: a.AgentID, Field: "format", Msg: fmt.Sprintf("%q is not a prompt format: use pi, catalog or progressive", a.Format)}
	}
	switch a.InvalidSkills {
	case "", InvalidLoad, InvalidRefuse:
	default:
		return &SpecError{Agent: a.AgentID, Field: "invalidSkills", Msg: fmt.Sprintf("%q is not a choice: use %q (the default: the MCP tools still serve skills the MCP Skills extension refuses) or %q (the MCP tools and resources refuse them too)", a.InvalidSkills, InvalidLoad, InvalidRefuse)}
	}
	if a.Budget < -1 {
		return &SpecError{Agent: a.AgentID, Field: "budget", Msg: "must be a number of characters, 0 for the default or -1 for no limit"}
	}
	if min := render.MinBudget(1, render.Options{Format: a.Format}); a.Budget > 0 && a.Budget < min {
		return &SpecError{Agent: a.AgentID, Field: "budget", Msg: fmt.Sprintf("%d is too small: the %s format's fixed text and the line that says how to find skills left out of the listing need at least %d characters; give at least %d, 0 for the default (%d) or -1 for no limit",
			a.Budget, formatName(a.Format), min, min, render.DefaultBudget)}
	}
	if a.BudgetTokens < 0 {
		return &SpecError{Agent: a.AgentID, Field: "budgetTokens", Msg: fmt.Sprintf("%d is negative: give a number of tokens, or 0 (or leave it out) for no token budget", a.BudgetTokens)}
	}
	if a.BudgetTokens > MaxBudgetTokens {
		return &SpecError{Agent: a.AgentID, Field: "budgetTokens", Msg: fmt.Sprintf("%d is over the most allowed, %d: give a smaller number of tokens, or 0 for no token budget", a.BudgetTokens, MaxBudgetTokens)}
	}
	for i, p := range a.Pin {
		if err := checkPattern(p); err != nil {
			return &SpecError{Agent: a.AgentID, Field: fmt.Sprintf("pin[%d]", i), Msg: err.Error()}
		}
	}
	for i, p := range a.Preload {
		if strings.TrimSpace(p) == "" {
			return &SpecError{Agent: a.AgentID, Field: fmt.Sprintf("preload[%d]", i), Msg: "is empty: give a skill name or a path to a skill folder"}
		}
	}
	return nil
}

// MaxBudgetTokens bounds AgentSpec.BudgetTokens (and the config file's
// default): 1<<28 tokens, far above any model's context, so that the
// characters it stands for cannot overflow.
const MaxBudgetTokens = 1 << 28

// MinEvery is the shortest sync interval a remote source may ask for.
const MinEvery = time.Minute

// checkRemote checks the fields of git and index sources, and that no
// other source sets them.
func (s SourceSpec) checkRemote() *SpecError {
	if err := s.checkVerify(); err != nil {
		return err
	}
	if !s.Remote() {
		for _, f := range []struct {
			name string
			set  bool
		}{{"ref", s.Ref != ""}, {"paths", len(s.Paths) > 0}, {"every", s.Every != ""}, {"token", s.Token != ""}, {"id", s.ID != ""}} {
			if f.set {
				return &SpecError{Field: f.name, Msg: "is for git and index sources only"}
			}
		}
		if err := s.checkOCIFieldsUnset("is for oci sources only"); err != nil {
			return err
		}
		if len(s.AllowedOrigins) > 0 {
			return &SpecError{Field: "allowedOrigins", Msg: "is for index sources only"}
		}
		return nil
	}
	if s.OCI != "" {
		if err := s.checkOCI(); err != nil {
			return err
		}
	} else if err := s.checkOCIFieldsUnset("is for oci sources only"); err != nil {
		return err
	}
	if s.Git != "" && len(s.AllowedOrigins) > 0 {
		return &SpecError{Field: "allowedOrigins", Msg: "is for index sources only: a git source fetches from its repository alone"}
	}
	seenOrigin := map[string]int{}
	for i, o := range s.AllowedOrigins {
		n, err := source.Origin(o)
		if err != nil {
			return &SpecError{Field: fmt.Sprintf("allowedOrigins[%d]", i), Msg: err.Error()}
		}
		if j, dup := seenOrigin[n]; dup {
			return &SpecError{Field: fmt.Sprintf("allowedOrigins[%d]", i), Msg: fmt.Sprintf("%q is the same origin as allowedOrigins[%d]", o, j)}
		}
		seenOrigin[n] = i
	}
	if s.Index != "" {
		if s.Ref != "" || len(s.Paths) > 0 {
			return &SpecError{Field: "ref", Msg: "ref and paths are for git sources; an index source reads the whole index"}
		}
		if u, err := url.Parse(s.Index); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return &SpecError{Field: "index", Msg: fmt.Sprintf("%q is not an http(s) URL: give the index's URL, like https://example.com/.well-known/agent-skills/index.json", s.Index)}
		}
	}
	if s.ID != "" && !source.ValidRemoteID(s.ID) {
		return &SpecError{Field: "id", Msg: fmt.Sprintf("%q: use 1 to 64 letters, digits, '.', '_', '-' or '@', not starting with '.'", s.ID)}
	}
	for i, p := range s.Paths {
		if c, err := skill.CleanPath(p); err != nil || c != p {
			return &SpecError{Field: fmt.Sprintf("paths[%d]", i), Msg: fmt.Sprintf("%q is not a clean path relative to the repository's top (like skills or tools/skills)", p)}
		}
	}
	if s.Every != "" {
		d, err := time.ParseDuration(s.Every)
		if err != nil || d < MinEvery {
			return &SpecError{Field: "every", Msg: fmt.Sprintf("%q: give a duration of at least %s, like 15m or 1h, or leave it out to sync only on request", s.Every, MinEvery)}
		}
	}
	if s.Token != "" && s.TokenVar() == "" {
		return &SpecError{Field: "token", Msg: `must name an environment variable, like "${GITHUB_TOKEN}": the config never holds the credential itself`}
	}
	return nil
}

// envRefPattern is how a config value names an environment variable:
// ${NAME}, the whole value.
var envRefPattern = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*\}$`)

// EnvVar is the environment variable a config value names as ${NAME}
// (a remote source's token or credentials, the publish password), or ""
// when the value is not such a reference.
func EnvVar(s string) string {
	if !envRefPattern.MatchString(s) {
		return ""
	}
	return s[2 : len(s)-1]
}

// TokenVar is the environment variable s.Token names ("" if none).
func (s SourceSpec) TokenVar() string { return EnvVar(s.Token) }

// SpecError names the agent and field at fault.
type SpecError struct {
	Agent, Field, Msg string
}

func (e *SpecError) Error() string {
	if e.Agent == "" {
		return e.Field + " " + e.Msg
	}
	return fmt.Sprintf("agent %q: %s %s", e.Agent, e.Field, e.Msg)
}

func checkPattern(p string) error {
	if p == "" {
		return fmt.Errorf("is an empty pattern: use * for every skill")
	}
	if strings.Contains(p, slashStandIn) {
		return fmt.Errorf("pattern %q holds a NUL character: use * and ? over skill names", p)
	}
	if _, err := path.Match(flattenSlash(p), ""); err != nil {
		return fmt.Errorf("pattern %q is malformed: %v", p, err)
	}
	return nil
}

// matchAny reports whether name matches one of the glob patterns. Patterns
// are checked by Validate; a malformed one matches nothing.
//
// Skill names are not paths: a name such as "ui-toolkit/web" (which real
// plugins ship, and which the loader accepts with a warning) must be matched
// by the default "*" like any other, so '/' is an ordinary character here:
// * and ? match it, and a literal '/' in a pattern matches it.
func matchAny(patterns []string, name string) bool {
	name = flattenSlash(name)
	for _, p := range patterns {
		if ok, _ := path.Match(flattenSlash(p), name); ok {
			return true
		}
	}
	return false
}

// MaxAgentIDLen bounds an agent id.
const MaxAgentIDLen = 64

// checkAgentID refuses an id that could not be used everywhere an id
// goes: URL paths (/agents/ID/mcp), token scopes (agent:ID) and flags.
// An id is 1 to 64 ASCII letters, digits, '.', '_' and '-', starting with
// a letter or digit.
func checkAgentID(id string) error {
	if len(id) > MaxAgentIDLen {
		return fmt.Errorf("%q is %d characters long: an agent id has at most %d", id, len(id), MaxAgentIDLen)
	}
	for i, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || i > 0 && (r == '.' || r == '_' || r == '-')
		if !ok {
			return fmt.Errorf("%q: an agent id may hold only ASCII letters, digits, '.', '_' and '-', and starts with a letter or digit (it goes into URLs like /agents/ID/mcp and token scopes like agent:ID); %q is not allowed there", id, string(r))
		}
	}
	return nil
}

// slashStandIn replaces '/' before path.Match, which would not let * or ?
// cross it. NUL cannot occur in a loaded skill name (control characters
// are refused) and checkPattern refuses it in patterns.
const slashStandIn = "\x00"

func flattenSlash(s string) string {
	if !strings.Contains(s, "/") {
		return s
	}
	return strings.ReplaceAll(s, "/", slashStandIn)
}

func formatName(f string) string {
	if f == "" {
		return render.FormatPi
	}
	return f
}
