package wellknown

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
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

// A poller's If-None-Match (either form's ETag) is 304 while the catalog
// is the same, a reload with no change included, and 200 with the new
// index and a new ETag once a skill changed: a 304 is never given for an
// index that is no longer the one served.
func TestIndexConditionalAfterChange(t *testing.T) {
	srv, root, svc := setup(t)
	for _, idx := range []string{"agent-skills", "skills"} {
		u := srv.URL + "/.well-known/" + idx + "/index.json"
		tags := map[string]string{}
		for _, ae := range []string{"identity", "gzip"} {
			r := get(t, u, "Accept-Encoding", ae)
			mustOK(t, r, idx+" "+ae)
			tags[ae] = r.header.Get("ETag")
			if r := get(t, u, "Accept-Encoding", ae, "If-None-Match", tags[ae]); r.status != http.StatusNotModified || len(r.body) != 0 {
				t.Fatalf("%s %s: If-None-Match its ETag: %d", idx, ae, r.status)
			}
		}
		svc.Reload(context.Background(), "test") // no change: the same bytes, the same ETag
		if r := get(t, u, "Accept-Encoding", "identity", "If-None-Match", tags["identity"]); r.status != http.StatusNotModified {
			t.Fatalf("%s after a reload with no change: %d", idx, r.status)
		}
		name := "added-" + strings.ReplaceAll(idx, "-", "")
		if err := os.MkdirAll(filepath.Join(root, name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name, "SKILL.md"), []byte(md(name, "Added after the first index.")), 0o644); err != nil {
			t.Fatal(err)
		}
		svc.Reload(context.Background(), "test")
		for ae, tag := range tags {
			r := get(t, u, "Accept-Encoding", ae, "If-None-Match", tag)
			mustOK(t, r, idx+" "+ae+" after a change")
			if r.header.Get("ETag") == tag {
				t.Errorf("%s %s: the same ETag after a change", idx, ae)
			}
			body := r.body
			if ae == "gzip" {
				zr, err := gzip.NewReader(bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				body, _ = io.ReadAll(zr)
			}
			if !bytes.Contains(body, []byte(`"name":"`+name+`"`)) {
				t.Errorf("%s %s: the new skill is not in the index after a change", idx, ae)
			}
		}
	}
}
