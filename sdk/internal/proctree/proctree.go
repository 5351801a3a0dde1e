// Package proctree finds and ends the descendants of this process. It is
// the SDK's containment: a plugin is a subreaper, so a descendant that
// calls setsid and loses its parent is reparented to the plugin instead
// of init, and the plugin can end it.
package proctree
