// Package ocifetch reads skills from OCI registries: it implements
// remote.Fetcher for oci sources with package oci (the layouts, the
// bounded and safe Unpack, and the registry client), so that package
// remote does not import a registry library.
//
// One artifact is one skill. A source names one repository and which
// artifact of it to follow:
//
//   - "tag": Resolve asks the registry what the tag points at now (a HEAD
//     of the manifest) and returns its digest;
//   - "digest": the revision is the digest itself, and never moves;
//   - "tags": a semver range; Resolve lists the repository's tags (at most
//     remote.oci.maxTags), picks the highest in the range and resolves it.
//     The lock records the tag beside the digest.
//
// Fetch reads the manifest by its digest (the pin), so a tag moved since
// Resolve changes nothing: what is fetched is what is pinned. The layer
// is checked from its descriptor against the limits before it is
// downloaded, verified against its digest while it streams, and unpacked
// by oci.Unpack (every entry name through skill.CleanPath; links,
// devices, duplicates refused); the skill is written to DIR/NAME with
// portable.ExportDir.
//
// Requests are bounded in time: Options.ResponseTimeout for a registry to
// answer with headers (one that hangs), Options.FetchTimeout for a whole
// Resolve or Fetch (one that dribbles). A blob download redirected to
// another host is followed, as the distribution spec allows, without the
// registry's credentials.
package ocifetch

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/loadout/loadout/internal/semrange"
	"github.com/loadout/loadout/oci"
	"github.com/loadout/loadout/portable"
	"github.com/loadout/loadout/remote"
	"github.com/loadout/loadout/signing"
)

// Defaults of Options.
const (
	DefaultResponseTimeout = 30 * time.Second
	DefaultFetchTimeout    = 5 * time.Minute
	DefaultMaxTags         = 10000
)

// Options tune the fetcher of every oci source.
type Options struct {
	// ResponseTimeout bounds the wait for a registry's answer (its
	// headers) to each request.
	ResponseTimeout time.Duration
	// FetchTimeout bounds a whole Resolve or Fetch, and each request.
	FetchTimeout time.Duration
	// MaxTags bounds the tags a "tags" range is matched against.
	MaxTags int
	// Limits bound one artifact (UnpackLimits); remote.DefaultLimits when
	// zero.
	Limits remote.Limits
	// DockerConfig is the docker config.json read for credentials when a
	// source gives none ("": $DOCKER_CONFIG/config.json, else
	// ~/.docker/config.json, as docker, oras and crane read it).
	DockerConfig string
	// RootCAs, when set, replaces the system's trusted roots (tests).
	RootCAs *x509.CertPool
}

func (o Options) withDefaults() Options {
	if o.ResponseTimeout <= 0 {
		o.ResponseTimeout = DefaultResponseTimeout
	}
	if o.FetchTimeout <= 0 {
		o.FetchTimeout = DefaultFetchTimeout
	}
	if o.MaxTags <= 0 {
		o.MaxTags = DefaultMaxTags
	}
	o.Limits = o.Limits.WithDefaults()
	return o
}

// Fetcher is an oci source's remote.Fetcher.
type Fetcher struct {
	spec remote.Spec
	opt  Options
	cli  *oci.Client
	rng  *semrange.Range

	mu   sync.Mutex
	tags map[string]string // revision → the tag a range resolved it from

	// verifier checks signatures when the source has a verify policy
	// (verify.go); signers are who signed each revision fetched.
	verifier *signing.Verifier
	signers  map[string]*remote.Signer
}

// Pool makes the fetchers of many sources, sharing one registry client
// (its connections and its token cache) among the sources that have the
// same credentials and insecure setting. A manager makes a fetcher for
// every sync; without a pool each would have a client, and connections,
// of its own.
type Pool struct {
	opt Options
	mu  sync.Mutex
	cli map[clientKey]*oci.Client
}

type clientKey struct {
	insecure           bool
	username, password string
	lim                remote.Limits
}

// MaxPooledClients bounds the clients a Pool keeps: past it, a fetcher
// gets a client of its own.
const MaxPooledClients = 256

// NewPool is a pool of fetchers with the options opt.
func NewPool(opt Options) *Pool {
	return &Pool{opt: opt.withDefaults(), cli: map[clientKey]*oci.Client{}}
}

// New makes the fetcher of s, with a shared client.
func (p *Pool) New(s remote.Spec) (remote.Fetcher, error) {
	return newFetcher(s, p.opt, p)
}

func (p *Pool) client(s remote.Spec, opt Options) (*oci.Client, error) {
	k := clientKey{s.Insecure, s.Username, s.Password, opt.Limits}
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.cli[k]; c != nil {
		return c, nil
	}
	c, err := newClient(s, opt)
	if err == nil && len(p.cli) < MaxPooledClients {
		p.cli[k] = c
	}
	return c, err
}

func newClient(s remote.Spec, opt Options) (*oci.Client, error) {
	return oci.NewClient(oci.Options{Insecure: s.Insecure, Username: s.Username, Password: s.Password,
		DockerConfig: opt.DockerConfig, RootCAs: opt.RootCAs, Timeout: opt.FetchTimeout, HeaderTimeout: opt.ResponseTimeout,
		Limits: UnpackLimits(opt.Limits), UserAgent: "loadout"})
}

// New makes the fetcher of s, with a client of its own.
func New(s remote.Spec, opt Options) (*Fetcher, error) {
	return newFetcher(s, opt.withDefaults(), nil)
}

func newFetcher(s remote.Spec, opt Options, pool *Pool) (*Fetcher, error) {
	if s.OCI == "" {
		return nil, remote.Errorf(s.ID, remote.CodeInvalid, "not an oci source")
	}
	f := &Fetcher{spec: s, opt: opt, tags: map[string]string{}}
	if s.Tags != "" {
		r, err := semrange.Parse(s.Tags)
		if err != nil {
			return nil, remote.Errorf(s.ID, remote.CodeInvalid, "tags: %v", err)
		}
		f.rng = r
	}
	var cli *oci.Client
	var err error
	if pool != nil {
		cli, err = pool.client(s, opt)
	} else {
		cli, err = newClient(s, opt)
	}
	if err != nil {
		return nil, f.wrap("cannot make the registry client", err)
	}
	f.cli = cli
	if s.Verify != nil {
		if f.verifier, err = signing.NewVerifier(s.Verify); err != nil {
			return nil, remote.Errorf(s.ID, remote.CodeSignature, "%v", err)
		}
	}
	return f, nil
}

// Resolve is the digest of the manifest (or index) the source names now.
func (f *Fetcher) Resolve(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, f.opt.FetchTimeout)
	defer cancel()
	switch {
	case f.spec.Digest != "":
		return f.spec.Digest, nil
	case f.spec.Tag != "":
		return f.resolve(ctx, f.spec.Tag)
	}
	tags, err := f.cli.Tags(ctx, f.spec.OCI, f.opt.MaxTags)
	if err != nil {
		return "", f.wrapCtx(ctx, "cannot list the tags of "+f.spec.OCI+" (at most remote.oci.maxTags)", err)
	}
	tag, ok := f.rng.Highest(tags)
	if !ok {
		return "", remote.Errorf(f.spec.ID, remote.CodeRef, "no tag of %s is in the range %q (%d tags listed): push a version in the range, or change \"tags\"", f.spec.OCI, f.rng, len(tags))
	}
	d, err := f.resolve(ctx, tag)
	if err != nil {
		return "", err
	}
	f.mu.Lock()
	f.tags[d] = tag
	f.mu.Unlock()
	return d, nil
}

func (f *Fetcher) resolve(ctx context.Context, tag string) (string, error) {
	d, err := f.cli.Resolve(ctx, f.spec.OCI+":"+tag)
	if err != nil {
		return "", f.wrapCtx(ctx, fmt.Sprintf("cannot resolve the tag %q of %s", tag, f.spec.OCI), err)
	}
	return d.Digest, nil
}

// ResolvedTag is the tag Resolve found rev at, for a "tags" range.
func (f *Fetcher) ResolvedTag(rev string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tags[rev]
}

// Fetch writes the skill of the manifest rev (an index is followed one
// level, as oci.Client.Pull does) into dir/NAME.
func (f *Fetcher) Fetch(ctx context.Context, rev, dir string, lim remote.Limits) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, f.opt.FetchTimeout)
	defer cancel()
	cli := f.cli
	if lim.WithDefaults() != f.opt.Limits {
		o := f.opt
		o.Limits = lim.WithDefaults()
		c, err := newClient(f.spec, o)
		if err != nil {
			return nil, f.wrap("cannot make the registry client", err)
		}
		cli = c
	}
	// The signature first: an artifact not signed as the policy requires
	// is never downloaded.
	if err := f.verify(ctx, cli, rev); err != nil {
		return nil, err
	}
	p, err := cli.Pull(ctx, f.spec.OCI+"@"+rev)
	if err != nil {
		return nil, f.wrapCtx(ctx, "the artifact "+rev+" of "+f.spec.OCI, err)
	}
	// The skill's folder is named as the skill; a name that cannot be one
	// folder (ui-toolkit/web) or would be hidden gets "skill" (the name is
	// the frontmatter's either way).
	folder := p.Meta.Name
	if folder == "" || strings.ContainsAny(folder, `/\:`) || strings.HasPrefix(folder, ".") {
		folder = "skill"
	}
	if err := portable.ExportDir(filepath.Join(dir, folder), p.Bundle); err != nil {
		return nil, remote.Errorf(f.spec.ID, remote.CodeInvalid, "cannot write the skill %s: %v", p.Meta.Name, err)
	}
	return nil, nil
}

// UnpackLimits are the bounds of one artifact: package oci's defaults for
// a skill, lowered to the remote limits where those are smaller (the
// layers' compressed bytes, as their descriptors give them, are at most
// the total).
func UnpackLimits(lim remote.Limits) oci.Limits {
	l := oci.DefaultLimits
	lim = lim.WithDefaults()
	l.MaxFileBytes = min(l.MaxFileBytes, lim.MaxFileBytes)
	l.MaxTotalBytes = min(l.MaxTotalBytes, lim.MaxBytes)
	l.MaxFiles = min(l.MaxFiles, lim.MaxFiles)
	l.MaxLayerBytes = min(l.MaxLayerBytes, lim.MaxBytes)
	return l
}

// wrapCtx is wrap, saying so when the fetch's time ran out.
func (f *Fetcher) wrapCtx(ctx context.Context, what string, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return &remote.Error{Source: f.spec.ID, Code: remote.CodeNetwork, Err: err,
			Msg: remote.Redact(fmt.Sprintf("%s: no answer within the fetch timeout of %s (remote.oci.fetchTimeout): %v", what, f.opt.FetchTimeout, err))}
	}
	if strings.Contains(err.Error(), "timeout awaiting response headers") {
		return &remote.Error{Source: f.spec.ID, Code: remote.CodeNetwork, Err: err,
			Msg: remote.Redact(fmt.Sprintf("%s: the registry did not answer within %s (remote.oci.responseTimeout): %v", what, f.opt.ResponseTimeout, err))}
	}
	return f.wrap(what, err)
}

// wrap maps package oci's refusals to the remote codes.
func (f *Fetcher) wrap(what string, err error) error {
	var re *remote.Error
	if errors.As(err, &re) {
		return err
	}
	code := remote.CodeNetwork
	switch oci.CodeOf(err) {
	case oci.CodeTooLarge, oci.CodeTooMany:
		code = remote.CodeLimit
	case oci.CodeDigest:
		code = remote.CodeDigest
	case oci.CodePath, oci.CodeLink, oci.CodeSpecial, oci.CodeDuplicate:
		code = remote.CodePath
	case oci.CodeBadReference, oci.CodeBadManifest, oci.CodeIndex, oci.CodeLayout, oci.CodeCorrupt, oci.CodeNoSkill, oci.CodeBadSkill:
		code = remote.CodeInvalid
	case oci.CodePlainHTTP:
		return &remote.Error{Source: f.spec.ID, Code: remote.CodeInvalid, Err: err,
			Msg: remote.Redact(fmt.Sprintf("%s: the registry of %s answers in plain HTTP, which is refused: set \"insecure\": true on the source to allow it (%v)", what, f.spec.OCI, err))}
	case oci.CodeRegistry:
		code = registryCode(err)
	}
	return &remote.Error{Source: f.spec.ID, Code: code, Msg: remote.Redact(what + ": " + err.Error()), Err: err}
}

// registryCode is the remote code of a registry's error: remote-auth when
// it refused the credentials, remote-ref when the tag or manifest is not
// there, else remote-network.
func registryCode(err error) string {
	msg := strings.ToLower(err.Error())
	switch {
	case strings.Contains(msg, "401") || strings.Contains(msg, "403") || strings.Contains(msg, "unauthorized") || strings.Contains(msg, "denied") || strings.Contains(msg, "credential not found"):
		return remote.CodeAuth
	case strings.Contains(msg, "not found") || strings.Contains(msg, "404") || strings.Contains(msg, "manifest unknown") || strings.Contains(msg, "name unknown"):
		return remote.CodeRef
	}
	return remote.CodeNetwork
}
