//go:build libc.membrk || libc.memgrind || !linux || !(amd64 || arm64 || loong64 || ppc64le || s390x || riscv64 || 386 || arm)

package codemode

// trimEngineMemory does nothing where the engine's allocator is not the
// one trim_musl.go names: there the freed regions stay with the process
// for reuse.
func trimEngineMemory() {}
