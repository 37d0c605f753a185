package embed

import (
	"math"
)

// model is a BERT encoder's weights in contiguous float32 row-major
// matrices, copied once from the model cybertron loaded.
type model struct {
	hidden, heads, inter, embDim, maxPos int

	tokens    []float32 // vocab × embDim
	positions []float32 // maxPos × embDim
	tokenType []float32 // embDim: type 0, the only one a single sentence uses
	embNorm   layerNorm
	proj      linearT // embDim → hidden, only when they differ
	layers    []layer
}

type layer struct {
	qkv         linearT // hidden → 3·hidden: queries, keys, values
	out         linearT // hidden → hidden
	norm1       layerNorm
	ffIn, ffOut linearT
	norm2       layerNorm
}

// linearT is y = x·wᵀ + b with w out×in, as spago and PyTorch store it.
type linearT struct {
	out, in int
	w, b    []float32
	packed  []float32 // w laid out for the kernel's gemmPacked, if it has one
}

type layerNorm struct {
	w, b []float32
	eps  float32
}

// workspace holds one worker's activations for a batch of up to cap tokens.
type workspace struct {
	x, qkv, ctx, tmp, ff, scores []float32
}

func (m *model) workspace(tokens, longest int) *workspace {
	H := m.hidden
	return &workspace{
		x:      make([]float32, tokens*max(H, m.embDim)),
		qkv:    make([]float32, tokens*3*H),
		ctx:    make([]float32, tokens*H),
		tmp:    make([]float32, tokens*H),
		ff:     make([]float32, tokens*m.inter),
		scores: make([]float32, longest*longest),
	}
}

// forward encodes a batch: ids holds the token ids of all its sentences one
// after the other, starts[i]:starts[i+1] those of sentence i ([CLS] … [SEP]).
// out[i] receives sentence i's L2-normalised mean-pooled vector.
func (m *model) forward(k *kernel, ws *workspace, ids []int32, starts []int, out [][]float32) {
	T, H, E := len(ids), m.hidden, m.embDim
	x := ws.x[:T*E]
	for t, id := range ids {
		pos := t - starts[sentenceOf(starts, t)]
		row := x[t*E : (t+1)*E]
		tok := m.tokens[int(id)*E : int(id+1)*E]
		p := m.positions[pos*E : (pos+1)*E]
		for j := range row {
			row[j] = tok[j] + p[j] + m.tokenType[j]
		}
	}
	m.embNorm.apply(x, E)
	if m.proj.out != 0 {
		y := ws.tmp[:T*H]
		k.linear(&m.proj, x, y, nil, T)
		x = ws.x[:T*H]
		copy(x, y)
	}

	dh := H / m.heads
	scale := float32(1 / math.Sqrt(float64(dh)))
	qkv, ctx, tmp, ff := ws.qkv[:T*3*H], ws.ctx[:T*H], ws.tmp[:T*H], ws.ff[:T*m.inter]
	for li := range m.layers {
		l := &m.layers[li]
		k.linear(&l.qkv, x, qkv, nil, T)
		for s := 0; s+1 < len(starts); s++ {
			a, n := starts[s], starts[s+1]-starts[s]
			sc := ws.scores[:n*n]
			for h := 0; h < m.heads; h++ {
				q := qkv[a*3*H+h*dh:]
				kk := qkv[a*3*H+H+h*dh:]
				v := qkv[a*3*H+2*H+h*dh:]
				k.gemm(true, n, n, dh, scale, q, 3*H, kk, 3*H, 0, sc, n)
				softmaxRows(sc, n)
				k.gemm(false, n, dh, n, 1, sc, n, v, 3*H, 0, ctx[a*H+h*dh:], H)
			}
		}
		k.linear(&l.out, ctx, tmp, x, T)
		l.norm1.apply(tmp, H)
		x, tmp = tmp, x
		k.linear(&l.ffIn, x, ff, nil, T)
		gelu(ff)
		k.linear(&l.ffOut, ff, tmp, x, T)
		l.norm2.apply(tmp, H)
		x, tmp = tmp, x
	}

	for s := range out {
		v := out[s]
		clear(v)
		a, b := starts[s], starts[s+1]
		for t := a; t < b; t++ {
			for j, xv := range x[t*H : (t+1)*H] {
				v[j] += xv
			}
		}
		var sum float64
		for _, f := range v {
			sum += float64(f) * float64(f)
		}
		// Dividing by the token count first (the mean) changes nothing after
		// normalising.
		if sum > 0 {
			inv := float32(1 / math.Sqrt(sum))
			for j := range v {
				v[j] *= inv
			}
		}
	}
}

// sentenceOf returns the sentence that token t belongs to.
func sentenceOf(starts []int, t int) int {
	lo, hi := 0, len(starts)-2
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if starts[mid] <= t {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// linear computes y = x·wᵀ + b (+ residual) for rows rows of x.
func (k *kernel) linear(l *linearT, x, y, residual []float32, rows int) {
	y = y[:rows*l.out]
	for r := 0; r < rows; r++ {
		yr := y[r*l.out : (r+1)*l.out]
		if residual != nil {
			rr := residual[r*l.out : (r+1)*l.out]
			for j := range yr {
				yr[j] = l.b[j] + rr[j]
			}
		} else {
			copy(yr, l.b)
		}
	}
	if l.packed != nil {
		k.gemmPacked(rows, l.out, l.in, x, l.in, l.packed, y, l.out)
		return
	}
	k.gemm(true, rows, l.out, l.in, 1, x, l.in, l.w, l.in, 1, y, l.out)
}

// packFor lays the linear layers' weights out for k, if k wants that.
func (m *model) packFor(k *kernel) {
	if k.pack == nil {
		return
	}
	ls := []*linearT{&m.proj}
	for i := range m.layers {
		l := &m.layers[i]
		ls = append(ls, &l.qkv, &l.out, &l.ffIn, &l.ffOut)
	}
	for _, l := range ls {
		if l.w != nil {
			l.packed = k.pack(l.w, l.out, l.in)
			l.w = nil
		}
	}
}

// apply normalises each n-wide row of x in place, as spago does:
// (x-mean)/sqrt(var+eps)·w + b, the variance of the deviations.
func (ln *layerNorm) apply(x []float32, n int) {
	w, b := ln.w[:n], ln.b[:n]
	for r := 0; r+n <= len(x); r += n {
		row := x[r : r+n]
		mean := sum(row) / float32(n)
		var s0, s1, s2, s3 float32
		j := 0
		for ; j+4 <= n; j += 4 {
			d0, d1, d2, d3 := row[j]-mean, row[j+1]-mean, row[j+2]-mean, row[j+3]-mean
			s0 += d0 * d0
			s1 += d1 * d1
			s2 += d2 * d2
			s3 += d3 * d3
		}
		for ; j < n; j++ {
			d := row[j] - mean
			s0 += d * d
		}
		inv := 1 / float32(math.Sqrt(float64(((s0+s1)+(s2+s3))/float32(n)+ln.eps)))
		for j, v := range row {
			row[j] = (v-mean)*inv*w[j] + b[j]
		}
	}
}
