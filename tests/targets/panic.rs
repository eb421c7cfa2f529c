// SPDX-License-Identifier: BSD-2-Clause
//
// panic N — Rust panics unwinding through functions a tracer probes, caught
// by std::panic::catch_unwind. Built by build.sh with Debian's rustc
// (/usr/bin/rustc, 1.63) as panic-O0 and panic-O2 (-C opt-level=0 or 2, -g).
//
// For i in 0..N (N >= 0), main calls catch_unwind around panic_outer(i),
// which calls panic_inner(i); panic_inner panics when i % 3 == 0 and
// returns 3*i+1 otherwise, panic_outer adds 1. A panic hook that prints
// nothing replaces the default one (which would print "thread 'main'
// panicked at ..." on stderr), so the output is the same run after run.
//
// Symbol names (rustc 1.63's legacy mangling: crate "panic", a hash that
// changes with the compiler and the flags):
//   panic_outer  _ZN5panic11panic_outer17h<16 hex digits>E
//   panic_inner  _ZN5panic11panic_inner17h<16 hex digits>E
// so select them with -f '*panic_outer*' -f '*panic_inner*'.
//
// Output (stdout): "n=N caught=C sum=S" (C = ceil(N/3), S the sum of the
// values returned), then as the LAST line the program's own counts
// "calls: panic_outer=N panic_inner=N". Nothing on stderr; exit status 0;
// usage errors print a usage line on stderr and exit 2.
use std::panic;
use std::process;
use std::sync::atomic::{AtomicU64, Ordering};

static OUTER: AtomicU64 = AtomicU64::new(0);
static INNER: AtomicU64 = AtomicU64::new(0);

#[inline(never)]
fn panic_inner(i: u64) -> u64 {
    INNER.fetch_add(1, Ordering::SeqCst);
    if i % 3 == 0 {
        panic!("panic_inner {}", i);
    }
    3 * i + 1
}

#[inline(never)]
fn panic_outer(i: u64) -> u64 {
    OUTER.fetch_add(1, Ordering::SeqCst);
    panic_inner(i) + 1
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        eprintln!("usage: panic N");
        process::exit(2);
    }
    let n: u64 = match args[1].parse() {
        Ok(v) => v,
        Err(_) => {
            eprintln!("panic: N must be >= 0");
            process::exit(2);
        }
    };
    panic::set_hook(Box::new(|_| {}));
    let mut caught = 0u64;
    let mut sum = 0u64;
    for i in 0..n {
        match panic::catch_unwind(|| panic_outer(i)) {
            Ok(v) => sum += v,
            Err(_) => caught += 1,
        }
    }
    println!("n={} caught={} sum={}", n, caught, sum);
    println!(
        "calls: panic_outer={} panic_inner={}",
        OUTER.load(Ordering::SeqCst),
        INNER.load(Ordering::SeqCst)
    );
}
