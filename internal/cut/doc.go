// Package cut finds where a string of UTF-8 text can be cut without
// splitting a rune, for the bounds toolshelf puts on text that enters a
// transcript or a message.
package cut
