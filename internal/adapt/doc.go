// Package adapt holds what the provider adapters (provider/anthropic,
// provider/openai) and package provider's bridge share to write request
// bodies the way the SDKs do: compact JSON without HTML escaping, a
// declaration's schema, the streaming body, call ids for calls a server
// sent without one, call arguments fit to send back, and the wrapping of
// an update sent as user text. It is internal: none of it is toolshelf's
// public API.
package adapt
