//go:build race

package main

// raceDetector is set when the tests run with the race detector.
const raceDetector = true
