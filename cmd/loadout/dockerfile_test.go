package main

import (
	"bufio"
	"debug/elf"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/loadout/loadout/internal/testutil"
)

// dockerBuildLine returns the Dockerfile's `go build` RUN instruction
// (continuations joined), without "RUN ".
func dockerBuildLine(t *testing.T, dockerfile string) string {
	t.Helper()
	var cur strings.Builder
	for _, line := range strings.Split(dockerfile, "\n") {
		cur.WriteString(strings.TrimSuffix(line, "\\"))
		if strings.HasSuffix(line, "\\") {
			continue
		}
		ins := strings.TrimSpace(cur.String())
		cur.Reset()
		if strings.HasPrefix(ins, "RUN ") && strings.Contains(ins, "go build") {
			return strings.TrimPrefix(ins, "RUN ")
		}
	}
	t.Fatal("the Dockerfile has no RUN ... go build instruction")
	return ""
}

// TestDockerfileRecipe runs the Dockerfile's build recipe (Docker is not
// needed: the same go build command, with its output in a temporary
// folder), checks the binary is static (no ELF interpreter, no shared
// libraries: it runs on distroless/static or scratch), and starts it the
// way the image does: config in one folder, the store in another (as
// LOADOUT_DB in the Dockerfile), refusing 0.0.0.0 until a token exists.
func TestDockerfileRecipe(t *testing.T) {
	if testing.Short() {
		t.Skip("builds loadout from scratch without cgo")
	}
	data, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	df := string(data)
	for _, want := range []string{"CGO_ENABLED=0", "EXPOSE 7777", `VOLUME ["/data"]`, "LOADOUT_DB=/data/loadout.db",
		`CMD ["serve", "--addr", "0.0.0.0:7777", "--config", "/config/loadout.json"]`, `ENTRYPOINT ["/loadout"]`} {
		if !strings.Contains(df, want) {
			t.Errorf("the Dockerfile lacks %s", want)
		}
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "loadout")
	recipe := dockerBuildLine(t, df)
	if !strings.Contains(recipe, "-o /out/loadout") {
		t.Fatalf("the build line does not write /out/loadout: %s", recipe)
	}
	recipe = strings.Replace(recipe, "-o /out/loadout", "-o "+bin, 1)
	build := exec.Command("sh", "-c", recipe)
	build.Dir = "../.."
	build.Env = append(os.Environ(), "VERSION=v0.0.0-test", "COMMIT=feedc0de")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", recipe, err, out)
	}

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Errorf("the binary has an ELF interpreter: it is dynamically linked")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("the binary needs shared libraries: %v", libs)
	}
	f.Close()

	out, err := exec.Command(bin, "version").Output()
	if err != nil || !strings.HasPrefix(string(out), "loadout v0.0.0-test (commit feedc0de) ") {
		t.Errorf("version: %v %q", err, out)
	}

	// The image's layout: /config holds the config and the skills, /data
	// the store.
	cfgDir, dataDir := filepath.Join(dir, "config"), filepath.Join(dir, "data")
	testutil.Must(t, os.MkdirAll(filepath.Join(cfgDir, "skills", "hello"), 0o755))
	testutil.Must(t, os.MkdirAll(dataDir, 0o755))
	testutil.Write(t, filepath.Join(cfgDir, "skills", "hello", "SKILL.md"), "---\nname: hello\ndescription: Says hello.\n---\nSay hello.\n")
	cfg := filepath.Join(cfgDir, "loadout.json")
	testutil.Write(t, cfg, `{"agents": [{"agentId": "a", "skills": [{"root": "skills"}]}]}`)
	env := append(os.Environ(), "LOADOUT_CONFIG="+cfg, "LOADOUT_DB="+filepath.Join(dataDir, "loadout.db"))
	cmd := func(args ...string) *exec.Cmd {
		c := exec.Command(bin, args...)
		c.Env = env
		return c
	}

	// No token yet: 0.0.0.0 is refused with the way out.
	if out, err := cmd("serve", "--addr", "0.0.0.0:0", "--config", cfg).CombinedOutput(); err == nil || !strings.Contains(string(out), "token create") {
		t.Fatalf("serve on 0.0.0.0 without tokens: %v\n%s", err, out)
	}
	tok, err := cmd("token", "create", "--scope", "admin", "--name", "ops").Output()
	if err != nil {
		t.Fatalf("token create: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "loadout.db")); err != nil {
		t.Fatalf("the store is not in the data folder: %v", err)
	}

	srv := cmd("serve", "--addr", "0.0.0.0:0", "--config", cfg)
	stderr, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	port := ""
	sc := bufio.NewScanner(stderr)
	re := regexp.MustCompile(`http://[^ ]*:(\d+)/`)
	var log strings.Builder
	for sc.Scan() {
		log.WriteString(sc.Text() + "\n")
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			port = m[1]
			break
		}
	}
	go io.Copy(io.Discard, stderr)
	if port == "" {
		t.Fatalf("serve printed no URL:\n%s", log.String())
	}
	base := "http://127.0.0.1:" + port
	get := func(path, token string) int {
		req, _ := http.NewRequest("GET", base+path, nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	if c := get("/healthz", ""); c != 200 {
		t.Errorf("/healthz: %d", c)
	}
	if c := get("/v1/agents", ""); c != 401 {
		t.Errorf("/v1/agents without a token: %d, want 401", c)
	}
	if c := get("/v1/agents", strings.TrimSpace(string(tok))); c != 200 {
		t.Errorf("/v1/agents with the token: %d", c)
	}
	srv.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- srv.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve after SIGTERM: %v", err)
		}
	case <-time.After(time.Minute):
		t.Errorf("serve did not stop within a minute of SIGTERM")
	}
}
