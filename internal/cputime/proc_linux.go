package cputime

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// Of is the user plus system CPU time process pid has used so far, read
// from /proc/PID/stat (in clock ticks of 10 ms, USER_HZ 100 on Linux),
// and whether it could be read: benchmarks and the attack suite read the
// server's this way.
func Of(pid int) (time.Duration, bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	// The command name (field 2) may hold spaces and parentheses: count
	// from its last ')'. Then state is f[0], utime (field 14) f[11] and
	// stime (field 15) f[12].
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	u, err1 := strconv.ParseInt(string(f[11]), 10, 64)
	s, err2 := strconv.ParseInt(string(f[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(u+s) * tick, true
}

// tick is a /proc clock tick: USER_HZ, 100 on Linux.
const tick = 10 * time.Millisecond
