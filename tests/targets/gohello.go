// SPDX-License-Identifier: BSD-2-Clause
//
// gohello N — a small Go program for tracing tests (built by build.sh as
// gohello, and gohello-noopt with -gcflags='-N -l').
//
// main feeds the numbers 0..N-1 (N >= 0) through a channel to 4 worker
// goroutines. For each item a worker calls mix(v) once and grow(D, v) once,
// which recurses D = 200 levels with a 1 KiB frame each (about 200 KiB of
// stack, where a goroutine starts with a few KiB), so the runtime grows,
// that is copies, the goroutine's stack while the calls are under way; the
// deepest grow calls leaf once. Results come back on a second channel;
// main adds them up (addition commutes: the scheduling order does not
// change the sum).
//
// Output, deterministic for a given N:
//
//	stdout: "items=N sum=S", then as the LAST line
//	        "calls: main.worker=4 main.mix=N main.grow=N*(D+1) main.leaf=N"
//	        (the program's own counts, atomic counters bumped on each
//	        function's first line; the names are the ELF symbol names)
//	stderr: "gohello: done"
//	exit status 0; usage errors print a usage line on stderr and exit 2.
//
// Every counted function is //go:noinline so each call is a real call. Go
// functions start with a stack-bound check whose slow path calls
// runtime.morestack and then jumps back to the function's FIRST byte: a
// probe on that byte fires twice for a call that grows the stack.
package main

import (
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
)

const depth = 200
const workers = 4

var nWorker, nMix, nGrow, nLeaf int64

//go:noinline
func leaf(acc uint64) uint64 {
	atomic.AddInt64(&nLeaf, 1)
	return acc ^ (acc >> 29)
}

// grow's 1 KiB array lives in its frame (it does not escape), so each
// level needs 1 KiB more stack.
//
//go:noinline
func grow(d int, acc uint64) uint64 {
	var pad [1024]byte

	atomic.AddInt64(&nGrow, 1)
	pad[(acc+uint64(d))%1024] = byte(d)
	if d == 0 {
		return leaf(acc) + uint64(pad[acc%1024])
	}
	return grow(d-1, acc*31+uint64(d)) + uint64(pad[(acc+uint64(d))%1024])
}

//go:noinline
func mix(v uint64) uint64 {
	atomic.AddInt64(&nMix, 1)
	v ^= v >> 33
	v *= 0xff51afd7ed558ccd
	v ^= v >> 33
	return v
}

//go:noinline
func worker(in <-chan uint64, out chan<- uint64, wg *sync.WaitGroup) {
	atomic.AddInt64(&nWorker, 1)
	defer wg.Done()
	for v := range in {
		out <- mix(v) + grow(depth, v)
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gohello N")
		os.Exit(2)
	}
	n, err := strconv.Atoi(os.Args[1])
	if err != nil || n < 0 {
		fmt.Fprintln(os.Stderr, "gohello: N must be >= 0")
		os.Exit(2)
	}
	in := make(chan uint64)
	out := make(chan uint64, 16)
	var wg sync.WaitGroup
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go worker(in, out, &wg)
	}
	go func() {
		for i := 0; i < n; i++ {
			in <- uint64(i)
		}
		close(in)
		wg.Wait()
		close(out)
	}()
	var sum uint64
	items := 0
	for r := range out {
		sum += r
		items++
	}
	fmt.Printf("items=%d sum=%d\n", items, sum)
	fmt.Printf("calls: main.worker=%d main.mix=%d main.grow=%d main.leaf=%d\n",
		atomic.LoadInt64(&nWorker), atomic.LoadInt64(&nMix),
		atomic.LoadInt64(&nGrow), atomic.LoadInt64(&nLeaf))
	fmt.Fprintln(os.Stderr, "gohello: done")
}
