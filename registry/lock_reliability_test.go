//go:build reliability

package registry

import "testing"

// TestReliabilitySyncSIGKILL is TestSyncSurvivesSIGKILL with many kills,
// for make reliability.
func TestReliabilitySyncSIGKILL(t *testing.T) {
	res := syncSIGKILL(t, 200)
	t.Logf("RESULT SyncSIGKILL: %s", res)
}
