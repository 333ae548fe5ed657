// Command oidcop is the OpenID provider loadout's identity tests run
// against: zitadel/oidc's example provider (its op package, its example
// storage and its example login page), configured from a JSON file and
// extended with what loadout's tests need from a company's provider:
//
//   - clients from the file, issuing JWT access tokens;
//   - RFC 8707 resource indicators: the resource parameters of the
//     authorization request become the audience of the tokens issued for it
//     (with the client id, so an ID token's audience still names its client);
//   - a "groups" claim per user, which the test can change while the
//     provider runs (PUT /test/groups), as a directory would;
//   - POST /test/sign, which signs any claims with the provider's own key,
//     so tests can make the wrong-issuer, expired or wrong-audience tokens a
//     well-behaved provider never issues.
//
// It listens on -addr (a free loopback port by default) and prints
// "issuer URL" on its first line of standard output once it serves.
//
// This folder is its own Go module, so loadout's go.mod never gains the
// provider's dependencies; internal/oidctest builds and starts it.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// Config is the -config file.
type Config struct {
	Clients []ClientConfig `json:"clients"`
	Users   []UserConfig   `json:"users"`
}

// ClientConfig is one registered client. Without a secret it is a public
// client (token endpoint auth "none", PKCE).
type ClientConfig struct {
	ID           string   `json:"id"`
	Secret       string   `json:"secret,omitempty"`
	RedirectURIs []string `json:"redirectURIs"`
	// Scopes are the scopes beyond OpenID's own that the client may ask for.
	Scopes []string `json:"scopes,omitempty"`
}

// UserConfig is one user who can sign in on the login page.
type UserConfig struct {
	ID       string   `json:"id"`
	Username string   `json:"username"`
	Password string   `json:"password"`
	Email    string   `json:"email"`
	Groups   []string `json:"groups,omitempty"`
}

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	cfgPath := flag.String("config", "", "JSON config file (clients and users)")
	flag.Parse()
	if err := run(*addr, *cfgPath); err != nil {
		fmt.Fprintln(os.Stderr, "oidcop:", err)
		os.Exit(1)
	}
}

func run(addr, cfgPath string) error {
	var cfg Config
	if cfgPath != "" {
		b, err := os.ReadFile(cfgPath)
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &cfg); err != nil {
			return fmt.Errorf("%s: %w", cfgPath, err)
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	issuer := fmt.Sprintf("http://%s/", ln.Addr().String())

	users := &userStore{byID: map[string]*storage.User{}, groups: map[string][]string{}}
	for _, u := range cfg.Users {
		users.byID[u.ID] = &storage.User{ID: u.ID, Username: u.Username, Password: u.Password, Email: u.Email, EmailVerified: true, FirstName: u.Username}
		users.groups[u.ID] = u.Groups
	}
	clients := map[string]*clientConf{}
	for _, c := range cfg.Clients {
		var base *storage.Client
		if c.Secret == "" {
			base = storage.NativeClient(c.ID, c.RedirectURIs...)
		} else {
			base = storage.WebClient(c.ID, c.Secret, c.RedirectURIs...)
		}
		storage.RegisterClients(base)
		scopes := map[string]bool{}
		for _, s := range c.Scopes {
			scopes[s] = true
		}
		clients[c.ID] = &clientConf{public: c.Secret == "", scopes: scopes}
	}
	st := &store{Storage: storage.NewStorage(users), users: users, clients: clients, resources: map[string][]string{}}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	router := exampleop.SetupServer(issuer, st, logger, false)

	mux := http.NewServeMux()
	mux.HandleFunc("PUT /test/groups", users.putGroups)
	mux.HandleFunc("POST /test/sign", st.sign)
	mux.Handle("/", withResource(router))
	fmt.Printf("issuer %s\n", issuer)
	os.Stdout.Sync()
	return http.Serve(ln, mux)
}

// --- users, with groups the test can change ---

type userStore struct {
	mu     sync.Mutex
	byID   map[string]*storage.User
	groups map[string][]string
}

func (u *userStore) GetUserByID(id string) *storage.User { return u.byID[id] }

func (u *userStore) GetUserByUsername(name string) *storage.User {
	for _, x := range u.byID {
		if x.Username == name {
			return x
		}
	}
	return nil
}

func (u *userStore) ExampleClientID() string { return "service" }

func (u *userStore) groupsOf(id string) []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.groups[id]...)
}

func (u *userStore) putGroups(w http.ResponseWriter, r *http.Request) {
	var body struct {
		User   string   `json:"user"`
		Groups []string `json:"groups"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<20)).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if _, ok := u.byID[body.User]; !ok {
		http.Error(w, "no such user", http.StatusNotFound)
		return
	}
	u.groups[body.User] = body.Groups
	w.WriteHeader(http.StatusNoContent)
}

// --- RFC 8707 resource indicators ---

type resourceKey struct{}

// withResource passes the resource parameters of an authorization request
// to the storage through the request's context, where CreateAuthRequest
// reads them (the op package does not parse them itself).
func withResource(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/auth" || r.URL.Path == "/authorize" {
			if err := r.ParseForm(); err == nil && len(r.Form["resource"]) > 0 {
				r = r.WithContext(context.WithValue(r.Context(), resourceKey{}, append([]string(nil), r.Form["resource"]...)))
			}
		}
		next.ServeHTTP(w, r)
	})
}

type clientConf struct {
	public bool
	scopes map[string]bool
}

type store struct {
	*storage.Storage
	users   *userStore
	clients map[string]*clientConf

	mu        sync.Mutex
	resources map[string][]string // auth request id -> resource indicators
}

func (s *store) CreateAuthRequest(ctx context.Context, req *oidc.AuthRequest, userID string) (op.AuthRequest, error) {
	ar, err := s.Storage.CreateAuthRequest(ctx, req, userID)
	if err != nil {
		return nil, err
	}
	if res, ok := ctx.Value(resourceKey{}).([]string); ok {
		s.mu.Lock()
		s.resources[ar.GetID()] = res
		s.mu.Unlock()
	}
	return s.wrap(ar), nil
}

func (s *store) AuthRequestByID(ctx context.Context, id string) (op.AuthRequest, error) {
	ar, err := s.Storage.AuthRequestByID(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.wrap(ar), nil
}

func (s *store) AuthRequestByCode(ctx context.Context, code string) (op.AuthRequest, error) {
	ar, err := s.Storage.AuthRequestByCode(ctx, code)
	if err != nil {
		return nil, err
	}
	return s.wrap(ar), nil
}

func (s *store) wrap(ar op.AuthRequest) op.AuthRequest {
	s.mu.Lock()
	res := s.resources[ar.GetID()]
	s.mu.Unlock()
	return &authRequest{AuthRequest: ar, resources: res}
}

// authRequest is an auth request whose tokens are for its resources and
// its client.
type authRequest struct {
	op.AuthRequest
	resources []string
}

func (a *authRequest) GetAudience() []string {
	return append(append([]string(nil), a.resources...), a.AuthRequest.GetClientID())
}

func unwrap(r op.TokenRequest) op.TokenRequest {
	if a, ok := r.(*authRequest); ok {
		return a.AuthRequest
	}
	return r
}

func (s *store) CreateAccessToken(ctx context.Context, r op.TokenRequest) (string, time.Time, error) {
	return s.Storage.CreateAccessToken(ctx, unwrap(r))
}

func (s *store) CreateAccessAndRefreshTokens(ctx context.Context, r op.TokenRequest, current string) (string, string, time.Time, error) {
	return s.Storage.CreateAccessAndRefreshTokens(ctx, unwrap(r), current)
}

// --- clients: JWT access tokens, claims in the ID token ---

func (s *store) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	conf := s.clients[id]
	if conf == nil {
		return c, nil
	}
	return &client{Client: c, conf: conf}, nil
}

type client struct {
	op.Client
	conf *clientConf
}

func (c *client) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeJWT }
func (c *client) IDTokenUserinfoClaimsAssertion() bool { return true }
func (c *client) DevMode() bool                        { return true }
func (c *client) IsScopeAllowed(scope string) bool     { return c.conf.scopes[scope] }

// --- the groups claim ---

func (s *store) GetPrivateClaimsFromScopes(ctx context.Context, userID, clientID string, scopes []string) (map[string]any, error) {
	claims, err := s.Storage.GetPrivateClaimsFromScopes(ctx, userID, clientID, scopes)
	if err != nil {
		return nil, err
	}
	if claims == nil {
		claims = map[string]any{}
	}
	claims["groups"] = s.users.groupsOf(userID)
	if len(scopes) > 0 {
		claims["scope"] = strings.Join(scopes, " ")
	}
	if u := s.users.GetUserByID(userID); u != nil {
		claims["email"] = u.Email
	}
	return claims, nil
}

func (s *store) SetUserinfoFromScopes(ctx context.Context, ui *oidc.UserInfo, userID, clientID string, scopes []string) error {
	if err := s.Storage.SetUserinfoFromScopes(ctx, ui, userID, clientID, scopes); err != nil {
		return err
	}
	ui.AppendClaims("groups", s.users.groupsOf(userID))
	return nil
}

// SetUserinfoFromToken answers the userinfo endpoint: with the groups
// too, as a directory's userinfo would (the UI's re-check reads it when a
// refresh brings no ID token).
func (s *store) SetUserinfoFromToken(ctx context.Context, ui *oidc.UserInfo, tokenID, subject, origin string) error {
	if err := s.Storage.SetUserinfoFromToken(ctx, ui, tokenID, subject, origin); err != nil {
		return err
	}
	ui.AppendClaims("groups", s.users.groupsOf(ui.Subject))
	return nil
}

func (s *store) SetUserinfoFromRequest(ctx context.Context, ui *oidc.UserInfo, r op.IDTokenRequest, scopes []string) error {
	if err := s.Storage.SetUserinfoFromRequest(ctx, ui, r, scopes); err != nil {
		return err
	}
	ui.AppendClaims("groups", s.users.groupsOf(r.GetSubject()))
	return nil
}

// --- test signer ---

// sign signs the posted JSON claims with the provider's own key and key id:
// the token a compromised or misconfigured client could present, which
// only the relying party's checks can refuse.
func (s *store) sign(w http.ResponseWriter, r *http.Request) {
	claims, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil || !json.Valid(claims) {
		http.Error(w, "body must be a JSON object of claims", http.StatusBadRequest)
		return
	}
	key, err := s.Storage.SigningKey(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: key.SignatureAlgorithm(), Key: key.Key()},
		(&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", key.ID()))
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	jws, err := signer.Sign(claims)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	out, _ := jws.CompactSerialize()
	w.Header().Set("Content-Type", "application/jwt")
	io.WriteString(w, out)
}
