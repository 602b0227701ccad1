package emulator

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// referenceCanonical is canonical through encoding/json: the markers
// dropped from a copy of the tree, then encoded with HTML escaping off.
func referenceCanonical(v any) []byte {
	var strip func(v any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(x))
			for k, e := range x {
				if !isCacheMarker(k) {
					out[k] = strip(e)
				}
			}
			return out
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = strip(e)
			}
			return out
		}
		return v
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(strip(v)); err != nil {
		panic(err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

func decodeNumbers(t testing.TB, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestCanonicalMatchesEncodingJSON(t *testing.T) {
	cases := []string{
		`null`, `true`, `false`, `0`, `-1.5e-7`, `12345678901234567890`, `""`,
		`"quote \" backslash \\ slash / <html> & amp"`,
		`"controls \u0000 \u0001 \b \f \n \r \t \u001f \u007f"`,
		`"line sep \u2028 para sep \u2029 emoji 🧰 cjk 工具 replacement \ufffd"`,
		`{"b":1,"a":[1,{"z":null,"cache_control":{"type":"ephemeral"}}],"prompt_cache_breakpoint":true,"é":"x","A":"y"}`,
		`{"cache_control":{"type":"ephemeral"}}`, `[]`, `{}`, `[[],{},""]`,
	}
	for _, c := range cases {
		v := decodeNumbers(t, []byte(c))
		if got, want := canonical(v), referenceCanonical(v); !bytes.Equal(got, want) {
			t.Errorf("canonical(%s) = %s, want %s", c, got, want)
		}
	}
	// Invalid UTF-8 in a string (a decoder never yields it, but code may).
	for _, s := range []string{"bad \xff byte", "cut \xe2\x80", "ok"} {
		if got, want := canonical(s), referenceCanonical(s); !bytes.Equal(got, want) {
			t.Errorf("canonical(%q) = %s, want %s", s, got, want)
		}
	}
	// Values built in code take encoding/json's own path.
	built := map[string]any{"n": 3, "f": 0.5, "s": []string{"a<b"}, "cache_control": 1}
	if got, want := canonical(built), referenceCanonical(built); !bytes.Equal(got, want) {
		t.Errorf("canonical(built) = %s, want %s", got, want)
	}
}

// Every tool of the built-in catalog encodes as encoding/json encodes it.
func TestCanonicalMatchesEncodingJSONOnTheCorpus(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("..", "catalog", "builtin", "mcp", "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		v := decodeNumbers(t, data)
		if got, want := canonical(v), referenceCanonical(v); !bytes.Equal(got, want) {
			t.Errorf("%s: canonical form differs from encoding/json's", path)
		}
	}
	if n := len(paths); n < 50 {
		t.Fatalf("checked %d catalog files, want the whole corpus", n)
	}
}

func FuzzCanonical(f *testing.F) {
	f.Add(`{"a":"<\u2028>","cache_control":1,"b":[1.0,null,true]}`)
	f.Add(`"\u0000\ud800"`)
	f.Fuzz(func(t *testing.T, s string) {
		dec := json.NewDecoder(strings.NewReader(s))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			return
		}
		if got, want := canonical(v), referenceCanonical(v); !bytes.Equal(got, want) {
			t.Fatalf("canonical(%q) = %s, want %s", s, got, want)
		}
	})
}
