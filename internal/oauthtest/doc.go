// Package oauthtest runs a real OAuth 2.1 authorization server for tests:
// panva's oidc-provider, a certified OpenID provider that .ci/mcp-clients
// installs pinned from npm, run by the Node 22 binary installed beside it,
// on loopback, configured by testdata/authserver.mjs.
//
// [Start] starts one for a test and returns a [Server]: its issuer URL,
// pre-registered clients, and helpers that go through the server's own
// endpoints: [Server.Token] mints an access token by client credentials
// for an audience, scopes and lifetime of the test's choosing,
// [Server.Revoke] revokes a token, [Server.Authorize] plays the browser of
// an authorization code flow (the login and consent approve themselves for
// [Account]). Dynamic client registration (RFC 7591), PKCE, resource
// indicators (RFC 8707), refresh tokens and introspection (RFC 7662) are
// the server's own.
//
// Without the installation a test is skipped, except under CI (the CI
// environment variable set), where it fails; under go test -short it is
// skipped.
package oauthtest
