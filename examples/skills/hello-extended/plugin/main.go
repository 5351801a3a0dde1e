// Command plugin is the hello-extended skill's tool plugin: greetings in
// many languages, served to the agent host with the SDK.
package main

import (
	"context"
	"os"
	"slices"
	"strings"

	"github.com/agentskills/agent/sdk"
)

// greetings maps ISO 639-1 codes to a greeting and the language's English
// name.
var greetings = map[string]struct{ hello, name string }{
	"ar": {"مرحبا", "arabic"},
	"de": {"Hallo", "german"},
	"en": {"Hello", "english"},
	"es": {"Hola", "spanish"},
	"fr": {"Bonjour", "french"},
	"hi": {"नमस्ते", "hindi"},
	"it": {"Ciao", "italian"},
	"ja": {"こんにちは", "japanese"},
	"nl": {"Hallo", "dutch"},
	"pt": {"Olá", "portuguese"},
	"sv": {"Hej", "swedish"},
	"sw": {"Jambo", "swahili"},
	"zh": {"你好", "chinese"},
}

// maxNames keeps one call's answer small enough for a model's context.
const maxNames = 100

type greetIn struct {
	Name     string `json:"name" description:"the person to greet"`
	Language string `json:"language" description:"ISO 639-1 code such as fr, or an English language name such as French"`
}

type greeting struct {
	Greeting string `json:"greeting"`
	Language string `json:"language"`
}

type greetManyIn struct {
	Names    []string `json:"names" description:"the people to greet, at most 100"`
	Language string   `json:"language,omitempty" description:"ISO 639-1 code or English name; default HELLO_DEFAULT_LANGUAGE, else en"`
}

type greetingList struct {
	Greetings []string `json:"greetings"`
	Language  string   `json:"language"`
}

// lookup resolves a code or English name, case-insensitively.
func lookup(lang string) (code string, err error) {
	l := strings.ToLower(strings.TrimSpace(lang))
	if _, ok := greetings[l]; ok {
		return l, nil
	}
	for code, g := range greetings {
		if g.name == l {
			return code, nil
		}
	}
	codes := make([]string, 0, len(greetings))
	for code := range greetings {
		codes = append(codes, code)
	}
	slices.Sort(codes)
	return "", sdk.Errorf("unsupported_language", "no greeting for language %q; supported: %s", lang, strings.Join(codes, ", "))
}

func greet(name, code string) string {
	return greetings[code].hello + ", " + strings.TrimSpace(name) + "!"
}

func greetInLanguage(_ context.Context, in greetIn) (greeting, error) {
	if strings.TrimSpace(in.Name) == "" {
		return greeting{}, sdk.Errorf(sdk.CodeInvalidArgs, "name must not be empty")
	}
	code, err := lookup(in.Language)
	if err != nil {
		return greeting{}, err
	}
	return greeting{Greeting: greet(in.Name, code), Language: code}, nil
}

func greetMultiple(ctx context.Context, in greetManyIn) (greetingList, error) {
	if len(in.Names) == 0 {
		return greetingList{}, sdk.Errorf(sdk.CodeInvalidArgs, "names must list at least one person")
	}
	if len(in.Names) > maxNames {
		return greetingList{}, sdk.Errorf(sdk.CodeInvalidArgs, "names lists %d people; at most %d per call", len(in.Names), maxNames)
	}
	lang := in.Language
	if lang == "" {
		lang = os.Getenv("HELLO_DEFAULT_LANGUAGE")
		if lang == "" {
			lang = "en"
		}
		sdk.Note(ctx, "no language given; used "+lang)
	}
	code, err := lookup(lang)
	if err != nil {
		return greetingList{}, err
	}
	out := greetingList{Greetings: make([]string, len(in.Names)), Language: code}
	for i, n := range in.Names {
		out.Greetings[i] = greet(n, code)
	}
	return out, nil
}

func newSkill() sdk.Skill {
	return sdk.NewSkill(
		sdk.NewTool("greet_in_language", "Greet one person in the given language.", greetInLanguage),
		sdk.NewTool("greet_multiple", "Greet several people in one language.", greetMultiple),
	)
}

func main() {
	sdk.Serve(newSkill())
}
