package fusefs

import (
	"context"
	"strings"

	"github.com/mnemofs/mnemofs/views"
)

// The views as one caller sees them: the engine's cached listings for an
// unrestricted caller, and for a restricted reader (reader.go) listings
// computed over the memories it may read, kept for a moment so that the
// lookups of a READDIRPLUS do not recompute them entry by entry.

// values lists the distinct values of field among the memories the caller
// may see, sorted.
func (f *FS) values(ctx context.Context, field string) []string {
	return f.eng.Values(field, views.Filter{May: f.reader(ctx)})
}

// hasValue reports whether some memory the caller may see has value v of
// field.
func (f *FS) hasValue(ctx context.Context, field, v string) bool {
	if k, may := f.readerOf(ctx); may != nil {
		set := f.rcache.get(k+"\x00"+field, f.eng.Gen(), func() any {
			return valueSet(f.eng.Values(field, views.Filter{May: may}))
		}).(map[string]bool)
		return set[v]
	}
	return f.eng.HasValue(field, v)
}

// dateNames lists the names one level below the by-date/ prefix ("",
// "2024", "2024/05") that lead to memories the caller may see.
func (f *FS) dateNames(ctx context.Context, prefix string) []string {
	may := f.reader(ctx)
	if may == nil {
		return f.eng.DateNames(prefix)
	}
	seen := map[string]bool{}
	var out []string
	for _, day := range f.eng.Values("date", views.Filter{May: may}) {
		if prefix != "" && !strings.HasPrefix(day, prefix+"/") {
			continue
		}
		part, _, _ := strings.Cut(strings.TrimPrefix(strings.TrimPrefix(day, prefix), "/"), "/")
		if !seen[part] {
			seen[part] = true
			out = append(out, part)
		}
	}
	return out
}

// hasDate reports whether name one level below prefix leads to memories
// the caller may see.
func (f *FS) hasDate(ctx context.Context, prefix, name string) bool {
	k, may := f.readerOf(ctx)
	if may == nil {
		return f.eng.HasDate(strings.TrimPrefix(prefix+"/"+name, "/"))
	}
	set := f.rcache.get(k+"\x00date\x00"+prefix, f.eng.Gen(), func() any {
		return valueSet(f.dateNames(ctx, prefix))
	}).(map[string]bool)
	return set[name]
}

// dirsWith is the engine's DirsWith for the caller.
func (f *FS) dirsWith(ctx context.Context, viewKey string, filter views.Filter) (map[uint64]bool, error) {
	k, may := f.readerOf(ctx)
	if may == nil {
		return f.eng.DirsWithCtx(ctx, filter)
	}
	filter = filter.And(views.Filter{May: may})
	var err error
	dirs := f.rcache.get(k+"\x00dirs\x00"+viewKey, f.eng.Gen(), func() any {
		var d map[uint64]bool
		d, err = f.eng.DirsWithCtx(ctx, filter)
		return d
	}).(map[uint64]bool)
	if err != nil {
		f.rcache.forget(k + "\x00dirs\x00" + viewKey)
	}
	return dirs, err
}
