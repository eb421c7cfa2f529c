# shellcheck shell=bash
# Busy loops beside a benchmark, for the runs "under load": sourced by
# bench scripts. hogs__start N starts N (each a shell spinning on one
# CPU) and arranges for them to stop when the script exits; hogs__stop
# stops them now.
hog_pids=()

hogs__stop() {
	[ ${#hog_pids[@]} -eq 0 ] || kill "${hog_pids[@]}" 2>/dev/null || true
	hog_pids=()
}

hogs__start() {
	local h
	trap hogs__stop EXIT
	for ((h = 0; h < $1; h++)); do
		sh -c 'while :; do :; done' &
		hog_pids+=($!)
	done
}
