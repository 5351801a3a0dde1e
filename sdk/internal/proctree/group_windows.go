package proctree

// KillGroup: on Windows the host's Job Object, with kill-on-close, ends
// everything this plugin started when the host dies.
func KillGroup() {}
