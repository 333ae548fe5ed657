package oci_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/loadout/loadout/oci"
)

// entry is one tar entry of a test layer.
type entry struct {
	name     string
	data     string
	mode     int64
	typ      byte
	linkname string
}

func tarLayer(t testing.TB, gz bool, entries ...entry) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w io.Writer = &buf
	var zw *gzip.Writer
	if gz {
		zw = gzip.NewWriter(&buf)
		w = zw
	}
	tw := tar.NewWriter(w)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		h := &tar.Header{Name: e.name, Typeflag: typ, Mode: mode, Linkname: e.linkname}
		if typ == tar.TypeReg {
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			if _, err := tw.Write([]byte(e.data)); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if zw != nil {
		zw.Close()
	}
	return buf.Bytes()
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

// blobs is a Fetcher over a map, by digest.
type blobs map[string][]byte

func (b blobs) Fetch(_ context.Context, d oci.Descriptor) (io.ReadCloser, error) {
	data, ok := b[d.Digest]
	if !ok {
		return nil, fmt.Errorf("no blob %s", d.Digest)
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

func (b blobs) add(mediaType string, data []byte) oci.Descriptor {
	b[sha(data)] = data
	return oci.Descriptor{MediaType: mediaType, Digest: sha(data), Size: int64(len(data))}
}

func manifestJSON(t testing.TB, m oci.Manifest) []byte {
	t.Helper()
	if m.SchemaVersion == 0 {
		m.SchemaVersion = 2
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const skillMD = "---\nname: demo\ndescription: A demo skill.\n---\n# Demo\n"
