package attack

// Git bombs: a small repository holding one huge file
// must be refused while its pack streams in, by `loadout sync` and by a
// running `serve` (POST /v1/sources/ID/sync and at start), with peak RSS
// under 200 MB, an error naming the limit, and the last good snapshot
// kept. The repositories are real: a pack written here, indexed by
// `git index-pack`, committed with git's plumbing and served by git
// http-backend.

import (
	"bytes"
	"compress/flate"
	"crypto/sha1"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

const gitfetchBackend = "/usr/lib/git-core/git-http-backend"

// gitfetchRepo is a bare repository with two commits: good (one skill)
// and bomb (good plus a skill holding one huge file); setTip points main
// at either.
type gitfetchRepo struct {
	t         *testing.T
	bare      string
	good, bad string
}

func gitfetchGit(t *testing.T, dir string, stdin io.Reader, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com",
		"GIT_AUTHOR_DATE=1700000000 +0000", "GIT_COMMITTER_DATE=1700000000 +0000"), env...)
	cmd.Stdin = stdin
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, errb.Bytes())
	}
	return strings.TrimSpace(out.String())
}

// gitfetchBlobPack writes a pack of one blob of size bytes: zeros (a few
// MB of deflate, repeated) or random bytes (stored blocks). Nothing of the
// blob is held in memory.
func gitfetchBlobPack(w io.Writer, size int64, random bool) error {
	ph := sha1.New()
	out := io.MultiWriter(w, ph)
	hdr := []byte("PACK\x00\x00\x00\x02\x00\x00\x00\x01")
	c := byte(3<<4) | byte(size&0x0f)
	for s := size >> 4; s > 0; s >>= 7 {
		hdr = append(hdr, c|0x80)
		c = byte(s & 0x7f)
	}
	hdr = append(hdr, c, 0x78, 0x01) // object header, zlib header
	if _, err := out.Write(hdr); err != nil {
		return err
	}
	var sum uint32
	if random {
		ad := adler32.New()
		r := rand.New(rand.NewChaCha8([32]byte{24}))
		block := make([]byte, 5+65535)
		for left := size; left > 0; {
			n := min(left, 65535)
			block[0] = 0 // not final, stored
			binary.LittleEndian.PutUint16(block[1:], uint16(n))
			binary.LittleEndian.PutUint16(block[3:], ^uint16(n))
			data := block[5 : 5+n]
			for i := 0; i+8 <= len(data); i += 8 {
				binary.LittleEndian.PutUint64(data[i:], r.Uint64())
			}
			ad.Write(data)
			if _, err := out.Write(block[:5+n]); err != nil {
				return err
			}
			left -= n
		}
		sum = ad.Sum32()
	} else {
		// One MiB of zeros as deflate blocks ending on a byte boundary
		// (a sync flush): the same bytes repeated inflate to zeros.
		const chunk = 1 << 20
		var b bytes.Buffer
		fw, _ := flate.NewWriter(&b, flate.BestCompression)
		fw.Write(make([]byte, chunk))
		fw.Flush()
		if size%chunk != 0 {
			return fmt.Errorf("size %d is not whole MiB", size)
		}
		for range size / chunk {
			if _, err := out.Write(b.Bytes()); err != nil {
				return err
			}
		}
		sum = uint32((size%65521)<<16 | 1) // adler32 of zeros
	}
	// The final, empty block, then the checksum.
	tail := []byte{0x03, 0x00, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(tail[2:], sum)
	if _, err := out.Write(tail); err != nil {
		return err
	}
	_, err := w.Write(ph.Sum(nil))
	return err
}

// newGitfetchRepo makes the repository with git's plumbing.
func newGitfetchRepo(t *testing.T, root, name string, size int64, random bool) *gitfetchRepo {
	t.Helper()
	r := &gitfetchRepo{t: t, bare: filepath.Join(root, name+".git")}
	gitfetchGit(t, root, nil, nil, "init", "-q", "--bare", "-b", "main", r.bare)
	blob := func(s string) string {
		return gitfetchGit(t, r.bare, strings.NewReader(s), nil, "hash-object", "-w", "--stdin")
	}
	index := []string{"GIT_INDEX_FILE=" + filepath.Join(root, name+".index")}
	add := func(path, id string) {
		gitfetchGit(t, r.bare, nil, index, "update-index", "--add", "--cacheinfo", "100644,"+id+","+path)
	}
	add("skills/good/SKILL.md", blob("---\nname: good\ndescription: Use when a good skill is needed.\n---\nGood body.\n"))
	r.good = gitfetchGit(t, r.bare, strings.NewReader("good\n"), nil, "commit-tree", gitfetchGit(t, r.bare, nil, index, "write-tree"))

	start := time.Now()
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(gitfetchBlobPack(pw, size, random)) }()
	pack := gitfetchGit(t, r.bare, pr, nil, "index-pack", "--stdin")
	idx, err := os.Open(filepath.Join(r.bare, "objects", "pack", "pack-"+strings.TrimPrefix(pack, "pack\t")+".idx"))
	if err != nil {
		t.Fatalf("index-pack wrote no index (%q): %v", pack, err)
	}
	defer idx.Close()
	line := strings.Fields(gitfetchGit(t, r.bare, idx, nil, "show-index"))
	if len(line) < 2 {
		t.Fatalf("show-index: %q", line)
	}
	add("skills/bomb/SKILL.md", blob("---\nname: bomb\ndescription: Use never.\n---\nA huge file.\n"))
	add("skills/bomb/huge.bin", line[1])
	r.bad = gitfetchGit(t, r.bare, strings.NewReader("bomb\n"), nil, "commit-tree", "-p", r.good, gitfetchGit(t, r.bare, nil, index, "write-tree"))
	var du int64
	filepath.Walk(r.bare, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			du += fi.Size()
		}
		return nil
	})
	t.Logf("%s: a repository of %.1f MB holding a file of %d MiB, made in %v", name, float64(du)/1e6, size>>20, time.Since(start).Round(time.Millisecond))
	r.setTip(r.good)
	return r
}

func (r *gitfetchRepo) setTip(commit string) {
	r.t.Helper()
	gitfetchGit(r.t, r.bare, nil, nil, "update-ref", "refs/heads/main", commit)
}

// gitfetchServe serves the repositories under root over HTTP.
func gitfetchServe(t *testing.T, root string) string {
	t.Helper()
	h := &cgi.Handler{Path: gitfetchBackend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}, Stderr: io.Discard}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

func gitfetchConfig(sources map[string]string) string {
	var parts []string
	for id, url := range sources {
		parts = append(parts, fmt.Sprintf(`{"id": %q, "git": %q, "ref": "main", "paths": ["skills"]}`, id, url))
	}
	return `{"agents": [{"agentId": "coder", "skills": [` + strings.Join(parts, ", ") + `]}]}`
}

// gitfetchSync runs `loadout sync` in dir and returns its output, exit
// code and peak RSS in MB (the kernel's ru_maxrss of the child).
func gitfetchSync(t *testing.T, dir string) (string, int, float64) {
	t.Helper()
	cmd := exec.Command(Bin(t), "sync")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LOADOUT_CONFIG="+filepath.Join(dir, "loadout.json"), "LOADOUT_DB=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// The peak is the child's own VmHWM, polled until it exits. getrusage's
	// Maxrss would not do: Linux keeps it across execve, and os/exec's
	// child shares this test process's memory until its exec, so it starts
	// at this process's size (hundreds of MB under -race after the bombs
	// are made). Start returns after the exec, so every poll reads the
	// child's own memory; VmHWM only grows.
	peakMB := watchPeakRSS(cmd)
	err := cmd.Wait()
	rss := peakMB()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), code, rss
}

// procHWMKB reads VmHWM of a live process; false once it has exited.
// watchPeakRSS polls the started cmd's peak RSS (VmHWM) every millisecond
// until the function it returns is called, after cmd.Wait; that function
// returns the peak, in MB.
func watchPeakRSS(cmd *exec.Cmd) func() float64 {
	stop, peak := make(chan struct{}), make(chan float64, 1)
	go func() {
		var hwm float64
		tick := time.NewTicker(time.Millisecond)
		defer tick.Stop()
		for {
			if kb, ok := procHWMKB(cmd.Process.Pid); ok && float64(kb)/1024 > hwm {
				hwm = float64(kb) / 1024
			}
			select {
			case <-stop:
				peak <- hwm
				return
			case <-tick.C:
			}
		}
	}()
	return func() float64 {
		close(stop)
		return <-peak
	}
}

func procHWMKB(pid int) (int64, bool) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb, err == nil
		}
	}
	return 0, false
}

const gitfetchRSSBound = 200 // MB

// gitfetchNeedDisk fails at once, naming the folder and both figures,
// when dir has less than need bytes free: the random bomb's pack is
// written to disk whole (1 GiB that does not compress), and a disk that
// fills half-way through reads as git's "write error" instead.
func gitfetchNeedDisk(t *testing.T, dir string, need uint64) {
	t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		t.Fatalf("statfs %s: %v", dir, err)
	}
	if free := st.Bavail * uint64(st.Bsize); free < need {
		t.Fatalf("the git bombs need %.1f GiB free under %s and %.1f GiB is: free some space or point TMPDIR at a larger disk", float64(need)/(1<<30), dir, float64(free)/(1<<30))
	}
}

// TestGitBomb: a repository of 2 MB holding 2 GiB of zeros, and one
// holding 1 GiB of random bytes.
func TestGitBomb(t *testing.T) {
	if _, err := os.Stat(gitfetchBackend); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI must not skip the git bombs: install Debian's git")
		}
		t.Skip("git http-backend is needed for the git bombs")
	}
	root := t.TempDir()
	gitfetchNeedDisk(t, root, 3<<30)
	zeros := newGitfetchRepo(t, root, "zeros", 2<<30, false)
	random := newGitfetchRepo(t, root, "random", 1<<30, true)
	base := gitfetchServe(t, root)
	repos := map[string]*gitfetchRepo{"zeros": zeros, "random": random}
	cfg := gitfetchConfig(map[string]string{"zeros": base + "/zeros.git", "random": base + "/random.git"})
	tips := func(bomb bool) {
		for _, r := range repos {
			if bomb {
				r.setTip(r.bad)
			} else {
				r.setTip(r.good)
			}
		}
	}
	wantRefusal := func(t *testing.T, text, id string) {
		t.Helper()
		size := map[string]string{"zeros": "2147483648", "random": "1073741824"}[id]
		if !strings.Contains(text, size+" bytes, over the limit of 10485760 bytes for one file (remote.maxFileSize)") {
			t.Errorf("source %s: the refusal does not name the file's size and the limit:\n%s", id, text)
		}
	}

	t.Run("sync", func(t *testing.T) {
		dir := t.TempDir()
		WriteFiles(t, dir, map[string]string{"loadout.json": cfg})
		tips(false)
		if out, code, _ := gitfetchSync(t, dir); code != 0 {
			t.Fatalf("the first sync: exit %d\n%s", code, out)
		}
		lock, err := os.ReadFile(filepath.Join(dir, "loadout.lock"))
		if err != nil {
			t.Fatal(err)
		}
		tips(true)
		start := time.Now()
		out, code, rss := gitfetchSync(t, dir)
		t.Logf("loadout sync of both bombs: exit %d in %v, peak RSS %.1f MB", code, time.Since(start).Round(time.Millisecond), rss)
		if code == 0 {
			t.Errorf("the sync of the bombs succeeded:\n%s", out)
		}
		for id := range repos {
			wantRefusal(t, out, id)
		}
		if rss > gitfetchRSSBound {
			t.Errorf("loadout sync peaked at %.1f MB; bound %d MB", rss, gitfetchRSSBound)
		}
		if after, _ := os.ReadFile(filepath.Join(dir, "loadout.lock")); !bytes.Equal(after, lock) {
			t.Errorf("the lock moved:\n%s", after)
		}
		// Nothing of the refused fetches is left in the cache: no
		// temporary folder, no pack.
		filepath.WalkDir(filepath.Join(dir, "remote-cache"), func(p string, d os.DirEntry, err error) error {
			if err == nil && (strings.Contains(d.Name(), ".pack") || strings.HasPrefix(d.Name(), ".fetch-")) {
				t.Errorf("a refused fetch left %s", p)
			}
			return nil
		})
	})

	Engines(t, func(t *testing.T, engine string) {
		tips(false)
		s := Start(t, Options{Engine: engine, Config: cfg})
		for id := range repos {
			if code, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/good", "", ""); code != 200 {
				t.Fatalf("%s: the good skill before the bomb: %d %s", id, code, body)
			}
		}
		tips(true)
		for id := range repos {
			code, _, body := s.Do(t, "POST", "/v1/sources/"+id+"/sync", "", "")
			if code != 200 || !strings.Contains(body, `"code":"remote-limit"`) || !strings.Contains(body, `"moved":false`) {
				t.Errorf("POST /v1/sources/%s/sync: %d %s", id, code, body)
			}
			wantRefusal(t, body, id)
			s.Healthy(t)
		}
		// The last good snapshot is served; the bomb's skill is not.
		if code, _, body := s.Do(t, "GET", "/v1/agents/coder/skills/good", "", ""); code != 200 || !strings.Contains(body, "Good body.") {
			t.Errorf("the last good snapshot is not served: %d %s", code, body)
		}
		if code, _, _ := s.Do(t, "GET", "/v1/agents/coder/skills/bomb", "", ""); code == 200 {
			t.Error("the bomb's skill is served")
		}
		underRSS(t, s, gitfetchRSSBound, "POST sync of both bombs")

		// At start: a source whose first pin would be a bomb. The server
		// starts, serves, and says why the source is empty.
		s2 := Start(t, Options{Engine: engine, Config: cfg})
		s2.Healthy(t)
		code, _, body := s2.Do(t, "GET", "/v1/sources", "", "")
		if code != 200 || strings.Count(body, "remote.maxFileSize") < 2 {
			t.Errorf("/v1/sources after a start on the bombs: %d %s", code, body)
		}
		underRSS(t, s2, gitfetchRSSBound, "start on both bombs")
	})
}

// TestIndexOriginSSRF: an index source's entry that
// names another origin (here an "admin" route on this machine) is refused
// before any request is sent, and the refusal names the entry and the
// origin; with the origin allowed in the config, the request is made but
// the target's answer is not echoed.
func TestIndexOriginSSRF(t *testing.T) {
	var mu sync.Mutex
	var hits []string
	admin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, r.URL.String())
		mu.Unlock()
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"message": "admin secret 5ca1ab1e: everything deleted"}`)
	}))
	defer admin.Close()
	target := admin.URL + "/internal-admin/delete-everything?confirm=yes"
	index := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"$schema": "https://schemas.agentskills.io/discovery/0.2.0/schema.json", "skills": [{"name": "evil", "type": "skill-md", "description": "d", "url": %q, "digest": "sha256:%s"}]}`,
			target, strings.Repeat("0", 64))
	}))
	defer index.Close()
	hitCount := func() int { mu.Lock(); defer mu.Unlock(); return len(hits) }
	cfg := func(extra string) string {
		return `{"agents": [{"agentId": "coder", "skills": [{"root": "skills"}, {"id": "idx", "index": "` + index.URL + `/.well-known/agent-skills/index.json"` + extra + `}]}]}`
	}
	Engines(t, func(t *testing.T, engine string) {
		before := hitCount()
		s := Start(t, Options{Engine: engine, Config: cfg("")})
		s.Healthy(t)
		code, _, body := s.Do(t, "POST", "/v1/sources/idx/sync", "", "")
		if code != 200 || !strings.Contains(body, `\"evil\"`) || !strings.Contains(body, admin.URL+" is not the index's origin") || !strings.Contains(body, "allowedOrigins") {
			t.Errorf("sync of an index naming another origin: %d %s", code, body)
		}
		if n := hitCount() - before; n != 0 {
			t.Errorf("the other origin got %d requests", n)
		}
		// Allowed: the request is made, its body is not echoed.
		s2 := Start(t, Options{Engine: engine, Config: cfg(`, "allowedOrigins": ["` + admin.URL + `"]`)})
		code, _, body = s2.Do(t, "POST", "/v1/sources/idx/sync", "", "")
		if code != 200 || !strings.Contains(body, "403") {
			t.Errorf("sync with the origin allowed: %d %s", code, body)
		}
		if strings.Contains(body, "5ca1ab1e") || strings.Contains(s2.Log(), "5ca1ab1e") {
			t.Errorf("another origin's body was echoed: %s", body)
		}
		if hitCount()-before == 0 {
			t.Error("with the origin allowed, no request was made: allowedOrigins did not reach the fetcher")
		}
	})
}
