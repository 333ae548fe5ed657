package oci

// Media types of the layouts loadout reads, and the one it writes
// (LayoutAgentSkills).
const (
	// The Agent Skills OCI artifact proposal (what loadout writes).
	ArtifactTypeSkill     = "application/vnd.agentskills.skill.v1"
	MediaTypeSkillConfig  = "application/vnd.agentskills.skill.config.v1+json"
	MediaTypeSkillContent = "application/vnd.agentskills.skill.content.v1.tar+gzip"

	// Alibaba Cloud ACR's skill artifacts (config is the empty descriptor).
	ArtifactTypeACRSkill     = "application/vnd.agent.skill.v1+json"
	MediaTypeACRSkillContent = "application/vnd.agent.skill.content.v1.tar+gzip"

	// Red Hat skillimage's "redhat" media type profile (its "standard"
	// profile is a plain OCI image).
	MediaTypeRedHatSkillLayer  = "application/vnd.redhat.agentskill.layer.v1.tar+gzip"
	MediaTypeRedHatSkillConfig = "application/vnd.redhat.agentskill.config.v1+json"

	// OCI image-spec.
	MediaTypeImageManifest  = "application/vnd.oci.image.manifest.v1+json"
	MediaTypeImageIndex     = "application/vnd.oci.image.index.v1+json"
	MediaTypeImageConfig    = "application/vnd.oci.image.config.v1+json"
	MediaTypeImageLayer     = "application/vnd.oci.image.layer.v1.tar"
	MediaTypeImageLayerGzip = "application/vnd.oci.image.layer.v1.tar+gzip"
	MediaTypeEmptyJSON      = "application/vnd.oci.empty.v1+json"

	// Docker's image formats (registries still serve them; kagent's skill
	// images are often built by docker).
	MediaTypeDockerManifest     = "application/vnd.docker.distribution.manifest.v2+json"
	MediaTypeDockerManifestList = "application/vnd.docker.distribution.manifest.list.v2+json"
	MediaTypeDockerConfig       = "application/vnd.docker.container.image.v1+json"
	MediaTypeDockerLayerGzip    = "application/vnd.docker.image.rootfs.diff.tar.gzip"
)

// Annotation keys.
const (
	// OCI image-spec's pre-defined annotations, written by Pack.
	AnnotationTitle       = "org.opencontainers.image.title"
	AnnotationVersion     = "org.opencontainers.image.version"
	AnnotationDescription = "org.opencontainers.image.description"
	AnnotationLicenses    = "org.opencontainers.image.licenses"
	AnnotationCreated     = "org.opencontainers.image.created"
	AnnotationSource      = "org.opencontainers.image.source"
	AnnotationRevision    = "org.opencontainers.image.revision"

	// The Agent Skills proposal's own annotation, written by Pack.
	AnnotationSkillName = "io.agentskills.skill.name"

	// ACR's annotations (read).
	AnnotationACRName        = "org.agent.skill.name"
	AnnotationACRVersion     = "org.agent.skill.version"
	AnnotationACRDescription = "org.agent.skill.description"
	AnnotationACRLicense     = "org.agent.skill.license"

	// skillimage's lifecycle annotation (read): draft, testing, published,
	// deprecated, archived.
	AnnotationSkillimageStatus = "io.skillimage.status"
)

// Layout names the way a manifest lays a skill out.
type Layout string

// The layouts Unpack accepts; Pack writes LayoutAgentSkills.
const (
	LayoutAgentSkills Layout = "agentskills" // the Agent Skills OCI artifact proposal
	LayoutACR         Layout = "acr"         // Alibaba Cloud ACR's skill artifact
	LayoutSkillimage  Layout = "skillimage"  // Red Hat skillimage (an OCI image, either media type profile)
	LayoutImage       Layout = "image"       // any OCI or Docker image whose layers hold a skill folder (kagent)
)
