// SPDX-License-Identifier: MIT
// The Go program of tests/cli/go.sh and fuzz/gen_gopclntab_corpus.sh: nested
// inlining, pointer-receiver methods, closures, generics, a goroutine.
// Built by the tests (standard library only, offline), never committed.
package main

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

type Counter struct {
	mu sync.Mutex
	n  map[string]int
}

// Pointer receivers, small enough to be inlined into their callers.
func (c *Counter) key(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

func (c *Counter) Add(s string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.key(s)
	c.n[k] += scale(len(k))
	return c.n[k]
}

// Nested inlining: scale inlines clamp, callers inline scale.
func clamp(x, lo, hi int) int {
	if x < lo {
		return lo
	}
	if x > hi {
		return hi
	}
	return x
}

func scale(x int) int { return clamp(x*3, 1, 100) + 1 }

type Number interface{ ~int | ~float64 }

func Sum[T Number](v []T) T {
	var s T
	for _, x := range v {
		s += x
	}
	return s
}

func Map[E, R any](v []E, f func(E) R) []R {
	out := make([]R, 0, len(v))
	for _, x := range v {
		out = append(out, f(x))
	}
	return out
}

func main() {
	c := &Counter{n: map[string]int{}}
	words := append([]string{"Go", " go ", "Gopher"}, os.Args[1:]...)
	var wg sync.WaitGroup
	results := make(chan int, len(words))
	for _, w := range words {
		wg.Add(1)
		go func(w string) { // a goroutine running a closure
			defer wg.Done()
			results <- c.Add(w)
		}(w)
	}
	wg.Wait()
	close(results)
	var got []int
	for r := range results {
		got = append(got, r)
	}
	base := len(got)
	lens := Map(words, func(s string) float64 { return float64(len(s) + base) })
	fmt.Println(Sum(got), Sum(lens), len(c.n))
}
