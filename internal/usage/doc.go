// Package usage reads back what the metrics log says about the tools a
// user's sessions called, and turns it into a shelf that learns from use.
//
// [NewReport] summarizes the sessions of one servers file within a bounded
// [Window]: each tool's share of the sessions that called it, its
// definition tokens and the tool_search round trips it cost. [Suggest]
// proposes, from a report, the tools to always load, to defer and to
// remove, with the tokens each saves per session. A [State] is what a
// person applied: per servers file, the tools that new sessions declare
// from their first request. It is a small private file in the user's
// state folder ([Load], [State.Save], [Reset]).
package usage
