package openai

import (
	"strconv"
	"unicode/utf16"
)

// shortHash is the reference implementation's short string hash (two
// 32-bit multiplicative accumulators, finalised into each other, written in
// base 36). It iterates UTF-16 code units, as JavaScript strings do: a
// character outside the Basic Multilingual Plane counts as its surrogate
// pair, so the ids match the reference's for any input.
func shortHash(s string) string {
	h1, h2 := uint32(0xdeadbeef), uint32(0x41c6ce57)
	for _, u := range utf16.Encode([]rune(s)) {
		h1 = (h1 ^ uint32(u)) * 2654435761
		h2 = (h2 ^ uint32(u)) * 1597334677
	}
	h1 = (h1^(h1>>16))*2246822507 ^ (h2^(h2>>13))*3266489909
	h2 = (h2^(h2>>16))*2246822507 ^ (h1^(h1>>13))*3266489909
	return strconv.FormatUint(uint64(h2), 36) + strconv.FormatUint(uint64(h1), 36)
}
