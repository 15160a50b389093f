package cpu

// PanelsDuring runs f and returns the panels of every packed weight the
// kernels compiled meanwhile received (packed here or taken from a plan
// file), for the external tests.
func PanelsDuring(f func()) [][]float32 {
	var recs []packRecord
	packMu.Lock()
	recorders = append(recorders, &recs)
	packMu.Unlock()
	defer func() {
		packMu.Lock()
		defer packMu.Unlock()
		for i, r := range recorders {
			if r == &recs {
				recorders = append(recorders[:i], recorders[i+1:]...)
				break
			}
		}
	}()
	f()
	packMu.Lock()
	defer packMu.Unlock()
	out := make([][]float32, len(recs))
	for i, r := range recs {
		out[i] = r.packed.Panels()
	}
	return out
}
