package loadout_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/loadout/loadout/config"
)

// The Kubernetes manifests (deploy/kubernetes) are checked with
// kubeconform, strictly, against the JSON schemas of the Kubernetes API
// made offline from the OpenAPI document in the k8s.io/kubernetes module:
// the validate module (deploy/kubernetes/validate, its own go.mod) pins
// kubeconform as a tool and converts the document (its main.go). .ci/run
// downloads both; this test runs with GOPROXY=off, so it fetches nothing.

const (
	k8sManifests = "deploy/kubernetes"
	k8sValidate  = "deploy/kubernetes/validate"
	// The Kubernetes release whose API the manifests are checked against,
	// and its module's hash (go.sum form), checked before its document
	// is read.
	k8sModule = "k8s.io/kubernetes@v1.37.2"
	k8sSum    = "h1:A2VDEiObzkYqFTKhSsn0ZEb0RlLEXpHWj93gi2HqEwE="
)

var (
	kcOnce            sync.Once
	kcBin, kcSchemas  string
	kcErr             error
	kcFetchHint       = "run .ci/run's step for it: (cd " + k8sValidate + " && go mod download && go mod download " + k8sModule + ")"
	kcSchemaTemplate  = "{{ .ResourceKind }}{{ .KindSuffix }}.json"
	k8sResourceSuffix = ".yaml"
)

// kubeconform builds kubeconform and the schemas once, into the user's
// cache keyed by the validate module's files and the Kubernetes version.
func kubeconform(t *testing.T) (bin, schemas string) {
	t.Helper()
	kcOnce.Do(func() { kcBin, kcSchemas, kcErr = buildKubeconform() })
	if kcErr != nil {
		t.Fatal(kcErr)
	}
	return kcBin, kcSchemas
}

func buildKubeconform() (string, string, error) {
	h := sha256.New()
	h.Write([]byte(k8sModule + k8sSum))
	for _, f := range []string{"go.mod", "go.sum", "main.go"} {
		b, err := os.ReadFile(filepath.Join(k8sValidate, f))
		if err != nil {
			return "", "", err
		}
		h.Write(b)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "loadout-test", "kubeconform-"+hex.EncodeToString(h.Sum(nil))[:16])
	bin, schemas := filepath.Join(dir, "kubeconform"), filepath.Join(dir, "schemas")
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		return bin, schemas, nil
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return "", "", err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "building-")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(tmp)
	run := func(name string, args ...string) ([]byte, error) {
		cmd := exec.Command(name, args...)
		cmd.Dir = k8sValidate
		cmd.Env = append(os.Environ(), "GOPROXY=off", "GOWORK=off")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return out, &runError{cmd: name + " " + strings.Join(args, " "), err: err, stderr: stderr.String() + string(out)}
		}
		return out, nil
	}
	if _, err := run("go", "build", "-o", filepath.Join(tmp, "kubeconform"), "github.com/yannh/kubeconform/cmd/kubeconform"); err != nil {
		return "", "", &hintError{err, kcFetchHint}
	}
	if _, err := run("go", "build", "-o", filepath.Join(tmp, "schemas-tool"), "."); err != nil {
		return "", "", &hintError{err, kcFetchHint}
	}
	out, err := run("go", "mod", "download", "-json", k8sModule)
	var m struct{ Dir, Sum, Error string }
	if jerr := json.Unmarshal(out, &m); jerr != nil || m.Error != "" || err != nil {
		return "", "", &hintError{&runError{cmd: "go mod download " + k8sModule, err: err, stderr: m.Error}, kcFetchHint}
	}
	if m.Sum != k8sSum {
		return "", "", &runError{cmd: "go mod download " + k8sModule, stderr: "its hash is " + m.Sum + ", not " + k8sSum}
	}
	if _, err := run(filepath.Join(tmp, "schemas-tool"), "-swagger", filepath.Join(m.Dir, "api", "openapi-spec", "swagger.json"), "-out", filepath.Join(tmp, "schemas")); err != nil {
		return "", "", err
	}
	os.Remove(filepath.Join(tmp, "schemas-tool"))
	if err := os.WriteFile(filepath.Join(tmp, "done"), []byte(k8sModule+"\n"), 0o644); err != nil {
		return "", "", err
	}
	os.RemoveAll(dir)
	if err := os.Rename(tmp, dir); err != nil {
		return "", "", err
	}
	return bin, schemas, nil
}

type runError struct {
	cmd, stderr string
	err         error
}

func (e *runError) Error() string { return e.cmd + ": " + errString(e.err) + "\n" + e.stderr }

type hintError struct {
	err  error
	hint string
}

func (e *hintError) Error() string {
	return e.err.Error() + "\n(the modules may be missing from the module cache: " + e.hint + ")"
}

func errString(err error) string {
	if err == nil {
		return "failed"
	}
	return err.Error()
}

// kcResult is kubeconform's JSON output (-output json -summary -verbose).
type kcResult struct {
	Resources []struct {
		Filename, Kind, Name, Status, Msg string
		ValidationErrors                  []struct{ Path, Msg string }
	}
	Summary struct{ Valid, Invalid, Errors, Skipped int }
}

// runKubeconform checks files strictly against the offline schemas.
func runKubeconform(t *testing.T, files ...string) (kcResult, string, error) {
	t.Helper()
	bin, schemas := kubeconform(t)
	args := append([]string{"-strict", "-summary", "-verbose", "-output", "json",
		"-schema-location", filepath.Join(schemas, kcSchemaTemplate)}, files...)
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var r kcResult
	if jerr := json.Unmarshal(out, &r); jerr != nil {
		t.Fatalf("kubeconform's output is not its JSON: %v\n%s\n%s", jerr, out, stderr.String())
	}
	return r, string(out), err
}

// k8sFiles are the manifests: every .yaml file under deploy/kubernetes
// but kustomization.yaml (kustomize's own, not an API object).
func k8sFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(k8sManifests, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p == k8sValidate {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, k8sResourceSuffix) && d.Name() != "kustomization.yaml" {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(files)
	return files
}

// Every manifest is valid, strictly (no field the API does not know,
// no duplicate key), against the Kubernetes API's schemas.
func TestKubernetesManifestsValidate(t *testing.T) {
	if ci, err := os.ReadFile(".ci/run"); err != nil || !bytes.Contains(ci, []byte("go mod download "+k8sModule)) {
		t.Fatalf(".ci/run does not download %s (%v): %s", k8sModule, err, kcFetchHint)
	}
	files := k8sFiles(t)
	r, out, err := runKubeconform(t, files...)
	if err != nil || r.Summary.Invalid+r.Summary.Errors+r.Summary.Skipped > 0 {
		t.Fatalf("kubeconform: %v\n%s", err, out)
	}
	var kinds []string
	for _, res := range r.Resources {
		if res.Status != "statusValid" {
			t.Errorf("%s %s/%s: %s %s", res.Filename, res.Kind, res.Name, res.Status, res.Msg)
		}
		kinds = append(kinds, res.Kind+"/"+res.Name)
	}
	sort.Strings(kinds)
	want := "ConfigMap/loadout-config Deployment/loadout Job/loadout-create-admin-token Namespace/loadout PodDisruptionBudget/loadout Secret/loadout-store Service/loadout"
	if got := strings.Join(kinds, " "); got != want || r.Summary.Valid != 7 {
		t.Fatalf("validated %d: %s\nwant 7: %s", r.Summary.Valid, got, want)
	}
}

// A manifest with a misspelt field, a value of the wrong type, a
// duplicate key, a missing required field or an API version that does
// not exist is rejected, naming what is wrong.
func TestKubernetesManifestsRejectMistakes(t *testing.T) {
	deployment, err := os.ReadFile(filepath.Join(k8sManifests, "deployment.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	pdb, err := os.ReadFile(filepath.Join(k8sManifests, "pdb.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, base, old, new, want string
	}{
		{"misspelt field", "deployment", "  replicas: 2\n", "  replica: 2\n", "at '/spec': additional properties 'replica' not allowed"},
		{"misspelt probe", "deployment", "          readinessProbe:\n", "          readynessProbe:\n", "additional properties 'readynessProbe' not allowed"},
		{"wrong type", "deployment", "  replicas: 2\n", "  replicas: two\n", "at '/spec/replicas': got string, want integer"},
		{"wrong type in a port", "deployment", "containerPort: 7777", "containerPort: seven", "at '/spec/template/spec/containers/0/ports/0/containerPort': got string, want integer"},
		{"duplicate key", "deployment", "  replicas: 2\n", "  replicas: 2\n  replicas: 3\n", "key \"replicas\" already set in map"},
		{"missing required field", "deployment", "        - name: loadout\n          # The image", "        - # The image", "at '/spec/template/spec/containers/0': missing property 'name'"},
		{"int-or-string given a list", "pdb", "minAvailable: 1", "minAvailable: [1]", "at '/spec/minAvailable': 'oneOf' failed"},
		{"no such API version", "pdb", "apiVersion: policy/v1\n", "apiVersion: policy/v1beta9\n", "could not find schema for PodDisruptionBudget"},
	}
	dir := t.TempDir()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := deployment
			if c.base == "pdb" {
				base = pdb
			}
			if !bytes.Contains(base, []byte(c.old)) {
				t.Fatalf("%s.yaml no longer holds %q: update this case", c.base, c.old)
			}
			f := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-")+".yaml")
			if err := os.WriteFile(f, bytes.Replace(base, []byte(c.old), []byte(c.new), 1), 0o644); err != nil {
				t.Fatal(err)
			}
			r, out, err := runKubeconform(t, f)
			if err == nil || r.Summary.Valid != 0 || r.Summary.Invalid+r.Summary.Errors != 1 {
				t.Fatalf("accepted: %v\n%s", err, out)
			}
			if len(r.Resources) != 1 || !strings.Contains(r.Resources[0].Msg, c.want) {
				t.Fatalf("the rejection does not say %q:\n%s", c.want, out)
			}
		})
	}
}

// k8sYAML reads the one document of a manifest.
func k8sYAML(t *testing.T, name string, v any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(k8sManifests, name))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

type k8sProbe struct {
	HTTPGet struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
	PeriodSeconds    int `yaml:"periodSeconds"`
	FailureThreshold int `yaml:"failureThreshold"`
}

// What the schemas cannot see: the manifests agree with each other and
// with loadout. kustomization.yaml lists every resource but the example
// Secret and the bootstrap Job; the Service and the PDB select the
// Deployment's pods; the probes hit /healthz and /readyz on the port
// named http; the ConfigMap's loadout.json loads; its drain fits the
// grace period, and the readiness probe notices the drain before the
// listener closes.
func TestKubernetesManifestsAgree(t *testing.T) {
	var kust struct {
		Resources []string `yaml:"resources"`
	}
	data, err := os.ReadFile(filepath.Join(k8sManifests, "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, &kust); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, f := range k8sFiles(t) {
		rel, _ := filepath.Rel(k8sManifests, f)
		if rel != "secret.example.yaml" && !strings.HasPrefix(rel, "bootstrap/") {
			want = append(want, rel)
		}
	}
	got := append([]string(nil), kust.Resources...)
	sort.Strings(got)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("kustomization.yaml resources: %v\nwant every manifest but the example Secret and bootstrap/: %v", got, want)
	}

	var dep struct {
		Spec struct {
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
			Template struct {
				Metadata struct {
					Labels map[string]string `yaml:"labels"`
				} `yaml:"metadata"`
				Spec struct {
					TerminationGracePeriodSeconds int `yaml:"terminationGracePeriodSeconds"`
					Containers                    []struct {
						Ports []struct {
							Name          string `yaml:"name"`
							ContainerPort int    `yaml:"containerPort"`
						} `yaml:"ports"`
						StartupProbe   k8sProbe `yaml:"startupProbe"`
						ReadinessProbe k8sProbe `yaml:"readinessProbe"`
						LivenessProbe  k8sProbe `yaml:"livenessProbe"`
					} `yaml:"containers"`
				} `yaml:"spec"`
			} `yaml:"template"`
		} `yaml:"spec"`
	}
	var raw map[string]any
	k8sYAML(t, "deployment.yaml", &raw)
	b, _ := yaml.Marshal(raw)
	if err := yaml.Unmarshal(b, &dep); err != nil {
		t.Fatal(err)
	}
	pod := dep.Spec.Template.Metadata.Labels
	matches := func(sel map[string]string) bool {
		for k, v := range sel {
			if pod[k] != v {
				return false
			}
		}
		return len(sel) > 0
	}
	if !matches(dep.Spec.Selector.MatchLabels) {
		t.Fatalf("the Deployment's selector %v does not match its pods' labels %v", dep.Spec.Selector.MatchLabels, pod)
	}
	var svc struct {
		Spec struct {
			Selector map[string]string `yaml:"selector"`
			Ports    []struct {
				Name       string `yaml:"name"`
				TargetPort string `yaml:"targetPort"`
			} `yaml:"ports"`
		} `yaml:"spec"`
	}
	var pdb struct {
		Spec struct {
			Selector struct {
				MatchLabels map[string]string `yaml:"matchLabels"`
			} `yaml:"selector"`
		} `yaml:"spec"`
	}
	k8sYAML(t, "service.yaml", &raw)
	b, _ = yaml.Marshal(raw)
	yaml.Unmarshal(b, &svc)
	k8sYAML(t, "pdb.yaml", &raw)
	b, _ = yaml.Marshal(raw)
	yaml.Unmarshal(b, &pdb)
	if !matches(svc.Spec.Selector) || !matches(pdb.Spec.Selector.MatchLabels) {
		t.Fatalf("the Service %v or the PDB %v does not select the pods %v", svc.Spec.Selector, pdb.Spec.Selector.MatchLabels, pod)
	}
	ctr := dep.Spec.Template.Spec.Containers[0]
	ports := map[string]int{}
	for _, p := range ctr.Ports {
		ports[p.Name] = p.ContainerPort
	}
	if ports["http"] != 7777 || ports["metrics"] != 9464 {
		t.Fatalf("container ports %v: want http 7777 and metrics 9464", ports)
	}
	for _, p := range svc.Spec.Ports {
		if _, ok := ports[p.TargetPort]; !ok {
			t.Fatalf("the Service's port %s targets %q, which the container does not name", p.Name, p.TargetPort)
		}
	}
	for name, p := range map[string]struct {
		probe k8sProbe
		path  string
	}{"startup": {ctr.StartupProbe, "/healthz"}, "readiness": {ctr.ReadinessProbe, "/readyz"}, "liveness": {ctr.LivenessProbe, "/healthz"}} {
		if p.probe.HTTPGet.Path != p.path || p.probe.HTTPGet.Port != "http" {
			t.Errorf("the %s probe gets %s on %s, want %s on http", name, p.probe.HTTPGet.Path, p.probe.HTTPGet.Port, p.path)
		}
	}

	var cm struct {
		Data map[string]string `yaml:"data"`
	}
	k8sYAML(t, "configmap.yaml", &raw)
	b, _ = yaml.Marshal(raw)
	yaml.Unmarshal(b, &cm)
	cfg, err := config.Parse([]byte(cm.Data["loadout.json"]), "/config/loadout.json")
	if err != nil {
		t.Fatalf("the ConfigMap's loadout.json: %v", err)
	}
	if cfg.Store != "" {
		t.Fatalf("the ConfigMap names a store (%q): the store comes from the Secret as LOADOUT_DB", cfg.Store)
	}
	delay, timeout := time.Duration(cfg.Server.ShutdownDelay), time.Duration(cfg.Server.ShutdownTimeout)
	grace := time.Duration(dep.Spec.Template.Spec.TerminationGracePeriodSeconds) * time.Second
	if delay+timeout >= grace {
		t.Errorf("shutdownDelay %s + shutdownTimeout %s is not under terminationGracePeriodSeconds (%s): the kubelet would kill requests in flight", delay, timeout, grace)
	}
	rp := ctr.ReadinessProbe
	if notice := time.Duration(rp.PeriodSeconds*rp.FailureThreshold) * time.Second; notice >= delay {
		t.Errorf("the readiness probe notices a drain after %s, not within shutdownDelay %s: the listener would close while the Service still sends to it", notice, delay)
	}
}
