// Package atomicfile writes a file so that a reader, or a crash, sees the
// old file or the new one, never half of one.
package atomicfile
