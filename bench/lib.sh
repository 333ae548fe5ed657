# lib.sh: helpers the bench scripts share (source it; it runs nothing).

# load_note prints a warning when the load average is over half the cores
# (figures are only as good as the machine is quiet); $1 says when ("start",
# "end").
load_note() {
	local load cpus
	load=$(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo 0)
	cpus=$(nproc 2>/dev/null || echo 1)
	if awk -v l="$load" -v c="$cpus" 'BEGIN { exit !(l > c / 2) }'; then
		echo "WARNING: load average $load on $cpus cpus at $1: other work is running, figures will be noisy"
	fi
}

# bench_work NAME makes the run's scratch folder, $work, and an empty
# list $pids. When the script exits, the processes in $pids and its
# background jobs are stopped and $work is removed, unless KEEP=1.
bench_work() {
	work=$(mktemp -d "${TMPDIR:-/tmp}/loadout-$1.XXXXXX")
	pids=()
	trap bench_cleanup EXIT
}

bench_cleanup() {
	local p
	for p in "${pids[@]}" $(jobs -p); do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [[ "${KEEP:-}" == 1 ]]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}

# wait_healthy PORT waits up to 60 s for a server on loopback PORT to
# answer /healthz.
wait_healthy() {
	for _ in $(seq 1 600); do
		curl -fsS "http://127.0.0.1:$1/healthz" >/dev/null 2>&1 && return 0
		sleep 0.1
	done
	return 1
}

# wait_ready PORT [SECONDS] waits (default 300 s) for a server on loopback
# PORT to be ready: GET /readyz 200, once serve has built what first
# requests would build (search and install indexes, the diagnostics' and
# skill list's first pages). A build without /readyz (404) is ready when
# it answers /healthz. Measuring before ready counts that work against the
# first rounds.
wait_ready() {
	local code
	for _ in $(seq 1 $((${2:-300} * 10))); do
		code=$(curl -sS -o /dev/null -w '%{http_code}' "http://127.0.0.1:$1/readyz" 2>/dev/null || true)
		if [ "$code" = 200 ]; then return 0; fi
		if [ "$code" = 404 ] && curl -fsS "http://127.0.0.1:$1/healthz" >/dev/null 2>&1; then return 0; fi
		sleep 0.1
	done
	return 1
}
