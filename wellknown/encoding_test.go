package wellknown

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Both indexes are unindented, carry a strong ETag (304 on If-None-Match),
// and go out gzip-compressed to a client that accepts gzip, with Vary:
// Accept-Encoding; the digests inside are of the uncompressed files and
// archives, whatever encoding the index travels in.
func TestIndexEncoding(t *testing.T) {
	srv, _, _ := setup(t)
	for _, idx := range []string{"agent-skills", "skills"} {
		u := srv.URL + "/.well-known/" + idx + "/index.json"
		plain := get(t, u, "Accept-Encoding", "identity")
		mustOK(t, plain, idx)
		if bytes.Contains(plain.body, []byte("\n ")) || bytes.Count(plain.body, []byte("\n")) != 1 {
			t.Errorf("%s: indented:\n%s", idx, plain.body)
		}
		tag := plain.header.Get("ETag")
		if r := get(t, u, "Accept-Encoding", "identity", "If-None-Match", tag); r.status != http.StatusNotModified || len(r.body) != 0 {
			t.Errorf("%s If-None-Match: %d", idx, r.status)
		}
		gz := get(t, u, "Accept-Encoding", "gzip")
		mustOK(t, gz, idx)
		if gz.header.Get("Content-Encoding") != "gzip" || !strings.Contains(gz.header.Get("Vary"), "Accept-Encoding") || gz.header.Get("ETag") == tag ||
			gz.header.Get("Loadout-Warnings") != plain.header.Get("Loadout-Warnings") || gz.header.Get("Cache-Control") != cacheControl {
			t.Fatalf("%s gzip: headers %v", idx, gz.header)
		}
		zr, err := gzip.NewReader(bytes.NewReader(gz.body))
		if err != nil {
			t.Fatal(err)
		}
		if body, _ := io.ReadAll(zr); !bytes.Equal(body, plain.body) {
			t.Errorf("%s: the gzip form is not the index", idx)
		}
		if r := get(t, u, "Accept-Encoding", "gzip;q=0"); r.header.Get("Content-Encoding") != "" || !bytes.Equal(r.body, plain.body) {
			t.Errorf("%s gzip;q=0: Content-Encoding %q", idx, r.header.Get("Content-Encoding"))
		}
	}
	// The digests in the gzip-compressed 0.2.0 index are those of the
	// files and archives as served, even to a client that accepts gzip.
	u := srv.URL + "/.well-known/agent-skills/index.json"
	zr, err := gzip.NewReader(bytes.NewReader(get(t, u, "Accept-Encoding", "gzip").body))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(zr)
	idx := decode[v2Index](t, body)
	if len(idx.Skills) == 0 {
		t.Fatal("no skills")
	}
	for _, e := range idx.Skills {
		a := get(t, resolve(t, u, e.URL), "Accept-Encoding", "gzip")
		mustOK(t, a, e.URL)
		if a.header.Get("Content-Encoding") != "" || sha(a.body) != e.Digest {
			t.Errorf("%s: Content-Encoding %q, served bytes hash to %s, the index says %s", e.Name, a.header.Get("Content-Encoding"), sha(a.body), e.Digest)
		}
	}
}

// The executable-dropped warning is in the index once per skill with
// executable files: the index carries it short (the files, no advice),
// while ExecutableWarning (the log, `loadout check`) keeps the advice.
func TestIndexExecutableWarningIsShort(t *testing.T) {
	srv, _, _ := setup(t)
	for _, idx := range []string{"agent-skills", "skills"} {
		var v struct {
			Warnings []Warning `json:"warnings"`
		}
		r := get(t, srv.URL+"/.well-known/"+idx+"/index.json")
		mustOK(t, r, idx)
		if err := json.Unmarshal(r.body, &v); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, w := range v.Warnings {
			if w.Code != WarnExecutable {
				continue
			}
			n++
			if len(w.Message) > 140 || !strings.Contains(w.Message, `"scripts/run.sh"`) || !strings.Contains(w.Message, w.Skill) {
				t.Errorf("%s: %d bytes: %s", idx, len(w.Message), w.Message)
			}
		}
		if n != 1 {
			t.Errorf("%s: %d executable warnings: %s", idx, n, r.body)
		}
	}
}
