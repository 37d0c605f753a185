package views

import (
	"fmt"

	"github.com/RoaringBitmap/roaring/v2/roaring64"
)

// The catalog and the snapshot: what a snapshot keeps of it (capture),
// and a catalog read from one (readCatalog) put in place (use).

// loadedCatalog is a catalog read from a snapshot.
type loadedCatalog struct {
	ents   entrySet
	facets [nFields]facet
	hidden map[uint64]bool
}

func readCatalog(cat *snapCatalog, seg []byte, entries int) (*loadedCatalog, error) {
	base, err := parseCatBase(seg)
	if err != nil {
		return nil, fmt.Errorf("reading its catalog: %w", err)
	}
	if len(base.inos) != entries {
		return nil, fmt.Errorf("reading its catalog: %d entries, the header says %d", len(base.inos), entries)
	}
	c := &loadedCatalog{facets: newFacets(), hidden: map[uint64]bool{}}
	c.ents = entriesOf(base)
	for _, ino := range cat.Hidden {
		c.hidden[ino] = true
	}
	for fi := range c.facets {
		fc := &c.facets[fi]
		for v, im := range cat.Facets[fi] {
			vs := &valueSet{inos: roaring64.New(), shown: im.Shown}
			if err := vs.inos.UnmarshalBinary(im.Bits); err != nil {
				return nil, fmt.Errorf("reading its catalog: the memories of %q: %w", v, err)
			}
			if vs.inos.IsEmpty() {
				continue
			}
			fc.vals[v] = vs
			if vs.shown > 0 {
				fc.shownChanged(v, 1)
			}
		}
	}
	return c, nil
}

// use puts a catalog read from a snapshot in place.
func (c *catalog) use(l *loadedCatalog) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ents, c.facets, c.hidden = l.ents, l.facets, l.hidden
}

// capture copies into im what a snapshot keeps of the catalog: its base
// and the entries put since (entries are never changed in place), which
// are hidden, the facets' bitmaps. It returns the generation captured.
func (c *catalog) capture(im *snapImage) (uint64, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	im.base, im.over, im.muts = c.ents.image()
	im.head.Entries = c.ents.len()
	for ino := range c.hidden {
		im.cat.Hidden = append(im.cat.Hidden, ino)
	}
	for fi := range c.facets {
		vals := make(map[string]facetImage, len(c.facets[fi].vals))
		for v, vs := range c.facets[fi].vals {
			bits, err := vs.inos.MarshalBinary()
			if err != nil {
				return 0, err
			}
			vals[v] = facetImage{Bits: bits, Shown: vs.shown}
		}
		im.cat.Facets[fi] = vals
	}
	return c.gen, nil
}

// unchangedSince reports whether the catalog is as it was at generation
// gen, after muts changes of its entries (a capture's).
func (c *catalog) unchangedSince(gen, muts uint64) bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.gen == gen && c.ents.mutations() == muts
}
