package run

import "encoding/json"

func jsonUnmarshalString(s string, v any) error { return json.Unmarshal([]byte(s), v) }
