package oci

import (
	"errors"
	"fmt"
)

// Error is a refusal of this package. Code is stable (docs/oci.md lists
// them); Entry names the tar entry, blob or index entry at fault.
type Error struct {
	Code  string
	Entry string
	Msg   string
	Err   error
}

func (e *Error) Error() string {
	if e.Entry != "" {
		return fmt.Sprintf("oci: %s: %s", e.Entry, e.Msg)
	}
	return "oci: " + e.Msg
}

func (e *Error) Unwrap() error { return e.Err }

// Error codes.
const (
	CodeBadReference = "oci-bad-reference"    // the reference does not parse
	CodePlainHTTP    = "oci-plain-http"       // a plain HTTP registry without insecure
	CodeRegistry     = "oci-registry"         // the registry answered with an error, or could not be reached
	CodeBadManifest  = "oci-bad-manifest"     // a manifest or index that does not parse or breaks the spec
	CodeIndex        = "oci-hostile-index"    // an index too large, too deep, or with no usable manifest
	CodeLayout       = "oci-unknown-layout"   // no layout this package reads
	CodeTooLarge     = "oci-too-large"        // a blob, file, skill or stream over its limit
	CodeTooMany      = "oci-too-many-entries" // more tar entries, files or layers than the limit
	CodeDigest       = "oci-digest-mismatch"  // a blob's bytes do not match its descriptor
	CodeCorrupt      = "oci-corrupt-layer"    // gzip or tar that cannot be read
	CodePath         = "oci-path-refused"     // an entry name refused by skill.CleanPath
	CodeLink         = "oci-link-refused"     // a symbolic or hard link that leaves the skill or points nowhere
	CodeSpecial      = "oci-special-file"     // a device, fifo or other special entry; an image whiteout
	CodeDuplicate    = "oci-duplicate-entry"  // two entries with the same name, or a file where a folder is
	CodeNoSkill      = "oci-no-skill"         // no SKILL.md at the top of the layer or of its one folder
	CodeBadSkill     = "oci-bad-skill"        // the files do not pass skill.Bundle.Check
)

// CodeOf returns the Code of an *Error in err's chain, or "".
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}
