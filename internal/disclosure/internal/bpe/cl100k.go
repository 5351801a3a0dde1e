package bpe

import _ "embed"

//go:generate go run ./gen

// CL100KBase is OpenAI's cl100k_base rank table in the compact form.
//
//go:embed cl100k_base.bpe
var CL100KBase string
