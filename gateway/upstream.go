package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/toolshelf/toolshelf/mcpclient"
	"github.com/toolshelf/toolshelf/tool"
)

// ResourceScheme is the scheme of the resource URIs the gateway shows:
// toolshelf://<server>/<the upstream URI>, so that two servers' URIs never
// collide, the upstream URI stays readable, and a read goes back to the
// server named in it ([ResourceURI]).
const ResourceScheme = "toolshelf"

// DefaultCapabilityWait is the default of [Config.CapabilityWait]: how
// long a client's initialize (or server/discover) waits for the upstream
// servers still connecting, and for the first listing of their prompts
// and resources, so that the capabilities it is answered with say what
// the upstreams offer. The wait also ends [FirstListWait] after the
// gateway was made, so that a client's initialize and its first tools/list
// together stay within that bound.
const DefaultCapabilityWait = FirstListWait

// ResourceURI is the URI (or URI template) under which the gateway shows
// an upstream server's resource URI (or URI template).
func ResourceURI(server, uri string) string {
	return ResourceScheme + "://" + server + "/" + uri
}

// PromptName is the name under which the gateway shows an upstream
// server's prompt: mcp__<server>__<prompt>, as tools are named.
func PromptName(server, prompt string) string {
	return tool.NamespaceName(server) + "__" + prompt
}

// owner is the upstream server of a prompt, resource or template the
// gateway shows, and its name (or URI) there.
type owner struct {
	server, key string
}

// shown is what the gateway shows of one server: gateway name (or URI)
// → the item as added, as JSON.
type shown struct {
	prompts, resources, templates map[string]string
}

// upstreams follows the upstream servers' prompts, resources and resource
// templates onto every surface's server.
type upstreams struct {
	g       *Gateway
	servers []*mcp.Server
	ctx     context.Context
	cancel  context.CancelFunc
	unlist  func()
	wg      sync.WaitGroup
	kicks   map[string]chan struct{} // per configured server, one slot

	mu       sync.Mutex
	shown    map[string]*shown // by server
	owners   map[string]owner  // "prompt <name>", "resource <URI>", "template <URI template>" → owner
	synced   map[string]uint64 // server → the session last listed
	progress chan struct{}     // closed, and replaced, after each listing
}

// followUpstreams starts following the upstream servers onto servers.
func (g *Gateway) followUpstreams(servers []*mcp.Server) *upstreams {
	u := &upstreams{g: g, servers: servers, kicks: map[string]chan struct{}{}, shown: map[string]*shown{},
		owners: map[string]owner{}, synced: map[string]uint64{}, progress: make(chan struct{})}
	u.ctx, u.cancel = context.WithCancel(context.Background())
	for _, st := range g.mcp.Servers() {
		u.kicks[st.Name] = make(chan struct{}, 1)
		u.shown[st.Name] = &shown{prompts: map[string]string{}, resources: map[string]string{}, templates: map[string]string{}}
	}
	for name, kick := range u.kicks {
		u.wg.Go(func() {
			for {
				select {
				case <-u.ctx.Done():
					return
				case <-kick:
				}
				u.sync(name)
			}
		})
	}
	u.unlist = g.mcp.OnListChanged(u.kick)
	// A server that connected before the gateway was made is listed now.
	for name := range u.kicks {
		u.kick(name)
	}
	return u
}

// kick asks for a server's lists to be listed again; kicks that arrive
// during a listing cost one more.
func (u *upstreams) kick(server string) {
	if k := u.kicks[server]; k != nil {
		select {
		case k <- struct{}{}:
		default:
		}
	}
}

// stop stops following and waits for the listings under way.
func (u *upstreams) stop() {
	u.unlist()
	u.cancel()
	u.wg.Wait()
}

// sync lists a connected server's prompts, resources and templates and
// brings the surfaces in step with them. A list that fails keeps what was
// shown of it.
func (u *upstreams) sync(server string) {
	offers, ok := u.g.mcp.Offers(server)
	if !ok {
		return
	}
	log := u.g.cfg.Logger.With("server", server)
	list := func(f mcpclient.Feature, offered bool) ([]mcpclient.Item, bool) {
		if !offered {
			return nil, true
		}
		items, err := u.g.mcp.List(u.ctx, server, f)
		if err != nil {
			if u.ctx.Err() == nil {
				log.Warn("listing failed; what was listed before is kept", "list", string(f), "error", err)
			}
			return nil, false
		}
		return items, true
	}
	if items, ok := list(mcpclient.Prompts, offers.Prompts); ok {
		u.syncPrompts(server, items)
	}
	if items, ok := list(mcpclient.Resources, offers.Resources); ok {
		u.syncResources(server, items)
	}
	if items, ok := list(mcpclient.ResourceTemplates, offers.Resources); ok {
		u.syncTemplates(server, items)
	}
	u.mu.Lock()
	u.synced[server] = offers.Session
	close(u.progress)
	u.progress = make(chan struct{})
	u.mu.Unlock()
}

// claim records key as the server's, unless another server's item holds
// it already; it reports whether the server may show it.
func (u *upstreams) claim(server, key string, o owner) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	if prev, ok := u.owners[key]; ok && prev.server != server {
		return false
	}
	u.owners[key] = o
	return true
}

// release forgets the items, of the kind that prefixes their owners' keys,
// that a server shows no more, and returns them.
func (u *upstreams) release(kind string, held map[string]string, keep map[string]bool) []string {
	var gone []string
	for k := range held {
		if !keep[k] {
			gone = append(gone, k)
		}
	}
	slices.Sort(gone)
	u.mu.Lock()
	for _, k := range gone {
		delete(held, k)
		delete(u.owners, kind+k)
	}
	u.mu.Unlock()
	return gone
}

func (u *upstreams) syncPrompts(server string, items []mcpclient.Item) {
	held, keep := u.shown[server].prompts, map[string]bool{}
	for _, it := range items {
		var p mcp.Prompt
		if err := json.Unmarshal(it.JSON, &p); err != nil {
			u.refuse(server, "prompt", it.Key, fmt.Sprintf("it cannot be read: %v", err))
			continue
		}
		name := PromptName(server, p.Name)
		if !u.claim(server, "prompt "+name, owner{server, p.Name}) {
			u.refuse(server, "prompt", it.Key, fmt.Sprintf("its gateway name %s is another server's prompt", name))
			continue
		}
		keep[name] = true
		p.Name = name
		b, _ := json.Marshal(&p)
		if held[name] == string(b) {
			continue
		}
		held[name] = string(b)
		h := u.getPrompt(server, it.Key)
		for _, srv := range u.servers {
			srv.AddPrompt(&p, h)
		}
	}
	if gone := u.release("prompt ", held, keep); len(gone) > 0 {
		for _, srv := range u.servers {
			srv.RemovePrompts(gone...)
		}
	}
}

func (u *upstreams) syncResources(server string, items []mcpclient.Item) {
	held, keep := u.shown[server].resources, map[string]bool{}
	for _, it := range items {
		var r mcp.Resource
		if err := json.Unmarshal(it.JSON, &r); err != nil {
			u.refuse(server, "resource", it.Key, fmt.Sprintf("it cannot be read: %v", err))
			continue
		}
		uri := ResourceURI(server, r.URI)
		if _, err := url.Parse(uri); err != nil {
			u.refuse(server, "resource", it.Key, fmt.Sprintf("its URI is not a URI: %v", err))
			continue
		}
		if !u.claim(server, "resource "+uri, owner{server, r.URI}) {
			u.refuse(server, "resource", it.Key, "its gateway URI is another server's")
			continue
		}
		keep[uri] = true
		r.URI = uri
		b, _ := json.Marshal(&r)
		if held[uri] == string(b) {
			continue
		}
		held[uri] = string(b)
		h := u.readResource(server)
		for _, srv := range u.servers {
			srv.AddResource(&r, h)
		}
	}
	if gone := u.release("resource ", held, keep); len(gone) > 0 {
		for _, srv := range u.servers {
			srv.RemoveResources(gone...)
		}
	}
}

func (u *upstreams) syncTemplates(server string, items []mcpclient.Item) {
	held, keep := u.shown[server].templates, map[string]bool{}
	for _, it := range items {
		var t mcp.ResourceTemplate
		if err := json.Unmarshal(it.JSON, &t); err != nil {
			u.refuse(server, "resource template", it.Key, fmt.Sprintf("it cannot be read: %v", err))
			continue
		}
		tmpl := ResourceURI(server, t.URITemplate)
		if !u.claim(server, "template "+tmpl, owner{server, t.URITemplate}) {
			u.refuse(server, "resource template", it.Key, "its gateway URI template is another server's")
			continue
		}
		t.URITemplate = tmpl
		b, _ := json.Marshal(&t)
		if held[tmpl] == string(b) {
			keep[tmpl] = true
			continue
		}
		h := u.readResource(server)
		if err := addTemplate(u.servers[0], &t, h); err != nil {
			u.refuse(server, "resource template", it.Key, err.Error())
			if _, shown := held[tmpl]; !shown {
				// Not shown, so release (below) would not free it.
				u.mu.Lock()
				delete(u.owners, "template "+tmpl)
				u.mu.Unlock()
			}
			continue
		}
		keep[tmpl] = true
		held[tmpl] = string(b)
		for _, srv := range u.servers[1:] {
			srv.AddResourceTemplate(&t, h)
		}
	}
	if gone := u.release("template ", held, keep); len(gone) > 0 {
		for _, srv := range u.servers {
			srv.RemoveResourceTemplates(gone...)
		}
	}
}

// addTemplate adds a resource template to srv. The SDK panics on a URI
// template it cannot parse, and it is the judge of what it can serve: the
// panic is returned as an error.
func addTemplate(srv *mcp.Server, t *mcp.ResourceTemplate, h mcp.ResourceHandler) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("its URI template is invalid: %v", r)
		}
	}()
	srv.AddResourceTemplate(t, h)
	return nil
}

// refuse logs an item of a server that the gateway does not show.
func (u *upstreams) refuse(server, what, key, why string) {
	u.g.cfg.Logger.Warn(what+" refused", "server", server, "item", key, "reason", why)
}

// getPrompt is the handler of a server's prompt, named name there.
func (u *upstreams) getPrompt(server, name string) mcp.PromptHandler {
	return func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		raw, err := u.g.mcp.GetPrompt(ctx, server, name, req.Params.Arguments)
		if err != nil {
			return nil, err
		}
		var res mcp.GetPromptResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("the answer of MCP server %q to prompts/get cannot be read: %w", server, err)
		}
		return &res, nil
	}
}

// readResource is the handler of a server's resources and templates: it
// reads the upstream URI and shows the contents under gateway URIs.
func (u *upstreams) readResource(server string) mcp.ResourceHandler {
	prefix := ResourceURI(server, "")
	return func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		raw, err := u.g.mcp.ReadResource(ctx, server, strings.TrimPrefix(req.Params.URI, prefix))
		if err != nil {
			return nil, err
		}
		var res mcp.ReadResourceResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("the answer of MCP server %q to resources/read cannot be read: %w", server, err)
		}
		for _, c := range res.Contents {
			if c != nil && c.URI != "" {
				c.URI = prefix + c.URI
			}
		}
		if res.Contents == nil {
			res.Contents = []*mcp.ResourceContents{}
		}
		return &res, nil
	}
}

// middleware is every surface's receiving middleware for what the
// upstreams offer: completion/complete goes to the server that owns the
// prompt or template, and initialize (or server/discover) waits, within
// [Config.CapabilityWait], for the upstreams to connect and be listed, then
// advertises completions when a connected upstream offers them.
func (u *upstreams) middleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "completion/complete":
			cr, ok := req.(*mcp.CompleteRequest)
			if !ok || cr.Params == nil {
				break
			}
			return u.complete(ctx, cr.Params)
		case "initialize", "server/discover":
			u.settle(ctx)
			res, err := next(ctx, method, req)
			if err == nil && u.completions() {
				switch r := res.(type) {
				case *mcp.InitializeResult:
					addCompletions(r.Capabilities)
				case *mcp.DiscoverResult:
					addCompletions(r.Capabilities)
				}
			}
			return res, err
		}
		return next(ctx, method, req)
	}
}

func addCompletions(c *mcp.ServerCapabilities) {
	if c != nil && c.Completions == nil {
		c.Completions = &mcp.CompletionCapabilities{}
	}
}

// settle waits, within Config.CapabilityWait, the gateway's settleBy and
// ctx, until no upstream server is connecting and each connected one's
// session has been listed.
func (u *upstreams) settle(ctx context.Context) {
	wait := u.g.cfg.CapabilityWait
	switch {
	case wait < 0:
		return
	case wait == 0:
		wait = DefaultCapabilityWait
	}
	deadline := time.Now().Add(wait)
	if u.g.settleBy.Before(deadline) {
		deadline = u.g.settleBy
	}
	ctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	if u.g.mcp.WaitAll(ctx) != nil {
		return
	}
	for {
		u.mu.Lock()
		progress, pending := u.progress, false
		for name := range u.kicks {
			if o, ok := u.g.mcp.Offers(name); ok && u.synced[name] != o.Session {
				pending = true
				break
			}
		}
		u.mu.Unlock()
		if !pending {
			return
		}
		select {
		case <-progress:
		case <-ctx.Done():
			return
		}
	}
}

// completions reports whether a connected upstream offers completions.
func (u *upstreams) completions() bool {
	for name := range u.kicks {
		if o, ok := u.g.mcp.Offers(name); ok && o.Completions {
			return true
		}
	}
	return false
}

// complete forwards a completion request to the server that owns its
// prompt or template, named as that server names it. A server that offers
// no completions gets no request: the answer is an empty list.
func (u *upstreams) complete(ctx context.Context, p *mcp.CompleteParams) (*mcp.CompleteResult, error) {
	if p.Ref == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete needs a ref (ref/prompt with a name, or ref/resource with a uri)"}
	}
	key := "prompt " + p.Ref.Name
	if p.Ref.Type == "ref/resource" {
		key = "template " + p.Ref.URI
	}
	u.mu.Lock()
	o, ok := u.owners[key]
	if !ok && p.Ref.Type == "ref/resource" {
		o, ok = u.owners["resource "+p.Ref.URI]
	}
	u.mu.Unlock()
	if !ok || (p.Ref.Type != "ref/prompt" && p.Ref.Type != "ref/resource") {
		key = p.Ref.Name + p.Ref.URI
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams,
			Message: fmt.Sprintf("no prompt or resource template %q is shown by this gateway (%s); list them with prompts/list and resources/templates/list", key, p.Ref.Type)}
	}
	empty := &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{}}}
	if offers, ok := u.g.mcp.Offers(o.server); !ok || !offers.Completions {
		return empty, nil
	}
	up := *p
	ref := *p.Ref
	if ref.Type == "ref/prompt" {
		ref.Name = o.key
	} else {
		ref.URI = o.key
	}
	up.Ref = &ref
	params, err := json.Marshal(&up)
	if err != nil {
		return nil, err
	}
	raw, err := u.g.mcp.Complete(ctx, o.server, params)
	if err != nil {
		return nil, err
	}
	var res mcp.CompleteResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("the answer of MCP server %q to completion/complete cannot be read: %w", o.server, err)
	}
	if res.Completion.Values == nil {
		res.Completion.Values = []string{}
	}
	return &res, nil
}
