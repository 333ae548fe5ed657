package gitfetch

import (
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/loadout/loadout/remote"
)

// The pack guard bounds what a remote may send in one fetch, while it is
// received: go-git would otherwise store the whole pack and inflate every
// object in full before a file limit is ever checked (a 2 MB pack of one
// 2 GiB file of zeros took a sync to 4 GB). Each object's header declares
// its type and inflated size, and a delta's first inflated bytes declare
// the size of the object it makes; the guard reads those as the bytes
// arrive, before go-git sees them, and stops the transfer at the first
// object over a limit.

// Bounds of a fetched pack beyond remote.Limits. Trees and commits are not
// files, so they have bounds of their own: a tree of 16 MiB lists some
// 300,000 entries.
const (
	maxMetaObject = 16 << 20 // one tree, commit or tag, inflated
	maxMetaTotal  = 64 << 20 // all trees, commits and tags together
	// objectsPerFile is how many pack objects each file of remote.maxFiles
	// allows: its blob, its folder's tree, a commit's share, and history.
	objectsPerFile = 4
	minObjects     = 1000
	// historyFactor widens the totals (not the one-object bounds) for a
	// fetch of a branch's history, which holds every version of the
	// files between the tip and the pin.
	historyFactor = 4
)

// Pack object types (gitformat-pack).
const (
	objCommit   = 1
	objTree     = 2
	objBlob     = 3
	objTag      = 4
	objOfsDelta = 6
	objRefDelta = 7
	objUnknown  = 0 // a ref-delta's target: its base is named by a hash the guard does not compute
)

// packLimits are the bounds one fetch's pack is held to.
type packLimits struct {
	fileBytes  int64 // one blob, inflated (remote.maxFileSize)
	blobTotal  int64 // all blobs, inflated (remote.maxTotalSize)
	metaObject int64 // one tree, commit or tag
	metaTotal  int64 // all of them
	objects    int64 // objects in the pack
	packBytes  int64 // bytes transferred
}

// newPackLimits are the bounds of a fetch of one commit (history false)
// or of a branch's history.
func newPackLimits(lim remote.Limits, history bool) packLimits {
	lim = lim.WithDefaults()
	k := int64(1)
	if history {
		k = historyFactor
	}
	objects := max(int64(lim.MaxFiles)*objectsPerFile, minObjects) * k
	blobs := lim.MaxBytes * k
	return packLimits{
		fileBytes:  lim.MaxFileBytes,
		blobTotal:  blobs,
		metaObject: maxMetaObject,
		metaTotal:  maxMetaTotal * k,
		objects:    objects,
		// Deflate may grow what it cannot compress by a few bytes a
		// block; anything more is padding no real pack sends.
		packBytes: blobs + maxMetaTotal*k + blobs/64,
	}
}

// packLimitError is a pack over one of the bounds: the message says which,
// with the figures.
type packLimitError struct{ msg string }

func (e *packLimitError) Error() string { return e.msg }

// guardedStorage is a go-git storage on disk whose pack writer is guarded:
// go-git's fetch hands the pack stream to PackfileWriter when the storage
// has one, so this is the hook into the transfer (no transport replaced).
type guardedStorage struct {
	*filesystem.Storage
	lim   packLimits
	guard *packGuard
}

var _ storer.PackfileWriter = (*guardedStorage)(nil)

func (s *guardedStorage) PackfileWriter() (io.WriteCloser, error) {
	w, err := s.Storage.PackfileWriter()
	if err != nil {
		return nil, err
	}
	s.guard = newPackGuard(w, s.lim)
	return s.guard, nil
}

// tripped is the limit error that stopped the transfer, if one did.
func (s *guardedStorage) tripped() *packLimitError {
	if s.guard == nil {
		return nil
	}
	var le *packLimitError
	if errors.As(s.guard.err, &le) {
		return le
	}
	return nil
}

// packGuard passes a pack stream to w only once the scanner has read every
// object header in it. The scanner runs on its own goroutine and reads the
// chunks Write gives it; Write forwards a chunk after the scanner has
// consumed all of it (the scanner never reads ahead: zlib reads its stream
// byte by byte through an io.ByteReader), so go-git never sees the header
// of an object the guard refuses.
type packGuard struct {
	w    io.WriteCloser
	lim  packLimits
	in   chan []byte
	ack  chan struct{}
	done chan error
	// finished: the scanner has returned (its verdict is err).
	finished bool
	err      error
	sent     int64
}

func newPackGuard(w io.WriteCloser, lim packLimits) *packGuard {
	g := &packGuard{w: w, lim: lim, in: make(chan []byte), ack: make(chan struct{}), done: make(chan error, 1)}
	s := &packScanner{lim: lim, g: g}
	go func() { g.done <- s.scan() }()
	return g
}

func (g *packGuard) Write(p []byte) (int, error) {
	if g.err != nil {
		return 0, g.err
	}
	g.sent += int64(len(p))
	if g.sent > g.lim.packBytes {
		g.stop(&packLimitError{fmt.Sprintf("the pack is over %d bytes (remote.maxTotalSize and room for trees and commits)", g.lim.packBytes)})
		return 0, g.err
	}
	if !g.finished {
		select {
		case g.in <- p:
			select {
			case <-g.ack:
			case err := <-g.done:
				g.finish(err)
			}
		case err := <-g.done:
			g.finish(err)
		}
		if g.err != nil {
			return 0, g.err
		}
	}
	// Bytes after the pack's trailer go to go-git, which judges them.
	return g.w.Write(p)
}

// finish records the scanner's verdict (Write calls it only while g.err
// is nil).
func (g *packGuard) finish(err error) {
	g.finished = true
	if err != nil {
		g.err = err
	}
}

// stop ends the scanner (if it still runs) with err as the verdict.
func (g *packGuard) stop(err error) {
	if g.err == nil {
		g.err = err
	}
	g.endScan()
}

// endScan ends the scanner if it still runs, its verdict discarded: the
// stream was cut short (go-git says so), or stop has given one.
func (g *packGuard) endScan() {
	if !g.finished {
		close(g.in)
		<-g.done
		g.finished = true
	}
}

// Close ends the scan and closes w; a pack the scanner refused is not
// kept (go-git's writer removes a pack it could not index). A refusal was
// returned by Write already, and go-git reports that error, not Close's.
func (g *packGuard) Close() error {
	g.endScan()
	return g.w.Close()
}

// packScanner reads a pack's object headers and inflates each object to
// find where the next begins, discarding what it inflates.
type packScanner struct {
	lim packLimits
	g   *packGuard
	cur []byte
	off int64 // bytes consumed
	// types of the objects so far by offset, for OFS deltas.
	types map[int64]uint8
	blobs int64
	metas int64
	zr    io.ReadCloser
}

var errPackCut = errors.New("the pack ended early")

// fill waits for the next chunk, acknowledging the one consumed.
func (s *packScanner) fill() error {
	for len(s.cur) == 0 {
		if s.cur != nil {
			s.g.ack <- struct{}{}
		}
		p, ok := <-s.g.in
		if !ok {
			return errPackCut
		}
		s.cur = p
		if s.cur == nil {
			s.cur = []byte{}
		}
	}
	return nil
}

func (s *packScanner) ReadByte() (byte, error) {
	if err := s.fill(); err != nil {
		return 0, err
	}
	c := s.cur[0]
	s.cur = s.cur[1:]
	s.off++
	return c, nil
}

func (s *packScanner) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if err := s.fill(); err != nil {
		return 0, err
	}
	n := copy(p, s.cur)
	s.cur = s.cur[n:]
	s.off += int64(n)
	return n, nil
}

func (s *packScanner) scan() error {
	err := s.objects()
	if errors.Is(err, errPackCut) {
		return nil // the transfer ended early: go-git reports it
	}
	return err
}

func malformed(format string, args ...any) error {
	return fmt.Errorf("the remote sent a malformed pack: "+format, args...)
}

func (s *packScanner) objects() error {
	var hdr [12]byte
	if _, err := io.ReadFull(s, hdr[:]); err != nil {
		return err
	}
	if string(hdr[:4]) != "PACK" {
		return malformed("it does not begin with PACK")
	}
	if v := binary.BigEndian.Uint32(hdr[4:8]); v != 2 && v != 3 {
		return malformed("version %d", v)
	}
	count := int64(binary.BigEndian.Uint32(hdr[8:12]))
	if count > s.lim.objects {
		return &packLimitError{fmt.Sprintf("the pack holds %d objects, more than %d (the limit remote.maxFiles allows)", count, s.lim.objects)}
	}
	s.types = make(map[int64]uint8, min(count, 1<<16))
	for i := int64(0); i < count; i++ {
		if err := s.object(i + 1); err != nil {
			return err
		}
	}
	var trailer [20]byte
	_, err := io.ReadFull(s, trailer[:])
	return err
}

// object reads one object: header, delta base, and its zlib stream.
func (s *packScanner) object(n int64) error {
	at := s.off
	c, err := s.ReadByte()
	if err != nil {
		return err
	}
	typ := (c >> 4) & 7
	size := int64(c & 0x0f)
	shift := uint(4)
	for c&0x80 != 0 {
		if c, err = s.ReadByte(); err != nil {
			return err
		}
		if shift > 56 {
			// Past 2^60 bytes: no pack holds such an object, and the
			// next bits would not fit in an int64.
			return malformed("object %d declares a size of more than 2^60 bytes", n)
		}
		size |= int64(c&0x7f) << shift
		shift += 7
	}
	target := uint8(objUnknown)
	switch typ {
	case objCommit, objTree, objBlob, objTag:
		target = typ
		if err := s.account(n, typ, size); err != nil {
			return err
		}
	case objOfsDelta:
		rel, err := s.ofsOffset()
		if err != nil {
			return err
		}
		base := at - rel
		bt, ok := s.types[base]
		if !ok { // rel 0 names the delta itself, not yet typed
			return malformed("object %d is a delta of offset %d, where no object begins", n, base)
		}
		target = bt
	case objRefDelta:
		var h [20]byte
		if _, err := io.ReadFull(s, h[:]); err != nil {
			return err
		}
	default:
		return malformed("object %d has type %d", n, typ)
	}
	// The delta itself is held in memory while go-git applies it.
	if (typ == objOfsDelta || typ == objRefDelta) && size > max(s.lim.fileBytes, s.lim.metaObject) {
		return &packLimitError{fmt.Sprintf("object %d of the pack is a delta of %d bytes, over the limit of %d bytes for one file (remote.maxFileSize)", n, size, max(s.lim.fileBytes, s.lim.metaObject))}
	}
	s.types[at] = target
	if err := s.openZlib(); err != nil {
		return malformed("object %d: %v", n, err)
	}
	var body io.Reader = io.LimitReader(s.zr, size+1)
	if typ == objOfsDelta || typ == objRefDelta {
		// A delta begins with two sizes: its base's and its result's.
		br := &byteCounter{r: body}
		if _, err := readVarint(br); err != nil {
			return s.zlibErr(n, err)
		}
		result, err := readVarint(br)
		if err != nil {
			return s.zlibErr(n, err)
		}
		if err := s.account(n, target, result); err != nil {
			return err
		}
		body = br
	}
	got, err := io.Copy(io.Discard, body)
	if err != nil {
		return s.zlibErr(n, err)
	}
	if bc, ok := body.(*byteCounter); ok {
		got = bc.n
	}
	if got != size {
		return malformed("object %d declares %d bytes and inflates to %d or more", n, size, got)
	}
	return nil
}

func (s *packScanner) zlibErr(n int64, err error) error {
	if errors.Is(err, errPackCut) {
		return err
	}
	return malformed("object %d: %v", n, err)
}

// account checks one object's inflated size (a delta's: the object it
// makes) against the limits, and counts it.
func (s *packScanner) account(n int64, typ uint8, size int64) error {
	switch typ {
	case objCommit, objTree, objTag:
		if size > s.lim.metaObject {
			return &packLimitError{fmt.Sprintf("object %d of the pack is a %s of %d bytes, over the limit of %d bytes for one", n, typeName(typ), size, s.lim.metaObject)}
		}
		s.metas += size
		if s.metas > s.lim.metaTotal {
			return &packLimitError{fmt.Sprintf("the trees and commits of the pack are over %d bytes", s.lim.metaTotal)}
		}
	default: // blobs, and deltas whose type is not known
		if size > s.lim.fileBytes {
			return &packLimitError{fmt.Sprintf("object %d of the pack is a file of %d bytes, over the limit of %d bytes for one file (remote.maxFileSize)", n, size, s.lim.fileBytes)}
		}
		s.blobs += size
		if s.blobs > s.lim.blobTotal {
			return &packLimitError{fmt.Sprintf("the files of the pack are over %d bytes (the limit remote.maxTotalSize allows)", s.lim.blobTotal)}
		}
	}
	return nil
}

func typeName(t uint8) string {
	switch t {
	case objCommit:
		return "commit"
	case objTree:
		return "tree"
	case objTag:
		return "tag"
	}
	return "blob"
}

// ofsOffset reads an OFS delta's base distance (gitformat-pack's offset
// encoding).
func (s *packScanner) ofsOffset() (int64, error) {
	c, err := s.ReadByte()
	if err != nil {
		return 0, err
	}
	v := int64(c & 0x7f)
	for c&0x80 != 0 {
		if c, err = s.ReadByte(); err != nil {
			return 0, err
		}
		if v > (1<<55)-1 {
			return 0, malformed("a delta's base offset does not fit in 64 bits")
		}
		v = ((v + 1) << 7) | int64(c&0x7f)
	}
	return v, nil
}

func (s *packScanner) openZlib() error {
	if s.zr == nil {
		zr, err := zlib.NewReader(s)
		if err != nil {
			return err
		}
		s.zr = zr
		return nil
	}
	return s.zr.(zlib.Resetter).Reset(s, nil)
}

// byteCounter reads r one byte at a time where asked and counts.
type byteCounter struct {
	r   io.Reader
	n   int64
	one [1]byte
}

func (b *byteCounter) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}

func (b *byteCounter) ReadByte() (byte, error) {
	if _, err := io.ReadFull(b, b.one[:]); err != nil {
		return 0, err
	}
	return b.one[0], nil
}

// readVarint reads a delta header's little-endian base-128 size.
func readVarint(r io.ByteReader) (int64, error) {
	var v int64
	for shift := uint(0); ; shift += 7 {
		c, err := r.ReadByte()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		if shift > 56 {
			return 0, errors.New("a delta declares a size that does not fit in 64 bits")
		}
		v |= int64(c&0x7f) << shift
		if c&0x80 == 0 {
			return v, nil
		}
	}
}
