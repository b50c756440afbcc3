//go:build !race

package cairn_test

// raceEnabled: see race_on_test.go.
const raceEnabled = false
