package cpu

// PackCount is the number of constant-weight packings made so far (cache
// misses of the packed-weight cache), for the external tests.
func PackCount() int64 { return packCount.Load() }
