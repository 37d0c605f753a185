package views

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"strings"
)

// The texts a memory is embedded from, and its vectors as they are stored.

// chunkText splits text into pieces of about chunkChars at line or word
// boundaries, at most chunksMax.
func chunkText(text string) []string {
	text = strings.TrimSpace(text)
	var out []string
	for text != "" && len(out) < chunksMax {
		if len(text) <= chunkChars {
			out = append(out, text)
			break
		}
		cut := strings.LastIndexByte(text[:chunkChars], '\n')
		if cut < chunkChars/2 {
			cut = strings.LastIndexByte(text[:chunkChars], ' ')
		}
		if cut <= 0 {
			cut = chunkChars
			for cut > 0 && !isRuneStart(text[cut]) {
				cut--
			}
		}
		out = append(out, strings.TrimSpace(text[:cut]))
		text = strings.TrimSpace(text[cut:])
	}
	return out
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// encodeVectors is the stored form of a memory's vectors.
func encodeVectors(sha string, vecs [][]float32) []byte {
	raw, _ := hex.DecodeString(sha)
	dim := 0
	if len(vecs) > 0 {
		dim = len(vecs[0])
	}
	b := make([]byte, 0, 1+len(raw)+8+4*dim*len(vecs))
	b = append(b, byte(len(raw)))
	b = append(b, raw...)
	b = binary.LittleEndian.AppendUint32(b, uint32(dim))
	b = binary.LittleEndian.AppendUint32(b, uint32(len(vecs)))
	for _, v := range vecs {
		for _, f := range v {
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
		}
	}
	return b
}

func decodeVectors(b []byte, dim int) (string, [][]float32, error) {
	bad := errors.New("corrupt embedding record")
	if len(b) < 1 || len(b) < 1+int(b[0])+8 {
		return "", nil, bad
	}
	sha := hex.EncodeToString(b[1 : 1+b[0]])
	b = b[1+b[0]:]
	d, n := int(binary.LittleEndian.Uint32(b)), int(binary.LittleEndian.Uint32(b[4:]))
	b = b[8:]
	if d != dim || n > chunksMax || len(b) != 4*d*n {
		return "", nil, bad
	}
	vecs := make([][]float32, n)
	for k := range vecs {
		v := make([]float32, d)
		for x := range v {
			v[x] = math.Float32frombits(binary.LittleEndian.Uint32(b))
			b = b[4:]
		}
		vecs[k] = v
	}
	return sha, vecs, nil
}
