package service

import (
	"context"
	"fmt"
	"time"

	"github.com/loadout/loadout/skill"
	"github.com/loadout/loadout/store"
)

// Codes of PublishVersion.
const (
	// CodeNotConfigured: the server has no registry to push to (no
	// "publish" in the config). 409, like no_store.
	CodeNotConfigured = "not_configured"
	// CodeUpstream: the registry refused or could not be reached. 502.
	CodeUpstream = "upstream"
)

// Publisher pushes a stored skill's version to an OCI registry. cmd wires
// in one over package oci (docs/oci.md); the service never imports it.
type Publisher interface {
	// Target is where pushes go, for people: "registry.example.com/team/skills".
	Target() string
	// Publish pushes b, version version of the stored skill name written
	// at created, and returns the reference it wrote, with its digest
	// (REGISTRY/NAME:TAG@sha256:...).
	Publish(ctx context.Context, name string, version int, b *skill.Bundle, created time.Time) (string, error)
}

// PublishTarget is where PublishVersion pushes, "" when the server has
// no publisher.
func (s *Service) PublishTarget() string {
	if s.opt.Publisher == nil {
		return ""
	}
	return s.opt.Publisher.Target()
}

// PublishVersion pushes a stored skill's version (0: the current one) to
// the configured registry. It needs the author role for the skill (admin
// holds it). A push that succeeds is audited (skill.push, naming the
// version and the reference with its digest); nothing is written to the
// store.
func (s *Service) PublishVersion(ctx context.Context, p Principal, name string, version int) (string, error) {
	if err := s.RequireRole(ctx, p, RoleAuthor, name); err != nil {
		return "", err
	}
	if s.opt.Publisher == nil {
		return "", errorf(CodeNotConfigured, "this server has no registry to push to: set \"publish\": {\"registry\": \"registry.example.com/team/skills\"} in the config (docs/oci.md)")
	}
	if s.opt.Store == nil {
		return "", errorf(CodeNotFound, "no stored skill %q (this server has no store)", name)
	}
	b, rec, err := s.opt.Store.Bundle(ctx, name, version)
	if err != nil {
		return "", AsError(err)
	}
	if version == 0 {
		version = rec.Version
	}
	created := rec.UpdatedAt
	if vs, err := s.opt.Store.Versions(ctx, name); err == nil {
		for _, v := range vs {
			if v.Version == version {
				created = v.CreatedAt
			}
		}
	}
	ref, err := s.opt.Publisher.Publish(ctx, name, version, b, created)
	if err != nil {
		return "", &Error{Code: CodeUpstream, Message: fmt.Sprintf("pushing %s version %d to %s: %v", name, version, s.opt.Publisher.Target(), err)}
	}
	s.audit(ctx, p, store.AuditRecord{Action: "skill.push", Target: skillTarget(name), Detail: fmt.Sprintf("version %d to %s", version, ref)})
	return ref, nil
}
