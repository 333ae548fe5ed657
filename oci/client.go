package oci

import (
	"bytes"
	"context"
	_ "crypto/sha256" // digests of go-digest
	_ "crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
	"oras.land/oras-go/v2/errdef"
	"oras.land/oras-go/v2/registry"
	"oras.land/oras-go/v2/registry/remote"
	"oras.land/oras-go/v2/registry/remote/auth"
	"oras.land/oras-go/v2/registry/remote/credentials"
)

// Options configure a Client.
type Options struct {
	// Insecure lets the client speak plain HTTP to the registry. Without
	// it every request is HTTPS, and a registry that answers plain HTTP is
	// refused (CodePlainHTTP).
	Insecure bool
	// Username and Password, when Username is set, are sent to the
	// registry (basic auth, or exchanged for a bearer token as the
	// registry asks). They take precedence over the docker config.
	Username string
	Password string
	// DockerConfig is the path of a docker config.json whose credentials
	// (and credential helpers) are used; empty means $DOCKER_CONFIG/config.json
	// or ~/.docker/config.json, as docker, oras and crane read it.
	DockerConfig string
	// NoDockerConfig leaves the docker config alone.
	NoDockerConfig bool
	// CAFile names a PEM file of certificates trusted beside the system's;
	// RootCAs, when set, is used instead of the system's pool.
	CAFile  string
	RootCAs *x509.CertPool
	// Timeout bounds one request, body included. Default 2 minutes.
	Timeout time.Duration
	// HeaderTimeout bounds the wait for a response's headers. Default 30 s.
	HeaderTimeout time.Duration
	// Limits bound what is read (Unpack's limits, manifests and indexes).
	Limits Limits
	// UserAgent defaults to "loadout".
	UserAgent string
}

// MaxRedirects caps the redirects of one blob download.
const MaxRedirects = 3

// Client talks to OCI registries through oras-go.
type Client struct {
	opts   Options
	lim    Limits
	client *auth.Client
	store  credentials.Store
}

// NewClient makes a client. The docker config is read when a registry
// asks for credentials, not here; a CAFile that cannot be read is an error.
func NewClient(o Options) (*Client, error) {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = 30 * time.Second
	}
	if o.UserAgent == "" {
		o.UserAgent = "loadout"
	}
	pool := o.RootCAs
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return nil, &Error{Code: CodeRegistry, Msg: "cannot read the CA file: " + err.Error(), Err: err}
		}
		if pool == nil {
			if pool, err = x509.SystemCertPool(); err != nil || pool == nil {
				pool = x509.NewCertPool()
			}
		}
		if !pool.AppendCertsFromPEM(pem) {
			return nil, &Error{Code: CodeRegistry, Msg: fmt.Sprintf("the CA file %s holds no PEM certificate", o.CAFile)}
		}
	}
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSClientConfig:       &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: o.HeaderTimeout,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	hc := &http.Client{Transport: tr, Timeout: o.Timeout, CheckRedirect: checkRedirect(o.Insecure)}
	c := &Client{opts: o, lim: o.Limits.WithDefaults()}
	if !o.NoDockerConfig {
		var (
			s   credentials.Store
			err error
		)
		if o.DockerConfig != "" {
			s, err = credentials.NewStore(o.DockerConfig, credentials.StoreOptions{})
		} else {
			s, err = credentials.NewStoreFromDocker(credentials.StoreOptions{})
		}
		if err != nil {
			return nil, &Error{Code: CodeRegistry, Msg: "cannot read the docker config: " + err.Error(), Err: err}
		}
		c.store = s
	}
	c.client = &auth.Client{
		Client:     hc,
		Header:     http.Header{"User-Agent": {o.UserAgent}},
		Cache:      auth.NewCache(),
		Credential: c.credential,
	}
	return c, nil
}

func (c *Client) credential(ctx context.Context, hostport string) (auth.Credential, error) {
	if c.opts.Username != "" {
		return auth.Credential{Username: c.opts.Username, Password: c.opts.Password}, nil
	}
	if c.store != nil {
		return credentials.Credential(c.store)(ctx, hostport)
	}
	return auth.EmptyCredential, nil
}

// checkRedirect allows what the distribution spec allows: a blob download
// (GET or HEAD of /v2/NAME/blobs/DIGEST) may be redirected, to any host,
// at most MaxRedirects times, never from HTTPS to plain HTTP unless
// insecure. oras-go's auth client drops the Authorization header once a
// redirect leaves the registry's origin (and net/http drops it for another
// host), so credentials never reach the other host.
func checkRedirect(insecure bool) func(*http.Request, []*http.Request) error {
	return func(req *http.Request, via []*http.Request) error {
		first := via[0]
		if len(via) > MaxRedirects {
			return fmt.Errorf("more than %d redirects", MaxRedirects)
		}
		if (first.Method != http.MethodGet && first.Method != http.MethodHead) || !strings.Contains(first.URL.Path, "/blobs/") {
			return fmt.Errorf("the registry redirected %s %s: only blob downloads may be redirected", first.Method, first.URL.Path)
		}
		if req.URL.Scheme != "https" && !insecure {
			return fmt.Errorf("the registry redirected a blob download to plain HTTP (%s): refused without insecure", req.URL.Redacted())
		}
		return nil
	}
}

// Ref is a parsed reference: REGISTRY/REPOSITORY[:TAG][@DIGEST].
type Ref struct {
	Registry   string
	Repository string
	// Tag and Digest; either may be empty.
	Tag    string
	Digest string
}

// ParseRef parses an OCI reference. "registry/repo:tag@digest" keeps both.
func ParseRef(s string) (Ref, error) {
	name, dig, hasDigest := strings.Cut(s, "@")
	var r Ref
	if hasDigest {
		if _, _, err := parseDigest(dig); err != nil {
			return r, &Error{Code: CodeBadReference, Entry: s, Msg: err.Error()}
		}
		r.Digest = dig
	}
	pr, err := registry.ParseReference(name)
	if err != nil {
		return r, &Error{Code: CodeBadReference, Entry: s, Msg: "not a reference of the form registry.example.com/team/skill:tag or @sha256:...: " + err.Error(), Err: err}
	}
	r.Registry, r.Repository, r.Tag = pr.Registry, pr.Repository, pr.Reference
	return r, nil
}

// Name is REGISTRY/REPOSITORY.
func (r Ref) Name() string { return r.Registry + "/" + r.Repository }

// Reference is the digest when there is one, else the tag.
func (r Ref) Reference() string {
	if r.Digest != "" {
		return r.Digest
	}
	return r.Tag
}

func (r Ref) String() string {
	s := r.Name()
	if r.Tag != "" {
		s += ":" + r.Tag
	}
	if r.Digest != "" {
		s += "@" + r.Digest
	}
	return s
}

func (c *Client) repo(r Ref) (*remote.Repository, error) {
	repo, err := remote.NewRepository(r.Name())
	if err != nil {
		return nil, &Error{Code: CodeBadReference, Entry: r.String(), Msg: err.Error(), Err: err}
	}
	repo.Client = c.client
	repo.PlainHTTP = c.opts.Insecure
	repo.MaxMetadataBytes = c.lim.MaxManifestBytes
	repo.TagListMaxPages = 100
	repo.ManifestMediaTypes = []string{MediaTypeImageManifest, MediaTypeImageIndex, MediaTypeDockerManifest, MediaTypeDockerManifestList}
	return repo, nil
}

// wrap turns a transport or registry error into an *Error, saying what
// to do about a plain HTTP registry.
func (c *Client) wrap(what string, r Ref, err error) error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return err
	}
	msg := err.Error()
	if strings.Contains(msg, "server gave HTTP response to HTTPS client") {
		return &Error{Code: CodePlainHTTP, Entry: r.String(), Msg: fmt.Sprintf("%s: the registry %s speaks plain HTTP; loadout speaks HTTPS unless the source (or --insecure) says insecure", what, r.Registry), Err: err}
	}
	if errors.Is(err, errdef.ErrNotFound) {
		return &Error{Code: CodeRegistry, Entry: r.String(), Msg: what + ": not found", Err: err}
	}
	return &Error{Code: CodeRegistry, Entry: r.String(), Msg: what + ": " + msg, Err: err}
}

// Resolve asks the registry which manifest a reference names (a tag or a
// digest), without downloading it.
func (c *Client) Resolve(ctx context.Context, ref string) (Descriptor, error) {
	r, err := ParseRef(ref)
	if err != nil {
		return Descriptor{}, err
	}
	if r.Reference() == "" {
		return Descriptor{}, &Error{Code: CodeBadReference, Entry: ref, Msg: "the reference has no tag or digest"}
	}
	repo, err := c.repo(r)
	if err != nil {
		return Descriptor{}, err
	}
	d, err := repo.Resolve(ctx, r.Reference())
	if err != nil {
		return Descriptor{}, c.wrap("resolving", r, err)
	}
	return fromSpec(d), nil
}

// Tags lists a repository's tags (the reference's tag or digest, if any,
// is ignored), at most max of them (max <= 0: 10,000).
func (c *Client) Tags(ctx context.Context, repository string, max int) ([]string, error) {
	r, err := ParseRef(repository)
	if err != nil {
		return nil, err
	}
	if max <= 0 {
		max = 10000
	}
	repo, err := c.repo(r)
	if err != nil {
		return nil, err
	}
	var tags []string
	errTooMany := errors.New("too many tags")
	err = repo.Tags(ctx, "", func(page []string) error {
		tags = append(tags, page...)
		if len(tags) > max {
			return errTooMany
		}
		return nil
	})
	if errors.Is(err, errTooMany) {
		return nil, &Error{Code: CodeTooMany, Entry: r.Name(), Msg: fmt.Sprintf("the repository has more than %d tags", max)}
	}
	if err != nil {
		return nil, c.wrap("listing tags", r, err)
	}
	return tags, nil
}

// FetchManifest downloads a manifest or index by tag or digest, at most
// Limits.MaxManifestBytes, and returns its descriptor (its digest computed
// from the bytes; a digest reference must match it).
func (c *Client) FetchManifest(ctx context.Context, ref string) (Descriptor, []byte, error) {
	r, err := ParseRef(ref)
	if err != nil {
		return Descriptor{}, nil, err
	}
	return c.fetchManifest(ctx, r, r.Reference(), -1)
}

func (c *Client) fetchManifest(ctx context.Context, r Ref, reference string, size int64) (Descriptor, []byte, error) {
	if reference == "" {
		return Descriptor{}, nil, &Error{Code: CodeBadReference, Entry: r.String(), Msg: "the reference has no tag or digest"}
	}
	if size > c.lim.MaxManifestBytes {
		return Descriptor{}, nil, &Error{Code: CodeTooLarge, Entry: reference, Msg: fmt.Sprintf("the manifest is %d bytes by its descriptor; the limit is %d", size, c.lim.MaxManifestBytes)}
	}
	repo, err := c.repo(r)
	if err != nil {
		return Descriptor{}, nil, err
	}
	d, rc, err := repo.Manifests().FetchReference(ctx, reference)
	if err != nil {
		return Descriptor{}, nil, c.wrap("fetching the manifest", r, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, c.lim.MaxManifestBytes+1))
	if err != nil {
		return Descriptor{}, nil, c.wrap("fetching the manifest", r, err)
	}
	if int64(len(data)) > c.lim.MaxManifestBytes {
		return Descriptor{}, nil, &Error{Code: CodeTooLarge, Entry: reference, Msg: fmt.Sprintf("the manifest is over %d bytes, the limit", c.lim.MaxManifestBytes)}
	}
	got := digestOf(data)
	if strings.HasPrefix(reference, "sha512:") {
		got = digest.SHA512.FromBytes(data).String()
	}
	if strings.Contains(reference, ":") && reference != got {
		return Descriptor{}, nil, &Error{Code: CodeDigest, Entry: reference, Msg: "the manifest's bytes do not match the digest asked for (" + got + ")"}
	}
	if size >= 0 && int64(len(data)) != size {
		return Descriptor{}, nil, &Error{Code: CodeDigest, Entry: reference, Msg: fmt.Sprintf("the manifest is %d bytes; its descriptor says %d", len(data), size)}
	}
	var head struct {
		MediaType    string `json:"mediaType"`
		ArtifactType string `json:"artifactType"`
	}
	_ = json.Unmarshal(data, &head)
	mt := head.MediaType
	if mt == "" {
		mt = d.MediaType
	}
	return Descriptor{MediaType: mt, Digest: digestOf(data), Size: int64(len(data)), ArtifactType: head.ArtifactType}, data, nil
}

// Pulled is a skill downloaded from a registry.
type Pulled struct {
	*Unpacked
	Ref Ref
	// Digest is the manifest's digest (what a lock pins); Index the
	// digest of the index the reference named, when it named one.
	Digest string
	Index  string
	// ManifestBytes are the manifest as served.
	ManifestBytes []byte
}

// Pull downloads and unpacks the skill a reference names. An index (or
// Docker manifest list) is followed one level to its one usable manifest:
// the entry without a platform, else linux/amd64, else the first linux
// one; attestation entries are skipped. An index with more than
// Limits.MaxIndexEntries entries, or one pointing at another index, is
// refused (CodeIndex).
func (c *Client) Pull(ctx context.Context, ref string) (*Pulled, error) {
	r, err := ParseRef(ref)
	if err != nil {
		return nil, err
	}
	d, data, err := c.fetchManifest(ctx, r, r.Reference(), -1)
	if err != nil {
		return nil, err
	}
	p := &Pulled{Ref: r}
	if d.MediaType == MediaTypeImageIndex || d.MediaType == MediaTypeDockerManifestList {
		p.Index = d.Digest
		entry, err := c.pickManifest(data)
		if err != nil {
			return nil, err
		}
		d, data, err = c.fetchManifest(ctx, r, entry.Digest, entry.Size)
		if err != nil {
			return nil, err
		}
		if d.MediaType == MediaTypeImageIndex || d.MediaType == MediaTypeDockerManifestList {
			return nil, &Error{Code: CodeIndex, Entry: entry.Digest, Msg: "the index points at another index: loadout follows one level"}
		}
	}
	u, err := Unpack(ctx, &blobFetcher{c: c, r: r}, data, c.lim)
	if err != nil {
		return nil, err
	}
	p.Unpacked, p.Digest, p.ManifestBytes = u, d.Digest, data
	return p, nil
}

// PickManifest is the index rule of Pull, exported for the remote source.
func (c *Client) pickManifest(data []byte) (Descriptor, error) {
	return PickManifest(data, c.lim)
}

// PickManifest chooses the manifest of an index that Pull follows.
func PickManifest(data []byte, lim Limits) (Descriptor, error) {
	lim = lim.WithDefaults()
	var idx Index
	if err := json.Unmarshal(data, &idx); err != nil {
		return Descriptor{}, &Error{Code: CodeBadManifest, Msg: "the index is not JSON: " + err.Error(), Err: err}
	}
	if len(idx.Manifests) > lim.MaxIndexEntries {
		return Descriptor{}, &Error{Code: CodeIndex, Msg: fmt.Sprintf("the index lists %d manifests; the limit is %d", len(idx.Manifests), lim.MaxIndexEntries)}
	}
	var neutral, amd64, linux []Descriptor
	for i, m := range idx.Manifests {
		if err := checkDescriptor(m); err != nil {
			return Descriptor{}, &Error{Code: CodeBadManifest, Entry: fmt.Sprintf("manifests[%d]", i), Msg: err.Error()}
		}
		if m.Annotations["vnd.docker.reference.type"] != "" {
			continue // attestations and other references
		}
		switch {
		case m.MediaType == MediaTypeImageIndex || m.MediaType == MediaTypeDockerManifestList:
			return Descriptor{}, &Error{Code: CodeIndex, Entry: m.Digest, Msg: "the index points at another index: loadout follows one level"}
		case m.Platform == nil:
			neutral = append(neutral, m)
		case m.Platform.OS == "linux" && m.Platform.Architecture == "amd64":
			amd64 = append(amd64, m)
		case m.Platform.OS == "linux":
			linux = append(linux, m)
		}
	}
	for _, set := range [][]Descriptor{neutral, amd64, linux} {
		if len(set) > 0 {
			if set[0].Size > lim.MaxManifestBytes {
				return Descriptor{}, &Error{Code: CodeTooLarge, Entry: set[0].Digest, Msg: fmt.Sprintf("the manifest is %d bytes by its descriptor; the limit is %d", set[0].Size, lim.MaxManifestBytes)}
			}
			return set[0], nil
		}
	}
	return Descriptor{}, &Error{Code: CodeIndex, Msg: "the index lists no manifest without a platform or for linux"}
}

type blobFetcher struct {
	c *Client
	r Ref
}

func (f *blobFetcher) Fetch(ctx context.Context, d Descriptor) (io.ReadCloser, error) {
	repo, err := f.c.repo(f.r)
	if err != nil {
		return nil, err
	}
	rc, err := repo.Blobs().Fetch(ctx, toSpec(d))
	if err != nil {
		if strings.Contains(err.Error(), "mismatch Content-Length") || strings.Contains(err.Error(), "mismatch digest") {
			return nil, &Error{Code: CodeDigest, Entry: d.Digest, Msg: "the registry served the blob with another length or digest: " + err.Error(), Err: err}
		}
		return nil, f.c.wrap("fetching blob "+d.Digest, f.r, err)
	}
	return rc, nil
}

// FetchBlob downloads a blob of the reference's repository, at most max
// bytes (by its descriptor, before the download), and verifies its digest.
func (c *Client) FetchBlob(ctx context.Context, repository string, d Descriptor, max int64) ([]byte, error) {
	r, err := ParseRef(repository)
	if err != nil {
		return nil, err
	}
	if d.Size > max {
		return nil, &Error{Code: CodeTooLarge, Entry: d.Digest, Msg: fmt.Sprintf("the blob is %d bytes by its descriptor; the limit is %d", d.Size, max)}
	}
	rc, err := (&blobFetcher{c: c, r: r}).Fetch(ctx, d)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	v, err := newVerifier(rc, d)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if _, err := io.Copy(&buf, v); err != nil {
		return nil, c.wrap("fetching blob "+d.Digest, r, err)
	}
	if err := v.finish(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// PushBlob uploads a blob to the reference's repository (nothing if the
// registry has it already).
func (c *Client) PushBlob(ctx context.Context, repository string, b Blob) error {
	r, err := ParseRef(repository)
	if err != nil {
		return err
	}
	repo, err := c.repo(r)
	if err != nil {
		return err
	}
	if ok, err := repo.Blobs().Exists(ctx, toSpec(b.Descriptor)); err == nil && ok {
		return nil
	}
	err = repo.Blobs().Push(ctx, toSpec(b.Descriptor), bytes.NewReader(b.Data))
	if err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return c.wrap("pushing blob "+b.Descriptor.Digest, r, err)
	}
	return nil
}

// PushManifest uploads a manifest under the reference's tag, or by its
// digest when the reference has no tag.
func (c *Client) PushManifest(ctx context.Context, ref string, m Blob) error {
	r, err := ParseRef(ref)
	if err != nil {
		return err
	}
	repo, err := c.repo(r)
	if err != nil {
		return err
	}
	d := toSpec(m.Descriptor)
	if r.Tag != "" {
		err = repo.Manifests().PushReference(ctx, d, bytes.NewReader(m.Data), r.Tag)
	} else {
		err = repo.Manifests().Push(ctx, d, bytes.NewReader(m.Data))
	}
	if err != nil && !errors.Is(err, errdef.ErrAlreadyExists) {
		return c.wrap("pushing the manifest", r, err)
	}
	return nil
}

// Signer signs what Push pushed: the signing part of loadout fills it in
// (cosign's format). It is called after the manifest is in the registry.
type Signer interface {
	Sign(ctx context.Context, c *Client, ref Ref, manifest Descriptor) error
}

// PushOptions are Push's options.
type PushOptions struct {
	// Signer, when set, signs the pushed manifest.
	Signer Signer
}

// Pushed says what Push wrote.
type Pushed struct {
	Ref      Ref
	Manifest Descriptor
	Layer    Descriptor
}

// Push uploads an artifact: layer, config, then the manifest under the
// reference's tag (the artifact's version when the reference has none;
// a reference with neither is refused). A reference with a digest must
// name the artifact's manifest.
func (c *Client) Push(ctx context.Context, ref string, a *Artifact, o PushOptions) (*Pushed, error) {
	r, err := ParseRef(ref)
	if err != nil {
		return nil, err
	}
	if r.Digest != "" && r.Digest != a.Manifest.Descriptor.Digest {
		return nil, &Error{Code: CodeBadReference, Entry: ref, Msg: "the reference's digest is not the artifact's (" + a.Manifest.Descriptor.Digest + ")"}
	}
	if r.Tag == "" && r.Digest == "" {
		if a.Meta.Version == "" {
			return nil, &Error{Code: CodeBadReference, Entry: ref, Msg: "give a tag (REF:TAG): the skill has no version to tag it with"}
		}
		r.Tag = a.Meta.Version
		if _, err := registry.ParseReference(r.Name() + ":" + r.Tag); err != nil {
			return nil, &Error{Code: CodeBadReference, Entry: ref, Msg: fmt.Sprintf("the skill's version %q is not a valid tag: give a tag (REF:TAG)", r.Tag)}
		}
	}
	for _, b := range []Blob{a.Layer, a.Config} {
		if err := c.PushBlob(ctx, r.Name(), b); err != nil {
			return nil, err
		}
	}
	if err := c.PushManifest(ctx, Ref{Registry: r.Registry, Repository: r.Repository, Tag: r.Tag}.String(), a.Manifest); err != nil {
		return nil, err
	}
	p := &Pushed{Ref: r, Manifest: a.Manifest.Descriptor, Layer: a.Layer.Descriptor}
	p.Ref.Digest = a.Manifest.Descriptor.Digest
	if o.Signer != nil {
		if err := o.Signer.Sign(ctx, c, p.Ref, p.Manifest); err != nil {
			return p, err
		}
	}
	return p, nil
}

func toSpec(d Descriptor) ocispec.Descriptor {
	s := ocispec.Descriptor{MediaType: d.MediaType, Digest: digest.Digest(d.Digest), Size: d.Size, ArtifactType: d.ArtifactType, Annotations: d.Annotations}
	if d.Platform != nil {
		s.Platform = &ocispec.Platform{Architecture: d.Platform.Architecture, OS: d.Platform.OS, Variant: d.Platform.Variant}
	}
	return s
}

func fromSpec(s ocispec.Descriptor) Descriptor {
	d := Descriptor{MediaType: s.MediaType, Digest: s.Digest.String(), Size: s.Size, ArtifactType: s.ArtifactType, Annotations: s.Annotations}
	if s.Platform != nil {
		d.Platform = &Platform{Architecture: s.Platform.Architecture, OS: s.Platform.OS, Variant: s.Platform.Variant}
	}
	return d
}
