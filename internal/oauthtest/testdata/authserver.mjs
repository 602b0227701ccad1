// A real OAuth 2.1 authorization server for toolshelf's tests: panva's
// oidc-provider (a certified OpenID provider, installed pinned by
// .ci/mcp-clients), configured for MCP: dynamic client registration
// (RFC 7591), PKCE, resource indicators (RFC 8707) with JWT access tokens
// whose audience is the resource, refresh tokens, revocation (RFC 7009),
// introspection (RFC 7662) and client credentials. The login and consent
// interaction approves itself for one fixed account, so a client that
// follows the redirects (keeping cookies, as a browser does) gets a code.
//
//   node authserver.mjs CLIENTS_DIR CONFIG_JSON_FILE
//
// It listens on 127.0.0.1 (a free port), prints one line
// {"issuer": URL} on standard output once it serves, logs to standard
// error and runs until killed. The configuration file holds:
//
//   clients        client metadata (RFC 7591 names) registered at start
//   scopes         the scopes a resource grants (every resource the same)
//   accessTokenTTL seconds an access token lives, by default
//   refreshTokenTTL seconds a refresh token lives
//   tokenFormat    "jwt" or "opaque": the access tokens' format, by default
//   account        the account the interaction signs in
//   admin          a client id that may revoke any client's token
//
// A token request may carry two extra form fields, read here only: ttl
// (seconds) and token_format ("jwt" or "opaque"), which override the
// defaults for that token.

import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [clientsDir, configFile] = process.argv.slice(2);
if (!clientsDir || !configFile) {
  console.error("usage: authserver.mjs CLIENTS_DIR CONFIG_JSON_FILE");
  process.exit(2);
}
const config = JSON.parse(fs.readFileSync(configFile, "utf8"));
const { default: Provider, errors } = await import(
  pathToFileURL(path.join(path.resolve(clientsDir), "node_modules", "oidc-provider", "lib", "index.js")).href
);

const server = http.createServer();
await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
const issuer = `http://127.0.0.1:${server.address().port}`;

const { privateKey } = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
const jwk = { ...privateKey.export({ format: "jwk" }), kid: crypto.randomUUID(), use: "sig", alg: "RS256" };
const resourceScope = config.scopes.join(" ");

function positive(value, fallback) {
  const n = Number.parseInt(value, 10);
  return Number.isInteger(n) && n > 0 ? n : fallback;
}

const provider = new Provider(issuer, {
  clients: config.clients,
  jwks: { keys: [jwk] },
  cookies: { keys: [crypto.randomBytes(32).toString("base64url")] },
  scopes: ["openid", "offline_access", ...config.scopes],
  claims: { openid: ["sub"] },
  findAccount: (ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
  pkce: { required: () => true },
  ttl: {
    RefreshToken: config.refreshTokenTTL,
    Interaction: 600,
    Session: 3600,
    Grant: 3600,
    AuthorizationCode: 60,
  },
  // A client allowed the refresh_token grant gets a refresh token, with or
  // without offline_access: MCP clients do not all ask for it.
  issueRefreshToken: (ctx, client) => client.grantTypeAllowed("refresh_token"),
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    registration: { enabled: true },
    clientCredentials: { enabled: true },
    introspection: {
      enabled: true,
      // A confidential client (a resource server) may introspect any token.
      allowedPolicy: (ctx, client, token) => client.clientAuthMethod !== "none" || token.clientId === client.clientId,
    },
    revocation: {
      enabled: true,
      allowedPolicy: (ctx, client, token) => client.clientId === config.admin || token.clientId === client.clientId,
    },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => (oneOf ? oneOf[0] : undefined),
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => {
        const body = ctx.oidc.body || {};
        const format = body.token_format || config.tokenFormat;
        if (format !== "jwt" && format !== "opaque") {
          throw new errors.InvalidRequest("token_format must be jwt or opaque");
        }
        return {
          scope: resourceScope,
          audience: resource,
          accessTokenTTL: positive(body.ttl, config.accessTokenTTL),
          accessTokenFormat: format,
          jwt: { sign: { alg: "RS256" } },
        };
      },
    },
  },
});
provider.on("server_error", (ctx, err) => console.error("server_error", err));

// approve finishes the login and consent interaction for the fixed
// account, granting whatever the client asked for.
async function approve(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session } = details;
  if (prompt.name === "login") {
    return provider.interactionFinished(req, res, { login: { accountId: config.account } }, { mergeWithLastSubmission: false });
  }
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  const missing = prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [resource, scopes] of Object.entries(missing.missingResourceScopes || {})) {
    grant.addResourceScope(resource, scopes.join(" "));
  }
  const grantId = await grant.save();
  return provider.interactionFinished(req, res, { consent: details.grantId ? {} : { grantId } }, { mergeWithLastSubmission: true });
}

const serve = provider.callback();
server.on("request", (req, res) => {
  if (req.method === "GET" && req.url.startsWith("/interaction/")) {
    approve(req, res).catch((err) => {
      console.error("interaction", err);
      res.statusCode = 400;
      res.setHeader("Content-Type", "text/plain");
      res.end(`interaction failed: ${err.message}\n`);
    });
    return;
  }
  serve(req, res);
});
process.stdout.write(JSON.stringify({ issuer }) + "\n");
