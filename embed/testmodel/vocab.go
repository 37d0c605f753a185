package testmodel

import (
	"fmt"
	"sort"
	"strings"
)

// commonWords are frequent English words (and a few of mnemofs's own), whole
// words in both vocabularies, so that ordinary sentences tokenise mostly into
// whole words as they do with a real BERT vocabulary.
const commonWords = `the of and to in is was for that on with as by at it he she they we you i
be are were been has have had do does did not no yes but or if then than so can will would could should
may might must this these those there here what which who whom whose when where why how all any each
few more most other some such only own same too very just now also from up down out over under again
further once about into through during before after above below between off new old good bad first last
long great little right big high different small large next early young important public able
time year people way day man woman thing child world life hand part place case week company system
program question work government number night point home water room mother area money story fact month
lot study book eye job word business issue side kind head house service friend father power hour game
line end member law car city community name president team minute idea kid body information back parent
face others level office door health person art war history party result change morning reason research
girl guy moment air teacher force education food trip budget hotel train ticket flight plan meeting
memory file files folder note notes agent user users search query vector model text sentence token
ramen noodles vegetarian coffee tea breakfast lunch dinner travel mountain lake snow ski zermatt paris
london berlin tokyo monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday
likes like love loves want wants need needs know knows think make makes go goes get gets see say said
use used using find found give take come came look looked feel felt try tried leave call ask asked
keep let begin seem help talk turn start show hear play run move live believe hold bring happen write
provide sit stand lose pay meet include continue set learn lead understand watch follow stop create
speak read allow add spend grow open walk win offer remember consider appear buy wait serve die send
expect build stay fall cut reach kill remain suggest raise pass sell require report decide pull
red blue green black white quick brown fox jumps lazy dog cat cats dogs bird fish tree trees sun moon
one two three four five six seven eight nine ten hundred thousand million
my your his her its our their me him us them myself yourself itself`

// subwords are word-continuation pieces: common English suffixes.
const subwords = `s es ed ing ly er ers est ion ions tion tions ment ments ness able ible al ial ful
less ous ive ity ize ized ise ised ism ist ists y ies ier iest en ened th ward wards`

// specials are BERT's special tokens; the wordpiece tokenizer needs [UNK],
// the encoder [CLS] and [SEP].
var specials = []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}

// TinyVocab returns a small but real wordpiece vocabulary: the special tokens,
// every printable ASCII character, every lower-case letter and digit as a
// continuation piece (so any ASCII word tokenises without [UNK]), common
// suffixes and a few hundred common words.
func TinyVocab() []string {
	var v vocabBuilder
	for _, s := range specials {
		v.add(s)
	}
	for c := '!'; c <= '~'; c++ {
		if c >= 'A' && c <= 'Z' {
			continue // the models are uncased
		}
		v.add(string(c))
	}
	for c := 'a'; c <= 'z'; c++ {
		v.add("##" + string(c))
	}
	for c := '0'; c <= '9'; c++ {
		v.add("##" + string(c))
	}
	for _, s := range strings.Fields(subwords) {
		v.add("##" + s)
	}
	for _, w := range strings.Fields(commonWords) {
		v.add(w)
	}
	return v.list
}

// MiniLMVocab returns size entries laid out like bert-base-uncased's
// vocab.txt ([PAD], [unused0..98], [UNK], [CLS], [SEP], [MASK], more
// [unusedN], characters, words, pieces); the real vocabulary cannot be
// downloaded here, so the words past TinyVocab's are made-up but
// pronounceable syllable strings, whole and as ## pieces.
func MiniLMVocab(size int) []string {
	var v vocabBuilder
	v.add("[PAD]")
	for i := 0; i < 99; i++ {
		v.add(fmt.Sprintf("[unused%d]", i))
	}
	for _, s := range specials[1:] {
		v.add(s)
	}
	for i := 99; i < 994; i++ {
		v.add(fmt.Sprintf("[unused%d]", i))
	}
	for _, t := range TinyVocab() {
		v.add(t)
	}
	onsets := strings.Fields("b c d f g h j k l m n p r s t v w z bl br ch cl cr dr fl fr gl gr pl pr sc sh sk sl sm sn sp st str sw th tr wh")
	vowels := strings.Fields("a e i o u ai ea ee oo ou y")
	codas := append([]string{""}, strings.Fields("b d g k l m n p r s t x ck ng nk nt rd rk rn rt sh st th")...)
	var syllables []string
	for _, o := range onsets {
		for _, n := range vowels {
			for _, c := range codas {
				syllables = append(syllables, o+n+c)
			}
		}
	}
	sort.Strings(syllables)
	// One syllable, then two, whole and as continuation pieces alternately,
	// until the vocabulary is full.
	for i := 0; len(v.list) < size && i < len(syllables); i++ {
		v.add(syllables[i])
		if len(v.list) < size {
			v.add("##" + syllables[i])
		}
	}
	for i := 0; len(v.list) < size; i++ {
		a, b := syllables[i%len(syllables)], syllables[(i*7919+13)%len(syllables)]
		v.add(a + b)
		if len(v.list) < size {
			v.add("##" + a + b)
		}
	}
	return v.list[:size]
}

type vocabBuilder struct {
	list []string
	seen map[string]bool
}

func (v *vocabBuilder) add(t string) {
	if v.seen == nil {
		v.seen = make(map[string]bool)
	}
	if !v.seen[t] {
		v.seen[t] = true
		v.list = append(v.list, t)
	}
}
