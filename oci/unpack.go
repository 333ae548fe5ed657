package oci

import (
	"archive/tar"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/loadout/loadout/skill"
)

// Limits bound what Unpack and the Client read. Zero fields take the
// defaults (DefaultLimits).
type Limits struct {
	// MaxManifestBytes caps a manifest or an index. Default 1 MiB.
	MaxManifestBytes int64
	// MaxIndexEntries caps the manifests an index lists. Default 64.
	MaxIndexEntries int
	// MaxLayers caps the layers of a manifest. Default 16.
	MaxLayers int
	// MaxLayerBytes caps the compressed bytes of the skill's layers
	// together, read from the descriptors before any download. Default 32 MiB.
	MaxLayerBytes int64
	// MaxUnpackedBytes caps the decompressed tar stream of all layers
	// together, headers and padding included: the gzip-bomb bound.
	// Default 24 MiB.
	MaxUnpackedBytes int64
	// MaxFileBytes caps one file. Default skill.DefaultMaxFileSize (1 MiB).
	MaxFileBytes int64
	// MaxTotalBytes caps all files together. Default
	// skill.DefaultMaxTotalSize (16 MiB).
	MaxTotalBytes int64
	// MaxFiles caps the files, SKILL.md included. Default
	// skill.DefaultMaxFiles+1 (513).
	MaxFiles int
	// MaxEntries caps the tar entries of all layers (files, folders and
	// everything else). Default 2048.
	MaxEntries int
}

// DefaultLimits are the limits zero fields take.
var DefaultLimits = Limits{
	MaxManifestBytes: 1 << 20,
	MaxIndexEntries:  64,
	MaxLayers:        16,
	MaxLayerBytes:    32 << 20,
	MaxUnpackedBytes: 24 << 20,
	MaxFileBytes:     skill.DefaultMaxFileSize,
	MaxTotalBytes:    skill.DefaultMaxTotalSize,
	MaxFiles:         skill.DefaultMaxFiles + 1,
	MaxEntries:       2048,
}

// WithDefaults returns l with its zero fields set to DefaultLimits'.
func (l Limits) WithDefaults() Limits {
	d := DefaultLimits
	if l.MaxManifestBytes <= 0 {
		l.MaxManifestBytes = d.MaxManifestBytes
	}
	if l.MaxIndexEntries <= 0 {
		l.MaxIndexEntries = d.MaxIndexEntries
	}
	if l.MaxLayers <= 0 {
		l.MaxLayers = d.MaxLayers
	}
	if l.MaxLayerBytes <= 0 {
		l.MaxLayerBytes = d.MaxLayerBytes
	}
	if l.MaxUnpackedBytes <= 0 {
		l.MaxUnpackedBytes = d.MaxUnpackedBytes
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = d.MaxFileBytes
	}
	if l.MaxTotalBytes <= 0 {
		l.MaxTotalBytes = d.MaxTotalBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = d.MaxFiles
	}
	if l.MaxEntries <= 0 {
		l.MaxEntries = d.MaxEntries
	}
	return l
}

// Fetcher fetches a blob by its descriptor. The Client is one; tests use
// a map. Unpack verifies the size and digest of what it returns.
type Fetcher interface {
	Fetch(ctx context.Context, d Descriptor) (io.ReadCloser, error)
}

// Unpacked is a skill read from a manifest.
type Unpacked struct {
	Bundle *skill.Bundle
	Meta   Meta
	Layout Layout
	// Manifest is the manifest as parsed; Layers the descriptors of the
	// layers that were read.
	Manifest Manifest
	Layers   []Descriptor
	// Root is the folder of the layer the skill was in ("" for the top).
	Root string
}

// ParseManifest parses an image manifest, bounded by the caller (the
// Client reads at most Limits.MaxManifestBytes).
func ParseManifest(data []byte) (Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return m, &Error{Code: CodeBadManifest, Msg: "the manifest is not JSON: " + err.Error(), Err: err}
	}
	if m.SchemaVersion != 2 {
		return m, &Error{Code: CodeBadManifest, Msg: fmt.Sprintf("the manifest's schemaVersion is %d; only 2 is read", m.SchemaVersion)}
	}
	switch m.MediaType {
	case "", MediaTypeImageManifest, MediaTypeDockerManifest:
	default:
		return m, &Error{Code: CodeBadManifest, Msg: fmt.Sprintf("the manifest's mediaType is %q, not an image manifest", m.MediaType)}
	}
	for i, d := range append([]Descriptor{m.Config}, m.Layers...) {
		if err := checkDescriptor(d); err != nil {
			field := "config"
			if i > 0 {
				field = fmt.Sprintf("layers[%d]", i-1)
			}
			return m, &Error{Code: CodeBadManifest, Entry: field, Msg: err.Error()}
		}
	}
	return m, nil
}

func checkDescriptor(d Descriptor) error {
	if d.Size < 0 {
		return fmt.Errorf("size %d is negative", d.Size)
	}
	if _, _, err := parseDigest(d.Digest); err != nil {
		return err
	}
	return nil
}

// parseDigest splits "sha256:hex" (or sha512) and checks the hex.
func parseDigest(s string) (algo string, sum []byte, err error) {
	algo, h, ok := strings.Cut(s, ":")
	want := map[string]int{"sha256": 64, "sha512": 128}[algo]
	if !ok || want == 0 {
		return "", nil, fmt.Errorf("digest %q is not sha256:HEX or sha512:HEX", s)
	}
	if len(h) != want || strings.ToLower(h) != h {
		return "", nil, fmt.Errorf("digest %q does not have %d lower-case hex digits", s, want)
	}
	sum, err = hex.DecodeString(h)
	if err != nil {
		return "", nil, fmt.Errorf("digest %q is not hex", s)
	}
	return algo, sum, nil
}

// Detect says which layout a manifest uses and which of its layers hold
// the skill, from the manifest alone (nothing is downloaded).
func Detect(m Manifest, lim Limits) (Layout, []Descriptor, error) {
	lim = lim.WithDefaults()
	if len(m.Layers) > lim.MaxLayers {
		return "", nil, &Error{Code: CodeTooMany, Msg: fmt.Sprintf("the manifest has %d layers; the limit is %d", len(m.Layers), lim.MaxLayers)}
	}
	only := func(layout Layout, mediaType string) (Layout, []Descriptor, error) {
		var found []Descriptor
		for _, l := range m.Layers {
			if l.MediaType == mediaType {
				found = append(found, l)
			}
		}
		if len(found) != 1 {
			return "", nil, &Error{Code: CodeLayout, Msg: fmt.Sprintf("a %s skill artifact has one layer of type %s; this manifest has %d", layout, mediaType, len(found))}
		}
		return layout, found, nil
	}
	cfg := m.Config.MediaType
	switch {
	case m.ArtifactType == ArtifactTypeSkill || cfg == MediaTypeSkillConfig:
		return only(LayoutAgentSkills, MediaTypeSkillContent)
	case m.ArtifactType == ArtifactTypeACRSkill || cfg == ArtifactTypeACRSkill:
		return only(LayoutACR, MediaTypeACRSkillContent)
	case cfg == MediaTypeImageConfig || cfg == MediaTypeDockerConfig || cfg == MediaTypeRedHatSkillConfig:
		if len(m.Layers) == 0 {
			return "", nil, &Error{Code: CodeLayout, Msg: "the image has no layers"}
		}
		for i, l := range m.Layers {
			if !isTarLayer(l.MediaType) {
				return "", nil, &Error{Code: CodeLayout, Entry: fmt.Sprintf("layers[%d]", i), Msg: fmt.Sprintf("layer media type %q is not read: tar or tar+gzip layers only (zstd and foreign layers are not)", l.MediaType)}
			}
		}
		layout := LayoutImage
		if cfg == MediaTypeRedHatSkillConfig || m.Annotations[AnnotationSkillimageStatus] != "" {
			layout = LayoutSkillimage
		}
		return layout, m.Layers, nil
	}
	for _, l := range m.Layers {
		if l.MediaType == MediaTypeACRSkillContent {
			return only(LayoutACR, MediaTypeACRSkillContent)
		}
		if l.MediaType == MediaTypeSkillContent {
			return only(LayoutAgentSkills, MediaTypeSkillContent)
		}
	}
	return "", nil, &Error{Code: CodeLayout, Msg: fmt.Sprintf("artifactType %q with config %q is no skill layout loadout reads: it reads the Agent Skills artifact (%s), ACR's skill artifact (%s) and OCI or Docker images whose layers hold a skill folder (skillimage, kagent)", m.ArtifactType, cfg, ArtifactTypeSkill, ArtifactTypeACRSkill)}
}

func isTarLayer(mt string) bool {
	switch mt {
	case MediaTypeImageLayer, MediaTypeImageLayerGzip, MediaTypeDockerLayerGzip, MediaTypeRedHatSkillLayer, MediaTypeSkillContent, MediaTypeACRSkillContent:
		return true
	}
	return false
}

// Unpack reads the skill a manifest lays out. Sizes are checked from the
// descriptors before anything is fetched; each layer is streamed through
// its digest check, gunzipped under MaxUnpackedBytes and read entry by
// entry under the other limits; nothing is returned unless every digest
// matched. Every entry name goes through skill.CleanPath. Links are kept
// only when they name a file stored before them inside the skill (its
// bytes are copied); a link out of the skill, devices, fifos, image
// whiteouts and two entries with one name are refused, naming the entry.
// The skill is at the top of the layer or in its one folder (the
// proposal's NAME/ root); the bundle passes skill.Bundle.Check with the
// file limits.
func Unpack(ctx context.Context, f Fetcher, manifest []byte, lim Limits) (*Unpacked, error) {
	lim = lim.WithDefaults()
	if int64(len(manifest)) > lim.MaxManifestBytes {
		return nil, &Error{Code: CodeTooLarge, Entry: "manifest", Msg: fmt.Sprintf("the manifest is %d bytes; the limit is %d", len(manifest), lim.MaxManifestBytes)}
	}
	m, err := ParseManifest(manifest)
	if err != nil {
		return nil, err
	}
	layout, layers, err := Detect(m, lim)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, l := range layers {
		total += l.Size
		if l.Size > lim.MaxLayerBytes || total > lim.MaxLayerBytes {
			return nil, &Error{Code: CodeTooLarge, Entry: l.Digest, Msg: fmt.Sprintf("the layers are %d bytes (by their descriptors); the limit is %d: nothing was downloaded", total, lim.MaxLayerBytes)}
		}
	}
	u := &unpacker{lim: lim, files: map[string]*skill.BundleFile{}, dirs: map[string]bool{}}
	for _, l := range layers {
		if err := u.layer(ctx, f, l); err != nil {
			return nil, err
		}
	}
	b, root, err := u.bundle()
	if err != nil {
		return nil, err
	}
	c := &skill.Bundle{Content: b.Content, Files: append([]skill.BundleFile(nil), b.Files...)}
	doc, _, err := c.Check(skill.Limits{MaxFileSize: lim.MaxFileBytes, MaxTotalSize: lim.MaxTotalBytes, MaxFiles: lim.MaxFiles})
	if err != nil {
		return nil, &Error{Code: CodeBadSkill, Msg: "the skill in the layer does not pass the format's checks: " + err.Error(), Err: err}
	}
	return &Unpacked{Bundle: c, Meta: metaOf(m.Annotations, doc), Layout: layout, Manifest: m, Layers: layers, Root: root}, nil
}

func metaOf(ann map[string]string, doc *skill.Document) Meta {
	first := func(keys ...string) string {
		for _, k := range keys {
			if v := ann[k]; v != "" {
				return v
			}
		}
		return ""
	}
	meta := Meta{
		Name:          doc.Name,
		Version:       first(AnnotationVersion, AnnotationACRVersion),
		Description:   doc.Description,
		License:       first(AnnotationLicenses, AnnotationACRLicense),
		Source:        first(AnnotationSource),
		Revision:      first(AnnotationRevision),
		Compatibility: doc.Compatibility,
		Status:        first(AnnotationSkillimageStatus),
	}
	if meta.Version == "" {
		meta.Version = doc.Version
	}
	if meta.License == "" {
		meta.License = doc.License
	}
	if t, err := time.Parse(time.RFC3339, first(AnnotationCreated)); err == nil {
		meta.Created = t.UTC()
	}
	return meta
}

type unpacker struct {
	lim      Limits
	files    map[string]*skill.BundleFile
	dirs     map[string]bool
	entries  int
	total    int64 // file bytes
	unpacked int64 // decompressed stream bytes, all layers
}

// verifier counts and hashes a blob as it streams, refusing a byte past
// the descriptor's size.
type verifier struct {
	r    io.Reader
	d    Descriptor
	h    hash.Hash
	n    int64
	want []byte
}

func newVerifier(r io.Reader, d Descriptor) (*verifier, error) {
	algo, sum, err := parseDigest(d.Digest)
	if err != nil {
		return nil, &Error{Code: CodeBadManifest, Entry: d.Digest, Msg: err.Error()}
	}
	v := &verifier{r: r, d: d, want: sum}
	if algo == "sha512" {
		v.h = sha512.New()
	} else {
		v.h = sha256.New()
	}
	return v, nil
}

func (v *verifier) Read(p []byte) (int, error) {
	if rem := v.d.Size - v.n + 1; int64(len(p)) > rem {
		p = p[:rem] // read at most one byte past the size, to see it
	}
	n, err := v.r.Read(p)
	v.n += int64(n)
	v.h.Write(p[:n])
	if v.n > v.d.Size {
		return n, &Error{Code: CodeDigest, Entry: v.d.Digest, Msg: fmt.Sprintf("the blob is longer than the %d bytes its descriptor says", v.d.Size)}
	}
	return n, err
}

// finish drains the blob (bounded by its size) and checks size and digest.
func (v *verifier) finish() error {
	if _, err := io.Copy(io.Discard, v); err != nil {
		return err
	}
	if v.n != v.d.Size {
		return &Error{Code: CodeDigest, Entry: v.d.Digest, Msg: fmt.Sprintf("the blob is %d bytes; its descriptor says %d", v.n, v.d.Size)}
	}
	if !bytes.Equal(v.h.Sum(nil), v.want) {
		return &Error{Code: CodeDigest, Entry: v.d.Digest, Msg: "the blob's bytes do not match its digest"}
	}
	return nil
}

// capped refuses the byte past max (the gzip-bomb bound).
type capped struct {
	r   io.Reader
	n   *int64
	max int64
}

func (c capped) Read(p []byte) (int, error) {
	if rem := c.max - *c.n + 1; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := c.r.Read(p)
	*c.n += int64(n)
	if *c.n > c.max {
		return n, &Error{Code: CodeTooLarge, Msg: fmt.Sprintf("the layers decompress to more than %d bytes (a compression bomb, or a skill over the limits)", c.max)}
	}
	return n, err
}

func (u *unpacker) layer(ctx context.Context, f Fetcher, d Descriptor) error {
	rc, err := f.Fetch(ctx, d)
	if err != nil {
		return err
	}
	defer rc.Close()
	v, err := newVerifier(rc, d)
	if err != nil {
		return err
	}
	br := bufio.NewReader(v)
	var stream io.Reader = br
	if gz, _ := br.Peek(2); len(gz) == 2 && gz[0] == 0x1f && gz[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return u.corrupt(v, d, "", err)
		}
		zr.Multistream(false)
		stream = zr
	} else if strings.HasSuffix(d.MediaType, "gzip") {
		if err := v.finish(); err != nil {
			return err
		}
		return &Error{Code: CodeCorrupt, Entry: d.Digest, Msg: "the layer's media type says gzip, but it does not start as gzip"}
	}
	tr := tar.NewReader(capped{r: stream, n: &u.unpacked, max: u.lim.MaxUnpackedBytes})
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return u.corrupt(v, d, "", err)
		}
		if err := u.entry(tr, h); err != nil {
			return err
		}
	}
	// Read to the end of the compressed stream (its CRC), still under the
	// cap, then the blob's end for its digest.
	if _, err := io.Copy(io.Discard, capped{r: stream, n: &u.unpacked, max: u.lim.MaxUnpackedBytes}); err != nil {
		return u.corrupt(v, d, "", err)
	}
	return v.finish()
}

// corrupt reports a read error; a digest mismatch (or an error of ours)
// explains it better, so the blob is checked first.
func (u *unpacker) corrupt(v *verifier, d Descriptor, entry string, err error) error {
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		return &Error{Code: CodeRegistry, Entry: d.Digest, Msg: "the download of the blob stopped: " + err.Error(), Err: err}
	}
	if ferr := v.finish(); ferr != nil && CodeOf(ferr) == CodeDigest {
		return ferr
	}
	if entry == "" {
		entry = d.Digest
	}
	return &Error{Code: CodeCorrupt, Entry: entry, Msg: "the layer cannot be read as tar or gzip: " + err.Error(), Err: err}
}

func (u *unpacker) entry(tr *tar.Reader, h *tar.Header) error {
	u.entries++
	if u.entries > u.lim.MaxEntries {
		return &Error{Code: CodeTooMany, Entry: h.Name, Msg: fmt.Sprintf("the layers have more than %d entries; the limit is %d", u.lim.MaxEntries, u.lim.MaxEntries)}
	}
	if h.Typeflag == tar.TypeXGlobalHeader {
		return nil
	}
	name := strings.TrimSuffix(h.Name, "/")
	if name == "." || name == "" && h.Typeflag == tar.TypeDir {
		return nil
	}
	clean, err := skill.CleanPath(name)
	if err != nil {
		return &Error{Code: CodePath, Entry: h.Name, Msg: err.Error(), Err: err}
	}
	if strings.HasPrefix(path.Base(clean), ".wh.") {
		return &Error{Code: CodeSpecial, Entry: h.Name, Msg: "an image whiteout (a file deleted by a later layer) is not read: build the skill's image with its files in one layer"}
	}
	if err := u.claim(h.Name, clean, h.Typeflag == tar.TypeDir); err != nil {
		return err
	}
	switch h.Typeflag {
	case tar.TypeDir:
		u.dirs[clean] = true
		return nil
	case tar.TypeReg, tar.TypeRegA:
		if h.Size > u.lim.MaxFileBytes {
			return &Error{Code: CodeTooLarge, Entry: h.Name, Msg: fmt.Sprintf("the file is %d bytes; the limit is %d", h.Size, u.lim.MaxFileBytes)}
		}
		if h.Size > u.lim.MaxUnpackedBytes-u.unpacked {
			return &Error{Code: CodeTooLarge, Entry: h.Name, Msg: fmt.Sprintf("the file is %d bytes, more than the %d the layers may still decompress to", h.Size, u.lim.MaxUnpackedBytes-u.unpacked)}
		}
		if err := u.count(h.Name, h.Size); err != nil {
			return err
		}
		data := make([]byte, h.Size)
		if _, err := io.ReadFull(tr, data); err != nil {
			var e *Error
			if errors.As(err, &e) {
				return err
			}
			return &Error{Code: CodeCorrupt, Entry: h.Name, Msg: "the file's bytes cannot be read: " + err.Error(), Err: err}
		}
		u.files[clean] = &skill.BundleFile{Path: clean, Data: data, Executable: h.Mode&0o111 != 0}
		return nil
	case tar.TypeSymlink, tar.TypeLink:
		target := h.Linkname
		kind := "hard link"
		if h.Typeflag == tar.TypeSymlink {
			kind = "symbolic link"
			if strings.HasPrefix(target, "/") {
				return &Error{Code: CodeLink, Entry: h.Name, Msg: fmt.Sprintf("the %s points at the absolute path %q, outside the skill", kind, target)}
			}
			target = path.Join(path.Dir(clean), target)
		}
		t, err := skill.CleanPath(target)
		if err != nil || strings.HasPrefix(t, "../") || t == ".." {
			return &Error{Code: CodeLink, Entry: h.Name, Msg: fmt.Sprintf("the %s points at %q, outside the skill", kind, h.Linkname)}
		}
		src := u.files[t]
		if src == nil {
			return &Error{Code: CodeLink, Entry: h.Name, Msg: fmt.Sprintf("the %s points at %q, which is not a file stored before it in the layer", kind, h.Linkname)}
		}
		if err := u.count(h.Name, int64(len(src.Data))); err != nil {
			return err
		}
		u.files[clean] = &skill.BundleFile{Path: clean, Data: src.Data, Executable: src.Executable}
		return nil
	default:
		return &Error{Code: CodeSpecial, Entry: h.Name, Msg: fmt.Sprintf("a %s entry is not a file or folder: skills hold files only", tarKind(h.Typeflag))}
	}
}

// claim refuses a second entry with one name, a file where a folder is
// and a folder where a file is.
func (u *unpacker) claim(raw, clean string, dir bool) error {
	if u.files[clean] != nil || (!dir && u.dirs[clean]) || (dir && u.dirs[clean]) {
		return &Error{Code: CodeDuplicate, Entry: raw, Msg: fmt.Sprintf("a second entry named %q: names are unique in a skill", clean)}
	}
	for p := path.Dir(clean); p != "."; p = path.Dir(p) {
		if u.files[p] != nil {
			return &Error{Code: CodeDuplicate, Entry: raw, Msg: fmt.Sprintf("%q is a file, so it cannot hold %q", p, clean)}
		}
	}
	return nil
}

func (u *unpacker) count(name string, size int64) error {
	if len(u.files)+1 > u.lim.MaxFiles {
		return &Error{Code: CodeTooMany, Entry: name, Msg: fmt.Sprintf("the skill has more than %d files; the limit is %d", u.lim.MaxFiles, u.lim.MaxFiles)}
	}
	u.total += size
	if u.total > u.lim.MaxTotalBytes {
		return &Error{Code: CodeTooLarge, Entry: name, Msg: fmt.Sprintf("the files come to more than %d bytes; the limit is %d", u.lim.MaxTotalBytes, u.lim.MaxTotalBytes)}
	}
	return nil
}

func tarKind(t byte) string {
	switch t {
	case tar.TypeChar:
		return "character device"
	case tar.TypeBlock:
		return "block device"
	case tar.TypeFifo:
		return "fifo"
	case tar.TypeCont:
		return "contiguous file"
	case tar.TypeGNUSparse:
		return "sparse file"
	}
	return fmt.Sprintf("type %q", t)
}

// bundle finds the skill: SKILL.md at the top, or in the one folder at the
// top (skill.md when there is no SKILL.md, as folders are read).
func (u *unpacker) bundle() (*skill.Bundle, string, error) {
	root := ""
	entry := ""
	for _, name := range []string{"SKILL.md", "skill.md"} {
		if u.files[name] != nil {
			entry = name
			break
		}
	}
	if entry == "" {
		tops := map[string]bool{}
		for p := range u.files {
			top, _, _ := strings.Cut(p, "/")
			tops[top] = true
		}
		for p := range u.dirs {
			top, _, _ := strings.Cut(p, "/")
			tops[top] = true
		}
		if len(tops) == 1 {
			for t := range tops {
				root = t
			}
			for _, name := range []string{"SKILL.md", "skill.md"} {
				if u.files[root+"/"+name] != nil {
					entry = root + "/" + name
					break
				}
			}
		}
		if entry == "" {
			return nil, "", &Error{Code: CodeNoSkill, Msg: "no SKILL.md at the top of the layer, nor in its one folder: a skill artifact holds one skill folder"}
		}
	}
	b := &skill.Bundle{Content: u.files[entry].Data}
	prefix := ""
	if root != "" {
		prefix = root + "/"
	}
	for p, f := range u.files {
		if p == entry {
			continue
		}
		rel := strings.TrimPrefix(p, prefix)
		b.Files = append(b.Files, skill.BundleFile{Path: rel, Data: f.Data, Executable: f.Executable})
	}
	sort.Slice(b.Files, func(i, j int) bool { return b.Files[i].Path < b.Files[j].Path })
	return b, root, nil
}
