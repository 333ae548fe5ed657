package httpapi

// Routes lists the (method, pattern) pairs New registers, for tests.
func Routes() [][2]string {
	out := make([][2]string, len(routes))
	for i, rt := range routes {
		out[i] = [2]string{rt.Method, rt.Pattern}
	}
	return out
}

// RouteSpec is what the access and content-type tests read of a route.
type RouteSpec struct {
	Method, Pattern, Scope string
	// PerSkill: the route's skills are in its body.
	PerSkill bool
	// BodyTypes are the media types the route's body takes ("*/*": any);
	// nil without a body.
	BodyTypes []string
}

// RouteSpecs lists every route of the table.
func RouteSpecs() []RouteSpec {
	out := make([]RouteSpec, len(routes))
	for i, rt := range routes {
		out[i] = RouteSpec{Method: rt.Method, Pattern: rt.Pattern, Scope: rt.op.Scope, PerSkill: rt.op.PerSkill}
		if rt.op.Body != nil {
			for t := range rt.op.Body.Content {
				out[i].BodyTypes = append(out[i].BodyTypes, t)
			}
		}
	}
	return out
}

// ListenerStats reports a LimitListener's open connections, client
// addresses and refusals.
func ListenerStats(ln *ConnLimiter) (open, clients int, refused int64) {
	open, clients, refused, _ = ln.Stats()
	return open, clients, refused
}

// The scope refusals' messages.
const (
	MsgNeedsAdmin   = msgNeedsAdmin
	MsgNotAgent     = msgNotAgent
	MsgNeedsMetrics = msgNeedsMetrics
)
