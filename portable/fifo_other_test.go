//go:build !unix

package portable

import "errors"

func mkfifo(string) error { return errors.New("no named pipes here") }
