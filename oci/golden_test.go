package oci_test

import (
	"bytes"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/loadout/loadout/internal/registrytest"
	"github.com/loadout/loadout/internal/testutil"
	"github.com/loadout/loadout/oci"
)

// rawPush uploads a blob or manifest with the distribution API's own
// requests: no code of loadout's or oras-go's on the way in.
func rawBlob(t *testing.T, reg *registrytest.Registry, repo string, data []byte) {
	t.Helper()
	c := reg.Client()
	res, err := c.Post(reg.URL+"/v2/"+repo+"/blobs/uploads/", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusAccepted {
		t.Fatalf("upload start: %d %v", res.StatusCode, err)
	}
	u, _ := url.Parse(reg.URL)
	loc = u.ResolveReference(loc)
	q := loc.Query()
	q.Set("digest", sha(data))
	loc.RawQuery = q.Encode()
	req, _ := http.NewRequest(http.MethodPut, loc.String(), bytes.NewReader(data))
	req.Header.Set("Content-Type", "application/octet-stream")
	res, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("blob upload: %d", res.StatusCode)
	}
}

func rawManifest(t *testing.T, reg *registrytest.Registry, repo, tag, mediaType string, data []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPut, reg.URL+"/v2/"+repo+"/manifests/"+tag, bytes.NewReader(data))
	req.Header.Set("Content-Type", mediaType)
	res, err := reg.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("manifest upload: %d", res.StatusCode)
	}
}

func rawGet(t *testing.T, reg *registrytest.Registry, path, accept string) []byte {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, reg.URL+path, nil)
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	res, err := reg.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, res.StatusCode, b)
	}
	return b
}

// TestInteropGolden is the interop runs without building oras and crane:
// the artifacts they pushed (LOADOUT_OCI_INTEROP=1 LOADOUT_OCI_GOLDEN=1
// keeps them in testdata/interop) are put in a real registry with the
// distribution API's plain requests, and loadout pulls the skill they
// hold, byte for byte; what loadout pushes is read back the same way.
func TestInteropGolden(t *testing.T) {
	reg := registrytest.Start(t, registrytest.Options{})
	ctx := testutil.Context(t)
	c, _ := oci.NewClient(oci.Options{Insecure: true, NoDockerConfig: true})
	src := interopSkill(t, t.TempDir())
	for _, g := range []struct {
		name   string
		layout oci.Layout
	}{{"oras-push", oci.LayoutAgentSkills}, {"oras-acr", oci.LayoutACR}, {"crane-append", oci.LayoutImage}} {
		dir := filepath.Join("testdata", "interop", g.name)
		m, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		mt, _ := os.ReadFile(filepath.Join(dir, "manifest.mediatype"))
		blobsDir, _ := os.ReadDir(filepath.Join(dir, "blobs"))
		for _, b := range blobsDir {
			data, _ := os.ReadFile(filepath.Join(dir, "blobs", b.Name()))
			rawBlob(t, reg, "golden/"+g.name, data)
		}
		rawManifest(t, reg, "golden/"+g.name, "1", strings.TrimSpace(string(mt)), m)
		p, err := c.Pull(ctx, reg.Ref("golden/"+g.name+":1"))
		if err != nil {
			t.Fatalf("%s: %v", g.name, err)
		}
		if p.Layout != g.layout || p.Digest != sha(m) {
			t.Errorf("%s: layout %s digest %s", g.name, p.Layout, p.Digest)
		}
		sameAsFolder(t, src, p.Bundle)
	}
	// The other way: loadout's push read back with plain requests.
	a, err := oci.PackDir(src, oci.Meta{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Push(ctx, reg.Ref("team/pdf-tools:1"), a, oci.PushOptions{}); err != nil {
		t.Fatal(err)
	}
	if m := rawGet(t, reg, "/v2/team/pdf-tools/manifests/1", oci.MediaTypeImageManifest); !bytes.Equal(m, a.Manifest.Data) {
		t.Fatalf("the registry serves\n%s\nloadout pushed\n%s", m, a.Manifest.Data)
	}
	if l := rawGet(t, reg, "/v2/team/pdf-tools/blobs/"+a.Layer.Descriptor.Digest, ""); !bytes.Equal(l, a.Layer.Data) {
		t.Fatal("the registry serves another layer")
	}
}
