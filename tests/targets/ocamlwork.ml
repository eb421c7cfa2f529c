(* SPDX-License-Identifier: BSD-2-Clause *)
(* ocamlwork N -- OCaml native code, whose garbage collector finds each
   frame's layout by the frame's return address (tables ocamlopt wrote):
   a return probe's trampoline is in none of them.

   For i in 1..N: work i builds a list of 20 + i mod 30 elements with the
   recursive build (each level a call), sums it, and raises Boom for i mod 7 = 0 (caught in
   the loop); every 50th work collects (Gc.minor, with work and build's
   frames on the stack). Exact counts: work N, build sum over i of
   (21 + i mod 30) (each list's length + 1).
   Output: stdout "total=T caught=C" (C = N / 7), then as the LAST line
   "calls: work=N build=B" (its own counts); exit status 0; usage errors
   exit 2. *)
exception Boom of int

let n_work = ref 0
let n_build = ref 0

(* not a tail call: ocamlopt makes a tail-recursive one a loop, which
   enters build once *)
let rec build n =
  incr n_build;
  if n = 0 then [] else n :: build (n - 1)

let work i =
  incr n_work;
  let l = build (20 + (i mod 30)) in
  if i mod 50 = 0 then Gc.minor ();
  let s = List.fold_left ( + ) 0 l in
  if i mod 7 = 0 then raise (Boom s);
  s

let () =
  let n = try int_of_string Sys.argv.(1) with _ -> -1 in
  if n < 0 || Array.length Sys.argv <> 2 then begin
    prerr_endline "usage: ocamlwork N";
    exit 2
  end;
  let total = ref 0 and caught = ref 0 in
  for i = 1 to n do
    try total := !total + work i
    with Boom s ->
      incr caught;
      total := !total - s
  done;
  Printf.printf "total=%d caught=%d\n" !total !caught;
  Printf.printf "calls: work=%d build=%d\n" !n_work !n_build
