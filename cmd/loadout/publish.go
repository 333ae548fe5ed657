package main

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/oci"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/skill"
)

// ociPublisher is the service's Publisher over package oci: the web UI's
// "Push to registry" (config "publish", docs/oci.md).
type ociPublisher struct {
	target string
	client *oci.Client
}

func (p *ociPublisher) Target() string { return p.target }

// tagRE is the distribution spec's tag grammar.
var tagRE = regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}$`)

// Publish pushes b to TARGET/NAME:TAG, TAG the frontmatter's version when
// it is a valid tag, else "v" and the stored version number.
func (p *ociPublisher) Publish(ctx context.Context, name string, version int, b *skill.Bundle, created time.Time) (string, error) {
	a, err := oci.Pack(b, oci.Meta{Created: created})
	if err != nil {
		return "", err
	}
	tag := a.Meta.Version
	if !tagRE.MatchString(tag) {
		tag = "v" + strconv.Itoa(version)
	}
	pushed, err := p.client.Push(ctx, p.target+"/"+name+":"+tag, a, oci.PushOptions{})
	if err != nil {
		return "", err
	}
	return pushed.Ref.String(), nil
}

// publisherOf makes the publisher of the config's "publish" object (nil
// without a registry). The password is read from the environment now.
func publisherOf(cfg *config.File) (service.Publisher, error) {
	if cfg == nil || cfg.Publish.Registry == "" {
		return nil, nil
	}
	pc := cfg.Publish
	o := oci.Options{Insecure: pc.Insecure, CAFile: pc.CAFile, Timeout: time.Duration(pc.Timeout)}
	if pc.Username != "" {
		o.Username, o.Password = pc.Username, expandBraced(pc.Password)
		if o.Password == "" {
			return nil, fmt.Errorf("%s: publish.password: the variable %s is empty or unset", cfg.Path, strings.Trim(pc.Password, "${}"))
		}
	}
	c, err := oci.NewClient(o)
	if err != nil {
		return nil, fmt.Errorf("%s: publish: %w", cfg.Path, err)
	}
	return &ociPublisher{target: pc.Registry, client: c}, nil
}
