// Package userdir finds toolshelf's folders in the user's home and keeps
// the private ones private.
package userdir
