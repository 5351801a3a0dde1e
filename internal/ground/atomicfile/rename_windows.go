package atomicfile

import (
	"errors"

	"golang.org/x/sys/windows"
)

// renameHeldOpen: MoveFileEx answers ERROR_ACCESS_DENIED when the target
// is open without FILE_SHARE_DELETE, and ERROR_SHARING_VIOLATION when the
// source or target is being opened at that moment.
func renameHeldOpen(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}
