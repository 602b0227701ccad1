//go:build !libc.membrk && !libc.memgrind && linux && (amd64 || arm64 || loong64 || ppc64le || s390x || riscv64 || 386 || arm)

package codemode

import (
	"sync"
	_ "unsafe" // go:linkname

	"modernc.org/memory"
)

// The engine's C allocator (modernc.org/libc, one for the process) keeps
// the regions a closed VM freed, up to the peak it has seen, for reuse:
// after one script that took its whole memory limit the process would
// keep that much resident for good. trimEngineMemory hands the empty
// regions back to the OS. libc does not export its allocator, so this
// file names it, on the platforms where libc.allocator is a
// memory.Allocator guarded by libc.allocatorMu (modernc.org/libc's
// libc_musl.go, at the version go.mod pins); a libc that renamed them
// fails the build here, not at run time.

//go:linkname libcAllocator modernc.org/libc.allocator
var libcAllocator memory.Allocator

//go:linkname libcAllocatorMu modernc.org/libc.allocatorMu
var libcAllocatorMu sync.Mutex

// trimEngineMemory returns the engine's empty regions to the OS; the live
// allocations of scripts still running are not touched.
func trimEngineMemory() {
	libcAllocatorMu.Lock()
	defer libcAllocatorMu.Unlock()
	_ = libcAllocator.Trim()
}
