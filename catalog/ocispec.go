package catalog

import (
	"fmt"
	"regexp"
	"strings"
)

// The grammar of the OCI distribution spec (and of docker references):
// a registry host with an optional port, then path components of
// lowercase letters and digits joined by '.', '_', '__' or '-'s; a tag
// of up to 128 characters; a digest.
var (
	ociHost      = regexp.MustCompile(`^(localhost|[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$`)
	ociComponent = regexp.MustCompile(`^[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*$`)
	ociTag       = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)
	ociDigest    = regexp.MustCompile(`^(sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128})$`)
)

// MaxTagRange bounds an oci source's "tags" range.
const MaxTagRange = 256

// tagRangeChars are the characters a semver range may hold.
var tagRangeChars = regexp.MustCompile(`^[0-9A-Za-z.*^~<>=!|,+ -]+$`)

// CheckTagRange is the check of a "tags" range the library can make
// without a semver library (which would bring database/sql/driver into
// it): not empty, at most MaxTagRange characters, only the characters of
// a range, at least one digit or wildcard. The range itself is parsed
// (Masterminds/semver, internal/semrange) when the source is opened, and
// cmd refuses one that does not parse before it runs, naming the field.
func CheckTagRange(s string) error {
	switch {
	case strings.TrimSpace(s) == "":
		return fmt.Errorf("is empty: give a semver range, like \">=1.2 <2\" or \"^1.4\"")
	case len(s) > MaxTagRange:
		return fmt.Errorf("is %d characters, over the limit of %d", len(s), MaxTagRange)
	case !tagRangeChars.MatchString(s) || !strings.ContainsAny(s, "0123456789*xX"):
		return fmt.Errorf("%q is not a semver range: give one like \">=1.2 <2\", \"^1.4\" or \"~1.2.3\"", s)
	}
	return nil
}

// MaxOCIRepository bounds an oci source's repository reference.
const MaxOCIRepository = 255

// checkOCI checks an oci source's fields.
func (s SourceSpec) checkOCI() *SpecError {
	if err := CheckOCIRepository(s.OCI); err != nil {
		return &SpecError{Field: "oci", Msg: err.Error()}
	}
	n := 0
	for _, set := range []bool{s.Tag != "", s.Digest != "", s.Tags != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return &SpecError{Field: "tag", Msg: `an oci source names exactly one of "tag" (like "1.2.0"), "digest" ("sha256:…") or "tags" (a semver range over the repository's tags, like ">=1.2 <2")`}
	}
	switch {
	case s.Tag != "" && !ociTag.MatchString(s.Tag):
		return &SpecError{Field: "tag", Msg: fmt.Sprintf("%q is not an OCI tag: up to 128 letters, digits, '_', '.' and '-', not starting with '.' or '-'", s.Tag)}
	case s.Digest != "" && !ociDigest.MatchString(s.Digest):
		return &SpecError{Field: "digest", Msg: fmt.Sprintf("%q is not a manifest digest: give \"sha256:\" and 64 lowercase hex digits", s.Digest)}
	case s.Tags != "":
		if err := CheckTagRange(s.Tags); err != nil {
			return &SpecError{Field: "tags", Msg: err.Error()}
		}
	}
	for _, f := range []struct{ name, val string }{{"ref", s.Ref}} {
		if f.val != "" {
			return &SpecError{Field: f.name, Msg: `is for git sources: an oci source names "tag", "digest" or "tags"`}
		}
	}
	if len(s.AllowedOrigins) > 0 {
		return &SpecError{Field: "allowedOrigins", Msg: "is for index sources only: an oci source fetches from its registry (and the blob locations it redirects to, without credentials)"}
	}
	if len(s.Paths) > 0 {
		return &SpecError{Field: "paths", Msg: "is for git sources: an oci source's artifact is one skill"}
	}
	if s.Token != "" {
		return &SpecError{Field: "token", Msg: `is for git and index sources: give an oci source "username" and "password", each naming an environment variable like "${REGISTRY_USER}"`}
	}
	if (s.Username == "") != (s.Password == "") {
		return &SpecError{Field: "username", Msg: `"username" and "password" go together: give both (each naming an environment variable) or neither (the docker config's credentials are used)`}
	}
	for _, f := range []struct{ name, val string }{{"username", s.Username}, {"password", s.Password}} {
		if f.val != "" && EnvVar(f.val) == "" {
			return &SpecError{Field: f.name, Msg: fmt.Sprintf(`must name an environment variable, like "${REGISTRY_%s}": the config never holds the credential itself`, strings.ToUpper(f.name))}
		}
	}
	return nil
}

// checkOCIFieldsUnset refuses the oci fields on a source of another kind.
func (s SourceSpec) checkOCIFieldsUnset(msg string) *SpecError {
	for _, f := range []struct {
		name string
		set  bool
	}{{"tag", s.Tag != ""}, {"digest", s.Digest != ""}, {"tags", s.Tags != ""}, {"insecure", s.Insecure}, {"username", s.Username != ""}, {"password", s.Password != ""}} {
		if f.set {
			return &SpecError{Field: f.name, Msg: msg}
		}
	}
	return nil
}

// CheckOCIRepository checks an oci source's repository reference:
// "registry.example.com[:port]/path/to/repo", without a scheme, tag or
// digest.
func CheckOCIRepository(ref string) error {
	if len(ref) > MaxOCIRepository {
		return fmt.Errorf("is %d characters, over the limit of %d", len(ref), MaxOCIRepository)
	}
	if strings.Contains(ref, "://") {
		return fmt.Errorf("%q: give the repository without a scheme, like registry.example.com/team/skills/pdf (a registry on plain HTTP also needs \"insecure\": true)", ref)
	}
	host, repo, ok := strings.Cut(ref, "/")
	if !ok || repo == "" {
		return fmt.Errorf("%q: give the registry's host and the repository, like registry.example.com/team/skills/pdf", ref)
	}
	if !ociHost.MatchString(host) {
		return fmt.Errorf("%q: %q is not a registry host (a host name or address, and an optional port)", ref, host)
	}
	if i := strings.IndexAny(repo, "@:"); i >= 0 {
		return fmt.Errorf("%q: give the tag in \"tag\" and the digest in \"digest\", not in the repository", ref)
	}
	for _, c := range strings.Split(repo, "/") {
		if !ociComponent.MatchString(c) {
			return fmt.Errorf("%q: %q is not a repository name part: lowercase letters and digits, joined by '.', '_' or '-'", ref, c)
		}
	}
	return nil
}

// OCITokenVars are the environment variables an oci source's username and
// password name ("" when it names none).
func (s SourceSpec) OCITokenVars() (user, pass string) {
	return EnvVar(s.Username), EnvVar(s.Password)
}
