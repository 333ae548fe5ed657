// Package oci puts skills in OCI registries and takes them out. It is the
// one package of loadout that imports oras.land/oras-go/v2 and the OCI
// image-spec types; everything else sees this package's own types.
//
// Writing: Pack turns a skill (a skill.Bundle, or a folder through
// PackDir) into an artifact in the Agent Skills OCI layout (the public
// proposal: artifactType application/vnd.agentskills.skill.v1, a config of
// application/vnd.agentskills.skill.config.v1+json and one
// application/vnd.agentskills.skill.content.v1.tar+gzip layer holding the
// skill's folder). The layer is reproducible: the same files give the same
// bytes (sorted entries, fixed times, owners and modes, a fixed gzip header).
// Client.Push sends it to a registry.
//
// Reading: Unpack reads a manifest and its layer(s) into a skill.Bundle,
// bounded (sizes from descriptors before anything is downloaded, a cap on
// the compressed and decompressed bytes, on files and on entries) and safe
// (every entry name through skill.CleanPath; links, devices, duplicates,
// whiteouts refused, naming the entry; digests verified while streaming).
// It accepts the layouts that are published: the Agent Skills proposal, Alibaba
// Cloud ACR's skill artifacts, Red Hat's skillimage images (both media type
// profiles) and plain OCI or Docker images whose layer holds a skill
// folder (kagent's skills). See docs/oci.md.
package oci
