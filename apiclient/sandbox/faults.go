package sandbox

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
)

type faultKind int

const (
	faultNone faultKind = iota
	faultStatus
	faultReset
	faultLost
)

// fault is one drawn outcome.
type fault struct {
	kind       faultKind
	status     int
	retryAfter int
}

type faultEntry struct {
	name   string
	kind   faultKind
	status int
	p      float64
}

type faultSpec struct {
	entries    []faultEntry
	retryAfter int
}

// parseFaults parses "503=0.05,429=0.03,reset=0.02,lost=0.02[,retry-after=1]".
func parseFaults(spec string) (faultSpec, error) {
	fs := faultSpec{retryAfter: 1}
	spec = strings.TrimSpace(spec)
	if spec == "" {
		return fs, nil
	}
	seen := map[string]bool{}
	total := 0.0
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		k, v = strings.ToLower(strings.TrimSpace(k)), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return faultSpec{}, fmt.Errorf("faults: %q is not KIND=PROBABILITY (for example 503=0.05)", part)
		}
		if seen[k] {
			return faultSpec{}, fmt.Errorf("faults: %s is given twice", k)
		}
		seen[k] = true
		if k == "retry-after" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return faultSpec{}, fmt.Errorf("faults: retry-after=%s is not a whole number of seconds", v)
			}
			fs.retryAfter = n
			continue
		}
		e := faultEntry{name: k}
		switch k {
		case "429", "500", "502", "503", "504":
			e.kind = faultStatus
			e.status, _ = strconv.Atoi(k)
		case "reset":
			e.kind = faultReset
		case "lost":
			e.kind = faultLost
		default:
			return faultSpec{}, fmt.Errorf("faults: unknown fault %q (use 429, 500, 502, 503, 504, reset, lost or retry-after)", k)
		}
		p, err := strconv.ParseFloat(v, 64)
		if err != nil || !(p >= 0 && p <= 1) { // also rejects NaN
			return faultSpec{}, fmt.Errorf("faults: %s=%s: the probability must be a number from 0 to 1", k, v)
		}
		e.p = p
		total += p
		fs.entries = append(fs.entries, e)
	}
	if total > 1+1e-9 {
		return faultSpec{}, fmt.Errorf("faults: the probabilities add up to %g, more than 1", total)
	}
	return fs, nil
}

// faultInjector draws faults from a seeded generator; safe for concurrent use.
type faultInjector struct {
	seed int64
	mu   sync.Mutex
	rng  *rand.Rand
	spec faultSpec
}

func newFaultInjector(spec string, seed int64) (*faultInjector, error) {
	fs, err := parseFaults(spec)
	if err != nil {
		return nil, err
	}
	for seed == 0 {
		seed = rand.Int64()
	}
	return &faultInjector{
		seed: seed,
		rng:  rand.New(rand.NewPCG(uint64(seed), 0x9e3779b97f4a7c15)),
		spec: fs,
	}, nil
}

func (fi *faultInjector) set(spec string) error {
	fs, err := parseFaults(spec)
	if err != nil {
		return err
	}
	fi.mu.Lock()
	fi.spec = fs
	fi.mu.Unlock()
	return nil
}

// draw picks the fault for one request.
func (fi *faultInjector) draw() fault {
	fi.mu.Lock()
	defer fi.mu.Unlock()
	if len(fi.spec.entries) == 0 {
		return fault{}
	}
	u := fi.rng.Float64()
	acc := 0.0
	for _, e := range fi.spec.entries {
		acc += e.p
		if u < acc {
			return fault{kind: e.kind, status: e.status, retryAfter: fi.spec.retryAfter}
		}
	}
	return fault{}
}

// ValidFaults checks a fault spec (see Sandbox.SetFaults) without a sandbox.
func ValidFaults(spec string) error {
	_, err := parseFaults(spec)
	return err
}
