package ir

import "fmt"

// QMatMulGroupWeights returns the number of weights of QMatMulGroup node n: its
// inputs after X, or half of them with attribute bias 1 (then the biases
// follow the weights; act must be "").
func QMatMulGroupWeights(n *Node) (int, error) {
	k := len(n.Inputs) - 1
	switch n.AttrInt("bias", 0) {
	case 0:
		return k, nil
	case 1:
		if k%2 != 0 {
			return 0, fmt.Errorf("QMatMulGroup with biases needs as many biases as weights, got %d inputs after X", k)
		}
		if act := n.AttrString("act", ""); act != "" {
			return 0, fmt.Errorf("QMatMulGroup act %q with biases: %w (biases only with act \"\")", act, ErrUnsupported)
		}
		return k / 2, nil
	default:
		return 0, fmt.Errorf("QMatMulGroup bias %d: %w (want 0 or 1)", n.AttrInt("bias", 0), ErrUnsupported)
	}
}
