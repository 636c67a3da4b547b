package recording

// chunkLen is how many values a chunk of a chunked slice holds.
const chunkLen = 1024

// chunked is a slice kept in chunks of chunkLen: growing it never copies
// what it holds (a slice that grows by copying allocates several times
// what it keeps, and copies its pointers under the collector's write
// barrier).
type chunked[T any] struct {
	chunks [][]T
	n      int
}

func (s *chunked[T]) len() int { return s.n }

// at returns the ith value.
func (s *chunked[T]) at(i int) *T { return &s.chunks[i/chunkLen][i%chunkLen] }

// append appends v and returns its index.
func (s *chunked[T]) append(v T) int {
	if s.n/chunkLen == len(s.chunks) {
		s.chunks = append(s.chunks, make([]T, chunkLen))
	}
	s.chunks[s.n/chunkLen][s.n%chunkLen] = v
	s.n++
	return s.n - 1
}

// flat returns a copy of the values in one slice.
func (s *chunked[T]) flat() []T {
	out := make([]T, 0, s.n)
	for i, c := range s.chunks {
		out = append(out, c[:min(chunkLen, s.n-i*chunkLen)]...)
	}
	return out
}

// set replaces the values with vs.
func (s *chunked[T]) set(vs []T) {
	s.reset()
	for _, v := range vs {
		s.append(v)
	}
}

// reset empties the slice, keeping its first chunk.
func (s *chunked[T]) reset() {
	for i := range s.chunks {
		clear(s.chunks[i])
	}
	s.chunks, s.n = s.chunks[:min(1, len(s.chunks))], 0
}

// truncate keeps the first n values (n at most len), dropping the chunks
// past them.
func (s *chunked[T]) truncate(n int) {
	for i := n; i < s.n && i%chunkLen != 0; i++ {
		*s.at(i) = *new(T)
	}
	s.chunks, s.n = s.chunks[:(n+chunkLen-1)/chunkLen], n
}
