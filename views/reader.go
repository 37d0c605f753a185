package views

// Readers isolated for one user. An engine built on a store open for
// every user (a mount without --user) serves a user the way an engine on
// a store opened for that user would: through the user's view of the
// store (store.ForUser), its filter keeps the memories the view shows
// (May), of a shared log only the lines it shows (Filter.Reader, checked
// line by line), and the text of results and context/ is read through
// the view. The index is the engine's, one for every user: nothing is
// indexed again per user. Ranking uses the statistics of the whole
// index, so scores may differ from those of an engine of the user's own;
// what is found and shown does not.

// ForReader is the filter of what the view v (a store.ForUser view of
// the engine's store) shows.
func ForReader(v UserView) Filter {
	if v.User() == "" {
		return Filter{}
	}
	return Filter{May: v.Visible, Reader: v}
}
