// Package registrytest starts a real OCI registry for loadout's tests:
// Debian's docker-registry (distribution 2.8), run as a process on a free
// loopback port with a temporary storage folder, optionally behind
// htpasswd basic auth (bcrypt) and TLS (a self-signed certificate made by
// the test). Only tests import it; .ci/run installs the package.
package registrytest

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/loadout/loadout/internal/testutil"
)

// Binary is the registry Debian's docker-registry package installs.
const Binary = "/usr/bin/docker-registry"

// Options choose what the registry asks of its clients.
type Options struct {
	// Users, when set, turn on htpasswd basic auth with these user names
	// and passwords.
	Users map[string]string
	// TLS serves HTTPS with a certificate for 127.0.0.1 and localhost,
	// signed by itself; the client trusts it through CAFile or CAPool.
	TLS bool
}

// Registry is a running registry.
type Registry struct {
	// Host is 127.0.0.1:PORT: references are Host + "/team/skill:1.0.0".
	Host string
	// URL is http://Host or https://Host.
	URL string
	// CAFile and CAPool hold the certificate when TLS is on.
	CAFile string
	CAPool *x509.CertPool
	// Storage is the registry's storage folder.
	Storage string
	// TLS says whether it serves HTTPS.
	TLS bool

	log *syncBuffer
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Log is what the registry wrote (errors and warnings).
func (r *Registry) Log() string { return r.log.String() }

// Ref is Host + "/" + path (a repository, with a tag or digest if given).
func (r *Registry) Ref(path string) string { return r.Host + "/" + path }

// Client is an HTTP client that trusts the registry's certificate.
func (r *Registry) Client() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if r.CAPool != nil {
		tr.TLSClientConfig = &tls.Config{RootCAs: r.CAPool}
	}
	return &http.Client{Transport: tr, Timeout: 30 * time.Second}
}

// Start starts a registry, stopped when the test ends. Without the
// docker-registry binary the test is skipped (failed under CI).
func Start(t testing.TB, o Options) *Registry {
	t.Helper()
	if _, err := os.Stat(Binary); err != nil {
		testutil.Unavailable(t, "no %s (Debian's docker-registry package): %v", Binary, err)
	}
	dir := t.TempDir()
	r := &Registry{Storage: filepath.Join(dir, "storage"), TLS: o.TLS, log: &syncBuffer{}}
	var extra strings.Builder
	if o.TLS {
		cert, key, pool := selfSigned(t)
		r.CAFile = filepath.Join(dir, "ca.pem")
		r.CAPool = pool
		testutil.WriteBytes(t, r.CAFile, cert, 0o644)
		testutil.WriteBytes(t, filepath.Join(dir, "key.pem"), key, 0o600)
		fmt.Fprintf(&extra, "  tls:\n    certificate: %s\n    key: %s\n", r.CAFile, filepath.Join(dir, "key.pem"))
	}
	var authConf string
	if len(o.Users) > 0 {
		var lines strings.Builder
		for u, p := range o.Users {
			h, err := bcrypt.GenerateFromPassword([]byte(p), bcrypt.MinCost)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&lines, "%s:%s\n", u, h)
		}
		testutil.WriteBytes(t, filepath.Join(dir, "htpasswd"), []byte(lines.String()), 0o600)
		authConf = fmt.Sprintf("auth:\n  htpasswd:\n    realm: loadout-test\n    path: %s\n", filepath.Join(dir, "htpasswd"))
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		port := testutil.FreePort(t)
		r.Host = fmt.Sprintf("127.0.0.1:%d", port)
		scheme := "http"
		if o.TLS {
			scheme = "https"
		}
		r.URL = scheme + "://" + r.Host
		conf := fmt.Sprintf(`version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
  maintenance:
    uploadpurging:
      enabled: false
http:
  addr: %s
  secret: loadout-registrytest
%s%s`, r.Storage, r.Host, extra.String(), authConf)
		path := filepath.Join(dir, "config.yml")
		testutil.Write(t, path, conf)
		cmd := exec.Command(Binary, "serve", path)
		cmd.Stdout, cmd.Stderr = r.log, r.log
		cmd.Env = append(os.Environ(), "OTEL_TRACES_EXPORTER=none")
		if err := cmd.Start(); err != nil {
			t.Fatalf("starting %s: %v", Binary, err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		stop := func() {
			cmd.Process.Kill()
			<-exited
		}
		if lastErr = r.wait(exited); lastErr == nil {
			t.Cleanup(func() {
				stop()
				if t.Failed() {
					t.Logf("registry log:\n%s", r.Log())
				}
			})
			return r
		}
		stop()
	}
	t.Fatalf("the registry did not start: %v\n%s", lastErr, r.Log())
	return nil
}

// wait polls /v2/ until the registry answers (200, or 401 with auth on).
func (r *Registry) wait(exited chan error) error {
	c := r.Client()
	c.Timeout = 2 * time.Second
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			exited <- err
			return fmt.Errorf("the registry exited: %v", err)
		default:
		}
		resp, err := c.Get(r.URL + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK || resp.StatusCode == http.StatusUnauthorized {
				return nil
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	return fmt.Errorf("no answer from %s/v2/ in 20 s", r.URL)
}

// selfSigned makes a certificate for 127.0.0.1 and localhost that signs
// itself, returning it and its key as PEM, and a pool that trusts it.
func selfSigned(t testing.TB) (certPEM, keyPEM []byte, pool *x509.CertPool) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "loadout registrytest"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool = x509.NewCertPool()
	pool.AddCert(cert)
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), pool
}
