package platform

// BuildFlags are the go build flags that give a plugin this host's kind
// of build: the sdk in a plugin built for a portable host must use the
// same fallbacks as the host.
func BuildFlags() []string {
	if Portable {
		return []string{"-tags", "portable"}
	}
	return nil
}
