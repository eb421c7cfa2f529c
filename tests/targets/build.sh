#!/bin/sh
# Builds every tests/targets/*.c at -O0 and -O2 into OUTDIR as NAME-O0 and
# NAME-O2, with -g -pthread and otherwise Debian gcc's defaults (PIE).
# Every tests/targets/plugin/NAME.c becomes the shared library
# OUTDIR/plugins-O0/libNAME.so and OUTDIR/plugins-O2/libNAME.so, and
# dlopener-OX gets DT_RUNPATH $ORIGIN/plugins-OX (where it finds them).
# Other languages, for the tests of programs whose runtimes read return
# addresses (exceptions, panics, Go's stack walks):
#   NAME.cc  with g++ and clang++ at -O0 and -O2 (-g -pthread) as
#            NAME-gxx-O0, NAME-gxx-O2, NAME-clangxx-O0, NAME-clangxx-O2;
#   NAME.rs  with Debian's rustc (/usr/bin/rustc, never one from
#            ~/.cargo: CI has only Debian's) at -C opt-level=0 and 2 (-g)
#            as NAME-O0 and NAME-O2;
#   NAME.go  with Debian's go (go build, no modules, cgo off) as NAME, and
#            with -gcflags='-N -l' (no optimisation, no inlining) as
#            NAME-noopt; Go's caches go under OUTDIR/.go;
#   NAME.java with Debian's javac (--release 17) as OUTDIR/java/NAME.class,
#            run with `java -cp OUTDIR/java NAME`;
#   NAME.pas with Debian's fpc (Free Pascal, -g) at -O- and -O2 as
#            NAME-O0 and NAME-O2 (static, not PIE);
#   NAME.ml  with Debian's ocamlopt (native code, -g) as NAME.
# A missing compiler is an error (scripts/install-deps.sh installs them).
# A binary newer than its source, this script and the shared headers
# (tests/targets/*.h) is kept (repeated test
# runs stay fast). TARGET_CC and TARGET_CFLAGS pick another compiler or
# more flags for the C targets. Usage: tests/targets/build.sh OUTDIR
set -eu
if [ $# -ne 1 ]; then
	echo "usage: $0 OUTDIR" >&2
	exit 2
fi
out=$1
here=$(cd "$(dirname "$0")" && pwd)
# gcc, not $CC: the targets rely on gcc's noipa attribute.
cc=${TARGET_CC:-gcc}
# Extra flags (e.g. -fcf-protection): give each flavour its own OUTDIR, the
# up-to-date check below does not look at flags.
extra=${TARGET_CFLAGS:-}
mkdir -p "$out"
# fresh FILE SRC: FILE is newer than SRC, this script and the targets'
# shared headers (tests/targets/*.h).
fresh() {
	[ -e "$1" ] && [ "$1" -nt "$2" ] && [ "$1" -nt "$here/build.sh" ] || return 1
	for h in "$here"/*.h; do
		[ -e "$h" ] || continue
		[ "$1" -nt "$h" ] || return 1
	done
}
for src in "$here"/plugin/*.c; do
	[ -e "$src" ] || continue
	name=${src##*/}; name=${name%.c}
	for opt in O0 O2; do
		mkdir -p "$out/plugins-$opt"
		so=$out/plugins-$opt/lib$name.so
		fresh "$so" "$src" && continue
		echo "  PLUGIN   $so"
		$cc -$opt -g -fPIC -shared -Wall -Wextra $extra -o "$so.tmp.$$" "$src"
		mv -f "$so.tmp.$$" "$so"
	done
done
for src in "$here"/*.c; do
	name=${src##*/}; name=${name%.c}
	for opt in O0 O2; do
		bin=$out/$name-$opt
		if [ -x "$bin" ] && fresh "$bin" "$src"; then
			continue
		fi
		# dlopener finds its plugin through RUNPATH $ORIGIN (literal).
		link=
		# shellcheck disable=SC2016
		[ "$name" = dlopener ] && link='-Wl,--enable-new-dtags,-rpath,$ORIGIN/plugins-'$opt
		# split grows its stack in segments (libgcc's __morestack).
		[ "$name" = split ] && link=-fsplit-stack
		echo "  TARGET   $bin"
		# Build to a temporary name so an interrupted build leaves no
		# half-written binary that looks up to date; this build's own
		# name ($$): two suites started at once in one clone build the
		# same targets.
		$cc -$opt -g -pthread -Wall -Wextra $extra -o "$bin.tmp.$$" "$src" $link
		mv -f "$bin.tmp.$$" "$bin"
	done
done
# need CMD PACKAGE: CMD must exist, or the build fails here, saying what
# to install (a test that silently lost its target would prove nothing).
need() {
	if ! command -v "$1" >/dev/null 2>&1; then
		echo "build.sh: $1 not found: install Debian's $2 (scripts/install-deps.sh)" >&2
		exit 1
	fi
}
for src in "$here"/*.cc; do
	[ -e "$src" ] || continue
	name=${src##*/}; name=${name%.cc}
	# tag:command:Debian package
	for cxx in gxx:g++:g++ clangxx:clang++:clang; do
		tag=${cxx%%:*}
		cmd=${cxx#*:}
		pkg=${cmd#*:}
		cmd=${cmd%%:*}
		for opt in O0 O2; do
			bin=$out/$name-$tag-$opt
			if [ -x "$bin" ] && fresh "$bin" "$src"; then
				continue
			fi
			need "$cmd" "$pkg"
			echo "  TARGET   $bin"
			$cmd -$opt -g -pthread -Wall -Wextra -o "$bin.tmp.$$" "$src"
			mv -f "$bin.tmp.$$" "$bin"
		done
	done
done
# Debian's rustc by its path: a newer one earlier in PATH (rustup's) would
# make binaries CI never sees.
rustc=/usr/bin/rustc
for src in "$here"/*.rs; do
	[ -e "$src" ] || continue
	name=${src##*/}; name=${name%.rs}
	for opt in O0 O2; do
		bin=$out/$name-$opt
		if [ -x "$bin" ] && fresh "$bin" "$src"; then
			continue
		fi
		need "$rustc" rustc
		echo "  TARGET   $bin"
		# rustc puts its temporary objects next to -o: a directory of
		# their own keeps OUTDIR clean if it is interrupted.
		tmp=$(mktemp -d "$out/.rustc.XXXXXX")
		"$rustc" -C opt-level="${opt#O}" -g --crate-type bin -o "$tmp/$name" "$src"
		mv -f "$tmp/$name" "$bin"
		rm -rf "$tmp"
	done
done
for src in "$here"/*.go; do
	[ -e "$src" ] || continue
	name=${src##*/}; name=${name%.go}
	for flavour in opt noopt; do
		bin=$out/$name
		flags=
		if [ $flavour = noopt ]; then
			bin=$out/$name-noopt
			flags='-N -l'
		fi
		if [ -x "$bin" ] && fresh "$bin" "$src"; then
			continue
		fi
		need go golang-go
		echo "  TARGET   $bin"
		# No module, no network, nothing read from or written to HOME:
		# caches under OUTDIR. cgo off: a static binary, like most Go
		# programs deployed.
		mkdir -p "$out/.go"
		gobase=$(cd "$out/.go" && pwd)
		env HOME="$gobase" GOPATH="$gobase/path" GOCACHE="$gobase/cache" \
			GO111MODULE=off GOFLAGS= GOTOOLCHAIN=local GOPROXY=off CGO_ENABLED=0 \
			go build -gcflags="$flags" -o "$bin.tmp.$$" "$src"
		mv -f "$bin.tmp.$$" "$bin"
	done
done
for src in "$here"/*.java; do
	[ -e "$src" ] || continue
	name=${src##*/}; name=${name%.java}
	cls=$out/java/$name.class
	if [ -e "$cls" ] && fresh "$cls" "$src"; then
		continue
	fi
	need javac openjdk-17-jdk-headless
	echo "  TARGET   $cls"
	# A directory of its own: javac writes one file per class (lambdas
	# and nested classes too), each of which must appear whole.
	tmp=$(mktemp -d "$out/.javac.XXXXXX")
	javac --release 17 -d "$tmp" "$src"
	mkdir -p "$out/java"
	mv -f "$tmp"/*.class "$out/java/"
	rm -rf "$tmp"
done
for src in "$here"/*.pas; do
	[ -e "$src" ] || continue
	name=${src##*/}; name=${name%.pas}
	for opt in O0 O2; do
		bin=$out/$name-$opt
		if [ -x "$bin" ] && fresh "$bin" "$src"; then
			continue
		fi
		need fpc fp-compiler
		echo "  TARGET   $bin"
		# fpc writes its objects and link script where it is told:
		# a directory of their own. -O- is no optimisation.
		tmp=$(cd "$(mktemp -d "$out/.fpc.XXXXXX")" && pwd)
		flag=-O2
		[ $opt = O0 ] && flag=-O-
		# fpc says its errors on stdout: shown only when it fails
		if ! (cd "$tmp" && fpc -g $flag -FU"$tmp" -FE"$tmp" -o"$tmp/$name" "$src" \
			>"$tmp/log" 2>&1); then
			cat "$tmp/log" >&2
			exit 1
		fi
		mv -f "$tmp/$name" "$bin"
		rm -rf "$tmp"
	done
done
for src in "$here"/*.ml; do
	[ -e "$src" ] || continue
	name=${src##*/}; name=${name%.ml}
	bin=$out/$name
	if [ -x "$bin" ] && fresh "$bin" "$src"; then
		continue
	fi
	need ocamlopt ocaml-nox
	echo "  TARGET   $bin"
	# ocamlopt writes its .cmi, .cmx and .o next to the source: it
	# compiles a copy, in a directory of its own.
	tmp=$(cd "$(mktemp -d "$out/.ocaml.XXXXXX")" && pwd)
	cp "$src" "$tmp/"
	(cd "$tmp" && ocamlopt -g -o "$name" "$name.ml")
	mv -f "$tmp/$name" "$bin"
	rm -rf "$tmp"
done
