package wellknown

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"time"

	"github.com/loadout/loadout/skill"
)

// archiveTime is the modification time of every archive entry, so the same
// skill always gives the same bytes (the zip export uses the same instant).
var archiveTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)

// writeArchive returns b as a gzip-compressed ustar archive with SKILL.md
// and every file at the root: regular files only, mode 0755 for executable
// files and 0644 for the rest, no owner names, a fixed time and a gzip
// header without name or time. Only ustar headers are written (no PAX or GNU
// extensions), because installers read the name and prefix fields and
// nothing else; a path that does not fit them is an error naming the path.
func writeArchive(b *skill.Bundle) ([]byte, error) {
	var buf bytes.Buffer
	gz, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(gz)
	put := func(p string, data []byte, exec bool) error {
		mode := int64(0o644)
		if exec {
			mode = 0o755
		}
		h := &tar.Header{Typeflag: tar.TypeReg, Name: p, Size: int64(len(data)), Mode: mode,
			ModTime: archiveTime, Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("%s cannot be stored in a ustar archive (it must be ASCII, with a last part of at most 100 bytes and the rest at most 155): %w", p, err)
		}
		_, err := tw.Write(data)
		return err
	}
	if err := put("SKILL.md", b.Content, false); err != nil {
		return nil, err
	}
	for _, f := range b.Files {
		if err := put(f.Path, f.Data, f.Executable); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := gz.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
