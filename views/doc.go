// Package views builds the generated parts of the tree from the store:
// the meta/ files now, and the filtered mirrors (by-user, by-type, search,
// …) as they land. It never imports go-fuse: fusefs asks it for names and
// bytes.
package views
