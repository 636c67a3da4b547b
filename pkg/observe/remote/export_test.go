package remote

// SetRecordChunk sets the most file bytes a Record message carries, until
// the returned restore.
func SetRecordChunk(n int) (restore func()) {
	old := recordChunk
	recordChunk = n
	return func() { recordChunk = old }
}
