package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/loadout/loadout/config"
	"github.com/loadout/loadout/service"
	"github.com/loadout/loadout/store"
	"github.com/loadout/loadout/wellknown"
)

func init() {
	commands["token"] = command{"create, list and revoke the server's bearer tokens", runToken}
}

// serverStore is the store's server side (tokens, receipts), or an error
// saying the store has none.
func serverStore(st store.Store) (store.Server, error) {
	srv, ok := st.(store.Server)
	if !ok {
		return nil, fmt.Errorf("this store (%T) keeps no tokens or receipts: use a SQLite or PostgreSQL store", st)
	}
	return srv, nil
}

func runToken(ctx context.Context, e *env, args []string) int {
	usage := func() int {
		fmt.Fprint(e.stderr, `Usage: loadout token create|list|revoke [flags]

  loadout token create --role viewer|author|reviewer|admin [--skills GLOB | --tag TAG] [--name N] [--db D]
  loadout token create --scope SCOPE [--scope ...] [--name N] [--db D]
  loadout token create --link AGENT [--url BASE] [--name N] [--db D]
  loadout token list [--json] [--db D]
  loadout token revoke [--db D] ID

Bearer tokens for 'loadout serve'. A token carries a role: viewer (reads
skills, versions, diagnostics, sources, receipts), author (also writes
skills, imports, restores), reviewer (also reviews), admin (everything:
tokens, reload, sync). Each role holds the ones below it. --skills GLOB
(author:team-data-*) or --tag TAG (author:tag=data) limits the role to those
skills; a limited role cannot use routes that list every skill. A scope
"agent:ID" reads that agent's skills (MCP). A link token (--link AGENT, the
scope "index:AGENT") is a read-only URL to one agent's well-known index for
installers that cannot send a header (npx skills add BASE/i/TOKEN); it
works in that URL only. A metrics token (--scope metrics, its only scope) is
Prometheus's: it reads GET /metrics and nothing else, and /metrics refuses
every other token, admin included. Only a hash of the secret is stored: it is printed
once, by create. Revoke any token to end it.
`)
		return 2
	}
	if len(args) == 0 {
		return usage()
	}
	switch args[0] {
	case "create":
		return runTokenCreate(ctx, e, args[1:])
	case "list":
		return runTokenList(ctx, e, args[1:])
	case "revoke":
		return runTokenRevoke(ctx, e, args[1:])
	case "-h", "--help", "help":
		usage()
		return 0
	}
	fmt.Fprintf(e.stderr, "loadout token: unknown subcommand %q\n\n", args[0])
	return usage()
}

// serverRun is storeFlags.run for commands that need the store's server
// side.
func serverRun(ctx context.Context, e *env, sf *storeFlags, fs *flag.FlagSet, args []string, nargs int, mode openMode, fn func(store.Server) int) int {
	return sf.run(ctx, e, fs, args, nargs, mode, func(st store.Store) int {
		srv, err := serverStore(st)
		if err != nil {
			return fail(e, err)
		}
		return fn(srv)
	})
}

func runTokenCreate(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	var scopes, globs, tags listFlag
	var name, link, base, role string
	fs := newFlags(e, "token create", "--role ROLE [--skills GLOB | --tag TAG] | --scope SCOPE [--scope ...] | --link AGENT [--url BASE] [--name N] [--db D]",
		"Creates a bearer token and prints its secret on stdout, once: only its hash is kept. With --link, creates a\nread-only link to one agent's well-known index and prints the link (BASE/i/TOKEN, or /i/TOKEN without --url).")
	sf.register(fs)
	fs.Var(&scopes, "scope", "`scope`: a role (admin, viewer, author, reviewer), ROLE:GLOB, ROLE:tag=TAG, agent:ID, index:ID or metrics (repeatable; index:ID and metrics alone)")
	fs.StringVar(&role, "role", "", "the token's `role`: viewer, author, reviewer or admin")
	fs.Var(&globs, "skills", "with --role: limit the role to skills whose name matches `GLOB` (team-data-*; repeatable)")
	fs.Var(&tags, "tag", "with --role: limit the role to skills tagged `TAG` (repeatable)")
	fs.StringVar(&name, "name", "", "a `name` to recognise the token by")
	fs.StringVar(&link, "link", "", "make a link token for `AGENT`'s index (the same as --scope index:AGENT)")
	fs.StringVar(&base, "url", "", "with a link token: the server's `BASE` URL (http://HOST:PORT), to print the whole link and install command")
	return serverRun(ctx, e, &sf, fs, args, 0, mayCreate, func(srv store.Server) int {
		if link != "" {
			if len(scopes) > 0 {
				return fail(e, fmt.Errorf("token create: give --link AGENT or --scope, not both: a link token has only its index scope"))
			}
			scopes = listFlag{service.ScopeIndexPrefix + link}
		}
		if role == "" && (len(globs) > 0 || len(tags) > 0) {
			return fail(e, fmt.Errorf("token create: --skills and --tag limit a role: give --role viewer|author|reviewer|admin too"))
		}
		if role != "" {
			if link != "" {
				return fail(e, fmt.Errorf("token create: give --link AGENT or --role, not both: a link token has only its index scope"))
			}
			rs, err := service.RoleScopes(role, globs, tags)
			if err != nil {
				return fail(e, fmt.Errorf("token create: %s", service.AsError(err).Message))
			}
			scopes = append(scopes, rs...)
		}
		if len(scopes) == 0 {
			return fail(e, fmt.Errorf("token create: give --role viewer|author|reviewer|admin, or at least one --scope (agent:ID), or --link AGENT"))
		}
		agent, isLink := service.LinkAgent(scopes)
		if base != "" && !isLink {
			return fail(e, fmt.Errorf("token create: --url is for link tokens (--link AGENT)"))
		}
		base = strings.TrimRight(base, "/")
		if base != "" && !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
			return fail(e, fmt.Errorf("token create: --url %q: give the server's base URL, http://HOST:PORT or https://HOST", base))
		}
		secret, tok, err := srv.CreateToken(ctx, name, scopes)
		if err != nil {
			if store.ErrorCode(err) == store.Invalid {
				return fail(e, err)
			}
			fmt.Fprintf(e.stderr, "loadout: %v\n", err)
			return 1
		}
		_, done := cliAudited(ctx, srv, store.AuditRecord{Action: "token.create", Target: "token:" + tok.ID, Detail: "name " + tok.Name + ", scopes " + strings.Join(tok.Scopes, " ")})
		done(nil)
		if isLink {
			url := base + wellknown.LinkPrefix + secret
			fmt.Fprintln(e.stdout, url)
			fmt.Fprintf(e.stderr, "created link token %s (%s) for agent %s's index. The link above cannot be shown again: keep it now; 'loadout token revoke %s' ends it.\n",
				tok.ID, orDash(tok.Name), agent, tok.ID)
			if base != "" {
				fmt.Fprintf(e.stderr, "install with: npx skills add %s\n", url)
			} else {
				fmt.Fprintf(e.stderr, "install with: npx skills add http://HOST:PORT%s (the server's address; --url prints it whole)\n", url)
			}
			return 0
		}
		fmt.Fprintln(e.stdout, secret)
		fmt.Fprintf(e.stderr, "created token %s (%s) with scopes %s. The secret above cannot be shown again: keep it now.\n",
			tok.ID, orDash(tok.Name), strings.Join(tok.Scopes, ", "))
		return 0
	})
}

func runTokenList(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	var asJSON bool
	fs := newFlags(e, "token list", "[--json] [--db D]", "Lists the tokens that are not revoked, newest first (never their secrets).")
	sf.register(fs)
	fs.BoolVar(&asJSON, "json", false, "print JSON")
	return serverRun(ctx, e, &sf, fs, args, 0, readOnly, func(srv store.Server) int {
		toks, err := srv.Tokens(ctx)
		if err != nil {
			fmt.Fprintf(e.stderr, "loadout: %v\n", err)
			return 1
		}
		if asJSON {
			type listed struct {
				store.Token
				// Role is the highest role the token holds ("" for an
				// agent or link token); Limits says over which skills.
				Role   string `json:"role"`
				Limits string `json:"limits,omitempty"`
			}
			out := make([]listed, len(toks))
			for i, t := range toks {
				out[i] = listed{Token: t, Role: tokenPrincipal(t).Role()}
				if out[i].Role != "" {
					out[i].Limits = tokenPrincipal(t).Limits()
				}
			}
			writeJSON(e.stdout, map[string]any{"tokens": out})
			return 0
		}
		tw := tabwriter.NewWriter(e.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tNAME\tROLE\tSCOPES\tCREATED\tLAST USED")
		for _, t := range toks {
			last := "never"
			if t.LastUsed != nil {
				last = t.LastUsed.UTC().Format(time.RFC3339)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, termText(orDash(t.Name)), orDash(tokenPrincipal(t).Role()), termText(strings.Join(t.Scopes, ",")), t.CreatedAt.UTC().Format(time.RFC3339), last)
		}
		tw.Flush()
		return 0
	})
}

// tokenPrincipal is the principal a token authenticates as, to describe
// its role.
func tokenPrincipal(t store.Token) service.Principal {
	return service.Principal{TokenID: t.ID, Name: t.Name, Scopes: t.Scopes}
}

func runTokenRevoke(ctx context.Context, e *env, args []string) int {
	var sf storeFlags
	fs := newFlags(e, "token revoke", "[--db D] ID", "Revokes a token (by the ID 'loadout token list' shows): its secret stops working at once.")
	sf.register(fs)
	return serverRun(ctx, e, &sf, fs, args, 1, readOnly, func(srv store.Server) int {
		actx, done := cliAudited(ctx, srv, store.AuditRecord{Action: "token.revoke", Target: "token:" + fs.Arg(0)})
		err := srv.RevokeToken(actx, fs.Arg(0))
		done(err)
		if err != nil {
			fmt.Fprintf(e.stderr, "loadout: %v\n", err)
			return 1
		}
		fmt.Fprintf(e.stdout, "revoked token %s\n", fs.Arg(0))
		return 0
	})
}

// tokenCreateHint is the command that creates a token in the store dsn,
// the one a server uses, named with --db: without it, 'loadout token
// create' run in another folder, or without the server's --config or
// --db, would make the token in another store, one the server never
// reads. A PostgreSQL URL's password is left out.
func tokenCreateHint(dsn, scope string) string {
	db := redact(dsn)
	if !config.IsPostgres(dsn) {
		db = termPath(dsn)
	}
	if strings.ContainsAny(db, " \t'\"$`\\;&|<>()*?[]#~!{}") {
		db = "'" + strings.ReplaceAll(db, "'", `'\''`) + "'"
	}
	return "loadout token create " + scope + " --db " + db
}
