package main

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/loadout/loadout/internal/testutil"
)

// k8sDir is deploy/kubernetes, from this package's folder.
const k8sDir = "../../deploy/kubernetes"

// k8sDoc reads the one YAML document of a manifest in deploy/kubernetes.
func k8sDoc(t *testing.T, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(k8sDir, name))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return m
}

// dig walks m by keys (strings) and indexes (ints).
func dig(t *testing.T, m any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			mm, ok := m.(map[string]any)
			if !ok {
				t.Fatalf("at %v: %q is not in a map", path, k)
			}
			m = mm[k]
		case int:
			s, ok := m.([]any)
			if !ok || k >= len(s) {
				t.Fatalf("at %v: no item %d", path, k)
			}
			m = s[k]
		}
	}
	return m
}

// podEnv is the environment a container of the manifests runs with: the
// image's (the Dockerfile's ENV), then the container's env, with the
// Secret's LOADOUT_DB as dsn and a volume's mount path as given in
// mounts (a temporary folder for the test).
func podEnv(t *testing.T, ctr any, dsn string, mounts map[string]string) []string {
	t.Helper()
	env := []string{"LOADOUT_CONFIG=/config/loadout.json", "LOADOUT_DB=/data/loadout.db"}
	list, _ := dig(t, ctr, "env").([]any)
	for i := range list {
		name := dig(t, list[i], "name").(string)
		if ref, ok := dig(t, list[i], "valueFrom").(map[string]any); ok {
			if name != "LOADOUT_DB" || dig(t, ref, "secretKeyRef", "name") != "loadout-store" || dig(t, ref, "secretKeyRef", "key") != "LOADOUT_DB" {
				t.Fatalf("env %s: only LOADOUT_DB comes from a Secret (loadout-store, key LOADOUT_DB): %v", name, ref)
			}
			env = append(env, name+"="+dsn)
			continue
		}
		v := dig(t, list[i], "value").(string)
		if m, ok := mounts[v]; ok {
			v = m
		}
		env = append(env, name+"="+v)
	}
	return env
}

func strs(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}

// The shipped Kubernetes set-up, run for real without a cluster: the
// ConfigMap's loadout.json, the bootstrap Job's token command and the
// Deployment's container args (with --addr on loopback, the only change),
// as two replicas over one PostgreSQL schema given as $LOADOUT_DB, as the
// Secret gives it. What holds across replicas: tokens, writes (through
// either, served by the other), stateless MCP (any replica answers any
// request). What does not: a UI session is valid only on the replica that
// signed the browser in, which is why the Service has sessionAffinity.
func TestKubernetesTwoReplicas(t *testing.T) {
	if os.Getenv("LOADOUT_TEST_POSTGRES") == "" && os.Getenv("CI") == "" {
		t.Skip("LOADOUT_TEST_POSTGRES is not set (scripts/test.sh starts a server)")
	}
	dsn := freshPostgres(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "loadout.json")
	testutil.Write(t, cfg, dig(t, k8sDoc(t, "configmap.yaml"), "data", "loadout.json").(string))

	// The Deployment: the store comes from the Secret as $LOADOUT_DB;
	// the emptyDir volumes are temporary folders here.
	ctr := dig(t, k8sDoc(t, "deployment.yaml"), "spec", "template", "spec", "containers", 0)
	mounts := map[string]string{"/cache": t.TempDir(), "/tmp": t.TempDir()}
	env := podEnv(t, ctr, dsn, mounts)
	if !strings.Contains(strings.Join(env, "\n"), "LOADOUT_DB="+dsn) {
		t.Fatalf("the Deployment does not take LOADOUT_DB from the Secret: %v", env)
	}
	args := strs(dig(t, ctr, "args"))
	for i := 0; i+1 < len(args); i++ {
		switch args[i] {
		case "--addr":
			if args[i+1] != "0.0.0.0:7777" {
				t.Fatalf("--addr %s: the probes and the Service use port 7777 on every address", args[i+1])
			}
			args[i+1] = "127.0.0.1:0"
		case "--config":
			if args[i+1] != "/config/loadout.json" {
				t.Fatalf("--config %s: the ConfigMap is mounted at /config", args[i+1])
			}
			args[i+1] = cfg
		}
	}

	// The bootstrap Job: its command, as it runs, makes the admin token
	// (serve refuses 0.0.0.0 without one).
	job := dig(t, k8sDoc(t, "bootstrap/create-admin-token.yaml"), "spec", "template", "spec", "containers", 0)
	cmd := exec.Command(loadoutBinary(t), strs(dig(t, job, "args"))...)
	cmd.Env = append(os.Environ(), podEnv(t, job, dsn, nil)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("the bootstrap Job's command: %v\n%s", err, out)
	}
	token := regexp.MustCompile(`(?m)^lo_\S+$`).FindString(string(out))
	if token == "" {
		t.Fatalf("the bootstrap Job printed no token:\n%s", out)
	}

	a := startServeEnv(t, env, args...)
	b := startServeEnv(t, env, args...)
	for _, r := range []*running{a, b} {
		eventually(t, 30*time.Second, "GET /readyz 200", func() bool {
			code, _ := httpDo(t, "GET", r.base+"/readyz", "", nil)
			return code == 200
		})
		if code, body := httpDo(t, "GET", r.base+"/v1/skills", "", nil); code != 401 {
			t.Fatalf("a request without a token: %d %s", code, body)
		}
	}

	// A write through A is served by B.
	doc := `{"schemaVersion": 2, "skill": {"name": "shared", "content": "---\nname: shared\ndescription: Shared.\n---\nWritten through replica A.\n", "files": []}}`
	if code, body := httpDo(t, "POST", a.base+"/v1/skills", token, strings.NewReader(doc), "Content-Type", "application/json"); code != 201 {
		t.Fatalf("create through A: %d %s", code, body)
	}
	eventually(t, 5*time.Second, "replica B serving A's write", func() bool {
		_, body := httpDo(t, "GET", b.base+"/v1/agents/default/skills/shared", token, nil)
		return strings.Contains(body, "Written through replica A.")
	})

	// The Service's names are allowed Host values; another name is not.
	hostGet := func(base, host string) int {
		req, _ := http.NewRequest("GET", base+"/v1/agents", nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	if code := hostGet(b.base, "loadout.loadout.svc.cluster.local:7777"); code != 200 {
		t.Fatalf("Host: the Service's name: %d", code)
	}
	if code := hostGet(b.base, "loadout.other.svc:7777"); code == 200 {
		t.Fatal("Host: a name not in allowedHosts was answered")
	}

	// Stateless MCP: no session id is handed out, and a request needs no
	// initialize on the replica it reaches.
	mcp := func(base, body string) (int, http.Header, string) {
		req, _ := http.NewRequest("POST", base+"/agents/default/mcp", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		data, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(data)
	}
	code, hdr, body := mcp(a.base, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"k8s-test","version":"1"}}}`)
	if code != 200 || hdr.Get("Mcp-Session-Id") != "" {
		t.Fatalf("initialize on A: %d session %q %s", code, hdr.Get("Mcp-Session-Id"), body)
	}
	if code, _, body := mcp(b.base, `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`); code != 200 || !strings.Contains(body, "load_skill") {
		t.Fatalf("tools/list on B, after initialize on A: %d %s", code, body)
	}

	// A UI session lives in the memory of the replica that made it.
	jar, _ := cookiejar.New(nil)
	ui := &http.Client{Jar: jar}
	page, err := ui.Get(a.base + "/ui/login")
	if err != nil {
		t.Fatal(err)
	}
	html, _ := io.ReadAll(page.Body)
	page.Body.Close()
	m := regexp.MustCompile(`<meta name="csrf-token" content="([^"]*)">`).FindSubmatch(html)
	if m == nil {
		t.Fatalf("no CSRF token in the login page:\n%s", html)
	}
	res, err := ui.PostForm(a.base+"/ui/login", url.Values{"token": {token}, "csrf": {string(m[1])}, "next": {"/ui/"}})
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	var session *http.Cookie
	for _, c := range jar.Cookies(mustURL(t, a.base)) {
		if c.Name == "loadout_session" {
			session = c
		}
	}
	if session == nil {
		t.Fatalf("signing in on A set no session cookie: %d", res.StatusCode)
	}
	withSession := func(base string) int {
		req, _ := http.NewRequest("GET", base+"/v1/agents", nil)
		req.AddCookie(session)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	if code := withSession(a.base); code != 200 {
		t.Fatalf("A's session on A: %d", code)
	}
	if code := withSession(b.base); code != 401 {
		t.Fatalf("A's session on B: %d, want 401 (sessions are per replica: the Service's sessionAffinity is there for this)", code)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
