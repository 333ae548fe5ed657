//go:build linux

package dirent

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// record is one linux_dirent64 record for name, padded to 8 bytes as the
// kernel pads them.
func record(name string, typ uint8) []byte {
	n := (19 + len(name) + 1 + 7) &^ 7
	b := make([]byte, n)
	binary.NativeEndian.PutUint64(b[0:], 42)
	binary.NativeEndian.PutUint16(b[16:], uint16(n))
	b[18] = typ
	copy(b[19:], name)
	return b
}

type entry struct {
	name string
	typ  uint8
}

func parse(b []byte) []entry {
	var out []entry
	Parse(b, func(name []byte, typ uint8) { out = append(out, entry{string(name), typ}) })
	return out
}

func TestParse(t *testing.T) {
	b := slices.Concat(record(".", unix.DT_DIR), record("..", unix.DT_DIR), record("SKILL.md", unix.DT_REG),
		record(".git", unix.DT_DIR), record("a-much-longer-name.md", unix.DT_LNK))
	want := []entry{{"SKILL.md", unix.DT_REG}, {".git", unix.DT_DIR}, {"a-much-longer-name.md", unix.DT_LNK}}
	if got := parse(b); !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	// A record cut short, or claiming more than is there, ends the
	// parse; one without a NUL is skipped.
	cut := slices.Concat(record("one", unix.DT_REG), record("two", unix.DT_REG))
	if got := parse(cut[:len(cut)-3]); !slices.Equal(got, []entry{{"one", unix.DT_REG}}) {
		t.Errorf("cut short: %v", got)
	}
	noNUL := record("abcde", unix.DT_REG)
	for i := 19; i < len(noNUL); i++ {
		noNUL[i] = 'x'
	}
	if got := parse(slices.Concat(noNUL, record("after", unix.DT_REG))); !slices.Equal(got, []entry{{"after", unix.DT_REG}}) {
		t.Errorf("no NUL: %v", got)
	}
	bad := record("x", unix.DT_REG)
	binary.NativeEndian.PutUint16(bad[16:], 5)
	if got := parse(bad); got != nil {
		t.Errorf("record length 5: %v", got)
	}
}

// Read lists a real folder: every entry, with its type, through a buffer
// too small for all of them at once (readWith), each name followed by its
// NUL.
func TestRead(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 200 {
		name := filepath.Join(dir, "file-with-a-long-name-"+string(rune('a'+i%26))+string(rune('a'+i/26)))
		if err := os.WriteFile(name, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, filepath.Base(name))
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	want = append(want, "sub")
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	buf := make([]byte, 512)
	var got []string
	err = readWith(fd, buf, func(name []byte, typ uint8) {
		if end := len(name); name[:end+1][end] != 0 {
			t.Errorf("%q is not followed by a NUL", name)
		}
		if (string(name) == "sub") != (typ == unix.DT_DIR) && typ != unix.DT_UNKNOWN {
			t.Errorf("%q has type %d", name, typ)
		}
		got = append(got, string(name))
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("read %d entries, want %d", len(got), len(want))
	}
	if err := Read(-1, func([]byte, uint8) {}); err == nil {
		t.Error("a bad descriptor gave no error")
	}
}

// Parse never panics and hands fn only names that are non-empty, hold no
// NUL and lie inside the input.
func FuzzParse(f *testing.F) {
	f.Add(slices.Concat(record(".", unix.DT_DIR), record("SKILL.md", unix.DT_REG)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		Parse(b, func(name []byte, typ uint8) {
			if len(name) == 0 || slices.Contains(name, 0) || len(name) > len(b) {
				t.Fatalf("name %q from %d bytes", name, len(b))
			}
		})
	})
}

// withOff is record with the d_off field set: the position of the entry
// after it.
func withOff(name string, off uint64) []byte {
	b := record(name, unix.DT_REG)
	binary.NativeEndian.PutUint64(b[8:], off)
	return b
}

// fakeGetdents answers readWith's calls with the given listings, then 0,
// and counts the calls.
func fakeGetdents(t *testing.T, answers ...[]byte) *int {
	t.Helper()
	calls := 0
	prev := getdents
	getdents = func(fd int, buf []byte) (int, error) {
		calls++
		if calls > len(answers) {
			return 0, nil
		}
		return copy(buf, answers[calls-1]), nil
	}
	t.Cleanup(func() { getdents = prev })
	return &calls
}

// A listing whose last entry is at the position that marks the end (ext4
// with 64-bit hashes, and 32-bit on tmpfs, XFS, btrfs) is whole: the call
// that would return 0 is not made. Any other last position, even one
// past it, or a record cut short, is followed by more calls until the
// end, so a file system that marks the end otherwise (or not at all)
// still gets every entry.
func TestReadStopsAtEnd(t *testing.T) {
	for _, tc := range []struct {
		name    string
		answers [][]byte
		want    []string
		calls   int
	}{
		{"ext4 end", [][]byte{slices.Concat(withOff("a", 5), withOff("b", 1<<63-1))}, []string{"a", "b"}, 1},
		{"tmpfs end", [][]byte{slices.Concat(withOff("a", 3), withOff("b", 1<<31-1))}, []string{"a", "b"}, 1},
		{"end only in the middle", [][]byte{slices.Concat(withOff("a", 1<<63-1), withOff("b", 7))}, []string{"a", "b"}, 2},
		{"one short of the end", [][]byte{withOff("a", 1<<31-2), withOff("b", 1<<63-2)}, []string{"a", "b"}, 3},
		{"past the 32-bit end", [][]byte{withOff("a", 1<<31)}, []string{"a"}, 2},
		{"proc counts", [][]byte{slices.Concat(withOff("a", 1), withOff("b", 2)), withOff("c", 3)}, []string{"a", "b", "c"}, 3},
		{"several calls, then the end", [][]byte{withOff("a", 99), withOff("b", 1<<63-1)}, []string{"a", "b"}, 2},
		{"cut short at the end", [][]byte{slices.Concat(withOff("a", 5), withOff("b", 1<<63-1))[:40]}, []string{"a"}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := fakeGetdents(t, tc.answers...)
			var got []string
			if err := readWith(0, make([]byte, 4096), func(name []byte, _ uint8) { got = append(got, string(name)) }); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tc.want) || *calls != tc.calls {
				t.Errorf("listed %v in %d calls, want %v in %d", got, *calls, tc.want, tc.calls)
			}
		})
	}
}

// On a real folder, a listing whose last position is the end marker takes
// one call; any other takes the call that returns 0 as well. Either way
// every entry is listed (TestRead lists one through a small buffer).
func TestReadRealEnd(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"SKILL.md", "assets", "scripts"} {
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var lasts []uint64
	prev := getdents
	getdents = func(fd int, buf []byte) (int, error) {
		n, err := prev(fd, buf)
		if n > 0 {
			next, _ := parseRecords(buf[:n], func([]byte, uint8) {})
			lasts = append(lasts, next)
		} else {
			lasts = append(lasts, 0)
		}
		return n, err
	}
	defer func() { getdents = prev }()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var got []string
	if err := Read(fd, func(name []byte, _ uint8) { got = append(got, string(name)) }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if !slices.Equal(got, []string{"SKILL.md", "assets", "scripts"}) {
		t.Errorf("listed %v", got)
	}
	want := 2
	if atEnd(lasts[0]) {
		want = 1
	}
	if len(lasts) != want {
		t.Errorf("%d getdents calls (last positions %#x), want %d", len(lasts), lasts, want)
	}
	t.Logf("last position of the first call %#x: %d calls", lasts[0], len(lasts))
}
