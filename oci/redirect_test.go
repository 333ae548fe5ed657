package oci_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/loadout/loadout/internal/registrytest"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/oci"
)

// A registry that redirects blob downloads to another host (as registries
// on object storage do): the download follows, the other host never sees
// the credentials, and a redirect of anything but a blob download is
// refused. The registry is real (basic auth on); two proxies stand in for
// its front door and for the object store.
func TestBlobRedirectToAnotherHostGetsNoCredentials(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{Users: map[string]string{"alice": "s3cret"}})
	ctx := testutil.Context(t)
	target, _ := url.Parse(reg.URL)

	// The "object store": serves what the registry serves, adding its own
	// credentials (a presigned URL's), and records what it was sent.
	var mu sync.Mutex
	var storeAuth []string
	storeProxy := httputil.NewSingleHostReverseProxy(target)
	store := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		storeAuth = append(storeAuth, r.Header.Get("Authorization"))
		mu.Unlock()
		r.Header.Del("Authorization")
		r.SetBasicAuth("alice", "s3cret")
		storeProxy.ServeHTTP(w, r)
	}))
	defer store.Close()

	redirectManifests := false
	frontProxy := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		blob := r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/blobs/sha256:")
		manifest := r.Method == http.MethodGet && strings.Contains(r.URL.Path, "/manifests/")
		if (blob || (manifest && redirectManifests)) && r.Header.Get("Authorization") != "" {
			http.Redirect(w, r, store.URL+r.URL.Path, http.StatusTemporaryRedirect)
			return
		}
		frontProxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	host := strings.TrimPrefix(front.URL, "http://")

	c, err := oci.NewClient(oci.Options{Insecure: true, NoDockerConfig: true, Username: "alice", Password: "s3cret"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := oci.Pack(sampleBundle(), oci.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Push(ctx, host+"/team/pdf-tools:1", a, oci.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	p, err := c.Pull(ctx, host+"/team/pdf-tools:1")
	if err != nil {
		t.Fatal(err)
	}
	if p.Digest != a.Manifest.Descriptor.Digest {
		t.Fatalf("digest %s", p.Digest)
	}
	mu.Lock()
	seen := append([]string(nil), storeAuth...)
	mu.Unlock()
	if len(seen) == 0 {
		t.Fatal("the blob download was not redirected: the test tests nothing")
	}
	for _, h := range seen {
		if h != "" {
			t.Fatalf("the other host was sent Authorization %q", h)
		}
	}
	// A redirected manifest is refused: only blob downloads may move.
	redirectManifests = true
	if _, err := c.Pull(ctx, host+"/team/pdf-tools:1"); err == nil || !strings.Contains(err.Error(), "only blob downloads may be redirected") {
		t.Fatalf("a redirected manifest: %v", err)
	}
}

// An index in a real registry is followed to its linux manifest.
func TestPullFollowsAnIndex(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	ctx := testutil.Context(t)
	c, _ := oci.NewClient(oci.Options{Insecure: true, NoDockerConfig: true})
	a, _ := oci.Pack(sampleBundle(), oci.Meta{})
	if _, err := c.Push(ctx, reg.Ref("team/pdf-tools:m"), a, oci.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	md := a.Manifest.Descriptor
	md.Platform = &oci.Platform{OS: "linux", Architecture: "amd64"}
	idx, _ := json.Marshal(oci.Index{SchemaVersion: 2, MediaType: oci.MediaTypeImageIndex, Manifests: []oci.Descriptor{md}})
	ib := oci.Blob{Data: idx, Descriptor: oci.Descriptor{MediaType: oci.MediaTypeImageIndex, Digest: sha(idx), Size: int64(len(idx))}}
	if err := c.PushManifest(ctx, reg.Ref("team/pdf-tools:idx"), ib); err != nil {
		t.Fatal(err)
	}
	p, err := c.Pull(ctx, reg.Ref("team/pdf-tools:idx"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Digest != md.Digest || p.Index != sha(idx) {
		t.Fatalf("digest %s index %s", p.Digest, p.Index)
	}
}
