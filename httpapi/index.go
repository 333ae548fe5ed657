package httpapi

import "net/http"

// The paths the server mounts beside the API (cmd/loadout serve), linked
// from the index so that a first GET / shows where everything is.
const (
	linkMCP        = "/mcp"
	linkAgentMCP   = "/agents/{id}/mcp"
	linkWellKnown  = "/.well-known/agent-skills/index.json"
	linkWellKnown1 = "/.well-known/skills/index.json"
)

type indexEndpoint struct {
	Name    string `json:"name"`
	Method  string `json:"method"`
	Path    string `json:"path"`
	Summary string `json:"summary"`
	// Auth: none, token (any valid token), agent (admin or agent:ID),
	// metrics (a metrics token only), or the least role: viewer, author,
	// reviewer or admin.
	Auth string `json:"auth"`
}

type indexLinks struct {
	OpenAPI        string `json:"openapi"`
	Health         string `json:"health"`
	Agents         string `json:"agents"`
	MCP            string `json:"mcp"`
	AgentMCP       string `json:"agentMcp"`
	WellKnown      string `json:"wellKnown"`
	WellKnownOlder string `json:"wellKnownV1"`
}

type indexBody struct {
	Name      string          `json:"name"`
	About     string          `json:"about"`
	Auth      string          `json:"auth"`
	Links     indexLinks      `json:"links"`
	Endpoints []indexEndpoint `json:"endpoints"`
}

// indexDoc is the body of GET /: every route of the table (so it cannot
// drift from the mux) and links to what is mounted beside the API. It
// stands in for a web UI until there is one.
func indexDoc() indexBody {
	eps := make([]indexEndpoint, 0, len(routes))
	for _, rt := range routes {
		auth := rt.op.Scope
		if auth == "any" {
			auth = "token"
		}
		eps = append(eps, indexEndpoint{Name: rt.op.ID, Method: rt.Method, Path: openAPIPath(rt.Pattern), Summary: rt.op.Summary, Auth: auth})
	}
	return indexBody{
		Name:  "loadout",
		About: "Agent Skills over HTTP and MCP. This index lists the REST endpoints; /v1/openapi.json describes them in full.",
		Auth: "send Authorization: Bearer TOKEN (create one with 'loadout token create --scope admin' or --scope agent:ID); " +
			"a loopback server started without tokens needs none",
		Links: indexLinks{OpenAPI: "/v1/openapi.json", Health: "/healthz", Agents: "/v1/agents", MCP: linkMCP, AgentMCP: linkAgentMCP,
			WellKnown: linkWellKnown, WellKnownOlder: linkWellKnown1},
		Endpoints: eps,
	}
}

func (a *api) index(w http.ResponseWriter, r *http.Request) {
	writeRaw(w, http.StatusOK, ctJSON, a.indexBody)
}
