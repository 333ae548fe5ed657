package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/loadout/loadout/oci"
	"github.com/loadout/loadout/portable"
	"github.com/loadout/loadout/skill"
)

func init() {
	commands["push"] = command{"push a stored skill (NAME[@VERSION]) or a skill folder to an OCI registry", runPush}
	commands["pull"] = command{"pull a skill from an OCI registry into a new folder", runPull}
}

// newSigner makes the signer of push --sign KEY. The signing part of
// loadout sets it (cosign's key format); while it is nil, --sign is
// refused.
var newSigner func(ctx context.Context, e *env, key string) (oci.Signer, error)

// registryFlags are the flags of every command that talks to a registry.
type registryFlags struct {
	insecure     bool
	username     string
	passwordEnv  string
	dockerConfig string
	caFile       string
	timeout      time.Duration
}

func (r *registryFlags) register(fs *flag.FlagSet) {
	fs.BoolVar(&r.insecure, "insecure", false, "speak plain HTTP to the registry (a registry on loopback in tests; never over a network you do not trust)")
	fs.StringVar(&r.username, "username", "", "registry user `name` (with --password-env); default: the docker config's credentials and helpers")
	fs.StringVar(&r.passwordEnv, "password-env", "", "the environment `variable` holding the registry password or token")
	fs.StringVar(&r.dockerConfig, "docker-config", "", "docker config.json `file` for credentials (default: $DOCKER_CONFIG/config.json, else ~/.docker/config.json)")
	fs.StringVar(&r.caFile, "ca-file", "", "PEM `file` of certificates to trust for the registry, beside the system's")
	fs.DurationVar(&r.timeout, "timeout", 2*time.Minute, "bound on each request to the registry, body included")
}

func (r *registryFlags) client(e *env) (*oci.Client, error) {
	o := oci.Options{Insecure: r.insecure, DockerConfig: r.dockerConfig, CAFile: r.caFile, Timeout: r.timeout}
	if r.passwordEnv != "" && r.username == "" {
		return nil, errors.New("--password-env needs --username")
	}
	if r.username != "" {
		if r.passwordEnv == "" {
			return nil, errors.New("--username needs --password-env NAME (the environment variable holding the password): a password is never given on the command line")
		}
		pw := e.getenv(r.passwordEnv)
		if pw == "" {
			return nil, fmt.Errorf("--password-env %s: the variable is empty or unset", r.passwordEnv)
		}
		o.Username, o.Password = r.username, pw
	}
	return oci.NewClient(o)
}

// ociFail prints a registry or layout error with its code and returns 1.
func ociFail(e *env, err error) int {
	msg := err.Error()
	if code := oci.CodeOf(err); code != "" {
		msg += " [" + code + "]"
	}
	fmt.Fprintf(e.stderr, "loadout: %s\n", termText(msg))
	return 1
}

func runPush(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	var rf registryFlags
	var source, sign string
	fs := newFlags(e, "push", "[--db D] [--config F] SKILL REF [--insecure] [--username U --password-env VAR] [--sign KEY]",
		"Pushes a skill to an OCI registry as an Agent Skills artifact (docs/oci.md). SKILL is a\n"+
			"stored skill's NAME (its current version) or NAME@VERSION, a skill of the configured\n"+
			"sources, or a skill folder (a path with a slash, or an existing folder). REF is\n"+
			"registry/repository[:tag]; without a tag the skill's frontmatter version is the tag.\n"+
			"The layer is reproducible: the same skill gives the same digest. Prints REF@DIGEST\n"+
			"on stdout.")
	sf.register(fs)
	rf.register(fs)
	fs.StringVar(&source, "source", "", "the skill's source repository `URL`, written as org.opencontainers.image.source")
	fs.StringVar(&sign, "sign", "", "sign the pushed manifest with this cosign `key` file")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if err := wantArgs(fs, 2); err != nil {
		return fail(e, err)
	}
	what, ref := fs.Arg(0), fs.Arg(1)
	if _, err := oci.ParseRef(ref); err != nil {
		return fail(e, err)
	}
	c, err := rf.client(e)
	if err != nil {
		return fail(e, err)
	}
	var opts oci.PushOptions
	if sign != "" {
		if newSigner == nil {
			return fail(e, errors.New("--sign: this loadout has no signer built in"))
		}
		if opts.Signer, err = newSigner(ctx, e, sign); err != nil {
			return fail(e, err)
		}
	}
	meta := oci.Meta{Source: source}
	var a *oci.Artifact
	if isFolderArg(what) {
		meta.Created = sourceDate(e, time.Now())
		a, err = oci.PackDir(what, meta)
	} else {
		name, version := what, 0
		if n, v, ok := strings.Cut(what, "@"); ok {
			if version, err = strconv.Atoi(v); err != nil || version <= 0 {
				return fail(e, fmt.Errorf("push: %q: the version after @ is a stored version number (loadout versions %s lists them)", what, n))
			}
			name = n
		}
		var b *skill.Bundle
		var created time.Time
		b, created, err = pushBundle(ctx, e, &sf, name, version)
		if err != nil {
			return ociFail(e, err)
		}
		meta.Created = sourceDate(e, created)
		a, err = oci.Pack(b, meta)
	}
	if err != nil {
		return ociFail(e, err)
	}
	p, err := c.Push(ctx, ref, a, opts)
	if err != nil {
		return ociFail(e, err)
	}
	fmt.Fprintf(e.stderr, "pushed %s to %s (layer %s, %d bytes)\n", nameVersion(a.Meta.Name, a.Meta.Version), p.Ref, p.Layer.Digest, p.Layer.Size)
	fmt.Fprintln(e.stdout, p.Ref.String())
	return 0
}

// isFolderArg says whether push's first argument is a folder: a path
// with a slash, ".", or an existing folder (a stored skill's name has no
// slash).
func isFolderArg(s string) bool {
	if strings.ContainsAny(s, `/\`) || s == "." || s == ".." {
		return true
	}
	fi, err := os.Stat(s)
	return err == nil && fi.IsDir()
}

// sourceDate is $SOURCE_DATE_EPOCH when set (reproducible builds'
// convention), else t.
func sourceDate(e *env, t time.Time) time.Time {
	if s := e.getenv("SOURCE_DATE_EPOCH"); s != "" {
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return time.Unix(n, 0).UTC()
		}
	}
	return t
}

// pushBundle is export's lookup (the store, else the configured sources)
// with the time the version was written, for the created annotation: a
// stored version pushes to the same manifest every time.
func pushBundle(ctx context.Context, e *env, sf *storeFlags, name string, version int) (*skill.Bundle, time.Time, error) {
	b, origin, err := exportBundle(ctx, e, sf, name, version)
	if err != nil {
		return nil, time.Time{}, err
	}
	created := time.Now()
	if origin != nil && origin.Kind == "store" {
		f, dsn, _, err := sf.resolve(e)
		if err == nil {
			if st, err := openStore(ctx, dsn, f, readOnly); err == nil {
				if vs, err := st.Versions(ctx, name); err == nil {
					for _, v := range vs {
						if v.Version == origin.Version {
							created = v.CreatedAt
						}
					}
				}
				st.Close()
			}
		}
	}
	return b, created, nil
}

func runPull(ctx context.Context, e *env, args []string) int {
	var rf registryFlags
	fs := newFlags(e, "pull", "REF DIR [--insecure] [--username U --password-env VAR]",
		"Pulls the skill REF names (a tag or a digest; an index is followed to its one\n"+
			"platform-neutral or linux manifest) and writes it into DIR, a new or empty folder.\n"+
			"Reads the Agent Skills artifact, ACR's skill artifact and skill images (skillimage,\n"+
			"kagent), within the limits in docs/oci.md. Prints REF@DIGEST on stdout.")
	rf.register(fs)
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if err := wantArgs(fs, 2); err != nil {
		return fail(e, err)
	}
	ref, dir := fs.Arg(0), fs.Arg(1)
	if _, err := oci.ParseRef(ref); err != nil {
		return fail(e, err)
	}
	c, err := rf.client(e)
	if err != nil {
		return fail(e, err)
	}
	p, err := c.Pull(ctx, ref)
	if err != nil {
		return ociFail(e, err)
	}
	if err := portable.ExportDir(dir, p.Bundle); err != nil {
		return ociFail(e, err)
	}
	pinned := p.Ref
	pinned.Digest = p.Digest
	fmt.Fprintf(e.stderr, "pulled %s (%s layout, %s) into %s\n", nameVersion(p.Meta.Name, p.Meta.Version), p.Layout, countFiles(len(p.Bundle.Files)+1), dir)
	fmt.Fprintln(e.stdout, pinned.String())
	return 0
}

// nameVersion is "NAME VERSION", or NAME alone for a skill with no version.
func nameVersion(name, version string) string {
	if version == "" {
		return name
	}
	return name + " " + version
}

// countFiles is "1 file" or "N files".
func countFiles(n int) string {
	if n == 1 {
		return "1 file"
	}
	return fmt.Sprintf("%d files", n)
}
