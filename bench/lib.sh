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
