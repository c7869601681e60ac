//go:build race

package anthropic_test

// raceEnabled is set when the tests run with the race detector, which
// makes them several times slower.
const raceEnabled = true
