// Package cli is the toolshelf command line: its subcommands, flags and
// wiring. It is the composition root: it builds registries, rankers and
// catalogs and hands them to the library packages; nothing imports it.
package cli
