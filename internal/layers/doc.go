// Package layers holds the tests of repository-wide rules: the package
// layering of docs/ARCHITECTURE.md (imports point down only, nothing imports
// the command line, third-party SDKs stay inside the packages that adapt
// them, the emulator depends on no package of the module but llm, tokens
// and internal helpers) and that CI runs the test command README.md gives.
// It has no code of its own.
package layers
