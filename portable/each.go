package portable

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/loadout/loadout/skill"
)

// ImportJSONEach reads a JSON array of portable documents (or a single
// document) one document at a time, so a refused document does not hide
// the outcome of the others: for document i, either bundles[i] or errs[i]
// is set, and an error's Entry starts with the index, e.g.
// "[2].skill.files[0]". err is set only when data as a whole is not JSON;
// then nothing was read. An importer decides what a refusal means for the
// rest (loadout writes all or nothing unless asked for a partial import).
func ImportJSONEach(data []byte) (bundles []*skill.Bundle, errs []error, err error) {
	var raw json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, nil, jsonError("", err)
	}
	if t := bytes.TrimLeft(raw, " \t\r\n"); len(t) == 0 || t[0] != '[' {
		b, _, err := importDoc(raw, "")
		if err != nil {
			b = nil
		}
		return []*skill.Bundle{b}, []error{err}, nil
	}
	var docs []json.RawMessage
	if err := json.Unmarshal(raw, &docs); err != nil {
		return nil, nil, jsonError("", err)
	}
	bundles = make([]*skill.Bundle, len(docs))
	errs = make([]error, len(docs))
	for i, d := range docs {
		if b, _, err := importDoc(d, fmt.Sprintf("[%d]", i)); err != nil {
			errs[i] = err
		} else {
			bundles[i] = b
		}
	}
	return bundles, errs, nil
}
