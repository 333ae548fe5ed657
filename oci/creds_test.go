package oci_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/registrytest"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/oci"
)

// Credentials as other OCI tools find them: a docker config.json's auths,
// and a credential helper it names (a real program on PATH speaking the
// docker-credential protocol), against a real registry with basic auth
// and TLS.
func TestDockerConfigCredentials(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{TLS: true, Users: map[string]string{"alice": "s3cret", "bob": "helper-pw"}})
	ctx := testutil.Context(t)
	a, _ := oci.Pack(sampleBundle(), oci.Meta{})
	dir := t.TempDir()

	auths := filepath.Join(dir, "auths.json")
	testutil.Write(t, auths, fmt.Sprintf(`{"auths": {%q: {"auth": %q}}}`, reg.Host, base64.StdEncoding.EncodeToString([]byte("alice:s3cret"))))
	c, err := oci.NewClient(oci.Options{DockerConfig: auths, CAFile: reg.CAFile})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Push(ctx, reg.Ref("team/a:1"), a, oci.PushOptions{}); err != nil {
		t.Fatalf("with the config's auths: %v", err)
	}

	// A credential helper: docker-credential-loadouttest on PATH.
	bin := filepath.Join(dir, "bin")
	testutil.Mkdir(t, bin)
	testutil.WriteBytes(t, filepath.Join(bin, "docker-credential-loadouttest"), []byte("#!/bin/sh\n[ \"$1\" = get ] || exit 1\nread host\nprintf '{\"ServerURL\":\"%s\",\"Username\":\"bob\",\"Secret\":\"helper-pw\"}' \"$host\"\n"), 0o755)
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	helper := filepath.Join(dir, "helper.json")
	testutil.Write(t, helper, fmt.Sprintf(`{"credHelpers": {%q: "loadouttest"}}`, reg.Host))
	c, _ = oci.NewClient(oci.Options{DockerConfig: helper, CAFile: reg.CAFile})
	if _, err := c.Push(ctx, reg.Ref("team/b:1"), a, oci.PushOptions{}); err != nil {
		t.Fatalf("with the credential helper: %v", err)
	}

	// A config with a wrong password: refused by the registry.
	bad := filepath.Join(dir, "bad.json")
	testutil.Write(t, bad, fmt.Sprintf(`{"auths": {%q: {"auth": %q}}}`, reg.Host, base64.StdEncoding.EncodeToString([]byte("alice:wrong"))))
	c, _ = oci.NewClient(oci.Options{DockerConfig: bad, CAFile: reg.CAFile})
	if _, err := c.Resolve(ctx, reg.Ref("team/a:1")); oci.CodeOf(err) != oci.CodeRegistry {
		t.Fatalf("a wrong password: %v", err)
	}
	// Explicit credentials win over the config.
	c, _ = oci.NewClient(oci.Options{DockerConfig: bad, CAFile: reg.CAFile, Username: "alice", Password: "s3cret"})
	if _, err := c.Resolve(ctx, reg.Ref("team/a:1")); err != nil {
		t.Fatalf("explicit credentials over a bad config: %v", err)
	}
}

// A registry that never answers, and one that dribbles a blob: each
// request ends at its bound with an error (these faults need a fake: a
// real registry does neither).
func TestHangingAndDribblingRegistry(t *testing.T) {
	ctx := testutil.Context(t)
	release := make(chan struct{})
	defer close(release)
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	c, _ := oci.NewClient(oci.Options{Insecure: true, NoDockerConfig: true, HeaderTimeout: 200 * time.Millisecond, Timeout: time.Second})
	if _, err := c.Resolve(ctx, strings.TrimPrefix(hang.URL, "http://")+"/team/x:1"); oci.CodeOf(err) != oci.CodeRegistry || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("a registry that never answers: %v", err)
	}

	a, _ := oci.Pack(sampleBundle(), oci.Meta{})
	dribble := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case strings.Contains(r.URL.Path, "/manifests/"):
			w.Header().Set("Content-Type", oci.MediaTypeImageManifest)
			w.Header().Set("Docker-Content-Digest", a.Manifest.Descriptor.Digest)
			w.Write(a.Manifest.Data)
		case strings.Contains(r.URL.Path, "/blobs/"):
			w.Header().Set("Content-Length", fmt.Sprint(len(a.Layer.Data)))
			w.WriteHeader(200)
			for _, b := range a.Layer.Data {
				w.Write([]byte{b})
				w.(http.Flusher).Flush()
				select {
				case <-time.After(100 * time.Millisecond):
				case <-r.Context().Done():
					return
				case <-release:
					return
				}
			}
		default:
			w.WriteHeader(200)
		}
	}))
	defer dribble.Close()
	_, err := c.Pull(ctx, strings.TrimPrefix(dribble.URL, "http://")+"/team/x:1")
	if oci.CodeOf(err) != oci.CodeRegistry || !strings.Contains(err.Error(), "the download of the blob stopped") {
		t.Fatalf("a dribbled blob: %v", err)
	}
}
