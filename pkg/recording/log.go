package recording

// chunk is how many entries a chunk of a log holds.
const chunk = 1024

// log is the window's changes in chunks: growing it never copies what
// it holds (a slice that doubles would allocate twice what it keeps), and
// its chunks hold no pointer (the garbage collector skips them).
type log struct {
	chunks [][]entry
	n      int
}

func (l *log) append(e entry) {
	if l.n%chunk == 0 && l.n/chunk == len(l.chunks) {
		l.chunks = append(l.chunks, make([]entry, 0, chunk))
	}
	c := &l.chunks[l.n/chunk]
	*c = append(*c, e)
	l.n++
}

func (l *log) len() int { return l.n }

// at returns the ith entry.
func (l *log) at(i int) *entry { return &l.chunks[i/chunk][i%chunk] }

// keep keeps the entries keep reports true for, in order, reusing the
// chunks.
func (l *log) keep(keep func(*entry) bool) {
	n := 0
	for i := range l.n {
		if e := l.at(i); keep(e) {
			*l.at(n) = *e
			n++
		}
	}
	for i := range l.chunks {
		l.chunks[i] = l.chunks[i][:max(0, min(chunk, n-i*chunk))]
	}
	l.chunks = l.chunks[:(n+chunk-1)/chunk]
	l.n = n
}

func (l *log) reset() { l.keep(func(*entry) bool { return false }) }
