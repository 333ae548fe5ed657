package oci

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/loadout/loadout/portable"
	"github.com/loadout/loadout/skill"
)

// Descriptor is an OCI content descriptor: what a manifest says of a blob.
type Descriptor struct {
	MediaType    string            `json:"mediaType"`
	Digest       string            `json:"digest"`
	Size         int64             `json:"size"`
	ArtifactType string            `json:"artifactType,omitempty"`
	Annotations  map[string]string `json:"annotations,omitempty"`
	Platform     *Platform         `json:"platform,omitempty"`
}

// Platform is an index entry's platform.
type Platform struct {
	Architecture string `json:"architecture"`
	OS           string `json:"os"`
	Variant      string `json:"variant,omitempty"`
}

// Manifest is an OCI image manifest (or Docker's v2 schema 2 manifest,
// which has the same shape).
type Manifest struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType,omitempty"`
	ArtifactType  string            `json:"artifactType,omitempty"`
	Config        Descriptor        `json:"config"`
	Layers        []Descriptor      `json:"layers"`
	Subject       *Descriptor       `json:"subject,omitempty"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// Index is an OCI image index (or Docker's manifest list).
type Index struct {
	SchemaVersion int               `json:"schemaVersion"`
	MediaType     string            `json:"mediaType,omitempty"`
	Manifests     []Descriptor      `json:"manifests"`
	Annotations   map[string]string `json:"annotations,omitempty"`
}

// Meta is what the manifest says of the skill, beside its files.
type Meta struct {
	Name        string
	Version     string
	Description string
	License     string
	// Created is written as org.opencontainers.image.created (RFC 3339,
	// UTC, seconds). Zero means the Unix epoch, so that a push without a
	// date is reproducible: give a stored version's creation time.
	Created time.Time
	// Source is the skill's source repository (a URL), optional.
	Source string
	// Revision is the source revision (a commit), optional.
	Revision string
	// Compatibility is the frontmatter's compatibility field.
	Compatibility string
	// Status is skillimage's lifecycle status when read from such an image.
	Status string
}

// Blob is one blob of an artifact, with its descriptor.
type Blob struct {
	Descriptor Descriptor
	Data       []byte
}

// Artifact is a packed skill: the manifest, its config and its one layer,
// all in memory (a skill is bounded by skill.Limits: 16 MiB by default).
type Artifact struct {
	Manifest Blob
	Config   Blob
	Layer    Blob
	Meta     Meta
}

// skillConfig is the config blob of the Agent Skills layout: the
// frontmatter's fields.
type skillConfig struct {
	SchemaVersion int               `json:"schemaVersion"`
	Name          string            `json:"name"`
	Version       string            `json:"version,omitempty"`
	Description   string            `json:"description,omitempty"`
	License       string            `json:"license,omitempty"`
	Compatibility string            `json:"compatibility,omitempty"`
	AllowedTools  []string          `json:"allowedTools,omitempty"`
	Metadata      map[string]string `json:"metadata,omitempty"`
}

// tarEpoch is the modification time of every entry Pack writes.
var tarEpoch = time.Unix(0, 0).UTC()

// PackDir reads the skill folder dir (portable.ImportDir: SKILL.md at its
// root, dot files and node_modules skipped, links out of the folder
// refused, executable bits kept) and packs it.
func PackDir(dir string, meta Meta) (*Artifact, error) {
	b, err := portable.ImportDir(dir)
	if err != nil {
		return nil, err
	}
	return Pack(b, meta)
}

// Pack lays the skill b out as an Agent Skills OCI artifact. The bundle is
// checked first (skill.Bundle.Check, on a copy). Meta's empty fields are
// filled from the frontmatter (name, version, description, license,
// compatibility); a Meta.Name that differs from the frontmatter's name is
// refused. The layer holds the skill under a folder named after it
// (NAME/SKILL.md, NAME/scripts/run.sh), as the proposal's tools write it.
func Pack(b *skill.Bundle, meta Meta) (*Artifact, error) {
	c := &skill.Bundle{Content: b.Content, Files: append([]skill.BundleFile(nil), b.Files...)}
	doc, _, err := c.Check(skill.Limits{MaxFileSize: 1 << 62, MaxTotalSize: 1 << 62, MaxFiles: 1 << 30})
	if err != nil {
		return nil, &Error{Code: CodeBadSkill, Msg: "the skill does not pass the format's checks: " + err.Error(), Err: err}
	}
	if meta.Name != "" && meta.Name != doc.Name {
		return nil, &Error{Code: CodeBadSkill, Msg: fmt.Sprintf("the name %q differs from the frontmatter's name %q", meta.Name, doc.Name)}
	}
	meta.Name = doc.Name
	if meta.Version == "" {
		meta.Version = doc.Version
	}
	if meta.Description == "" {
		meta.Description = doc.Description
	}
	if meta.License == "" {
		meta.License = doc.License
	}
	if meta.Compatibility == "" {
		meta.Compatibility = doc.Compatibility
	}
	layer, err := packLayer(meta.Name, c)
	if err != nil {
		return nil, err
	}
	cfg, err := json.Marshal(skillConfig{
		SchemaVersion: 1, Name: meta.Name, Version: meta.Version, Description: meta.Description,
		License: meta.License, Compatibility: meta.Compatibility, AllowedTools: doc.AllowedTools, Metadata: doc.Metadata,
	})
	if err != nil {
		return nil, err
	}
	a := &Artifact{Meta: meta}
	a.Layer = Blob{Data: layer, Descriptor: Descriptor{
		MediaType: MediaTypeSkillContent, Digest: digestOf(layer), Size: int64(len(layer)),
		Annotations: map[string]string{AnnotationTitle: meta.Name + ".tar.gz"},
	}}
	a.Config = Blob{Data: cfg, Descriptor: Descriptor{MediaType: MediaTypeSkillConfig, Digest: digestOf(cfg), Size: int64(len(cfg))}}
	m := Manifest{
		SchemaVersion: 2,
		MediaType:     MediaTypeImageManifest,
		ArtifactType:  ArtifactTypeSkill,
		Config:        a.Config.Descriptor,
		Layers:        []Descriptor{a.Layer.Descriptor},
		Annotations:   Annotations(meta),
	}
	mb, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	a.Manifest = Blob{Data: mb, Descriptor: Descriptor{MediaType: MediaTypeImageManifest, Digest: digestOf(mb), Size: int64(len(mb)), ArtifactType: ArtifactTypeSkill}}
	return a, nil
}

// Annotations are the manifest annotations Pack writes for meta: OCI's
// title, version, description, licenses, created, source and revision, and
// the proposal's io.agentskills.skill.name. Empty fields are left out,
// except created.
func Annotations(meta Meta) map[string]string {
	ann := map[string]string{
		AnnotationTitle:     meta.Name,
		AnnotationSkillName: meta.Name,
		AnnotationCreated:   meta.Created.UTC().Truncate(time.Second).Format(time.RFC3339),
	}
	for k, v := range map[string]string{
		AnnotationVersion: meta.Version, AnnotationDescription: meta.Description, AnnotationLicenses: meta.License,
		AnnotationSource: meta.Source, AnnotationRevision: meta.Revision,
	} {
		if v != "" {
			ann[k] = v
		}
	}
	return ann
}

// packLayer writes the reproducible tar+gzip layer: every folder and file
// under root/, sorted by path, folders 0755, files 0644 or 0755, owner
// 0:0 without names, the epoch as every time, and a gzip header without
// name or time.
func packLayer(root string, b *skill.Bundle) ([]byte, error) {
	type entry struct {
		path string
		data []byte
		mode int64
		dir  bool
	}
	entries := []entry{{path: root + "/", mode: 0o755, dir: true}, {path: root + "/SKILL.md", data: b.Content, mode: 0o644}}
	dirs := map[string]bool{}
	for _, f := range b.Files {
		mode := int64(0o644)
		if f.Executable {
			mode = 0o755
		}
		entries = append(entries, entry{path: root + "/" + f.Path, data: f.Data, mode: mode})
		for d := path.Dir(f.Path); d != "."; d = path.Dir(d) {
			if !dirs[d] {
				dirs[d] = true
				entries = append(entries, entry{path: root + "/" + d + "/", mode: 0o755, dir: true})
			}
		}
	}
	sort.Slice(entries, func(i, j int) bool {
		return strings.TrimSuffix(entries[i].path, "/") < strings.TrimSuffix(entries[j].path, "/")
	})
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	for _, e := range entries {
		h := &tar.Header{Name: e.path, Mode: e.mode, ModTime: tarEpoch, Format: tar.FormatPAX}
		if e.dir {
			h.Typeflag = tar.TypeDir
		} else {
			h.Typeflag = tar.TypeReg
			h.Size = int64(len(e.data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("packing %s: %w", e.path, err)
		}
		if _, err := tw.Write(e.data); err != nil {
			return nil, fmt.Errorf("packing %s: %w", e.path, err)
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func digestOf(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}
