//go:build race

package cairn_test

// raceEnabled: the race detector's sync.Pool drops items at random, so a tensor chunk may leave
// the pool before it fills and counts its tensors only when collected.
const raceEnabled = true
