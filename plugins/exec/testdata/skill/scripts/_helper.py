# ignored by scripts_ignore
